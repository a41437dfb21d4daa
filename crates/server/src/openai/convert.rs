//! OpenAI requests to the provider layer's [`ChatRequest`] (and to agent queries): every
//! message, tool and option mapped, and everything that cannot be honoured refused with a 400 naming the parameter
//! (never dropped silently).

use serde_json::{Value, json};

use super::wire::{ChatCompletionRequest, Content, ContentPart, RequestMessage, ToolCall};
use crate::ApiError;
use agent::service::{QueryImage, QueryRequest};
use llm::{
    AssistantMessage, ChatRequest, ContentBlock, Effort, ImageSource, Message, Thinking,
    ToolChoice, ToolDefinition,
};

/// A 400 whose OpenAI error object names `param`.
pub fn invalid(param: &str, msg: impl std::fmt::Display) -> ApiError {
    ApiError::BadRequest {
        msg: format!("`{param}`: {msg}"),
        data: json!({ "param": param, "code": "invalid_value" }),
    }
}

/// A 400 for a parameter Boardsmith cannot honour.
pub fn unsupported(param: &str, what: &str) -> ApiError {
    ApiError::BadRequest {
        msg: format!("`{param}`: {what} is not supported by Boardsmith"),
        data: json!({ "param": param, "code": "unsupported_parameter" }),
    }
}

/// The provider-layer request for `req`, to be sent as `model` of `provider`. Checks every
/// option first, then the messages.
pub fn to_chat_request(
    req: &ChatCompletionRequest,
    model: &str,
    provider: &str,
) -> Result<ChatRequest, ApiError> {
    check_options(req)?;
    Ok(ChatRequest {
        model: model.to_owned(),
        messages: messages(&req.messages, model, provider)?,
        tools: tools(req)?,
        tool_choice: tool_choice(req.tool_choice.as_ref())?,
        max_tokens: req.max_completion_tokens.or(req.max_tokens),
        temperature: req.temperature,
        thinking: thinking(req.reasoning_effort.as_deref())?,
        trace_id: None,
    })
}

pub fn check_options(req: &ChatCompletionRequest) -> Result<(), ApiError> {
    if req.n.is_some_and(|n| n != 1) {
        return Err(unsupported("n", "more than one choice"));
    }
    if req.logprobs == Some(true) {
        return Err(unsupported("logprobs", "log probabilities"));
    }
    if let Some(format) = &req.response_format
        && format.get("type").and_then(Value::as_str) != Some("text")
    {
        return Err(unsupported("response_format", "an output format other than `text`"));
    }
    if req.modalities.as_ref().is_some_and(|m| m.iter().any(|m| m != "text")) {
        return Err(unsupported("modalities", "output other than text"));
    }
    let refused = [
        ("audio", &req.audio, "audio output"),
        ("prediction", &req.prediction, "predicted output"),
        ("web_search_options", &req.web_search_options, "web search"),
        ("functions", &req.functions, "legacy function calling (use `tools`)"),
        ("function_call", &req.function_call, "legacy function calling (use `tool_choice`)"),
    ];
    for (param, value, what) in refused {
        if value.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(unsupported(param, what));
        }
    }
    if let Some(t) = req.temperature
        && !(0.0..=2.0).contains(&t)
    {
        return Err(invalid("temperature", format!("{t} is outside 0..2")));
    }
    if req.max_completion_tokens == Some(0) || req.max_tokens == Some(0) {
        let param = if req.max_completion_tokens == Some(0) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        return Err(invalid(param, "must be at least 1"));
    }
    Ok(())
}

/// The text of `content` at `param`: a string, or its text parts joined.
pub fn text_of(content: &Content, param: &str) -> Result<String, ApiError> {
    match content {
        Content::Text(t) => Ok(t.clone()),
        Content::Parts(parts) => {
            let mut out = String::new();
            for (i, part) in parts.iter().enumerate() {
                out.push_str(part_text(part, &format!("{param}[{i}]"))?);
            }
            Ok(out)
        }
    }
}

