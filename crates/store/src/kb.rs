//! The facade of knowledge bases on a shared store (see `postgres::kb`); on the embedded store
//! a node's own index is the only copy, so these calls are refused.

use super::{Engine, Store, StoreError};

/// Every base and document record: `(id, meta)` per base, `(base, id, meta)` per document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KbCatalog {
    /// The bases.
    pub bases: Vec<(String, String)>,
    /// The documents.
    pub documents: Vec<(String, String, String)>,
}

fn embedded() -> StoreError {
    StoreError::Storage(
        "knowledge bases are kept in the node's own index on the embedded store".into(),
    )
}

impl Store {
    /// Stores (or replaces) a base's record.
    #[base::boxed]
    pub async fn kb_put_base(&self, id: &str, meta: &str) -> Result<(), StoreError> {
        on_shared!(self, Err(embedded()), p => p.kb_put_base(id, meta).await)
    }

    /// Deletes a base's record and its documents'.
    #[base::boxed]
    pub async fn kb_delete_base(&self, id: &str) -> Result<(), StoreError> {
        on_shared!(self, Err(embedded()), p => p.kb_delete_base(id).await)
    }

    /// Stores a document's record and chunks (JSON), if its base still exists.
    #[base::boxed]
    pub async fn kb_put_document(
        &self,
        kb: &str,
        id: &str,
        meta: &str,
        chunks: &str,
    ) -> Result<(), StoreError> {
        on_shared!(self, Err(embedded()), p => p.kb_put_document(kb, id, meta, chunks).await)
    }

    /// Deletes a document's record and chunks.
    #[base::boxed]
    pub async fn kb_delete_document(&self, id: &str) -> Result<(), StoreError> {
        on_shared!(self, Err(embedded()), p => p.kb_delete_document(id).await)
    }

    /// Every base and document record (not the chunks).
    #[base::boxed]
    pub async fn kb_catalog(&self) -> Result<KbCatalog, StoreError> {
        on_shared!(self, Err(embedded()), p => p.kb_catalog().await)
    }

    /// A document's chunks (JSON), if it exists.
    #[base::boxed]
    pub async fn kb_chunks(&self, id: &str) -> Result<Option<String>, StoreError> {
        on_shared!(self, Err(embedded()), p => p.kb_chunks(id).await)
    }
}
