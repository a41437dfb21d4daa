//! Command-line commands that are not the server: registry inspection, running a file through
//! the sandbox and the scripted mock LLM upstream. Output goes to stdout as JSON or a plain
//! table, through [`outln!`] (a closed pipe ends a command quietly).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::Value;

use crate::access::AccessConfig;
use crate::sandbox::{PanelContext, Sandbox, SandboxConfig};
use crate::sdk::{Sdk, SdkConfig};

/// `println!` for a command's output: when stdout is a pipe that was closed
/// (`boardsmith run panel x.js | head`), the command ends quietly with exit 0 instead of
/// panicking; any other write error ends it with exit 1 and the reason on stderr.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::print_line(format_args!($($arg)*)) };
}

/// What [`outln!`] calls.
pub fn print_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let written =
        out.write_fmt(args).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("boardsmith: cannot write to stdout: {e}");
            std::process::exit(1);
        }
    }
}

/// `boardsmith migrate-store --to URL`: the embedded store of BOARDSMITH_DATA, the chat
/// files (MEMORY_CHAT_DIR) and the uploads (`<data>/uploads/`) copied into PostgreSQL and
/// verified (see `store::copy`); a damaged chat line or upload is named on stderr and skipped.
#[base::boxed(?Send)]
pub async fn migrate_store(to: &str) -> anyhow::Result<ExitCode> {
    use crate::agent::memory::{MemoryConfig, read_chat_files};
    use crate::store::copy::{ChatLines, UploadCopy};
    use crate::store::{Store, StoreOptions};
    let dir = crate::app::AppConfig::data_dir_from_env();
    if !dir.join(crate::store::FILE_NAME).exists() {
        anyhow::bail!("no embedded store in {} (BOARDSMITH_DATA)", dir.display());
    }
    let chat_dir = MemoryConfig::from_env(&dir)?.dir;
    let files = read_chat_files(&chat_dir)
        .with_context(|| format!("reading the chats in {}", chat_dir.display()))?;
    let mut damaged = 0;
    let mut chats = Vec::with_capacity(files.len());
    for file in files {
        for w in &file.warnings {
            eprintln!("skipped {}.json line {}: {}", file.chat_id, w.line, w.reason);
        }
        damaged += file.warnings.len();
        chats.push(ChatLines { chat_id: file.chat_id, lines: file.lines });
    }
    let from = Store::open(&dir).context("opening the embedded store")?;
    // The target's TLS trust as `serve` would use it; no NATS (nothing refreshes here).
    let shared =
        crate::store::SharedOptions { nats_url: None, ..crate::store::SharedOptions::from_env() };
    let into = Store::connect_with(to, StoreOptions::default(), &shared)
        .await
        .context("connecting to PostgreSQL")?;
    // Read one at a time as the copy takes them: uploads may be many megabytes each.
    let uploads_dir = dir.join(crate::uploads::DIR_NAME);
    let upload_ids = crate::uploads::upload_file_ids(&uploads_dir)
        .with_context(|| format!("listing the uploads in {}", uploads_dir.display()))?;
    let mut upload_damaged = 0;
    let uploads = upload_ids.iter().filter_map(|id| {
        match crate::uploads::read_upload_file(&uploads_dir, id) {
            Ok(f) => Some(UploadCopy {
                id: f.info.id,
                name: f.info.name,
                mime_type: f.info.mime_type,
                created_at: f.created_at,
                content: f.content,
            }),
            Err(e) => {
                eprintln!("skipped upload {id}: {e}");
                upload_damaged += 1;
                None
            }
        }
    });
    let copied = crate::store::copy::copy(&from, &into, &chats, uploads).await;
    // Knowledge bases only once the rest is in (the copy refuses a non-empty target).
    let kb_dir = crate::knowledge::KnowledgeConfig::from_env(&dir)
        .map_err(|e| anyhow::anyhow!("loading the knowledge settings: {e}"))?
        .dir;
    let kb = match &copied {
        Ok(_) => Some(crate::knowledge::copy_index(&kb_dir, &into).await),
        Err(_) => None,
    };
    from.shutdown().await;
    into.shutdown().await;
    let report = copied.context("copying the store")?;
    let kb = kb.transpose().context("copying the knowledge bases")?;
    let count = |name: &str, n: usize| outln!("{name:<16}{n}");
    count("dashboards", report.dashboards);
    count("versions", report.versions);
    for (kind, n) in &report.records {
        count(kind.key(), *n);
    }
    count("chats", report.chats);
    count("chat_runs", report.chat_lines);
    count("chat_damaged", damaged);
    count("uploads", report.uploads);
    count("upload_damaged", upload_damaged);
    if let Some(kb) = &kb {
        count("kb_bases", kb.bases);
        count("kb_documents", kb.documents);
    }
    outln!("source sha256 {}", report.source_sha256);
    outln!("target sha256 {}", report.target_sha256);
    outln!("chat source sha256 {}", report.chats_source_sha256);
    outln!("chat target sha256 {}", report.chats_target_sha256);
    outln!("upload source sha256 {}", report.uploads_source_sha256);
    outln!("upload target sha256 {}", report.uploads_target_sha256);
    if let Some(kb) = &kb {
        outln!("kb source sha256 {}", kb.source_sha256);
        outln!("kb target sha256 {}", kb.target_sha256);
    }
    outln!("verified: the target reads back exactly what the source holds");
    Ok(ExitCode::SUCCESS)
}

