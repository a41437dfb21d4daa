//! Alert evaluation: judges each dashboard's alert rules (`DashboardState.alerts`) on the
//! scheduled runs of their panels, keeps every rule's state in the store, and records one
//! notification per transition (firing, resolved).
//!
//! - **Who judges.** The live layer's scheduler hands each scheduled default-value run to
//!   [`Alerting`] (a [`live::RunObserver`]) on the node holding the dashboard's refresh lease,
//!   so on several nodes exactly one judges a rule; dashboards with rules refresh their judged
//!   panels even when nobody watches ([`live::Live::set_alerted`]).
//! - **Exactly once.** A notification's id is its dedupe key (`{dashboard}/{rule}/{value}/
//!   {n}`, the rule's `n`th transition), stored before the rule's new state: a node taking over
//!   after a crash computes the same key and finds it there.
//! - **Outages are not market moves.** A failed panel run (or rule code) leaves the state as it
//!   is; after `no_data_after` the rule says "no data".
//!
//! - **Channels.** Each notification goes to the channels its rule names ([`channels`]: signed
//!   webhooks through the SDK's outbound policy, e-mail through the mail relay ([`email`])),
//!   and what each delivery did is kept on it.
//! - **No floods.** Channels hear a state only when it is news to them: a flapping rule sends
//!   one `flapping` notice and then only records until it settles, a silence ([`silences`])
//!   records without sending and channels hear the state in force when it ends, and a rule's
//!   `repeat` reminds them while it fires (`dashboard::alerts::RuleState::tell`).
//!
//! Rule syntax, validation, reading values and the state machine are `dashboard::alerts`'
//! (pure). Knows nothing of HTTP serving.

pub mod channels;
pub mod email;
mod evaluate;
pub mod silences;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use dashboard::DashboardState;
use dashboard::alerts::{Noise, Reason, RuleState, Severity, Status, Transition};
use dashboards::Dashboards;
use live::{PanelRun, RunObserver};
use store::{Record, Store, StoreError};

/// How often, at least, a judged panel runs when its own refresh interval is longer or unset.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(60);
/// After how long of failed runs a rule says "no data".
pub const DEFAULT_NO_DATA_AFTER: Duration = Duration::from_secs(300);
/// Observed runs waiting to be judged before new ones are dropped (and logged).
const QUEUE: usize = 4096;
/// How long this node trusts its own copy of a rule's state before re-reading the store
/// (another node may have judged it meanwhile, after a lease moved).
const TRUST_CACHE: Duration = Duration::from_secs(30);
/// Notifications a slow listener of [`Alerting::feed`] may fall behind by.
const FEED_BACKLOG: usize = 256;
/// The lease of the node that sweeps notifications.
const SWEEP_LEASE: &str = "alerting:sweep";
/// Other nodes' notifications remembered as pushed already.
const RELAYED: usize = 1024;
/// A state whose status did not change is written at most this often.
const PERSIST_EVERY: Duration = Duration::from_secs(60);

/// Settings.
#[derive(Debug, Clone)]
pub struct AlertingConfig {
    /// See [`DEFAULT_EVERY`].
    pub every: Duration,
    /// See [`DEFAULT_NO_DATA_AFTER`].
    pub no_data_after: Duration,
    /// The web app's address as people reach it (`BOARDSMITH_PUBLIC_URL`, e.g.
    /// `https://boards.example.com`): links sent to channels start with it; without it they
    /// are paths.
    pub public_url: String,
    /// The mail relay of `[smtp]` in `boardsmith.toml` (Settings may name another).
    pub smtp: Option<base::mail::MailRelay>,
    /// When a rule flaps and settles (its `repeat` is the rule's own;
    /// `BOARDSMITH_ALERT_FLAP_LIMIT`: transitions within an hour before a rule flaps, default
    /// 6, 0 never).
    pub noise: Noise,
    /// A notification still undelivered this long after it was recorded (its node died
    /// before sending) is sent again by the sweeping node (`BOARDSMITH_ALERT_REDELIVER_AFTER`,
    /// default 3 minutes, longer than every retry of a live sender).
    pub redeliver_after: Duration,
    /// Notifications older than this are removed (`BOARDSMITH_ALERT_RETENTION`, default 30
    /// days).
    pub retention: Duration,
    /// Whether [`AlertingConfig::with_config_file`] reads the config file (set by
    /// [`AlertingConfig::from_env`]; tests and embedders give `smtp` themselves).
    pub read_file: bool,
}

