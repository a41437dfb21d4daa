//! The route table: every route of the server is declared once, with what each of its methods
//! needs ([`Need`]: public, or one scope). [`Routes`] builds the axum router and the
//! [`RouteTable`] together, so a route cannot be added without its scope; the guard asks the
//! table about the route axum actually matched (its template from `MatchedPath`, and the
//! method), never about the shape of the path, and `openapi::document` states the same scope
//! on every operation.
//!
//! Closed by default: a method a route does not take, a path no route takes and a public
//! route under one of the credentialed prefixes ([`PROTECTED`]) need `admin`, so whatever is
//! not declared is the owner's.

use std::collections::HashMap;

use axum::Router;
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter};

use access::keys::{Scope, under};

/// Paths that always need a credential (the segment itself or anything under it), whatever
/// their routes declare.
pub const PROTECTED: [&str; 5] = ["/api", "/ws", "/v1", "/mcp", "/metrics"];

/// What one method of one route asks of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Nothing: the app shell and its assets, health, the API's documents.
    Public,
    /// Nothing, even under a credentialed prefix: the sign-in itself (`POST /api/session`),
    /// whose handler decides.
    Open,
    /// A credential that allows this scope (the server token and `admin` keys allow all).
    Scope(Scope),
}

impl From<Scope> for Need {
    fn from(scope: Scope) -> Self {
        Self::Scope(scope)
    }
}

/// What each route and method needs, as declared with the routes (see [`Routes`]).
#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    /// A route's template as axum matches it (`/api/workflows/{id}`) → its methods and what
    /// each needs.
    routes: HashMap<&'static str, Vec<(Method, Need)>>,
    /// Services nested at a prefix (`/mcp`): every method of every path under it.
    nested: Vec<(&'static str, Need)>,
}

impl RouteTable {
    /// The scope a request needs, or `None` when it needs no credential. `route` is the
    /// template axum matched (`MatchedPath`), `None` when no route did; `HEAD` is `GET`'s.
    /// Anything the table does not declare needs `admin` under [`PROTECTED`] (see the module
    /// doc).
    pub fn required(&self, method: &Method, route: Option<&str>, path: &str) -> Option<Scope> {
        let method = if *method == Method::HEAD { &Method::GET } else { method };
        let declared = route
            .and_then(|r| self.routes.get(r))
            .and_then(|methods| methods.iter().find(|(m, _)| m == method))
            .map(|(_, need)| *need)
            .or_else(|| {
                self.nested.iter().find(|(prefix, _)| under(path, prefix)).map(|(_, need)| *need)
            });
        match declared {
            Some(Need::Scope(scope)) => Some(scope),
            Some(Need::Open) => None,
            _ if PROTECTED.iter().any(|p| under(path, p)) => Some(Scope::Admin),
            _ => None,
        }
    }

    /// Every declared route and method (templates as axum writes them, `{*rest}` for a
    /// catch-all) with its need; nested services are not listed.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, &Method, Need)> {
        self.routes
            .iter()
            .flat_map(|(path, methods)| methods.iter().map(move |(m, need)| (*path, m, *need)))
    }
}

/// An axum router and its [`RouteTable`], built together.
pub struct Routes<S> {
    router: Router<S>,
    table: RouteTable,
}

impl<S: Clone + Send + Sync + 'static> Default for Routes<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Clone + Send + Sync + 'static> Routes<S> {
    /// No routes.
    pub fn new() -> Self {
        Self { router: Router::new(), table: RouteTable::default() }
    }

    /// `path` with its methods, each with its need ([`get`], [`post`], …).
    pub fn route(mut self, path: &'static str, methods: Methods<S>) -> Self {
        self.table.routes.entry(path).or_default().extend(methods.needs);
        self.router = self.router.route(path, methods.router);
        self
    }

    /// Every path under `prefix` to a service that `nest` nests there (with axum's
    /// `nest_service`, given the router and `prefix`), each method needing `need`.
    pub fn nest(
        mut self,
        prefix: &'static str,
        need: impl Into<Need>,
        nest: impl FnOnce(Router<S>, &str) -> Router<S>,
    ) -> Self {
        self.table.nested.push((prefix, need.into()));
        self.router = nest(self.router, prefix);
        self
    }

    /// These routes and `other`'s.
    pub fn merge(mut self, other: Routes<S>) -> Self {
        for (path, methods) in other.table.routes {
            self.table.routes.entry(path).or_default().extend(methods);
        }
        self.table.nested.extend(other.table.nested);
        self.router = self.router.merge(other.router);
        self
    }

    /// What answers a request no route takes (axum's `Router::fallback`): it needs what
    /// [`RouteTable::required`] says of undeclared paths.
    pub fn fallback<H, T>(mut self, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.router = self.router.fallback(handler);
        self
    }

    /// What answers a method a route does not take (axum's
    /// `Router::method_not_allowed_fallback`).
    pub fn method_not_allowed_fallback<H, T>(mut self, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.router = self.router.method_not_allowed_fallback(handler);
        self
    }

