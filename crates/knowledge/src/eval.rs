//! Retrieval quality on a labeled set: documents (`docs/<slug>.md`) and queries
//! (`queries.json`: `[{query, relevant: [slug, ...]}]`), as shipped in `tests/kb/`. Used by
//! the quality test and `boardsmith bench kb`.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::{Knowledge, KnowledgeError, NewDocument, SearchMode};

/// One labeled query.
#[derive(Debug, Clone, Deserialize)]
pub struct LabeledQuery {
    /// The question.
    pub query: String,
    /// Slugs of the documents that answer it.
    pub relevant: Vec<String>,
}

/// A labeled set.
#[derive(Debug, Clone)]
pub struct LabeledSet {
    /// `(slug, markdown)` of each document.
    pub docs: Vec<(String, String)>,
    /// The queries.
    pub queries: Vec<LabeledQuery>,
}

impl LabeledSet {
    /// Reads `dir/docs/*.md` and `dir/queries.json`.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let mut docs = Vec::new();
        let entries = std::fs::read_dir(dir.join("docs"))
            .map_err(|e| format!("{}: {e}", dir.join("docs").display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|e| e == "md") {
                let slug =
                    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                docs.push((slug, text));
            }
        }
        docs.sort();
        let q = dir.join("queries.json");
        let text = std::fs::read_to_string(&q).map_err(|e| format!("{}: {e}", q.display()))?;
        let queries: Vec<LabeledQuery> =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", q.display()))?;
        for lq in &queries {
            if let Some(bad) = lq.relevant.iter().find(|r| !docs.iter().any(|(s, _)| s == *r)) {
                return Err(format!("query `{}` names unknown document `{bad}`", lq.query));
            }
        }
        Ok(Self { docs, queries })
    }

    /// Adds every document to base `kb`; returns slug by document id.
    #[base::boxed]
    pub async fn ingest(
        &self,
        knowledge: &Knowledge,
        kb: &str,
    ) -> Result<HashMap<String, String>, KnowledgeError> {
        let mut by_id = HashMap::new();
        for (slug, markdown) in &self.docs {
            let doc = NewDocument::Markdown { title: String::new(), markdown: markdown.clone() };
            let info = knowledge.add(kb, doc).await?;
            by_id.insert(info.id, slug.clone());
        }
        Ok(by_id)
    }

    /// Mean recall@k over the queries (the share of each query's relevant documents among
    /// the documents of its top `k` chunks), and the mode that answered.
    #[base::boxed]
    pub async fn recall(
        &self,
        knowledge: &Knowledge,
        kb: &str,
        slugs: &HashMap<String, String>,
        k: usize,
    ) -> Result<(f64, SearchMode), KnowledgeError> {
        let mut total = 0.0;
        let mut mode = SearchMode::Bm25;
        for q in &self.queries {
            let answer = knowledge.search(&[kb.to_owned()], &q.query, k).await?;
            mode = answer.mode;
            let found: Vec<&String> =
                answer.results.iter().filter_map(|r| slugs.get(&r.document_id)).collect();
            let hit = q.relevant.iter().filter(|r| found.contains(r)).count();
            total += hit as f64 / q.relevant.len().max(1) as f64;
        }
        Ok((total / self.queries.len().max(1) as f64, mode))
    }
}
