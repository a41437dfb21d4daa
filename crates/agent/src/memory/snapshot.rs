//! Snapshot events and chat views: stored runs rebuilt into Event Model v2 history
//! (`GET /api/chat`) and the chat index entries (`GET /api/chats`).

use super::*;

/// One row of `GET /api/chats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSummary {
    /// The chat.
    pub chat_id: String,
    /// Its first query message, cut to [`CHAT_NAME_CHARS`] characters (the seed's name).
    pub chat_name: String,
    /// What the chat is called: the name its person gave it, else one made from its first
    /// exchange ([`chat_title`]).
    #[serde(default)]
    pub title: String,
    /// The agent's dashboard changes in this chat are drafts to review (`agent::chats`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub review: bool,
    /// The agent of its first run.
    pub first_agent_key: Option<String>,
    /// Its first message's time, unix milliseconds.
    pub created_at: i64,
    /// Its last run's end, unix milliseconds.
    pub updated_at: i64,
    /// Whose chat it is (their user id; absent: the server token's or from before accounts,
    /// the first admin's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// `GET /api/chat`: snapshot events rebuilt from storage, and on request the raw messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatDetail {
    /// The chat.
    pub chat_id: String,
    /// Its name.
    pub chat_name: String,
    /// `chat.start` once, then per run `request.query`, `run.start`, the snapshots and results,
    /// `run.complete`; `seq` from 1.
    pub events: Vec<Event>,
    /// Every stored message with its `runId` (only with `includeRawMessages=true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Value>>,
    /// The references of all queries, first occurrence of each `id`.
    pub references: Vec<Value>,
    /// Lines of the chat file that could not be read and were left out (damage on disk, or a
    /// write cut short by a crash); absent when every line was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<LoadWarning>,
}

/// The history of stored runs as Event Model v2 snapshot events: per run `request.query`,
/// `chat.start` (first run only), `context.summarized` (a run that started from a new
/// summary), `run.start`, then in stored order `reasoning.snapshot`,
/// `content.snapshot`, `tool.snapshot` + `tool.result`, `action.snapshot` + `action.result`,
/// and `run.complete`. `seq` is renumbered from 1. A call counts as an action when it was
/// stored with `_actionId`, else when `action_tools` names it.
pub fn snapshot_events(runs: &[RunRecord], action_tools: &BTreeSet<String>) -> Vec<Event> {
    let mut events: Vec<Event> = Vec::new();
    let mut push = |body: EventBody, timestamp: i64| {
        let seq = events.len() as u64 + 1;
        events.push(Event { seq, body, timestamp });
    };
    for (index, run) in runs.iter().enumerate() {
        let started = run
            .messages
            .iter()
            .find_map(|m| match m {
                StoredMessage::User(u) if u.ts > 0 => Some(u.ts),
                _ => None,
            })
            .unwrap_or(run.updated_at);
        push(EventBody::RequestQuery(run.query.clone()), started);
        if let Some(StoredMessage::User(first)) = run.messages.first() {
            for upload in images(&first.content) {
                push(
                    EventBody::RequestUpload {
                        request_id: run.query.request_id.clone(),
                        chat_id: Some(run.chat_id.clone()),
                        upload: upload.clone(),
                    },
                    started,
                );
            }
        }
        if index == 0 {
            let name = chat_name(&run.query.message);
            push(
                EventBody::ChatStart {
                    chat_id: run.chat_id.clone(),
                    chat_name: (!name.is_empty()).then_some(name),
                },
                started,
            );
        }
        // Where the live stream had it: the run started from this summary.
        if let Some(summary) = &run.summary {
            push(
                EventBody::ContextSummarized {
                    chat_id: run.chat_id.clone(),
                    summary: summary.clone(),
                },
                started,
            );
        }
        push(
            EventBody::RunStart { run_id: run.run_id.clone(), chat_id: run.chat_id.clone() },
            started,
        );
        // Call id → (stream id, is action), for the results.
        let mut calls: HashMap<&str, (String, bool)> = HashMap::new();
        let mut last = started;
        let mut derived = 0usize;
        let mut derive = |kind: &str| {
            derived += 1;
            format!("{}_{kind}_{}", run.run_id, derived - 1)
        };
        for message in &run.messages {
            let ts = match message {
                StoredMessage::User(u) => u.ts,
                StoredMessage::Assistant(a) => a.ts,
                StoredMessage::Tool(t) => t.ts,
            };
            last = if ts > 0 { ts } else { last };
            match message {
                StoredMessage::User(_) => {}
                // What the live stream never showed, the history does not show either.
                StoredMessage::Assistant(a) if a.hidden => {}
                StoredMessage::Assistant(a) => {
                    if let Some(parts) = &a.reasoning_content {
                        let reasoning_id =
                            a.reasoning_id.clone().unwrap_or_else(|| derive("reasoning"));
                        push(
                            EventBody::ReasoningSnapshot {
                                reasoning_id,
                                text: joined(parts),
                                task_id: None,
                            },
                            last,
                        );
                    }
                    if let Some(parts) = &a.content {
                        let content_id = a.content_id.clone().unwrap_or_else(|| derive("content"));
                        push(
                            EventBody::ContentSnapshot {
                                content_id,
                                text: joined(parts),
                                task_id: None,
                            },
                            last,
                        );
                    }
                    for call in a.tool_calls.iter().flatten() {
                        let is_action = match (&a.action_id, &a.tool_id) {
                            (Some(_), _) => true,
                            (None, Some(_)) => false,
                            (None, None) => action_tools.contains(&call.function.name),
                        };
                        // One stream id per entry; entries holding several calls (not
                        // written by us) fall back to the call ids.
                        let single = a.tool_calls.as_ref().is_some_and(|c| c.len() == 1);
                        let id = a
                            .action_id
                            .clone()
                            .or_else(|| a.tool_id.clone())
                            .filter(|_| single)
                            .unwrap_or_else(|| call.id.clone());
                        let name = Some(call.function.name.clone()).filter(|n| !n.is_empty());
                        let arguments = Some(call.function.arguments.clone());
                        calls.insert(call.id.as_str(), (id.clone(), is_action));
                        let body = if is_action {
                            EventBody::ActionSnapshot {
                                action_id: id,
                                action_name: name,
                                task_id: None,
                                description: None,
                                arguments,
                            }
                        } else {
                            EventBody::ToolSnapshot {
                                tool_id: id,
                                tool_name: name,
                                task_id: None,
                                tool_type: None,
                                tool_api: None,
                                tool_params: None,
                                description: None,
                                arguments,
                            }
                        };
                        push(body, last);
                    }
                }
                StoredMessage::Tool(t) => {
                    let (id, is_action) = match (&t.action_id, &t.tool_id) {
                        (Some(id), _) => (id.clone(), true),
                        (None, Some(id)) => (id.clone(), false),
                        (None, None) => {
                            calls.get(t.tool_call_id.as_str()).cloned().unwrap_or_else(|| {
                                (t.tool_call_id.clone(), action_tools.contains(&t.name))
                            })
                        }
                    };
                    let result = result_value(&joined(&t.content));
                    let body = if is_action {
                        EventBody::ActionResult { action_id: id, result }
                    } else {
                        EventBody::ToolResult { tool_id: id, result }
                    };
                    push(body, last);
                    // An event this version cannot read is left out, like a damaged line.
                    for event in &t.events {
                        if let Ok(body) = serde_json::from_value::<EventBody>(event.clone()) {
                            push(body, last);
                        }
                    }
                }
            }
        }
        push(
            EventBody::RunComplete {
                run_id: run.run_id.clone(),
                finish_reason: run.finish_reason.clone(),
                usage: None,
                failing_panels: Vec::new(),
            },
            run.updated_at.max(last),
        );
    }
    events
}

