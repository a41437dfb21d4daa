//! Chat memory's lines in a shared store: each chat an ordered list of text lines, appended one
//! at a time (PostgreSQL's `chat_runs`). The store knows nothing of what a line says; chat
//! memory (`agent::memory`) owns the format and decides what to append. With the embedded
//! store chats are files of their own (`MEMORY_CHAT_DIR`), so every call here answers
//! [`StoreError::Storage`].

use super::postgres::Postgres;
use super::{Engine, Store, StoreError};

/// One stored line of a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatLine {
    /// The chat.
    pub chat_id: String,
    /// Larger than the id of every line of the chat stored before it (not dense; ids of
    /// different chats order nothing).
    pub id: i64,
    /// When it was written, as its writer said (unix milliseconds).
    pub updated_at: i64,
    /// The line.
    pub line: String,
}

/// Where a chat's lines start and end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatSpan {
    /// The chat.
    pub chat_id: String,
    /// Its first line's id.
    pub first: i64,
    /// Its last line's id: a chat whose `first` and `last` are unchanged holds the same lines.
    pub last: i64,
    /// How many lines it has.
    pub lines: u64,
}

impl Store {
    fn chat_engine(&self) -> Result<&Postgres, StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Err(StoreError::Storage(
                "chats are kept in files (MEMORY_CHAT_DIR) with the embedded store, not in it"
                    .into(),
            )),
            Engine::Postgres(p) => Ok(p),
        }
    }

    /// Appends `line` to `chat_id` and answers its id, unless `after` is given and the chat
    /// already has a line past it: then nothing is written and the answer is `None` (read the
    /// new lines and decide again). Appends to one chat are serialized cluster-wide, so a
    /// chat's ids grow in the order its lines commit.
    #[base::boxed]
    pub async fn append_chat_line(
        &self,
        chat_id: &str,
        after: Option<i64>,
        updated_at: i64,
        line: &str,
    ) -> Result<Option<i64>, StoreError> {
        self.chat_engine()?.append_chat_line(chat_id, after, updated_at, line).await
    }

    /// A chat's lines after the one with id `after` (0: all of them), in order; none for an
    /// unknown chat.
    #[base::boxed]
    pub async fn chat_lines(&self, chat_id: &str, after: i64) -> Result<Vec<ChatLine>, StoreError> {
        self.chat_engine()?.chat_lines(chat_id, after).await
    }

    /// The lines of any chats with these ids, by id.
    #[base::boxed]
    pub async fn chat_lines_by_id(&self, ids: &[i64]) -> Result<Vec<ChatLine>, StoreError> {
        self.chat_engine()?.chat_lines_by_id(ids).await
    }

    /// Every chat with at least one line, by chat id.
    #[base::boxed]
    pub async fn chat_index(&self) -> Result<Vec<ChatSpan>, StoreError> {
        self.chat_engine()?.chat_index().await
    }

    /// Deletes every line of a chat; answers how many there were (0: no such chat).
    #[base::boxed]
    pub async fn delete_chat(&self, chat_id: &str) -> Result<u64, StoreError> {
        self.chat_engine()?.delete_chat(chat_id).await
    }

    /// Writes a chat's lines (with their times) in order, in one transaction; the target of
    /// `boardsmith migrate-store`. A chat that already has lines is refused.
    #[base::boxed]
    pub async fn import_chat(
        &self,
        chat_id: &str,
        lines: &[(i64, String)],
    ) -> Result<(), StoreError> {
        self.chat_engine()?.import_chat(chat_id, lines).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_embedded_store_says_chats_are_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let err = store.append_chat_line("c", None, 1, "{}").await.unwrap_err();
        assert!(matches!(&err, StoreError::Storage(m) if m.contains("MEMORY_CHAT_DIR")), "{err}");
        assert!(store.chat_index().await.is_err());
        store.shutdown().await;
    }
}
