//! Unit tests of the Anthropic provider: request bodies and stream parsing.

use super::*;
use crate::event::MessageBuilder;
use crate::types::{AssistantMessage, Effort, Thinking, ToolDefinition};

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest { model: "claude-test".into(), messages, ..ChatRequest::default() }
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: format!("{name} does things"),
        input_schema: json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
    }
}

fn assistant(provider: &str, content: Vec<ContentBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        model: "m".into(),
        provider: provider.into(),
        ..AssistantMessage::default()
    })
}

fn reasoning(text: &str, signature: Option<&str>, redacted: Option<&str>) -> ContentBlock {
    ContentBlock::Reasoning {
        text: text.into(),
        signature: signature.map(Into::into),
        redacted: redacted.map(Into::into),
    }
}

fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse { id: id.into(), name: name.into(), input, input_error: None }
}

fn enabled(effort: Effort, budget_tokens: Option<u32>) -> Option<Thinking> {
    Some(Thinking::Enabled { effort, budget_tokens })
}

#[test]
fn a_plain_request_has_model_max_tokens_system_messages_and_stream() {
    let mut r = request(vec![
        Message::system("You build dashboards."),
        Message::user("Gold price?"),
        Message::system("Answer briefly."),
    ]);
    r.temperature = Some(0.7);
    assert_eq!(
        request_body(&r),
        json!({
            "model": "claude-test",
            "max_tokens": 8192,
            "system": "You build dashboards.\n\nAnswer briefly.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Gold price?"}]}],
            "temperature": 0.7,
            "stream": true,
        })
    );
}

#[test]
fn max_tokens_and_temperature_are_kept_in_range() {
    let mut r = request(vec![Message::user("hi")]);
    r.max_tokens = Some(512);
    r.temperature = Some(1.6);
    let body = request_body(&r);
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["temperature"], 1.0);
    assert!(body.get("system").is_none());
    assert!(body.get("thinking").is_none());
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

#[test]
fn thinking_maps_to_a_budget_without_temperature_and_raises_max_tokens() {
    let mut r = request(vec![Message::user("hi")]);
    r.temperature = Some(0.2);
    // (thinking, max_tokens asked) -> (budget sent, max_tokens sent)
    let cases = [
        (enabled(Effort::Low, None), None, 2_048, 8_192),
        (enabled(Effort::Medium, None), None, 8_192, 16_384),
        (enabled(Effort::High, None), None, 24_576, 32_768),
        (enabled(Effort::High, Some(4_000)), Some(4_001), 4_000, 4_001),
        (enabled(Effort::Low, Some(4_000)), Some(1_000), 4_000, 5_000),
        (enabled(Effort::Low, Some(100)), Some(900), 1_024, 1_924),
    ];
    for (thinking, max_tokens, budget, sent_max) in cases {
        r.thinking = thinking;
        r.max_tokens = max_tokens;
        let body = request_body(&r);
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": budget}));
        assert_eq!(body["max_tokens"], sent_max, "{thinking:?} {max_tokens:?}");
        assert!(body.get("temperature").is_none(), "{body}");
    }
    r.thinking = Some(Thinking::Disabled);
    r.max_tokens = None;
    let body = request_body(&r);
    assert!(body.get("thinking").is_none());
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["temperature"], 0.2);
}

#[test]
fn tools_and_every_tool_choice() {
    let mut r = request(vec![Message::user("price of gold")]);
    r.tools = vec![tool("get_price")];
    let cases = [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::Required, json!({"type": "any"})),
        (ToolChoice::None, json!({"type": "none"})),
        (ToolChoice::Tool("get_price".into()), json!({"type": "tool", "name": "get_price"})),
    ];
    for (choice, wire) in cases {
        r.tool_choice = choice;
        let body = request_body(&r);
        assert_eq!(
            body["tools"],
            json!([{
                "name": "get_price",
                "description": "get_price does things",
                "input_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}},
            }])
        );
        assert_eq!(body["tool_choice"], wire);
    }
}

#[test]
fn a_forced_tool_choice_leaves_thinking_out() {
    let mut r = request(vec![Message::user("price of gold")]);
    r.tools = vec![tool("get_price")];
    r.thinking = enabled(Effort::Medium, None);
    r.tool_choice = ToolChoice::Auto;
    assert!(request_body(&r).get("thinking").is_some());
    for choice in [ToolChoice::Required, ToolChoice::Tool("get_price".into())] {
        r.tool_choice = choice;
        let body = request_body(&r);
        assert!(body.get("thinking").is_none(), "{body}");
        assert_eq!(body["max_tokens"], 8192);
    }
}

