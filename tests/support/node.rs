//! `boardsmith serve` as a child process: what a real deployment runs, killable with SIGKILL.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// A running `boardsmith serve`; SIGKILLed when dropped (no graceful anything).
pub struct Node {
    process: std::process::Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// A client sending the node's token.
    pub http: reqwest::Client,
    token: String,
}

impl Node {
    /// Starts `boardsmith serve` over `dir` (its data, agents, tools, viewports and workflows
    /// directories; the working directory) with the given token and extra environment, and
    /// waits until `/healthz` answers.
    pub async fn start(dir: &Path, token: &str, env: &[(&str, String)]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut command = std::process::Command::new(super::program());
        command
            .arg("serve")
            .env_clear()
            .env("BOARDSMITH_ADDR", format!("127.0.0.1:{port}"))
            .env("BOARDSMITH_TOKEN", token)
            .env("BOARDSMITH_DATA", dir.join("data"))
            .env("BOARDSMITH_WORKFLOWS_DIR", dir.join("workflows"))
            .env("AGENT_EXTERNAL_DIR", dir.join("agents"))
            .env("AGENT_TOOLS_EXTERNAL_DIR", dir.join("tools"))
            .env("AGENT_VIEWPORT_EXTERNAL_DIR", dir.join("viewports"))
            .env("BOARDSMITH_WORKERS", "1")
            // Tests never reach real hosts (the start-up check calls every live provider);
            // a test that wants live providers points them at loopback and sets it to 0.
            .env("BOARDSMITH_OFFLINE", "1")
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("server.log")).unwrap());
        // `boardsmith.toml` in the working directory is read when present.
        for (k, v) in env {
            command.env(k, v);
        }
        let process = command.spawn().unwrap();
        let node = Self {
            process,
            base: format!("http://127.0.0.1:{port}"),
            http: super::authed_client(token),
            token: token.to_owned(),
        };
        for _ in 0..600 {
            if node.http.get(node.url("/healthz")).send().await.is_ok() {
                return node;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        panic!("the server did not start:\n{log}");
    }

    /// An absolute URL on this node.
    /// Opens a WebSocket to `/ws` with the node's token.
    pub async fn ws(&self) -> super::Ws {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let url = format!("{}/ws", self.base.replacen("http://", "ws://", 1));
        let mut req = url.into_client_request().unwrap();
        req.headers_mut()
            .insert("authorization", format!("Bearer {}", self.token).parse().unwrap());
        tokio_tungstenite::connect_async(req).await.unwrap().0
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET, returning (status, body).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// A request with a JSON body, returning (status, body).
    pub async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let r = self.http.request(method, self.url(path)).json(&body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// Opens a signed-in WebSocket to `/ws` and subscribes to a dashboard; returns the socket
    /// and the snapshot.
    pub async fn subscribe(&self, dashboard_id: &str) -> (super::Ws, Value) {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req =
            format!("{}/ws", self.base.replace("http://", "ws://")).into_client_request().unwrap();
        req.headers_mut()
            .insert("authorization", format!("Bearer {}", self.token).parse().unwrap());
        let mut ws = tokio_tungstenite::connect_async(req).await.unwrap().0;
        super::ws_send(
            &mut ws,
            serde_json::json!({"type": "subscribe", "dashboardId": dashboard_id}),
        )
        .await;
        let (snap, _) = super::ws_until(&mut ws, |m| m["type"] == "dashboard.snapshot").await;
        (ws, snap)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// Waits (up to `limit`) for the process to exit; its status if it did.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until {
            if let Ok(Some(status)) = self.process.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// SIGKILL, now.
    pub fn kill(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Writes `boardsmith.toml` into `dir`: one OpenAI-compatible provider `mock` at the mock
/// model server `mock_url`, its default model `model` (32k context, taking images when
/// `vision`), no retries.
pub fn mock_model(dir: &Path, mock_url: &str, model: &str, vision: bool) {
    let config = format!(
        "[providers.mock]\nkind = \"openai\"\nbase_url = \"{mock_url}/v1\"\nrequires_key = false\n\
         default_model = \"{model}\"\n\
         models = [{{ id = \"{model}\", context_window = 32000, vision = {vision} }}]\n\
         retry = {{ max_retries = 0 }}\n"
    );
    std::fs::write(dir.join("boardsmith.toml"), config).unwrap();
}

/// `n` nodes on the PostgreSQL database `db_url` (with `env` besides), each over a directory
/// of its own that `prepare` fills before the node starts; the directories live as long as
/// the caller keeps them.
pub async fn cluster(
    db_url: &str,
    n: usize,
    token: &str,
    env: &[(&str, String)],
    prepare: impl Fn(&Path),
) -> (Vec<tempfile::TempDir>, Vec<Node>) {
    let mut env = env.to_vec();
    env.push(("BOARDSMITH_DATABASE_URL", db_url.to_owned()));
    let mut dirs = Vec::new();
    let mut nodes = Vec::new();
    for _ in 0..n {
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path());
        nodes.push(Node::start(dir.path(), token, &env).await);
        dirs.push(dir);
    }
    (dirs, nodes)
}

/// Which of `nodes` holds dashboard `id`'s refresh lease on the database `db_url` (the node
/// that refreshes it and judges its alert rules), by the node id `/readyz` names.
pub async fn lease_owner(db_url: &str, id: &str, nodes: &[Node]) -> usize {
    let (client, conn) = tokio_postgres::connect(db_url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    let owner: String = client
        .query_one("SELECT node FROM refresh_leases WHERE dashboard_id = $1", &[&id])
        .await
        .unwrap()
        .get(0);
    for (i, node) in nodes.iter().enumerate() {
        if node.get("/readyz").await.1["data"]["node"] == Value::String(owner.clone()) {
            return i;
        }
    }
    panic!("the lease names {owner}, none of the nodes");
}
