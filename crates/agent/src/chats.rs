//! Chats as their person manages them: the list with each chat's title (the one given, else
//! one made from its first exchange) and review mode, search, rename, delete, and the
//! retention that deletes chats untouched for a number of days.
//!
//! Owns the chat settings (store kind `chat_meta`, by chat id: `{title?, review?}`), kept in
//! the store on both engines (embedded chats are files, their settings are not). A delete
//! removes the chat's runs ([`ChatMemory::delete`]: its file, or its rows on every node), its
//! settings, and the images its messages refer to that no other chat refers to.
//!
//! Knows nothing of HTTP or of who may see a chat: the gateway filters by owner first.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use store::{Record, Store, StoreError};
use uploads::Uploads;

use crate::memory::{ChatMemory, ChatSummary, MemoryError, RunRecord, StoredMessage};

/// The longest title a person may give a chat (characters).
pub const MAX_TITLE_CHARS: usize = 120;

/// Errors of managing chats.
#[derive(Debug, thiserror::Error)]
pub enum ChatsError {
    /// Chat memory failed (or has no such chat).
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The store failed.
    #[error("chat settings: {0}")]
    Store(#[from] StoreError),
    /// A title that is empty or too long.
    #[error("{0}")]
    BadTitle(String),
}

/// A chat's settings, as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChatMeta {
    /// The title its person gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    /// The agent's dashboard changes in this chat are drafts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    review: bool,
}

/// A change to a chat's settings (`PATCH /api/chats/{id}`); absent fields stay.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatPatch {
    /// A new title (1 to 120 characters, trimmed).
    #[serde(default)]
    pub title: Option<String>,
    /// Review mode: the agent's dashboard changes in this chat become drafts to accept.
    #[serde(default)]
    pub review: Option<bool>,
}

/// What a delete removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletedChat {
    /// The chat.
    pub chat_id: String,
    /// The images it referred to that no other chat did, now deleted.
    pub uploads: Vec<String>,
}

/// Chats, their settings and their retention. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct Chats {
    memory: ChatMemory,
    store: Arc<Store>,
    uploads: Arc<Uploads>,
}

impl Chats {
    /// Chats over `memory`, with settings in `store` and images in `uploads`.
    pub fn new(memory: ChatMemory, store: Arc<Store>, uploads: Arc<Uploads>) -> Self {
        Self { memory, store, uploads }
    }

    /// Every chat, newest first, with its settings applied.
    #[base::boxed]
    pub async fn list(&self) -> Result<Vec<ChatSummary>, ChatsError> {
        let mut chats = self.memory.list_chats().await?;
        let metas: std::collections::HashMap<String, ChatMeta> = self
            .store
            .records_with_ids(Record::ChatMeta)
            .await?
            .into_iter()
            .filter_map(|(id, v)| Some((id, serde_json::from_value(v).ok()?)))
            .collect();
        for chat in &mut chats {
            if let Some(meta) = metas.get(&chat.chat_id) {
                apply(chat, meta);
            }
        }
        Ok(chats)
    }

    /// The chats among `chats` whose title or any message contains `query` (case-insensitive).
    #[base::boxed]
    pub async fn search(
        &self,
        chats: Vec<ChatSummary>,
        query: &str,
    ) -> Result<Vec<ChatSummary>, ChatsError> {
        let needle = query.trim().to_lowercase();
        if needle.is_empty() {
            return Ok(chats);
        }
        let mut out = Vec::new();
        for chat in chats {
            let hit = chat.title.to_lowercase().contains(&needle)
                || self.memory.runs(&chat.chat_id).await?.iter().any(|r| mentions(r, &needle));
            if hit {
                out.push(chat);
            }
        }
        Ok(out)
    }

    /// One chat's list entry ([`MemoryError::NotFound`] when it has no run).
    #[base::boxed]
    pub async fn get(&self, chat_id: &str) -> Result<ChatSummary, ChatsError> {
        self.list()
            .await?
            .into_iter()
            .find(|c| c.chat_id == chat_id)
            .ok_or_else(|| MemoryError::NotFound(chat_id.to_owned()).into())
    }

    /// Whether the chat is in review mode (false for a chat not stored yet).
    #[base::boxed]
    pub async fn in_review(&self, chat_id: &str) -> Result<bool, ChatsError> {
        Ok(self.meta(chat_id).await?.review)
    }

