//! A loopback HTTP server replaying scripted replies per path, recording every hit: the
//! upstream that `http` backings are pointed at in tests (`sdk_backings`, `providers`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// One scripted reply.
#[derive(Clone)]
pub enum Reply {
    /// Status and body (sent as `application/json`).
    Body(u16, String),
    /// Status and body sent as `text/plain` (CSV files, plain-text notices).
    Text(u16, String),
    /// Sleep, then 200 with the body.
    Slow(Duration, String),
    /// Accept the request and never answer.
    Hang,
}

struct Hit {
    path: String,
    query: String,
    headers: HeaderMap,
    body: String,
}

#[derive(Default)]
struct Upstream {
    hits: Mutex<Vec<Hit>>,
    /// path → replies; the last one repeats.
    script: Mutex<HashMap<String, VecDeque<Reply>>>,
}

async fn handle(State(up): State<Arc<Upstream>>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let headers = req.headers().clone();
    let body = axum::body::to_bytes(req.into_body(), 1 << 20).await.unwrap_or_default();
    let body = String::from_utf8_lossy(&body).into_owned();
    up.hits.lock().unwrap().push(Hit { path: path.clone(), query, headers, body });
    let reply = {
        let mut script = up.script.lock().unwrap();
        match script.get_mut(&path) {
            Some(q) if q.len() > 1 => q.pop_front(),
            Some(q) => q.front().cloned(),
            None => None,
        }
    };
    // No connection outlives its request, so a stopped server refuses every later one.
    let send = |code: u16, kind: &'static str, body: String| {
        let status = StatusCode::from_u16(code).unwrap();
        (status, [("content-type", kind), ("connection", "close")], body).into_response()
    };
    match reply {
        Some(Reply::Body(code, body)) => send(code, "application/json", body),
        Some(Reply::Text(code, body)) => send(code, "text/plain", body),
        Some(Reply::Slow(d, body)) => {
            tokio::time::sleep(d).await;
            send(200, "application/json", body)
        }
        Some(Reply::Hang) => std::future::pending().await,
        None => send(404, "application/json", format!("{{\"error\":\"no route {path}\"}}")),
    }
}

fn serve(listener: tokio::net::TcpListener, up: Arc<Upstream>) -> tokio::task::JoinHandle<()> {
    let app = Router::new().fallback(handle).with_state(up);
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    })
}

/// The running server: its origin (`http://127.0.0.1:port`) and what it was asked.
pub struct Server {
    pub origin: String,
    up: Arc<Upstream>,
    addr: std::net::SocketAddr,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Server {
    pub async fn start() -> Self {
        let up = Arc::new(Upstream::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = Mutex::new(Some(serve(listener, up.clone())));
        Self { origin: format!("http://{addr}"), up, addr, task }
    }

    /// Stops listening: connections to it are refused until [`Server::restart`].
    pub fn stop(&self) {
        if let Some(t) = self.task.lock().unwrap().take() {
            t.abort();
        }
    }

    /// Listens again on the same port, with the same script.
    pub async fn restart(&self) {
        self.stop();
        let listener = loop {
            match tokio::net::TcpListener::bind(self.addr).await {
                Ok(l) => break l,
                // The aborted task may not have dropped its listener yet.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        *self.task.lock().unwrap() = Some(serve(listener, self.up.clone()));
    }

    /// Scripts the replies for `path` (the last one repeats).
    pub fn on(&self, path: &str, replies: Vec<Reply>) {
        self.up.script.lock().unwrap().insert(path.to_owned(), replies.into());
    }

    /// How many requests reached `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.up.hits.lock().unwrap().iter().filter(|h| h.path == path).count()
    }

    /// Headers and body of every hit on `path`, in order (webhook receivers).
    pub fn posts(&self, path: &str) -> Vec<(HeaderMap, String)> {
        let hits = self.up.hits.lock().unwrap();
        hits.iter()
            .filter(|h| h.path == path)
            .map(|h| (h.headers.clone(), h.body.clone()))
            .collect()
    }

    /// Query strings of every hit on `path`, in order.
    pub fn queries(&self, path: &str) -> Vec<String> {
        let hits = self.up.hits.lock().unwrap();
        hits.iter().filter(|h| h.path == path).map(|h| h.query.clone()).collect()
    }

    /// Query string and headers of the last hit on `path`.
    pub fn last(&self, path: &str) -> (String, HeaderMap) {
        let hits = self.up.hits.lock().unwrap();
        let h = hits.iter().rev().find(|h| h.path == path).expect("no hit");
        (h.query.clone(), h.headers.clone())
    }
}