impl Default for AlertingConfig {
    fn default() -> Self {
        Self {
            every: DEFAULT_EVERY,
            no_data_after: DEFAULT_NO_DATA_AFTER,
            public_url: String::new(),
            smtp: None,
            noise: Noise::default(),
            redeliver_after: Duration::from_secs(180),
            retention: Duration::from_secs(30 * 24 * 3600),
            read_file: false,
        }
    }
}

/// The variable holding the `[smtp]` relay's password unless `password_env` names another.
pub const SMTP_PASSWORD_VAR: &str = "BOARDSMITH_SMTP_PASSWORD";

/// `[smtp]` of `boardsmith.toml`: the password is never in the file, only the name of the
/// variable holding it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SmtpSection {
    host: String,
    port: Option<u16>,
    #[serde(default)]
    security: base::mail::MailSecurity,
    username: Option<String>,
    password_env: Option<String>,
    from: String,
    ca_file: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FileWithSmtp {
    smtp: Option<SmtpSection>,
}

impl AlertingConfig {
    /// Defaults with `BOARDSMITH_ALERT_EVERY` and `BOARDSMITH_ALERT_NO_DATA_AFTER` (spans such
    /// as `"30s"`, `"5m"`) applied.
    pub fn from_env() -> Self {
        let span =
            |k: &str| std::env::var(k).ok().and_then(|v| humantime::parse_duration(v.trim()).ok());
        let mut c = Self { read_file: true, ..Self::default() };
        if let Some(d) = span("BOARDSMITH_ALERT_EVERY") {
            c.every = d.max(Duration::from_secs(1));
        }
        if let Some(d) = span("BOARDSMITH_ALERT_NO_DATA_AFTER") {
            c.no_data_after = d;
        }
        if let Some(n) =
            std::env::var("BOARDSMITH_ALERT_FLAP_LIMIT").ok().and_then(|v| v.trim().parse().ok())
        {
            c.noise.flap_limit = n;
        }
        if let Some(d) = span("BOARDSMITH_ALERT_REDELIVER_AFTER") {
            c.redeliver_after = d.max(Duration::from_secs(1));
        }
        if let Some(d) = span("BOARDSMITH_ALERT_RETENTION") {
            c.retention = d.max(Duration::from_secs(3600));
        }
        if let Ok(url) = std::env::var("BOARDSMITH_PUBLIC_URL") {
            c.public_url = url.trim().trim_end_matches('/').to_owned();
        }
        c
    }

    /// With `[smtp]` of the config file (`BOARDSMITH_CONFIG`, else `./boardsmith.toml`), when
    /// it reads files and there is one.
    pub fn with_config_file(self) -> Result<Self, String> {
        if !self.read_file {
            return Ok(self);
        }
        let Some(path) = base::config_file::path() else { return Ok(self) };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        self.with_smtp_section(&text, &path, &env)
    }

    /// With `[smtp]` of the config file `text` (read from `path`), the password taken from
    /// the variable it names through `env`.
    pub fn with_smtp_section(
        mut self,
        text: &str,
        path: &std::path::Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let file: FileWithSmtp = toml::from_str(text)
            .map_err(|e| format!("{} [smtp]: {}", path.display(), e.message()))?;
        let Some(s) = file.smtp else { return Ok(self) };
        let var = s.password_env.as_deref().unwrap_or(SMTP_PASSWORD_VAR);
        let password = env(var);
        if s.username.is_some() && password.is_none() {
            return Err(format!(
                "{} [smtp]: `username` is set but `{var}` (the password) is not",
                path.display()
            ));
        }
        self.smtp = Some(base::mail::MailRelay {
            host: s.host,
            port: s.port,
            security: s.security,
            username: s.username,
            password,
            from: s.from,
            ca_file: s.ca_file,
        });
        Ok(self)
    }
}

