//! The assembled product: SDK, sandbox pool, store, live layer and tools, started together and
//! stopped together (drain, final commit). `server` serves it over HTTP and WebSocket.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use access::{AccessConfig, ServerToken};
use agent::catalog::{Catalog, CatalogConfig};
use agent::memory::{ChatMemory, MemoryConfig};
use agent::service::{AgentService, ServiceConfig};
use agent::tools::mcp::{McpConfig, McpHub};
use agent::tools::submit::FrontendSubmits;
use agent::tools::{BackendTools, ToolsConfig};
use dashboard::validate::parse_state;
use dashboard_agent::Tools;
use dashboards::Dashboards;
use live::{Live, LiveConfig};
use llm::Models;
use llm::config::LlmConfig;
use sandbox::{Limits, Sandbox, SandboxConfig};
use sdk::{Sdk, SdkConfig};
use store::{Store, StoreOptions, StoreQuotas};

/// Example dashboards compiled into the binary.
pub static TEMPLATES: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../dashboards");

/// Everything needed to start.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Where the store lives (`BOARDSMITH_DATA`, default `./data`).
    pub data_dir: PathBuf,
    /// A PostgreSQL database several nodes share instead of the embedded store
    /// (`BOARDSMITH_DATABASE_URL`, `postgres://user@host:port/db`).
    pub database_url: Option<String>,
    /// NATS and TLS trust for a shared store (`BOARDSMITH_NATS_URL`,
    /// `BOARDSMITH_DATABASE_CA`).
    pub shared: store::SharedOptions,
    /// What the store may hold (`BOARDSMITH_MAX_STATE_BYTES`, `BOARDSMITH_VERSIONS_KEPT`,
    /// `BOARDSMITH_MAX_STORE_BYTES`).
    pub store_quotas: StoreQuotas,
    /// Data sources.
    pub sdk: SdkConfig,
    /// The worker program (this binary) and pool size.
    pub sandbox: SandboxConfig,
    /// Panel runs and refresh scheduling.
    pub live: LiveConfig,
    /// How often judged panels run and when a failing rule says "no data"
    /// (`BOARDSMITH_ALERT_EVERY`, `BOARDSMITH_ALERT_NO_DATA_AFTER`).
    pub alerting: alerting::AlertingConfig,
    /// Chromium for PNG and PDF, and how often reports may run (`BOARDSMITH_CHROMIUM`,
    /// `BOARDSMITH_REPORT_MIN_INTERVAL`).
    pub reports: reports::ReportsConfig,
    /// Load the example dashboards when the store is empty.
    pub load_templates: bool,
    /// Agent, tool and viewport directories (`AGENT_EXTERNAL_DIR`, ...).
    pub catalog: CatalogConfig,
    /// Chat memory; `None`: [`MemoryConfig::from_env`] under `data_dir` at start (`MEMORY_CHAT_*`).
    pub memory: Option<MemoryConfig>,
    /// Default wait of a frontend tool for `/api/submit`
    /// (`AGENT_TOOLS_FRONTEND_SUBMIT_TIMEOUT_MS`, default 5 minutes).
    pub submit_timeout: std::time::Duration,
    /// Providers and models; `None`: [`LlmConfig::from_env`] at start (`boardsmith.toml`,
    /// API-key variables).
    pub llm: Option<LlmConfig>,
    /// The built-in backend tools (`bash` confinement, ...).
    pub agent_tools: ToolsConfig,
    /// Default agent, disconnect grace, replay buffer.
    pub service: ServiceConfig,
    /// Fix rounds the dashboard agent gets per run after a failed validation
    /// (`DASHBOARD_MAX_FIX_ROUNDS`, default 3).
    pub max_fix_rounds: u32,
    /// Who may talk to the server; `None`: [`AccessConfig::from_env`] at start
    /// (`BOARDSMITH_TOKEN`, `[server]` in `boardsmith.toml`, ...).
    pub access: Option<AccessConfig>,
    /// The tools MCP clients get (`BOARDSMITH_MCP_READ_ONLY=1`: `search` and `get_state` only).
    pub mcp_tools: mcp::ToolSet,
    /// Bounds on uploaded images (`BOARDSMITH_UPLOAD_*`).
    pub uploads: uploads::UploadLimits,
    /// The workflow directory and run cap (`BOARDSMITH_WORKFLOWS_DIR`, ...).
    pub workflows: workflow::WorkflowsConfig,
    /// Knowledge bases; `None`: [`knowledge::KnowledgeConfig::from_env`] under
    /// `data_dir` at start (`[knowledge]`, `BOARDSMITH_KB_*`).
    pub knowledge: Option<knowledge::KnowledgeConfig>,
}