/// Which sandbox entry point `run` uses.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Kind {
    /// Panel code: `sdk`, `utils`, `vars`.
    Panel,
    /// Search code: `spec`.
    Search,
    /// Builder code: `utils` (and `state` with `--state`).
    Builder,
}

/// Parses `name=value`.
pub fn parse_var(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("expected name=value, got `{s}`"))
}

/// Loads the SDK from the environment's configuration.
pub fn load_sdk() -> anyhow::Result<Arc<Sdk>> {
    Sdk::shared(crate::app::with_data_file(SdkConfig::from_env())?)
        .context("loading data-source specs")
}

/// Starts a sandbox pool whose workers are this executable.
#[base::boxed]
pub async fn start_sandbox(
    sdk: Arc<Sdk>,
    workers: Option<usize>,
    limits: crate::sandbox::Limits,
) -> anyhow::Result<Sandbox> {
    let exe = std::env::current_exe().context("locating the boardsmith executable")?;
    let mut config = SandboxConfig::new(exe);
    config.limits = limits;
    if let Some(n) = workers {
        config.workers = n;
    }
    Sandbox::start(config, sdk).await.map_err(|e| anyhow::anyhow!("{e}"))
}

/// `boardsmith serve`: starts everything, serves until SIGINT/SIGTERM, then drains requests,
/// stops the pool and makes the store's final commit.
#[base::boxed]
pub async fn serve(no_auth: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("locating the boardsmith executable")?;
    // One file descriptor per WebSocket: use the hard limit.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let mut config = crate::app::AppConfig::from_env(exe);
    let mut access = AccessConfig::from_env()?;
    access.no_auth |= no_auth;
    config.access = Some(access);
    let addr = server_addr();
    let listener =
        tokio::net::TcpListener::bind(&addr).await.with_context(|| format!("binding {addr}"))?;
    let bound = listener.local_addr()?;
    let app = crate::app::App::start(config.clone()).await?;
    let server = crate::server::ServerConfig::from_env();
    let router = match crate::server::app(app.clone(), &server, bound) {
        Ok(r) => r,
        Err(e) => {
            app.stop().await;
            return Err(e.into());
        }
    };
    let base = format!("http://{}", browser_host(bound));
    eprintln!("boardsmith listening on {base} (data in {})", config.data_dir.display());
    match &app.token {
        Some(token) => eprintln!("  sign in: {base}/?token={}", token.expose()),
        None => eprintln!(
            "  WARNING: authentication is OFF: any program on this machine can run agents and \
             rewrite dashboards (Host and Origin checks still stop web pages)"
        ),
    }
    let served =
        crate::server::serve(listener, router, server.limits, drain_on_signal(app.clone())).await;
    app.stop().await;
    served?;
    eprintln!("boardsmith stopped");
    Ok(ExitCode::SUCCESS)
}