#[test]
fn anthropic_thinking_replays_unmodified_and_tool_results_become_a_user_message() {
    let mut r = request(vec![
        Message::user("gold and silver?"),
        assistant(
            "anthropic",
            vec![
                reasoning("I need both prices.", Some("sig-abc=="), None),
                reasoning("", None, Some("EncRyPtEd")),
                ContentBlock::text("Fetching."),
                tool_use("toolu_01", "get_price", json!({"symbol": "XAU"})),
                tool_use("toolu_02", "get_price", json!({"symbol": "XAG"})),
            ],
        ),
        Message::tool_result("toolu_01", "2400", false),
        Message::tool_result("toolu_02", "unknown symbol", true),
    ]);
    r.thinking = enabled(Effort::Low, None);
    let body = request_body(&r);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "gold and silver?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I need both prices.", "signature": "sig-abc=="},
                {"type": "redacted_thinking", "data": "EncRyPtEd"},
                {"type": "text", "text": "Fetching."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_price", "input": {"symbol": "XAU"}},
                {"type": "tool_use", "id": "toolu_02", "name": "get_price", "input": {"symbol": "XAG"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "2400", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": "unknown symbol", "is_error": true},
            ]},
        ])
    );
    // The tool turn starts with signed thinking: thinking stays on.
    assert_eq!(body["thinking"]["budget_tokens"], 2048);
}

#[test]
fn another_providers_history_replays_validly() {
    let mut r = request(vec![
        Message::system("sys"),
        Message::user("gold?"),
        assistant(
            "deepseek",
            vec![
                reasoning("unsigned chain of thought", None, None),
                ContentBlock::text(""),
                tool_use("functions.get_price:0", "get_price", json!({"symbol": "XAU"})),
                ContentBlock::ToolUse {
                    id: "call 2".into(),
                    name: "get_price".into(),
                    input: json!("{\"symbol\": XAG"),
                    input_error: Some("not valid JSON".into()),
                },
            ],
        ),
        Message::tool_result("functions.get_price:0", "2400", false),
        Message::tool_result("call 2", "the arguments are not valid JSON", true),
        Message::user("and in euros?"),
        // Only unsigned reasoning: nothing to send, the message is dropped and the users merge.
        assistant("openai", vec![reasoning("hmm", None, None)]),
        Message::user("please"),
    ]);
    r.thinking = enabled(Effort::Medium, None);
    let body = request_body(&r);
    assert_eq!(body["system"], "sys");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "gold?"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "functions_get_price_0", "name": "get_price", "input": {"symbol": "XAU"}},
                {"type": "tool_use", "id": "call_2", "name": "get_price", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "functions_get_price_0", "content": "2400", "is_error": false},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "the arguments are not valid JSON", "is_error": true},
                {"type": "text", "text": "and in euros?"},
                {"type": "text", "text": "please"},
            ]},
        ])
    );
    // The last assistant turn used tools without a thinking block: Anthropic would reject
    // thinking, so it is left out.
    assert!(body.get("thinking").is_none(), "{body}");
    assert_eq!(body["max_tokens"], 8192);
}

#[test]
fn thinking_stays_on_when_the_last_assistant_turn_used_no_tools() {
    let mut r = request(vec![
        Message::user("hi"),
        assistant("openai", vec![reasoning("x", None, None), ContentBlock::text("Hello")]),
        Message::user("gold?"),
    ]);
    r.thinking = enabled(Effort::Low, None);
    let body = request_body(&r);
    assert_eq!(body["thinking"]["budget_tokens"], 2048);
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Hello"}]})
    );
}

#[test]
fn results_go_before_text_in_a_merged_user_message_and_empty_content_is_omitted() {
    let r = request(vec![
        Message::user("q"),
        assistant("anthropic", vec![tool_use("t1", "noop", json!({}))]),
        Message::User {
            content: vec![
                ContentBlock::text("also this"),
                ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: String::new(),
                    is_error: false,
                },
            ],
        },
    ]);
    assert_eq!(
        request_body(&r)["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": false},
            {"type": "text", "text": "also this"},
        ]})
    );
}

// --- decoding -------------------------------------------------------------------------

fn sse(data: Value) -> SseEvent {
    SseEvent {
        event: data["type"].as_str().unwrap_or("message").to_owned(),
        data: data.to_string(),
    }
}

