//! Metrics: their names (OpenTelemetry's GenAI and HTTP semantic conventions where they
//! exist; Prometheus shows the dots as underscores), explicit histogram buckets, the helpers
//! call sites record through, and the Prometheus exporter behind `GET /metrics` (a route of
//! the server: no listener of its own).
//!
//! A leaf: callers hand it plain values. Gauges of state other modules own (viewers, live
//! runs) are read from them at scrape time by the `/metrics` handler, not tracked here.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Unit, counter, describe_counter, describe_gauge, describe_histogram, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Tokens of a model call (`gen_ai.token.type`: `input` or `output`).
pub const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// Seconds from a model request to its last byte.
pub const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
/// Seconds from a model request to its first output chunk.
pub const TIME_TO_FIRST_CHUNK: &str = "gen_ai.client.operation.time_to_first_chunk";
/// Seconds from an HTTP request to its response head.
pub const HTTP_DURATION: &str = "http.server.request.duration";
/// Sandbox executions (`kind`, `outcome`: `ok`, `error`, `limit`).
pub const SANDBOX_RUNS: &str = "boardsmith.sandbox.runs";
/// Sandbox executions stopped by a limit (`limit`).
pub const SANDBOX_LIMIT_HITS: &str = "boardsmith.sandbox.limit_hits";
/// Seconds a sandbox execution took (`kind`).
pub const SANDBOX_DURATION: &str = "boardsmith.sandbox.run.duration";
/// Panel code runs of the live layer (`outcome`: `ok`, `error`).
pub const PANEL_RUNS: &str = "boardsmith.panel.runs";
/// Data-source calls (`provider`), cached answers included.
pub const DATA_CALLS: &str = "boardsmith.data.calls";
/// Data-source fetches from a backing (`provider`, `outcome`): calls the cache did not answer.
pub const DATA_FETCHES: &str = "boardsmith.data.fetches";
/// Connected WebSocket viewers.
pub const WS_VIEWERS: &str = "boardsmith.ws.viewers";
/// Agent runs in progress.
pub const AGENT_RUNS_LIVE: &str = "boardsmith.agent.runs.live";

/// Seconds: from a millisecond to two minutes.
const SECONDS: [f64; 15] =
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0];
/// Tokens: OpenTelemetry's advised boundaries for `gen_ai.client.token.usage`.
const TOKENS: [f64; 14] = [
    1.0,
    4.0,
    16.0,
    64.0,
    256.0,
    1024.0,
    4096.0,
    16384.0,
    65536.0,
    262_144.0,
    1_048_576.0,
    4_194_304.0,
    16_777_216.0,
    67_108_864.0,
];

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// The exporter, installed as the process's recorder on first use (`None`: another recorder
/// was installed first, so these metrics go there).
pub fn exporter() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            // Recommended naming: the unit as a suffix (`_seconds`), `_total` on counters.
            let recorder = PrometheusBuilder::new()
                .with_recommended_naming(true)
                .set_buckets(&SECONDS)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full(TOKEN_USAGE.into()), &TOKENS))
                .map(PrometheusBuilder::build_recorder);
            let recorder = match recorder {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(error = %e, "building the metrics recorder");
                    return None;
                }
            };
            let handle = recorder.handle();
            if let Err(e) = metrics::set_global_recorder(recorder) {
                tracing::warn!(error = %e, "another metrics recorder is installed");
                return None;
            }
            describe();
            Some(handle)
        })
        .as_ref()
}

fn describe() {
    describe_histogram!(TOKEN_USAGE, "Tokens of a model call, by token type");
    describe_histogram!(OPERATION_DURATION, Unit::Seconds, "Model call duration");
    describe_histogram!(TIME_TO_FIRST_CHUNK, Unit::Seconds, "Time to a model call's first chunk");
    describe_histogram!(HTTP_DURATION, Unit::Seconds, "HTTP request duration");
    describe_counter!(SANDBOX_RUNS, "Sandbox executions by kind and outcome");
    describe_counter!(SANDBOX_LIMIT_HITS, "Sandbox executions stopped by a limit");
    describe_histogram!(SANDBOX_DURATION, Unit::Seconds, "Sandbox execution duration");
    describe_counter!(PANEL_RUNS, "Panel code runs by outcome");
    describe_counter!(DATA_CALLS, "Data-source calls, cached answers included");
    describe_counter!(DATA_FETCHES, "Data-source fetches from a backing, by outcome");
    describe_gauge!(WS_VIEWERS, "Connected WebSocket viewers");
    describe_gauge!(AGENT_RUNS_LIVE, "Agent runs in progress");
}