/// The text of a `text` or `refusal` part; any other kind refused.
fn part_text<'a>(part: &'a ContentPart, at: &str) -> Result<&'a str, ApiError> {
    let text = match part.kind.as_str() {
        "text" => part.text.as_deref(),
        "refusal" => part.refusal.as_deref(),
        "image_url" => return Err(unsupported(at, "an image outside a user message")),
        "input_audio" | "file" => {
            return Err(unsupported(
                at,
                &format!("a `{}` content part (only text and images reach models)", part.kind),
            ));
        }
        other => return Err(invalid(at, format!("unknown content part `{other}`"))),
    };
    text.ok_or_else(|| invalid(at, format!("a `{}` part needs its text", part.kind)))
}

/// A user message's content: text parts joined into one text block, `image_url` parts as
/// images (a `data:` URL of an accepted image type as its bytes, an `https:` URL as the
/// address), images first.
fn user_content(content: &Content, param: &str) -> Result<Vec<ContentBlock>, ApiError> {
    let Content::Parts(parts) = content else {
        return Ok(vec![ContentBlock::text(text_of(content, param)?)]);
    };
    let mut out = Vec::with_capacity(parts.len());
    let mut text = String::new();
    for (i, part) in parts.iter().enumerate() {
        let at = format!("{param}[{i}]");
        if part.kind == "image_url" {
            out.push(image(part.image_url.as_ref(), &at)?);
        } else {
            text.push_str(part_text(part, &at)?);
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push(ContentBlock::text(text));
    }
    Ok(out)
}

/// An `image_url` part's image.
fn image(value: Option<&Value>, at: &str) -> Result<ContentBlock, ApiError> {
    use base64::Engine as _;
    use uploads::ImageType;
    let url = match value {
        Some(Value::String(url)) => url.as_str(),
        Some(Value::Object(o)) => o.get("url").and_then(Value::as_str).unwrap_or_default(),
        _ => "",
    };
    let url = url.trim();
    if url.is_empty() {
        return Err(invalid(&format!("{at}.image_url.url"), "an `image_url` part needs its `url`"));
    }
    if let Some(rest) = url.strip_prefix("data:") {
        let bad = |msg: String| invalid(&format!("{at}.image_url.url"), msg);
        let (head, data) =
            rest.split_once(',').ok_or_else(|| bad("a `data:` URL without data".into()))?;
        let mime = head
            .strip_suffix(";base64")
            .ok_or_else(|| bad("a `data:` URL must be base64".into()))?;
        let kind = ImageType::from_mime(mime).ok_or_else(|| {
            bad(format!("`{mime}` is not an accepted image type (png, jpeg, gif, webp)"))
        })?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| bad(format!("the base64 data is invalid: {e}")))?;
        if ImageType::sniff(&bytes) != Some(kind) {
            return Err(bad(format!("the data is not {}", kind.mime())));
        }
        return Ok(ContentBlock::Image {
            media_type: kind.mime().to_owned(),
            source: ImageSource::Base64 { data: data.trim().to_owned() },
        });
    }
    let https = url.len() > 8 && url[..8].eq_ignore_ascii_case("https://");
    if !https || url.chars().any(char::is_whitespace) {
        return Err(invalid(
            &format!("{at}.image_url.url"),
            "must be an `https:` address or a base64 `data:` URL",
        ));
    }
    Ok(ContentBlock::Image {
        media_type: String::new(),
        source: ImageSource::Url { url: url.to_owned() },
    })
}

/// Refuses images for a model that cannot see them, and image addresses for one that takes
/// only inline bytes (Ollama), naming the first such part.
pub fn check_images(input: &[RequestMessage], model: &llm::Connected) -> Result<(), ApiError> {
    let inline_only = model.provider.kind() == llm::ProviderKind::Ollama;
    for (i, m) in input.iter().enumerate() {
        let RequestMessage::User { content: Content::Parts(parts), .. } = m else { continue };
        for (j, part) in parts.iter().enumerate().filter(|(_, p)| p.kind == "image_url") {
            let at = format!("messages[{i}].content[{j}]");
            if !model.model.vision {
                return Err(unsupported(
                    &at,
                    &format!(
                        "an image for `{}`, whose registry entry has no `vision`",
                        model.qualified_id()
                    ),
                ));
            }
            let url = match &part.image_url {
                Some(Value::String(u)) => u.as_str(),
                Some(v) => v.get("url").and_then(Value::as_str).unwrap_or_default(),
                None => "",
            };
            if inline_only && !url.trim_start().starts_with("data:") {
                return Err(unsupported(
                    &at,
                    &format!(
                        "an image address for `{}` (Ollama takes only `data:` URLs)",
                        model.qualified_id()
                    ),
                ));
            }
        }
    }
    Ok(())
}

