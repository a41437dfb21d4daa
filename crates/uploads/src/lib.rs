//! Uploaded images: checked (the type by its magic bytes, the size), stored content-addressed
//! and read back by id. The id is the content's hex SHA-256, so the same image uploaded twice
//! is stored once, under the name and type it was last uploaded with. One node keeps them
//! under `<data>/uploads/` (each file with a `<id>.json` beside it holding the name and type);
//! the nodes of a shared store keep them in its `uploads` rows ([`Uploads::shared`]), so an
//! image uploaded through one node is read through any other. Both backends answer with the
//! same checks and errors.
//!
//! Bounded: all uploads together hold at most [`UploadLimits::quota_bytes`] (by default a
//! quarter of `BOARDSMITH_MAX_STORE_BYTES`, the store's quota, so the store and the uploads
//! stay within about 1.25 times it together), and the uploads an API key holds at most
//! [`UploadLimits::key_share_percent`] of that; the owner is held to the total only. A put
//! past either is refused whole ([`UploadError::QuotaFull`], [`UploadError::ShareFull`]).
//! Each upload records who holds it (who uploaded it: a key's id, or the owner); a key
//! deletes only its own hold, the upload going with its last holder, while the owner or an
//! admin deletes it outright. The rules are the store's ([`store::uploads::decide`],
//! [`store::uploads::release`]), applied to the files under a lock of this node's and
//! to a shared store's rows in one transaction.
//!
//! Knows nothing of HTTP, chats or models: the gateway calls [`Uploads::put_as`],
//! [`Uploads::read`] and [`Uploads::delete`], the agent service [`Uploads::info`] (checking a
//! query's images) and [`Uploads::read`] (loading them for the model). File work runs on the
//! blocking pool.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use store::uploads::{OWNER, StoredUpload, UploadDelete, UploadPut, UploadQuota, decide, release};
use store::{Store, StoreQuotas};

/// The directory of a data directory that holds one node's uploads.
pub const DIR_NAME: &str = "uploads";

/// Bounds on uploads and on the images of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadLimits {
    /// Largest upload in bytes (`BOARDSMITH_UPLOAD_MAX_BYTES`, default 10 MiB).
    pub max_bytes: u64,
    /// Most images on one message (`BOARDSMITH_UPLOAD_MAX_PER_MESSAGE`, default 4).
    pub max_per_message: usize,
    /// Most bytes of the uploaded images of one message together
    /// (`BOARDSMITH_UPLOAD_MAX_MESSAGE_BYTES`, default 20 MiB).
    pub max_message_bytes: u64,
    /// Most bytes all uploads hold together (`BOARDSMITH_UPLOAD_QUOTA_BYTES`, default a
    /// quarter of `BOARDSMITH_MAX_STORE_BYTES`: 512 MiB).
    pub quota_bytes: u64,
    /// The share of [`UploadLimits::quota_bytes`] the uploads one API key holds may take,
    /// in percent (`BOARDSMITH_UPLOAD_KEY_SHARE_PERCENT`, 1..=100, default 25); the owner has
    /// no share of its own.
    pub key_share_percent: u64,
}

impl Default for UploadLimits {
    fn default() -> Self {
        Self {
            max_bytes: 10 << 20,
            max_per_message: 4,
            max_message_bytes: 20 << 20,
            quota_bytes: StoreQuotas::default().max_store_bytes / 4,
            key_share_percent: 25,
        }
    }
}

