//! Chat Memory V2: each chat's runs as JSON lines in `<dir>/{chatId}.json` (or, on a shared
//! store, as rows of PostgreSQL's `chat_runs`: the same lines), replayed to the model through a
//! sliding window of runs, listed for `GET /api/chats` and rebuilt into snapshot events for
//! `GET /api/chat`.
//!
//! Owns the line format ([`RunRecord`]: `chatId`, `runId`, `transactionId`, `updatedAt`, the full
//! `query`, `system` only when new or changed, and OpenAI-style `messages` with `_`-prefixed
//! extension fields), the per-chat lock that serializes runs, atomic appends, crash-tolerant
//! loading, the replay to [`llm::Message`]s and the chat index. Knows nothing of HTTP, of
//! the run loop or of providers: the runtime records a run with [`RunRecorder`] and appends it
//! while holding [`ChatMemory::lock_chat`]; the gateway maps [`ChatSummary`] and [`ChatDetail`].
//!
//! Durability: a run is one line written with one `write_all` on an `O_APPEND` file, then
//! `sync_data`. A crash mid-write leaves at most a partial last line; [`ChatMemory::load`] skips
//! it (and any other unreadable line) and reports it as a [`LoadWarning`], and the next append
//! starts on a fresh line. A chat is never lost to one bad line. File work runs on tokio's
//! blocking pool, at most `FILE_OPS` (8) operations at once.
//! On a shared store a run is one row, acknowledged after its commit; an unreadable row is
//! skipped and reported the same way.
//!
//! Replay keeps reasoning only on assistant turns that made tool calls (DeepSeek requires it
//! back on those turns); the provider layer drops what its API must not receive.
//!
//! Extension fields beyond the seed's `_reasoningId`, `_contentId`, `_toolId`, `_actionId`,
//! `_timing`, `_usage`: `_msgId` (the stored messages one model response was split into share
//! it, so replay can rebuild that one message), `_model`/`_provider` (who produced it), and
//! `_isError` on failed tool results; on the run, `_finishReason` (how it ended, for the
//! history's `run.complete`).
//!
//! The backend is chosen once, at construction: files ([`ChatMemory::new`], one node) or a
//! shared store ([`ChatMemory::shared`], several nodes); every method behaves the same on both.
//!
//! Files: this one the store ([`ChatMemory`], [`ChatLock`], the index cache) and the shared
//! types; `line` the line format; `record` recording a run; `replay` the model's view;
//! `snapshot` the history as events and the chat index entries; `files` reading and appending;
//! `shared` the same over a shared store.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, Semaphore};

use super::events::{ContextSummary, Event, EventBody, Query, Upload, now_ms};
use llm::{
    AssistantMessage, ContentBlock, ImageSource, Message, StopReason, ToolDefinition, Usage,
};
use store::{Store, StoreError};

mod files;
mod line;
mod record;
mod replay;
mod shared;
mod snapshot;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use files::*;
pub use files::{ChatFile, LoadWarning, LoadedChat, read_chat_files};
pub use line::*;
pub use record::*;
pub use replay::*;
pub use snapshot::*;

/// Runs replayed to the model by default (`MEMORY_CHAT_K`).
pub const DEFAULT_WINDOW: usize = 20;
/// Tools recorded as actions by default (`MEMORY_CHAT_ACTION_TOOLS`).
pub const DEFAULT_ACTION_TOOLS: [&str; 3] = ["switch_theme", "launch_fireworks", "show_modal"];
/// Characters of the first query message that name a chat (the seed's `元素碳的简介，100`).
pub const CHAT_NAME_CHARS: usize = 10;

/// Errors of chat memory.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The chat id is not `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid chatId `{0}`: expected 1 to 64 of A-Z, a-z, 0-9, `_`, `-`")]
    InvalidChatId(String),
    /// No such chat.
    #[error("chat `{0}` not found")]
    NotFound(String),
    /// A record was appended under another chat's lock.
    #[error("run `{run_id}` belongs to chat `{record}`, not to the locked chat `{locked}`")]
    WrongChat {
        /// The locked chat.
        locked: String,
        /// The record's chat.
        record: String,
        /// The record's run.
        run_id: String,
    },
    /// A `MEMORY_CHAT_*` variable is invalid.
    #[error("invalid chat memory configuration: {0}")]
    Config(String),
    /// A record could not be encoded (not expected: string keys only).
    #[error("chat record does not encode: {0}")]
    Encode(String),
    /// The shared store failed.
    #[error("chat memory in the store: {0}")]
    Store(#[from] StoreError),
    /// Disk failure.
    #[error("chat memory I/O on {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io { path: path.to_owned(), source }
}

