//! One streamed model call: every upstream event becomes its v2 event the moment it arrives;
//! blocks and tool calls left open by a timeout or cancel are ended here.

use super::*;

impl Runner<'_> {
    /// One streamed model call; events are emitted as upstream events arrive.
    pub(super) async fn model_call(
        &mut self,
        system: &str,
        offer_tools: bool,
        required: bool,
        visibility: Visibility,
    ) -> Result<AssistantMessage, Stop> {
        let policy = self.input.agent.policy;
        if self.model_calls >= policy.budget.max_model_calls {
            return Err(Stop::Error(format!(
                "budget exhausted: maxModelCalls ({})",
                policy.budget.max_model_calls
            )));
        }
        self.model_calls += 1;
        let mut resolved = self.resolve().await?;
        self.record_system(&resolved.model);
        let mut context = vec![Message::system(system)];
        for source in &self.deps.context {
            if source.applies(&self.input.agent)
                && let Some(text) = source.context(&self.input.chat_id).await
            {
                context.push(Message::system(text));
            }
        }
        context.extend(convert_to_llm(&self.conversation));
        let tools = if offer_tools { tool_definitions(&self.input.tools) } else { Vec::new() };
        let mut reasoning_ids: Vec<String> = Vec::new();
        let mut content_ids: Vec<String> = Vec::new();
        let show_text = visibility == Visibility::Streamed;
        let show_reasoning = show_text && policy.expose_reasoning;
        let mut ended_ids: Vec<String> = Vec::new();
        // One attempt per model: a retryable failure before any output sends the same call to
        // the resolver's fallback (the user has seen nothing yet); after output, never.
        let (builder, started) = 'attempts: loop {
            let request = ChatRequest {
                model: resolved.model.clone(),
                messages: self.deps.transform.transform(&context, resolved.context_tokens),
                tools: tools.clone(),
                tool_choice: if required { ToolChoice::Required } else { ToolChoice::Auto },
                // Thinking parameters only for models that reason: others reject or ignore them.
                thinking: (policy.reasoning && resolved.reasoning).then(|| Thinking::Enabled {
                    effort: policy.compute.effort(),
                    budget_tokens: None,
                }),
                temperature: self.input.agent.temperature,
                max_tokens: self.input.agent.max_tokens,
                trace_id: Some(self.input.run_id.clone()),
            };
            let mut builder = MessageBuilder::new(&resolved.model, resolved.provider.key());
            let started = std::time::Instant::now();
            let mut stream = resolved.provider.stream(request);
            let mut output = false;
            while let Some(event) = stream.next().await {
                if let StreamEvent::Error(error) = &event
                    && !output
                    && let Some(next) = self.fall_back(&resolved, error, started.elapsed()).await
                {
                    resolved = next;
                    continue 'attempts;
                }
                output |= !matches!(event, StreamEvent::Usage(_) | StreamEvent::Error(_));
                builder.push(&event);
                match &event {
                    StreamEvent::ReasoningStart | StreamEvent::ReasoningDelta { .. }
                        if show_reasoning =>
                    {
                        let id = match &self.open_reasoning {
                            Some(id) => id.clone(),
                            None => {
                                self.reasoning_n += 1;
                                let id =
                                    format!("{}_reasoning_{}", self.id_base(), self.reasoning_n);
                                self.sink.emit(EventBody::ReasoningStart {
                                    reasoning_id: id.clone(),
                                    run_id: self.input.run_id.clone(),
                                    task_id: self.task_id(),
                                });
                                self.open_reasoning = Some(id.clone());
                                reasoning_ids.push(id.clone());
                                id
                            }
                        };
                        if let StreamEvent::ReasoningDelta { text } = &event {
                            self.sink.emit(EventBody::ReasoningDelta {
                                reasoning_id: id,
                                delta: text.clone(),
                            });
                        }
                    }
                    StreamEvent::ReasoningEnd { .. } => {
                        if let Some(id) = self.open_reasoning.take() {
                            self.sink.emit(EventBody::ReasoningEnd { reasoning_id: id });
                        }
                    }
                    StreamEvent::TextStart | StreamEvent::TextDelta { .. } if show_text => {
                        let id = match &self.open_content {
                            Some(id) => id.clone(),
                            None => {
                                self.content_n += 1;
                                let id = format!("{}_content_{}", self.id_base(), self.content_n);
                                self.sink.emit(EventBody::ContentStart {
                                    content_id: id.clone(),
                                    run_id: self.input.run_id.clone(),
                                    task_id: self.task_id(),
                                });
                                self.open_content = Some(id.clone());
                                content_ids.push(id.clone());
                                id
                            }
                        };
                        if let StreamEvent::TextDelta { text } = &event {
                            self.sink.emit(EventBody::ContentDelta {
                                content_id: id,
                                delta: text.clone(),
                            });
                        }
                    }
                    StreamEvent::TextEnd => {
                        if let Some(id) = self.open_content.take() {
                            self.sink.emit(EventBody::ContentEnd { content_id: id });
                        }
                    }
                    StreamEvent::ToolCallStart { index, id, name } if offer_tools => {
                        self.close_blocks();
                        let id = match (&self.task, id.is_empty()) {
                            (_, true) => {
                                self.tool_n += 1;
                                format!("{}_tool_{}", self.id_base(), self.tool_n)
                            }
                            // Tasks running side by side may be given the same provider ids.
                            (Some(task), false) => format!("{}_{id}", task.tag),
                            (None, false) => id.clone(),
                        };
                        let spec = self.input.tools.iter().find(|t| &t.name == name);
                        let kind = spec.map(|s| s.kind);
                        let mut pending = None;
                        if let Some(ToolKind::Frontend(_)) = kind {
                            // Registered before tool.start: an immediate submit is not lost.
                            pending = self.deps.submits.expect(&self.input.run_id, &id).ok();
                        }
                        if kind == Some(ToolKind::Action) {
                            self.sink.emit(EventBody::ActionStart {
                                action_id: id.clone(),
                                run_id: self.input.run_id.clone(),
                                task_id: self.task_id(),
                                action_name: Some(name.clone()),
                                description: spec.map(|s| s.description.clone()),
                            });
                        } else {
                            self.sink.emit(EventBody::ToolStart {
                                tool_id: id.clone(),
                                run_id: self.input.run_id.clone(),
                                task_id: self.task_id(),
                                tool_name: Some(name.clone()),
                                tool_type: kind.map(|k| k.tool_type().to_owned()),
                                tool_api: spec.and_then(ToolSpec::viewport_key).map(str::to_owned),
                                tool_params: None,
                                description: spec.map(|s| s.description.clone()),
                            });
                        }
                        self.open_calls.insert(*index, OpenCall { id, kind, chunks: 0, pending });
                    }
                    StreamEvent::ToolCallDelta { index, args_delta } if offer_tools => {
                        if let Some(call) = self.open_calls.get_mut(index) {
                            if call.kind == Some(ToolKind::Action) {
                                self.sink.emit(EventBody::ActionArgs {
                                    action_id: call.id.clone(),
                                    delta: args_delta.clone(),
                                });
                            } else {
                                self.sink.emit(EventBody::ToolArgs {
                                    tool_id: call.id.clone(),
                                    delta: args_delta.clone(),
                                    chunk_index: Some(call.chunks),
                                });
                            }
                            call.chunks += 1;
                        }
                    }
                    StreamEvent::ToolCallEnd { index, input, input_error, .. } if offer_tools => {
                        if let Some(mut call) = self.open_calls.remove(index) {
                            self.end_call(&call);
                            if call.kind == Some(ToolKind::Action) && input_error.is_none() {
                                // What the frontend applies; it precedes `action.result`.
                                self.sink.emit(EventBody::ActionParam {
                                    action_id: call.id.clone(),
                                    param: input.clone(),
                                });
                            }
                            if let Some(p) = call.pending.take() {
                                self.pending.insert(call.id.clone(), p);
                            }
                            // Keep the id we announced (synthesized when the provider sent none).
                            ended_ids.push(call.id);
                        }
                    }
                    _ => {}
                }
            }
            break (builder, started);
        };
        // A stream cut off mid-block or mid-call still gets its `*.end` events.
        self.close_open();
        let mut msg = match builder.finish() {
            Ok(msg) => msg,
            Err(e) => {
                let message = format!("model call failed: {e}");
                return Err(self.fail(message, e.is_retryable()).await);
            }
        };
        self.usage.add(&msg.usage);
        // Rewrite empty call ids to the synthesized ones announced in events.
        let mut announced = ended_ids.into_iter();
        for block in &mut msg.content {
            if let ContentBlock::ToolUse { id, .. } = block
                && let Some(a) = announced.next()
            {
                *id = a;
            }
        }
        let (mut r_ids, mut c_ids) = (reasoning_ids.into_iter(), content_ids.into_iter());
        self.last_ids = msg
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Reasoning { .. } => r_ids.next().unwrap_or_default(),
                ContentBlock::Text { .. } => c_ids.next().unwrap_or_default(),
                ContentBlock::ToolUse { id, .. } => id.clone(),
                ContentBlock::ToolResult { .. } | ContentBlock::Image { .. } => String::new(),
            })
            .collect();
        self.last_timing_ms = u64::try_from(started.elapsed().as_millis()).ok();
        let turn = TurnInfo {
            turn: self.model_calls,
            usage: msg.usage,
            model: msg.model.clone(),
            provider: msg.provider.clone(),
            duration: started.elapsed(),
        };
        match self.deps.hooks.on_turn_end(&turn).await {
            Ok(true) => Ok(msg),
            Ok(false) => {
                // What was streamed stays in the history; its tool calls never run.
                if visibility == Visibility::Streamed {
                    self.push_assistant(strip_tool_calls(msg)).await;
                }
                Err(Stop::Stopped)
            }
            Err(e) => Err(Stop::Error(e)),
        }
    }

    /// Ends the open reasoning and text blocks.
    fn close_blocks(&mut self) {
        if let Some(id) = self.open_reasoning.take() {
            self.sink.emit(EventBody::ReasoningEnd { reasoning_id: id });
        }
        if let Some(id) = self.open_content.take() {
            self.sink.emit(EventBody::ContentEnd { content_id: id });
        }
    }

    /// Ends the open blocks and tool calls (in call order).
    pub(super) fn close_open(&mut self) {
        self.close_blocks();
        let mut calls: Vec<(usize, OpenCall)> = self.open_calls.drain().collect();
        calls.sort_by_key(|(index, _)| *index);
        for (_, call) in calls {
            self.end_call(&call);
        }
    }

    /// `tool.end`, or `action.end` for actions.
    fn end_call(&self, call: &OpenCall) {
        if call.kind == Some(ToolKind::Action) {
            self.sink.emit(EventBody::ActionEnd { action_id: call.id.clone() });
        } else {
            self.sink.emit(EventBody::ToolEnd { tool_id: call.id.clone() });
        }
    }
}
