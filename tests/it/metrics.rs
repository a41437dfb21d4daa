//! `GET /metrics` over real HTTP: Prometheus text with OpenTelemetry GenAI names and explicit
//! histogram buckets, counting what the server did (a model call through `/v1`, panel runs,
//! data calls, HTTP requests), guarded by the token or the `metrics` scope.

use boardsmith::llm::mock::{MockLlm, Script};
use serde_json::json;

use crate::openai_api::{app_with, text_turn};
use crate::support::{TestApp, authed_client};

async fn scrape(app: &TestApp) -> String {
    let r = app.http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    r.text().await.unwrap()
}

/// The value of the first sample line that starts with `prefix` (0 when absent).
fn sample(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn metrics_count_model_calls_panel_runs_and_requests_with_explicit_buckets() {
    let mock = MockLlm::start(Script { turns: vec![text_turn("Carbon is element six.", 5)] }, 0)
        .await
        .unwrap();
    let app = app_with(&mock).await;
    let panel_ok = "boardsmith_sandbox_runs_total{kind=\"panel\",outcome=\"ok\"}";
    let before = scrape(&app).await;

    let r = app
        .http
        .post(app.url("/v1/chat/completions"))
        .json(&json!({"model": "mock/mock-model", "stream": true,
            "messages": [{"role": "user", "content": "carbon?"}]}))
        .send()
        .await
        .unwrap();
    r.text().await.unwrap();
    let code =
        "return await sdk.market.getKline({ symbol: 'BTCUSDT', timeframe: '1D', limit: 5 });";
    let (status, body) = app.post("/api/panels/preview", json!({"code": code})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "ok", "{body}");

    let after = scrape(&app).await;
    // GenAI semantic-convention names, as histograms with explicit buckets (not summaries).
    for needle in [
        "gen_ai_client_token_usage_bucket{",
        "gen_ai_token_type=\"input\"",
        "gen_ai_provider_name=\"mock\"",
        "gen_ai_request_model=\"mock-model\"",
        "le=\"16384\"",
        "gen_ai_client_operation_duration_seconds_bucket{",
        "gen_ai_client_operation_time_to_first_chunk_seconds_bucket{",
        "http_server_request_duration_seconds_bucket{",
        "http_route=\"/v1/chat/completions\"",
        "le=\"0.001\"",
        "boardsmith_data_calls_total{",
        "boardsmith_ws_viewers ",
        "boardsmith_agent_runs_live ",
    ] {
        assert!(after.contains(needle), "`{needle}` missing from:\n{after}");
    }
    assert!(!after.contains("quantile="), "histograms, not summaries");
    assert!(
        sample(&after, panel_ok) >= sample(&before, panel_ok) + 1.0,
        "the preview's panel run is counted:\n{after}"
    );

    // Guarded: no credential 401, a key without `metrics` 403, one with it 200.
    let r = reqwest::Client::new().get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let (_, reader) = app.post("/api/keys", json!({"name": "r", "scopes": ["read"]})).await;
    let (_, scraper) = app.post("/api/keys", json!({"name": "s", "scopes": ["metrics"]})).await;
    let key = |b: &serde_json::Value| authed_client(b["data"]["key"].as_str().unwrap());
    assert_eq!(key(&reader).get(app.url("/metrics")).send().await.unwrap().status(), 403);
    assert_eq!(key(&scraper).get(app.url("/metrics")).send().await.unwrap().status(), 200);
}
