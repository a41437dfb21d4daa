//! MCP sessions over HTTP, bounded and reclaimed. The SDK's `LocalSessionManager` keeps the
//! sessions themselves (their workers, channels and streams); [`Sessions`] wraps it and keeps
//! the book it lacks: which credential made each session, when it was last used and how many of
//! its streams are open. With that book:
//!
//! - **a cap per credential** (`BOARDSMITH_MCP_SESSIONS_PER_KEY`, 64): a credential's new
//!   session past it closes that credential's least recently used one;
//! - **a total cap** (`BOARDSMITH_MCP_MAX_SESSIONS`, 1024): a new session past it closes the
//!   least recently used session of the credential holding the most (the heaviest user pays,
//!   never a light one while a heavy one exists);
//! - **idle expiry** (`BOARDSMITH_MCP_SESSION_IDLE_SECS`, 30 min): a sweeper closes sessions
//!   with no request and no open stream for that long; it runs until the server's shutdown.
//!
//! Eviction rather than refusal: the official SDKs answer a `404` for their session id by
//! initializing again, so an evicted client recovers by itself, while a refused `initialize`
//! is a failed connection. A session is also bound to its credential: another credential's
//! request naming it gets the same `404`, and its `DELETE` closes nothing.
//!
//! The caller is told by a task-local set around each `/mcp` request ([`with_caller`]), since
//! the SDK calls `create_session` without the request. Must not know routes, keys or scopes
//! beyond the caller's name.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionManager};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId};
use tokio_util::sync::CancellationToken;

use access::principal::Principal;

/// Bounds on MCP sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimits {
    /// Live sessions one credential may hold (`BOARDSMITH_MCP_SESSIONS_PER_KEY`, 64).
    pub per_credential: usize,
    /// Live sessions in all (`BOARDSMITH_MCP_MAX_SESSIONS`, 1024).
    pub total: usize,
    /// A session with no request and no open stream for this long is closed
    /// (`BOARDSMITH_MCP_SESSION_IDLE_SECS`, 30 min).
    pub idle: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { per_credential: 64, total: 1024, idle: Duration::from_secs(30 * 60) }
    }
}

impl SessionLimits {
    /// The defaults, overridden by the `BOARDSMITH_MCP_*` variables above (zero is ignored).
    pub fn from_env() -> Self {
        let num = |k: &str| {
            std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n > 0)
        };
        let mut limits = Self::default();
        if let Some(n) = num("BOARDSMITH_MCP_SESSIONS_PER_KEY") {
            limits.per_credential = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = num("BOARDSMITH_MCP_MAX_SESSIONS") {
            limits.total = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(s) = num("BOARDSMITH_MCP_SESSION_IDLE_SECS") {
            limits.idle = Duration::from_secs(s);
        }
        limits
    }
}

tokio::task_local! {
    /// The credential of the `/mcp` request being served.
    static CALLER: Arc<str>;
}

/// The name sessions are booked under ([`Principal::holder`]).
fn caller_name(principal: Option<&Principal>) -> Arc<str> {
    principal.map_or_else(|| Arc::from("owner"), |p| p.holder().into())
}

/// Middleware on `/mcp`: serves the request with its caller known to [`Sessions`].
#[base::boxed]
pub async fn with_caller(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let caller = caller_name(req.extensions().get::<Principal>());
    CALLER.scope(caller, next.run(req)).await
}

/// The caller of the request being served, if any (the SDK's own tasks have none).
fn caller() -> Option<Arc<str>> {
    CALLER.try_with(Arc::clone).ok()
}

/// One live session in the book.
#[derive(Debug)]
struct Entry {
    owner: Arc<str>,
    last_used: Instant,
    /// Response streams open now (a listening client is not idle).
    streams: usize,
}

/// Which credential holds which sessions.
#[derive(Debug, Default)]
struct Book {
    sessions: HashMap<SessionId, Entry>,
    held: HashMap<Arc<str>, usize>,
}

impl Book {
    fn insert(&mut self, id: SessionId, owner: Arc<str>) {
        *self.held.entry(owner.clone()).or_default() += 1;
        self.sessions.insert(id, Entry { owner, last_used: Instant::now(), streams: 0 });
    }