fn decode(events: &[Value]) -> Vec<StreamEvent> {
    let mut d = Decoder::new("anthropic");
    let mut out = Vec::new();
    for e in events {
        out.extend(d.feed(&sse(e.clone())));
    }
    out.extend(d.finish());
    out
}

fn start(input: u64, cache_read: u64, cache_write: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "model": "claude-test", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1,
                      "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write}}})
}

fn block_start(index: u64, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn delta(index: u64, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn block_stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_delta(stop: &str, output: u64) -> Value {
    json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": output}})
}

fn stop() -> Value {
    json!({"type": "message_stop"})
}

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage { input_tokens: input, output_tokens: output, ..Usage::default() })
}

fn protocol(message: &str) -> StreamEvent {
    StreamEvent::Error(LlmError::Protocol { provider: "anthropic".into(), message: message.into() })
}

#[test]
fn reasoning_text_and_tool_calls_decode_in_order() {
    let events = decode(&[
        start(10, 0, 0),
        json!({"type": "ping"}),
        block_start(0, json!({"type": "thinking", "thinking": "", "signature": ""})),
        delta(0, json!({"type": "thinking_delta", "thinking": "Need "})),
        delta(0, json!({"type": "thinking_delta", "thinking": "prices."})),
        delta(0, json!({"type": "signature_delta", "signature": "sig=="})),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "text_delta", "text": "Checking."})),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_a", "name": "get_price", "input": {}}),
        ),
        delta(2, json!({"type": "input_json_delta", "partial_json": ""})),
        delta(2, json!({"type": "input_json_delta", "partial_json": "{\"symbol\":"})),
        delta(2, json!({"type": "input_json_delta", "partial_json": "\"XAU\"}"})),
        block_stop(2),
        block_start(3, json!({"type": "tool_use", "id": "toolu_b", "name": "list", "input": {}})),
        block_stop(3),
        message_delta("tool_use", 57),
        stop(),
    ]);
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningStart,
            StreamEvent::ReasoningDelta { text: "Need ".into() },
            StreamEvent::ReasoningDelta { text: "prices.".into() },
            StreamEvent::ReasoningEnd { signature: Some("sig==".into()), redacted: None },
            StreamEvent::TextStart,
            StreamEvent::TextDelta { text: "Checking.".into() },
            StreamEvent::TextEnd,
            StreamEvent::ToolCallStart { index: 0, id: "toolu_a".into(), name: "get_price".into() },
            StreamEvent::ToolCallDelta { index: 0, args_delta: "{\"symbol\":".into() },
            StreamEvent::ToolCallDelta { index: 0, args_delta: "\"XAU\"}".into() },
            StreamEvent::ToolCallEnd {
                index: 0,
                id: "toolu_a".into(),
                name: "get_price".into(),
                input: json!({"symbol": "XAU"}),
                input_error: None,
            },
            StreamEvent::ToolCallStart { index: 1, id: "toolu_b".into(), name: "list".into() },
            StreamEvent::ToolCallEnd {
                index: 1,
                id: "toolu_b".into(),
                name: "list".into(),
                input: json!({}),
                input_error: None,
            },
            usage(10, 57),
            StreamEvent::Done { stop_reason: StopReason::ToolUse },
        ]
    );
    let mut builder = MessageBuilder::new("claude-test", "anthropic");
    for e in &events {
        builder.push(e);
    }
    assert_eq!(
        builder.finish().unwrap(),
        AssistantMessage {
            content: vec![
                reasoning("Need prices.", Some("sig=="), None),
                ContentBlock::text("Checking."),
                tool_use("toolu_a", "get_price", json!({"symbol": "XAU"})),
                tool_use("toolu_b", "list", json!({})),
            ],
            model: "claude-test".into(),
            provider: "anthropic".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage { input_tokens: 10, output_tokens: 57, ..Usage::default() },
        }
    );
}

#[test]
fn redacted_thinking_keeps_its_data() {
    let events = decode(&[
        start(5, 0, 0),
        block_start(0, json!({"type": "redacted_thinking", "data": "opaque=="})),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        block_stop(1),
        message_delta("end_turn", 3),
        stop(),
    ]);
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningStart,
            StreamEvent::ReasoningEnd { signature: None, redacted: Some("opaque==".into()) },
            StreamEvent::TextStart,
            StreamEvent::TextEnd,
            usage(5, 3),
            StreamEvent::Done { stop_reason: StopReason::EndTurn },
        ]
    );
}

