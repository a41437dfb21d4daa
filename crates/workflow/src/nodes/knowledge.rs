//! `knowledge`: retrieval from the knowledge bases — the rendered `query` searched in one base
//! (by name or id) or all of them, BM25 or hybrid as the server is configured. Streams one
//! `source.snapshot` per document cited, tagged with the task. Output: `{results: [{documentId,
//! title, url?, chunk, score}], mode}`, best first.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::json;

use super::{CheckContext, Field, FieldType, NodeCtx, NodeError, NodeResult};
use agent::events::EventBody;

pub(super) const DESCRIPTION: &str = "Searches the knowledge bases for `query` (a template) \
    in `kb` (a name or id; default: every base). Output: `{results: [{documentId, title, url?, \
    chunk, score}], mode}`, best first.";

/// Results when `k` is not given.
const DEFAULT_K: u64 = 5;

pub(super) const FIELDS: &[Field] = &[
    Field {
        name: "query",
        ty: FieldType::Template,
        required: true,
        description: "what to search for",
    },
    Field {
        name: "kb",
        ty: FieldType::String,
        required: false,
        description: "the base's name or id (default: every base)",
    },
    Field {
        name: "k",
        ty: FieldType::Integer,
        required: false,
        description: "how many passages, 1 to 50 (default 5)",
    },
];

/// A `knowledge` node.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    query: String,
    #[serde(default)]
    kb: Option<String>,
    #[serde(default)]
    k: Option<u64>,
}

pub(super) fn check(config: &Config, cx: &CheckContext) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if config.query.trim().is_empty() {
        out.push(("query".to_owned(), "must not be empty".to_owned()));
    }
    if let Some(kb) = &config.kb
        && !cx.knowledge_bases.iter().any(|(id, name)| id == kb || name == kb)
    {
        let names: Vec<&str> = cx.knowledge_bases.iter().map(|(_, n)| n.as_str()).collect();
        out.push((
            "kb".to_owned(),
            format!("no knowledge base `{kb}`; there are: {}", names.join(", ")),
        ));
    }
    if config.k.is_some_and(|k| !(1..=50).contains(&k)) {
        out.push(("k".to_owned(), "must be from 1 to 50".to_owned()));
    }
    out
}

pub(super) async fn run(config: &Config, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
    let knowledge = &ctx.deps.knowledge;
    let query = ctx.scope.render(&config.query)?;
    // The bases of the person the run is for (a run for nobody in particular: the owner's).
    let who = ctx.principal.clone().unwrap_or(base::principal::Principal::Owner);
    let kbs: Vec<String> = match &config.kb {
        Some(key) => match knowledge.find_for(key, &who) {
            Some(base) => vec![base.id],
            None => return Err(NodeError::new(format!("no knowledge base `{key}`"))),
        },
        None => knowledge.list_for(&who).into_iter().map(|b| b.id).collect(),
    };
    let k = usize::try_from(config.k.unwrap_or(DEFAULT_K)).unwrap_or(usize::MAX);
    let answer =
        knowledge.search(&kbs, &query, k).await.map_err(|e| NodeError::new(e.to_string()))?;
    let mut cited = HashSet::new();
    for r in &answer.results {
        if cited.insert(r.document_id.clone()) {
            ctx.sink.emit(EventBody::SourceSnapshot {
                source_id: r.document_id.clone(),
                run_id: Some(ctx.run_id.clone()),
                task_id: Some(ctx.task_id.clone()),
                icon: None,
                title: Some(r.title.clone()),
                url: r.url.clone(),
            });
        }
    }
    let results: Vec<_> = answer
        .results
        .iter()
        .map(|r| {
            json!({"documentId": r.document_id, "title": r.title, "url": r.url, "chunk": r.chunk, "score": r.score})
        })
        .collect();
    Ok(NodeResult::output(json!({"results": results, "mode": answer.mode})))
}