    fn remove(&mut self, id: &SessionId) -> Option<Entry> {
        let entry = self.sessions.remove(id)?;
        if let Some(n) = self.held.get_mut(&entry.owner) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&entry.owner);
            }
        }
        Some(entry)
    }

    /// The least recently used session of `owner` (one without open streams first).
    fn lru_of(&self, owner: &str) -> Option<SessionId> {
        self.sessions
            .iter()
            .filter(|(_, e)| &*e.owner == owner)
            .min_by_key(|(_, e)| (e.streams > 0, e.last_used))
            .map(|(id, _)| id.clone())
    }

    /// Sessions to close so that `owner` may open one more within `limits`; taken out of the
    /// book.
    fn make_room(&mut self, owner: &str, limits: &SessionLimits) -> Vec<SessionId> {
        let mut victims = Vec::new();
        while self.held.get(owner).copied().unwrap_or(0) >= limits.per_credential.max(1) {
            let Some(id) = self.lru_of(owner) else { break };
            self.remove(&id);
            victims.push(id);
        }
        while self.sessions.len() >= limits.total.max(1) {
            let heaviest = self.held.iter().max_by_key(|(_, n)| **n).map(|(o, _)| o.clone());
            let Some(id) = heaviest.and_then(|o| self.lru_of(&o)) else { break };
            self.remove(&id);
            victims.push(id);
        }
        victims
    }

    /// Sessions idle for `idle` at `now`; taken out of the book.
    fn take_idle(&mut self, now: Instant, idle: Duration) -> Vec<SessionId> {
        let ids: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, e)| e.streams == 0 && now.duration_since(e.last_used) >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            self.remove(id);
        }
        ids
    }

    /// Whether `caller` may use session `id` (a session not in the book is the SDK's to
    /// answer for).
    fn usable_by(&self, id: &SessionId, caller: Option<&str>) -> bool {
        match (self.sessions.get(id), caller) {
            (Some(e), Some(c)) => &*e.owner == c,
            _ => true,
        }
    }
}

/// The SDK's session manager with caps and idle expiry (see the module doc).
#[derive(Debug)]
pub struct Sessions {
    inner: LocalSessionManager,
    book: Arc<Mutex<Book>>,
    limits: SessionLimits,
}

