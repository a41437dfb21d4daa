//! Dashboards leave the screen: a dashboard as PNG or PDF on demand ([`Reports::snapshot`]),
//! and scheduled reports (`{dashboardId, cron, timezone, format, notify}`) rendered and sent to
//! alert channels on their schedule by one node.
//!
//! Owns the reports' records (store kinds `report` and `report_run`), the schedule
//! ([`schedule`]), and a render: a share link that lives for the render only, this server's
//! shared page (`/s/{token}`) opened in headless Chromium ([`render`]) until every panel has
//! drawn or said why not, then the capture. Knows nothing of HTTP routes; the server tells it
//! the address it listens on ([`Reports::set_origin`]).
//!
//! One node runs each report: the scheduler claims the report's lease in a shared store (as
//! dashboards' refresh leases), and a run's record (`{reportId}/{scheduled unix ms}`) is
//! written before anything is sent, so a node finding it sends nothing.

pub mod schedule;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use access::links::{LinkRequest, Links};
use alerting::channels::{Delivery, Outgoing};
use alerting::{Alerting, ReportFile};
use base::principal::{Actor, Principal};
use dashboards::Dashboards;
pub use render::{Format, Renderer, RendererStatus};
use schedule::Schedule;
use store::{Record, Store, StoreError};

/// Most scheduled reports.
pub const MAX_REPORTS: usize = 200;
/// Runs kept per report (older ones are removed as new ones are written).
const KEEP_RUNS: usize = 20;
/// How long a render's share link works (it is revoked as soon as the render ends).
const LINK_LIFETIME: u64 = 300;

/// The JavaScript that says whether the shared page is ready to capture: `true` once every
/// panel has data or has said why not, a sentence when the page cannot show the dashboard.
const READY: &str = r#"(() => {
  const gone = document.querySelector('.shared-gone');
  if (gone) return gone.textContent || 'the dashboard cannot be shown';
  const view = document.querySelector('.app-shared .dashboard-view');
  if (!view || !view.dataset.version) return false;
  if (document.querySelector('.dash-no-panels')) return true;
  const panels = [...view.querySelectorAll('.dashboard-grid [data-status]')];
  return panels.length > 0 && panels.every((p) => p.dataset.status !== 'loading');
})()"#;

/// Settings.
#[derive(Debug, Clone)]
pub struct ReportsConfig {
    /// The browser and its bounds.
    pub render: render::RenderConfig,
    /// The shortest time between two runs of one report (`BOARDSMITH_REPORT_MIN_INTERVAL`,
    /// default 5 minutes): each run starts a browser.
    pub min_interval: Duration,
    /// How often the scheduler looks for due reports.
    pub tick: Duration,
}

impl Default for ReportsConfig {
    fn default() -> Self {
        Self {
            render: render::RenderConfig::default(),
            min_interval: Duration::from_secs(300),
            tick: Duration::from_secs(15),
        }
    }
}

impl ReportsConfig {
    /// Defaults with `BOARDSMITH_CHROMIUM` and `BOARDSMITH_REPORT_MIN_INTERVAL` applied.
    pub fn from_env() -> Self {
        let mut c = Self { render: render::RenderConfig::from_env(), ..Self::default() };
        if let Some(d) = std::env::var("BOARDSMITH_REPORT_MIN_INTERVAL")
            .ok()
            .and_then(|v| humantime::parse_duration(v.trim()).ok())
        {
            c.min_interval = d;
        }
        c
    }
}

/// A scheduled report as stored and listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `rp_` and a time-ordered UUID.
    pub id: String,
    /// The dashboard it shows.
    pub dashboard_id: String,
    /// Its name (the mail's subject).
    pub name: String,
    /// When it runs: five cron fields (`0 8 * * 1-5`), six with seconds first, or `@daily`.
    pub cron: String,
    /// The IANA time zone `cron` is read in.
    pub timezone: String,
    /// `png` or `pdf`.
    pub format: Format,
    /// The channels it goes to.
    pub notify: Vec<String>,
    /// Not run while paused.
    #[serde(default)]
    pub paused: bool,
    /// Who made it.
    pub created_by: Actor,
    /// When (unix ms).
    pub created_at: i64,
}

