//! The run's own message type: [`AgentMessage`], a superset of the model's [`Message`] that also
//! carries what only the application needs (summaries, context notes, system events, tool logs),
//! and [`convert_to_llm`], the one place that decides what of it the model sees.
//!
//! A run keeps its conversation as `AgentMessage`s and converts them before every model call
//! (before the context transform), so app-only entries live in the history next to the messages
//! they explain without ever reaching a provider.

use llm::types::Message;

/// One entry of a run's conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    /// A message the model sees as is (user, assistant, tool results).
    Llm(Message),
    /// A summary of earlier history: sent to the model as a user message.
    Summary(String),
    /// A note for the application's views (`switched model to ...`): never sent.
    ContextNote(String),
    /// A system notice (credit warning, rate limit): never sent.
    SystemEvent(String),
    /// A server-side tool's log: never sent.
    ToolLog {
        /// The call it belongs to.
        tool_id: String,
        /// The log text.
        text: String,
    },
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        Self::Llm(m)
    }
}

impl AgentMessage {
    /// The message the model sees for this entry; `None` for app-only entries.
    pub fn to_llm(&self) -> Option<Message> {
        match self {
            Self::Llm(m) => Some(m.clone()),
            Self::Summary(text) => Some(Message::user(text.clone())),
            Self::ContextNote(_) | Self::SystemEvent(_) | Self::ToolLog { .. } => None,
        }
    }

    /// The model message, when this is one (summaries are not: they are app-made).
    pub fn as_llm(&self) -> Option<&Message> {
        match self {
            Self::Llm(m) => Some(m),
            _ => None,
        }
    }
}

/// The messages the model sees, in order: app-only entries dropped, summaries as user messages.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(AgentMessage::to_llm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_model_messages_and_summaries_are_sent() {
        let history = vec![
            AgentMessage::from(Message::user("q")),
            AgentMessage::ContextNote("note".into()),
            AgentMessage::Summary("earlier: x".into()),
            AgentMessage::SystemEvent("low credit".into()),
            AgentMessage::ToolLog { tool_id: "t1".into(), text: "log".into() },
        ];
        assert_eq!(convert_to_llm(&history), [Message::user("q"), Message::user("earlier: x")]);
    }
}