/// Where chats live and how they are replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Directory of the chat files (`MEMORY_CHAT_DIR`, default `<data dir>/chats`).
    pub dir: PathBuf,
    /// Runs replayed to the model (`MEMORY_CHAT_K`, default 20).
    pub window: usize,
    /// Tool names recorded as actions (`_actionId`) rather than tools (`_toolId`)
    /// (`MEMORY_CHAT_ACTION_TOOLS`, comma-separated).
    pub action_tools: BTreeSet<String>,
    /// Chats untouched this many days are deleted (`MEMORY_CHAT_RETENTION_DAYS`; the admin
    /// setting `chatRetentionDays` wins over it); `None`: kept for good.
    pub retention_days: Option<u32>,
}

impl MemoryConfig {
    /// The defaults under `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("chats"),
            window: DEFAULT_WINDOW,
            action_tools: DEFAULT_ACTION_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            retention_days: None,
        }
    }

    /// The defaults overridden by `MEMORY_CHAT_DIR`, `MEMORY_CHAT_K`, `MEMORY_CHAT_ACTION_TOOLS`,
    /// `MEMORY_CHAT_RETENTION_DAYS`.
    pub fn from_env(data_dir: &Path) -> Result<Self, MemoryError> {
        Self::from_vars(data_dir, |name| std::env::var(name).ok())
    }

    /// Like [`MemoryConfig::from_env`] with the variables looked up by `var`.
    pub fn from_vars(
        data_dir: &Path,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, MemoryError> {
        let mut config = Self::new(data_dir);
        if let Some(dir) = var("MEMORY_CHAT_DIR").filter(|d| !d.trim().is_empty()) {
            config.dir = PathBuf::from(dir.trim());
        }
        if let Some(k) = var("MEMORY_CHAT_K").filter(|k| !k.trim().is_empty()) {
            config.window = k.trim().parse().map_err(|_| {
                MemoryError::Config(format!("MEMORY_CHAT_K must be a run count, got `{k}`"))
            })?;
        }
        if let Some(days) = var("MEMORY_CHAT_RETENTION_DAYS").filter(|d| !d.trim().is_empty()) {
            let days: u32 = days.trim().parse().ok().filter(|d| *d > 0).ok_or_else(|| {
                MemoryError::Config(format!(
                    "MEMORY_CHAT_RETENTION_DAYS must be a number of days (1 or more), got `{days}`"
                ))
            })?;
            config.retention_days = Some(days);
        }
        if let Some(list) = var("MEMORY_CHAT_ACTION_TOOLS") {
            config.action_tools = list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
        }
        Ok(config)
    }

    /// True when `tool_name` is recorded as an action.
    pub fn is_action(&self, tool_name: &str) -> bool {
        self.action_tools.contains(tool_name)
    }
}

/// Checks a chat id: `[A-Za-z0-9_-]{1,64}` (UUIDs pass), so it can never name another path.
pub fn validate_chat_id(chat_id: &str) -> Result<(), MemoryError> {
    let ok = (1..=64).contains(&chat_id.len())
        && chat_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok { Ok(()) } else { Err(MemoryError::InvalidChatId(chat_id.to_owned())) }
}

/// A chat's display name: its first message, trimmed, cut to [`CHAT_NAME_CHARS`] characters.
pub fn chat_name(first_message: &str) -> String {
    let name: String = first_message.trim().chars().take(CHAT_NAME_CHARS).collect();
    name.trim_end().to_owned()
}

/// The order of [`ChatMemory::list_chats`]: most recently updated first, ties by id.
fn newest_first(chats: &mut [ChatSummary]) {
    chats.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.chat_id.cmp(&b.chat_id)));
}

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

/// Chat memory over a directory of chat files or a shared store. Cheap to clone (shared state).
#[derive(Debug, Clone)]
pub struct ChatMemory {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: MemoryConfig,
    action_tools: Arc<BTreeSet<String>>,
    /// This node's chat locks (on a shared store too: see `shared`).
    locks: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    /// The file backend's index cache.
    cache: Mutex<HashMap<String, CachedChat>>,
    /// Permits for file operations in flight (see [`FILE_OPS`]).
    file_ops: Arc<Semaphore>,
    backend: Backend,
}

