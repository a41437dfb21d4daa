//! Renders a turn as an OpenAI chat-completions stream: a role chunk, `reasoning_content` and
//! `content` deltas, tool calls whose `id`/`name` come only in the first fragment, a
//! `finish_reason` chunk with an empty delta, the usage chunk when `stream_options.include_usage`
//! asks for it, and `[DONE]`. LF line endings.

use bytes::Bytes;
use serde_json::{Value, json};

use super::{Step, Turn, arguments_text, fragments, pieces};
use crate::types::StopReason;

pub(super) fn render(turn: &Turn, model: &str, request: &Value) -> Vec<Bytes> {
    let id = "chatcmpl-mock";
    let chunk = |choices: Value, usage: Value| -> Bytes {
        let c = json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "choices": choices, "usage": usage,
        });
        Bytes::from(format!("data: {c}\n\n"))
    };
    let delta = |d: Value| {
        chunk(
            json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": null}]),
            Value::Null,
        )
    };
    let mut out = vec![delta(json!({"role": "assistant", "content": ""}))];
    let mut call_index = 0;
    for step in &turn.steps {
        match step {
            Step::Reasoning { text, chunk: size, .. } => {
                out.extend(
                    pieces(text, *size).into_iter().map(|p| delta(json!({"reasoning_content": p}))),
                );
            }
            Step::Text { text, chunk: size } => {
                out.extend(pieces(text, *size).into_iter().map(|p| delta(json!({"content": p}))));
            }
            Step::ToolCall { id, name, arguments, fragments: n } => {
                let call_id = id.clone().unwrap_or_else(|| format!("call_mock_{call_index}"));
                out.push(delta(json!({"tool_calls": [{
                    "index": call_index, "id": call_id, "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]})));
                for f in fragments(&arguments_text(arguments), *n) {
                    out.push(delta(json!({"tool_calls": [{"index": call_index, "function": {"arguments": f}}]})));
                }
                call_index += 1;
            }
        }
    }
    let finish = match turn.stop_reason() {
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
        StopReason::ContentFilter | StopReason::Refusal => "content_filter",
        StopReason::EndTurn | StopReason::StopSequence => "stop",
    };
    out.push(chunk(
        json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": finish}]),
        Value::Null,
    ));
    if request["stream_options"]["include_usage"] == true {
        let u = turn.usage.unwrap_or_default();
        out.push(chunk(
            json!([]),
            json!({
                "prompt_tokens": u.input_tokens,
                "completion_tokens": u.output_tokens,
                "total_tokens": u.input_tokens + u.output_tokens,
                "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
                "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            }),
        ));
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}
