//! Replay: stored runs back to provider-neutral [`Message`]s for the model, through the sliding
//! window of runs (reasoning kept only on turns that made tool calls).

use super::*;

/// The model context from stored runs: the last `window` runs, each as user message, assistant
/// messages (one per model response) and tool results. Reasoning is kept only on responses that
/// made tool calls; tool calls without a stored result (an interrupted run) and results without
/// their call are left out, so the history is always well-formed for the providers.
pub fn replay_messages(runs: &[RunRecord], window: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for run in &runs[runs.len().saturating_sub(window)..] {
        replay_run(run, &mut out);
    }
    out
}

/// The chat's latest summary and the runs after the last run it covers (all runs when there
/// is none). A summary whose covered run is not in the file is ignored (all runs).
pub fn after_summary(runs: &[RunRecord]) -> (Option<&ContextSummary>, &[RunRecord]) {
    let latest = runs.iter().rev().find_map(|r| r.summary.as_ref());
    match latest.and_then(|s| runs.iter().position(|r| r.run_id == s.through_run_id)) {
        Some(through) => (latest, &runs[through + 1..]),
        None => (None, runs),
    }
}

#[derive(Default)]
struct Turn {
    blocks: Vec<ContentBlock>,
    msg_id: Option<String>,
    model: String,
    provider: String,
    usage: Usage,
    /// 0 reasoning, 1 text, 2 tool calls: the last kind added (for entries without `_msgId`).
    rank: u8,
}

impl Turn {
    fn accepts(&self, entry: &AssistantEntry) -> bool {
        if let (Some(a), Some(b)) = (&self.msg_id, &entry.msg_id) {
            return a == b;
        }
        // Without ids: one response is reasoning, then text, then tool calls.
        let rank = entry_rank(entry);
        rank > self.rank || (rank == 2 && self.rank == 2)
    }

    fn add(&mut self, entry: &AssistantEntry, answered: &HashSet<&str>) {
        if self.msg_id.is_none() {
            self.msg_id = entry.msg_id.clone();
        }
        if self.model.is_empty() {
            self.model = entry.model.clone().unwrap_or_default();
        }
        if self.provider.is_empty() {
            self.provider = entry.provider.clone().unwrap_or_default();
        }
        if let Some(usage) = &entry.usage {
            self.usage.add(&Usage::from(usage));
        }
        self.rank = entry_rank(entry);
        for part in entry.reasoning_content.iter().flatten() {
            if !part.text.is_empty() || part.signature.is_some() || part.redacted.is_some() {
                self.blocks.push(ContentBlock::Reasoning {
                    text: part.text.clone(),
                    signature: part.signature.clone(),
                    redacted: part.redacted.clone(),
                });
            }
        }
        if let Some(content) = &entry.content {
            let text = joined(content);
            if !text.is_empty() {
                self.blocks.push(ContentBlock::Text { text });
            }
        }
        for call in entry.tool_calls.iter().flatten() {
            if !answered.contains(call.id.as_str()) {
                continue;
            }
            let (input, input_error) = parse_arguments(&call.function.arguments);
            self.blocks.push(ContentBlock::ToolUse {
                id: call.id.clone(),
                name: call.function.name.clone(),
                input,
                input_error,
            });
        }
    }

    fn finish(self, out: &mut Vec<Message>) {
        let has_calls = self.blocks.iter().any(|b| matches!(b, ContentBlock::ToolUse { .. }));
        let content: Vec<ContentBlock> = if has_calls {
            self.blocks
        } else {
            self.blocks
                .into_iter()
                .filter(|b| !matches!(b, ContentBlock::Reasoning { .. }))
                .collect()
        };
        if content.is_empty() {
            return;
        }
        out.push(Message::Assistant(AssistantMessage {
            content,
            model: self.model,
            provider: self.provider,
            stop_reason: if has_calls { StopReason::ToolUse } else { StopReason::EndTurn },
            usage: self.usage,
        }));
    }
}

fn entry_rank(entry: &AssistantEntry) -> u8 {
    if entry.tool_calls.is_some() {
        2
    } else if entry.content.is_some() {
        1
    } else {
        0
    }
}

fn parse_arguments(arguments: &str) -> (Value, Option<String>) {
    if arguments.trim().is_empty() {
        return (json!({}), None);
    }
    match serde_json::from_str(arguments) {
        Ok(value) => (value, None),
        Err(e) => {
            (Value::String(arguments.to_owned()), Some(format!("invalid JSON arguments: {e}")))
        }
    }
}

/// A stored image as the model gets it back: by URL, or by upload id for the caller to load
/// (see [`ImageSource::Upload`]).
pub fn image_block(upload: &Upload) -> Option<ContentBlock> {
    let source = match (&upload.url, &upload.sha256) {
        (Some(url), _) => ImageSource::Url { url: url.clone() },
        (None, Some(id)) => ImageSource::Upload { id: id.clone() },
        (None, None) => return None,
    };
    Some(ContentBlock::Image { media_type: upload.mime_type.clone(), source })
}

fn replay_run(run: &RunRecord, out: &mut Vec<Message>) {
    let mut called = HashSet::new();
    let mut answered = HashSet::new();
    for message in &run.messages {
        match message {
            StoredMessage::Assistant(a) => {
                called.extend(a.tool_calls.iter().flatten().map(|c| c.id.as_str()));
            }
            StoredMessage::Tool(t) => {
                answered.insert(t.tool_call_id.as_str());
            }
            StoredMessage::User(_) => {}
        }
    }
    let mut turn: Option<Turn> = None;
    let mut results: Vec<ContentBlock> = Vec::new();
    let flush_results = |results: &mut Vec<ContentBlock>, out: &mut Vec<Message>| {
        if !results.is_empty() {
            out.push(Message::Tool { content: std::mem::take(results) });
        }
    };
    for message in &run.messages {
        match message {
            StoredMessage::User(u) => {
                if let Some(t) = turn.take() {
                    t.finish(out);
                }
                flush_results(&mut results, out);
                let mut content: Vec<ContentBlock> =
                    images(&u.content).filter_map(image_block).collect();
                let text = joined(&u.content);
                if !text.is_empty() {
                    content.push(ContentBlock::Text { text });
                }
                if !content.is_empty() {
                    out.push(Message::User { content });
                }
            }
            StoredMessage::Assistant(a) => {
                flush_results(&mut results, out);
                if turn.as_ref().is_some_and(|t| !t.accepts(a))
                    && let Some(t) = turn.take()
                {
                    t.finish(out);
                }
                turn.get_or_insert_with(Turn::default).add(a, &answered);
            }
            StoredMessage::Tool(t) => {
                if let Some(t) = turn.take() {
                    t.finish(out);
                }
                if called.contains(t.tool_call_id.as_str()) {
                    results.push(ContentBlock::ToolResult {
                        tool_use_id: t.tool_call_id.clone(),
                        content: joined(&t.content),
                        is_error: t.is_error,
                    });
                }
            }
        }
    }
    if let Some(t) = turn.take() {
        t.finish(out);
    }
    flush_results(&mut results, out);
}