/// What a report is to be (`POST /api/reports`, `PUT /api/reports/{id}`).
#[derive(Debug, Clone, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReportInput {
    /// The dashboard.
    pub dashboard_id: String,
    /// Its name; absent: "{dashboard title} report".
    #[serde(default)]
    pub name: Option<String>,
    /// When it runs (see [`Report::cron`]).
    pub cron: String,
    /// Default `UTC`.
    #[serde(default)]
    pub timezone: Option<String>,
    /// `pdf` (default) or `png`.
    #[serde(default)]
    pub format: Option<Format>,
    /// The channels it goes to (at least one).
    pub notify: Vec<String>,
    /// Default false.
    #[serde(default)]
    pub paused: bool,
}

/// A report with its schedule read.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportView {
    /// The report.
    #[serde(flatten)]
    pub report: Report,
    /// The schedule in words.
    pub schedule: String,
    /// The next run (unix ms), unless paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_run_at: Option<i64>,
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportRun {
    /// `{reportId}/{scheduled unix ms}`.
    pub id: String,
    /// The report.
    pub report_id: String,
    /// The time it was scheduled for (unix ms); a run asked for by hand: when asked.
    pub scheduled_for: i64,
    /// When it finished (unix ms); absent while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    /// `running`, `sent` (every channel took it), `partial` or `failed`.
    pub status: String,
    /// The file's size in bytes.
    #[serde(default)]
    pub bytes: u64,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What each channel did.
    #[serde(default)]
    pub deliveries: Vec<Delivery>,
}

/// A dashboard rendered.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The file.
    pub bytes: Vec<u8>,
    /// Its name (`btc-watch-2026-11-30.pdf`).
    pub filename: String,
    /// Its format.
    pub format: Format,
    /// The dashboard's title.
    pub title: String,
}