#[test]
fn usage_is_cumulative_and_counts_cached_input() {
    let events = decode(&[
        start(100, 2000, 300),
        message_delta("end_turn", 40),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 42, "input_tokens": 101, "cache_read_input_tokens": null}}),
        stop(),
    ]);
    assert_eq!(
        events,
        vec![
            StreamEvent::Usage(Usage {
                input_tokens: 101 + 2000 + 300,
                output_tokens: 42,
                reasoning_tokens: 0,
                cache_read_tokens: 2000,
                cache_write_tokens: 300,
            }),
            StreamEvent::Done { stop_reason: StopReason::EndTurn },
        ]
    );
}

#[test]
fn stop_reasons_map() {
    for (wire, ours) in [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("tool_use", StopReason::ToolUse),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Refusal),
        ("pause_turn", StopReason::EndTurn),
        ("model_context_window_exceeded", StopReason::MaxTokens),
        ("something_new", StopReason::EndTurn),
    ] {
        let events = decode(&[start(1, 0, 0), message_delta(wire, 1), stop()]);
        assert_eq!(events.last(), Some(&StreamEvent::Done { stop_reason: ours }), "{wire}");
    }
}

#[test]
fn unknown_events_blocks_and_deltas_are_ignored() {
    let events = decode(&[
        start(1, 0, 0),
        json!({"type": "brand_new_event", "payload": [1, 2]}),
        block_start(
            0,
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        ),
        delta(0, json!({"type": "input_json_delta", "partial_json": "{\"query\":\"gold\"}"})),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": "", "citations": null})),
        delta(1, json!({"type": "citations_delta", "citation": {"type": "char_location"}})),
        json!({"type": "ping"}),
        delta(1, json!({"type": "text_delta", "text": "ok"})),
        block_stop(1),
        message_delta("end_turn", 2),
        stop(),
    ]);
    assert_eq!(
        events,
        vec![
            StreamEvent::TextStart,
            StreamEvent::TextDelta { text: "ok".into() },
            StreamEvent::TextEnd,
            usage(1, 2),
            StreamEvent::Done { stop_reason: StopReason::EndTurn },
        ]
    );
}

#[test]
fn unusable_arguments_keep_the_call_with_an_error() {
    let events = decode(&[
        start(1, 0, 0),
        block_start(0, json!({"type": "tool_use", "id": "t", "name": "f", "input": {}})),
        delta(0, json!({"type": "input_json_delta", "partial_json": "{\"a\":1}{\"b\":2}"})),
        block_stop(0),
        message_delta("tool_use", 2),
        stop(),
    ]);
    let StreamEvent::ToolCallEnd { input, input_error: Some(error), .. } = &events[2] else {
        panic!("{events:?}");
    };
    assert_eq!(input, &json!("{\"a\":1}{\"b\":2}"));
    assert!(error.contains("2 JSON values"), "{error}");
}

#[test]
fn an_error_event_ends_the_stream() {
    let mut d = Decoder::new("anthropic");
    let mut out = d.feed(&sse(start(1, 0, 0)));
    out.extend(d.feed(&sse(block_start(0, json!({"type": "text", "text": ""})))));
    out.extend(d.feed(&sse(json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}}))));
    assert!(d.is_finished());
    out.extend(d.feed(&sse(stop())));
    out.extend(d.finish());
    assert_eq!(
        out,
        vec![
            StreamEvent::TextStart,
            StreamEvent::Error(LlmError::Api {
                provider: "anthropic".into(),
                error_type: "overloaded_error".into(),
                message: "Overloaded".into(),
            }),
        ]
    );
}

#[test]
fn malformed_events_are_protocol_errors_naming_what_was_wrong() {
    let mut d = Decoder::new("anthropic");
    let bad = SseEvent {
        event: "content_block_delta".into(),
        data: "{\"type\": \"content_block_delta\", \"index\": ".into(),
    };
    let out = d.feed(&bad);
    let [StreamEvent::Error(LlmError::Protocol { message, .. })] = out.as_slice() else {
        panic!("{out:?}");
    };
    assert!(message.starts_with("malformed content_block_delta event ("), "{message}");
    assert!(message.contains("\"index\": "), "{message}");
    assert!(d.finish().is_empty());

    let missing = decode(&[
        start(1, 0, 0),
        json!({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}),
    ]);
    let [StreamEvent::Error(LlmError::Protocol { message, .. })] = missing.as_slice() else {
        panic!("{missing:?}");
    };
    assert!(message.contains("missing field `index`"), "{message}");

    let no_data = decode(&[start(1, 0, 0)]);
    assert_eq!(no_data, vec![protocol("truncated stream: it ended before message_stop")]);
    let mut d = Decoder::new("anthropic");
    assert_eq!(
        d.feed(&SseEvent { event: "message_delta".into(), data: String::new() }),
        vec![protocol("malformed message_delta event: it has no data")]
    );
    let mut d = Decoder::new("anthropic");
    assert!(d.feed(&SseEvent { event: "ping".into(), data: String::new() }).is_empty());
}