/// `boardsmith mcp`: the MCP server on stdin/stdout over the data directory, until the client
/// closes stdin or SIGINT/SIGTERM; then the store's final commit. Logs go to stderr (stdout is
/// the protocol's).
#[base::boxed]
pub async fn mcp(read_only: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("locating the boardsmith executable")?;
    let mut config = crate::app::AppConfig::from_env(exe);
    if read_only {
        config.mcp_tools = crate::mcp::ToolSet::ReadOnly;
    }
    let data = config.data_dir.clone();
    let app = crate::app::App::start(config).await.map_err(|e| {
        if format!("{e:#}").contains("already open") {
            e.context(format!(
                "{} is in use, most likely by a running Boardsmith server: stop it, give this \
                 command another BOARDSMITH_DATA, or connect the MCP client to the server's \
                 streamable HTTP endpoint (http://127.0.0.1:8080/mcp with the token from \
                 `boardsmith token`)",
                data.display()
            ))
        } else {
            e
        }
    })?;
    let stop = app.shutdown_token();
    tokio::spawn(shutdown_signal(stop.clone()));
    let result =
        crate::mcp::serve_stdio(app.mcp.clone(), stop).await.map_err(|e| anyhow::anyhow!(e));
    app.stop().await;
    result.map(|()| ExitCode::SUCCESS)
}

/// `BOARDSMITH_ADDR`, default `127.0.0.1:8080`.
fn server_addr() -> String {
    std::env::var("BOARDSMITH_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".to_owned())
}

/// The `host:port` a browser on this machine uses for `addr` (an unspecified address is
/// reached through loopback).
fn browser_host(addr: std::net::SocketAddr) -> String {
    match addr.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => format!("127.0.0.1:{}", addr.port()),
        ip if ip.is_unspecified() => format!("[::1]:{}", addr.port()),
        _ => addr.to_string(),
    }
}