impl AppConfig {
    /// `BOARDSMITH_DATA`, default `./data`.
    pub fn data_dir_from_env() -> PathBuf {
        std::env::var_os("BOARDSMITH_DATA").map_or_else(|| PathBuf::from("data"), PathBuf::from)
    }

    /// Defaults from the environment, with `program` as the sandbox worker.
    pub fn from_env(program: PathBuf) -> Self {
        let mut sandbox = SandboxConfig::new(program);
        sandbox.limits = Limits::from_env();
        if let Some(n) = std::env::var("BOARDSMITH_WORKERS").ok().and_then(|v| v.parse().ok()) {
            sandbox.workers = n;
        }
        let live = LiveConfig::from_env(sandbox.workers);
        Self {
            data_dir: Self::data_dir_from_env(),
            database_url: std::env::var("BOARDSMITH_DATABASE_URL")
                .ok()
                .filter(|v| !v.trim().is_empty()),
            shared: store::SharedOptions::from_env(),
            store_quotas: StoreQuotas::from_env(),
            sdk: SdkConfig::from_env(),
            sandbox,
            live,
            alerting: alerting::AlertingConfig::from_env(),
            reports: reports::ReportsConfig::from_env(),
            load_templates: true,
            catalog: CatalogConfig::from_env(),
            memory: None,
            submit_timeout: FrontendSubmits::from_env().default_timeout(),
            llm: None,
            agent_tools: ToolsConfig::from_env(),
            service: ServiceConfig::from_env(),
            max_fix_rounds: std::env::var("DASHBOARD_MAX_FIX_ROUNDS")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(dashboard_agent::backend::DEFAULT_MAX_FIX_ROUNDS),
            access: None,
            mcp_tools: if std::env::var("BOARDSMITH_MCP_READ_ONLY")
                .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
            {
                mcp::ToolSet::ReadOnly
            } else {
                mcp::ToolSet::All
            },
            uploads: uploads::UploadLimits::from_env(),
            workflows: workflow::WorkflowsConfig::from_env(),
            knowledge: None,
        }
    }
}

/// How long the start-up check waits for the live providers.
const PROBE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Calls each live data provider once at start (what `boardsmith sdk check` does), so their
/// health is known before the first panel asks, and says in one line when none answers, with
/// how to run without the network. Each failing provider also gets its own line from the
/// SDK's health, once.
async fn probe_providers(sdk: Arc<Sdk>) {
    let Ok(checks) = tokio::time::timeout(PROBE_WITHIN, sdk.check()).await else {
        tracing::info!(target: "sdk::health", "the start-up check of the data providers did not finish within {} s", PROBE_WITHIN.as_secs());
        return;
    };
    if checks.is_empty() {
        return; // offline, or no live provider configured
    }
    if checks.iter().any(|c| c.ok) {
        let live = checks.iter().filter(|c| c.ok).count();
        tracing::info!(target: "sdk::health", "{live} of {} live data providers answered at start", checks.len());
        return;
    }
    tracing::warn!(
        target: "sdk::health",
        "no live data provider answered within {} s: panels that need one show their last good \
         data or say it cannot be reached. To work without the network, start with \
         BOARDSMITH_OFFLINE=1 (demo data only), or set BOARDSMITH_DATA_FALLBACK=1 (or switch \
         on demo data in Settings -> Data providers) to let demo data serve while a provider is \
         unreachable",
        PROBE_WITHIN.as_secs()
    );
}

