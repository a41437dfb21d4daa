//! `/api/chats`: the caller's chats (search with `?q=`), and `PATCH` / `DELETE
//! /api/chats/{chatId}` to rename one, put it in review mode, or delete it with its memory.
//! `agent::chats` owns the rules; `chat_access` says whose a chat is.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;
use utoipa::{IntoParams, OpenApi};

use super::envelope::{Envelope, ErrorBody};
use super::routes::{Routes, get, patch};
use super::{ApiError, ApiQuery, ok, parse_body};
use crate::chat_access::sees_chat;
use access::keys::Scope;
use access::principal::Principal;
use agent::chats::{ChatPatch, DeletedChat};
use agent::memory::{ChatSummary, validate_chat_id};
use app::App;

#[derive(OpenApi)]
#[openapi(paths(list, update, delete))]
pub(crate) struct Doc;

/// The routes of this module.
pub fn routes() -> Routes<Arc<App>> {
    Routes::new()
        .route("/api/chats", get(Scope::Agents, list))
        .route("/api/chats/{chatId}", patch(Scope::Agents, update).delete(Scope::Agents, delete))
}

/// Which chats.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only chats whose title or messages contain this text (case-insensitive).
    #[serde(default)]
    q: Option<String>,
}

/// The caller's chats (every chat for admins), most recently updated first.
#[utoipa::path(
    get,
    path = "/api/chats",
    tag = "chats",
    params(ListQuery),
    responses((status = 200, description = "The chats.", body = Envelope<Vec<ChatSummary>>), (status = "default", response = ErrorBody))
)]
async fn list(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let chats: Vec<ChatSummary> = app
        .chats
        .list()
        .await?
        .into_iter()
        .filter(|c| sees_chat(&who, c.owner.as_deref()))
        .collect();
    let chats = match q.q.as_deref() {
        Some(q) => app.chats.search(chats, q).await?,
        None => chats,
    };
    Ok(ok(chats))
}

/// The chat, when `who` may see it (404 otherwise, as for no chat).
async fn visible(app: &App, who: &Principal, chat_id: &str) -> Result<ChatSummary, ApiError> {
    validate_chat_id(chat_id)?;
    let chat = app.chats.get(chat_id).await?;
    if sees_chat(who, chat.owner.as_deref()) {
        Ok(chat)
    } else {
        Err(ApiError::NotFound(format!("chat `{chat_id}` not found")))
    }
}

/// Renames a chat, or turns its review mode on or off (the agent's dashboard changes in it
/// become drafts to accept).
#[utoipa::path(
    patch,
    path = "/api/chats/{chatId}",
    tag = "chats",
    params(("chatId" = String, Path, description = "The chat.")),
    request_body = ChatPatch,
    responses((status = 200, description = "The chat as listed.", body = Envelope<ChatSummary>), (status = "default", response = ErrorBody))
)]
async fn update(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(chat_id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let patch: ChatPatch = parse_body(&body)?;
    visible(&app, &who, &chat_id).await?;
    Ok(ok(app.chats.update(&chat_id, patch).await?))
}

/// Deletes a chat for good: its runs (after a run in progress ends), its settings, and the
/// images only it referred to.
#[utoipa::path(
    delete,
    path = "/api/chats/{chatId}",
    tag = "chats",
    params(("chatId" = String, Path, description = "The chat.")),
    responses((status = 200, description = "What was deleted.", body = Envelope<DeletedChat>), (status = "default", response = ErrorBody))
)]
async fn delete(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Principal>,
    Path(chat_id): Path<String>,
) -> Result<Response, ApiError> {
    visible(&app, &who, &chat_id).await?;
    Ok(ok(app.chats.delete(&chat_id).await?))
}