impl UploadLimits {
    /// The defaults, overridden by the environment.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let d = Self::default();
        Self {
            max_bytes: var("BOARDSMITH_UPLOAD_MAX_BYTES").unwrap_or(d.max_bytes),
            max_per_message: var("BOARDSMITH_UPLOAD_MAX_PER_MESSAGE")
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(d.max_per_message),
            max_message_bytes: var("BOARDSMITH_UPLOAD_MAX_MESSAGE_BYTES")
                .unwrap_or(d.max_message_bytes),
            // Part of the store's own budget unless said otherwise.
            quota_bytes: var("BOARDSMITH_UPLOAD_QUOTA_BYTES")
                .unwrap_or(StoreQuotas::from_env().max_store_bytes / 4),
            key_share_percent: var("BOARDSMITH_UPLOAD_KEY_SHARE_PERCENT")
                .filter(|p| (1..=100).contains(p))
                .unwrap_or(d.key_share_percent),
        }
    }

    /// What a put by `holder` (`None`: the owner) is held to.
    fn quota(&self, holder: Option<&str>) -> UploadQuota {
        let share = self.quota_bytes / 100 * self.key_share_percent
            + self.quota_bytes % 100 * self.key_share_percent / 100;
        UploadQuota { total: self.quota_bytes, per_holder: holder.map(|_| share) }
    }
}

/// The image types accepted: the ones OpenAI, Anthropic and Ollama all take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageType {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/gif`.
    Gif,
    /// `image/webp`.
    Webp,
}

impl ImageType {
    /// Every accepted type.
    pub const ALL: [Self; 4] = [Self::Png, Self::Jpeg, Self::Gif, Self::Webp];

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    /// The type a MIME type names (parameters and case ignored); `None` for any other.
    pub fn from_mime(mime: &str) -> Option<Self> {
        let essence = mime.split(';').next().unwrap_or_default().trim();
        Self::ALL.into_iter().find(|t| t.mime().eq_ignore_ascii_case(essence))
    }

    /// The type the content's magic bytes say.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else {
            None
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Gif => "gif",
            Self::Webp => "webp",
        }
    }
}

