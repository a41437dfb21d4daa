//! Uploaded images' content in a shared store (PostgreSQL's `uploads`), so an image uploaded
//! through one node is read through any other: one row per id with a name, a MIME type and
//! the bytes. The store knows nothing of image types or of how ids are made (`uploads` owns
//! both: an id is its content's hex SHA-256, so the same id means the same bytes). With the
//! embedded store uploads are files (`<data>/uploads/`), so every call here answers
//! [`StoreError::Storage`].
//!
//! Each upload has *holders* (whoever uploaded it: an API key's id, or [`OWNER`]), which the
//! quota and deletes go by. The rules are here once, [`decide`] and [`release`], for the
//! shared store's statements and the file backend of `crate::uploads` alike.

use super::postgres::Postgres;
use super::{Engine, Store, StoreError};

/// What is stored of an upload, besides its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUpload {
    /// The id the uploader gave.
    pub id: String,
    /// The name it was last put with.
    pub name: String,
    /// The MIME type it was last put with (any string: the store does not read it).
    pub mime_type: String,
    /// The content's length in bytes.
    pub size_bytes: u64,
    /// When it was first put, as its writer said (unix milliseconds).
    pub created_at: i64,
}

/// The holder name of uploads made with the server's token (API keys' ids are `key_…`).
pub const OWNER: &str = "owner";

/// What a checked put is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadQuota {
    /// Bytes all uploads together may hold.
    pub total: u64,
    /// Bytes the uploads one holder holds may add up to; `None`: only the total.
    pub per_holder: Option<u64>,
}

/// What a checked put did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadPut {
    /// Stored (or, for content already there, now held by this holder too).
    Stored,
    /// Refused: it would take the uploads past [`UploadQuota::total`]; `used` bytes are held.
    OverTotal {
        /// Bytes all uploads hold.
        used: u64,
    },
    /// Refused: it would take the holder past [`UploadQuota::per_holder`]; it holds `used`.
    OverShare {
        /// Bytes of the uploads this holder holds.
        used: u64,
    },
}

/// What a delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadDelete {
    /// No upload with this id.
    NotFound,
    /// The deleting key does not hold it: nothing changed.
    NotHeld,
    /// The key's hold is gone; other holders keep the upload.
    Released,
    /// The upload is gone.
    Removed,
}

/// Whether a put of `size` bytes may go ahead: new content must fit the total (content that
/// is there already adds nothing), and a holder taking on content it does not hold yet must
/// stay within its share.
pub fn decide(
    quota: UploadQuota,
    size: u64,
    exists: bool,
    held: bool,
    total_used: u64,
    holder_used: u64,
) -> UploadPut {
    if !exists && total_used.saturating_add(size) > quota.total {
        return UploadPut::OverTotal { used: total_used };
    }
    if let Some(share) = quota.per_holder
        && !held
        && holder_used.saturating_add(size) > share
    {
        return UploadPut::OverShare { used: holder_used };
    }
    UploadPut::Stored
}

/// What deleting an upload held by `holders` does for `by` (`None`: the owner or an admin,
/// who remove it whoever holds it).
pub fn release(holders: &[String], by: Option<&str>) -> UploadDelete {
    match by {
        None => UploadDelete::Removed,
        Some(key) if !holders.iter().any(|h| h == key) => UploadDelete::NotHeld,
        Some(_) if holders.len() > 1 => UploadDelete::Released,
        Some(_) => UploadDelete::Removed,
    }
}

impl Store {
    fn upload_engine(&self) -> Result<&Postgres, StoreError> {
        match &self.engine {
            Engine::Embedded(_) => Err(StoreError::Storage(
                "uploads are kept in files (<data>/uploads) with the embedded store, not in it"
                    .into(),
            )),
            Engine::Postgres(p) => Ok(p),
        }
    }

