//! Renders a turn as an Ollama `/api/chat` NDJSON stream: `message.thinking` and
//! `message.content` lines, all tool calls whole in one line (object arguments, no ids), and a
//! final `done: true` line with `done_reason` and the token counts.

use bytes::Bytes;
use serde_json::{Value, json};

use super::{Step, Turn, pieces};
use crate::types::StopReason;

pub(super) fn render(turn: &Turn, model: &str) -> Vec<Bytes> {
    let line = |message: Value, done: bool| -> Bytes {
        let v = json!({"model": model, "created_at": "2026-01-01T00:00:00Z", "message": message, "done": done});
        Bytes::from(format!("{v}\n"))
    };
    let mut out = Vec::new();
    let mut calls = Vec::new();
    for step in &turn.steps {
        match step {
            Step::Reasoning { text, chunk, .. } => {
                out.extend(pieces(text, *chunk).into_iter().map(|p| {
                    line(json!({"role": "assistant", "content": "", "thinking": p}), false)
                }))
            }
            Step::Text { text, chunk } => out.extend(
                pieces(text, *chunk)
                    .into_iter()
                    .map(|p| line(json!({"role": "assistant", "content": p}), false)),
            ),
            Step::ToolCall { name, arguments, .. } => {
                let args = match arguments {
                    Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
                    Value::Null => json!({}),
                    other => other.clone(),
                };
                calls.push(json!({"function": {"name": name, "arguments": args}}));
            }
        }
    }
    if !calls.is_empty() {
        out.push(line(json!({"role": "assistant", "content": "", "tool_calls": calls}), false));
    }
    let usage = turn.usage.unwrap_or_default();
    let reason = match turn.stop_reason() {
        StopReason::MaxTokens => "length",
        _ => "stop",
    };
    let done = json!({
        "model": model, "created_at": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": ""},
        "done": true, "done_reason": reason,
        "total_duration": 1_000_000, "load_duration": 1000, "prompt_eval_count": usage.input_tokens,
        "prompt_eval_duration": 1000, "eval_count": usage.output_tokens, "eval_duration": 1000,
    });
    out.push(Bytes::from(format!("{done}\n")));
    out
}
