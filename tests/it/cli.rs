//! The `boardsmith` command line: `run` prints JSON and exits 0, or prints the structured error
//! and exits 1; `sdk list|show` describe the registry.

use std::process::Command;

use serde_json::Value;

use crate::support;

fn boardsmith(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(support::program())
        .args(args)
        .env("BOARDSMITH_ASOF", "2026-11-20T12:00:00Z")
        .env("BOARDSMITH_OFFLINE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, stdout)
}

#[test]
fn run_prints_the_result_or_the_structured_error() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.js");
    std::fs::write(
        &ok,
        "const k = await sdk.market.getKline({symbol: vars.symbol, limit: 30});\n\
                         return { n: k.length, sym: vars.symbol };",
    )
    .unwrap();
    let (code, json, raw) =
        boardsmith(&["run", "panel", ok.to_str().unwrap(), "--var", "symbol=XAUUSD"]);
    assert_eq!(code, 0, "{raw}");
    assert_eq!(json["value"], serde_json::json!({"n": 30, "sym": "XAUUSD"}));
    assert_eq!(json["sdkCalls"], 1);

    let bad = dir.path().join("bad.js");
    std::fs::write(&bad, "const x = 1;\nreturn x.y.z;").unwrap();
    let (code, json, raw) = boardsmith(&["run", "builder", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{raw}");
    assert_eq!(json["error"]["kind"], "runtime");
    assert_eq!(json["error"]["line"], 2);

    let state = dir.path().join("state.json");
    std::fs::write(&state, r#"{"title": "Gold"}"#).unwrap();
    let m = dir.path().join("m.js");
    std::fs::write(&m, "(state) => ({...state, title: state.title + '!'})").unwrap();
    let (code, json, _) =
        boardsmith(&["run", "builder", m.to_str().unwrap(), "--state", state.to_str().unwrap()]);
    assert_eq!((code, &json["value"]["title"]), (0, &Value::from("Gold!")));
}

#[test]
fn sdk_list_and_show_describe_the_registry() {
    let (code, _, out) = boardsmith(&["sdk", "list"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.starts_with("market ")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("binance ")), "on by default: {out}");
    let kline = out.lines().find(|l| l.starts_with("market.getKline ")).expect("a method row");
    assert!(kline.ends_with("binance (disabled), demo (demo)"), "{kline}");
    let (code, json, _) = boardsmith(&["sdk", "list", "--json"]);
    assert_eq!(code, 0);
    let market = json.as_array().unwrap().iter().find(|s| s["name"] == "market").unwrap();
    // A method with no live provider.
    let quotes = market["methods"].as_array().unwrap().iter().find(|m| m["name"] == "getQuotes");
    assert_eq!(
        quotes.unwrap()["providers"],
        serde_json::json!([{"name": "demo", "status": "demo"}])
    );
    // DefiLlama serves TVL by two entries (all chains, one chain): it is listed once.
    let tvl = out.lines().find(|l| l.starts_with("defi.getTvlHistory ")).expect("a method row");
    assert!(tvl.ends_with(" defillama (disabled), demo (demo)"), "{tvl}");
    let (code, json, _) = boardsmith(&["sdk", "show", "market"]);
    assert_eq!(code, 0);
    assert_eq!(json["name"], "market");
    assert!(json["methods"].as_array().unwrap().iter().any(|m| m["name"] == "getKline"));
    assert!(json.get("backing").is_none(), "backings are not public");
}

/// `boardsmith run panel x.js | head`: the reader goes away after the first bytes; the command
/// ends quietly (exit 0, nothing on stderr about a panic) instead of panicking on the write.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.js");
    // About 1 MB of JSON: far more than a pipe buffers.
    std::fs::write(&big, "return Array.from({length: 20000}, (_, i) => ({i, s: 'x'.repeat(30)}));")
        .unwrap();
    let mut child = Command::new(support::program())
        .args(["run", "panel", big.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first[..1], b"{");
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// `sdk check` calls each live provider once (defaults, forced provider) and reports ok, latency
/// and the error; a provider whose methods all need params is not called; exit 1 if any failed.
#[tokio::test]
async fn sdk_check_calls_each_live_provider_once() {
    use axum::http::StatusCode;
    let app = axum::Router::new()
        .route("/good", axum::routing::get(|| async { axum::Json(serde_json::json!({"v": 1})) }))
        .route("/bad", axum::routing::get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down") }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let dir = tempfile::tempdir().unwrap();
    let http = |provider: &str, path: &str| {
        serde_json::json!({"provider": provider,
            "backing": {"kind": "http", "url": format!("http://{addr}/{path}"), "retries": 0}})
    };
    let method = |name: &str, params: Value, provider: Value| {
        serde_json::json!({"name": name, "description": "d", "params": params,
            "returns": {"type": "object", "description": "r"}, "providers": [provider]})
    };
    let needs_param =
        serde_json::json!([{"name": "x", "type": "string", "required": true, "description": "x"}]);
    let spec = serde_json::json!({"name": "probe", "displayName": "Probe", "description": "d", "methods": [
        method("a", serde_json::json!([]), http("good", "good")),
        method("b", serde_json::json!([]), http("bad", "bad")),
        method("c", needs_param, http("unprobed", "good")),
    ]});
    std::fs::write(dir.path().join("probe.json"), spec.to_string()).unwrap();
    let spec_dir = dir.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(support::program())
            .args(["sdk", "check", "--json"])
            .env("BOARDSMITH_SDK_SPEC", &spec_dir)
            .env("BOARDSMITH_OUTBOUND_ALLOW", addr.to_string())
            .env_remove("BOARDSMITH_OFFLINE")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "one provider failed: {stdout}");
    let checks: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    let by = |p: &str| checks.iter().find(|c| c["provider"] == p).cloned();
    let good = by("good").expect("good checked");
    assert_eq!(
        (good["ok"].clone(), good["method"].clone()),
        (Value::from(true), Value::from("probe.a"))
    );
    assert!(good["latencyMs"].as_f64().unwrap() >= 0.0);
    let bad = by("bad").expect("bad checked");
    assert_eq!(bad["ok"], false);
    assert!(bad["error"].as_str().unwrap().contains("HTTP 503"), "{bad}");
    assert!(by("unprobed").is_none(), "needs a param: not called: {stdout}");
}
