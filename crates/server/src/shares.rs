//! What each credential holds at the HTTP edge, so that one credential can never hold
//! everyone's share:
//!
//! - **connections**: a connection belongs to the credential of its latest request (a proxy's
//!   kept-alive connection moves between credentials). A credential's request on a connection
//!   that is not yet its own, past `connections_per_credential`, is a `429` and the connection
//!   is closed; past the attributable total (the connection cap less an eighth kept for public
//!   routes such as `/healthz` and for connections that have not said who they are), a `503`
//!   and closed. Connections that never send a whole request head are the accept loop's header
//!   timeout's business; a slow body is its body deadline's.
//! - **requests in flight**: from the guard's pass to the response head (so a slow body
//!   counts), at most `requests_per_credential`; past it a `429` with `Retry-After` (a refused request's connection is closed).
//!
//! The accept loop makes one [`Connection`] per connection and puts a [`ConnectionTag`] on
//! each of its requests; the guard calls [`hold`] once it knows the credential. A request with
//! no tag (a router served some other way) is not counted. Knows nothing of routes, keys or
//! scopes: a credential is a name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::ApiError;
use access::principal::Principal;

/// Per-credential bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareLimits {
    /// Connections one credential may hold.
    pub connections_per_credential: usize,
    /// Requests of one credential in flight at once.
    pub requests_per_credential: usize,
    /// Connections all credentials together may hold (the rest stay for public routes and
    /// for connections not yet attributed).
    pub attributable: usize,
}

/// The counts of every credential that holds something.
#[derive(Debug)]
pub struct Shares {
    limits: ShareLimits,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    by: HashMap<Arc<str>, Counts>,
    /// Connections attributed to some credential.
    attributed: usize,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    connections: usize,
    in_flight: usize,
}

impl State {
    fn counts(&mut self, who: &Arc<str>) -> &mut Counts {
        self.by.entry(who.clone()).or_default()
    }

    /// Forgets a credential that holds nothing, so the map does not grow with every key
    /// ever seen.
    fn tidy(&mut self, who: &str) {
        if self.by.get(who).is_some_and(|c| c.connections == 0 && c.in_flight == 0) {
            self.by.remove(who);
        }
    }

    fn release_connection(&mut self, who: &Arc<str>) {
        let c = self.counts(who);
        c.connections = c.connections.saturating_sub(1);
        self.attributed = self.attributed.saturating_sub(1);
        self.tidy(who);
    }
}

impl Shares {
    /// No credential holds anything yet.
    pub fn new(limits: ShareLimits) -> Arc<Self> {
        Arc::new(Self { limits, state: Mutex::default() })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why a credential's request is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    /// The credential holds its share of connections.
    #[error(
        "this credential already holds {0} connections, its share of the server's; reuse \
         them (keep-alive) or close some"
    )]
    Connections(usize),
    /// Every attributable connection is held.
    #[error("the server is holding as many client connections as it takes; try again shortly")]
    Busy,
    /// The credential has its share of requests in flight.
    #[error(
        "this credential already has {0} requests in flight; wait for some to finish before \
         sending more"
    )]
    InFlight(usize),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let msg = self.to_string();
        let mut response = match self {
            Self::Busy => ApiError::Unavailable(msg),
            Self::Connections(_) | Self::InFlight(_) => {
                ApiError::RateLimited { msg, retry_after: Some(Duration::from_secs(1)) }
            }
        }
        .into_response();
        // A credential past its share gives the connection back (hyper closes it after this),
        // with whatever body the request still had coming.
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    }
}

/// One connection's attribution. Released by the accept loop when the connection ends (not
/// when the last tag goes: a tag may outlive its request, e.g. inside an MCP session).
#[derive(Debug)]
pub struct Connection {
    shares: Arc<Shares>,
    cell: Mutex<Cell>,
}

#[derive(Debug, Default)]
struct Cell {
    owner: Option<Arc<str>>,
    closed: bool,
    /// WebSockets this connection became, still open ([`Connection::upgraded`]).
    upgraded: usize,
}

