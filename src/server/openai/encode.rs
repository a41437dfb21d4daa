//! The provider layer's answers in OpenAI's format: [`ChunkEncoder`] turns each
//! [`StreamEvent`] into at most one SSE frame the moment it arrives (true streaming: one chunk
//! out per delta in), and [`completion`] a collected [`AssistantMessage`] into a
//! `chat.completion`.

use bytes::Bytes;
use serde::Serialize;

use super::wire::{
    ChatCompletion, Choice, Chunk, ChunkChoice, Delta, FunctionCall, FunctionDelta,
    ResponseMessage, ToolCall, ToolCallDelta, WireUsage,
};
use crate::llm::{AssistantMessage, ContentBlock, LlmError, StopReason, StreamEvent, Usage};

/// OpenAI's `finish_reason` for a stop reason.
pub fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn | StopReason::StopSequence => "stop",
        StopReason::MaxTokens => "length",
        StopReason::ToolUse => "tool_calls",
        StopReason::ContentFilter | StopReason::Refusal => "content_filter",
    }
}

/// A collected answer as a `chat.completion`.
pub fn completion(
    id: String,
    created: u64,
    model: String,
    message: &AssistantMessage,
) -> ChatCompletion {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut tool_calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text } => content.push_str(text),
            ContentBlock::Reasoning { text, .. } => reasoning.push_str(text),
            ContentBlock::ToolUse { id, name, input, .. } => tool_calls.push(ToolCall {
                id: id.clone(),
                kind: "function".into(),
                function: FunctionCall {
                    name: name.clone(),
                    // Unusable arguments arrive as their raw text: pass it on unchanged.
                    arguments: match input {
                        serde_json::Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    },
                },
            }),
            ContentBlock::ToolResult { .. } => {}
        }
    }
    ChatCompletion {
        id,
        object: "chat.completion",
        created,
        model,
        choices: vec![Choice {
            index: 0,
            message: ResponseMessage {
                role: "assistant",
                content: (!content.is_empty() || tool_calls.is_empty()).then_some(content),
                reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
                tool_calls,
                refusal: None,
            },
            finish_reason: finish_reason(message.stop_reason),
            logprobs: None,
        }],
        usage: WireUsage::from(&message.usage),
    }
}

/// Streams one completion's chunks: fixed id, creation time and model; `role` in the first
/// chunk; the finish reason in the last content chunk; then, when asked, a usage chunk with no
/// choices; then `[DONE]`. An error ends the stream with an `{error}` frame and no `[DONE]`.
#[derive(Debug)]
pub struct ChunkEncoder {
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    role_sent: bool,
    usage: Usage,
}

impl ChunkEncoder {
    /// An encoder for the completion `id` answered by `model`.
    pub fn new(id: String, created: u64, model: String, include_usage: bool) -> Self {
        Self { id, created, model, include_usage, role_sent: false, usage: Usage::default() }
    }

    /// The frames `event` produces (none for block boundaries and usage, which is kept for the
    /// end).
    pub fn event(&mut self, event: &StreamEvent) -> Vec<Bytes> {
        match event {
            StreamEvent::ReasoningDelta { text } if !text.is_empty() => {
                vec![self.chunk(Delta { reasoning_content: Some(text), ..Delta::default() }, None)]
            }
            StreamEvent::TextDelta { text } if !text.is_empty() => {
                vec![self.chunk(Delta { content: Some(text), ..Delta::default() }, None)]
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = ToolCallDelta {
                    index: *index,
                    id: Some(id),
                    kind: Some("function"),
                    function: FunctionDelta { name: Some(name), arguments: "" },
                };
                vec![self.chunk(Delta { tool_calls: Some([call]), ..Delta::default() }, None)]
            }
            StreamEvent::ToolCallDelta { index, args_delta } if !args_delta.is_empty() => {
                let call = ToolCallDelta {
                    index: *index,
                    id: None,
                    kind: None,
                    function: FunctionDelta { name: None, arguments: args_delta },
                };
                vec![self.chunk(Delta { tool_calls: Some([call]), ..Delta::default() }, None)]
            }
            StreamEvent::Usage(u) => {
                self.usage = *u;
                Vec::new()
            }
            StreamEvent::Done { stop_reason } => {
                let mut out = vec![self.chunk(Delta::default(), Some(finish_reason(*stop_reason)))];
                if self.include_usage {
                    out.push(frame(&Chunk {
                        id: &self.id,
                        object: "chat.completion.chunk",
                        created: self.created,
                        model: &self.model,
                        choices: Vec::new(),
                        usage: Some(WireUsage::from(&self.usage)),
                    }));
                }
                out.push(Bytes::from_static(b"data: [DONE]\n\n"));
                out
            }
            StreamEvent::Error(e) => vec![error_frame(e)],
            _ => Vec::new(),
        }
    }