/// Where the chats are.
#[derive(Debug)]
enum Backend {
    /// `config.dir`, one file per chat.
    Files,
    /// A shared store's chat lines.
    Shared(shared::Shared),
}

impl Inner {
    fn path(&self, chat_id: &str) -> PathBuf {
        self.config.dir.join(format!("{chat_id}.json"))
    }

    fn cache(&self) -> MutexGuard<'_, HashMap<String, CachedChat>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached head of a chat, re-read when the file changed behind the cache.
    fn cached(&self, chat_id: &str) -> Result<Option<CachedChat>, MemoryError> {
        let path = self.path(chat_id);
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.cache().remove(chat_id);
                return Ok(None);
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        let modified = meta.modified().ok();
        if let Some(hit) = self.cache().get(chat_id)
            && hit.len == meta.len()
            && hit.modified == modified
        {
            return Ok(Some(hit.clone()));
        }
        match read_chat(chat_id, &path) {
            Ok((_, cached)) => {
                self.cache().insert(chat_id.to_owned(), cached.clone());
                Ok(Some(cached))
            }
            Err(MemoryError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn append(&self, chat_id: &str, mut record: RunRecord) -> Result<RunRecord, MemoryError> {
        let head = self.cached(chat_id)?;
        let last_system = head.as_ref().and_then(|h| h.last_system.clone());
        if record.system.is_some() && record.system == last_system {
            record.system = None;
        }
        // Compact JSON has no raw newline (strings escape it): the run is one line.
        let line = serde_json::to_vec(&record).map_err(|e| MemoryError::Encode(e.to_string()))?;
        base::fs_private::create_dir_all(&self.config.dir).map_err(io_err(&self.config.dir))?;
        let path = self.path(chat_id);
        let (len, modified) = append_line(&path, &line).map_err(io_err(&path))?;
        let summary = match head.as_ref().and_then(|h| h.summary.clone()) {
            Some(mut s) => {
                s.updated_at = record.updated_at;
                Some(s)
            }
            None => summary_of(chat_id, std::slice::from_ref(&record)),
        };
        let cached = CachedChat {
            len,
            modified,
            summary,
            last_system: record.system.clone().or(last_system),
        };
        self.cache().insert(chat_id.to_owned(), cached);
        Ok(record)
    }
}

/// Chat file operations running at once. An append ends in `fdatasync` (a new chat's also syncs
/// its directory), which holds a thread for milliseconds; unbounded, a burst of runs finishing
/// together grew tokio's blocking pool to its cap of 512 threads, and live streams on the same
/// server saw gaps of 40–100 ms (`bench gateway`'s paced phases; none at 500 streams since).
/// Journalling filesystems share one commit among concurrent syncs, so a few at a time keep
/// the throughput.
const FILE_OPS: usize = 8;

/// Runs `f` on the blocking pool once one of `inner`'s [`FILE_OPS`] permits is free; the permit
/// is held until `f` returns (even if the caller stops waiting). Every chat file operation goes
/// through here, so none escapes the bound.
async fn blocking<T: Send + 'static>(
    inner: &Arc<Inner>,
    f: impl FnOnce(&Inner) -> Result<T, MemoryError> + Send + 'static,
) -> Result<T, MemoryError> {
    // The semaphore is never closed.
    let permit = Arc::clone(&inner.file_ops).acquire_owned().await.ok();
    let inner = Arc::clone(inner);
    let f = move || {
        let result = f(&inner);
        drop(permit);
        result
    };
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        // A panic in file code is a bug: let it surface in the caller.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(MemoryError::Io { path: PathBuf::new(), source: io::Error::other(e) }),
    }
}

impl ChatMemory {
    /// Chat memory over `config.dir` (created on the first append).
    pub fn new(config: MemoryConfig) -> Self {
        Self::with_backend(config, Backend::Files)
    }

    /// Chat memory in `store`'s chat lines, which every node of a shared store reads
    /// (`config.dir` is not used). Chat locks stay this node's.
    pub fn shared(config: MemoryConfig, store: Arc<Store>) -> Self {
        Self::with_backend(config, Backend::Shared(shared::Shared::new(store)))
    }

