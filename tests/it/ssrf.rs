//! Outbound requests (SSRF): an `http` backing reaches only the hosts its spec files declare
//! (plus `BOARDSMITH_OUTBOUND_ALLOW`), never a loopback, private or link-local address unless
//! configured, whatever form the address takes, whichever way it is reached (spec URL,
//! `baseUrlEnv`, a name resolving to it, a redirect). Each refusal is an `SdkError::Refused`
//! naming the setting, and the listener behind the address never sees a request.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use boardsmith::sdk::http::Refused;
use boardsmith::sdk::{Registry, Sdk, SdkConfig, SdkError, SourceSpec};
use serde_json::{Value, json};

use crate::support;

/// What a loopback listener answers.
#[derive(Clone)]
enum Answer {
    /// 200 with `{"ok": true}`.
    Json,
    /// 302 to this location.
    Redirect(String),
}

/// A loopback HTTP listener that counts the requests it receives.
struct Listener {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Listener {
    async fn start(answer: Answer) -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let app = Router::new().fallback(reply).with_state((hits.clone(), answer));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, hits }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn reply(State((hits, answer)): State<(Arc<AtomicUsize>, Answer)>) -> Response {
    hits.fetch_add(1, Ordering::SeqCst);
    match answer {
        Answer::Json => {
            (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], "{\"ok\":true}")
                .into_response()
        }
        Answer::Redirect(to) => (StatusCode::FOUND, [(header::LOCATION, to)]).into_response(),
    }
}

/// A one-method source `probe.get` fetching `url` (fast retries, so a wrongly retried refusal
/// would still finish quickly, and show up in the hit counts).
fn probe(url: &str) -> SourceSpec {
    serde_json::from_value(json!({
        "name": "probe", "displayName": "Probe", "description": "ssrf probe",
        "backing": {"kind": "http", "url": url, "retryBaseMs": 1},
        "methods": [{"name": "get", "description": "d",
                     "returns": {"type": "object", "description": "d"}}]
    }))
    .unwrap()
}

fn sdk_with(url: &str, config: SdkConfig) -> Sdk {
    Sdk::with_registry(Registry::new(vec![probe(url)], &|_| true).unwrap(), config).unwrap()
}

async fn call(sdk: &Sdk) -> Result<Value, SdkError> {
    sdk.call("probe", "get", Value::Null).await.map(|a| a.value.clone())
}

/// The refusal inside an `SdkError::Refused`, after checking its message names the settings.
fn refused(err: SdkError) -> Refused {
    let text = err.to_string();
    match err {
        SdkError::Refused { source_name, method, refused } => {
            assert_eq!((source_name.as_str(), method.as_str()), ("probe", "get"));
            assert!(text.starts_with("probe.get: "), "{text}");
            assert!(text.contains("BOARDSMITH_OUTBOUND_ALLOW"), "{text}");
            refused
        }
        other => panic!("expected an outbound refusal, got {other:?}: {text}"),
    }
}

#[tokio::test]
async fn loopback_private_and_metadata_addresses_are_refused_in_every_form() {
    let l = Listener::start(Answer::Json).await;
    let p = l.port();
    let corpus = [
        (format!("http://127.0.0.1:{p}/x"), "127.0.0.1", "loopback"),
        (format!("http://2130706433:{p}/x"), "127.0.0.1", "loopback"),
        (format!("http://0x7f000001:{p}/x"), "127.0.0.1", "loopback"),
        (format!("http://0177.0.0.1:{p}/x"), "127.0.0.1", "loopback"),
        (format!("http://127.1:{p}/x"), "127.0.0.1", "loopback"),
        (format!("http://0.0.0.0:{p}/x"), "0.0.0.0", "unspecified"),
        (format!("http://[::1]:{p}/x"), "::1", "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{p}/x"), "::ffff:127.0.0.1", "loopback"),
        (format!("http://[::ffff:7f00:1]:{p}/x"), "::ffff:127.0.0.1", "loopback"),
        // Resolves to 127.0.0.1 (and ::1): refused by the resolver at connect time.
        (format!("http://localhost:{p}/x"), "localhost", "loopback"),
        (format!("http://LocalHost:{p}/x"), "localhost", "loopback"),
        ("http://169.254.169.254/latest/meta-data/".into(), "169.254.169.254", "link-local"),
        ("http://[fe80::1]/x".into(), "fe80::1", "link-local"),
        ("http://10.0.0.1/x".into(), "10.0.0.1", "private"),
        ("http://172.16.0.1/x".into(), "172.16.0.1", "private"),
        ("http://192.168.0.1/x".into(), "192.168.0.1", "private"),
        ("http://100.64.0.1/x".into(), "100.64.0.1", "shared (CGNAT)"),
        ("http://[fd00::1]/x".into(), "fd00::1", "private"),
    ];
    for (url, host, kind) in &corpus {
        let started = std::time::Instant::now();
        let err = call(&sdk_with(url, SdkConfig::default())).await.unwrap_err();
        let text = err.to_string();
        match refused(err) {
            Refused::Address { host: h, kind: k, .. } => {
                assert_eq!(h.to_ascii_lowercase(), *host, "{url}: {text}");
                assert!(k.starts_with(kind), "{url}: {text}");
            }
            other => panic!("{url}: {other:?}"),
        }
        assert!(text.contains("BOARDSMITH_OUTBOUND_ALLOW_PRIVATE=1"), "{text}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{url}: retried?");
    }
    assert_eq!(l.hits(), 0, "a refused request reached the listener");
}

