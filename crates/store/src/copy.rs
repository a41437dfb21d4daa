//! Copying a whole store into another (`boardsmith migrate-store --to postgres://...`): every
//! dashboard with its whole history (versions keep their numbers, times and notes), every
//! record, the chats' lines and the uploads, then both sides read back and hashed the same
//! way, so the copy is verified rather than assumed. Chats come in as lines and uploads as
//! id, name, type and bytes (the caller reads them from their files): what a line says is chat
//! memory's business, what an upload is and how its id is made `uploads`'. The one thing
//! checked of an upload here is that its content's SHA-256 is its id, on the target.

use sha2::{Digest, Sha256};

use super::{DashboardState, Record, Store, StoreError, VersionInfo};

/// One dashboard with its whole history, as copied.
#[derive(Debug, Clone)]
pub struct History {
    /// The dashboard.
    pub id: String,
    /// Creation time, unix milliseconds.
    pub created_at: i64,
    /// Soft-deleted.
    pub deleted: bool,
    /// Every kept version, oldest first, with its state.
    pub versions: Vec<(VersionInfo, DashboardState)>,
}

/// What a copy moved, and the digests that prove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// Dashboards copied.
    pub dashboards: usize,
    /// Versions copied, all dashboards together.
    pub versions: usize,
    /// Records copied per kind.
    pub records: Vec<(Record, usize)>,
    /// SHA-256 of the source's content (hex).
    pub source_sha256: String,
    /// SHA-256 of the target's content read back after the copy (hex); equal to the source's.
    pub target_sha256: String,
    /// Chats copied.
    pub chats: usize,
    /// Chat lines (runs) copied, all chats together.
    pub chat_lines: usize,
    /// SHA-256 of the chats given, over each chat id and line in order (hex).
    pub chats_source_sha256: String,
    /// The same over the target's chats read back; equal to the source's.
    pub chats_target_sha256: String,
    /// Uploads copied.
    pub uploads: usize,
    /// SHA-256 of the uploads given, over each id, name, MIME type and content, by id (hex).
    pub uploads_source_sha256: String,
    /// The same over the target's uploads read back; equal to the source's.
    pub uploads_target_sha256: String,
}

/// An upload to copy (see [`Store::put_upload`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadCopy {
    /// Its id: the content's hex SHA-256.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its MIME type.
    pub mime_type: String,
    /// When it was stored (unix milliseconds).
    pub created_at: i64,
    /// The content.
    pub content: Vec<u8>,
}

/// A chat to copy: its lines in order, each with its time (see [`Store::import_chat`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatLines {
    /// The chat.
    pub chat_id: String,
    /// `(updated_at, line)`, oldest first.
    pub lines: Vec<(i64, String)>,
}

/// Hashes one field, length-prefixed so no two contents share an encoding.
fn put(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

fn hex(h: Sha256) -> String {
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest of chats: each chat id and line, chats by id, lines in order.
fn chats_digest<'a>(chats: impl IntoIterator<Item = &'a ChatLines>) -> String {
    let mut sorted: Vec<&ChatLines> = chats.into_iter().collect();
    sorted.sort_by(|a, b| a.chat_id.cmp(&b.chat_id));
    let mut h = Sha256::new();
    for chat in sorted {
        for (_, line) in &chat.lines {
            put(&mut h, chat.chat_id.as_bytes());
            put(&mut h, line.as_bytes());
        }
    }
    hex(h)
}

/// Hashes uploads one at a time, in any order: each upload's own digest is kept with its id,
/// and [`UploadsDigest::finish`] hashes those by id, so no content has to be held.
#[derive(Default)]
struct UploadsDigest(Vec<(String, [u8; 32])>);

impl UploadsDigest {
    fn add(&mut self, id: &str, name: &str, mime_type: &str, content: &[u8]) {
        let mut h = Sha256::new();
        for field in [id.as_bytes(), name.as_bytes(), mime_type.as_bytes(), content] {
            put(&mut h, field);
        }
        self.0.push((id.to_owned(), h.finalize().into()));
    }

    fn finish(mut self) -> String {
        self.0.sort();
        let mut h = Sha256::new();
        for (_, one) in &self.0 {
            h.update(one);
        }
        hex(h)
    }
}

/// The digest of a shared store's uploads, read back one at a time; each content must hash to
/// its id.
async fn stored_uploads_digest(store: &Store) -> Result<String, StoreError> {
    let mut digest = UploadsDigest::default();
    for row in store.upload_index().await? {
        let Some((row, content)) = store.upload(&row.id).await? else {
            return Err(StoreError::Storage(format!(
                "upload `{}` vanished from the target",
                row.id
            )));
        };
        let actual = hex(Sha256::new_with_prefix(&content));
        if actual != row.id {
            return Err(StoreError::Storage(format!(
                "upload `{}` reads back with content of sha256 {actual}",
                row.id
            )));
        }
        digest.add(&row.id, &row.name, &row.mime_type, &content);
    }
    Ok(digest.finish())
}

/// Every chat of a shared store, read back.
async fn stored_chats(store: &Store) -> Result<Vec<ChatLines>, StoreError> {
    let mut out = Vec::new();
    for span in store.chat_index().await? {
        let lines = store.chat_lines(&span.chat_id, 0).await?;
        let lines = lines.into_iter().map(|l| (l.updated_at, l.line)).collect();
        out.push(ChatLines { chat_id: span.chat_id, lines });
    }
    Ok(out)
}

/// Every dashboard's history, by id.
async fn histories(store: &Store) -> Result<Vec<History>, StoreError> {
    let mut list = store.list(true).await?;
    list.sort_by(|a, b| a.id.cmp(&b.id));
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let head = store.get(&item.id).await?;
        let mut versions = Vec::new();
        for info in store.versions(&item.id).await? {
            let state = store.get_version(&item.id, info.version).await?.state;
            versions.push((info, state));
        }
        out.push(History {
            id: item.id,
            created_at: head.created_at,
            deleted: head.deleted,
            versions,
        });
    }
    Ok(out)
}

