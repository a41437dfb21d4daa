//! The context transform: how the conversation is shaped before every model call, and the
//! default [`WindowTransform`] that keeps what fits in the model's window.

use super::*;

/// Shapes the conversation before every model call (trimming, summarising, injecting).
pub trait ContextTransform: Send + Sync {
    /// The messages to send, given all messages of the run so far (system first).
    fn transform(&self, messages: &[Message], context_tokens: usize) -> Vec<Message>;
}

pub use base::text::estimate_tokens;

/// What an image is counted as: about what OpenAI and Anthropic charge for a chart screenshot
/// (Anthropic: width × height / 750, at most ~1,600; OpenAI high detail: 85 + 170 per tile).
pub const IMAGE_TOKENS: usize = 1_000;

/// Estimated tokens of one message (plus a small per-message overhead).
pub fn message_tokens(m: &Message) -> usize {
    let blocks = |content: &[ContentBlock]| -> usize {
        content
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } | ContentBlock::Reasoning { text, .. } => {
                    estimate_tokens(text)
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    estimate_tokens(name) + estimate_tokens(&input.to_string())
                }
                ContentBlock::ToolResult { content, .. } => estimate_tokens(content),
                ContentBlock::Image { .. } => IMAGE_TOKENS,
            })
            .sum()
    };
    4 + match m {
        Message::System { content } => estimate_tokens(content),
        Message::User { content } | Message::Tool { content } => blocks(content),
        Message::Assistant(a) => blocks(&a.content),
    }
}

/// The default transform: every system message, then the most recent other messages that fit
/// in the context window (minus a reserve for the answer). An assistant message with tool calls
/// and the tool results answering it are kept or dropped together; the newest group is always
/// kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowTransform;

impl ContextTransform for WindowTransform {
    fn transform(&self, messages: &[Message], context_tokens: usize) -> Vec<Message> {
        let (system, rest): (Vec<&Message>, Vec<&Message>) =
            messages.iter().partition(|m| matches!(m, Message::System { .. }));
        // Keep a quarter of the window for the answer.
        let budget = context_tokens - context_tokens / 4;
        let mut used: usize = system.iter().map(|m| message_tokens(m)).sum();
        // Groups: a run of tool messages belongs to the assistant message before it.
        let mut groups: Vec<Vec<&Message>> = Vec::new();
        for m in rest {
            match (m, groups.last_mut()) {
                (Message::Tool { .. }, Some(g)) => g.push(m),
                _ => groups.push(vec![m]),
            }
        }
        let mut kept: Vec<Vec<&Message>> = Vec::new();
        for g in groups.into_iter().rev() {
            let cost: usize = g.iter().map(|m| message_tokens(m)).sum();
            if !kept.is_empty() && used + cost > budget {
                break;
            }
            used += cost;
            kept.push(g);
        }
        system.into_iter().chain(kept.into_iter().rev().flatten()).cloned().collect()
    }
}