#[tokio::test]
async fn the_allowance_is_explicit_and_per_host() {
    let l = Listener::start(Answer::Json).await;
    let url = format!("{}/x", l.origin());
    // Listing the host and port allows it, private as it is.
    let allowed = SdkConfig { outbound_allow: vec![l.addr.to_string()], ..SdkConfig::default() };
    assert_eq!(call(&sdk_with(&url, allowed)).await.unwrap(), json!({"ok": true}));
    assert_eq!(l.hits(), 1);
    // Another port of the same host is not allowed by that entry.
    let other_port = SdkConfig { outbound_allow: vec!["127.0.0.1:1".into()], ..Default::default() };
    assert!(matches!(
        refused(call(&sdk_with(&url, other_port)).await.unwrap_err()),
        Refused::Address { .. }
    ));
    // BOARDSMITH_OUTBOUND_ALLOW_PRIVATE lifts the address rule for names too.
    let private = SdkConfig { outbound_allow_private: true, ..SdkConfig::default() };
    let by_name = format!("http://localhost:{}/x", l.port());
    assert_eq!(call(&sdk_with(&by_name, private)).await.unwrap(), json!({"ok": true}));
    assert_eq!(l.hits(), 2);
    // A malformed entry stops the SDK from starting, naming the variable.
    let bad = SdkConfig { outbound_allow: vec!["a b".into()], ..SdkConfig::default() };
    let err =
        Sdk::with_registry(Registry::new(vec![probe(&url)], &|_| true).unwrap(), bad).unwrap_err();
    assert!(
        matches!(&err, SdkError::Config(m) if m.starts_with("BOARDSMITH_OUTBOUND_ALLOW: ")),
        "{err}"
    );
}

#[tokio::test]
async fn redirects_are_checked_at_every_hop() {
    let target = Listener::start(Answer::Json).await;
    let to_other_port = Listener::start(Answer::Redirect(format!("{}/x", target.origin()))).await;
    let to_metadata =
        Listener::start(Answer::Redirect("http://169.254.169.254/latest/meta-data/".into())).await;
    let to_localhost =
        Listener::start(Answer::Redirect(format!("http://localhost:{}/x", target.port()))).await;
    let to_file = Listener::start(Answer::Redirect("file:///etc/passwd".into())).await;
    for (from, refused_host) in [
        (&to_other_port, target.addr.to_string()),
        (&to_metadata, "169.254.169.254:80".to_owned()),
        (&to_localhost, format!("localhost:{}", target.port())),
    ] {
        // Only the redirecting server is allowed.
        let config =
            SdkConfig { outbound_allow: vec![from.addr.to_string()], ..Default::default() };
        let err = call(&sdk_with(&format!("{}/start", from.origin()), config)).await.unwrap_err();
        let text = err.to_string();
        assert_eq!(
            refused(err),
            Refused::Host { authority: refused_host.clone(), redirect: true },
            "{text}"
        );
        assert!(text.contains(&format!("redirected to `{refused_host}`")), "{text}");
        assert_eq!(from.hits(), 1, "{text}: the refusal must not be retried");
    }
    let config = SdkConfig { outbound_allow: vec![to_file.addr.to_string()], ..Default::default() };
    // reqwest never follows a redirect to another scheme: the 302 is the answer.
    let err = call(&sdk_with(&format!("{}/start", to_file.origin()), config)).await.unwrap_err();
    assert!(err.to_string().contains("HTTP 302 Found from 127.0.0.1:"), "{err}");
    assert_eq!(target.hits(), 0, "a redirect reached a host that is not allowed");

    // A redirect to an allowed host is followed.
    let config = SdkConfig {
        outbound_allow: vec![to_other_port.addr.to_string(), target.addr.to_string()],
        ..Default::default()
    };
    let sdk = sdk_with(&format!("{}/again", to_other_port.origin()), config);
    assert_eq!(call(&sdk).await.unwrap(), json!({"ok": true}));
    assert_eq!(target.hits(), 1);
}