    /// The routes with their state given (axum's `Router::with_state`).
    pub fn with_state<S2>(self, state: S) -> Routes<S2> {
        Routes { router: self.router.with_state(state), table: self.table }
    }

    /// The table of these routes.
    pub fn table(&self) -> &RouteTable {
        &self.table
    }

    /// The router and its table.
    pub fn into_parts(self) -> (Router<S>, RouteTable) {
        (self.router, self.table)
    }
}

/// One route's methods, each with what it needs: made by [`get`], [`post`], [`put`],
/// [`delete`] and chained like axum's (`get(Scope::Read, a).put(Scope::Write, b)`).
pub struct Methods<S> {
    router: MethodRouter<S>,
    needs: Vec<(Method, Need)>,
}

/// The chaining methods of [`Methods`] and the free functions that start one, per HTTP method.
macro_rules! methods {
    ($($name:ident $method:ident),*) => {
        impl<S: Clone + Send + Sync + 'static> Methods<S> {
            $(
                #[doc = concat!("Adds `", stringify!($method), "` to `handler`, for requests ",
                    "that `need` allows.")]
                pub fn $name<H, T>(mut self, need: impl Into<Need>, handler: H) -> Self
                where
                    H: Handler<T, S>,
                    T: 'static,
                {
                    self.router = self.router.on(MethodFilter::$method, handler);
                    self.needs.push((Method::$method, need.into()));
                    self
                }
            )*
        }
        $(
            #[doc = concat!("A route's `", stringify!($method), "` to `handler`, for requests ",
                "that `need` allows.")]
            pub fn $name<H, T, S>(need: impl Into<Need>, handler: H) -> Methods<S>
            where
                H: Handler<T, S>,
                T: 'static,
                S: Clone + Send + Sync + 'static,
            {
                Methods { router: MethodRouter::new(), needs: Vec::new() }.$name(need, handler)
            }
        )*
    };
}

methods!(get GET, post POST, put PUT, delete DELETE, patch PATCH);

#[cfg(test)]
mod tests {
    use super::*;

    async fn nothing() {}

    fn table() -> RouteTable {
        Routes::<()>::new()
            .route("/", get(Need::Public, nothing))
            .route("/api/dashboards/{id}", get(Scope::Read, nothing).put(Scope::Write, nothing))
            .route("/api/workflows/{id}", put(Scope::Admin, nothing))
            .route("/api/workflows/runs/{run}/cancel", post(Scope::Agents, nothing))
            .route("/api/odd", get(Need::Public, nothing))
            .route("/api/session", post(Need::Open, nothing))
            .nest("/mcp", Scope::Read, |router, _| router)
            .into_parts()
            .1
    }

    #[test]
    fn the_matched_route_and_method_decide_never_the_path() {
        let t = table();
        let get = &Method::GET;
        assert_eq!(
            t.required(get, Some("/api/dashboards/{id}"), "/api/dashboards/x"),
            Some(Scope::Read)
        );
        assert_eq!(
            t.required(&Method::HEAD, Some("/api/dashboards/{id}"), "/x"),
            Some(Scope::Read)
        );
        assert_eq!(
            t.required(&Method::PUT, Some("/api/dashboards/{id}"), "/api/dashboards/refresh"),
            Some(Scope::Write)
        );
        // `PUT /api/workflows/cancel` is `PUT /api/workflows/{id}`: the suffix means nothing.
        assert_eq!(
            t.required(&Method::PUT, Some("/api/workflows/{id}"), "/api/workflows/cancel"),
            Some(Scope::Admin)
        );
        assert_eq!(
            t.required(
                &Method::POST,
                Some("/api/workflows/runs/{run}/cancel"),
                "/api/workflows/runs/r/cancel"
            ),
            Some(Scope::Agents)
        );
        // Undeclared: a method the route does not take, no route, a public route under /api.
        let delete = &Method::DELETE;
        assert_eq!(
            t.required(delete, Some("/api/dashboards/{id}"), "/api/dashboards/x"),
            Some(Scope::Admin)
        );
        assert_eq!(t.required(get, None, "/api/kb/x/search"), Some(Scope::Admin));
        assert_eq!(t.required(get, Some("/api/odd"), "/api/odd"), Some(Scope::Admin));
        assert_eq!(t.required(&Method::POST, Some("/api/session"), "/api/session"), None);
        assert_eq!(
            t.required(get, Some("/api/session"), "/api/session"),
            Some(Scope::Admin),
            "only the declared method is open"
        );
        assert_eq!(t.required(&Method::POST, Some("/mcp"), "/mcp"), Some(Scope::Read));
        assert_eq!(t.required(&Method::DELETE, None, "/mcp/x"), Some(Scope::Read));
        assert_eq!(t.required(get, Some("/"), "/"), None);
        assert_eq!(t.required(get, None, "/assets/app.js"), None);
        assert_eq!(t.required(get, None, "/apix"), None, "a prefix is a whole segment");
        assert_eq!(t.entries().count(), 7);
    }
}