pub fn messages(
    input: &[RequestMessage],
    model: &str,
    provider: &str,
) -> Result<Vec<Message>, ApiError> {
    if input.is_empty() {
        return Err(invalid("messages", "at least one message is required"));
    }
    let mut out: Vec<Message> = Vec::with_capacity(input.len());
    for (i, m) in input.iter().enumerate() {
        let at = |field: &str| format!("messages[{i}].{field}");
        let message = match m {
            RequestMessage::System { content, .. } | RequestMessage::Developer { content, .. } => {
                Message::system(text_of(content, &at("content"))?)
            }
            RequestMessage::User { content, .. } => {
                Message::User { content: user_content(content, &at("content"))? }
            }
            RequestMessage::Assistant {
                content,
                tool_calls,
                reasoning_content,
                refusal,
                function_call,
                audio,
                ..
            } => {
                if function_call.as_ref().is_some_and(|v| !v.is_null()) {
                    return Err(unsupported(&at("function_call"), "legacy function calling"));
                }
                if audio.as_ref().is_some_and(|v| !v.is_null()) {
                    return Err(unsupported(&at("audio"), "audio"));
                }
                let mut blocks = Vec::new();
                if let Some(r) = reasoning_content.as_deref().filter(|r| !r.is_empty()) {
                    blocks.push(ContentBlock::Reasoning {
                        text: r.to_owned(),
                        signature: None,
                        redacted: None,
                    });
                }
                let mut text = match content {
                    Some(c) => text_of(c, &at("content"))?,
                    None => String::new(),
                };
                if let Some(r) = refusal {
                    text.push_str(r);
                }
                if !text.is_empty() {
                    blocks.push(ContentBlock::text(text));
                }
                for (j, call) in tool_calls.iter().flatten().enumerate() {
                    blocks.push(tool_use(call, &at(&format!("tool_calls[{j}]")))?);
                }
                Message::Assistant(AssistantMessage {
                    content: blocks,
                    model: model.to_owned(),
                    provider: provider.to_owned(),
                    ..AssistantMessage::default()
                })
            }
            RequestMessage::Tool { content, tool_call_id } => {
                let result = ContentBlock::ToolResult {
                    tool_use_id: tool_call_id.clone(),
                    content: text_of(content, &at("content"))?,
                    is_error: false,
                };
                // Results of one assistant turn travel together, as the runtime sends them.
                if let Some(Message::Tool { content }) = out.last_mut() {
                    content.push(result);
                    continue;
                }
                Message::Tool { content: vec![result] }
            }
            RequestMessage::Function { .. } => {
                return Err(unsupported(&format!("messages[{i}].role"), "the `function` role"));
            }
        };
        out.push(message);
    }
    Ok(out)
}

/// The agent query for an agent completion: the last message (a user's) is the query, the
/// ones before it the conversation so far (used when the chat has no history of its own).
pub fn to_agent_query(req: &ChatCompletionRequest, agent: &str) -> Result<QueryRequest, ApiError> {
    check_options(req)?;
    for (param, set) in [("tools", req.tools.is_some()), ("tool_choice", req.tool_choice.is_some())]
    {
        if set {
            return Err(unsupported(param, "choosing tools for an agent (it calls its own)"));
        }
    }
    let Some((last, before)) = req.messages.split_last() else {
        return Err(invalid("messages", "at least one message is required"));
    };
    let at = format!("messages[{}]", before.len());
    let RequestMessage::User { content, .. } = last else {
        return Err(invalid(&at, "the last message must be the user's"));
    };
    let mut images = Vec::new();
    let message = match content {
        Content::Parts(parts) => {
            let mut text = String::new();
            for (i, part) in parts.iter().enumerate() {
                let at = format!("{at}.content[{i}]");
                if part.kind != "image_url" {
                    text.push_str(part_text(part, &at)?);
                    continue;
                }
                // An agent's query takes images by address or upload id; inline bytes go
                // through `POST /api/uploads`.
                match image(part.image_url.as_ref(), &at)? {
                    ContentBlock::Image { source: ImageSource::Url { url }, .. } => {
                        images.push(QueryImage { url: Some(url), upload_id: None });
                    }
                    _ => {
                        return Err(unsupported(
                            &at,
                            "a `data:` image for an agent (upload it with POST /api/uploads \
                             and send its id to POST /api/query)",
                        ));
                    }
                }
            }
            text
        }
        Content::Text(_) => text_of(content, &format!("{at}.content"))?,
    };
    let prior = if before.is_empty() { Vec::new() } else { messages(before, "", "")? };
    Ok(QueryRequest {
        message,
        images: (!images.is_empty()).then_some(images),
        agent_key: Some(agent.to_owned()),
        chat_id: req.chat_id.clone(),
        busy: req.busy,
        prior,
        ..QueryRequest::default()
    })
}