#[test]
fn placeholders_cannot_reach_the_authority() {
    for url in ["https://{host}/x", "https://api.x.com{path}", "https://api.x.com:{port}/"] {
        let err = Registry::new(vec![probe(url)], &|_| true).unwrap_err().to_string();
        assert!(err.contains("placeholders may only follow the `/` that starts the path"), "{err}");
    }
}

/// Runs `boardsmith run panel` on `code` with a spec directory holding `probe` and extra
/// environment variables; returns the printed JSON.
async fn run_panel(spec: SourceSpec, code: &str, env: Vec<(&'static str, String)>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    std::fs::create_dir(&specs).unwrap();
    std::fs::write(specs.join("probe.json"), serde_json::to_string(&spec).unwrap()).unwrap();
    let file = dir.path().join("panel.js");
    std::fs::write(&file, code).unwrap();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(support::program())
            .args(["run", "panel", file.to_str().unwrap()])
            .env("BOARDSMITH_SDK_SPEC", &specs)
            .env_remove("BOARDSMITH_OUTBOUND_ALLOW")
            .env_remove("BOARDSMITH_OUTBOUND_ALLOW_PRIVATE")
            .envs(env)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(&stdout)
        .unwrap_or_else(|_| panic!("not JSON: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test]
async fn base_url_env_pointing_at_loopback_is_refused_unless_listed() {
    let l = Listener::start(Answer::Json).await;
    let mut spec = probe("https://api.example.com/v1/data");
    if let boardsmith::sdk::Backing::Http(h) = &mut spec.backing {
        h.base_url_env = Some("PROBE_BASE_URL".into());
    }
    let code = "return await sdk.probe.get({});";
    let base = ("PROBE_BASE_URL", l.origin());
    let out = run_panel(spec.clone(), code, vec![base.clone()]).await;
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`127.0.0.1` is a loopback address, which data sources may not reach"),
        "{out}"
    );
    assert!(message.contains("BOARDSMITH_OUTBOUND_ALLOW"), "{out}");
    assert_eq!(l.hits(), 0);

    // The operator lists it: the same call goes through.
    let allow = ("BOARDSMITH_OUTBOUND_ALLOW", format!("api.example.com, {}", l.addr));
    let out = run_panel(spec, code, vec![base, allow]).await;
    assert_eq!(out["value"], json!({"ok": true}), "{out}");
    assert_eq!(l.hits(), 1);
}

#[tokio::test]
async fn a_name_rebound_to_loopback_is_refused_at_connect_time() {
    use boardsmith::sdk::http::{self, Outbound, outbound};
    let l = Listener::start(Answer::Json).await;
    // A DNS server that answers 127.0.0.1 for a public-looking name (rebinding).
    let lookup: outbound::Lookup = Arc::new(|name: String| {
        Box::pin(async move {
            match name.as_str() {
                "rebind.example" => Ok(vec!["127.0.0.1".parse().unwrap()]),
                _ => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such host")),
            }
        })
    });
    let spec = probe(&format!("http://rebind.example:{}/x", l.port()));
    let boardsmith::sdk::Backing::Http(backing) = &spec.backing else { unreachable!() };
    let declared = |listed: Vec<http::AllowedHost>| {
        let mut o = Outbound::new(listed, false);
        o.declare(&reqwest::Url::parse(&backing.url).unwrap());
        http::Client::with_lookup(o, lookup.clone()).unwrap()
    };
    let err = http::fetch(&declared(vec![]), backing, &serde_json::Map::new(), &|_| None, None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        http::Error::Refused(Refused::Address {
            host: "rebind.example".into(),
            addr: "127.0.0.1".parse().unwrap(),
            kind: "loopback",
        })
    );
    assert_eq!(l.hits(), 0);
    // Listed by the operator, the same name connects to exactly the resolved address.
    let client = declared(vec!["rebind.example".parse().unwrap()]);
    let out =
        http::fetch(&client, backing, &serde_json::Map::new(), &|_| None, None).await.unwrap();
    assert_eq!(out, json!({"ok": true}));
    assert_eq!(l.hits(), 1);
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_asked_once_not_retried() {
    use boardsmith::sdk::http::{self, Outbound, outbound};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let lookup: outbound::Lookup = Arc::new(move |name: String| {
        counter.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Err(std::io::Error::other(format!("failed to lookup address information: {name}")))
        })
    });
    // Retries are on (the default two) and would be spent on a refused connection.
    let spec = probe("http://down.example/x");
    let boardsmith::sdk::Backing::Http(backing) = &spec.backing else { unreachable!() };
    let mut o = Outbound::new(vec![], false);
    o.declare(&reqwest::Url::parse(&backing.url).unwrap());
    let client = http::Client::with_lookup(o, lookup).unwrap();
    let err = http::fetch(&client, backing, &serde_json::Map::new(), &|_| None, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot resolve down.example"), "{err}");
    assert!(!err.contains("attempts"), "a DNS failure is not retried: {err}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}
