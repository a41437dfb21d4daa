//! The streamable HTTP service mounted at `/mcp`. The access guard in front of every route has
//! already checked Host, Origin and the credential; the SDK's own Host and Origin checks are
//! turned on with the same lists as a second layer (its Origin check is off unless given a
//! list). Sessions are kept for clients of protocol versions before 2026-07-28, which need them
//! for `resources/subscribe`, within the caps and idle expiry of [`Sessions`]; 2026-07-28
//! requests are served statelessly.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::server::{McpServer, Shared};
use super::sessions::{SessionLimits, Sessions, with_caller};
use access::Access;

/// Largest JSON-RPC request body (a builder's code is the big part; states are capped well
/// below this by the store's quota).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The service for `Router::nest_service("/mcp", ...)`; `shutdown` ends its streams and its
/// sessions' idle sweeper.
pub fn service(
    shared: Arc<Shared>,
    access: &Access,
    limits: &SessionLimits,
    shutdown: CancellationToken,
) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(access.host_list())
        .with_allowed_origins(access.origin_list())
        .enforce_origin_validation()
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(shutdown.clone());
    let sessions = Sessions::start(limits.clone(), shutdown);
    let mcp =
        StreamableHttpService::new(move || Ok(McpServer::new(shared.clone())), sessions, config);
    axum::Router::new().fallback_service(mcp).layer(axum::middleware::from_fn(with_caller))
}
