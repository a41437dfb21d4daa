//! Summarizing long chats: when a chat's replayed history passes a share of the model's context
//! window, its oldest runs are condensed by one model call into a summary that later runs start
//! from (the service stores it with the run, so no run summarizes the same turns twice).
//!
//! Whole runs are summarized, never part of one, so a tool call and its result always stay
//! together (and a run's own messages stay the run loop's business: its `WindowTransform` still
//! trims within a run). Pure planning ([`plan`]) and request building ([`request`]) here; the
//! model call and memory are the service's. Knows nothing of HTTP.

use base::text::clip;
use llm::{ChatRequest, ContentBlock, Message, ToolChoice};

/// The instruction of the summary call.
pub const SUMMARY_PROMPT: &str = "You condense the earlier part of a conversation between a \
user and an AI assistant so that the assistant can continue it without the full text. Keep \
what later turns may need: the user's goals, preferences and constraints; facts, figures and \
results established; decisions made; names and ids of things created or changed (dashboards, \
panels, files); what was being worked on and any open questions. Leave out greetings and \
repetition. Write in the conversation's language, as short bullet points, at most about 300 \
words. Output only the summary.";

/// What precedes the summary when the model reads it (as a user message).
pub const SUMMARY_HEADER: &str = "[Summary of the earlier conversation, condensed to save space]";

/// Marks the transcript in the summary call (scripted upstreams match on it).
pub const TRANSCRIPT_HEADER: &str = "CONVERSATION TO SUMMARIZE:";

/// Characters of one message kept in the transcript (long tool results are clipped).
const MAX_MESSAGE_CHARS: usize = 2_000;

/// Output limit of the summary call.
const SUMMARY_MAX_TOKENS: u32 = 1_024;

/// How many of the oldest runs to summarize, or `None` when the history fits. `previous` is the
/// tokens of the summary the history starts from (0: none), `runs` the tokens of each run after
/// it, oldest first, `budget` the tokens the history may use (threshold × context window). The
/// newest runs that fit in half the budget are kept (at least one); everything older is
/// summarized. `None` also when only the newest run would remain anyway.
pub fn plan(previous: usize, runs: &[usize], budget: usize) -> Option<usize> {
    let total: usize = previous + runs.iter().sum::<usize>();
    if total <= budget {
        return None;
    }
    let mut kept = 0usize;
    let mut used = 0usize;
    for t in runs.iter().rev() {
        if kept > 0 && used + t > budget / 2 {
            break;
        }
        used += t;
        kept += 1;
    }
    let split = runs.len() - kept;
    (split > 0).then_some(split)
}

/// The summary call: [`SUMMARY_PROMPT`], then the previous summary (if any) and a transcript of
/// `older` (long messages clipped) in one user message.
pub fn request(model: &str, previous: Option<&str>, older: &[Message]) -> ChatRequest {
    let mut text = String::new();
    if let Some(p) = previous {
        text.push_str("SUMMARY SO FAR (of what came before):\n");
        text.push_str(p);
        text.push_str("\n\n");
    }
    text.push_str(TRANSCRIPT_HEADER);
    text.push('\n');
    for m in older {
        transcript_line(m, &mut text);
    }
    text.push_str("\nWrite the summary now.");
    ChatRequest {
        model: model.to_owned(),
        messages: vec![Message::system(SUMMARY_PROMPT), Message::user(text)],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        thinking: None,
        temperature: None,
        max_tokens: Some(SUMMARY_MAX_TOKENS),
        trace_id: None,
    }
}

/// The summary as the model reads it at the start of a history.
pub fn as_context(summary: &str) -> String {
    format!("{SUMMARY_HEADER}\n{summary}")
}

fn transcript_line(m: &Message, out: &mut String) {
    let (who, blocks): (&str, &[ContentBlock]) = match m {
        Message::System { .. } => return,
        Message::User { content } => ("User", content),
        Message::Assistant(a) => ("Assistant", &a.content),
        Message::Tool { content } => ("Tool", content),
    };
    for b in blocks {
        let line = match b {
            ContentBlock::Text { text } => format!("{who}: {}", clip(text, MAX_MESSAGE_CHARS)),
            // Reasoning is the model's scratch work: the answer and calls carry what matters.
            ContentBlock::Reasoning { .. } => continue,
            ContentBlock::ToolUse { name, input, .. } => {
                format!("Assistant called {name}({})", clip(&input.to_string(), MAX_MESSAGE_CHARS))
            }
            ContentBlock::ToolResult { content, is_error, .. } => format!(
                "{}: {}",
                if *is_error { "Tool error" } else { "Tool result" },
                clip(content, MAX_MESSAGE_CHARS)
            ),
            ContentBlock::Image { .. } => format!("{who} attached an image"),
        };
        out.push_str(&line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use llm::AssistantMessage;

    #[test]
    fn plans_only_past_the_budget_and_keeps_the_newest_runs() {
        assert_eq!(plan(0, &[100, 100, 100], 300), None, "fits");
        // 400 > 300: keep what fits in 150 from the newest (one run), summarize the rest.
        assert_eq!(plan(0, &[100, 100, 100, 100], 300), Some(3));
        // Small newest runs are kept together.
        assert_eq!(plan(0, &[500, 40, 40, 40], 300), Some(1));
        // The previous summary counts towards the total; it alone is never re-summarized.
        assert_eq!(plan(250, &[100, 30, 30], 300), Some(1));
        assert_eq!(plan(250, &[30, 30], 300), None);
        // One huge run: nothing older to summarize (the run loop's window trims it).
        assert_eq!(plan(0, &[10_000], 300), None);
        assert_eq!(plan(0, &[], 300), None);
    }

    #[test]
    fn the_request_carries_the_previous_summary_and_a_clipped_transcript() {
        let call = Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Reasoning { text: "secret".into(), signature: None, redacted: None },
                ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "search".into(),
                    input: json!({"q": "gold"}),
                    input_error: None,
                },
            ],
            ..AssistantMessage::default()
        });
        let older = vec![
            Message::user("Show gold prices"),
            call,
            Message::tool_result("c1", "x".repeat(5_000), false),
        ];
        let r = request("m", Some("Earlier: user likes dark themes."), &older);
        assert_eq!((r.model.as_str(), r.max_tokens, r.tools.len()), ("m", Some(1024), 0));
        let Message::User { content } = &r.messages[1] else { panic!("{:?}", r.messages) };
        let ContentBlock::Text { text } = &content[0] else { panic!() };
        assert!(text.contains("Earlier: user likes dark themes."), "{text}");
        assert!(text.contains("User: Show gold prices"), "{text}");
        assert!(text.contains(r#"Assistant called search({"q":"gold"})"#), "{text}");
        assert!(!text.contains("secret"), "reasoning is left out");
        assert!(text.len() < 3_000, "the long result is clipped: {}", text.len());
        assert!(as_context("s").starts_with(SUMMARY_HEADER));
    }
}