/// Why a report or render failed.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A bad input; the message names the field.
    #[error("{0}")]
    Invalid(String),
    /// No such report or dashboard.
    #[error("{0}")]
    NotFound(String),
    /// Chromium is missing, or busy: the message says which.
    #[error("{0}")]
    Unavailable(String),
    /// The render failed.
    #[error("{0}")]
    Render(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<render::RenderError> for ReportError {
    fn from(e: render::RenderError) -> Self {
        match e {
            render::RenderError::Unavailable(_) | render::RenderError::Busy => {
                Self::Unavailable(e.to_string())
            }
            other => Self::Render(other.to_string()),
        }
    }
}

/// The reports service (cheap to share behind an `Arc`).
pub struct Reports {
    store: Arc<Store>,
    dashboards: Arc<Dashboards>,
    links: Arc<Links>,
    alerting: Arc<Alerting>,
    renderer: Renderer,
    config: ReportsConfig,
    origin: OnceLock<String>,
}

impl std::fmt::Debug for Reports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reports").finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// A dashboard's title as the stem of its file's name.
fn file_stem(title: &str) -> String {
    let s: String = base::text::slug(title).chars().take(60).collect();
    if s.is_empty() { "dashboard".into() } else { s }
}

impl Reports {
    /// Over the app's services.
    pub fn new(
        store: Arc<Store>,
        dashboards: Arc<Dashboards>,
        links: Arc<Links>,
        alerting: Arc<Alerting>,
        config: ReportsConfig,
    ) -> Arc<Self> {
        let renderer = Renderer::new(config.render.clone());
        match renderer.status() {
            RendererStatus { available: true, executable, .. } => {
                tracing::info!(
                    executable = executable.unwrap_or_default(),
                    "PNG and PDF render in Chromium"
                );
            }
            RendererStatus { reason, .. } => {
                tracing::info!("{}", reason.unwrap_or_default());
            }
        }
        Arc::new(Self {
            store,
            dashboards,
            links,
            alerting,
            renderer,
            config,
            origin: OnceLock::new(),
        })
    }

    /// The address this server's pages are reached at from this machine
    /// (`http://127.0.0.1:8080`); set once, by the server as it starts listening.
    pub fn set_origin(&self, origin: String) {
        let _ = self.origin.set(origin);
    }

    /// Whether PNG and PDF can be made.
    pub fn renderer(&self) -> RendererStatus {
        self.renderer.status()
    }

    /// Dashboard `id` as `format`, as its default view shows it now.
    #[base::boxed]
    pub async fn snapshot(&self, id: &str, format: Format) -> Result<Snapshot, ReportError> {
        let status = self.renderer.status();
        if !status.available {
            return Err(ReportError::Unavailable(status.reason.unwrap_or_default()));
        }
        let rec = match self.dashboards.get(id).await {
            Ok(r) if !r.deleted => r,
            Ok(_) | Err(StoreError::NotFound(_)) => {
                return Err(ReportError::NotFound(format!("no dashboard `{id}`")));
            }
            Err(e) => return Err(e.into()),
        };
        let origin =
            self.origin.get().cloned().ok_or_else(|| {
                ReportError::Unavailable("the server is not listening yet".into())
            })?;
        let req = LinkRequest {
            expires_in: Some(LINK_LIFETIME),
            label: Some(format!(
                "{} export (removed when done)",
                format.extension().to_uppercase()
            )),
            ..LinkRequest::default()
        };
        let link = self
            .links
            .create(id, &Principal::Owner, req)
            .await
            .map_err(|e| ReportError::Render(format!("a link for the browser: {e}")))?;
        let url = format!("{origin}/s/{}", link.token);
        let rendered = self.renderer.render(&url, READY, format).await;
        if let Err(e) = self.links.revoke(id, &link.link.id).await {
            tracing::warn!(%id, error = %e, "cannot revoke a render's share link (it expires in 5 minutes)");
        }
        let bytes = rendered?;
        let day = Utc::now().format("%Y-%m-%d");
        Ok(Snapshot {
            filename: format!("{}-{day}.{}", file_stem(&rec.state.title), format.extension()),
            bytes,
            format,
            title: rec.state.title,
        })
    }

    /// Every report, newest first.
    #[base::boxed]
    pub async fn list(&self) -> Result<Vec<ReportView>, StoreError> {
        let mut all: Vec<Report> = self
            .store
            .records(Record::Report)
            .await?
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect();
        all.sort_by_key(|r| std::cmp::Reverse(r.created_at));
        Ok(all.into_iter().map(|r| self.view(r)).collect())
    }

    fn view(&self, report: Report) -> ReportView {
        // Stored reports were checked when written; the gap may have been lowered since.
        let schedule = Schedule::parse(&report.cron, &report.timezone, Duration::ZERO).ok();
        ReportView {
            schedule: schedule.as_ref().map(Schedule::describe).unwrap_or_default(),
            next_run_at: schedule
                .filter(|_| !report.paused)
                .and_then(|s| s.next(Utc::now()))
                .map(|t| t.timestamp_millis()),
            report,
        }
    }

    /// One report.
    #[base::boxed]
    pub async fn get(&self, id: &str) -> Result<ReportView, ReportError> {
        Ok(self.view(self.stored(id).await?))
    }

    async fn stored(&self, id: &str) -> Result<Report, ReportError> {
        self.store
            .record(Record::Report, id)
            .await?
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| ReportError::NotFound(format!("no report `{id}`")))
    }

    /// Checks `input` and makes the report it describes, by `by`.
    async fn build(
        &self,
        input: ReportInput,
        id: String,
        by: Actor,
        created_at: i64,
    ) -> Result<Report, ReportError> {
        let bad = ReportError::Invalid;
        let timezone = input.timezone.unwrap_or_else(|| "UTC".into());
        Schedule::parse(&input.cron, &timezone, self.config.min_interval).map_err(bad)?;
        let rec = match self.dashboards.get(&input.dashboard_id).await {
            Ok(r) if !r.deleted => r,
            Ok(_) | Err(StoreError::NotFound(_)) => {
                return Err(bad(format!("dashboardId: no dashboard `{}`", input.dashboard_id)));
            }
            Err(e) => return Err(e.into()),
        };
        if input.notify.is_empty() {
            return Err(bad("notify: name at least one channel".into()));
        }
        let known: Vec<String> =
            self.alerting.channels().list().await?.into_iter().map(|c| c.name).collect();
        if let Some((i, n)) = input.notify.iter().enumerate().find(|(_, n)| !known.contains(n)) {
            return Err(bad(format!(
                "notify[{i}]: no channel named `{n}` (there are: {})",
                if known.is_empty() { "none".into() } else { known.join(", ") }
            )));
        }
        let name = input
            .name
            .map(|n| n.trim().chars().take(120).collect::<String>())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("{} report", rec.state.title));
        Ok(Report {
            id,
            dashboard_id: input.dashboard_id,
            name,
            cron: input.cron.trim().to_owned(),
            timezone,
            format: input.format.unwrap_or(Format::Pdf),
            notify: input.notify,
            paused: input.paused,
            created_by: by,
            created_at,
        })
    }

    /// Makes a report for `by`.
    #[base::boxed]
    pub async fn create(
        &self,
        input: ReportInput,
        by: &Principal,
    ) -> Result<ReportView, ReportError> {
        if self.store.records(Record::Report).await?.len() >= MAX_REPORTS {
            return Err(ReportError::Invalid(format!("at most {MAX_REPORTS} scheduled reports")));
        }
        let id = format!("rp_{}", uuid::Uuid::now_v7().simple());
        let report = self.build(input, id, Actor::of(by), now_ms()).await?;
        self.put(&report).await?;
        Ok(self.view(report))
    }

    /// Replaces report `id`'s settings (its maker and age stay).
    #[base::boxed]
    pub async fn update(&self, id: &str, input: ReportInput) -> Result<ReportView, ReportError> {
        let before = self.stored(id).await?;
        let report = self.build(input, before.id, before.created_by, before.created_at).await?;
        self.put(&report).await?;
        Ok(self.view(report))
    }

    /// Removes report `id` and its runs.
    #[base::boxed]
    pub async fn delete(&self, id: &str) -> Result<ReportView, ReportError> {
        let report = self.stored(id).await?;
        self.store.delete_record(Record::Report, id).await?;
        for (run, _) in self.run_records(id).await? {
            self.store.delete_record(Record::ReportRun, &run).await?;
        }
        Ok(self.view(report))
    }

    async fn put(&self, report: &Report) -> Result<(), StoreError> {
        let value = serde_json::to_value(report).unwrap_or(Value::Null);
        self.store.put_record(Record::Report, &report.id, &value).await
    }

    async fn run_records(&self, report: &str) -> Result<Vec<(String, ReportRun)>, StoreError> {
        let prefix = format!("{report}/");
        let mut runs: Vec<(String, ReportRun)> = self
            .store
            .records_with_ids(Record::ReportRun)
            .await?
            .into_iter()
            .filter(|(id, _)| id.starts_with(&prefix))
            .filter_map(|(id, v)| serde_json::from_value(v).ok().map(|r| (id, r)))
            .collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.1.scheduled_for));
        Ok(runs)
    }

    /// Report `id`'s latest runs, newest first.
    #[base::boxed]
    pub async fn runs(&self, id: &str) -> Result<Vec<ReportRun>, ReportError> {
        self.stored(id).await?;
        Ok(self.run_records(id).await?.into_iter().map(|(_, r)| r).collect())
    }

    /// Runs report `id` now, whatever its schedule.
    #[base::boxed]
    pub async fn run_now(&self, id: &str) -> Result<ReportRun, ReportError> {
        let report = self.stored(id).await?;
        Ok(self.run(&report, now_ms()).await)
    }

    /// Renders `report` and sends it; the run is recorded before anything is sent.
    async fn run(&self, report: &Report, scheduled_for: i64) -> ReportRun {
        let mut run = ReportRun {
            id: format!("{}/{scheduled_for}", report.id),
            report_id: report.id.clone(),
            scheduled_for,
            finished_at: None,
            status: "running".into(),
            bytes: 0,
            error: None,
            deliveries: Vec::new(),
        };
        self.keep(&run).await;
        match self.snapshot(&report.dashboard_id, report.format).await {
            Err(e) => {
                tracing::warn!(report = %report.id, error = %e, "a scheduled report was not made");
                run.status = "failed".into();
                run.error = Some(e.to_string());
            }
            Ok(snap) => {
                run.bytes = snap.bytes.len() as u64;
                let file = ReportFile {
                    id: run.id.clone(),
                    report_id: report.id.clone(),
                    report_name: report.name.clone(),
                    dashboard_id: report.dashboard_id.clone(),
                    dashboard_title: snap.title,
                    filename: snap.filename,
                    content_type: snap.format.content_type().into(),
                    at: now_ms(),
                    link: format!("/#d={}", report.dashboard_id),
                    bytes: snap.bytes,
                };
                let channels = self.alerting.channels();
                let base = self.alerting.public_url();
                for name in &report.notify {
                    let d = match channels.get(name).await {
                        Ok(c) => channels.deliver(&c, Outgoing::Report(&file), base).await,
                        Err(e) => Delivery::ended(name, 0, None, Some(e.to_string())),
                    };
                    if d.status != "sent" {
                        tracing::warn!(report = %report.id, channel = %d.channel,
                            error = d.error.as_deref().unwrap_or_default(), "a report was not delivered");
                    }
                    run.deliveries.push(d);
                }
                let sent = run.deliveries.iter().filter(|d| d.status == "sent").count();
                run.status = match sent {
                    0 => "failed",
                    n if n == run.deliveries.len() => "sent",
                    _ => "partial",
                }
                .into();
                if sent == 0 {
                    let why: Vec<String> = run
                        .deliveries
                        .iter()
                        .map(|d| {
                            format!("{}: {}", d.channel, d.error.as_deref().unwrap_or("not sent"))
                        })
                        .collect();
                    run.error = Some(format!("not delivered ({})", why.join("; ")));
                }
            }
        }
        run.finished_at = Some(now_ms());
        self.keep(&run).await;
        run
    }

    /// Writes `run`, and removes the report's runs beyond [`KEEP_RUNS`].
    async fn keep(&self, run: &ReportRun) {
        let value = serde_json::to_value(run).unwrap_or(Value::Null);
        if let Err(e) = self.store.put_record(Record::ReportRun, &run.id, &value).await {
            tracing::warn!(run = %run.id, error = %e, "cannot record a report run");
        }
        if let Ok(runs) = self.run_records(&run.report_id).await {
            for (id, _) in runs.into_iter().skip(KEEP_RUNS) {
                let _ = self.store.delete_record(Record::ReportRun, &id).await;
            }
        }
    }

    /// Runs due reports until `shutdown` fires: every tick, each report whose latest
    /// scheduled time has passed (and is not older than [`schedule::CATCH_UP`]) and has no run
    /// yet is run by the node holding its lease.
    pub fn start(self: Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(self.config.tick);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if let Err(e) = self.run_due().await {
                    tracing::warn!(error = %e, "looking for due reports failed");
                }
            }
        });
    }

    async fn run_due(&self) -> Result<(), StoreError> {
        let now = Utc::now();
        let mut due = Vec::new();
        for v in self.store.records(Record::Report).await? {
            let Ok(report) = serde_json::from_value::<Report>(v) else { continue };
            if report.paused {
                continue;
            }
            let Ok(s) = Schedule::parse(&report.cron, &report.timezone, Duration::ZERO) else {
                continue;
            };
            let made = DateTime::from_timestamp_millis(report.created_at).unwrap_or(now);
            let Some(at) = s.due(made, now) else { continue };
            let run_id = format!("{}/{}", report.id, at.timestamp_millis());
            if self.store.record(Record::ReportRun, &run_id).await?.is_none() {
                due.push((report, at.timestamp_millis()));
            }
        }
        if due.is_empty() {
            return Ok(());
        }
        let leases: Vec<String> = due.iter().map(|(r, _)| format!("report:{}", r.id)).collect();
        let held = self.store.claim_refresh(&leases, self.config.tick * 4).await?;
        for (report, at) in due {
            if held.contains(&format!("report:{}", report.id)) {
                // Another node may have run it since the check above.
                let run_id = format!("{}/{at}", report.id);
                if self.store.record(Record::ReportRun, &run_id).await?.is_none() {
                    self.run(&report, at).await;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_come_from_titles() {
        assert_eq!(file_stem("BTC watch: 24h / perps"), "btc-watch-24h-perps");
        assert_eq!(file_stem("  ---  "), "dashboard");
        assert_eq!(file_stem(&"x".repeat(100)).len(), 60);
    }
}
