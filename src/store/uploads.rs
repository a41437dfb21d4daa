//! Uploaded images' content in a shared store (PostgreSQL's `uploads`), so an image uploaded
//! through one node is read through any other: one row per id with a name, a MIME type and
//! the bytes. The store knows nothing of image types or of how ids are made (`uploads` owns
//! both: an id is its content's hex SHA-256, so the same id means the same bytes). With the
//! embedded store uploads are files (`<data>/uploads/`), so every call here answers
//! [`StoreError::Storage`].

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

    /// An upload's name, type and size, without its bytes; `None` for an unknown id.
    pub async fn upload_info(&self, id: &str) -> Result<Option<StoredUpload>, StoreError> {
        self.upload_engine()?.upload_info(id).await
    }

    /// An upload with its bytes; `None` for an unknown id.
    pub async fn upload(&self, id: &str) -> Result<Option<(StoredUpload, Vec<u8>)>, StoreError> {
        self.upload_engine()?.upload(id).await
    }

    /// Every upload (without bytes), by id.
    pub async fn upload_index(&self) -> Result<Vec<StoredUpload>, StoreError> {
        self.upload_engine()?.upload_index().await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
