//! Storage quotas over real HTTP: a state over the size limit is 413, a flood of large
//! dashboards stops at the store's limit with 507 (the server answers `/healthz` throughout and
//! the file stays bounded), old versions are dropped past `versions_kept`, and a purge frees room.

use std::sync::Arc;
use std::time::Duration;

use boardsmith::store::{FILE_NAME, StoreQuotas, sample_state};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::support::{self, TestApp};

const STATE_LIMIT: u64 = 64 << 10;
const STORE_LIMIT: u64 = 2 << 20;

async fn app(dir: Arc<tempfile::TempDir>) -> TestApp {
    support::spawn_app_with(dir, false, |c| {
        c.store_quotas = StoreQuotas {
            max_state_bytes: STATE_LIMIT,
            versions_kept: 5,
            max_store_bytes: STORE_LIMIT,
        };
    })
    .await
}

/// Saves `state` on `base`; returns the status.
async fn save(app: &TestApp, id: &str, base: u64, state: &Value) -> u16 {
    let url = app.url(&format!("/api/dashboards/{id}"));
    let body = json!({"baseVersion": base, "state": state});
    app.http.put(url).json(&body).send().await.unwrap().status().as_u16()
}

async fn versions(app: &TestApp, id: &str) -> Vec<u64> {
    let (_, versions) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    versions["data"].as_array().unwrap().iter().map(|v| v["version"].as_u64().unwrap()).collect()
}

/// A valid state of about `bytes` bytes of JSON.
fn state(title: &str, bytes: usize) -> Value {
    serde_json::to_value(sample_state(title, 1, bytes)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_large_dashboards_stops_at_the_quota_and_a_purge_frees_room() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = app(dir.clone()).await;

    // Over the state limit: 413 with the sizes, nothing stored.
    let (status, body) =
        app.post("/api/dashboards", json!({"state": state("huge", 200_000)})).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], 413);
    assert_eq!(body["data"]["limit"], STATE_LIMIT);
    assert!(body["data"]["bytes"].as_u64().unwrap() > STATE_LIMIT);
    assert!(body["msg"].as_str().unwrap().contains("code, not data"), "{body}");
    let (_, list) = app.get("/api/dashboards").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 0);

    // One dashboard saved to its version quota before the flood.
    let big = state("big", 60_000);
    let (status, body) = app.post("/api/dashboards", json!({"state": big})).await;
    assert_eq!(status, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    for base in 1..=4 {
        assert_eq!(save(&app, &id, base, &big).await, 200);
    }
    assert_eq!(versions(&app, &id).await, [1, 2, 3, 4, 5]);

    // 200 creations of ~60 KB (12 MB asked of a 2 MiB store), 8 at a time, while a prober
    // checks that /healthz keeps answering.
    let stop = tokio_util::sync::CancellationToken::new();
    let prober = tokio::spawn({
        let (http, url, stop) = (app.http.clone(), app.url("/healthz"), stop.clone());
        async move {
            let mut slowest = Duration::ZERO;
            let mut probes = 0;
            while !stop.is_cancelled() {
                let t = std::time::Instant::now();
                let r = http.get(&url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                slowest = slowest.max(t.elapsed());
                probes += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (probes, slowest)
        }
    });
    let statuses: Vec<(u16, Value)> = futures::stream::iter(0..200)
        .map(|_| {
            let (http, url, big) = (app.http.clone(), app.url("/api/dashboards"), big.clone());
            async move {
                let r = http.post(url).json(&json!({"state": big})).send().await.unwrap();
                (r.status().as_u16(), r.json::<Value>().await.unwrap())
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    stop.cancel();
    let (probes, slowest) = prober.await.unwrap();
    assert!(probes > 0 && slowest < Duration::from_secs(2), "{probes} probes, slowest {slowest:?}");
    let created = statuses.iter().filter(|(s, _)| *s == 201).count();
    let full: Vec<&Value> = statuses.iter().filter(|(s, _)| *s == 507).map(|(_, b)| b).collect();
    assert_eq!(created + full.len(), 200, "only 201 or 507: {statuses:?}");
    assert!((15..=40).contains(&created), "about 2 MiB / 60 KB fit, less one history: {created}");
    let f = full[0];
    assert_eq!(f["data"]["limit"], STORE_LIMIT);
    assert!(f["data"]["used"].as_u64().unwrap() <= STORE_LIMIT);
    assert!(f["msg"].as_str().unwrap().contains("store is full"), "{f}");
    // The file stays within a small multiple of the quota (pages, free space, the journal).
    let file = std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().len();
    assert!(file < 4 * STORE_LIMIT, "store file {file} bytes");

    // Past the version quota a save drops the oldest version, so saving a state of the same
    // size frees what it adds and passes on a full store.
    for base in 5..=7 {
        assert_eq!(save(&app, &id, base, &big).await, 200, "save on {base}");
    }
    assert_eq!(versions(&app, &id).await, [4, 5, 6, 7, 8]);
    let (status, _) = app.post("/api/dashboards", json!({"state": big})).await;
    assert_eq!(status, 507, "still full");

    // Purging frees room for a new dashboard; a soft delete alone would not.
    let r =
        app.http.delete(app.url(&format!("/api/dashboards/{id}?purge=true"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["data"]["purged"], true);
    let (status, _) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(status, 404);
    let (status, body) = app.post("/api/dashboards", json!({"state": big})).await;
    assert_eq!(status, 201, "{body}");
    app.stop().await;
}