    /// Stores `content` under `id`. Putting an id again keeps the first content and time
    /// (an id names one content) and takes the new name and MIME type.
    #[base::boxed]
    pub async fn put_upload(
        &self,
        id: &str,
        name: &str,
        mime_type: &str,
        content: &[u8],
        created_at: i64,
    ) -> Result<(), StoreError> {
        self.upload_engine()?.put_upload(id, name, mime_type, content, created_at).await
    }

    /// Stores `content` under `id` for `holder` within `quota` ([`decide`]), as one
    /// transaction across nodes; a refused put writes nothing.
    #[allow(clippy::too_many_arguments)]
    #[base::boxed]
    pub async fn put_upload_held(
        &self,
        id: &str,
        name: &str,
        mime_type: &str,
        content: &[u8],
        created_at: i64,
        holder: &str,
        quota: UploadQuota,
    ) -> Result<UploadPut, StoreError> {
        self.upload_engine()?
            .put_upload_held(id, name, mime_type, content, created_at, holder, quota)
            .await
    }

    /// Deletes upload `id` for `by` ([`release`]; `None`: whoever holds it).
    #[base::boxed]
    pub async fn delete_upload(
        &self,
        id: &str,
        by: Option<&str>,
    ) -> Result<UploadDelete, StoreError> {
        self.upload_engine()?.delete_upload(id, by).await
    }

    /// An upload's name, type and size, without its bytes; `None` for an unknown id.
    #[base::boxed]
    pub async fn upload_info(&self, id: &str) -> Result<Option<StoredUpload>, StoreError> {
        self.upload_engine()?.upload_info(id).await
    }

    /// An upload with its bytes; `None` for an unknown id.
    #[base::boxed]
    pub async fn upload(&self, id: &str) -> Result<Option<(StoredUpload, Vec<u8>)>, StoreError> {
        self.upload_engine()?.upload(id).await
    }

    /// Every upload (without bytes), by id.
    #[base::boxed]
    pub async fn upload_index(&self) -> Result<Vec<StoredUpload>, StoreError> {
        self.upload_engine()?.upload_index().await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn new_content_must_fit_the_total_and_a_holder_its_share() {
        let q = UploadQuota { total: 100, per_holder: Some(25) };
        assert_eq!(decide(q, 20, false, false, 70, 0), UploadPut::Stored);
        assert_eq!(decide(q, 40, false, false, 70, 0), UploadPut::OverTotal { used: 70 });
        // Content already there adds nothing to the total, but does to a new holder's share.
        assert_eq!(decide(q, 40, true, false, 100, 0), UploadPut::OverShare { used: 0 });
        assert_eq!(decide(q, 20, true, false, 100, 5), UploadPut::Stored);
        assert_eq!(decide(q, 20, false, false, 0, 10), UploadPut::OverShare { used: 10 });
        // What it holds already costs it nothing more.
        assert_eq!(decide(q, 20, true, true, 100, 25), UploadPut::Stored);
        let owner = UploadQuota { per_holder: None, ..q };
        assert_eq!(decide(owner, 90, false, false, 0, 0), UploadPut::Stored);
    }

    #[test]
    fn a_key_deletes_only_its_hold_and_the_last_holder_the_upload() {
        let holders = vec!["key_a".to_owned(), OWNER.to_owned()];
        assert_eq!(release(&holders, Some("key_b")), UploadDelete::NotHeld);
        assert_eq!(release(&holders, Some("key_a")), UploadDelete::Released);
        assert_eq!(release(&holders[..1], Some("key_a")), UploadDelete::Removed);
        assert_eq!(release(&holders, None), UploadDelete::Removed);
        assert_eq!(release(&[], Some("key_a")), UploadDelete::NotHeld, "made before holders");
    }

    #[tokio::test]
    async fn the_embedded_store_says_uploads_are_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let err = store.put_upload("a", "a.png", "image/png", b"x", 1).await.unwrap_err();
        assert!(matches!(&err, StoreError::Storage(m) if m.contains("<data>/uploads")), "{err}");
        assert!(store.upload("a").await.is_err());
        assert!(store.upload_index().await.is_err());
        store.shutdown().await;
    }
}