/// A stored upload, as `POST /api/uploads` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadInfo {
    /// The id: the content's hex SHA-256.
    pub id: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` (from the content).
    pub mime_type: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Hex SHA-256 of the content (the id).
    pub sha256: String,
    /// The file name it was uploaded with.
    pub name: String,
}

/// Why an upload was refused or cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Larger than [`UploadLimits::max_bytes`].
    #[error("the upload is larger than {limit} bytes (BOARDSMITH_UPLOAD_MAX_BYTES)")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The declared type is not an accepted image type.
    #[error(
        "`{0}` is not an accepted image type: use image/png, image/jpeg, image/gif or image/webp"
    )]
    UnsupportedType(String),
    /// The content is not the declared type.
    #[error("the content is not {declared}: {}", actual.map_or("not an accepted image type at all", ImageType::mime))]
    Mismatch {
        /// The type the request said.
        declared: &'static str,
        /// What the magic bytes say.
        actual: Option<ImageType>,
    },
    /// No upload with this id.
    #[error("no upload `{0}`")]
    NotFound(String),
    /// Not an upload id (64 hex digits).
    #[error("`{0}` is not an upload id (64 hex digits)")]
    InvalidId(String),
    /// The uploads would pass their quota; nothing was stored.
    #[error(
        "the uploads are full: {used} of {limit} bytes held and this upload needs {needed} more \
         (BOARDSMITH_UPLOAD_QUOTA_BYTES); delete uploads (DELETE /api/uploads/{{id}}) first"
    )]
    QuotaFull {
        /// Bytes all uploads hold.
        used: u64,
        /// Bytes the upload would add.
        needed: u64,
        /// The quota.
        limit: u64,
    },
    /// The API key's uploads would pass its share of the quota; nothing was stored.
    #[error(
        "your uploads hold {used} bytes and this upload needs {needed} more; one API key or \
         person may hold {limit} (BOARDSMITH_UPLOAD_KEY_SHARE_PERCENT of \
         BOARDSMITH_UPLOAD_QUOTA_BYTES); delete some of them (DELETE /api/uploads/{{id}}) first"
    )]
    ShareFull {
        /// Bytes the key's uploads hold.
        used: u64,
        /// Bytes the upload would add.
        needed: u64,
        /// The key's share.
        limit: u64,
    },
    /// The API key deleting it did not upload it.
    #[error("upload `{0}` was not uploaded by you; only its uploaders and admins may delete it")]
    NotYours(String),
    /// Reading or writing the file failed.
    #[error("upload storage: {0}")]
    Io(#[from] std::io::Error),
}

/// Metadata kept beside each file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: String,
    mime_type: String,
    /// Who holds it: API key ids, or [`OWNER`]; none for uploads from before holders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    holders: Vec<String>,
}

/// One upload of a directory, as the quota sees it.
#[derive(Debug, Clone)]
struct Held {
    size: u64,
    holders: Vec<String>,
}

/// What a directory holds, read once, then kept up to date by this node's puts and deletes
/// (the only writers of a node's own directory).
type Index = HashMap<String, Held>;

/// Where the uploads are kept.
#[derive(Debug, Clone)]
enum Backend {
    /// A directory of this node's: a file per content, `<id>.json` beside it. Puts and
    /// deletes take the index's lock, so the quota is checked and spent in one step.
    Files { dir: PathBuf, index: Arc<tokio::sync::Mutex<Option<Index>>> },
    /// A shared store's `uploads` rows, which every node reads.
    Shared(Arc<Store>),
}

/// The upload store.
#[derive(Debug, Clone)]
pub struct Uploads {
    backend: Backend,
    limits: UploadLimits,
}

impl Uploads {
    /// The store in `dir` (created on the first upload).
    pub fn new(dir: impl Into<PathBuf>, limits: UploadLimits) -> Self {
        Self { backend: Backend::Files { dir: dir.into(), index: Arc::default() }, limits }
    }

    /// The store in `store`'s uploads, which every node of a shared store reads.
    pub fn shared(store: Arc<Store>, limits: UploadLimits) -> Self {
        Self { backend: Backend::Shared(store), limits }
    }

    /// The bounds in force.
    pub fn limits(&self) -> UploadLimits {
        self.limits
    }

    /// [`Uploads::put_as`] for the owner.
    #[base::boxed]
    pub async fn put(
        &self,
        mime: &str,
        name: &str,
        bytes: bytes::Bytes,
    ) -> Result<UploadInfo, UploadError> {
        self.put_as(None, mime, name, bytes).await
    }

    /// Checks and stores `bytes` declared as `mime`, named `name` (cleaned; a default from the
    /// type when empty), held by API key `key` (`None`: the owner), within the quota and the
    /// key's share; refused whole otherwise.
    #[base::boxed]
    pub async fn put_as(
        &self,
        key: Option<&str>,
        mime: &str,
        name: &str,
        bytes: bytes::Bytes,
    ) -> Result<UploadInfo, UploadError> {
        let declared =
            ImageType::from_mime(mime).ok_or_else(|| UploadError::UnsupportedType(clip(mime)))?;
        if bytes.len() as u64 > self.limits.max_bytes {
            return Err(UploadError::TooLarge { limit: self.limits.max_bytes });
        }
        let actual = ImageType::sniff(&bytes);
        if actual != Some(declared) {
            return Err(UploadError::Mismatch { declared: declared.mime(), actual });
        }
        let name = clean_name(name, declared);
        let quota = self.limits.quota(key);
        let holder = key.unwrap_or(OWNER).to_owned();
        let id = content_id(&bytes);
        let size = bytes.len() as u64;
        let verdict = match &self.backend {
            Backend::Files { dir, index } => {
                let mut guard = index.lock().await;
                let index = loaded(dir, &mut guard).await?;
                let (exists, mut holders) =
                    index.get(&id).map_or((false, Vec::new()), |h| (true, h.holders.clone()));
                let held = holders.contains(&holder);
                let total = index.values().map(|h| h.size).sum();
                let mine = index.values().filter(|h| h.holders.contains(&holder)).map(|h| h.size);
                let verdict = decide(quota, size, exists, held, total, mine.sum());
                if verdict == UploadPut::Stored {
                    if !held {
                        holders.push(holder);
                    }
                    let meta =
                        Meta { name: name.clone(), mime_type: declared.mime().to_owned(), holders };
                    let (dir, file) = (dir.clone(), id.clone());
                    let meta = blocking(move || store(&dir, &file, meta, &bytes)).await?;
                    index.insert(id.clone(), Held { size, holders: meta.holders });
                }
                verdict
            }
            Backend::Shared(store) => {
                let now = chrono::Utc::now().timestamp_millis();
                store
                    .put_upload_held(&id, &name, declared.mime(), &bytes, now, &holder, quota)
                    .await
                    .map_err(shared)?
            }
        };
        match verdict {
            UploadPut::Stored => Ok(uploaded(id, declared.mime().to_owned(), name, size)),
            UploadPut::OverTotal { used } => {
                Err(UploadError::QuotaFull { used, needed: size, limit: quota.total })
            }
            UploadPut::OverShare { used } => Err(UploadError::ShareFull {
                used,
                needed: size,
                limit: quota.per_holder.unwrap_or(quota.total),
            }),
        }
    }

    /// Deletes upload `id` for API key `key`, which may delete only what it uploaded (its
    /// hold goes; the upload goes with its last holder); `None` (the owner or an admin key)
    /// deletes it whoever uploaded it.
    #[base::boxed]
    pub async fn delete(&self, id: &str, key: Option<&str>) -> Result<(), UploadError> {
        let id = parse_id(id)?;
        let verdict = match &self.backend {
            Backend::Files { dir, index } => {
                let mut guard = index.lock().await;
                let index = loaded(dir, &mut guard).await?;
                let Some(held) = index.get(&id).cloned() else {
                    return Err(UploadError::NotFound(id));
                };
                let verdict = release(&held.holders, key);
                let dir = dir.clone();
                match (verdict, key) {
                    (UploadDelete::Released, Some(key)) => {
                        let holders: Vec<String> =
                            held.holders.into_iter().filter(|h| h != key).collect();
                        let (d, i, h) = (dir, id.clone(), holders.clone());
                        blocking(move || rewrite_holders(&d, &i, h)).await?;
                        index.insert(id.clone(), Held { size: held.size, holders });
                    }
                    (UploadDelete::Removed, _) => {
                        let i = id.clone();
                        blocking(move || remove(&dir, &i)).await?;
                        index.remove(&id);
                    }
                    _ => {}
                }
                verdict
            }
            Backend::Shared(store) => store.delete_upload(&id, key).await.map_err(shared)?,
        };
        match verdict {
            UploadDelete::Released | UploadDelete::Removed => Ok(()),
            UploadDelete::NotFound => Err(UploadError::NotFound(id)),
            UploadDelete::NotHeld => Err(UploadError::NotYours(id)),
        }
    }

    /// An upload's metadata.
    #[base::boxed]
    pub async fn info(&self, id: &str) -> Result<UploadInfo, UploadError> {
        let id = parse_id(id)?;
        match &self.backend {
            Backend::Files { dir, .. } => {
                let dir = dir.clone();
                blocking(move || info(&dir, &id)).await
            }
            Backend::Shared(store) => match store.upload_info(&id).await.map_err(shared)? {
                Some(row) => Ok(row.into()),
                None => Err(UploadError::NotFound(id)),
            },
        }
    }

    /// An upload's metadata and content.
    #[base::boxed]
    pub async fn read(&self, id: &str) -> Result<(UploadInfo, Vec<u8>), UploadError> {
        let id = parse_id(id)?;
        match &self.backend {
            Backend::Files { dir, .. } => {
                let dir = dir.clone();
                blocking(move || {
                    let info = info(&dir, &id)?;
                    let bytes = std::fs::read(dir.join(&id)).map_err(|e| not_found(e, &id))?;
                    Ok((info, bytes))
                })
                .await
            }
            Backend::Shared(store) => match store.upload(&id).await.map_err(shared)? {
                Some((row, bytes)) => Ok((row.into(), bytes)),
                None => Err(UploadError::NotFound(id)),
            },
        }
    }
}

impl From<StoredUpload> for UploadInfo {
    fn from(row: StoredUpload) -> Self {
        uploaded(row.id, row.mime_type, row.name, row.size_bytes)
    }
}

/// A shared store's failure, as the file backend's storage failures are reported.
fn shared(e: store::StoreError) -> UploadError {
    UploadError::Io(std::io::Error::other(e))
}

/// The id of `bytes`: their hex SHA-256.
fn content_id(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn uploaded(id: String, mime_type: String, name: String, size_bytes: u64) -> UploadInfo {
    UploadInfo { sha256: id.clone(), id, mime_type, size_bytes, name }
}

/// One upload of a node's directory with its content, as `boardsmith migrate-store` copies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadFile {
    /// What `<id>.json` says, with the content's size.
    pub info: UploadInfo,
    /// The content.
    pub content: Vec<u8>,
    /// The content file's modification time (unix milliseconds; 0 when the system has none).
    pub created_at: i64,
}

/// The ids of the uploads in `dir` (each with a content file, a metadata file or both), in
/// order; none when `dir` does not exist. Other files (a crashed write's temporary) are left
/// out.
pub fn upload_file_ids(dir: &Path) -> std::io::Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut ids = std::collections::BTreeSet::new();
    for entry in entries {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        let id = name.strip_suffix(".json").unwrap_or(&name);
        if let Ok(id) = parse_id(id) {
            ids.insert(id);
        }
    }
    Ok(ids.into_iter().collect())
}

/// Reads upload `id` of `dir` whole and checks it: a content whose SHA-256 is not its id, or
/// metadata that is missing or unreadable, is [`UploadError::Io`] saying which.
pub fn read_upload_file(dir: &Path, id: &str) -> Result<UploadFile, UploadError> {
    let damaged = |what: String| UploadError::Io(std::io::Error::other(what));
    let path = dir.join(id);
    let content = std::fs::read(&path).map_err(|e| damaged(format!("content: {e}")))?;
    let actual = content_id(&content);
    if actual != id {
        return Err(damaged(format!("the content's SHA-256 is {actual}, not its name")));
    }
    let meta = std::fs::read(dir.join(format!("{id}.json")))
        .map_err(|e| e.to_string())
        .and_then(|m| serde_json::from_slice::<Meta>(&m).map_err(|e| e.to_string()))
        .map_err(|e| damaged(format!("metadata {id}.json: {e}")))?;
    let info = uploaded(id.to_owned(), meta.mime_type, meta.name, content.len() as u64);
    let created_at = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Ok(UploadFile { info, content, created_at })
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, UploadError> + Send + 'static,
) -> Result<T, UploadError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| UploadError::Io(std::io::Error::other(e)))?
}

fn parse_id(id: &str) -> Result<String, UploadError> {
    let ok = id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit());
    if ok { Ok(id.to_ascii_lowercase()) } else { Err(UploadError::InvalidId(clip(id))) }
}

fn not_found(e: std::io::Error, id: &str) -> UploadError {
    if e.kind() == std::io::ErrorKind::NotFound {
        UploadError::NotFound(id.to_owned())
    } else {
        UploadError::Io(e)
    }
}

fn info(dir: &Path, id: &str) -> Result<UploadInfo, UploadError> {
    let meta = std::fs::read(dir.join(format!("{id}.json"))).map_err(|e| not_found(e, id))?;
    let meta: Meta = serde_json::from_slice(&meta).map_err(|e| UploadError::Io(e.into()))?;
    let size = std::fs::metadata(dir.join(id)).map_err(|e| not_found(e, id))?.len();
    Ok(uploaded(id.to_owned(), meta.mime_type, meta.name, size))
}

/// The index of `dir` in `slot`, read from the directory the first time.
async fn loaded<'a>(dir: &Path, slot: &'a mut Option<Index>) -> Result<&'a mut Index, UploadError> {
    if slot.is_none() {
        let dir = dir.to_owned();
        *slot = Some(blocking(move || read_index(&dir)).await?);
    }
    slot.as_mut().ok_or_else(|| UploadError::Io(std::io::Error::other("upload index")))
}

/// Every upload of `dir` with its size and holders; one whose metadata cannot be read still
/// counts its content's bytes (held by nobody: only the owner or an admin deletes it).
fn read_index(dir: &Path) -> Result<Index, UploadError> {
    let mut index = Index::new();
    for id in upload_file_ids(dir)? {
        let Ok(size) = std::fs::metadata(dir.join(&id)).map(|m| m.len()) else { continue };
        let holders = std::fs::read(dir.join(format!("{id}.json")))
            .ok()
            .and_then(|m| serde_json::from_slice::<Meta>(&m).ok())
            .map(|m| m.holders)
            .unwrap_or_default();
        index.insert(id, Held { size, holders });
    }
    Ok(index)
}

/// Writes the content (once: it is named by its hash) and its metadata, each through a
/// temporary file renamed into place, so a reader never sees half a file.
fn store(dir: &Path, id: &str, meta: Meta, bytes: &[u8]) -> Result<Meta, UploadError> {
    base::fs_private::create_dir_all(dir)?;
    let path = dir.join(id);
    if !path.exists() {
        write_atomic(dir, &path, bytes)?;
    }
    write_meta(dir, id, &meta)?;
    Ok(meta)
}

fn write_meta(dir: &Path, id: &str, meta: &Meta) -> Result<(), UploadError> {
    let text = serde_json::to_vec(meta).map_err(|e| UploadError::Io(e.into()))?;
    write_atomic(dir, &dir.join(format!("{id}.json")), &text)?;
    Ok(())
}

/// Keeps upload `id` with only `holders`.
fn rewrite_holders(dir: &Path, id: &str, holders: Vec<String>) -> Result<(), UploadError> {
    let meta = std::fs::read(dir.join(format!("{id}.json"))).map_err(|e| not_found(e, id))?;
    let meta: Meta = serde_json::from_slice(&meta).map_err(|e| UploadError::Io(e.into()))?;
    write_meta(dir, id, &Meta { holders, ..meta })
}

/// Removes upload `id`: its metadata first, which every read starts from, so it is gone for
/// readers at once.
fn remove(dir: &Path, id: &str) -> Result<(), UploadError> {
    for path in [dir.join(format!("{id}.json")), dir.join(id)] {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(UploadError::Io(e)),
        }
    }
    Ok(())
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".tmp-{}", uuid::Uuid::now_v7()));
    let written =
        base::fs_private::options().write(true).create_new(true).open(&tmp).and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A file name as shown back: no path, no control characters, at most 120 characters; a
/// default from the type when nothing is left.
fn clean_name(name: &str, kind: ImageType) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = base.chars().filter(|c| !c.is_control()).take(120).collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() { format!("image.{}", kind.extension()) } else { cleaned.to_owned() }
}

fn clip(s: &str) -> String {
    base::text::clip(s, 100)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The smallest PNG signature plus a little: enough for the sniffer.
    pub(crate) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn store_in(dir: &Path, max_bytes: u64) -> Uploads {
        Uploads::new(dir, UploadLimits { max_bytes, ..UploadLimits::default() })
    }

    #[test]
    fn magic_bytes_name_the_four_types_and_nothing_else() {
        assert_eq!(ImageType::sniff(PNG), Some(ImageType::Png));
        assert_eq!(ImageType::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(ImageType::Jpeg));
        assert_eq!(ImageType::sniff(b"GIF89a...."), Some(ImageType::Gif));
        assert_eq!(ImageType::sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageType::Webp));
        assert_eq!(ImageType::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(ImageType::sniff(b"<svg xmlns="), None);
        assert_eq!(ImageType::from_mime("Image/PNG; charset=binary"), Some(ImageType::Png));
        assert_eq!(ImageType::from_mime("image/svg+xml"), None);
    }

    #[tokio::test]
    async fn an_upload_is_stored_by_its_hash_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let uploads = store_in(dir.path(), 1024);
        let info = uploads.put("image/png", "C:\\shots\\chart\u{7}.png", PNG.into()).await.unwrap();
        assert_eq!(info.id.len(), 64);
        assert_eq!(info.sha256, info.id);
        assert_eq!((info.name.as_str(), info.size_bytes), ("chart.png", PNG.len() as u64));
        assert_eq!(info.mime_type, "image/png");
        let (read, bytes) = uploads.read(&info.id.to_uppercase()).await.unwrap();
        assert_eq!((read, bytes.as_slice()), (info.clone(), PNG));
        // The same content again is the same file, under its latest name.
        let again = uploads.put("image/png", "", PNG.into()).await.unwrap();
        assert_eq!((again.id.as_str(), again.name.as_str()), (info.id.as_str(), "image.png"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[tokio::test]
    async fn refusals_name_the_limit_the_type_or_the_id() {
        let dir = tempfile::tempdir().unwrap();
        let uploads = store_in(dir.path(), 16);
        let big = [PNG, &[0u8; 16]].concat();
        assert!(matches!(
            uploads.put("image/png", "x", big.into()).await,
            Err(UploadError::TooLarge { limit: 16 })
        ));
        assert!(matches!(
            uploads.put("image/svg+xml", "x", PNG.into()).await,
            Err(UploadError::UnsupportedType(t)) if t == "image/svg+xml"
        ));
        let e = uploads.put("image/jpeg", "x", PNG.into()).await.unwrap_err();
        assert_eq!(e.to_string(), "the content is not image/jpeg: image/png");
        assert!(matches!(uploads.info(&"a".repeat(64)).await, Err(UploadError::NotFound(_))));
        assert!(matches!(uploads.info("../etc/passwd").await, Err(UploadError::InvalidId(_))));
        assert_eq!(std::fs::read_dir(dir.path()).map_or(0, Iterator::count), 0);
    }

    #[tokio::test]
    async fn upload_files_are_read_back_checked_for_a_copy() {
        let dir = tempfile::tempdir().unwrap();
        let uploads = store_in(dir.path(), 1024);
        let good = uploads.put("image/png", "a.png", PNG.into()).await.unwrap();
        let gif = uploads.put("image/gif", "b.gif", b"GIF89a....".as_slice().into()).await.unwrap();
        // Content that is not its name's, metadata that is not JSON, metadata alone, a stray.
        let forged = "f".repeat(64);
        std::fs::write(dir.path().join(&forged), PNG).unwrap();
        std::fs::copy(
            dir.path().join(format!("{}.json", good.id)),
            dir.path().join(format!("{forged}.json")),
        )
        .unwrap();
        std::fs::write(dir.path().join(format!("{}.json", gif.id)), "{").unwrap();
        let orphan = "e".repeat(64);
        std::fs::write(dir.path().join(format!("{orphan}.json")), "{}").unwrap();
        std::fs::write(dir.path().join(".tmp-x"), "").unwrap();

        let ids = upload_file_ids(dir.path()).unwrap();
        let mut expected = vec![good.id.clone(), gif.id.clone(), forged.clone(), orphan.clone()];
        expected.sort();
        assert_eq!(ids, expected);
        let read = read_upload_file(dir.path(), &good.id).unwrap();
        assert_eq!((read.info, read.content.as_slice()), (good, PNG));
        assert!(read.created_at > 0);
        for (id, says) in [(&forged, "SHA-256"), (&gif.id, "metadata"), (&orphan, "content")] {
            let e = read_upload_file(dir.path(), id).unwrap_err().to_string();
            assert!(e.contains(says), "{id}: {e}");
        }
        assert!(upload_file_ids(&dir.path().join("none")).unwrap().is_empty());
    }
}