    /// Changes a chat's title or review mode; answers its entry.
    #[base::boxed]
    pub async fn update(&self, chat_id: &str, patch: ChatPatch) -> Result<ChatSummary, ChatsError> {
        // The chat must exist: settings of no chat would linger.
        self.get(chat_id).await?;
        let mut meta = self.meta(chat_id).await?;
        if let Some(title) = patch.title {
            let title = title.trim();
            let chars = title.chars().count();
            if chars == 0 || chars > MAX_TITLE_CHARS {
                return Err(ChatsError::BadTitle(format!(
                    "a chat's title is 1 to {MAX_TITLE_CHARS} characters, got {chars}"
                )));
            }
            if title.chars().any(char::is_control) {
                return Err(ChatsError::BadTitle("a chat's title is one line of text".into()));
            }
            meta.title = Some(title.to_owned());
        }
        if let Some(review) = patch.review {
            meta.review = review;
        }
        let value = serde_json::to_value(&meta).unwrap_or(Value::Null);
        self.store.put_record(Record::ChatMeta, chat_id, &value).await?;
        self.get(chat_id).await
    }

    /// Deletes a chat: its runs (after a run in progress ends), its settings, and the images
    /// only it referred to.
    #[base::boxed]
    pub async fn delete(&self, chat_id: &str) -> Result<DeletedChat, ChatsError> {
        let mine: HashSet<String> =
            self.memory.runs(chat_id).await?.iter().flat_map(images).collect();
        self.memory.delete(chat_id).await?;
        self.store.delete_record(Record::ChatMeta, chat_id).await?;
        let mut gone = Vec::new();
        if !mine.is_empty() {
            let mut elsewhere = HashSet::new();
            for chat in self.memory.list_chats().await? {
                elsewhere.extend(self.memory.runs(&chat.chat_id).await?.iter().flat_map(images));
            }
            let mut orphans: Vec<String> = mine.difference(&elsewhere).cloned().collect();
            orphans.sort();
            for id in orphans {
                match self.uploads.delete(&id, None).await {
                    Ok(()) => gone.push(id),
                    // Already gone, or never stored (an image by URL): nothing to remove.
                    Err(e) => {
                        tracing::debug!(upload = %id, error = %e, "chat delete: image not removed")
                    }
                }
            }
        }
        Ok(DeletedChat { chat_id: chat_id.to_owned(), uploads: gone })
    }

    /// Deletes every chat not updated for `days` days (`now_ms` is the time now); answers the
    /// ids deleted. A chat another node deleted meanwhile is skipped.
    #[base::boxed]
    pub async fn expire(&self, days: u32, now_ms: i64) -> Result<Vec<String>, ChatsError> {
        let cutoff = now_ms - i64::from(days) * 86_400_000;
        let mut deleted = Vec::new();
        for chat in self.memory.list_chats().await? {
            if chat.updated_at >= cutoff {
                continue;
            }
            match self.delete(&chat.chat_id).await {
                Ok(_) => deleted.push(chat.chat_id),
                Err(ChatsError::Memory(MemoryError::NotFound(_))) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }

    async fn meta(&self, chat_id: &str) -> Result<ChatMeta, ChatsError> {
        Ok(self
            .store
            .record(Record::ChatMeta, chat_id)
            .await?
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default())
    }
}

fn apply(chat: &mut ChatSummary, meta: &ChatMeta) {
    if let Some(title) = &meta.title {
        chat.title.clone_from(title);
    }
    chat.review = meta.review;
}

/// Whether a run's messages (the person's and the agent's words) contain `needle` (lowercase).
fn mentions(run: &RunRecord, needle: &str) -> bool {
    run.query.message.to_lowercase().contains(needle)
        || run.messages.iter().any(|m| match m {
            StoredMessage::User(u) => {
                u.content.iter().any(|p| p.text.to_lowercase().contains(needle))
            }
            StoredMessage::Assistant(a) => {
                a.content.iter().flatten().any(|p| p.text.to_lowercase().contains(needle))
            }
            StoredMessage::Tool(_) => false,
        })
}

/// The uploaded images (by id) a run's messages refer to.
fn images(run: &RunRecord) -> Vec<String> {
    run.messages
        .iter()
        .filter_map(|m| match m {
            StoredMessage::User(u) => Some(u.content.iter()),
            _ => None,
        })
        .flatten()
        .filter_map(|p| p.upload.as_ref()?.sha256.clone())
        .collect()
}
