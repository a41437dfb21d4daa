//! Recording a run as it happens: [`RunRecorder`] turns the run loop's messages into one
//! [`RunRecord`] line.

use super::*;

/// Builds the [`RunRecord`] of a run as it happens. Made by [`ChatMemory::recorder`], which
/// records the query's message as the user message.
#[derive(Debug)]
pub struct RunRecorder {
    pub(super) record: RunRecord,
    pub(super) action_tools: Arc<BTreeSet<String>>,
    pub(super) responses: u32,
    /// Counters for derived block ids, by kind.
    pub(super) counters: HashMap<&'static str, u32>,
    /// Call id → (tool name, stream id, is action), for the results.
    pub(super) calls: HashMap<String, (String, String, bool)>,
}

impl RunRecorder {
    /// Records one model response. `block_ids[i]` is the stream id (`reasoningId`, `contentId`,
    /// `toolId` or `actionId`) used for `message.content[i]`; missing ids are derived as
    /// `<runId>_<kind>_<n>`. Empty text blocks are not stored. `timing_ms` is the call's
    /// duration; it and the usage go on the response's last entry.
    pub fn assistant(
        &mut self,
        message: &AssistantMessage,
        block_ids: &[String],
        ts: i64,
        timing_ms: Option<u64>,
    ) {
        self.responses += 1;
        let msg_id = msg_id(&self.record.run_id, self.responses);
        let first = self.record.messages.len();
        for (i, block) in message.content.iter().enumerate() {
            // An empty id (not a missing one) marks a block the stream never showed.
            let hidden = block_ids.get(i).is_some_and(String::is_empty);
            let given = block_ids.get(i).filter(|id| !id.is_empty()).cloned();
            let mut entry = AssistantEntry {
                ts,
                msg_id: Some(msg_id.clone()),
                model: Some(message.model.clone()).filter(|m| !m.is_empty()),
                provider: Some(message.provider.clone()).filter(|p| !p.is_empty()),
                ..AssistantEntry::default()
            };
            match block {
                ContentBlock::Reasoning { text, signature, redacted } => {
                    if text.is_empty() && signature.is_none() && redacted.is_none() {
                        continue;
                    }
                    entry.reasoning_content = Some(vec![Part {
                        signature: signature.clone(),
                        redacted: redacted.clone(),
                        ..Part::text(text.clone())
                    }]);
                    entry.reasoning_id = Some(given.unwrap_or_else(|| self.derive_id("reasoning")));
                    entry.hidden = hidden;
                }
                ContentBlock::Text { text } => {
                    if text.is_empty() {
                        continue;
                    }
                    entry.content = Some(vec![Part::text(text.clone())]);
                    entry.content_id = Some(given.unwrap_or_else(|| self.derive_id("content")));
                    entry.hidden = hidden;
                }
                ContentBlock::ToolUse { id, name, input, input_error } => {
                    let arguments = match (input, input_error) {
                        (Value::String(raw), Some(_)) => raw.clone(),
                        _ => input.to_string(),
                    };
                    let is_action = self.action_tools.contains(name);
                    let stream_id = given.unwrap_or_else(|| {
                        self.derive_id(if is_action { "action" } else { "tool" })
                    });
                    entry.tool_calls = Some(vec![StoredToolCall {
                        id: id.clone(),
                        kind: function_kind(),
                        function: StoredFunction { name: name.clone(), arguments },
                    }]);
                    if is_action {
                        entry.action_id = Some(stream_id.clone());
                    } else {
                        entry.tool_id = Some(stream_id.clone());
                    }
                    self.calls.insert(id.clone(), (name.clone(), stream_id, is_action));
                }
                ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => continue,
            }
            self.record.messages.push(StoredMessage::Assistant(entry));
        }
        if self.record.messages.len() > first
            && let Some(StoredMessage::Assistant(last)) = self.record.messages.last_mut()
        {
            last.timing = timing_ms;
            last.usage = Some(StoredUsage::from(&message.usage));
        }
    }

    /// Records the result of a call recorded by [`RunRecorder::assistant`] (its name and
    /// stream id are taken from there).
    pub fn tool_result(
        &mut self,
        call_id: &str,
        content: &str,
        is_error: bool,
        ts: i64,
        timing_ms: Option<u64>,
    ) {
        let (name, stream_id, is_action) = self
            .calls
            .get(call_id)
            .cloned()
            .unwrap_or_else(|| (String::new(), call_id.to_owned(), false));
        self.record.messages.push(StoredMessage::Tool(ToolEntry {
            name,
            tool_call_id: call_id.to_owned(),
            content: vec![Part::text(content)],
            ts,
            tool_id: (!is_action).then(|| stream_id.clone()),
            action_id: is_action.then_some(stream_id),
            timing: timing_ms,
            is_error,
            events: Vec::new(),
        }));
    }

    /// Records the events a tool streamed after its result (recorded before by
    /// [`RunRecorder::tool_result`]).
    pub fn tool_events(&mut self, call_id: &str, events: &[EventBody]) {
        let entry = self.record.messages.iter_mut().rev().find_map(|m| match m {
            StoredMessage::Tool(t) if t.tool_call_id == call_id => Some(t),
            _ => None,
        });
        if let Some(entry) = entry {
            entry.events.extend(events.iter().filter_map(|e| serde_json::to_value(e).ok()));
        }
    }

    /// Records a user message sent while the run worked (steering, follow-up), so replay and
    /// history see it where it was injected.
    pub fn user(&mut self, text: &str, ts: i64) {
        self.record
            .messages
            .push(StoredMessage::User(UserEntry { content: vec![Part::text(text)], ts }));
    }

    /// Records the images of the run's query with its message (by reference: the upload's
    /// sha256 or the URL).
    pub fn images(&mut self, images: &[Upload]) {
        if let Some(StoredMessage::User(first)) = self.record.messages.first_mut() {
            first.content.extend(images.iter().cloned().map(Part::image));
        }
    }

    /// Records whose run it is (a person's user id).
    pub fn owner(&mut self, owner: Option<String>) {
        self.record.owner = owner;
    }

    /// Records the summary of earlier runs this run starts from.
    pub fn summary(&mut self, summary: ContextSummary) {
        self.record.summary = Some(summary);
    }

    /// Sets the run's model setup (dropped on append when unchanged since the last one stored).
    pub fn system(&mut self, snapshot: SystemSnapshot) {
        self.record.system = Some(snapshot);
    }

    /// The record so far.
    pub fn record(&self) -> &RunRecord {
        &self.record
    }

    /// Records how the run ended (see [`RunRecord::finish_reason`]).
    pub fn finish_reason(&mut self, reason: &str) {
        self.record.finish_reason = Some(reason.to_owned());
    }

    /// The finished record, `updatedAt` = now.
    pub fn finish(mut self) -> RunRecord {
        self.record.updated_at = now_ms();
        self.record
    }

    fn derive_id(&mut self, kind: &'static str) -> String {
        let n = self.counters.entry(kind).or_insert(0);
        let id = format!("{}_{kind}_{n}", self.record.run_id);
        *n += 1;
        id
    }
}

/// `m_` + 8 hex digits, stable for (run, response number).
fn msg_id(run_id: &str, n: u32) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(format!("{run_id}/{n}").as_bytes());
    format!("m_{:08x}", hash as u32)
}