/// `boardsmith token`: the sign-in URL and the token of the server configured by this
/// environment (`BOARDSMITH_TOKEN`, else `<BOARDSMITH_DATA>/token`, created when missing).
pub fn token() -> anyhow::Result<ExitCode> {
    let access = AccessConfig::from_env()?;
    let data_dir = crate::app::AppConfig::data_dir_from_env();
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    match access.resolve_token(&data_dir)? {
        Some(token) => {
            let addr = server_addr();
            let host = addr.parse().map_or(addr.clone(), browser_host);
            crate::outln!("http://{host}/?token={}", token.expose());
            crate::outln!("Authorization: Bearer {}", token.expose());
        }
        None => crate::outln!("authentication is off (BOARDSMITH_AUTH=0 or `auth = false`)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `boardsmith user …`.
#[derive(Debug, clap::Subcommand)]
pub enum UserCommand {
    /// Make an account; prints its password when none is given (`--password-stdin` reads one).
    Add {
        /// Sign-in name (a-z 0-9 . _ @ -).
        username: String,
        /// admin, editor or viewer.
        #[arg(long, default_value = "editor")]
        role: String,
        /// Read the password from the first line of stdin (else one is generated and printed).
        #[arg(long)]
        password_stdin: bool,
        /// Name shown in the app.
        #[arg(long)]
        display_name: Option<String>,
    },
    /// List the accounts.
    List {
        /// JSON lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Disable an account (its sessions and keys stop working) or, with `--enable`, enable it.
    Disable {
        /// The account's name.
        username: String,
        /// Enable instead.
        #[arg(long)]
        enable: bool,
    },
    /// Give an account a new password (printed when generated) and sign it out everywhere.
    ResetPassword {
        /// The account's name.
        username: String,
        /// Read the password from the first line of stdin (else one is generated and printed).
        #[arg(long)]
        password_stdin: bool,
    },
}

/// The store `serve` would open (PostgreSQL when BOARDSMITH_DATABASE_URL is set), for commands
/// that change records; the embedded one says clearly when a running server holds it.
async fn open_store() -> anyhow::Result<Arc<crate::store::Store>> {
    use crate::store::{Store, StoreOptions};
    let config = crate::app::AppConfig::from_env(std::path::PathBuf::from("boardsmith"));
    let store = match &config.database_url {
        Some(url) => {
            let shared = crate::store::SharedOptions { nats_url: None, ..config.shared.clone() };
            Store::connect_with(url, StoreOptions::default(), &shared)
                .await
                .context("connecting to PostgreSQL")?
        }
        None => Store::open(&config.data_dir).map_err(|e| {
            let held = e.to_string().contains("already open")
                || e.to_string().contains("Database already open");
            if held {
                anyhow::anyhow!(
                    "{} is in use by a running Boardsmith server: stop it first, or manage users \
                     in the web app (Settings → Users) or through /api/admin/users",
                    config.data_dir.display()
                )
            } else {
                anyhow::Error::new(e).context("opening the store")
            }
        })?,
    };
    Ok(Arc::new(store))
}

fn password_from_stdin() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).context("reading the password from stdin")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// `boardsmith user add|list|disable|reset-password`.
#[base::boxed]
pub async fn user(command: UserCommand) -> anyhow::Result<ExitCode> {
    use crate::access::audit::{Audit, AuditKind, AuditLimits, Event};
    use crate::access::principal::{Principal, Role};
    use crate::access::sessions::{SessionLimits, Sessions};
    use crate::access::users::{NewUser, UserPatch, Users, generate_password};
    let store = open_store().await?;
    let users = Users::load(store.clone()).await?;
    let audit = Audit::new(store.clone(), AuditLimits::default());
    let sessions = Sessions::new(store.clone(), users.clone(), SessionLimits::default());
    let find = |name: &str| {
        users
            .by_name(name)
            .ok_or_else(|| anyhow::anyhow!("no user `{name}` (`boardsmith user list`)"))
    };
    let code = match command {
        UserCommand::Add { username, role, password_stdin, display_name } => {
            let role = Role::parse(&role)
                .ok_or_else(|| anyhow::anyhow!("--role must be admin, editor or viewer"))?;
            let password = if password_stdin { Some(password_from_stdin()?) } else { None };
            let made = users
                .create(NewUser { username, password, role, display_name, email: None })
                .await?;
            audit
                .record(
                    Event::new(AuditKind::UserCreated)
                        .by(&Principal::Owner)
                        .target(made.user.id.to_string())
                        .detail(format!("{} as {} (CLI)", made.user.username, made.user.role)),
                )
                .await;
            crate::outln!("added {} ({}) as {}", made.user.username, made.user.id, made.user.role);
            if let Some(p) = made.password {
                crate::outln!("password: {p}");
            }
            ExitCode::SUCCESS
        }
        UserCommand::List { json } => {
            for u in users.list() {
                if json {
                    crate::outln!("{}", serde_json::to_string(&u)?);
                } else {
                    crate::outln!(
                        "{:<24} {:<7} {:<9} {}",
                        u.username,
                        u.role.as_str(),
                        if u.disabled { "disabled" } else { "enabled" },
                        u.id
                    );
                }
            }
            ExitCode::SUCCESS
        }
        UserCommand::Disable { username, enable } => {
            let u = find(&username)?;
            let patch = UserPatch { disabled: Some(!enable), ..UserPatch::default() };
            users.update(&u.id, patch).await?;
            if !enable {
                sessions.end_all(&u.id).await?;
            }
            let what = if enable { "enabled (CLI)" } else { "disabled (CLI)" };
            audit
                .record(
                    Event::new(AuditKind::UserChanged)
                        .by(&Principal::Owner)
                        .target(u.id.to_string())
                        .detail(what),
                )
                .await;
            crate::outln!("{} {}", u.username, if enable { "enabled" } else { "disabled" });
            ExitCode::SUCCESS
        }
        UserCommand::ResetPassword { username, password_stdin } => {
            let u = find(&username)?;
            let (password, generated) = if password_stdin {
                (password_from_stdin()?, false)
            } else {
                (generate_password(), true)
            };
            let patch = UserPatch { password: Some(password.clone()), ..UserPatch::default() };
            users.update(&u.id, patch).await?;
            let ended = sessions.end_all(&u.id).await?;
            audit
                .record(
                    Event::new(AuditKind::UserChanged)
                        .by(&Principal::Owner)
                        .target(u.id.to_string())
                        .detail("password reset (CLI)"),
                )
                .await;
            crate::outln!("{}: new password set, {ended} session(s) ended", u.username);
            if generated {
                crate::outln!("password: {password}");
            }
            ExitCode::SUCCESS
        }
    };
    store.shutdown().await;
    Ok(code)
}

/// `boardsmith mock-llm --script FILE --port N` (or `--demo`, the built-in offline demo, for
/// `None`): serves the script on 127.0.0.1, prints
/// `mock-llm listening on http://127.0.0.1:PORT` on stdout, and runs until SIGINT/SIGTERM. A
/// script that cannot be read or parsed exits 2 with the file and JSON path on stderr.
#[base::boxed(?Send)]
pub async fn mock_llm(script: Option<&Path>, port: u16) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;

    let script = match script {
        Some(path) => crate::llm::mock::MockLlm::load(path),
        None => crate::llm::mock::MockLlm::demo(),
    };
    let script = match script {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: bad mock-llm script: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let turns = script.turns.len();
    let mock = crate::llm::mock::MockLlm::start(script, port)
        .await
        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "mock-llm listening on {}", mock.url())?;
    out.flush()?;
    drop(out);
    eprintln!(
        "mock-llm: {turns} scripted turns; POST /v1/chat/completions (OpenAI), /v1/messages \
         (Anthropic), /api/chat (Ollama)"
    );
    shutdown_signal(tokio_util::sync::CancellationToken::new()).await;
    mock.stop();
    eprintln!("mock-llm stopped after {} requests", mock.requests().len());
    Ok(ExitCode::SUCCESS)
}

/// Resolves on SIGINT or SIGTERM and cancels `token` (closing WebSockets) so the server drains.
async fn shutdown_signal(token: tokio_util::sync::CancellationToken) {
    signal().await;
    token.cancel();
}

/// `serve`'s shutdown: on SIGINT or SIGTERM readiness turns 503 at once; requests are still
/// served for `BOARDSMITH_DRAIN_DELAY_MS` (default 0), long enough for a load balancer to stop
/// sending new ones; then the listener closes and in-flight requests finish.
async fn drain_on_signal(app: Arc<crate::app::App>) {
    signal().await;
    app.begin_drain();
    let delay = std::env::var("BOARDSMITH_DRAIN_DELAY_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(std::time::Duration::ZERO, std::time::Duration::from_millis);
    if !delay.is_zero() {
        eprintln!("boardsmith draining: not ready; closing the listener in {delay:?}");
        tokio::time::sleep(delay).await;
    }
    app.shutdown_token().cancel();
}

/// Resolves on SIGINT or SIGTERM.
async fn signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

/// `boardsmith sdk list`.
pub fn sdk_list(json: bool) -> anyhow::Result<ExitCode> {
    let sdk = load_sdk()?;
    let reg = sdk.registry();
    // Per method: its providers in order, with their status here and now.
    let providers = |src, m| -> Vec<(String, &'static str)> {
        let mut listed: Vec<(String, &'static str)> = crate::sdk::provider::providers_of(src, m)
            .iter()
            .map(|p| (p.provider.clone(), sdk.status(src, p).as_str()))
            .collect();
        // Entries of one provider split by `when` (DefiLlama: all chains, one chain) count once.
        listed.dedup_by(|a, b| a.0 == b.0);
        listed
    };
    if json {
        let out: Vec<serde_json::Value> = reg
            .sources()
            .map(|src| {
                let methods: Vec<serde_json::Value> = src
                    .methods
                    .iter()
                    .map(|m| {
                        let ps: Vec<serde_json::Value> = providers(src, m)
                            .into_iter()
                            .map(|(name, status)| serde_json::json!({"name": name, "status": status}))
                            .collect();
                        serde_json::json!({"name": m.name, "providers": ps})
                    })
                    .collect();
                serde_json::json!({"name": src.name, "methods": methods})
            })
            .collect();
        crate::outln!("{}", serde_json::Value::Array(out));
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("{:<14} {:>7}  {:<34} tags", "source", "methods", "name");
    for s in reg.sources() {
        crate::outln!(
            "{:<14} {:>7}  {:<34} {}",
            s.name,
            s.methods.len(),
            s.display_name,
            s.tags.join(", ")
        );
    }
    for (name, var) in reg.disabled() {
        crate::outln!("{name:<14} {:>7}  (disabled; set {var}=1)", "-");
    }
    crate::outln!("{} sources, {} methods", reg.sources().count(), reg.method_count());
    crate::outln!("");
    crate::outln!("{:<40} providers (first usable serves)", "method");
    for src in reg.sources() {
        for m in &src.methods {
            let listed: Vec<String> = providers(src, m)
                .iter()
                .map(|(name, status)| format!("{name} ({status})"))
                .collect();
            let name = format!("{}.{}", src.name, m.name);
            crate::outln!("{name:<40} {}", listed.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `boardsmith sdk check [--json]`.
#[base::boxed]
pub async fn sdk_check(json: bool) -> anyhow::Result<ExitCode> {
    let sdk = load_sdk()?;
    let checks = sdk.check().await;
    let failed = checks.iter().filter(|c| !c.ok).count();
    if json {
        crate::outln!("{}", serde_json::to_string(&checks)?);
    } else if checks.is_empty() {
        crate::outln!(
            "no live provider to check (offline, or every one needs a key or is disabled)"
        );
    } else {
        crate::outln!("{:<18} {:<4} {:>9}  {:<32} error", "provider", "ok", "latency", "method");
        for c in &checks {
            crate::outln!(
                "{:<18} {:<4} {:>7.0}ms  {:<32} {}",
                c.provider,
                if c.ok { "ok" } else { "FAIL" },
                c.latency_ms,
                c.method,
                c.error.as_deref().unwrap_or("")
            );
        }
        crate::outln!("{} of {} providers answered", checks.len() - failed, checks.len());
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `boardsmith sdk show <source>`.
pub fn sdk_show(source: &str) -> anyhow::Result<ExitCode> {
    let sdk = load_sdk()?;
    let public = sdk.public_json();
    let found = public["sources"].as_array().and_then(|a| a.iter().find(|s| s["name"] == source));
    match found {
        Some(s) => {
            crate::outln!("{}", serde_json::to_string_pretty(s)?);
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let names: Vec<&str> = sdk.registry().sources().map(|s| s.name.as_str()).collect();
            let near = crate::text::closest(source, &names);
            eprintln!("unknown source `{source}`; closest: {}", near.join(", "));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `boardsmith run <kind> <file>`: the JSON outcome on stdout, exit 1 on a structured error.
#[base::boxed]
pub async fn run(
    kind: Kind,
    file: &Path,
    state: Option<&Path>,
    vars: Vec<(String, String)>,
) -> anyhow::Result<ExitCode> {
    let code =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let state: Option<Value> = match state {
        Some(p) => Some(
            serde_json::from_str(&std::fs::read_to_string(p)?)
                .with_context(|| format!("parsing {}", p.display()))?,
        ),
        None => None,
    };
    let sandbox = start_sandbox(load_sdk()?, Some(1), crate::sandbox::Limits::from_env()).await?;
    let result = match kind {
        Kind::Panel => {
            let vars = vars.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            sandbox.run_panel(&code, &PanelContext { vars }).await
        }
        Kind::Search => sandbox.run_search(&code).await,
        Kind::Builder => sandbox.run_builder(&code, state.as_ref()).await,
    };
    sandbox.shutdown().await;
    match result {
        Ok(outcome) => {
            crate::outln!("{}", serde_json::to_string_pretty(&outcome)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            crate::outln!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({ "error": error }))?
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Options of `boardsmith llm`.
#[derive(Debug, Clone)]
pub struct LlmArgs {
    /// Provider key (`openai`, `deepseek`, ...); with `model` forms `provider/model`.
    pub provider: Option<String>,
    /// Model id (the provider's default when absent).
    pub model: Option<String>,
    /// A JSON file of tools: `{"tools": [{name, description, parameters}]}` (the `tools/*.backend`
    /// format) or an array of `{name, description, input_schema}`.
    pub tools: Option<std::path::PathBuf>,
    /// A system prompt.
    pub system: Option<String>,
    /// Reasoning: `off`, `low`, `medium`, `high`.
    pub thinking: Option<String>,
    /// The user message.
    pub prompt: String,
}

/// Reads a tools file in either accepted shape.
fn load_tools(path: &Path) -> anyhow::Result<Vec<crate::llm::ToolDefinition>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let items = v.get("tools").cloned().unwrap_or(v);
    let items = items.as_array().cloned().with_context(|| {
        format!("{}: expected {{\"tools\": [...]}} or an array of tools", path.display())
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let name = t["name"]
                .as_str()
                .with_context(|| format!("{}: tools[{i}].name is missing", path.display()))?;
            Ok(crate::llm::ToolDefinition {
                name: name.to_owned(),
                description: t["description"].as_str().unwrap_or_default().to_owned(),
                input_schema: t
                    .get("parameters")
                    .or_else(|| t.get("input_schema"))
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
            })
        })
        .collect()
}

/// `boardsmith llm`: one streamed model call, its events printed as JSON lines. Exit 0 when the
/// stream completes, 1 on a provider error, 2 on bad arguments or configuration.
#[base::boxed(?Send)]
pub async fn llm(args: LlmArgs) -> anyhow::Result<ExitCode> {
    use futures::StreamExt as _;
    use std::io::Write as _;

    let config = match crate::llm::config::LlmConfig::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let model_ref = match (&args.provider, &args.model) {
        (Some(p), Some(m)) => format!("{p}/{m}"),
        (Some(p), None) => p.clone(),
        (None, Some(m)) => m.clone(),
        (None, None) => String::new(),
    };
    let resolved = match config.resolve(&model_ref) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let thinking = match args.thinking.as_deref() {
        None => None,
        Some("off") => Some(crate::llm::Thinking::Disabled),
        Some(level) => {
            let effort = match level {
                "low" => crate::llm::Effort::Low,
                "medium" => crate::llm::Effort::Medium,
                "high" => crate::llm::Effort::High,
                other => {
                    eprintln!("error: --thinking {other}: expected off, low, medium or high");
                    return Ok(ExitCode::from(2));
                }
            };
            Some(crate::llm::Thinking::Enabled { effort, budget_tokens: None })
        }
    };
    let tools = match &args.tools {
        Some(p) => match load_tools(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(ExitCode::from(2));
            }
        },
        None => Vec::new(),
    };
    let mut messages = Vec::new();
    if let Some(s) = args.system {
        messages.push(crate::llm::Message::system(s));
    }
    messages.push(crate::llm::Message::user(args.prompt));
    let request = crate::llm::ChatRequest {
        model: resolved.model.id.clone(),
        messages,
        tools,
        thinking,
        max_tokens: u32::try_from(resolved.model.max_output).ok(),
        trace_id: Some(uuid::Uuid::now_v7().to_string()),
        ..crate::llm::ChatRequest::default()
    };
    let provider = crate::llm::connect(resolved.settings);
    let mut events = provider.stream(request);
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    while let Some(e) = events.next().await {
        failed |= matches!(e, crate::llm::StreamEvent::Error(_));
        writeln!(out, "{}", serde_json::to_string(&e)?)?;
        out.flush()?;
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