#[test]
fn blocks_out_of_order_are_protocol_errors() {
    let text = json!({"type": "text", "text": ""});
    assert_eq!(
        decode(&[start(1, 0, 0), delta(0, json!({"type": "text_delta", "text": "x"}))]),
        vec![protocol("content_block_delta for block 0, which is not open")]
    );
    assert_eq!(
        decode(&[start(1, 0, 0), block_start(0, text.clone()), block_start(1, text.clone())]),
        vec![
            StreamEvent::TextStart,
            protocol("content block 1 started while text block 0 was open")
        ]
    );
    assert_eq!(
        decode(&[
            start(1, 0, 0),
            block_start(0, text.clone()),
            delta(0, json!({"type": "input_json_delta", "partial_json": "{"}))
        ]),
        vec![StreamEvent::TextStart, protocol("unexpected input_json_delta in text block 0")]
    );
    assert_eq!(
        decode(&[start(1, 0, 0), block_start(0, text.clone()), stop()]),
        vec![StreamEvent::TextStart, protocol("message_stop arrived while text block 0 was open")]
    );
    assert_eq!(
        decode(&[start(1, 0, 0), block_stop(0)]),
        vec![protocol("content_block_stop for block 0, which is not open")]
    );
}

#[test]
fn a_stream_cut_inside_a_block_is_truncated() {
    assert_eq!(
        decode(&[
            start(1, 0, 0),
            block_start(0, json!({"type": "tool_use", "id": "t", "name": "f", "input": {}})),
            delta(0, json!({"type": "input_json_delta", "partial_json": "{\"a\""})),
        ]),
        vec![
            StreamEvent::ToolCallStart { index: 0, id: "t".into(), name: "f".into() },
            StreamEvent::ToolCallDelta { index: 0, args_delta: "{\"a\"".into() },
            protocol("truncated stream: it ended inside tool_use block 0, before message_stop"),
        ]
    );
}

#[test]
fn a_tool_input_given_whole_at_block_start_is_used() {
    let events = decode(&[
        start(1, 0, 0),
        block_start(0, json!({"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}})),
        block_stop(0),
        stop(),
    ]);
    assert_eq!(
        events[1],
        StreamEvent::ToolCallEnd {
            index: 0,
            id: "t".into(),
            name: "f".into(),
            input: json!({"a": 1}),
            input_error: None
        }
    );
    // No message_delta: the stop reason follows from the calls.
    assert_eq!(events[3], StreamEvent::Done { stop_reason: StopReason::ToolUse });
}

#[test]
fn urls_and_headers() {
    let settings = |base: &str, key: Option<&str>| ProviderSettings {
        key: "claude".into(),
        kind: ProviderKind::Anthropic,
        base_url: base.into(),
        api_key: key.map(crate::ApiKey::new),
        family: crate::Family::Generic,
        transport: crate::http::Transport::default(),
    };
    for base in
        ["https://api.anthropic.com", "https://api.anthropic.com/", "https://api.anthropic.com/v1/"]
    {
        let p = AnthropicProvider::new(settings(base, None));
        assert_eq!(p.url("/v1/messages"), "https://api.anthropic.com/v1/messages");
    }
    let p = AnthropicProvider::new(settings("http://h", Some("sk-ant-1")));
    assert_eq!(
        p.headers(),
        vec![("anthropic-version", "2023-06-01".to_owned()), ("x-api-key", "sk-ant-1".to_owned())]
    );
    assert!(!format!("{p:?}").contains("sk-ant-1"));
    assert_eq!((p.key(), p.kind()), ("claude", ProviderKind::Anthropic));
}

#[test]
fn images_become_base64_or_url_image_blocks() {
    let body = request_body(&request(crate::types::image_conversation()));
    insta::assert_snapshot!(serde_json::to_string_pretty(&body["messages"]).unwrap());
}