impl Connection {
    /// A connection attributed to nobody yet.
    pub fn new(shares: Arc<Shares>) -> Arc<Self> {
        Arc::new(Self { shares, cell: Mutex::default() })
    }

    fn cell(&self) -> MutexGuard<'_, Cell> {
        self.cell.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection's HTTP task ended: its credential holds one connection less, unless it
    /// became a WebSocket that is still open (then when that closes).
    pub fn close(&self) {
        let mut cell = self.cell();
        cell.closed = true;
        if cell.upgraded == 0
            && let Some(owner) = cell.owner.take()
        {
            self.shares.state().release_connection(&owner);
        }
    }

    /// The connection became a WebSocket: it stays its credential's until the returned guard
    /// is dropped (hyper ends the HTTP task at the upgrade, which would otherwise give the
    /// connection back while the socket is still open).
    pub fn upgraded(self: &Arc<Self>) -> Upgraded {
        self.cell().upgraded += 1;
        Upgraded(self.clone())
    }

    /// Makes the connection `who`'s, unless that takes `who` or everyone past their share.
    fn attribute(&self, who: &Arc<str>) -> Result<(), Refusal> {
        let mut cell = self.cell();
        if cell.closed || cell.owner.as_ref() == Some(who) {
            return Ok(());
        }
        let limits = self.shares.limits;
        let mut state = self.shares.state();
        let held = state.by.get(who).map_or(0, |c| c.connections);
        if held >= limits.connections_per_credential {
            return Err(Refusal::Connections(held));
        }
        // Moving a connection between credentials does not change the total.
        if cell.owner.is_none() && state.attributed >= limits.attributable {
            return Err(Refusal::Busy);
        }
        if let Some(previous) = cell.owner.take() {
            state.release_connection(&previous);
        }
        state.counts(who).connections += 1;
        state.attributed += 1;
        cell.owner = Some(who.clone());
        Ok(())
    }
}

/// An open WebSocket's hold on its connection's attribution ([`Connection::upgraded`]).
#[derive(Debug)]
pub struct Upgraded(Arc<Connection>);

impl Drop for Upgraded {
    fn drop(&mut self) {
        let mut cell = self.0.cell();
        cell.upgraded = cell.upgraded.saturating_sub(1);
        if cell.closed
            && cell.upgraded == 0
            && let Some(owner) = cell.owner.take()
        {
            self.0.shares.state().release_connection(&owner);
        }
    }
}

/// On each request of a connection: which [`Connection`] it came on.
#[derive(Debug, Clone)]
pub struct ConnectionTag(pub Arc<Connection>);

/// A request in flight; the credential has one less when dropped.
#[derive(Debug)]
pub struct Hold {
    shares: Arc<Shares>,
    who: Arc<str>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut state = self.shares.state();
        let c = state.counts(&self.who);
        c.in_flight = c.in_flight.saturating_sub(1);
        state.tidy(&self.who);
    }
}

/// The name a credential is counted under: `owner` for the server token, `key:ID` for a key,
/// `user:ID` for a person's browser sessions (all of them together).
fn credential(principal: &Principal) -> Arc<str> {
    principal.holder().into()
}

/// Counts a request of `principal` (when `authenticated`: it presented a credential) on its
/// connection and in flight, or refuses it. `None`: nothing to count.
pub fn hold(
    req: &axum::extract::Request,
    principal: &Principal,
    authenticated: bool,
) -> Result<Option<Hold>, Refusal> {
    if !authenticated {
        return Ok(None);
    }
    hold_as(req, credential(principal))
}

