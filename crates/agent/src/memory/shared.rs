//! Chat memory in a shared store (PostgreSQL, several nodes): each run one line of the store's
//! chat lines, the same JSON line the file backend writes, in append order; a damaged row is
//! skipped and reported like a damaged line.
//!
//! What the file backend's index cache keeps is kept here per chat, and brought up to date
//! from the store on every use, so another node's appends are always seen: the last `system`
//! stored (from the lines past the last one this node read), and the chat's list entry (valid
//! while the chat's first and last line ids are the ones it was made from).
//!
//! The chat lock ([`ChatMemory::lock_chat`]) is this node's. Two nodes running the same chat
//! at once both get recorded, one line after the other, and nothing is lost: an append whose
//! chat grew since it last looked is refused by the store, reads the new lines and decides
//! `system` again.

use super::*;

#[derive(Debug)]
pub(super) struct Shared {
    store: Arc<Store>,
    heads: Mutex<HashMap<String, Head>>,
    listed: Mutex<HashMap<String, Listed>>,
}

/// What an append needs to know of a chat's stored lines.
#[derive(Debug, Clone, Default)]
struct Head {
    /// The id of the last line read or written (0: none yet).
    last: i64,
    /// The `system` of the last readable run that had one.
    last_system: Option<SystemSnapshot>,
}

/// A chat's list entry and the lines it was made from.
#[derive(Debug, Clone)]
struct Listed {
    first: i64,
    last: i64,
    summary: Option<ChatSummary>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn run_of(line: &str) -> Option<RunRecord> {
    serde_json::from_str(line).ok()
}

impl Shared {
    pub(super) fn new(store: Arc<Store>) -> Self {
        Self { store, heads: Mutex::default(), listed: Mutex::default() }
    }

    /// The whole chat, each row parsed as a line of a file would be.
    pub(super) async fn load(&self, chat_id: &str) -> Result<LoadedChat, MemoryError> {
        let lines = self.store.chat_lines(chat_id, 0).await?;
        let Some(last) = lines.last().map(|l| l.id) else {
            return Err(MemoryError::NotFound(chat_id.to_owned()));
        };
        let mut loaded = LoadedChat::default();
        for (i, line) in lines.iter().enumerate() {
            // As a blank line of a file.
            if line.line.trim().is_empty() {
                continue;
            }
            match parse_line(chat_id, i + 1, line.line.as_bytes(), false) {
                Ok(run) => loaded.runs.push(run),
                Err(warning) => loaded.warnings.push(warning),
            }
        }
        let last_system = loaded.runs.iter().rev().find_map(|r| r.system.clone());
        lock(&self.heads).insert(chat_id.to_owned(), Head { last, last_system });
        Ok(loaded)
    }

    /// The chat's head as stored now: the cached one, moved past the lines stored since.
    async fn head(&self, chat_id: &str) -> Result<Head, MemoryError> {
        let mut head = lock(&self.heads).get(chat_id).cloned().unwrap_or_default();
        for line in self.store.chat_lines(chat_id, head.last).await? {
            head.last = line.id;
            // An unreadable line changes nothing, as in a file.
            if let Some(run) = run_of(&line.line)
                && run.system.is_some()
            {
                head.last_system = run.system;
            }
        }
        lock(&self.heads).insert(chat_id.to_owned(), head.clone());
        Ok(head)
    }

    /// Appends a run as one row (`system` dropped when unchanged since the last one stored).
    pub(super) async fn append(
        &self,
        chat_id: &str,
        mut record: RunRecord,
    ) -> Result<RunRecord, MemoryError> {
        let system = record.system.take();
        loop {
            let head = self.head(chat_id).await?;
            record.system = system.clone().filter(|s| head.last_system.as_ref() != Some(s));
            let line =
                serde_json::to_string(&record).map_err(|e| MemoryError::Encode(e.to_string()))?;
            let after = Some(head.last);
            if let Some(id) =
                self.store.append_chat_line(chat_id, after, record.updated_at, &line).await?
            {
                let last_system = record.system.clone().or(head.last_system);
                lock(&self.heads).insert(chat_id.to_owned(), Head { last: id, last_system });
                return Ok(record);
            }
            // Another node appended to the chat since `head`: take its lines in, decide again.
        }
    }

    /// Deletes the chat's rows; `false` when it had none.
    pub(super) async fn delete(&self, chat_id: &str) -> Result<bool, MemoryError> {
        let n = self.store.delete_chat(chat_id).await?;
        lock(&self.heads).remove(chat_id);
        lock(&self.listed).remove(chat_id);
        Ok(n > 0)
    }

    /// Every chat's list entry. One query of line ids tells which chats changed since this
    /// node last listed them; only those have lines read (their first and last).
    pub(super) async fn list_chats(&self) -> Result<Vec<ChatSummary>, MemoryError> {
        let index = self.store.chat_index().await?;
        let stale: Vec<_> = {
            let listed = lock(&self.listed);
            index
                .iter()
                .filter(|s| {
                    listed.get(&s.chat_id).is_none_or(|l| (l.first, l.last) != (s.first, s.last))
                })
                .collect()
        };
        if !stale.is_empty() {
            let ids: Vec<i64> = stale.iter().flat_map(|s| [s.first, s.last]).collect();
            let lines: HashMap<i64, String> = self
                .store
                .chat_lines_by_id(&ids)
                .await?
                .into_iter()
                .map(|l| (l.id, l.line))
                .collect();
            for span in stale {
                let run = |id| lines.get(&id).and_then(|l| run_of(l));
                let summary = match (run(span.first), run(span.last)) {
                    (Some(first), Some(last)) => summary_of(&span.chat_id, &[first, last]),
                    // A damaged first or last line: the readable runs decide, as in a file.
                    _ => match self.load(&span.chat_id).await {
                        Ok(loaded) => summary_of(&span.chat_id, &loaded.runs),
                        Err(MemoryError::NotFound(_)) => None,
                        Err(e) => return Err(e),
                    },
                };
                let entry = Listed { first: span.first, last: span.last, summary };
                lock(&self.listed).insert(span.chat_id.clone(), entry);
            }
        }
        let mut chats: Vec<ChatSummary> = {
            let mut listed = lock(&self.listed);
            let present: HashSet<&str> = index.iter().map(|s| s.chat_id.as_str()).collect();
            listed.retain(|id, _| present.contains(id.as_str()));
            listed.values().filter_map(|l| l.summary.clone()).collect()
        };
        newest_first(&mut chats);
        Ok(chats)
    }
}