/// `sdk` with the `[data]` section of the config file (`BOARDSMITH_CONFIG`, else
/// `./boardsmith.toml`) under it, the environment winning; as is when it does not read the
/// environment (tests, embedders).
pub fn with_data_file(sdk: SdkConfig) -> anyhow::Result<SdkConfig> {
    if !sdk.use_env {
        return Ok(sdk);
    }
    let Some(path) = base::config_file::path() else { return Ok(sdk) };
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    Ok(sdk.with_data_section(&text, &path, &env)?)
}

/// The running product.
pub struct App {
    /// Data sources.
    pub sdk: Arc<Sdk>,
    /// Worker pool.
    pub sandbox: Sandbox,
    /// Stored and live dashboards: every dashboard read and write goes through here.
    pub dashboards: Arc<Dashboards>,
    /// Panel runs and subscribers (the same layer `dashboards` publishes through).
    pub live: Arc<Live>,
    /// Alert rules judged on scheduled runs: their states and notifications.
    pub alerting: Arc<alerting::Alerting>,
    /// Dashboards as PNG and PDF, and scheduled reports.
    pub reports: Arc<reports::Reports>,
    /// The agent's tools.
    pub tools: Arc<Tools>,
    /// Agents, tools and viewports, reloaded when their files change.
    pub catalog: Arc<Catalog>,
    /// Stored chats.
    pub memory: ChatMemory,
    /// Chats as their people manage them: titles, review mode, search, delete, retention.
    pub chats: Arc<agent::chats::Chats>,
    /// Frontend tools waiting for `/api/submit`.
    pub submits: FrontendSubmits,
    /// Queries to agent runs.
    pub agents: Arc<AgentService>,
    /// The configured models and their providers (shared with `agents`).
    pub models: Arc<Models>,
    /// Providers, models, agents and settings defined through `/api/admin`.
    pub admin: Arc<admin::Admin>,
    /// When the app started, in Unix seconds (the `created` of `/v1/models`).
    pub started_secs: u64,
    /// Access settings (hosts, origins; whether auth is on).
    pub access: AccessConfig,
    /// The server's secret; `None` with auth off.
    pub token: Option<ServerToken>,
    /// The MCP server's shared part (tools, resources, prompts).
    pub mcp: Arc<mcp::Shared>,
    /// API keys: made, listed and revoked by their people; checked on every request.
    pub keys: Arc<access::api_keys::ApiKeys>,
    /// User accounts.
    pub users: Arc<access::users::Users>,
    /// Signed-in browsers' sessions.
    pub sessions: Arc<access::sessions::Sessions>,
    /// Failed sign-ins, counted against guessing.
    pub attempts: Arc<access::attempts::Attempts>,
    /// Who did what: sign-ins, users, keys, shares, settings.
    pub audit: Arc<access::audit::Audit>,
    /// Dashboards' share links.
    pub links: Arc<access::links::Links>,
    /// OpenID Connect providers.
    pub oidc: Arc<access::oidc::Oidc>,
    /// Signing a person in (a password, the token link, an OpenID provider).
    pub signins: access::signin::SignIns,
    /// Model calls counted per day, key, model and agent.
    pub usage: Arc<access::usage::UsageLedger>,
    /// Uploaded images (`<data>/uploads/`).
    pub uploads: Arc<uploads::Uploads>,
    /// Graph workflows: definitions and runs.
    pub workflows: Arc<workflow::Workflows>,
    /// Knowledge bases (`<data>/kb/`).
    pub knowledge: Arc<knowledge::Knowledge>,
    shutdown: CancellationToken,
    /// The store, for the readiness check only (every other use goes through a service).
    store: Arc<Store>,
    /// Set on SIGTERM: readiness answers 503 while requests still drain.
    draining: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").finish_non_exhaustive()
    }
}