    fn chunk(&mut self, mut delta: Delta<'_>, finish: Option<&'static str>) -> Bytes {
        if !self.role_sent {
            self.role_sent = true;
            delta.role = Some("assistant");
        }
        frame(&Chunk {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices: vec![ChunkChoice { index: 0, delta, finish_reason: finish, logprobs: None }],
            usage: None,
        })
    }
}

/// One SSE `data:` frame.
fn frame<T: Serialize>(value: &T) -> Bytes {
    let mut out = b"data: ".to_vec();
    // Serializing these plain structs cannot fail.
    serde_json::to_writer(&mut out, value).unwrap_or_default();
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The frame for an upstream failure after the stream started (OpenAI sends `{error}` as data;
/// its clients raise it).
fn error_frame(e: &LlmError) -> Bytes {
    frame(&crate::server::ApiError::from(e.clone()).openai_body())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn frames_of(events: &[StreamEvent], include_usage: bool) -> Vec<String> {
        let mut enc = ChunkEncoder::new("chatcmpl-1".into(), 7, "p/m".into(), include_usage);
        events
            .iter()
            .flat_map(|e| enc.event(e))
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect()
    }

    fn json_of(frame: &str) -> Value {
        serde_json::from_str(frame.strip_prefix("data: ").unwrap().trim_end()).unwrap()
    }

    #[test]
    fn one_chunk_per_delta_then_finish_usage_and_done() {
        let events = [
            StreamEvent::ReasoningStart,
            StreamEvent::ReasoningDelta { text: "hm".into() },
            StreamEvent::ReasoningEnd { signature: None, redacted: None },
            StreamEvent::TextStart,
            StreamEvent::TextDelta { text: "Hel".into() },
            StreamEvent::TextDelta { text: "lo".into() },
            StreamEvent::TextEnd,
            StreamEvent::ToolCallStart { index: 0, id: "c1".into(), name: "w".into() },
            StreamEvent::ToolCallDelta { index: 0, args_delta: "{}".into() },
            StreamEvent::Usage(Usage { input_tokens: 5, output_tokens: 3, ..Usage::default() }),
            StreamEvent::Done { stop_reason: StopReason::ToolUse },
        ];
        let frames = frames_of(&events, true);
        assert_eq!(frames.len(), 8, "{frames:#?}");
        let first = json_of(&frames[0]);
        assert_eq!(first["object"], "chat.completion.chunk");
        assert_eq!(
            first["choices"][0]["delta"],
            serde_json::json!({"role": "assistant", "reasoning_content": "hm"})
        );
        assert_eq!(
            json_of(&frames[1])["choices"][0]["delta"],
            serde_json::json!({"content": "Hel"})
        );
        let start = &json_of(&frames[3])["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(start["id"], "c1");
        assert_eq!(start["function"]["name"], "w");
        let finish = json_of(&frames[5]);
        assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
        let usage = json_of(&frames[6]);
        assert_eq!(usage["choices"], serde_json::json!([]));
        assert_eq!(usage["usage"]["total_tokens"], 8);
        assert_eq!(frames[7], "data: [DONE]\n\n");
        // Every chunk names the same completion.
        assert!(frames[..7].iter().all(|f| json_of(f)["id"] == "chatcmpl-1"));
        // Without include_usage there is no usage chunk.
        assert_eq!(frames_of(&events, false).len(), 7);
    }

    #[test]
    fn an_error_ends_the_stream_without_done() {
        let frames = frames_of(
            &[
                StreamEvent::TextDelta { text: "a".into() },
                StreamEvent::Error(LlmError::Protocol {
                    provider: "p".into(),
                    message: "cut".into(),
                }),
            ],
            false,
        );
        assert_eq!(frames.len(), 2);
        let err = json_of(&frames[1]);
        assert_eq!(err["error"]["type"], "api_error", "a protocol failure is a 502");
        assert!(err["error"]["message"].as_str().unwrap().contains("cut"));
    }

    #[test]
    fn a_collected_answer_with_only_tool_calls_has_null_content() {
        let message = AssistantMessage {
            content: vec![ContentBlock::ToolUse {
                id: "c".into(),
                name: "f".into(),
                input: serde_json::json!({"a": 1}),
                input_error: None,
            }],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::default()
        };
        let c = serde_json::to_value(completion("id".into(), 1, "p/m".into(), &message)).unwrap();
        let m = &c["choices"][0]["message"];
        assert_eq!(m["content"], Value::Null);
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
    }
}
