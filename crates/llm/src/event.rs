//! The streaming events every provider emits, and [`MessageBuilder`], which folds them into the
//! [`AssistantMessage`] they describe (used by `complete` and by the agent runtime).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::LlmError;
use super::types::{AssistantMessage, ContentBlock, StopReason, Usage};

/// One streaming event. Providers emit one event per upstream delta (no buffering); blocks are
/// bracketed by start/end events and never interleave, except tool-call argument deltas, which
/// carry the call's `index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A reasoning block begins.
    ReasoningStart,
    /// Reasoning text.
    ReasoningDelta {
        /// The fragment.
        text: String,
    },
    /// The reasoning block ends, with the opaque replay data the provider attached.
    ReasoningEnd {
        /// Anthropic signature.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Anthropic redacted thinking data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
    },
    /// A text block begins.
    TextStart,
    /// Answer text.
    TextDelta {
        /// The fragment.
        text: String,
    },
    /// The text block ends.
    TextEnd,
    /// A tool call begins.
    ToolCallStart {
        /// Position of the call in this message (0, 1, ...).
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments, as received.
    ToolCallDelta {
        /// The call's index.
        index: usize,
        /// The fragment.
        args_delta: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// The call's index.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed (and, per the repair policy, repaired) arguments; the raw text as a string
        /// when they are unusable.
        input: Value,
        /// Why the arguments are unusable (the model is told; the call is never dropped).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input_error: Option<String>,
    },
    /// Token usage (may come more than once; the last is the total).
    Usage(Usage),
    /// The message is complete.
    Done {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
    /// The call failed; nothing follows.
    Error(LlmError),
}

/// Folds a stream of events into the message they describe.
#[derive(Debug, Clone, Default)]
pub struct MessageBuilder {
    message: AssistantMessage,
    open: Option<ContentBlock>,
    error: Option<LlmError>,
    done: bool,
    /// Whether any content event arrived (a retry is no longer allowed).
    started: bool,
}

impl MessageBuilder {
    /// A builder for a message of this model and provider.
    pub fn new(model: &str, provider: &str) -> Self {
        Self {
            message: AssistantMessage {
                model: model.to_owned(),
                provider: provider.to_owned(),
                ..AssistantMessage::default()
            },
            ..Self::default()
        }
    }

    fn close_open(&mut self) {
        if let Some(block) = self.open.take() {
            self.message.content.push(block);
        }
    }

    /// Applies one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::ReasoningStart => {
                self.close_open();
                self.started = true;
                self.open = Some(ContentBlock::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: None,
                });
            }
            StreamEvent::ReasoningDelta { text } => {
                self.started = true;
                match &mut self.open {
                    Some(ContentBlock::Reasoning { text: t, .. }) => t.push_str(text),
                    _ => {
                        self.close_open();
                        self.open = Some(ContentBlock::Reasoning {
                            text: text.clone(),
                            signature: None,
                            redacted: None,
                        });
                    }
                }
            }
            StreamEvent::ReasoningEnd { signature, redacted } => {
                if let Some(ContentBlock::Reasoning { signature: s, redacted: r, .. }) =
                    &mut self.open
                {
                    s.clone_from(signature);
                    r.clone_from(redacted);
                } else if signature.is_some() || redacted.is_some() {
                    self.close_open();
                    self.open = Some(ContentBlock::Reasoning {
                        text: String::new(),
                        signature: signature.clone(),
                        redacted: redacted.clone(),
                    });
                }
                self.close_open();
            }
            StreamEvent::TextStart => {
                self.close_open();
                self.started = true;
                self.open = Some(ContentBlock::text(""));
            }
            StreamEvent::TextDelta { text } => {
                self.started = true;
                match &mut self.open {
                    Some(ContentBlock::Text { text: t }) => t.push_str(text),
                    _ => {
                        self.close_open();
                        self.open = Some(ContentBlock::text(text.clone()));
                    }
                }
            }
            StreamEvent::TextEnd => self.close_open(),
            StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. } => {
                self.started = true;
            }
            StreamEvent::ToolCallEnd { id, name, input, input_error, .. } => {
                self.close_open();
                self.started = true;
                self.message.content.push(ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    input_error: input_error.clone(),
                });
            }
            StreamEvent::Usage(u) => self.message.usage = *u,
            StreamEvent::Done { stop_reason } => {
                self.close_open();
                self.message.stop_reason = *stop_reason;
                self.done = true;
            }
            StreamEvent::Error(e) => {
                self.close_open();
                self.error = Some(e.clone());
            }
        }
    }

    /// True once any content arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The message so far (open blocks included).
    pub fn partial(&self) -> AssistantMessage {
        let mut m = self.message.clone();
        if let Some(b) = &self.open {
            m.content.push(b.clone());
        }
        m
    }

    /// The finished message, or the error that ended the stream (a stream that ended without
    /// `Done` is a protocol error).
    pub fn finish(mut self) -> Result<AssistantMessage, LlmError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.close_open();
        if !self.done {
            return Err(LlmError::Protocol {
                provider: self.message.provider.clone(),
                message: "the stream ended before the message was complete".into(),
            });
        }
        Ok(self.message)
    }
}