fn tool_use(call: &ToolCall, at: &str) -> Result<ContentBlock, ApiError> {
    if call.kind != "function" {
        return Err(invalid(&format!("{at}.type"), "only `function` tool calls exist"));
    }
    let args = call.function.arguments.trim();
    let input = if args.is_empty() {
        json!({})
    } else {
        serde_json::from_str::<Value>(args).map_err(|e| {
            invalid(&format!("{at}.function.arguments"), format!("not valid JSON: {e}"))
        })?
    };
    Ok(ContentBlock::ToolUse {
        id: call.id.clone(),
        name: call.function.name.clone(),
        input,
        input_error: None,
    })
}

fn tools(req: &ChatCompletionRequest) -> Result<Vec<ToolDefinition>, ApiError> {
    let mut out = Vec::new();
    for (i, t) in req.tools.iter().flatten().enumerate() {
        let at = |field: &str| format!("tools[{i}].{field}");
        if t.kind != "function" {
            return Err(unsupported(&at("type"), &format!("a `{}` tool", t.kind)));
        }
        let name = &t.function.name;
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(invalid(&at("function.name"), "must match [A-Za-z0-9_-]{1,64}"));
        }
        let schema = match &t.function.parameters {
            None | Some(Value::Null) => json!({"type": "object", "properties": {}}),
            Some(s @ Value::Object(_)) => s.clone(),
            Some(_) => {
                return Err(invalid(&at("function.parameters"), "must be a JSON Schema object"));
            }
        };
        out.push(ToolDefinition {
            name: name.clone(),
            description: t.function.description.clone().unwrap_or_default(),
            input_schema: schema,
        });
    }
    Ok(out)
}

fn tool_choice(choice: Option<&Value>) -> Result<ToolChoice, ApiError> {
    let bad = || {
        invalid(
            "tool_choice",
            "expected `none`, `auto`, `required` or {type: \"function\", function: {name}}",
        )
    };
    Ok(match choice {
        None | Some(Value::Null) => ToolChoice::Auto,
        Some(Value::String(s)) => match s.as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => return Err(bad()),
        },
        Some(v) => {
            let name = v
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .filter(|_| v.get("type").and_then(Value::as_str) == Some("function"))
                .ok_or_else(bad)?;
            ToolChoice::Tool(name.to_owned())
        }
    })
}