/// [`hold`] for a credential the guard names itself (a share link: `link:ID`).
pub fn hold_as(req: &axum::extract::Request, who: Arc<str>) -> Result<Option<Hold>, Refusal> {
    let Some(ConnectionTag(conn)) = req.extensions().get::<ConnectionTag>() else {
        return Ok(None);
    };
    conn.attribute(&who)?;
    let shares = &conn.shares;
    let mut state = shares.state();
    let limit = shares.limits.requests_per_credential;
    let c = state.counts(&who);
    if c.in_flight >= limit {
        return Err(Refusal::InFlight(c.in_flight));
    }
    c.in_flight += 1;
    drop(state);
    Ok(Some(Hold { shares: shares.clone(), who }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(per_conn: usize, per_req: usize, attributable: usize) -> Arc<Shares> {
        Shares::new(ShareLimits {
            connections_per_credential: per_conn,
            requests_per_credential: per_req,
            attributable,
        })
    }

    fn tagged(conn: &Arc<Connection>) -> axum::extract::Request {
        let mut req = axum::extract::Request::new(axum::body::Body::empty());
        req.extensions_mut().insert(ConnectionTag(conn.clone()));
        req
    }

    fn key(id: &str) -> Principal {
        Principal::Key { id: id.into(), scopes: vec![], user: None }
    }

    #[test]
    fn a_credential_holds_at_most_its_connections_and_they_come_back_on_close() {
        let s = shares(2, 10, 100);
        let conns: Vec<_> = (0..3).map(|_| Connection::new(s.clone())).collect();
        assert!(hold(&tagged(&conns[0]), &key("a"), true).is_ok());
        assert!(hold(&tagged(&conns[1]), &key("a"), true).is_ok());
        assert_eq!(hold(&tagged(&conns[2]), &key("a"), true).unwrap_err(), Refusal::Connections(2));
        // Another credential, the owner and public requests are not held back.
        assert!(hold(&tagged(&conns[2]), &key("b"), true).is_ok());
        assert!(hold(&tagged(&conns[2]), &Principal::Owner, false).unwrap().is_none());
        // Requests on a connection already its own always pass the connection check.
        assert!(hold(&tagged(&conns[0]), &key("a"), true).is_ok());
        conns[0].close();
        let fresh = Connection::new(s.clone());
        assert!(hold(&tagged(&fresh), &key("a"), true).is_ok());
        // A closed connection is never attributed again (its tag may outlive it).
        assert!(hold(&tagged(&conns[0]), &key("c"), true).is_ok());
        assert!(!s.state().by.contains_key("key:c"));
    }

    #[test]
    fn requests_in_flight_are_capped_per_credential_and_released_on_drop() {
        let s = shares(10, 2, 100);
        let conn = Connection::new(s.clone());
        let a = hold(&tagged(&conn), &Principal::Owner, true).unwrap();
        let b = hold(&tagged(&conn), &Principal::Owner, true).unwrap();
        assert_eq!(
            hold(&tagged(&conn), &Principal::Owner, true).unwrap_err(),
            Refusal::InFlight(2)
        );
        drop(a);
        assert!(hold(&tagged(&conn), &Principal::Owner, true).unwrap().is_some());
        drop(b);
        let r = Refusal::InFlight(2).into_response();
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "1");
        assert_eq!(r.headers()["connection"], "close");
    }

    #[test]
    fn attributed_connections_leave_a_reserve() {
        let s = shares(10, 10, 2);
        let conns: Vec<_> = (0..3).map(|_| Connection::new(s.clone())).collect();
        assert!(hold(&tagged(&conns[0]), &key("a"), true).is_ok());
        assert!(hold(&tagged(&conns[1]), &key("b"), true).is_ok());
        assert_eq!(hold(&tagged(&conns[2]), &key("c"), true).unwrap_err(), Refusal::Busy);
        assert_eq!(Refusal::Busy.into_response().status(), 503);
        // Moving a connection between credentials keeps the total.
        assert!(hold(&tagged(&conns[1]), &key("c"), true).is_ok());
        conns[0].close();
        conns[1].close();
        assert_eq!(s.state().attributed, 0);
        assert!(s.state().by.is_empty());
    }
}
