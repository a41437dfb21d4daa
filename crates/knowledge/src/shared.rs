//! Knowledge bases shared by several nodes: the store holds every base and document (with its
//! chunks and vectors), each node's index is a cache of it. A write goes to the store first,
//! then into this node's index; other nodes hear of it (a notice) and [`Knowledge::sync`]
//! their cache: bases and documents the store has and the cache lacks are written into it,
//! those it no longer has are removed. Search is always local.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::index::NewChunk;
use super::{DocumentInfo, Knowledge, KnowledgeBase, KnowledgeConfig, KnowledgeError, shared_err};
use llm::Models;
use sdk::Sdk;
use store::Store;

impl Knowledge {
    /// Opens this node's cache of the bases in `store` (shared by several nodes) and brings it
    /// up to date.
    #[base::boxed]
    pub async fn open_shared(
        config: KnowledgeConfig,
        models: Arc<Models>,
        sdk: Arc<Sdk>,
        store: Arc<Store>,
    ) -> Result<Arc<Self>, KnowledgeError> {
        let knowledge = Self::open_in(config, models, sdk, Some(store)).await?;
        knowledge.sync().await?;
        Ok(knowledge)
    }

    /// Brings this node's cache up to date with the store (nothing to do without one).
    #[base::boxed]
    pub async fn sync(&self) -> Result<(), KnowledgeError> {
        let Some(store) = &self.shared else { return Ok(()) };
        let _w = self.writes.lock().await;
        let catalog = store.kb_catalog().await.map_err(shared_err)?;
        let bases: Vec<KnowledgeBase> =
            catalog.bases.iter().filter_map(|(_, meta)| serde_json::from_str(meta).ok()).collect();
        let docs: Vec<DocumentInfo> = catalog
            .documents
            .iter()
            .filter_map(|(_, _, meta)| serde_json::from_str(meta).ok())
            .collect();
        let base_ids: BTreeSet<&str> = bases.iter().map(|b| b.id.as_str()).collect();
        let doc_ids: BTreeSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
        let (gone_bases, gone_docs): (Vec<String>, Vec<DocumentInfo>) = {
            let c = self.read();
            (
                c.bases.keys().filter(|id| !base_ids.contains(id.as_str())).cloned().collect(),
                c.docs.values().filter(|d| !doc_ids.contains(d.id.as_str())).cloned().collect(),
            )
        };
        for id in gone_bases {
            self.apply_delete_base(&id).await?;
        }
        for doc in gone_docs.iter().filter(|d| base_ids.contains(d.kb_id.as_str())) {
            self.apply_delete_document(doc).await?;
        }
        for base in bases {
            // New here, or changed on another node (its visibility): the counts are this
            // node's own.
            let changed = self.read().bases.get(&base.id).is_none_or(|held| {
                (&held.name, &held.description, &held.owner, held.visibility)
                    != (&base.name, &base.description, &base.owner, base.visibility)
            });
            if changed {
                self.apply_base(base).await?;
            }
        }
        for doc in docs {
            if self.read().docs.contains_key(&doc.id) {
                continue;
            }
            // Deleted since the catalog was read: the next notice removes nothing then.
            let Some(text) = store.kb_chunks(&doc.id).await.map_err(shared_err)? else {
                continue;
            };
            let chunks: Vec<NewChunk> = serde_json::from_str(&text)
                .map_err(|e| KnowledgeError::Index(format!("document `{}`: {e}", doc.id)))?;
            self.apply_document(doc, chunks).await?;
        }
        Ok(())
    }
}

/// What [`copy_index`] copied: counts and the SHA-256 of each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KbCopy {
    /// Bases copied.
    pub bases: usize,
    /// Documents copied.
    pub documents: usize,
    /// SHA-256 over each base (id, record) and document (id, record, chunks) written.
    pub source_sha256: String,
    /// The same over what the store reads back; equal to the source's.
    pub target_sha256: String,
}

/// Copies the embedded index under `kb_dir` (`<data>/kb`) into `store`, which must hold no
/// knowledge base yet, and reads it back to prove it.
#[base::boxed]
pub async fn copy_index(kb_dir: &std::path::Path, store: &Store) -> Result<KbCopy, KnowledgeError> {
    use sha2::{Digest, Sha256};
    if !store.kb_catalog().await.map_err(shared_err)?.bases.is_empty() {
        return Err(KnowledgeError::Conflict("the target already holds knowledge bases".into()));
    }
    let dir = kb_dir.join("index");
    let mut report = KbCopy {
        bases: 0,
        documents: 0,
        source_sha256: String::new(),
        target_sha256: String::new(),
    };
    let mut source: Vec<(String, String, String)> = Vec::new();
    if dir.exists() {
        let index = super::index::KbIndex::open(&dir)?;
        let loaded = index.load()?;
        for (kb, meta) in &loaded.bases {
            store.kb_put_base(kb, meta).await.map_err(shared_err)?;
            source.push((kb.clone(), meta.clone(), String::new()));
            report.bases += 1;
        }
        for (kb, doc, meta) in &loaded.docs {
            let chunks = super::json_of(&index.chunks(doc)?)?;
            store.kb_put_document(kb, doc, meta, &chunks).await.map_err(shared_err)?;
            source.push((doc.clone(), meta.clone(), chunks));
            report.documents += 1;
        }
    }
    let digest = |mut rows: Vec<(String, String, String)>| {
        rows.sort();
        let mut h = Sha256::new();
        for (id, meta, chunks) in rows {
            for part in [id, meta, chunks] {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let catalog = store.kb_catalog().await.map_err(shared_err)?;
    let mut target: Vec<(String, String, String)> =
        catalog.bases.into_iter().map(|(id, meta)| (id, meta, String::new())).collect();
    for (_, doc, meta) in catalog.documents {
        let chunks = store.kb_chunks(&doc).await.map_err(shared_err)?.unwrap_or_default();
        target.push((doc, meta, chunks));
    }
    report.source_sha256 = digest(source);
    report.target_sha256 = digest(target);
    if report.source_sha256 != report.target_sha256 {
        return Err(KnowledgeError::Index(format!(
            "the knowledge bases read back differ: source sha256 {}, target {}",
            report.source_sha256, report.target_sha256
        )));
    }
    Ok(report)
}
