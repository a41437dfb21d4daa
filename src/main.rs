//! The `boardsmith` binary: parses the command line and hands off to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use boardsmith::cli;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "boardsmith", version, about = "Live financial dashboards built by an LLM agent")]
struct Args {
    /// Defaults to `serve`.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server (the default): HTTP API and WebSocket on BOARDSMITH_ADDR
    /// (127.0.0.1:8080), data in BOARDSMITH_DATA (./data). Prints the sign-in URL.
    Serve {
        /// No credential needed (only on a loopback address; Host, Origin and Content-Type
        /// checks stay on). Same as BOARDSMITH_AUTH=0.
        #[arg(long)]
        no_auth: bool,
    },
    /// Serve MCP on stdin/stdout (for desktop MCP clients: Claude Desktop, Cursor, VS Code):
    /// the dashboard tools, dashboards and data-source specs as resources, two prompts. Uses
    /// BOARDSMITH_DATA directly, so stop a server on the same data directory first (or point
    /// the client at the server's `/mcp`).
    Mcp {
        /// Expose only `search` and `get_state` (no dashboard writes). Same as
        /// BOARDSMITH_MCP_READ_ONLY=1.
        #[arg(long)]
        read_only: bool,
    },
    /// Copy the embedded store in BOARDSMITH_DATA (every dashboard with its whole history,
    /// chats' tool sessions, API keys, usage, admin definitions, workflows) and the chat files
    /// of MEMORY_CHAT_DIR into an empty PostgreSQL database, then read both back and print
    /// their counts and SHA-256 digests.
    /// Stop the server on that data directory first.
    #[command(name = "migrate-store")]
    MigrateStore {
        /// The PostgreSQL database (`postgres://user@host:port/db`), as BOARDSMITH_DATABASE_URL
        /// names it for `serve`.
        #[arg(long)]
        to: String,
    },
    /// Print the server's sign-in URL and token (BOARDSMITH_TOKEN, or the one generated in
    /// BOARDSMITH_DATA), for a browser or `Authorization: Bearer`.
    Token,
    /// Manage user accounts in BOARDSMITH_DATA (or BOARDSMITH_DATABASE_URL's database): for
    /// operators; admins use Settings → Users. The embedded store is held by a running server,
    /// so stop it first (PostgreSQL needs no stop: every node sees the change at once).
    User {
        #[command(subcommand)]
        command: cli::UserCommand,
    },
    /// Inspect the data-source registry.
    Sdk {
        #[command(subcommand)]
        command: SdkCommand,
    },
    /// Run a JavaScript file through the sandbox, exactly as the server would; prints the JSON
    /// result (exit 0) or the structured error (exit 1).
    Run {
        /// Entry point: `panel` (sdk, utils, vars), `search` (spec) or `builder` (utils).
        kind: cli::Kind,
        /// The JavaScript file.
        file: PathBuf,
        /// Builder only: a JSON file with the state to mutate (the code is then `async (state) => newState`).
        #[arg(long)]
        state: Option<PathBuf>,
        /// Panel only: a dashboard variable, `name=value` (repeatable).
        #[arg(long = "var", value_parser = cli::parse_var)]
        vars: Vec<(String, String)>,
    },
    /// Measure performance and print a table.
    Bench {
        #[command(subcommand)]
        target: BenchTarget,
    },
    /// Serve the scripted mock MCP server (tools `echo`, `add`, `sleep`, `fail`, `image`,
    /// `grow`, `crash`) on stdin/stdout, for tests of agents' MCP servers.
    #[command(name = "mock-mcp")]
    MockMcp,
    /// Serve a scripted mock LLM upstream (OpenAI `/v1/chat/completions`, Anthropic
    /// `/v1/messages`, Ollama `/api/chat`) on 127.0.0.1 until SIGINT/SIGTERM; prints its URL.
    #[command(name = "mock-llm")]
    MockLlm {
        /// The script (JSON; see `tests/mock-llm/`).
        #[arg(long, required_unless_present = "demo", conflicts_with = "demo")]
        script: Option<PathBuf>,
        /// The built-in offline demo instead of a script: "Build me a gold dashboard", then
        /// "Add a gold news feed".
        #[arg(long)]
        demo: bool,
        /// Port (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Stream one model call and print its events as JSON lines (a provider check from the
    /// outside). Providers come from boardsmith.toml and the *_API_KEY variables.
    Llm {
        /// Provider key (openai, anthropic, deepseek, qwen, ollama, or one from the config).
        #[arg(long)]
        provider: Option<String>,
        /// Model id (the provider's default when absent).
        #[arg(long)]
        model: Option<String>,
        /// Tools offered: a JSON file `{"tools": [{name, description, parameters}]}`.
        #[arg(long)]
        tools: Option<PathBuf>,
        /// System prompt.
        #[arg(long)]
        system: Option<String>,
        /// Reasoning: off, low, medium or high.
        #[arg(long)]
        thinking: Option<String>,
        /// The user message.
        prompt: String,
    },
    /// Run analyst requests (tests/eval/*.json) against a real model through the in-process
    /// agent service (temp data directory) and print per request: success, panels ok/total,
    /// fix rounds, tool calls, estimated tokens and wall time. Needs a provider key.
    Eval {
        /// The agent of cases that name none.
        #[arg(long, default_value = "dashboard")]
        agent: String,
        /// Provider key (openai, anthropic, deepseek, qwen, ollama, or one from the config).
        #[arg(long)]
        provider: Option<String>,
        /// Model id (the provider's default when absent).
        #[arg(long)]
        model: Option<String>,
        /// Directory of case files.
        #[arg(long, default_value = "tests/eval")]
        cases: PathBuf,
        /// Only cases whose name contains this.
        #[arg(long)]
        only: Option<String>,
    },
    /// Internal: serve sandbox jobs on stdin/stdout.
    #[command(name = "sandbox-worker", hide = true)]
    SandboxWorker,
    /// Internal: parse one untrusted document from stdin (knowledge bases' PDFs).
    #[command(name = "doc-worker", hide = true)]
    DocWorker,
}

#[derive(Subcommand)]
enum SdkCommand {
    /// List sources with their method counts, and which provider serves each method.
    List {
        /// Print `[{name, methods: [{name, providers: [{name, status}]}]}]` instead; status is
        /// `live`, `needs-key`, `disabled` or `demo`.
        #[arg(long)]
        json: bool,
    },
    /// Print one source's spec as JSON.
    Show {
        /// Source name, e.g. `market`.
        source: String,
    },
    /// Call each live provider once with default parameters and print ok, latency or the
    /// error (exit 1 if any failed): whether this machine reaches its data providers.
    Check {
        /// Print `[{provider, method, ok, latencyMs, error}]` instead.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum BenchTarget {
    /// Sandbox latency, throughput and respawn time.
    Sandbox {
        /// Iterations per measurement.
        #[arg(long, default_value_t = 2000)]
        iterations: usize,
    },
    /// Knowledge bases: ingestion of `chunks` chunks, search latency (BM25 and hybrid with the
    /// mock model's embeddings), recall@5 on the labeled set.
    Kb {
        /// Chunks to ingest.
        #[arg(long, default_value_t = 10_000)]
        chunks: usize,
        /// Chunks per document.
        #[arg(long, default_value_t = 50)]
        per_doc: usize,
        /// The labeled set's directory.
        #[arg(long, default_value = "tests/kb")]
        labeled: std::path::PathBuf,
    },
    /// Provider-layer overhead against the mock upstream: added latency per delta and to the
    /// first event, parse throughput.
    Llm {
        /// Paced streams per provider kind (64 deltas each).
        #[arg(long, default_value_t = 30)]
        rounds: usize,
    },
    /// The agent gateway's `POST /api/query` stream and `POST /v1/chat/completions` (a server
    /// child process) against the mock upstream, versus reading the mock directly: added time
    /// to first delta and latency per delta, paced concurrent streams, open streams held and
    /// the server's memory.
    Gateway {
        /// Sequential streams per path for time to first delta (a quarter of that, paced, for
        /// latency per delta).
        #[arg(long, default_value_t = 200)]
        rounds: usize,
        /// Concurrent paced streams (64 deltas, 20 ms apart) for the gap row; also run at 2× and
        /// 4× that.
        #[arg(long, default_value_t = 500)]
        streams: usize,
        /// Concurrent paced streams for latency per delta under load.
        #[arg(long, default_value_t = 256)]
        concurrent: usize,
        /// Open streams to hold (the server's RSS is also read after the first 1,000).
        #[arg(long, default_value_t = 2000)]
        open: usize,
    },
    /// Several `boardsmith serve` nodes on one PostgreSQL database (1, 2 and 3 nodes, a fresh
    /// database each), subscribers spread over them: mutate → patch delivery overall and across
    /// nodes, durable saves/s; the embedded store's single node beside them.
    Cluster {
        /// WebSocket subscribers, spread over the nodes.
        #[arg(long, default_value_t = 1000)]
        subscribers: usize,
        /// Timed mutates per configuration, sent to each node in turn.
        #[arg(long, default_value_t = 30)]
        rounds: usize,
        /// A PostgreSQL database the bench may create (and drop) databases from.
        #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
        database_url: String,
    },
    /// What one credential can make a `serve` child hold (RSS before, peak, after; `/healthz`
    /// from another client throughout): MCP initializes, trickled request bodies, a PDF bomb.
    Hardening {
        /// MCP `initialize` requests from one `read` key.
        #[arg(long, default_value_t = 20_000)]
        initializes: usize,
        /// Connections of one `write` key trickling a request body.
        #[arg(long, default_value_t = 5000)]
        trickled: usize,
        /// Seconds between the trickled bytes.
        #[arg(long, default_value_t = 5)]
        every: u64,
        /// Skip the PDF-bomb upload.
        #[arg(long)]
        no_bomb: bool,
    },
    /// Live delivery latency, patch size, durable saves/s, refresh time, idle connections.
    Dashboards {
        /// Subscribers of the benchmarked dashboard.
        #[arg(long, default_value_t = 1000)]
        subscribers: usize,
        /// Mutate rounds timed (each delivers to every subscriber).
        #[arg(long, default_value_t = 100)]
        rounds: usize,
        /// Idle WebSocket connections to hold.
        #[arg(long, default_value_t = 10_000)]
        idle: usize,
    },
    /// The example dashboards with every data provider hanging or refusing (and offline as
    /// the reference): time for each to settle, and for its demo panels to draw.
    Outage,
    /// Alert rules judged on unwatched dashboards (a loopback Binance ticker and webhook
    /// receiver): the server's CPU per judging period and share of a core, beside it idle;
    /// time from a price move across a threshold to the webhook's POST, p50/p99.
    Alerts {
        /// Dashboards, one metric panel each.
        #[arg(long, default_value_t = 200)]
        dashboards: usize,
        /// Rules per dashboard.
        #[arg(long, default_value_t = 5)]
        rules: usize,
        /// The judging period in seconds (`BOARDSMITH_ALERT_EVERY`).
        #[arg(long, default_value_t = 10)]
        every: u64,
        /// Price moves timed (alternately firing and resolved).
        #[arg(long, default_value_t = 20)]
        moves: usize,
    },
    /// Upstream requests of one live dashboard watched by many viewers (a loopback provider
    /// counts them): at most one per panel per refresh interval.
    Upstream {
        /// Viewers (WebSockets) of the dashboard.
        #[arg(long, default_value_t = 200)]
        viewers: usize,
        /// Live panels, each a different pair (at most 16).
        #[arg(long, default_value_t = 12)]
        panels: usize,
        /// Refresh interval in seconds (at least 5).
        #[arg(long, default_value_t = 5)]
        refresh: u64,
        /// Refresh intervals measured.
        #[arg(long, default_value_t = 8)]
        intervals: u64,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let command = args.command.unwrap_or(Command::Serve { no_auth: false });
    match command {
        Command::SandboxWorker => return boardsmith::sandbox::worker::main(),
        Command::DocWorker => return boardsmith::knowledge::worker::main(),
        _ => {}
    }
    // Warnings, and the data providers' changes of state (down, back) as they happen.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,sdk::health=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Serve { no_auth } => cli::serve(no_auth).await,
            Command::Token => cli::token(),
            Command::User { command } => cli::user(command).await,
            Command::MigrateStore { to } => cli::migrate_store(&to).await,
            Command::Mcp { read_only } => cli::mcp(read_only).await,
            Command::Sdk { command: SdkCommand::List { json } } => cli::sdk_list(json),
            Command::Sdk { command: SdkCommand::Show { source } } => cli::sdk_show(&source),
            Command::Sdk { command: SdkCommand::Check { json } } => cli::sdk_check(json).await,
            Command::Run { kind, file, state, vars } => {
                cli::run(kind, &file, state.as_deref(), vars).await
            }
            Command::Bench { target: BenchTarget::Sandbox { iterations } } => {
                boardsmith::bench::sandbox(iterations).await
            }
            Command::Bench {
                target: BenchTarget::Cluster { subscribers, rounds, database_url },
            } => boardsmith::bench::cluster(subscribers, rounds, &database_url).await,
            Command::Bench { target: BenchTarget::Dashboards { subscribers, rounds, idle } } => {
                boardsmith::bench::dashboards(subscribers, rounds, idle).await
            }
            Command::Bench {
                target: BenchTarget::Upstream { viewers, panels, refresh, intervals },
            } => boardsmith::bench::upstream(viewers, panels, refresh, intervals).await,
            Command::Bench { target: BenchTarget::Outage } => boardsmith::bench::outage().await,
            Command::Bench { target: BenchTarget::Alerts { dashboards, rules, every, moves } } => {
                boardsmith::bench::alerts(dashboards, rules, every, moves).await
            }
            Command::MockMcp => {
                boardsmith::agent::tools::mcp::mock::serve_stdio().await.map(|()| ExitCode::SUCCESS)
            }
            Command::MockLlm { script, demo: _, port } => {
                cli::mock_llm(script.as_deref(), port).await
            }
            Command::Llm { provider, model, tools, system, thinking, prompt } => {
                cli::llm(cli::LlmArgs { provider, model, tools, system, thinking, prompt }).await
            }
            Command::Bench { target: BenchTarget::Kb { chunks, per_doc, labeled } } => {
                boardsmith::bench::kb(chunks, per_doc, &labeled).await
            }
            Command::Bench {
                target: BenchTarget::Hardening { initializes, trickled, every, no_bomb },
            } => {
                let every = std::time::Duration::from_secs(every.max(1));
                boardsmith::bench::hardening(initializes, trickled, every, !no_bomb).await
            }
            Command::Bench { target: BenchTarget::Llm { rounds } } => {
                boardsmith::bench::llm(rounds).await
            }
            Command::Bench {
                target: BenchTarget::Gateway { rounds, streams, concurrent, open },
            } => boardsmith::bench::gateway(rounds, streams, concurrent, open).await,
            Command::Eval { agent, provider, model, cases, only } => {
                boardsmith::eval::run(boardsmith::eval::EvalArgs {
                    agent,
                    provider,
                    model,
                    cases,
                    only,
                })
                .await
            }
            Command::SandboxWorker | Command::DocWorker => unreachable!("handled above"),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
