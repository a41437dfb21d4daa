//! The OpenAPI document cannot fall behind the router: every route the router has (with each
//! of its methods) is an operation of the document, and every operation of the document is a
//! route. The router's paths come from the router itself (its `Debug` lists them) and its
//! methods from the `Allow` header of a 405, so a route added without `#[utoipa::path]` (or a
//! documented one that is not routed) fails here, naming it.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::spawn_app;

/// `{*rest}` (axum's catch-all) is `{rest}` in OpenAPI.
fn openapi_path(axum_path: &str) -> String {
    axum_path.replace("{*", "{")
}

/// The paths the router matches, read from its `Debug` (axum has no public list).
fn router_paths(router: &axum::Router) -> BTreeSet<String> {
    let text = format!("{router:?}");
    let mut paths = BTreeSet::new();
    // `Node { paths: {RouteId(3): "/api/x", ...} }`, once per path router.
    for chunk in text.split("paths: {").skip(1) {
        // Path templates contain `{…}`: the map ends at the first `}` outside a string.
        let mut in_string = false;
        let end = chunk
            .char_indices()
            .find(|&(_, c)| {
                if c == '"' {
                    in_string = !in_string;
                }
                c == '}' && !in_string
            })
            .map_or(chunk.len(), |(i, _)| i);
        for quoted in chunk[..end].split('"').skip(1).step_by(2) {
            // `/mcp` is the MCP protocol's endpoint (JSON-RPC as the MCP specification defines
            // it, served by the MCP SDK), not part of the REST API this document describes.
            if !quoted.contains("__private__axum") && !quoted.starts_with("/mcp") {
                paths.insert(quoted.to_owned());
            }
        }
    }
    paths
}

/// A concrete URL path for a template: every parameter filled in.
pub(crate) fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').unwrap() + start;
        out.push_str(if rest[start + 1..].starts_with('*') { "x/y" } else { "x" });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn every_route_is_documented_and_every_operation_is_routed() {
    let app = spawn_app().await;
    let router = boardsmith::server::app(app.app.clone(), &app.server_config, app.addr).unwrap();
    let paths = router_paths(&router);
    assert!(
        paths.len() >= 30 && paths.contains("/api/dashboards/{id}"),
        "the router's paths could not be read from its Debug output (did axum change it?): {paths:?}"
    );

    // The router's operations: each path's methods, from the `Allow` of a 405 to TRACE (no
    // route takes TRACE, and no handler runs for it).
    let mut routed = BTreeSet::new();
    for path in &paths {
        let r = app
            .http
            .request(reqwest::Method::TRACE, app.url(&concrete(path)))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405, "TRACE {path}");
        let allow = r.headers().get("allow").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(!allow.is_empty(), "no Allow header for {path}");
        for method in allow.split(',').map(str::trim).filter(|m| *m != "HEAD") {
            routed.insert((method.to_lowercase(), openapi_path(path)));
        }
    }

    let doc = serde_json::to_value(boardsmith::server::openapi::document()).unwrap();
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "put", "post", "delete", "patch", "options", "head", "trace"]
                .contains(&method.as_str())
            {
                documented.insert((method.clone(), path.clone()));
            }
        }
    }

    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "routes without an operation in the OpenAPI document (add #[utoipa::path] and list the \
         handler in its module's `Doc`): {undocumented:?}\n\
         operations of the document that are not routes: {unrouted:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_document_is_served_without_a_credential_and_says_how_to_authenticate() {
    let app = spawn_app().await;
    let r = reqwest::get(app.url("/openapi.json")).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    let served: Value = r.json().await.unwrap();
    let built = serde_json::to_value(boardsmith::server::openapi::document()).unwrap();
    assert_eq!(served, built);
    assert_eq!(served["openapi"], "3.1.0");

    // Credentials: bearer or the session cookie everywhere but the public paths.
    let schemes = &served["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["session"]["in"], "cookie");
    let public: BTreeSet<&str> = served["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, item)| item["get"]["security"] == serde_json::json!([{}]))
        .map(|(path, _)| path.as_str())
        .collect();
    assert_eq!(
        public,
        BTreeSet::from([
            "/",
            "/api/session/oidc/{id}/callback",
            "/api/session/oidc/{id}/start",
            "/api/session/providers",
            "/api/shared/{token}",
            "/api/shared/{token}/ws",
            "/assets/{path}",
            "/docs",
            "/healthz",
            "/openapi.json",
            "/readyz",
            "/s/{token}"
        ]),
        "the guard's public paths"
    );

    // Every operation documents its errors, and every `$ref` resolves.
    for (path, item) in served["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            assert!(responses.contains_key("default"), "{method} {path}: no error response");
        }
    }
    let text = served.to_string();
    for reference in text.split("\"$ref\":\"#/").skip(1) {
        let pointer = &reference[..reference.find('"').unwrap()];
        assert!(
            !served.pointer(&format!("/{pointer}")).unwrap_or(&Value::Null).is_null(),
            "{pointer}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn the_reference_page_is_served_from_the_binary() {
    let app = spawn_app().await;
    let index = reqwest::get(app.url("/")).await.unwrap().text().await.unwrap();
    // A build without the web app (`BOARDSMITH_SKIP_WEB`) has no page to check.
    if !index.contains("BOARDSMITH_SKIP_WEB") {
        let r = reqwest::get(app.url("/docs")).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
        let html = r.text().await.unwrap();
        assert!(html.contains("/openapi.json"), "{html}");
        // Only the server's own files: no other host.
        for attr in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
            assert!(!html.contains(attr), "{attr} in {html}");
        }
        for asset in ["docs.js", "swagger-ui-bundle.js", "swagger-ui.css"] {
            let r = reqwest::get(app.url(&format!("/assets/{asset}"))).await.unwrap();
            assert_eq!(r.status(), 200, "{asset}");
        }
    }
    app.stop().await;
}

/// What schemathesis found (scripts/test fuzzes the API from the document): each was a panic
/// or an answer outside the document.
#[tokio::test]
async fn what_the_fuzzer_found_is_answered_in_the_envelope() {
    let app = spawn_app().await;
    // A model id whose 11th byte from the end is inside a character panicked in
    // `id_candidates` (the connection was closed with no answer).
    let r = app
        .http
        .post(app.url("/v1/chat/completions"))
        .json(&serde_json::json!({"model": "\u{96ade}ü7\u{3eb7f}¹", "messages": []}))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap();
    assert!((400..500).contains(&status) || status == 503, "{status} {body}");
    assert_eq!(body["code"], status, "{body}");

    // Query strings axum could not parse were refused in plain text; a plain GET of /ws too.
    for path in
        ["/api/dashboards?includeDeleted=null", "/api/dashboards/x?detail=full&detail=full", "/ws"]
    {
        let r = app.http.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 400, "{path}");
        assert_eq!(r.headers()["content-type"], "application/json", "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["code"], 400, "{path}: {body}");
    }
    let r = app.http.delete(app.url("/api/dashboards/x?purge=maybe")).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], 400);
    app.stop().await;
}