/// One rule's (or fan-out value's) state as listed by `GET /api/alerts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlertView {
    /// The dashboard.
    pub dashboard_id: String,
    /// Its title.
    pub dashboard_title: String,
    /// The rule's id.
    pub rule_id: String,
    /// The rule's name.
    pub name: String,
    /// The judged panel.
    pub panel_id: String,
    /// `info`, `warning` or `critical`.
    #[schema(value_type = String)]
    pub severity: Severity,
    /// The fan-out value (`forEach` rules), else absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `ok`, `pending` or `firing`.
    #[schema(value_type = String)]
    pub status: Status,
    /// Since when (unix ms).
    pub since: i64,
    /// The last value judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The last judgement's sentence.
    pub message: String,
    /// When last judged (unix ms; 0 never).
    pub evaluated_at: i64,
    /// Runs have failed for at least the no-data time: the status is the last one known.
    pub no_data: bool,
    /// Why runs fail, while they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A notification of one transition (in-app history; what channels will be sent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// Its dedupe key: `{dashboardId}/{ruleId}/{value}/{n}`.
    pub id: String,
    /// `firing` or `resolved`.
    #[schema(value_type = String)]
    pub status: Transition,
    /// The dashboard.
    pub dashboard_id: String,
    /// Its title.
    pub dashboard_title: String,
    /// The judged panel.
    pub panel_id: String,
    /// Its title.
    pub panel_title: String,
    /// The rule.
    pub rule_id: String,
    /// Its name.
    pub rule_name: String,
    /// `info`, `warning` or `critical`.
    #[schema(value_type = String)]
    pub severity: Severity,
    /// The fan-out value, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The value judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The rule's threshold, for a declarative rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// What was seen.
    pub message: String,
    /// When (unix ms).
    pub at: i64,
    /// The dashboard in the web app (a path on this server).
    pub link: String,
    /// The channels the rule names.
    #[serde(default)]
    pub notify: Vec<String>,
    /// What sending to each of them did.
    #[serde(default)]
    pub deliveries: Vec<channels::Delivery>,
    /// Why it was made: `change` (fired or resolved), `reminder` (still firing after the
    /// rule's `repeat`), `flapping` (the last one sent until the rule settles) or `settled`
    /// (channels hear a state they missed: the rule settled, a silence ended).
    #[serde(default)]
    #[schema(value_type = String)]
    pub reason: Reason,
    /// Why it was recorded but not sent: `silenced` (see `silence`), `flapping`, or
    /// `unchanged` (channels already know this state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub muted: Option<String>,
    /// The silence that held it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silence: Option<String>,
}

/// One line per notification of a group, and the group's title ("3 alerts on BTC watch: 2
/// firing, 1 resolved").
pub fn group_lines(all: &[Notification]) -> (String, Vec<String>) {
    let firing = all.iter().filter(|n| n.status == Transition::Firing).count();
    let dashboard = all.first().map_or("", |n| n.dashboard_title.as_str());
    let title = format!(
        "{} alerts on {dashboard}: {firing} firing, {} resolved",
        all.len(),
        all.len() - firing
    );
    let lines = all.iter().map(|n| format!("{} — {}", n.headline(), n.message)).collect();
    (title, lines)
}