/// A stored result as the stream showed it: JSON objects and arrays as JSON, anything else as
/// text (`"OK"` stays a string, `"42"` is not turned into a number).
fn result_value(text: &str) -> Value {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str(text)
    {
        return value;
    }
    Value::String(text.to_owned())
}

pub(super) fn summary_of(chat_id: &str, runs: &[RunRecord]) -> Option<ChatSummary> {
    let first = runs.first()?;
    let last = runs.last()?;
    let created_at = first
        .messages
        .iter()
        .find_map(|m| match m {
            StoredMessage::User(u) if u.ts > 0 => Some(u.ts),
            _ => None,
        })
        .unwrap_or(first.updated_at);
    Some(ChatSummary {
        chat_id: chat_id.to_owned(),
        chat_name: chat_name(&first.query.message),
        title: chat_title(first),
        review: false,
        first_agent_key: first.query.agent_key.clone(),
        created_at,
        updated_at: last.updated_at,
        owner: first.owner.clone(),
    })
}

/// Words a request opens with that say nothing of its subject ("Build me a", "Can you
/// please show"), dropped from a title made from the message.
const FILLER: [&str; 22] = [
    "a", "an", "the", "me", "my", "please", "can", "could", "would", "you", "i", "want", "need",
    "build", "make", "create", "show", "give", "set", "up", "let's", "lets",
];

/// Characters of a title made from a chat's first exchange.
pub const TITLE_CHARS: usize = 48;

/// A chat's title made from its first exchange: the title of the dashboard its first run
/// built or changed last (a dashboard tool's result `state.title` or `summary.title`), else the first message without the words
/// a request opens with, its first letter capitalized, cut at a word within
/// [`TITLE_CHARS`] characters.
pub fn chat_title(first: &RunRecord) -> String {
    let built = first.messages.iter().rev().find_map(|m| match m {
        StoredMessage::Tool(t) if !t.is_error => t.content.iter().find_map(|p| {
            let v: Value = serde_json::from_str(&p.text).ok()?;
            let title = ["/state/title", "/summary/title"]
                .iter()
                .find_map(|at| v.pointer(at)?.as_str())?
                .trim();
            (!title.is_empty()).then(|| title.to_owned())
        }),
        _ => None,
    });
    let text = built.unwrap_or_else(|| {
        let line = first.query.message.trim().lines().next().unwrap_or_default();
        let words: Vec<&str> = line.split_whitespace().collect();
        let skip = words
            .iter()
            .take_while(|w| {
                let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
                FILLER.contains(&w.to_lowercase().as_str())
            })
            .count();
        // A message that is all filler keeps its words.
        let rest = if skip < words.len() { &words[skip..] } else { &words[..] };
        rest.join(" ").trim_end_matches(['.', '?', '!', ',', ':', ';']).to_owned()
    });
    let mut out = String::new();
    for word in text.split_whitespace() {
        let next = if out.is_empty() {
            word.chars().count()
        } else {
            out.chars().count() + 1 + word.chars().count()
        };
        if next > TITLE_CHARS {
            if out.is_empty() {
                out = word.chars().take(TITLE_CHARS).collect();
            }
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    let mut chars = out.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => out,
    }
}