    fn with_backend(config: MemoryConfig, backend: Backend) -> Self {
        let action_tools = Arc::new(config.action_tools.clone());
        Self {
            inner: Arc::new(Inner {
                config,
                action_tools,
                locks: Mutex::new(HashMap::new()),
                cache: Mutex::new(HashMap::new()),
                file_ops: Arc::new(Semaphore::new(FILE_OPS)),
                backend,
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &MemoryConfig {
        &self.inner.config
    }

    /// Starts recording a run: the record of `query` (its chat, its message as the user
    /// message at `ts`), `transactionId` = `run_id`.
    pub fn recorder(&self, run_id: &str, query: Query, ts: i64) -> RunRecorder {
        let user = StoredMessage::User(UserEntry { content: vec![Part::text(&query.message)], ts });
        RunRecorder {
            record: RunRecord {
                chat_id: query.chat_id.clone(),
                run_id: run_id.to_owned(),
                transaction_id: run_id.to_owned(),
                updated_at: ts,
                query,
                system: None,
                messages: vec![user],
                finish_reason: None,
                summary: None,
                owner: None,
            },
            action_tools: Arc::clone(&self.inner.action_tools),
            responses: 0,
            counters: HashMap::new(),
            calls: HashMap::new(),
        }
    }

    /// Waits for exclusive use of a chat; the runtime holds it for a whole run so the runs of
    /// one chat never overlap.
    #[base::boxed]
    pub async fn lock_chat(&self, chat_id: &str) -> Result<ChatLock, MemoryError> {
        validate_chat_id(chat_id)?;
        let mutex = {
            let mut locks = self.inner.locks.lock().unwrap_or_else(PoisonError::into_inner);
            // Forget the mutexes nobody holds or waits for.
            locks.retain(|_, m| Arc::strong_count(m) > 1);
            Arc::clone(locks.entry(chat_id.to_owned()).or_default())
        };
        let guard = mutex.lock_owned().await;
        Ok(ChatLock { memory: self.clone(), chat_id: chat_id.to_owned(), _guard: guard })
    }

    /// Appends a run under the chat's lock (waits for a run in progress to release it). While
    /// holding a [`ChatLock`] of that chat, append through [`ChatLock::append`] instead: this
    /// would wait for the lock you hold.
    #[base::boxed]
    pub async fn append(&self, record: RunRecord) -> Result<RunRecord, MemoryError> {
        self.lock_chat(&record.chat_id).await?.append(record).await
    }

    /// Loads a chat ([`MemoryError::NotFound`] if it has no file, or no row). Readers do not
    /// take the chat lock: appends are whole lines.
    #[base::boxed]
    pub async fn load(&self, chat_id: &str) -> Result<LoadedChat, MemoryError> {
        validate_chat_id(chat_id)?;
        if let Backend::Shared(shared) = &self.inner.backend {
            return shared.load(chat_id).await;
        }
        let chat_id = chat_id.to_owned();
        blocking(&self.inner, move |inner| {
            let (loaded, cached) = read_chat(&chat_id, &inner.path(&chat_id))?;
            inner.cache().insert(chat_id, cached);
            Ok(loaded)
        })
        .await
    }

    /// The readable runs of a chat, oldest first (none for a new chat).
    #[base::boxed]
    pub async fn runs(&self, chat_id: &str) -> Result<Vec<RunRecord>, MemoryError> {
        match self.load(chat_id).await {
            Ok(loaded) => Ok(loaded.runs),
            Err(MemoryError::NotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The model context of a chat: [`replay_messages`] over its last `window` runs (none for
    /// a new chat).
    #[base::boxed]
    pub async fn replay(&self, chat_id: &str) -> Result<Vec<Message>, MemoryError> {
        Ok(replay_messages(&self.runs(chat_id).await?, self.inner.config.window))
    }

    /// Every chat with at least one readable run, most recently updated first (ties by id).
    /// Derived from the files (or rows); unchanged chats are answered from a cache.
    #[base::boxed]
    pub async fn list_chats(&self) -> Result<Vec<ChatSummary>, MemoryError> {
        if let Backend::Shared(shared) = &self.inner.backend {
            return shared.list_chats().await;
        }
        blocking(&self.inner, |inner| {
            let mut chats = Vec::new();
            let mut seen = HashSet::new();
            for chat_id in chat_ids(&inner.config.dir)? {
                if let Some(summary) = inner.cached(&chat_id)?.and_then(|c| c.summary) {
                    chats.push(summary);
                }
                seen.insert(chat_id);
            }
            inner.cache().retain(|id, _| seen.contains(id));
            newest_first(&mut chats);
            Ok(chats)
        })
        .await
    }

    /// Deletes a chat's runs for good, waiting for a run of it in progress to end first (its
    /// lock); [`MemoryError::NotFound`] when it has none.
    #[base::boxed]
    pub async fn delete(&self, chat_id: &str) -> Result<(), MemoryError> {
        let lock = self.lock_chat(chat_id).await?;
        let found = if let Backend::Shared(shared) = &self.inner.backend {
            shared.delete(chat_id).await?
        } else {
            let chat_id = chat_id.to_owned();
            blocking(&self.inner, move |inner| {
                let path = inner.path(&chat_id);
                inner.cache().remove(&chat_id);
                match fs::remove_file(&path) {
                    Ok(()) => Ok(true),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
                    Err(e) => Err(io_err(&path)(e)),
                }
            })
            .await?
        };
        drop(lock);
        if found { Ok(()) } else { Err(MemoryError::NotFound(chat_id.to_owned())) }
    }

    /// A chat's history for `GET /api/chat`: [`snapshot_events`], and with
    /// `include_raw_messages` every stored message with its `runId`.
    #[base::boxed]
    pub async fn chat_detail(
        &self,
        chat_id: &str,
        include_raw_messages: bool,
    ) -> Result<ChatDetail, MemoryError> {
        let loaded = self.load(chat_id).await?;
        let runs = &loaded.runs;
        let messages = include_raw_messages.then(|| {
            runs.iter()
                .flat_map(|run| {
                    run.messages.iter().map(|m| {
                        let mut value = serde_json::to_value(m).unwrap_or_default();
                        if let Value::Object(map) = &mut value {
                            map.insert("runId".into(), Value::String(run.run_id.clone()));
                        }
                        value
                    })
                })
                .collect()
        });
        let mut references = Vec::new();
        let mut seen_ids = HashSet::new();
        for reference in runs.iter().flat_map(|r| r.query.references.iter().flatten()) {
            let fresh = match reference.get("id").and_then(Value::as_str) {
                Some(id) => seen_ids.insert(id.to_owned()),
                None => !references.contains(reference),
            };
            if fresh {
                references.push(reference.clone());
            }
        }
        Ok(ChatDetail {
            chat_id: chat_id.to_owned(),
            chat_name: runs.first().map(|r| chat_name(&r.query.message)).unwrap_or_default(),
            events: snapshot_events(runs, &self.inner.action_tools),
            messages,
            references,
            damaged: loaded.warnings.clone(),
        })
    }
}

/// Exclusive use of one chat (see [`ChatMemory::lock_chat`]); released on drop.
#[derive(Debug)]
pub struct ChatLock {
    memory: ChatMemory,
    chat_id: String,
    _guard: OwnedMutexGuard<()>,
}

impl ChatLock {
    /// The chat.
    pub fn chat_id(&self) -> &str {
        &self.chat_id
    }

    /// The chat's readable runs (see [`ChatMemory::runs`]); none for a chat with no stored
    /// run yet (its run then sends `chat.start`).
    #[base::boxed]
    pub async fn runs(&self) -> Result<Vec<RunRecord>, MemoryError> {
        self.memory.runs(&self.chat_id).await
    }

    /// Loads the chat (see [`ChatMemory::load`]).
    #[base::boxed]
    pub async fn load(&self) -> Result<LoadedChat, MemoryError> {
        self.memory.load(&self.chat_id).await
    }

    /// Appends a run of this chat as one line (`system` dropped when unchanged since the last
    /// one stored); returns the record as written.
    #[base::boxed]
    pub async fn append(&self, record: RunRecord) -> Result<RunRecord, MemoryError> {
        if record.chat_id != self.chat_id {
            return Err(MemoryError::WrongChat {
                locked: self.chat_id.clone(),
                record: record.chat_id,
                run_id: record.run_id,
            });
        }
        if let Backend::Shared(shared) = &self.memory.inner.backend {
            return shared.append(&self.chat_id, record).await;
        }
        let chat_id = self.chat_id.clone();
        blocking(&self.memory.inner, move |inner| inner.append(&chat_id, record)).await
    }
}
