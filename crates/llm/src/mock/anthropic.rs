//! Renders a turn as an Anthropic Messages stream: `message_start`, a `ping`, one
//! `content_block_start/delta/stop` group per block (thinking with a `signature_delta`, text,
//! tool use with `input_json_delta` fragments), `message_delta` with the stop reason and the
//! cumulative output tokens, `message_stop`.

use bytes::Bytes;
use serde_json::{Value, json};

use super::{Step, Turn, arguments_text, fragments, pieces};
use crate::types::StopReason;

fn event(kind: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {kind}\ndata: {data}\n\n"))
}

pub(super) fn render(turn: &Turn, model: &str) -> Vec<Bytes> {
    let usage = turn.usage.unwrap_or_default();
    let mut out = vec![
        event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": "msg_mock", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1,
                          "cache_read_input_tokens": usage.cache_read_tokens,
                          "cache_creation_input_tokens": usage.cache_write_tokens},
            }}),
        ),
        event("ping", &json!({"type": "ping"})),
    ];
    for (index, step) in turn.steps.iter().enumerate() {
        let (start, deltas) = match step {
            Step::Reasoning { text, chunk, signature } => {
                let mut d: Vec<Value> = pieces(text, *chunk)
                    .into_iter()
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                let sig = signature.clone().unwrap_or_else(|| format!("sig-mock-{index}"));
                d.push(json!({"type": "signature_delta", "signature": sig}));
                (json!({"type": "thinking", "thinking": "", "signature": ""}), d)
            }
            Step::Text { text, chunk } => (
                json!({"type": "text", "text": ""}),
                pieces(text, *chunk)
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect(),
            ),
            Step::ToolCall { id, name, arguments, fragments: n } => (
                json!({"type": "tool_use", "id": id.clone().unwrap_or_else(|| format!("toolu_mock_{index}")),
                       "name": name, "input": {}}),
                fragments(&arguments_text(arguments), *n)
                    .into_iter()
                    .map(|f| json!({"type": "input_json_delta", "partial_json": f}))
                    .collect(),
            ),
        };
        out.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for d in deltas {
            out.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": d}),
            ));
        }
        out.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = match turn.stop_reason() {
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
        StopReason::StopSequence => "stop_sequence",
        StopReason::Refusal | StopReason::ContentFilter => "refusal",
        StopReason::EndTurn => "end_turn",
    };
    out.push(event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": usage.output_tokens}}),
    ));
    out.push(event("message_stop", &json!({"type": "message_stop"})));
    out
}