impl Sessions {
    /// Sessions within `limits`; the idle sweeper runs until `shutdown` is cancelled.
    pub fn start(limits: SessionLimits, shutdown: CancellationToken) -> Arc<Self> {
        let mut inner = LocalSessionManager::default();
        // The sweeper owns expiry: the SDK's own timer counts only messages, so it would close
        // a client that is listening on its stream and has nothing to say.
        inner.session_config.keep_alive = None;
        let sessions = Arc::new(Self { inner, book: Arc::default(), limits });
        tokio::spawn(sweep(Arc::downgrade(&sessions), shutdown));
        sessions
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes sessions already taken out of the book.
    async fn close_all(&self, ids: Vec<SessionId>, why: &str) {
        for id in ids {
            tracing::debug!(session = %id, why, "closing an MCP session");
            if let Err(e) = self.inner.close_session(&id).await {
                tracing::warn!(session = %id, error = %e, "closing an MCP session failed");
            }
        }
    }

    /// Marks `id` used now, if the caller may use it.
    fn touch(&self, id: &SessionId) -> bool {
        let caller = caller();
        let mut book = self.book();
        if !book.usable_by(id, caller.as_deref()) {
            return false;
        }
        if let Some(e) = book.sessions.get_mut(id) {
            e.last_used = Instant::now();
        }
        true
    }

    /// `stream`, counted as open on session `id` until dropped.
    fn tracked<S>(&self, id: &SessionId, stream: S) -> Tracked<S> {
        if let Some(e) = self.book().sessions.get_mut(id) {
            e.streams += 1;
            e.last_used = Instant::now();
        }
        Tracked { inner: Box::pin(stream), book: self.book.clone(), id: id.clone() }
    }

    /// The refusal for a session the caller may not use: the SDK's own "not found".
    fn not_found(id: &SessionId) -> <LocalSessionManager as SessionManager>::Error {
        rmcp::transport::streamable_http_server::session::local::LocalSessionManagerError::SessionNotFound(id.clone())
    }
}

/// The idle sweeper: every quarter of the idle time (at most a minute), closes idle sessions.
async fn sweep(sessions: std::sync::Weak<Sessions>, shutdown: CancellationToken) {
    let period = sessions.upgrade().map_or(Duration::from_secs(60), |s| {
        (s.limits.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(60))
    });
    loop {
        tokio::select! {
            () = tokio::time::sleep(period) => {}
            () = shutdown.cancelled() => return,
        }
        let Some(sessions) = sessions.upgrade() else { return };
        let idle = sessions.book().take_idle(Instant::now(), sessions.limits.idle);
        sessions.close_all(idle, "idle").await;
    }
}

/// A response stream that keeps its session from looking idle while open.
struct Tracked<S> {
    inner: Pin<Box<S>>,
    book: Arc<Mutex<Book>>,
    id: SessionId,
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl<S> Drop for Tracked<S> {
    fn drop(&mut self) {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = book.sessions.get_mut(&self.id) {
            e.streams = e.streams.saturating_sub(1);
            e.last_used = Instant::now();
        }
    }
}

impl SessionManager for Sessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let owner = caller().unwrap_or_else(|| Arc::from("unattributed"));
        let victims = self.book().make_room(&owner, &self.limits);
        self.close_all(victims, "over the session cap").await;
        let (id, transport) = self.inner.create_session().await?;
        self.book().insert(id.clone(), owner);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if !self.touch(id) {
            return Ok(false);
        }
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // A request's DELETE closes only its caller's session; the SDK's own close (the
        // session ended) has no caller.
        let caller = caller();
        {
            let mut book = self.book();
            if !book.usable_by(id, caller.as_deref()) {
                return Ok(());
            }
            book.remove(id);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.tracked(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(self.tracked(id, stream))
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No external session store: an unknown session is a 404 and the client starts anew.
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per: usize, total: usize) -> SessionLimits {
        SessionLimits { per_credential: per, total, idle: Duration::from_secs(60) }
    }

    fn id(s: &str) -> SessionId {
        Arc::from(s)
    }

    /// Sessions a0, a1, a2 of `key:a` used in that order, then b0 of `key:b`.
    fn three_of_a_and_one_of_b() -> Book {
        let mut book = Book::default();
        let t0 = Instant::now();
        for (n, (s, owner)) in
            [("a0", "key:a"), ("a1", "key:a"), ("a2", "key:a"), ("b0", "key:b")].iter().enumerate()
        {
            book.insert(id(s), Arc::from(*owner));
            book.sessions.get_mut(&id(s)).unwrap().last_used = t0 + Duration::from_secs(n as u64);
        }
        book
    }

    #[test]
    fn a_credential_past_its_cap_loses_its_least_recently_used_session() {
        let mut book = three_of_a_and_one_of_b();
        // a0 is the least recently used, but it has a stream open.
        book.sessions.get_mut(&id("a0")).unwrap().streams = 1;
        assert_eq!(book.make_room("key:a", &limits(3, 100)), vec![id("a1")]);
        assert_eq!(book.held["key:a"], 2);
        assert_eq!(book.held["key:b"], 1);
        // Under the cap: nothing to close.
        assert!(book.make_room("key:b", &limits(3, 100)).is_empty());
    }

    #[test]
    fn at_the_total_cap_the_heaviest_credential_pays() {
        let mut book = three_of_a_and_one_of_b();
        let victims = book.make_room("key:b", &limits(10, 4));
        assert_eq!(victims, vec![id("a0")]);
        assert_eq!(book.sessions.len(), 3);
    }

    #[test]
    fn idle_sessions_without_streams_expire_and_sessions_belong_to_their_maker() {
        let mut book = Book::default();
        book.insert(id("x"), Arc::from("owner"));
        book.insert(id("y"), Arc::from("owner"));
        book.sessions.get_mut(&id("y")).unwrap().streams = 1;
        let later = Instant::now() + Duration::from_secs(120);
        assert_eq!(book.take_idle(later, Duration::from_secs(60)), vec![id("x")]);
        assert!(book.usable_by(&id("y"), Some("owner")));
        assert!(!book.usable_by(&id("y"), Some("key:k")));
        assert!(book.usable_by(&id("y"), None));
        assert!(book.usable_by(&id("gone"), Some("key:k")));
    }
}