fn thinking(effort: Option<&str>) -> Result<Option<Thinking>, ApiError> {
    let enabled = |effort| Some(Thinking::Enabled { effort, budget_tokens: None });
    Ok(match effort {
        None => None,
        Some("none") => Some(Thinking::Disabled),
        Some("minimal" | "low") => enabled(Effort::Low),
        Some("medium") => enabled(Effort::Medium),
        Some("high" | "xhigh") => enabled(Effort::High),
        Some(other) => {
            return Err(invalid(
                "reasoning_effort",
                format!("`{other}`: expected none, minimal, low, medium, high or xhigh"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: Value) -> ChatCompletionRequest {
        serde_json::from_value(body).unwrap()
    }

    fn convert(body: Value) -> Result<ChatRequest, ApiError> {
        to_chat_request(&parse(body), "m", "p")
    }

    fn param_of(e: ApiError) -> String {
        match e {
            ApiError::BadRequest { data, .. } => data["param"].as_str().unwrap().to_owned(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tool_round_trip_becomes_provider_messages() {
        let req = convert(json!({
            "model": "x",
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "weather "}, {"type": "text", "text": "in Paris?"}]},
                {"role": "assistant", "content": null, "reasoning_content": "need the tool",
                 "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"Paris\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "w", "arguments": ""}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "12C"},
                {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "ok"}]}
            ],
            "tools": [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}],
            "tool_choice": {"type": "function", "function": {"name": "w"}},
            "max_tokens": 10, "max_completion_tokens": 20, "reasoning_effort": "minimal"
        }))
        .unwrap();
        assert_eq!(req.system_prompt().as_deref(), Some("be brief"));
        assert_eq!(req.messages[1], Message::user("weather in Paris?"));
        let Message::Assistant(a) = &req.messages[2] else { panic!() };
        assert_eq!(a.provider, "p");
        assert!(
            matches!(&a.content[0], ContentBlock::Reasoning { text, .. } if text == "need the tool")
        );
        assert!(
            matches!(&a.content[1], ContentBlock::ToolUse { input, .. } if input["city"] == "Paris")
        );
        assert!(
            matches!(&a.content[2], ContentBlock::ToolUse { input, .. } if *input == json!({}))
        );
        // Consecutive tool messages are one provider message.
        assert_eq!(req.messages.len(), 4);
        let Message::Tool { content } = &req.messages[3] else { panic!() };
        assert_eq!(content.len(), 2);
        assert_eq!(req.tool_choice, ToolChoice::Tool("w".into()));
        assert_eq!(req.max_tokens, Some(20), "max_completion_tokens wins");
        assert_eq!(
            req.thinking,
            Some(Thinking::Enabled { effort: Effort::Low, budget_tokens: None })
        );
    }

    #[test]
    fn what_cannot_be_honoured_is_refused_by_name() {
        let base = |extra: Value| {
            let mut v = json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        for (extra, param) in [
            (json!({"n": 2}), "n"),
            (json!({"logprobs": true}), "logprobs"),
            (json!({"response_format": {"type": "json_object"}}), "response_format"),
            (json!({"reasoning_effort": "max"}), "reasoning_effort"),
            (json!({"temperature": 3.5}), "temperature"),
            (json!({"tool_choice": "sometimes"}), "tool_choice"),
            (
                json!({"tools": [{"type": "function", "function": {"name": "a b"}}]}),
                "tools[0].function.name",
            ),
            (json!({"messages": []}), "messages"),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}),
                "messages[0].content[0].image_url.url",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,/9j/4AAQ"}}]}]}),
                "messages[0].content[0].image_url.url",
            ),
            (
                json!({"messages": [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://a.example/x.png"}}]}]}),
                "messages[0].content[0]",
            ),
            (
                json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{nope"}}]}]}),
                "messages[0].tool_calls[0].function.arguments",
            ),
        ] {
            let e = convert(base(extra.clone())).unwrap_err();
            assert_eq!(param_of(e), param, "{extra}");
        }
        // Sampling knobs are accepted and reported, not refused.
        let req = parse(base(json!({"top_p": 0.9, "stop": ["x"], "user": "u", "seed": null})));
        assert_eq!(req.ignored(), ["top_p", "stop"]);
        // An unknown parameter is a typo until proven otherwise.
        let e = serde_json::from_value::<ChatCompletionRequest>(base(json!({"temprature": 1})))
            .unwrap_err();
        assert!(e.to_string().contains("temprature"), "{e}");
    }

    #[test]
    fn image_url_parts_of_user_messages_become_images_before_the_text() {
        let png = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
        );
        let req = convert(json!({"model": "x", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "build "},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}"), "detail": "high"}},
            {"type": "text", "text": "me this"},
            {"type": "image_url", "image_url": "https://a.example/chart.jpg"},
        ]}]}))
        .unwrap();
        assert_eq!(
            req.messages,
            [Message::User {
                content: vec![
                    ContentBlock::Image {
                        media_type: "image/png".into(),
                        source: ImageSource::Base64 { data: png },
                    },
                    ContentBlock::Image {
                        media_type: String::new(),
                        source: ImageSource::Url { url: "https://a.example/chart.jpg".into() },
                    },
                    ContentBlock::text("build me this"),
                ]
            }]
        );
    }
}