impl Notification {
    /// Its headline: `Firing: BTC above 70k [BTCUSDT]`, with `(reminder)` or `(flapping)`.
    pub fn headline(&self) -> String {
        let status = match self.status {
            Transition::Firing => "Firing",
            Transition::Resolved => "Resolved",
        };
        let of = self.key.as_ref().map(|k| format!(" [{k}]")).unwrap_or_default();
        let why = match self.reason {
            Reason::Reminder => " (reminder)",
            Reason::Flapping => " (flapping)",
            Reason::Change | Reason::Settled => "",
        };
        format!("{status}{why}: {}{of}", self.rule_name)
    }
}

/// A rendered report to send: the file and what it shows.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportFile {
    /// The run's id (`{reportId}/{scheduled unix ms}`), the same on every retry.
    pub id: String,
    /// The report.
    pub report_id: String,
    /// Its name.
    pub report_name: String,
    /// The dashboard shown.
    pub dashboard_id: String,
    /// Its title.
    pub dashboard_title: String,
    /// The file's name (`btc-watch-2026-11-30.pdf`).
    pub filename: String,
    /// Its media type.
    pub content_type: String,
    /// When it was made (unix ms).
    pub at: i64,
    /// The dashboard in the web app (a path on this server).
    pub link: String,
    /// The file.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// A scheduled run to judge.
struct Observed {
    id: String,
    state: Arc<DashboardState>,
    panel: String,
    run: PanelRun,
}

/// This node's copy of a state, and when it was read or written.
struct Cached {
    state: RuleState,
    read: Instant,
    persisted: Instant,
}

/// The alerting service (cheap to share behind an `Arc`).
pub struct Alerting {
    dashboards: Arc<Dashboards>,
    store: Arc<Store>,
    channels: Arc<channels::Channels>,
    silences: silences::Silences,
    config: AlertingConfig,
    queue: mpsc::Sender<Observed>,
    receiver: Mutex<Option<mpsc::Receiver<Observed>>>,
    cache: Mutex<HashMap<String, Cached>>,
    /// Dashboards with rules: title and rules, as of their latest version.
    ruled: Mutex<HashMap<String, Arc<DashboardState>>>,
    /// Each notification this node records, for the in-app push.
    feed: tokio::sync::broadcast::Sender<Arc<Notification>>,
}

impl std::fmt::Debug for Alerting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerting").finish_non_exhaustive()
    }
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The store id of a rule's state.
fn state_key(dashboard: &str, rule: &str, key: &str) -> String {
    format!("{dashboard}/{rule}/{key}")
}

/// The stored form of a state.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredState {
    dashboard_id: String,
    rule_id: String,
    key: String,
    state: RuleState,
}

impl Alerting {
    /// Over the app's dashboards (their live layer runs the panels) and store, sending
    /// webhooks through `sdk`'s client.
    pub fn new(
        dashboards: Arc<Dashboards>,
        store: Arc<Store>,
        sdk: Arc<sdk::Sdk>,
        config: AlertingConfig,
    ) -> Arc<Self> {
        let (queue, receiver) = mpsc::channel(QUEUE);
        Arc::new(Self {
            dashboards,
            channels: Arc::new(channels::Channels::new(store.clone(), sdk, config.smtp.clone())),
            silences: silences::Silences::new(store.clone()),
            store,
            config,
            queue,
            receiver: Mutex::new(Some(receiver)),
            cache: Mutex::default(),
            ruled: Mutex::default(),
            feed: tokio::sync::broadcast::channel(FEED_BACKLOG).0,
        })
    }

