//! The provider layer's answers in OpenAI's format: [`ChunkEncoder`] turns each
//! [`StreamEvent`] into at most one SSE frame the moment it arrives (true streaming: one chunk
//! out per delta in), and [`completion`] a collected [`AssistantMessage`] into a
//! `chat.completion`; [`AgentEncoder`] does the same for an agent run's events.

use bytes::Bytes;
use serde::Serialize;

use super::wire::{
    ChatCompletion, Chunk, ChunkChoice, Delta, FunctionCall, FunctionDelta, ResponseMessage,
    ToolCall, ToolCallDelta, WireUsage,
};
use agent::events::{Event, EventBody};
use llm::{AssistantMessage, ContentBlock, StopReason, StreamEvent, Usage};

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
            ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => {}
        }
    }
    ChatCompletion::answer(
        (id, created, model),
        ResponseMessage::assistant(content, reasoning, tool_calls),
        finish_reason(message.stop_reason),
        &message.usage,
        None,
    )
}

/// One completion's chunk framing: fixed id, creation time and model; `role` in the first
/// chunk; the usage chunk (no choices) and `[DONE]` at the end.
#[derive(Debug)]
struct ChunkWriter {
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    role_sent: bool,
}

impl ChunkWriter {
    fn chunk(
        &mut self,
        mut delta: Delta<'_>,
        finish: Option<&'static str>,
        event: Option<&Event>,
    ) -> Bytes {
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
            boardsmith: event,
        })
    }

    /// The last content chunk, the usage chunk when asked, `[DONE]`.
    fn finish(&mut self, reason: &'static str, usage: &Usage, event: Option<&Event>) -> Vec<Bytes> {
        let mut out = vec![self.chunk(Delta::default(), Some(reason), event)];
        if self.include_usage {
            out.push(frame(&Chunk {
                id: &self.id,
                object: "chat.completion.chunk",
                created: self.created,
                model: &self.model,
                choices: Vec::new(),
                usage: Some(WireUsage::from(usage)),
                boardsmith: None,
            }));
        }
        out.push(Bytes::from_static(b"data: [DONE]\n\n"));
        out
    }
}

/// Streams a model call's chunks: one per text, reasoning or tool-call delta, the moment it
/// arrives; the finish reason in the last content chunk; then, when asked, a usage chunk with
/// no choices; then `[DONE]`. An error ends the stream with an `{error}` frame and no `[DONE]`.
#[derive(Debug)]
pub struct ChunkEncoder {
    writer: ChunkWriter,
    usage: Usage,
}

impl ChunkEncoder {
    /// An encoder for the completion `id` answered by `model`.
    pub fn new(id: String, created: u64, model: String, include_usage: bool) -> Self {
        let writer = ChunkWriter { id, created, model, include_usage, role_sent: false };
        Self { writer, usage: Usage::default() }
    }

    /// The frames `event` produces (none for block boundaries and usage, which is kept for the
    /// end).
    pub fn event(&mut self, event: &StreamEvent) -> Vec<Bytes> {
        let w = &mut self.writer;
        match event {
            StreamEvent::ReasoningDelta { text } if !text.is_empty() => {
                vec![w.chunk(
                    Delta { reasoning_content: Some(text), ..Delta::default() },
                    None,
                    None,
                )]
            }
            StreamEvent::TextDelta { text } if !text.is_empty() => {
                vec![w.chunk(Delta { content: Some(text), ..Delta::default() }, None, None)]
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = ToolCallDelta {
                    index: *index,
                    id: Some(id),
                    kind: Some("function"),
                    function: FunctionDelta { name: Some(name), arguments: "" },
                };
                vec![w.chunk(Delta { tool_calls: Some([call]), ..Delta::default() }, None, None)]
            }
            StreamEvent::ToolCallDelta { index, args_delta } if !args_delta.is_empty() => {
                let call = ToolCallDelta {
                    index: *index,
                    id: None,
                    kind: None,
                    function: FunctionDelta { name: None, arguments: args_delta },
                };
                vec![w.chunk(Delta { tool_calls: Some([call]), ..Delta::default() }, None, None)]
            }
            StreamEvent::Usage(u) => {
                self.usage = *u;
                Vec::new()
            }
            StreamEvent::Done { stop_reason } => {
                w.finish(finish_reason(*stop_reason), &self.usage, None)
            }
            StreamEvent::Error(e) => vec![error_frame(e.clone().into())],
            _ => Vec::new(),
        }
    }
}

/// Streams an agent run's events as chunks: its answer text as `content`, its reasoning as
/// `reasoning_content`, and every other event (tool calls and results, `dashboard.update`,
/// plans, ...) whole in the extension field `boardsmith` of a chunk with an empty delta, which
/// OpenAI clients pass over. `run.complete` finishes (with the run's usage); `run.error` and
/// `run.cancel` end with an `{error}` frame.
#[derive(Debug)]
pub struct AgentEncoder {
    writer: ChunkWriter,
}

impl AgentEncoder {
    /// An encoder for the completion `id` of the agent `model`.
    pub fn new(id: String, created: u64, model: String, include_usage: bool) -> Self {
        Self { writer: ChunkWriter { id, created, model, include_usage, role_sent: false } }
    }

    /// The frames of one run event.
    pub fn event(&mut self, event: &Event) -> Vec<Bytes> {
        let w = &mut self.writer;
        match &event.body {
            EventBody::ContentDelta { delta, .. } => {
                vec![w.chunk(Delta { content: Some(delta), ..Delta::default() }, None, None)]
            }
            EventBody::ReasoningDelta { delta, .. } => {
                vec![w.chunk(
                    Delta { reasoning_content: Some(delta), ..Delta::default() },
                    None,
                    None,
                )]
            }
            EventBody::RunComplete { usage, .. } => {
                let usage = usage.map(Usage::from).unwrap_or_default();
                w.finish("stop", &usage, Some(event))
            }
            EventBody::RunError { error, .. } => {
                let message = error.get("message").and_then(serde_json::Value::as_str);
                let message = message.map_or_else(|| error.to_string(), str::to_owned);
                vec![error_frame(crate::ApiError::BadGateway(format!(
                    "the agent run failed: {message}"
                )))]
            }
            EventBody::RunCancel { .. } => {
                vec![error_frame(crate::ApiError::Unavailable(
                    "the agent run was cancelled".into(),
                ))]
            }
            _ => vec![w.chunk(Delta::default(), None, Some(event))],
        }
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

/// The `{error}` frame that ends a stream after it started (OpenAI sends the error object as
/// data; its clients raise it).
fn error_frame(e: crate::ApiError) -> Bytes {
    frame(&e.openai_body())
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
                StreamEvent::Error(llm::LlmError::Protocol {
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