/// The digest of a store's content: histories by id, then records by kind and id, each field
/// length-prefixed so no two contents share an encoding.
async fn digest(
    store: &Store,
) -> Result<(String, Vec<History>, Vec<(Record, Vec<(String, serde_json::Value)>)>), StoreError> {
    let histories = histories(store).await?;
    let mut records = Vec::new();
    for kind in Record::ALL {
        records.push((kind, store.records_with_ids(kind).await?));
    }
    let mut h = Sha256::new();
    for d in &histories {
        put(&mut h, d.id.as_bytes());
        put(&mut h, &d.created_at.to_be_bytes());
        put(&mut h, &[u8::from(d.deleted)]);
        for (info, state) in &d.versions {
            put(&mut h, &info.version.to_be_bytes());
            put(&mut h, &info.created_at.to_be_bytes());
            put(&mut h, info.title.as_bytes());
            put(&mut h, &(info.panels as u64).to_be_bytes());
            put(&mut h, info.note.as_bytes());
            put(
                &mut h,
                info.author.as_ref().map(super::author_json).unwrap_or_default().as_bytes(),
            );
            let json = serde_json::to_vec(state).map_err(|e| StoreError::Storage(e.to_string()))?;
            put(&mut h, &json);
        }
    }
    for (kind, rows) in &records {
        for (id, value) in rows {
            put(&mut h, kind.key().as_bytes());
            put(&mut h, id.as_bytes());
            put(&mut h, value.to_string().as_bytes());
        }
    }
    Ok((hex(h), histories, records))
}

/// Copies everything in `from`, `chats` (chats without lines are left out) and `uploads`
/// (taken one at a time, so only one is held), into `to`, which must hold no dashboards, chats
/// or uploads yet, and verifies the copy by digests. A mismatch is an error naming both
/// digests.
pub async fn copy(
    from: &Store,
    to: &Store,
    chats: &[ChatLines],
    uploads: impl IntoIterator<Item = UploadCopy>,
) -> Result<CopyReport, StoreError> {
    if !to.is_empty().await? {
        return Err(StoreError::Storage(
            "the target already holds dashboards: copy into an empty database".into(),
        ));
    }
    if !to.chat_index().await?.is_empty() {
        return Err(StoreError::Storage(
            "the target already holds chats: copy into an empty database".into(),
        ));
    }
    if !to.upload_index().await?.is_empty() {
        return Err(StoreError::Storage(
            "the target already holds uploads: copy into an empty database".into(),
        ));
    }
    let chats: Vec<&ChatLines> = chats.iter().filter(|c| !c.lines.is_empty()).collect();
    let (source_sha256, histories, records) = digest(from).await?;
    for h in &histories {
        to.import(h).await?;
    }
    for (kind, rows) in &records {
        for (id, value) in rows {
            to.put_record(*kind, id, value).await?;
        }
    }
    for chat in &chats {
        to.import_chat(&chat.chat_id, &chat.lines).await?;
    }
    let mut uploads_source = UploadsDigest::default();
    for u in uploads {
        to.put_upload(&u.id, &u.name, &u.mime_type, &u.content, u.created_at).await?;
        uploads_source.add(&u.id, &u.name, &u.mime_type, &u.content);
    }
    let (target_sha256, _, _) = digest(to).await?;
    let report = CopyReport {
        dashboards: histories.len(),
        versions: histories.iter().map(|h| h.versions.len()).sum(),
        records: records.iter().map(|(k, rows)| (*k, rows.len())).collect(),
        source_sha256,
        target_sha256,
        chats: chats.len(),
        chat_lines: chats.iter().map(|c| c.lines.len()).sum(),
        chats_source_sha256: chats_digest(chats.iter().copied()),
        chats_target_sha256: chats_digest(&stored_chats(to).await?),
        uploads: uploads_source.0.len(),
        uploads_source_sha256: uploads_source.finish(),
        uploads_target_sha256: stored_uploads_digest(to).await?,
    };
    for (what, source, target) in [
        ("copy", &report.source_sha256, &report.target_sha256),
        ("chats' copy", &report.chats_source_sha256, &report.chats_target_sha256),
        ("uploads' copy", &report.uploads_source_sha256, &report.uploads_target_sha256),
    ] {
        if source != target {
            return Err(StoreError::Storage(format!(
                "the {what} does not match its source: sha256 {target} read back, {source} expected"
            )));
        }
    }
    Ok(report)
}