/// A template's name (file stem) and state.
pub fn templates() -> Vec<(String, serde_json::Value)> {
    let mut out: Vec<(String, serde_json::Value)> = TEMPLATES
        .files()
        .filter(|f| f.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|f| {
            let name = f.path().file_stem()?.to_string_lossy().into_owned();
            let value = serde_json::from_str(f.contents_utf8()?).ok()?;
            Some((name, value))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

impl App {
    /// Opens the store, starts the pool and the scheduler, loads templates on first start.
    #[base::boxed]
    pub async fn start(config: AppConfig) -> anyhow::Result<Arc<Self>> {
        // Before anything records a metric (the recorder is the process's, installed once).
        base::telemetry::exporter();
        let sdk = Sdk::shared(with_data_file(config.sdk.clone())?)
            .context("loading data-source specs")?;
        tokio::spawn(probe_providers(sdk.clone()));
        // Everything under the data dir is the server user's only (the libraries' files too),
        // and a data dir an older version made open to others is closed.
        base::fs_private::restrict_umask();
        base::fs_private::create_dir_all(&config.data_dir)
            .with_context(|| format!("creating {}", config.data_dir.display()))?;
        let options = StoreOptions { quotas: config.store_quotas, ..StoreOptions::default() };
        let store = Arc::new(match (&config.database_url, &config.shared.nats_url) {
            (Some(url), _) => Store::connect_with(url, options, &config.shared)
                .await
                .context("connecting to PostgreSQL")?,
            (None, Some(_)) => anyhow::bail!(
                "BOARDSMITH_NATS_URL carries panel results between the nodes of a shared store: \
                 set BOARDSMITH_DATABASE_URL too, or unset it"
            ),
            (None, None) => {
                Store::open_with(&config.data_dir, options).context("opening the store")?
            }
        });
        let access = match config.access.clone() {
            Some(a) => a,
            None => AccessConfig::from_env().context("loading the access settings")?,
        };
        let token = access.resolve_token(&config.data_dir).context("loading the server token")?;
        let usage = Arc::new(
            access::usage::UsageLedger::load(store.clone()).await.context("loading usage")?,
        );
        let users =
            access::users::Users::load(store.clone()).await.context("loading the user accounts")?;
        let sessions =
            access::sessions::Sessions::new(store.clone(), users.clone(), access.sessions);
        let attempts =
            Arc::new(access::attempts::Attempts::new(access::attempts::AttemptLimits::default()));
        let audit = access::audit::Audit::new(store.clone(), access::audit::AuditLimits::default());
        let links = Arc::new(access::links::Links::new(store.clone()));
        links.reload().await.context("loading the share links")?;
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let oidc = access::oidc::Oidc::new(access.oidc.clone(), &env)
            .map_err(anyhow::Error::msg)
            .context("setting up OpenID Connect")?;
        let signins = access::signin::SignIns {
            sessions: sessions.clone(),
            users: users.clone(),
            audit: audit.clone(),
        };
        let keys = Arc::new(
            access::api_keys::ApiKeys::load(store.clone(), usage.clone(), users.clone())
                .await
                .context("loading the API keys")?,
        );
        let catalog = Catalog::start(config.catalog.clone()).await?;
        let memory_config = match &config.memory {
            Some(m) => m.clone(),
            None => MemoryConfig::from_env(&config.data_dir)?,
        };
        // Several nodes share chats through the store; one node keeps them in files.
        let memory = if store.is_shared() {
            ChatMemory::shared(memory_config, store.clone())
        } else {
            ChatMemory::new(memory_config)
        };
        let submits = FrontendSubmits::new(config.submit_timeout);
        let llm = match config.llm.clone() {
            Some(llm) => llm,
            None => LlmConfig::from_env().context("loading the LLM configuration")?,
        };
        let sandbox = Sandbox::start(config.sandbox.clone(), sdk.clone())
            .await
            .map_err(|e| anyhow::anyhow!("starting the sandbox: {e}"))?;
        let live = Arc::new(Live::new(sandbox.clone(), config.live.clone()));
        let dashboards = Arc::new(Dashboards::new(store.clone(), live.clone()));
        dashboards.sharing().reload().await.context("loading the dashboards' sharing")?;
        let tools = Arc::new(Tools::new(sandbox.clone(), store.clone(), dashboards.clone()));
        // The built-ins plus the dashboard tools; a chat is the dashboard tools' session.
        // The shell never sees the data dir (store, chats, token; the config files are
        // hidden by the tool itself), and cannot edit the catalog or the workflows (a file it
        // wrote could grant it more).
        let mut agent_tools = config.agent_tools.clone();
        let bash = &mut agent_tools.bash;
        bash.hidden_paths.push(config.data_dir.clone());
        bash.read_only_paths.extend([
            config.catalog.agents_dir.clone(),
            config.catalog.tools_dir.clone(),
            config.catalog.viewports_dir.clone(),
            agent_tools.agents_dir.clone(),
            config.workflows.dir.clone(),
        ]);
        let mut backend = BackendTools::builtin(&agent_tools);
        dashboard_agent::backend::register_all(&mut backend, &tools, config.max_fix_rounds);
        backend.register(Arc::new(dashboard_agent::refresh::RefreshDashboardTool::new(
            dashboards.clone(),
        )));
        let models = Arc::new(Models::new(llm));
        let mut knowledge_config = match config.knowledge.clone() {
            Some(k) => k,
            None => knowledge::KnowledgeConfig::from_env(&config.data_dir)
                .map_err(|e| anyhow::anyhow!("loading the knowledge settings: {e}"))?,
        };
        // Documents are parsed by the same binary the sandbox workers run.
        knowledge_config.parser.program = config.sandbox.program.clone();
        // Several nodes share the bases through the store; each node's index is a cache.
        let knowledge = if store.is_shared() {
            knowledge::Knowledge::open_shared(
                knowledge_config,
                models.clone(),
                sdk.clone(),
                store.clone(),
            )
            .await
        } else {
            knowledge::Knowledge::open(knowledge_config, models.clone(), sdk.clone()).await
        }
        .context("opening the knowledge bases")?;
        knowledge::tool::register(&mut backend, knowledge.clone());
        // Several nodes share uploads through the store, as they share chats.
        let uploads = Arc::new(if store.is_shared() {
            uploads::Uploads::shared(store.clone(), config.uploads)
        } else {
            uploads::Uploads::new(config.data_dir.join(uploads::DIR_NAME), config.uploads)
        });
        // stdio MCP servers run in the shell's sandbox, with its view and limits.
        let mcp = McpHub::new(
            agent::tools::BashTool::new(agent_tools.bash.clone()),
            McpConfig::default(),
        );
        let admin = Arc::new(
            admin::Admin::load(
                store.clone(),
                models.clone(),
                catalog.clone(),
                admin::sealed::Sealer::in_dir(&config.data_dir)
                    .context("loading the key that seals provider keys")?,
                Some(mcp.clone()),
            )
            .await
            .context("loading the admin definitions")?,
        );
        sdk.set_fallback(admin.settings().await.settings.data_fallback);
        let agents = Arc::new(
            AgentService::new(
                catalog.clone(),
                memory.clone(),
                submits.clone(),
                backend.clone(),
                models.clone(),
                config.service.clone(),
            )
            .with_context(Arc::new(dashboard_agent::backend::DashboardContext::new(tools.clone())))
            .with_mcp(mcp)
            .with_hooks(RunAccounting::factory(usage.clone(), keys.clone(), models.clone()))
            .with_uploads(uploads.clone()),
        );
        let workflows = workflow::Workflows::start(
            workflow::Deps {
                sandbox: sandbox.clone(),
                backend,
                submits: submits.clone(),
                agents: agents.clone(),
                catalog: catalog.clone(),
                knowledge: knowledge.clone(),
            },
            store.clone(),
            config.workflows.clone(),
        )
        .await
        .context("loading the workflows")?;
        let alerting = alerting::Alerting::new(
            dashboards.clone(),
            store.clone(),
            sdk.clone(),
            config.alerting.clone().with_config_file().map_err(anyhow::Error::msg)?,
        );
        alerting.channels().set_settings_relay(admin.mail_relay().await);
        let shutdown = CancellationToken::new();
        tokio::spawn(live.clone().run_scheduler(
            config.live.tick,
            shutdown.clone(),
            dashboards.coordinator(config.live.tick),
        ));
        tokio::spawn(dashboards.clone().follow(shutdown.clone()));
        if let Some(notices) = store.notices() {
            let kept = Kept {
                keys: keys.clone(),
                links: links.clone(),
                users: users.clone(),
                sessions: sessions.clone(),
                admin: admin.clone(),
                sdk: sdk.clone(),
                workflows: workflows.clone(),
                knowledge: knowledge.clone(),
                alerting: alerting.clone(),
            };
            tokio::spawn(follow_records(notices, kept, shutdown.clone()));
        }
        // Runs across nodes: events shared, submits and steering forwarded to a run's owner.
        if let Some(cluster) = agent::cluster::Cluster::start(&store, &agents, &shutdown) {
            tokio::spawn(interrupt_lost_workflows(
                cluster.lost_runs(),
                workflows.clone(),
                shutdown.clone(),
            ));
        }
        tokio::spawn(usage.clone().run_flusher(shutdown.clone()));
        tokio::spawn(sweep_people(sessions.clone(), audit.clone(), shutdown.clone()));
        let chats =
            Arc::new(agent::chats::Chats::new(memory.clone(), store.clone(), uploads.clone()));
        tools.set_chats(chats.clone());
        tokio::spawn(expire_chats(
            chats.clone(),
            admin.clone(),
            memory.config().retention_days,
            shutdown.clone(),
        ));
        if config.load_templates && dashboards.list(true).await?.is_empty() {
            // Nodes of a shared store may all find it empty at once: a template's id is then
            // derived from its name, so it is created once and the others' attempts conflict.
            let shared = store.is_shared();
            for (name, value) in templates() {
                match parse_state(&value) {
                    Ok(state) => {
                        let note = format!("template {name}");
                        let id = shared.then(|| format!("db_template_{name}"));
                        let by = store::Author::system();
                        match dashboards.create(id.as_deref(), state, &note, &by, Vec::new()).await
                        {
                            Ok(_) | Err(store::StoreError::Conflict { .. }) if shared => {}
                            Ok(_) => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    Err(e) => {
                        tracing::warn!(template = %name, error = %e, "skipping invalid template")
                    }
                }
            }
        }
        // Started after the templates, so their rules are registered by the first scan.
        alerting.clone().start(shutdown.clone()).await.context("loading the alert rules")?;
        let reports = reports::Reports::new(
            store.clone(),
            dashboards.clone(),
            links.clone(),
            alerting.clone(),
            config.reports.clone(),
        );
        reports.clone().start(shutdown.clone());
        let mcp =
            mcp::Shared::new(tools.clone(), dashboards.clone(), sdk.clone(), config.mcp_tools);
        Ok(Arc::new(Self {
            alerting,
            reports,
            mcp,
            sdk,
            sandbox,
            dashboards,
            live,
            tools,
            catalog,
            memory,
            chats,
            submits,
            agents,
            models,
            admin,
            started_secs: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            access,
            token,
            keys,
            users,
            sessions,
            attempts,
            audit,
            links,
            oidc: Arc::new(oidc),
            signins,
            usage,
            uploads,
            workflows,
            knowledge,
            shutdown,
            store,
            draining: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// The store's counters (writer commits, bytes kept), for diagnostics and tests.
    pub fn store_stats(&self) -> store::StoreStats {
        self.store.stats()
    }

    /// Whether a load balancer should send this node requests: not while it drains, nor while
    /// its store does not answer. `Ok` names the store's engine and this node's id in a shared
    /// store; `Err` says why not.
    #[base::boxed]
    pub async fn ready(&self) -> Result<(&'static str, Option<String>), String> {
        if self.draining.load(std::sync::atomic::Ordering::Acquire) {
            return Err("draining: this node is shutting down".into());
        }
        self.store.ping().await.map_err(|e| format!("the store does not answer: {e}"))?;
        Ok((self.store.engine(), self.store.node_id().map(str::to_owned)))
    }

    /// Starts draining: readiness answers 503 from now on; requests are still served.
    pub fn begin_drain(&self) {
        self.draining.store(true, std::sync::atomic::Ordering::Release);
    }

    /// A token cancelled when the app stops.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Stops background work, the pool and the store (final durable commit).
    #[base::boxed]
    pub async fn stop(&self) {
        self.shutdown.cancel();
        if let Err(e) = self.usage.flush().await {
            tracing::error!(error = %e, "writing usage at shutdown failed");
        }
        self.sandbox.shutdown().await;
        self.dashboards.shutdown().await;
    }
}

/// A workflow run whose node died is `interrupted` (resumable), as at an embedded restart.
async fn interrupt_lost_workflows(
    mut lost: tokio::sync::broadcast::Receiver<String>,
    workflows: Arc<workflow::Workflows>,
    shutdown: CancellationToken,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let stream_id = tokio::select! {
            () = shutdown.cancelled() => return,
            n = lost.recv() => match n {
                Ok(id) => id,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return,
            },
        };
        if let Err(e) = workflows.stream_lost(&stream_id).await {
            tracing::warn!(stream = %stream_id, error = %e, "marking a lost workflow run failed");
        }
    }
}

/// Removes expired sessions and audit entries past retention, at start and then hourly.
async fn sweep_people(
    sessions: Arc<access::sessions::Sessions>,
    audit: Arc<access::audit::Audit>,
    shutdown: CancellationToken,
) {
    hourly(shutdown, || async {
        if let Err(e) = sessions.sweep().await {
            tracing::warn!(error = %e, "removing expired sessions failed");
        }
        if let Err(e) = audit.prune().await {
            tracing::warn!(error = %e, "pruning the audit trail failed");
        }
    })
    .await;
}

/// Runs `work` at once and then every hour until `shutdown`.
async fn hourly<F: std::future::Future<Output = ()>>(
    shutdown: CancellationToken,
    mut work: impl FnMut() -> F,
) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = every.tick() => {}
        }
        work().await;
    }
}

/// Every hour (and at start), deletes the chats untouched for longer than the retention
/// (the admin setting, else `MEMORY_CHAT_RETENTION_DAYS`); none without one. On several nodes
/// each sweeps: a chat another deleted first is skipped.
async fn expire_chats(
    chats: Arc<agent::chats::Chats>,
    admin: Arc<admin::Admin>,
    configured: Option<u32>,
    shutdown: CancellationToken,
) {
    hourly(shutdown, || async {
        let Some(days) = admin.settings().await.settings.chat_retention_days.or(configured) else {
            return;
        };
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        match chats.expire(days, now_ms).await {
            Ok(gone) if !gone.is_empty() => {
                tracing::info!(chats = gone.len(), days, "deleted chats past their retention");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "deleting chats past their retention failed"),
        }
    })
    .await;
}

/// What this node keeps in memory of records other nodes may change.
struct Kept {
    keys: Arc<access::api_keys::ApiKeys>,
    links: Arc<access::links::Links>,
    users: Arc<access::users::Users>,
    sessions: Arc<access::sessions::Sessions>,
    admin: Arc<admin::Admin>,
    sdk: Arc<Sdk>,
    workflows: Arc<workflow::Workflows>,
    knowledge: Arc<knowledge::Knowledge>,
    alerting: Arc<alerting::Alerting>,
}

/// Another node of a shared store changed records this node keeps in memory: re-read them.
/// After missed notices (a reconnect, a lag) every kind is re-read.
async fn follow_records(
    mut notices: tokio::sync::broadcast::Receiver<store::Notice>,
    kept: Kept,
    shutdown: CancellationToken,
) {
    use store::{Notice, Record};
    let Kept { keys, links, users, sessions, admin, sdk, workflows, knowledge, alerting } = kept;
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let notice = tokio::select! {
            () = shutdown.cancelled() => return,
            n = notices.recv() => n,
        };
        if matches!(notice, Ok(Notice::Knowledge | Notice::Resync) | Err(RecvError::Lagged(_)))
            && let Err(e) = knowledge.sync().await
        {
            tracing::warn!(error = %e, "bringing the knowledge bases up to date failed");
        }
        let kinds: &[Record] = match &notice {
            Ok(Notice::Record(kind)) => std::slice::from_ref(kind),
            Ok(Notice::Resync) | Err(RecvError::Lagged(_)) => &Record::ALL,
            Ok(_) => &[],
            Err(RecvError::Closed) => return,
        };
        for kind in kinds {
            let reloaded = match kind {
                Record::ApiKey => keys.reload().await.map_err(|e| e.to_string()),
                Record::Admin => match admin.reload().await {
                    Ok(()) => {
                        // An admin may have switched demo fallback or the mail relay on
                        // another node.
                        sdk.set_fallback(admin.settings().await.settings.data_fallback);
                        alerting.channels().set_settings_relay(admin.mail_relay().await);
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                },
                Record::Workflow => workflows.reload().await.map_err(|e| e.to_string()),
                Record::User => {
                    // A role change or a disabled account must reach sessions read before it.
                    sessions.forget_cached();
                    users.reload().await.map_err(|e| e.to_string())
                }
                Record::SignIn => {
                    sessions.forget_cached();
                    Ok(())
                }
                Record::ShareLink => links.reload().await.map_err(|e| e.to_string()),
                // Dashboards follow their own (`Dashboards::follow`).
                Record::Session
                | Record::Usage
                | Record::WorkflowRun
                | Record::Audit
                | Record::Sharing
                | Record::ChatMeta
                | Record::Draft
                | Record::Review
                // Alerting reads its records from the store each time.
                | Record::AlertState
                | Record::Notification
                | Record::Channel
                | Record::Report
                | Record::ReportRun
                | Record::Silence => Ok(()),
            };
            if let Err(e) = reloaded {
                tracing::warn!(kind = kind.key(), error = %e, "re-reading another node's change failed");
            }
        }
    }
}

/// An agent run's hooks: every model call counted in the usage ledger for the run's agent and
/// caller, and a run for a key whose budget is used up stopped after the call that used it up.
struct RunAccounting {
    usage: Arc<access::usage::UsageLedger>,
    keys: Arc<access::api_keys::ApiKeys>,
    models: Arc<Models>,
    context: agent::service::RunContext,
}

impl RunAccounting {
    fn factory(
        usage: Arc<access::usage::UsageLedger>,
        keys: Arc<access::api_keys::ApiKeys>,
        models: Arc<Models>,
    ) -> agent::service::HooksFactory {
        Arc::new(move |context| {
            Arc::new(Self {
                usage: usage.clone(),
                keys: keys.clone(),
                models: models.clone(),
                context: context.clone(),
            })
        })
    }
}

impl agent::run::RunHooks for RunAccounting {
    fn on_turn_end<'a>(
        &'a self,
        turn: &'a agent::run::TurnInfo,
    ) -> futures::future::BoxFuture<'a, Result<bool, String>> {
        let info = self.models.config().model_info(&turn.provider, &turn.model);
        self.usage.record(&access::usage::Call {
            key: self.context.caller.clone(),
            model: format!("{}/{}", turn.provider, turn.model),
            agent: Some(self.context.agent.clone()),
            usage: turn.usage,
            cost_usd: info.cost(&turn.usage),
            latency: turn.duration,
            first_chunk: None,
            error: false,
        });
        let over = self.context.caller.as_deref().and_then(|k| self.keys.over_budget(k));
        if let Some(why) = &over {
            tracing::info!(agent = %self.context.agent, %why, "stopping a run over its key's budget");
        }
        Box::pin(std::future::ready(Ok(over.is_none())))
    }

    /// The failed model's call counts as an error of that model; the fallback's answer is
    /// counted by `on_turn_end` under the model that gave it.
    fn on_fallback<'a>(
        &'a self,
        failed: &'a agent::run::TurnInfo,
        _error: &'a llm::LlmError,
    ) -> futures::future::BoxFuture<'a, ()> {
        self.usage.record(&access::usage::Call {
            key: self.context.caller.clone(),
            model: format!("{}/{}", failed.provider, failed.model),
            agent: Some(self.context.agent.clone()),
            usage: failed.usage,
            cost_usd: None,
            latency: failed.duration,
            first_chunk: None,
            error: true,
        });
        Box::pin(std::future::ready(()))
    }

    fn on_error<'a>(
        &'a self,
        _error: &'a str,
        _retryable: bool,
    ) -> futures::future::BoxFuture<'a, Result<(), String>> {
        self.usage.record(&access::usage::Call {
            key: self.context.caller.clone(),
            model: self.context.model.clone(),
            agent: Some(self.context.agent.clone()),
            usage: llm::Usage::default(),
            cost_usd: None,
            latency: std::time::Duration::ZERO,
            first_chunk: None,
            error: true,
        });
        Box::pin(std::future::ready(Ok(())))
    }
}
