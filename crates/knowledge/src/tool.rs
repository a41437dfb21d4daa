//! `knowledge_search`, the agent tool over [`Knowledge::search`]: arguments `{query, kb?, k?}`,
//! the bases an agent may search (all, unless its file lists `knowledgeBases` by name or id),
//! and one `source.snapshot` event per distinct document cited, streamed after the tool's
//! `tool.result`. The model-facing definition is `builtin/tools/knowledge.backend`.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Knowledge, KnowledgeError};
use agent::events::EventBody;
use agent::tools::{Args, BackendTool, BackendTools, ToolContext, ToolError, ToolReply};
use base::principal::Principal;

/// The tool's name.
pub const NAME: &str = agent::tools::agent_file::KNOWLEDGE_SEARCH;

/// Results when the model does not say.
const DEFAULT_K: u64 = 5;

/// Longest chunk text handed to the model (the whole chunk is at most the chunk size anyway).
const MAX_CHUNK_CHARS: usize = 2_000;

/// The tool.
#[derive(Debug)]
pub struct KnowledgeSearch {
    knowledge: Arc<Knowledge>,
}

/// Registers `knowledge_search`.
pub fn register(registry: &mut BackendTools, knowledge: Arc<Knowledge>) {
    registry.register(Arc::new(KnowledgeSearch { knowledge }));
}

impl KnowledgeSearch {
    /// The ids of the bases this call searches: `kb` if given (which the agent must be allowed),
    /// else every base the agent may search.
    fn bases(&self, kb: Option<&str>, ctx: &ToolContext) -> Result<Vec<String>, ToolError> {
        // The run's person's bases only (another's private base is not there); a run for
        // nobody in particular is the owner's.
        let who = ctx.principal.clone().unwrap_or(Principal::Owner);
        let allowed: Option<Vec<String>> =
            ctx.agent.as_ref().and_then(|a| a.knowledge_bases.as_ref()).map(|keys| {
                keys.iter().filter_map(|k| self.knowledge.find_for(k, &who)).map(|b| b.id).collect()
            });
        let all = || self.knowledge.list_for(&who).into_iter().map(|b| b.id).collect::<Vec<_>>();
        match kb {
            Some(key) => {
                let Some(base) = self.knowledge.find_for(key, &who) else {
                    let names: Vec<String> = self
                        .knowledge
                        .list_for(&who)
                        .into_iter()
                        .filter(|b| allowed.as_ref().is_none_or(|a| a.contains(&b.id)))
                        .map(|b| b.name)
                        .collect();
                    return Err(ToolError::invalid(
                        NAME,
                        format!(
                            "\"kb\": no knowledge base `{key}`; available: {}",
                            if names.is_empty() { "none".into() } else { names.join(", ") }
                        ),
                    ));
                };
                if allowed.as_ref().is_some_and(|a| !a.contains(&base.id)) {
                    return Err(ToolError::Refused {
                        tool: NAME.into(),
                        reason: format!("this agent may not search `{key}`"),
                    });
                }
                Ok(vec![base.id])
            }
            None => Ok(allowed.unwrap_or_else(all)),
        }
    }
}

impl BackendTool for KnowledgeSearch {
    fn name(&self) -> &str {
        NAME
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let fut = self.call_with_events(args, ctx);
        Box::pin(async move { fut.await.map(|r| r.result) })
    }

    fn call_with_events(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolReply, ToolError>> {
        let prepared = (|| {
            let a = Args::new(NAME, &args)?;
            let query = a.req_str("query")?.to_owned();
            let k = a.opt_positive_u64("k")?.unwrap_or(DEFAULT_K).min(super::MAX_K as u64);
            let bases = self.bases(a.opt_str("kb")?, &ctx)?;
            Ok::<_, ToolError>((query, k, bases))
        })();
        let knowledge = self.knowledge.clone();
        Box::pin(async move {
            let (query, k, bases) = prepared?;
            if bases.is_empty() {
                return Ok(ToolReply::from(json!({
                    "results": [],
                    "note": "there are no knowledge bases to search",
                })));
            }
            #[allow(clippy::cast_possible_truncation)]
            let answer = tokio::select! {
                a = knowledge.search(&bases, &query, k as usize) => a,
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
            .map_err(|e| match e {
                KnowledgeError::Invalid { field, message } => {
                    ToolError::invalid(NAME, format!("\"{field}\": {message}"))
                }
                other => ToolError::failed(NAME, other),
            })?;
            let mut events = Vec::new();
            let mut seen = std::collections::HashSet::new();
            let results: Vec<Value> = answer
                .results
                .iter()
                .map(|r| {
                    if seen.insert(r.document_id.clone()) {
                        events.push(EventBody::SourceSnapshot {
                            source_id: r.document_id.clone(),
                            run_id: Some(ctx.run_id.clone()),
                            task_id: None,
                            icon: None,
                            title: Some(r.title.clone()),
                            url: r.url.clone(),
                        });
                    }
                    json!({
                        "documentId": r.document_id,
                        "title": r.title,
                        "url": r.url,
                        "chunk": base::text::clip(&r.chunk, MAX_CHUNK_CHARS),
                        "score": r.score,
                    })
                })
                .collect();
            Ok(ToolReply { result: json!({"results": results, "mode": answer.mode}), events })
        })
    }
}