    /// Starts judging: registers every dashboard with rules, follows changes to dashboards,
    /// and judges observed runs one at a time (in order, so a rule's judgements never race)
    /// until `shutdown` fires.
    #[base::boxed]
    pub async fn start(
        self: Arc<Self>,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Result<(), StoreError> {
        self.dashboards.live().observe_with(self.clone());
        let mut changes = self.dashboards.changes();
        self.rescan().await?;
        let this = self.clone();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    () = stop.cancelled() => return,
                    c = changes.recv() => c,
                };
                match change {
                    Ok(c) => this.reload(&c.id).await,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if let Err(e) = this.rescan().await {
                            tracing::warn!(error = %e, "re-reading dashboards' alert rules failed");
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        if let Some(notices) = self.store.notices() {
            tokio::spawn(self.clone().relay(notices, shutdown.clone()));
        }
        tokio::spawn(self.clone().sweeping(shutdown.clone()));
        let Some(mut receiver) = locked(&self.receiver).take() else { return Ok(()) };
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                let job = tokio::select! {
                    () = shutdown.cancelled() => return,
                    j = receiver.recv() => j,
                };
                let Some(job) = job else { return };
                this.judge(job).await;
            }
        });
        Ok(())
    }

    /// On a shared store: the notifications other nodes record, pushed to this node's
    /// sockets as this node's own are (each once: a notification is written again with its
    /// deliveries).
    async fn relay(
        self: Arc<Self>,
        mut notices: tokio::sync::broadcast::Receiver<store::Notice>,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let mut seen: std::collections::VecDeque<String> = std::collections::VecDeque::new();
        loop {
            let notice = tokio::select! {
                () = shutdown.cancelled() => return,
                n = notices.recv() => n,
            };
            let id = match notice {
                Ok(store::Notice::Written { kind: Record::Notification, id }) => id,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                _ => continue,
            };
            if seen.contains(&id) {
                continue;
            }
            if seen.len() >= RELAYED {
                seen.pop_front();
            }
            seen.push_back(id.clone());
            match self.store.record(Record::Notification, &id).await {
                Ok(Some(v)) => {
                    if let Ok(n) = serde_json::from_value::<Notification>(v) {
                        let _ = self.feed.send(Arc::new(n));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(%id, error = %e, "cannot read another node's notification")
                }
            }
        }
    }

    /// Sweeps until `shutdown` fires, a third of `redeliver_after` apart (at most a minute), on
    /// one node at a time (a lease, as for dashboards' refreshes).
    async fn sweeping(self: Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        let every = (self.config.redeliver_after / 3)
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let lease = vec![SWEEP_LEASE.to_owned()];
            match self.store.claim_refresh(&lease, every * 3).await {
                Ok(held) if !held.is_empty() => {
                    if let Err(e) = self.sweep().await {
                        tracing::warn!(error = %e, "sweeping alert notifications failed");
                    }
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "cannot claim the alert sweep"),
            }
        }
    }

    /// Sends again what a dead node recorded but never sent (receivers drop a repeat by its
    /// `X-Boardsmith-Delivery`), and removes notifications past `retention`. Rules' states are
    /// kept: their counters name notifications, and a state made afresh would reuse names.
    async fn sweep(&self) -> Result<(), StoreError> {
        let now = chrono::Utc::now().timestamp_millis();
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let (after, keep) = (ms(self.config.redeliver_after), ms(self.config.retention));
        for (id, v) in self.store.records_with_ids(Record::Notification).await? {
            let Ok(n) = serde_json::from_value::<Notification>(v) else { continue };
            let age = now.saturating_sub(n.at);
            if age > keep {
                self.store.delete_record(Record::Notification, &id).await?;
            } else if age > after
                && age < after.saturating_mul(20)
                && n.deliveries.is_empty()
                && n.muted.is_none()
                && !n.notify.is_empty()
            {
                tracing::info!(target: "alerting", %id, "sending a notification its node never sent");
                self.send(vec![n]);
            }
        }
        Ok(())
    }

    /// Registers every stored dashboard's rules.
    async fn rescan(&self) -> Result<(), StoreError> {
        for item in self.dashboards.list(false).await? {
            self.reload(&item.id).await;
        }
        Ok(())
    }

    /// Registers (or forgets) `id`'s rules as of its stored head.
    async fn reload(&self, id: &str) {
        let rec = match self.dashboards.get(id).await {
            Ok(rec) if !rec.deleted => rec,
            Ok(_) | Err(StoreError::NotFound(_)) => {
                locked(&self.ruled).remove(id);
                return;
            }
            Err(e) => {
                tracing::warn!(%id, error = %e, "cannot read a dashboard's alert rules");
                return;
            }
        };
        let state = Arc::new(rec.state);
        let mut panels: HashMap<String, Duration> = HashMap::new();
        for rule in &state.alerts {
            panels.insert(rule.panel_id.clone(), self.config.every);
        }
        self.dashboards.live().set_alerted(id, rec.version, state.clone(), panels);
        let mut ruled = locked(&self.ruled);
        if state.alerts.is_empty() {
            ruled.remove(id);
        } else {
            ruled.insert(id.to_owned(), state);
        }
    }

    /// Every notification from now on, recorded here or (on a shared store) by another node:
    /// the WebSocket pushes them to the connections that may see their dashboard.
    pub fn feed(&self) -> tokio::sync::broadcast::Receiver<Arc<Notification>> {
        self.feed.subscribe()
    }

    /// The silences.
    pub fn silences(&self) -> &silences::Silences {
        &self.silences
    }

    /// Makes a silence; one naming a rule must name one of the dashboard's.
    #[base::boxed]
    pub async fn silence(
        &self,
        new: silences::NewSilence,
        by: &base::principal::Principal,
    ) -> Result<silences::Silence, silences::SilenceError> {
        if let Some(rule) = new.rule_id.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            let state = match self.dashboards.get(&new.dashboard_id).await {
                Ok(rec) => rec.state,
                Err(StoreError::NotFound(_)) => {
                    return Err(silences::SilenceError::Invalid(format!(
                        "dashboardId: no dashboard `{}`",
                        new.dashboard_id
                    )));
                }
                Err(e) => return Err(e.into()),
            };
            if !state.alerts.iter().any(|a| a.id == rule) {
                let ids: Vec<&str> = state.alerts.iter().map(|a| a.id.as_str()).collect();
                return Err(silences::SilenceError::Invalid(format!(
                    "ruleId: the dashboard has no alert rule `{rule}` (it has: {})",
                    if ids.is_empty() { "none".to_owned() } else { ids.join(", ") }
                )));
            }
        }
        self.silences.create(new, by).await
    }

    /// The notification channels.
    pub fn channels(&self) -> &channels::Channels {
        &self.channels
    }

    /// The web app's address for links sent out (empty: links are paths).
    pub fn public_url(&self) -> &str {
        &self.config.public_url
    }

    /// The rules' `notify` entries that name no channel, each an issue at its path
    /// (`alerts[0].notify[1]`) that lists the channels there are.
    #[base::boxed]
    pub async fn unknown_channels(
        &self,
        state: &DashboardState,
    ) -> Result<Vec<dashboard::Issue>, StoreError> {
        if state.alerts.iter().all(|r| r.notify.is_empty()) {
            return Ok(Vec::new());
        }
        let names: Vec<String> = self.channels.list().await?.into_iter().map(|c| c.name).collect();
        Ok(dashboard::validate::unknown_channels(state, &names))
    }

    /// Every rule's state (one per fan-out value), dashboards in title order.
    #[base::boxed]
    pub async fn list(&self) -> Result<Vec<AlertView>, StoreError> {
        let ruled: Vec<(String, Arc<DashboardState>)> =
            locked(&self.ruled).iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let stored: HashMap<String, RuleState> = self
            .store
            .records_with_ids(Record::AlertState)
            .await?
            .into_iter()
            .filter_map(|(id, v)| Some((id, serde_json::from_value::<StoredState>(v).ok()?.state)))
            .collect();
        let now = chrono::Utc::now().timestamp_millis();
        let mut out = Vec::new();
        for (id, state) in ruled {
            for rule in &state.alerts {
                let keys: Vec<Option<String>> =
                    match dashboard::alerts::fan_out(rule, &state.variables) {
                        None => vec![None],
                        Some(vals) => {
                            vals.iter().map(|v| Some(dashboard::alerts::fan_key(v))).collect()
                        }
                    };
                for key in keys {
                    let sk = state_key(&id, &rule.id, key.as_deref().unwrap_or_default());
                    let s = locked(&self.cache)
                        .get(&sk)
                        .map(|c| c.state.clone())
                        .or_else(|| stored.get(&sk).cloned())
                        .unwrap_or_else(|| RuleState::new(0));
                    out.push(AlertView {
                        dashboard_id: id.clone(),
                        dashboard_title: state.title.clone(),
                        rule_id: rule.id.clone(),
                        name: rule.name.clone(),
                        panel_id: rule.panel_id.clone(),
                        severity: rule.severity(),
                        key,
                        status: s.status,
                        since: s.since,
                        value: s.value,
                        no_data: s.no_data(self.config.no_data_after, now),
                        message: s.message,
                        evaluated_at: s.evaluated_at,
                        error: s.error,
                    });
                }
            }
        }
        out.sort_by(|a, b| {
            (&a.dashboard_title, &a.dashboard_id, &a.rule_id, &a.key).cmp(&(
                &b.dashboard_title,
                &b.dashboard_id,
                &b.rule_id,
                &b.key,
            ))
        });
        Ok(out)
    }

    /// The notifications, newest first, at most `limit`.
    #[base::boxed]
    pub async fn notifications(&self, limit: usize) -> Result<Vec<Notification>, StoreError> {
        let mut all: Vec<Notification> = self
            .store
            .records(Record::Notification)
            .await?
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect();
        all.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.id.cmp(&a.id)));
        all.truncate(limit);
        Ok(all)
    }

    /// This node's (or the store's) state of a rule.
    async fn state_of(&self, key: &str) -> RuleState {
        if let Some(c) = locked(&self.cache).get(key).filter(|c| c.read.elapsed() < TRUST_CACHE) {
            return c.state.clone();
        }
        let stored = match self.store.record(Record::AlertState, key).await {
            Ok(v) => v.and_then(|v| serde_json::from_value::<StoredState>(v).ok()),
            Err(e) => {
                tracing::warn!(%key, error = %e, "cannot read an alert's state");
                None
            }
        };
        stored.map_or_else(|| RuleState::new(chrono::Utc::now().timestamp_millis()), |s| s.state)
    }

    /// Keeps a rule's new state: written when its status, transitions or failure changed, or
    /// at least every [`PERSIST_EVERY`].
    async fn keep(
        &self,
        dashboard: &str,
        rule: &str,
        fan: &str,
        before: &RuleState,
        after: RuleState,
    ) {
        let key = state_key(dashboard, rule, fan);
        let changed = before.status != after.status
            || before.transitions != after.transitions
            || before.failing_since != after.failing_since
            || before.told != after.told
            || before.flapping_since != after.flapping_since
            || before.evaluated_at == 0;
        let due =
            locked(&self.cache).get(&key).is_none_or(|c| c.persisted.elapsed() >= PERSIST_EVERY);
        if changed || due {
            let stored = StoredState {
                dashboard_id: dashboard.to_owned(),
                rule_id: rule.to_owned(),
                key: fan.to_owned(),
                state: after.clone(),
            };
            let value = serde_json::to_value(&stored).unwrap_or(Value::Null);
            if let Err(e) = self.store.put_record(Record::AlertState, &key, &value).await {
                tracing::warn!(%key, error = %e, "cannot keep an alert's state");
            }
        }
        let now = Instant::now();
        let mut cache = locked(&self.cache);
        let persisted = match cache.get(&key) {
            Some(c) if !(changed || due) => c.persisted,
            _ => now,
        };
        cache.insert(key, Cached { state: after, read: now, persisted });
    }

    /// Records a notification once (its id is the dedupe key) and pushes it in-app; answers it
    /// when it is to be sent (new, not muted, naming channels).
    async fn record(&self, n: Notification) -> Option<Notification> {
        match self.store.record(Record::Notification, &n.id).await {
            Ok(Some(_)) => return None,
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(id = %n.id, error = %e, "cannot check a notification");
                return None;
            }
        }
        tracing::info!(
            target: "alerting",
            id = %n.id, status = ?n.status, reason = ?n.reason, muted = n.muted.as_deref(),
            rule = %n.rule_name, dashboard = %n.dashboard_title,
            "alert {}", if n.status == Transition::Firing { "firing" } else { "resolved" }
        );
        let value = serde_json::to_value(&n).unwrap_or(Value::Null);
        if let Err(e) = self.store.put_record(Record::Notification, &n.id, &value).await {
            tracing::warn!(id = %n.id, error = %e, "cannot record a notification");
            return None;
        }
        // No listener is the common case, not an error.
        let _ = self.feed.send(Arc::new(n.clone()));
        (!n.notify.is_empty() && n.muted.is_none()).then_some(n)
    }

    /// Sends one judgement's notifications beside the judging (a slow channel must not hold
    /// the next rule), then keeps what each delivery did on its notification. People's
    /// channels (e-mail, Slack, Discord) get one message for several notifications (a
    /// `forEach` rule firing for many values); JSON webhooks get each as its own event.
    fn send(&self, batch: Vec<Notification>) {
        if batch.is_empty() {
            return;
        }
        let (channels, store, base) =
            (self.channels.clone(), self.store.clone(), self.config.public_url.clone());
        tokio::spawn(async move {
            let mut names: Vec<&String> = batch.iter().flat_map(|n| &n.notify).collect();
            names.sort();
            names.dedup();
            let mut done: HashMap<String, Vec<channels::Delivery>> = HashMap::new();
            let sends = names.into_iter().map(|name| {
                let (channels, base, batch) = (&channels, &base, &batch);
                async move {
                    let these: Vec<&Notification> =
                        batch.iter().filter(|n| n.notify.contains(name)).collect();
                    let channel = match channels.get(name).await {
                        Ok(c) => c,
                        Err(e) => {
                            let d = channels::Delivery::ended(name, 0, None, Some(e.to_string()));
                            return these.iter().map(|n| (n.id.clone(), d.clone())).collect();
                        }
                    };
                    if these.len() > 1 && channel.groups() {
                        let group: Vec<Notification> = these.iter().map(|n| (*n).clone()).collect();
                        let d = channels
                            .deliver(&channel, channels::Outgoing::Group(&group), base)
                            .await;
                        return these.iter().map(|n| (n.id.clone(), d.clone())).collect();
                    }
                    let mut out = Vec::new();
                    for n in these {
                        let d = channels
                            .deliver(&channel, channels::Outgoing::Notification(n), base)
                            .await;
                        out.push((n.id.clone(), d));
                    }
                    out
                }
            });
            for (id, d) in futures::future::join_all(sends).await.into_iter().flatten() {
                if d.status != "sent" {
                    tracing::warn!(target: "alerting", %id, channel = %d.channel,
                        error = d.error.as_deref().unwrap_or_default(), "a notification was not delivered");
                }
                done.entry(id).or_default().push(d);
            }
            for mut n in batch {
                n.deliveries = done.remove(&n.id).unwrap_or_default();
                let value = serde_json::to_value(&n).unwrap_or(Value::Null);
                if let Err(e) = store.put_record(Record::Notification, &n.id, &value).await {
                    tracing::warn!(id = %n.id, error = %e, "cannot keep a notification's deliveries");
                }
            }
        });
    }
}

impl RunObserver for Alerting {
    fn observed(
        &self,
        id: &str,
        _version: u64,
        state: &Arc<DashboardState>,
        panel: &str,
        run: &PanelRun,
    ) {
        if !state.alerts.iter().any(|r| r.panel_id == panel) {
            return;
        }
        let job = Observed {
            id: id.to_owned(),
            state: state.clone(),
            panel: panel.to_owned(),
            run: run.clone(),
        };
        if self.queue.try_send(job).is_err() {
            tracing::warn!(%id, %panel, "alert queue full: a run was not judged");
        }
    }
}
