//! `boardsmith bench dashboards`: durable saves per second with concurrent writers.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Author, Store, StoreError, StoreOptions};
use dashboard::{DashboardState, Layout, Panel, PanelType, Renderer};

/// A valid dashboard of about `bytes` of JSON (eight table panels with padded code), stamped
/// with `n` so successive saves differ.
pub fn sample_state(title: &str, n: u64, bytes: usize) -> DashboardState {
    const PANELS: usize = 8;
    let per_panel = bytes / PANELS;
    let panels = (0..PANELS)
        .map(|i| {
            let mut code =
                format!("// save {n}\nconst rows = await sdk.builtin.quotes({{ i: {i} }});\n");
            while code.len() < per_panel {
                code.push_str("// padding padding padding padding padding padding padding\n");
            }
            code.push_str("return rows;");
            Panel {
                id: format!("p{i}"),
                title: format!("Panel {i}"),
                kind: PanelType::Table,
                renderer: Renderer::Custom,
                code,
                indicators: None,
                config: None,
                data_source: None,
                layout: None,
                refresh: None,
            }
        })
        .collect();
    DashboardState {
        title: title.to_owned(),
        layout: Layout { columns: 12, gap: None },
        panels,
        variables: Vec::new(),
        refresh: None,
        alerts: Vec::new(),
    }
}

/// Opens a store in `dir`, runs `writers` tasks that each save ~20 KB states to their own
/// dashboard for `seconds`, shuts the store down and answers durable saves per second. The data
/// stays in `dir` (every save is a ~20 KB version: use a scratch directory).
#[base::boxed]
pub async fn bench_saves(dir: &Path, writers: usize, seconds: f64) -> Result<f64, StoreError> {
    bench_saves_with(dir, writers, seconds, StoreOptions::default()).await
}

/// [`bench_saves`] with explicit group-commit tuning.
#[base::boxed]
pub async fn bench_saves_with(
    dir: &Path,
    writers: usize,
    seconds: f64,
    options: StoreOptions,
) -> Result<f64, StoreError> {
    bench_saves_on(Arc::new(Store::open_with(dir, options)?), writers, seconds).await
}

/// [`bench_saves`] on an open store (either engine), shut down at the end.
#[base::boxed]
pub async fn bench_saves_on(
    store: Arc<Store>,
    writers: usize,
    seconds: f64,
) -> Result<f64, StoreError> {
    let writers = writers.max(1);
    let mut ids = Vec::with_capacity(writers);
    for w in 0..writers {
        let rec = store
            .create(
                None,
                sample_state(&format!("bench {w}"), 0, 20_000),
                "bench",
                &Author::system(),
            )
            .await?;
        ids.push((rec.id, rec.version));
    }
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(seconds.max(0.0));
    let tasks: Vec<_> = ids
        .into_iter()
        .map(|(id, mut version)| {
            let store = Arc::clone(&store);
            let done = Arc::clone(&done);
            tokio::spawn(async move {
                while Instant::now() < until {
                    let state = sample_state(&id, version, 20_000);
                    version =
                        store.save(&id, version, state, "bench", &Author::system()).await?.version;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), StoreError>(())
            })
        })
        .collect();
    for t in tasks {
        t.await.map_err(|e| StoreError::Storage(format!("bench task: {e}")))??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    store.shutdown().await;
    Ok(done.load(Ordering::Relaxed) as f64 / elapsed.max(1e-9))
}