/// The exposition text (Prometheus 0.0.4), after a round of upkeep.
pub fn render() -> Option<String> {
    let handle = exporter()?;
    handle.run_upkeep();
    Some(handle.render())
}

/// One model call: `provider/model`, its tokens, its duration and, when streamed, its time
/// to first chunk; `error` names the failure kind.
pub fn model_call(
    model: &str,
    input_tokens: u64,
    output_tokens: u64,
    duration: Duration,
    first_chunk: Option<Duration>,
    error: Option<&'static str>,
) {
    let (provider, name) = model.split_once('/').unwrap_or(("", model));
    let labels = [
        ("gen_ai.operation.name", "chat".to_owned()),
        ("gen_ai.provider.name", provider.to_owned()),
        ("gen_ai.request.model", name.to_owned()),
    ];
    match error {
        None => {
            for (kind, n) in [("input", input_tokens), ("output", output_tokens)] {
                let mut l = labels.to_vec();
                l.push(("gen_ai.token.type", kind.to_owned()));
                histogram!(TOKEN_USAGE, &l).record(n as f64);
            }
            histogram!(OPERATION_DURATION, &labels).record(duration.as_secs_f64());
        }
        Some(kind) => {
            let mut l = labels.to_vec();
            l.push(("error.type", kind.to_owned()));
            histogram!(OPERATION_DURATION, &l).record(duration.as_secs_f64());
        }
    }
    if let Some(t) = first_chunk {
        histogram!(TIME_TO_FIRST_CHUNK, &labels).record(t.as_secs_f64());
    }
}

/// One HTTP request: its method, route template (`/api/dashboards/{id}`; `unmatched` for
/// none) and status.
pub fn http_request(method: &str, route: &str, status: u16, duration: Duration) {
    histogram!(
        HTTP_DURATION,
        "http.request.method" => method.to_owned(),
        "http.route" => route.to_owned(),
        "http.response.status_code" => status.to_string()
    )
    .record(duration.as_secs_f64());
}

/// One sandbox execution of `kind` (`search`, `builder`, `panel`, `check`): `Ok`, or the
/// limit that stopped it (`Err(Some)`), or another error (`Err(None)`).
pub fn sandbox_run(
    kind: &'static str,
    result: Result<(), Option<&'static str>>,
    duration: Duration,
) {
    let outcome = match result {
        Ok(()) => "ok",
        Err(Some(limit)) => {
            counter!(SANDBOX_LIMIT_HITS, "limit" => limit).increment(1);
            "limit"
        }
        Err(None) => "error",
    };
    counter!(SANDBOX_RUNS, "kind" => kind, "outcome" => outcome).increment(1);
    histogram!(SANDBOX_DURATION, "kind" => kind).record(duration.as_secs_f64());
}

/// One panel run of the live layer.
pub fn panel_run(ok: bool) {
    counter!(PANEL_RUNS, "outcome" => if ok { "ok" } else { "error" }).increment(1);
}

/// One data-source call served by `provider` (cached or not).
pub fn data_call(provider: &str) {
    counter!(DATA_CALLS, "provider" => provider.to_owned()).increment(1);
}

/// One fetch from `provider`'s backing.
pub fn data_fetch(provider: &str, ok: bool) {
    counter!(DATA_FETCHES, "provider" => provider.to_owned(), "outcome" => if ok { "ok" } else { "error" })
        .increment(1);
}

/// Gauges of state other modules own, set just before a scrape.
pub fn gauges(ws_viewers: usize, agent_runs: usize) {
    metrics::gauge!(WS_VIEWERS).set(ws_viewers as f64);
    metrics::gauge!(AGENT_RUNS_LIVE).set(agent_runs as f64);
}
