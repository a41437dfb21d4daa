//! Executing one step's tool calls: budgets, template resolution, the shell's confirm gate,
//! backend calls run concurrently with results in call order, actions answered at once,
//! frontend tools parked until the user submits.

use super::*;

impl Runner<'_> {
    fn available(&self) -> String {
        self.input.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// Executes one step's tool calls in order; answers every call.
    pub(super) async fn execute(
        &mut self,
        calls: &[ContentBlock],
        per_round: Option<u32>,
    ) -> Result<(), Stop> {
        let limit = per_round.map_or(usize::MAX, |n| n as usize);
        let mut idx = 0usize;
        loop {
            // Steering: a new user message skips the rest of the step. Checked after the last
            // batch too, so a message sent during it reaches the very next model call.
            let steer = self.deps.steering.drain();
            if !steer.is_empty() {
                let skipped: Vec<String> = calls[idx..]
                    .iter()
                    .filter_map(|c| match c {
                        ContentBlock::ToolUse { name, .. } => Some(name.clone()),
                        _ => None,
                    })
                    .collect();
                self.sink.emit(EventBody::RunSteer {
                    run_id: self.input.run_id.clone(),
                    mode: "steer".into(),
                    messages: steer.clone(),
                    skipped_tools: skipped,
                });
                for call in &calls[idx..] {
                    if let ContentBlock::ToolUse { id, .. } = call {
                        self.answer(id, Err("skipped: user sent a new message".into())).await;
                    }
                }
                for text in steer {
                    self.push_user(text);
                }
                return Ok(());
            }
            if idx >= calls.len() {
                return Ok(());
            }
            // The batch: consecutive backend calls, or one other call.
            let mut end = idx + 1;
            if idx < limit && self.is_backend(&calls[idx]) {
                while end < calls.len() && end < limit && self.is_backend(&calls[end]) {
                    end += 1;
                }
            }
            let mut futures = Vec::new();
            for (pos, call) in calls.iter().enumerate().take(end).skip(idx) {
                let ContentBlock::ToolUse { id, name, input, input_error } = call else {
                    continue;
                };
                futures.push(self.prepare(pos, limit, id, name, input, input_error.as_deref())?);
            }
            let results = futures::future::join_all(futures).await;
            if self.deps.cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            for Answered { id, backend, result, events } in results {
                if let (Some(name), Ok(v)) = (backend, &result) {
                    self.results.record(name, v.clone());
                }
                self.answer(&id, result).await;
                // The tool's own events (e.g. `dashboard.update`) follow its result.
                if let Some(r) = self.recorder.as_deref_mut() {
                    r.tool_events(&id, &events);
                }
                for mut event in events {
                    if let Some(task) = &self.task {
                        event.adopt_task(&task.task_id);
                    }
                    if matches!(event, EventBody::DashboardUpdate { .. }) {
                        self.updates.push(event.clone());
                    }
                    self.sink.emit(event);
                }
            }
            idx = end;
        }
    }

    fn is_backend(&self, call: &ContentBlock) -> bool {
        let ContentBlock::ToolUse { name, input_error, .. } = call else { return false };
        input_error.is_none()
            && self.input.tools.iter().any(|t| &t.name == name && t.kind == ToolKind::Backend)
    }

    /// Builds the future answering one call; counts it against the budget.
    fn prepare(
        &mut self,
        pos: usize,
        limit: usize,
        id: &str,
        name: &str,
        input: &Value,
        input_error: Option<&str>,
    ) -> Result<BoxFuture<'static, Answered>, Stop> {
        let id = id.to_owned();
        let registered = self.pending.remove(&id);
        let ready = |id: String, result: Result<Value, String>| -> BoxFuture<'static, Answered> {
            Box::pin(std::future::ready(Answered { id, backend: None, result, events: Vec::new() }))
        };
        if pos >= limit {
            return Ok(ready(
                id,
                Err(format!(
                    "not executed: only {limit} tool call per step is allowed; call `{name}` again in the next step if still needed"
                )),
            ));
        }
        let budget = self.input.agent.policy.budget.max_tool_calls;
        if self.tool_calls >= budget {
            return Err(Stop::Error(format!("budget exhausted: maxToolCalls ({budget})")));
        }
        self.tool_calls += 1;
        if let Some(e) = input_error {
            return Ok(ready(id, Err(format!("invalid arguments for `{name}`: {e}"))));
        }
        let Some(spec) = self.input.tools.iter().find(|t| t.name == name) else {
            return Ok(ready(
                id,
                Err(format!("unknown tool `{name}`; available: {}", self.available())),
            ));
        };
        match spec.kind {
            ToolKind::Action => Ok(ready(id, Ok(json!("OK")))),
            ToolKind::Backend => {
                let args = match self.results.resolve_args(input) {
                    Ok(a) => a,
                    Err(e) => return Ok(ready(id, Err(e.to_string()))),
                };
                let gate = match self.confirm_gate(&id, name, &args) {
                    Ok(g) => g,
                    Err(e) => return Ok(ready(id, Err(e))),
                };
                let mut ctx = ToolContext::new(&self.input.run_id, &self.input.chat_id)
                    .with_tool_id(id.clone())
                    .with_agent(self.input.agent.clone());
                ctx.cancel = self.deps.cancel.child_token();
                ctx.principal = self.input.principal.clone();
                let cancel = ctx.cancel.clone();
                // Lazy: nothing runs until the gate (if any) opens.
                let fut = self.deps.backend.call_with_events(name, args, ctx);
                let name = name.to_owned();
                Ok(Box::pin(async move {
                    if let Some((pending, timeout)) = gate
                        && let Err(no) = approved(pending.wait(Some(timeout), &cancel).await)
                    {
                        return Answered { id, backend: None, result: Err(no), events: Vec::new() };
                    }
                    match fut.await {
                        Ok(r) => Answered {
                            id,
                            backend: Some(name),
                            result: Ok(r.result),
                            events: r.events,
                        },
                        Err(e) => Answered {
                            id,
                            backend: Some(name),
                            result: Err(e.to_string()),
                            events: Vec::new(),
                        },
                    }
                }))
            }
            ToolKind::Frontend(_) => {
                let pending = match registered {
                    Some(p) => Ok(p),
                    None => self.deps.submits.expect(&self.input.run_id, &id),
                };
                let pending = match pending {
                    Ok(p) => p,
                    Err(e) => return Ok(ready(id, Err(e.to_string()))),
                };
                let timeout = self.deps.frontend_timeout;
                let cancel = self.deps.cancel.clone();
                Ok(Box::pin(async move {
                    let result = pending.wait(timeout, &cancel).await.map_err(|e| e.to_string());
                    Answered { id, backend: None, result, events: Vec::new() }
                }))
            }
        }
    }

    /// For a shell command of an agent with `confirmShell`: registers the submit that answers
    /// it, then tells the user what would run (`tool.confirm`). `None` when no one is asked.
    fn confirm_gate(
        &self,
        id: &str,
        name: &str,
        args: &Value,
    ) -> Result<Option<(PendingSubmit, Duration)>, String> {
        if name != bash::NAME || !self.input.agent.shell.confirm {
            return Ok(None);
        }
        // Registered before the event: an immediate answer is not lost.
        let pending =
            self.deps.submits.expect(&self.input.run_id, id).map_err(|e| e.to_string())?;
        let timeout =
            self.deps.frontend_timeout.unwrap_or_else(|| self.deps.submits.default_timeout());
        self.sink.emit(EventBody::ToolConfirm {
            tool_id: id.to_owned(),
            run_id: self.input.run_id.clone(),
            tool_name: name.to_owned(),
            command: args.get("command").and_then(Value::as_str).unwrap_or_default().to_owned(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        });
        Ok(Some((pending, timeout)))
    }

    /// Emits `tool.result` (`action.result` for actions) and records the result for the model.
    async fn answer(&mut self, id: &str, result: Result<Value, String>) {
        let is_action = self.produced.iter().rev().find_map(|m| match m.as_llm() {
            Some(Message::Assistant(a)) => a.tool_calls().find_map(|b| match b {
                ContentBlock::ToolUse { id: i, name, .. } if i == id => Some(
                    self.input.tools.iter().any(|t| &t.name == name && t.kind == ToolKind::Action),
                ),
                _ => None,
            }),
            _ => None,
        });
        let (event_result, content, is_error) = match result {
            Ok(v) => {
                let text = match &v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (v, text, false)
            }
            Err(e) => (json!({ "error": e }), e, true),
        };
        if is_action == Some(true) {
            self.sink
                .emit(EventBody::ActionResult { action_id: id.to_owned(), result: event_result });
        } else {
            self.sink.emit(EventBody::ToolResult { tool_id: id.to_owned(), result: event_result });
        }
        self.push_tool(Message::tool_result(id, content, is_error)).await;
    }
}

/// One tool call's outcome, as the batch hands it back in call order.
struct Answered {
    /// The call's id.
    id: String,
    /// The backend tool that ran (its result becomes a template source).
    backend: Option<String>,
    result: Result<Value, String>,
    /// Events the tool streams after its result.
    events: Vec<EventBody>,
}

/// The user's answer to `tool.confirm`: `{"approved": true}` runs the command; anything else,
/// silence or a cancel does not, and the model is told which (so it can ask, not retry).
fn approved(answer: Result<Value, ToolError>) -> Result<(), String> {
    match answer {
        Ok(v) if v.get("approved") == Some(&Value::Bool(true)) => Ok(()),
        Ok(_) => Err("not run: the user declined this command. Do not run it again; ask the user \
                      what they want instead, or go on without it."
            .to_owned()),
        Err(ToolError::NoAnswer { waited }) => Err(format!(
            "not run: the user did not confirm this command within {} s. Ask before trying again.",
            waited.as_secs()
        )),
        Err(e) => Err(format!("not run: {e}")),
    }
}
