//! Knowledge bases on a shared store: each base's record and each document's record with its
//! chunks, as opaque text. Every write sends a `kb` notice in its own statement; the nodes'
//! local search indexes are caches they bring up to date from these rows.
//!
//! Knows nothing of documents, chunks or search.

use serde_json::json;

use super::{CHANNEL, Postgres, pg};
use crate::{KbCatalog, StoreError};

impl Postgres {
    fn kb_notice(&self) -> String {
        json!({ "node": &*self.node, "kb": true }).to_string()
    }

    pub(crate) async fn kb_put_base(&self, id: &str, meta: &str) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.execute(
            "WITH w AS (
                 INSERT INTO kb_bases (id, meta) VALUES ($1, $2)
                 ON CONFLICT (id) DO UPDATE SET meta = EXCLUDED.meta RETURNING 1
             ) SELECT pg_notify($3, $4) FROM w",
            &[&id, &meta, &CHANNEL, &self.kb_notice()],
        )
        .await
        .map_err(pg("store a knowledge base"))?;
        Ok(())
    }

    pub(crate) async fn kb_delete_base(&self, id: &str) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.execute(
            "WITH d AS (DELETE FROM kb_documents WHERE kb = $1),
                  b AS (DELETE FROM kb_bases WHERE id = $1)
             SELECT pg_notify($2, $3)",
            &[&id, &CHANNEL, &self.kb_notice()],
        )
        .await
        .map_err(pg("delete a knowledge base"))?;
        Ok(())
    }

    pub(crate) async fn kb_put_document(
        &self,
        kb: &str,
        id: &str,
        meta: &str,
        chunks: &str,
    ) -> Result<(), StoreError> {
        let c = self.client().await?;
        // Only into a base that still exists: a document is never added to a deleted base.
        let stored = c
            .query_opt(
                "WITH w AS (
                     INSERT INTO kb_documents (id, kb, meta, chunks)
                     SELECT $2, $1, $3, $4 WHERE EXISTS (SELECT 1 FROM kb_bases WHERE id = $1)
                     ON CONFLICT (id) DO NOTHING RETURNING 1
                 ) SELECT pg_notify($5, $6)::text FROM w",
                &[&kb, &id, &meta, &chunks, &CHANNEL, &self.kb_notice()],
            )
            .await
            .map_err(pg("store a knowledge-base document"))?;
        match stored {
            Some(_) => Ok(()),
            None => Err(StoreError::Storage(format!("knowledge base `{kb}` is gone"))),
        }
    }

    pub(crate) async fn kb_delete_document(&self, id: &str) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.execute(
            "WITH d AS (DELETE FROM kb_documents WHERE id = $1) SELECT pg_notify($2, $3)",
            &[&id, &CHANNEL, &self.kb_notice()],
        )
        .await
        .map_err(pg("delete a knowledge-base document"))?;
        Ok(())
    }

    pub(crate) async fn kb_catalog(&self) -> Result<KbCatalog, StoreError> {
        let c = self.client().await?;
        let bases = c
            .query("SELECT id, meta FROM kb_bases ORDER BY id", &[])
            .await
            .map_err(pg("read the knowledge bases"))?;
        let docs = c
            .query("SELECT kb, id, meta FROM kb_documents ORDER BY id", &[])
            .await
            .map_err(pg("read the knowledge-base documents"))?;
        Ok(KbCatalog {
            bases: bases.iter().map(|r| (r.get(0), r.get(1))).collect(),
            documents: docs.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect(),
        })
    }

    pub(crate) async fn kb_chunks(&self, id: &str) -> Result<Option<String>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt("SELECT chunks FROM kb_documents WHERE id = $1", &[&id])
            .await
            .map_err(pg("read a document's chunks"))?;
        Ok(row.map(|r| r.get(0)))
    }
}
