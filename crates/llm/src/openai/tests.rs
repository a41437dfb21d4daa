//! Unit tests of the OpenAI-compatible provider: request bodies and stream parsing.

use super::*;
use crate::event::MessageBuilder;
use crate::types::ToolDefinition;
use StreamEvent as E;

// -- request --------------------------------------------------------------------------

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest { model: "m".into(), messages, ..ChatRequest::default() }
}

fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse { id: id.into(), name: name.into(), input, input_error: None }
}

fn reasoning(text: &str) -> ContentBlock {
    ContentBlock::Reasoning { text: text.into(), signature: None, redacted: None }
}

fn assistant_msg(provider: &str, content: Vec<ContentBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        model: "x".into(),
        provider: provider.into(),
        ..AssistantMessage::default()
    })
}

#[test]
fn a_plain_request_streams_with_usage_and_one_system_message() {
    let mut r = request(vec![
        Message::system("You build dashboards."),
        Message::user("gold price"),
        Message::system("Be brief."),
    ]);
    r.max_tokens = Some(512);
    r.temperature = Some(0.7);
    assert_eq!(
        request_body(&r, Family::Generic),
        json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "You build dashboards.\n\nBe brief."},
                {"role": "user", "content": "gold price"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 512,
            "temperature": 0.7,
        })
    );
    let openai = request_body(&r, Family::Openai);
    assert_eq!(openai["max_completion_tokens"], 512);
    assert!(openai.get("max_tokens").is_none());
    let bare = request_body(&request(vec![Message::user("hi")]), Family::Openai);
    for absent in ["tools", "tool_choice", "max_tokens", "temperature", "reasoning_effort"] {
        assert!(bare.get(absent).is_none(), "{absent}: {bare}");
    }
}

#[test]
fn tools_and_every_tool_choice() {
    let mut r = request(vec![Message::user("hi")]);
    r.tools = vec![
        ToolDefinition {
            name: "execute".into(),
            description: "Runs code".into(),
            input_schema: json!({"type": "object", "properties": {"code": {"type": "string"}}}),
        },
        ToolDefinition {
            name: "ping".into(),
            description: "No arguments".into(),
            input_schema: Value::Null,
        },
    ];
    let body = request_body(&r, Family::Openai);
    assert_eq!(
        body["tools"],
        json!([
            {"type": "function", "function": {"name": "execute", "description": "Runs code",
             "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "ping", "description": "No arguments",
             "parameters": {"type": "object", "properties": {}}}},
        ])
    );
    let cases = [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
        (
            ToolChoice::Tool("execute".into()),
            json!({"type": "function", "function": {"name": "execute"}}),
        ),
    ];
    for (choice, wire) in cases {
        r.tool_choice = choice;
        assert_eq!(request_body(&r, Family::Openai)["tool_choice"], wire);
    }
}

#[test]
fn thinking_maps_per_family() {
    let enabled = |effort, budget_tokens| Some(Thinking::Enabled { effort, budget_tokens });
    let fields = ["reasoning_effort", "thinking", "enable_thinking", "thinking_budget"];
    let cases = [
        (Family::Openai, enabled(Effort::High, None), json!({"reasoning_effort": "high"})),
        (Family::Openai, Some(Thinking::Disabled), json!({})),
        (Family::Openai, None, json!({})),
        (
            Family::Deepseek,
            enabled(Effort::Low, None),
            json!({"thinking": {"type": "enabled"}, "reasoning_effort": "low"}),
        ),
        (Family::Deepseek, Some(Thinking::Disabled), json!({"thinking": {"type": "disabled"}})),
        (Family::Deepseek, None, json!({})),
        (
            Family::Doubao,
            enabled(Effort::Medium, Some(100)),
            json!({"thinking": {"type": "enabled"}, "reasoning_effort": "medium"}),
        ),
        (Family::Doubao, Some(Thinking::Disabled), json!({"thinking": {"type": "disabled"}})),
        (Family::Qwen, enabled(Effort::High, None), json!({"enable_thinking": true})),
        (
            Family::Qwen,
            enabled(Effort::High, Some(4096)),
            json!({"enable_thinking": true, "thinking_budget": 4096}),
        ),
        (Family::Qwen, Some(Thinking::Disabled), json!({"enable_thinking": false})),
        (Family::Generic, enabled(Effort::Medium, None), json!({"reasoning_effort": "medium"})),
        (Family::Generic, Some(Thinking::Disabled), json!({})),
    ];
    for (family, thinking, expected) in cases {
        let mut r = request(vec![Message::user("hi")]);
        r.thinking = thinking;
        let body = request_body(&r, family);
        let got: Map<String, Value> = fields
            .iter()
            .filter_map(|f| body.get(*f).map(|v| ((*f).to_owned(), v.clone())))
            .collect();
        assert_eq!(Value::Object(got), expected, "{family:?} {thinking:?}");
    }
}

/// A turn with reasoning, text and two calls (one with unparseable arguments), its results
/// as a `tool` message, then an Anthropic-style user message carrying a result and text.
fn tool_history(provider: &str) -> Vec<Message> {
    vec![
        Message::user("chart gold"),
        assistant_msg(
            provider,
            vec![
                ContentBlock::Reasoning {
                    text: "Need the kline.".into(),
                    signature: Some("sig-1".into()),
                    redacted: None,
                },
                ContentBlock::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some("opaque".into()),
                },
                ContentBlock::text("Fetching."),
                tool_use("call_1", "execute", json!({"code": "return 1;"})),
                ContentBlock::ToolUse {
                    id: "call_2".into(),
                    name: "search".into(),
                    input: json!(r#"{"q":?}"#),
                    input_error: Some("not valid JSON".into()),
                },
            ],
        ),
        Message::Tool {
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "{\"ok\":true}".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: "bad arguments".into(),
                    is_error: true,
                },
            ],
        },
        assistant_msg(provider, vec![reasoning("Done thinking."), ContentBlock::text("Here.")]),
        Message::user("and silver"),
        assistant_msg(provider, vec![tool_use("call_3", "ping", json!({}))]),
        Message::User {
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_3".into(),
                    content: "pong".into(),
                    is_error: false,
                },
                ContentBlock::text("thanks"),
            ],
        },
    ]
}

fn expected_history(reasoning_replay: bool) -> Value {
    let mut first = json!({
        "role": "assistant", "content": "Fetching.",
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "execute", "arguments": "{\"code\":\"return 1;\"}"}},
            {"id": "call_2", "type": "function",
             "function": {"name": "search", "arguments": "{\"q\":?}"}},
        ],
    });
    let mut third = json!({
        "role": "assistant", "content": null,
        "tool_calls": [{"id": "call_3", "type": "function",
                        "function": {"name": "ping", "arguments": "{}"}}],
    });
    if reasoning_replay {
        first["reasoning_content"] = json!("Need the kline.");
        third["reasoning_content"] = json!("");
    }
    json!([
        {"role": "user", "content": "chart gold"},
        first,
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"},
        {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"},
        {"role": "assistant", "content": "Here."},
        {"role": "user", "content": "and silver"},
        third,
        {"role": "tool", "tool_call_id": "call_3", "content": "pong"},
        {"role": "user", "content": "thanks"},
    ])
}

#[test]
fn deepseek_gets_reasoning_back_on_tool_call_turns_only() {
    let body = request_body(&request(tool_history("deepseek")), Family::Deepseek);
    assert_eq!(body["messages"], expected_history(true));
}

#[test]
fn other_families_never_get_reasoning_back() {
    for family in [Family::Openai, Family::Qwen, Family::Doubao, Family::Generic] {
        let body = request_body(&request(tool_history("openai")), family);
        assert_eq!(body["messages"], expected_history(false), "{family:?}");
    }
}

#[test]
fn history_from_another_provider_replays_without_its_opaque_data() {
    let body = request_body(&request(tool_history("anthropic")), Family::Deepseek);
    assert_eq!(body["messages"], expected_history(true));
    let text = body.to_string();
    assert!(!text.contains("sig-1") && !text.contains("opaque"), "{text}");
}

// -- stream ---------------------------------------------------------------------------

fn chunk(choices: Value) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": choices})
        .to_string()
}

fn delta(d: Value) -> String {
    chunk(json!([{"index": 0, "delta": d, "finish_reason": null}]))
}

fn finish(reason: &str) -> String {
    chunk(json!([{"index": 0, "delta": {}, "finish_reason": reason}]))
}

fn call(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut c = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        c["id"] = json!(id);
        c["type"] = json!("function");
    }
    if let Some(name) = name {
        c["function"]["name"] = json!(name);
    }
    delta(json!({"tool_calls": [c]}))
}

fn decode(items: &[String]) -> Vec<StreamEvent> {
    let mut d = Decoder::new("p");
    let mut out = Vec::new();
    for item in items {
        out.extend(d.feed(item));
    }
    out.extend(d.finish());
    out
}

fn role() -> String {
    delta(json!({"role": "assistant", "content": ""}))
}

fn done() -> String {
    "[DONE]".to_owned()
}

fn text(t: &str) -> E {
    E::TextDelta { text: t.into() }
}

fn end(index: usize, id: &str, name: &str, input: Value) -> E {
    E::ToolCallEnd { index, id: id.into(), name: name.into(), input, input_error: None }
}

fn start(index: usize, id: &str, name: &str) -> E {
    E::ToolCallStart { index, id: id.into(), name: name.into() }
}

fn args(index: usize, a: &str) -> E {
    E::ToolCallDelta { index, args_delta: a.into() }
}

fn r_end() -> E {
    E::ReasoningEnd { signature: None, redacted: None }
}

fn done_ev(stop_reason: StopReason) -> E {
    E::Done { stop_reason }
}

#[test]
fn reasoning_then_text_is_two_bracketed_blocks() {
    let got = decode(&[
        delta(json!({"reasoning_content": "Hmm"})),
        role(),
        delta(json!({"reasoning_content": ", gold."})),
        delta(json!({"content": "Gold"})),
        delta(json!({"content": " is up."})),
        finish("stop"),
        done(),
    ]);
    assert_eq!(
        got,
        [
            E::ReasoningStart,
            E::ReasoningDelta { text: "Hmm".into() },
            E::ReasoningDelta { text: ", gold.".into() },
            r_end(),
            E::TextStart,
            text("Gold"),
            text(" is up."),
            E::TextEnd,
            done_ev(StopReason::EndTurn),
        ]
    );
}

#[test]
fn the_reasoning_field_is_accepted_and_never_doubled() {
    let got = decode(&[
        delta(json!({"reasoning": "a"})),
        delta(json!({"reasoning": "b", "reasoning_content": "b"})),
        delta(json!({"reasoning": {"summary": "ignored shape"}, "content": "x"})),
        finish("stop"),
        done(),
    ]);
    assert_eq!(
        got,
        [
            E::ReasoningStart,
            E::ReasoningDelta { text: "a".into() },
            E::ReasoningDelta { text: "b".into() },
            r_end(),
            E::TextStart,
            text("x"),
            E::TextEnd,
            done_ev(StopReason::EndTurn),
        ]
    );
}

#[test]
fn parallel_calls_with_ids_on_first_fragments_only() {
    let got = decode(&[
        role(),
        delta(json!({"content": "Let me look."})),
        call(0, Some("call_a"), Some("get_weather"), ""),
        call(0, None, None, "{\"locati"),
        call(0, None, None, "on\":\"Paris\"}"),
        call(1, Some("call_b"), Some("get_time"), ""),
        call(1, None, None, "{\"tz\":\"CET\"}"),
        finish("tool_calls"),
        chunk(json!([])),
        done(),
    ]);
    assert_eq!(
        got,
        [
            E::TextStart,
            text("Let me look."),
            E::TextEnd,
            start(0, "call_a", "get_weather"),
            args(0, "{\"locati"),
            args(0, "on\":\"Paris\"}"),
            start(1, "call_b", "get_time"),
            args(1, "{\"tz\":\"CET\"}"),
            end(0, "call_a", "get_weather", json!({"location": "Paris"})),
            end(1, "call_b", "get_time", json!({"tz": "CET"})),
            done_ev(StopReason::ToolUse),
        ]
    );
}

#[test]
fn odd_ids_resent_numeric_null_and_all_at_index_zero() {
    // The id re-sent on every chunk: one call.
    let got = decode(&[
        call(0, Some("c1"), Some("f"), "{\"a\""),
        call(0, Some("c1"), None, ":1}"),
        call(0, Some("c1"), Some("f"), ""),
        finish("tool_calls"),
        done(),
    ]);
    assert_eq!(
        got,
        [
            start(0, "c1", "f"),
            args(0, "{\"a\""),
            args(0, ":1}"),
            end(0, "c1", "f", json!({"a": 1})),
            done_ev(StopReason::ToolUse)
        ]
    );
    // A numeric id is text.
    let numeric = delta(json!({"tool_calls": [
            {"index": 0, "id": 7, "function": {"name": "f", "arguments": "{}"}}]}));
    let got = decode(&[numeric, finish("tool_calls"), done()]);
    assert_eq!(got[0], start(0, "7", "f"));
    assert_eq!(got[1], args(0, "{}"));
    assert_eq!(got[2], end(0, "7", "f", json!({})));
    // The string "null" is no id: one is made up, and later fragments still join.
    let got = decode(&[
        call(0, Some("null"), Some("f"), "{\"a\":"),
        call(0, Some("null"), None, "2}"),
        finish("tool_calls"),
        done(),
    ]);
    let E::ToolCallStart { id, .. } = &got[0] else { panic!("{got:?}") };
    assert!(id.starts_with("call_") && id != "call_null", "{id}");
    assert_eq!(got[3], end(0, id, "f", json!({"a": 2})));
    assert_eq!(got.len(), 5, "{got:?}");
    // Every call at index 0 with distinct ids: distinct calls.
    let got = decode(&[
        call(0, Some("x1"), Some("f"), "{\"n\":"),
        call(0, None, None, "1}"),
        call(0, Some("x2"), Some("f"), "{\"n\":2}"),
        finish("tool_calls"),
        done(),
    ]);
    assert_eq!(
        got,
        [
            start(0, "x1", "f"),
            args(0, "{\"n\":"),
            args(0, "1}"),
            start(1, "x2", "f"),
            args(1, "{\"n\":2}"),
            end(0, "x1", "f", json!({"n": 1})),
            end(1, "x2", "f", json!({"n": 2})),
            done_ev(StopReason::ToolUse),
        ]
    );
}

#[test]
fn a_missing_index_falls_back_to_the_id() {
    let frag = |id: &str, a: &str| {
        delta(json!({"tool_calls": [{"id": id, "function": {"name": id, "arguments": a}}]}))
    };
    let got = decode(&[
        frag("a", "{\"x\":"),
        frag("b", "{\"y\":"),
        frag("a", "1}"),
        frag("b", "2}"),
        delta(json!({"tool_calls": [{"function": {"arguments": ""}}]})),
        finish("tool_calls"),
        done(),
    ]);
    assert_eq!(
        got,
        [
            start(0, "a", "a"),
            args(0, "{\"x\":"),
            start(1, "b", "b"),
            args(1, "{\"y\":"),
            args(0, "1}"),
            args(1, "2}"),
            end(0, "a", "a", json!({"x": 1})),
            end(1, "b", "b", json!({"y": 2})),
            done_ev(StopReason::ToolUse),
        ]
    );
}

#[test]
fn without_ids_another_name_at_the_same_index_is_another_call() {
    let got = decode(&[
        call(0, None, Some("f"), "{}"),
        call(0, None, Some("g"), "{\"b\":1}"),
        finish("tool_calls"),
        done(),
    ]);
    let names: Vec<&str> = got
        .iter()
        .filter_map(|e| match e {
            E::ToolCallEnd { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["f", "g"]);
}

#[test]
fn a_whole_call_with_finish_reason_in_one_chunk() {
    let whole = chunk(json!([{"index": 0, "finish_reason": "tool_calls", "delta": {
            "content": "On it.",
            "tool_calls": [{"index": 0, "id": "c", "type": "function",
                            "function": {"name": "f", "arguments": "{\"a\":1}"}}]}}]));
    let got = decode(&[whole, done()]);
    assert_eq!(
        got,
        [
            E::TextStart,
            text("On it."),
            E::TextEnd,
            start(0, "c", "f"),
            args(0, "{\"a\":1}"),
            end(0, "c", "f", json!({"a": 1})),
            done_ev(StopReason::ToolUse),
        ]
    );
    // Arguments sent as an object by some servers.
    let object = delta(json!({"tool_calls": [{"index": 0, "id": "c",
            "function": {"name": "f", "arguments": {"a": 1}}}]}));
    let got = decode(&[object, finish("tool_calls"), done()]);
    assert_eq!(got[2], end(0, "c", "f", json!({"a": 1})));
}

#[test]
fn finish_reason_in_the_content_chunk_and_missing_finish_reason() {
    let last = chunk(json!([{"index": 0, "delta": {"content": "Bye."}, "finish_reason": "stop"}]));
    let got = decode(&[role(), last, done()]);
    assert_eq!(got, [E::TextStart, text("Bye."), E::TextEnd, done_ev(StopReason::EndTurn)]);
    // xAI: no finish_reason at all; [DONE] ends everything.
    let got =
        decode(&[delta(json!({"content": "x"})), call(0, Some("c"), Some("f"), "{}"), done()]);
    assert_eq!(
        got,
        [
            E::TextStart,
            text("x"),
            E::TextEnd,
            start(0, "c", "f"),
            args(0, "{}"),
            end(0, "c", "f", json!({})),
            done_ev(StopReason::ToolUse),
        ]
    );
    let got = decode(&[delta(json!({"content": "x"})), done()]);
    assert_eq!(got.last(), Some(&done_ev(StopReason::EndTurn)));
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    let cases = [
        ("stop", StopReason::EndTurn),
        ("length", StopReason::MaxTokens),
        ("tool_calls", StopReason::ToolUse),
        ("content_filter", StopReason::ContentFilter),
        ("eos", StopReason::EndTurn),
    ];
    for (reason, stop) in cases {
        let got = decode(&[delta(json!({"content": "x"})), finish(reason), done()]);
        assert_eq!(got.last(), Some(&done_ev(stop)), "{reason}");
    }
    // `stop` after tool calls (some servers) is still a tool-use turn.
    let got = decode(&[call(0, Some("c"), Some("f"), "{}"), finish("stop"), done()]);
    assert_eq!(got.last(), Some(&done_ev(StopReason::ToolUse)));
    // A refusal is text, and the turn a refusal.
    let got = decode(&[delta(json!({"refusal": "I can't."})), finish("stop"), done()]);
    assert_eq!(got[1], text("I can't."));
    assert_eq!(got.last(), Some(&done_ev(StopReason::Refusal)));
}

#[test]
fn usage_comes_from_the_last_chunk_before_done() {
    let usage = json!({"id": "c", "choices": [], "usage": {
            "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
            "completion_tokens_details": {"reasoning_tokens": 12}}})
    .to_string();
    let got = decode(&[delta(json!({"content": "x"})), finish("stop"), usage, done()]);
    let expected = Usage {
        input_tokens: 120,
        output_tokens: 30,
        reasoning_tokens: 12,
        cache_read_tokens: 100,
        cache_write_tokens: 0,
    };
    assert_eq!(got[got.len() - 2..], [E::Usage(expected), done_ev(StopReason::EndTurn)]);
    // DeepSeek names cached tokens differently.
    let deepseek = json!({"choices": [], "usage": {"prompt_tokens": 50,
            "completion_tokens": 5, "prompt_cache_hit_tokens": 40, "prompt_cache_miss_tokens": 10,
            "completion_tokens_details": null}})
    .to_string();
    let got = decode(&[finish("stop"), deepseek, done()]);
    assert_eq!(
        got[0],
        E::Usage(Usage {
            input_tokens: 50,
            output_tokens: 5,
            cache_read_tokens: 40,
            ..Usage::default()
        })
    );
}

#[test]
fn unknown_fields_and_obfuscation_are_ignored() {
    let odd = json!({"id": "c", "obfuscation": "x7Qz", "system_fingerprint": "fp",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": null,
                         "delta": {"content": "hi", "obfuscation": "ab", "annotations": []}}],
            "usage": null, "x_new": {"nested": [1]}})
    .to_string();
    let got = decode(&[odd, finish("stop"), done()]);
    assert_eq!(got, [E::TextStart, text("hi"), E::TextEnd, done_ev(StopReason::EndTurn)]);
}

#[test]
fn the_repair_policy_never_drops_a_call() {
    let run = |raw: &str| -> (Value, Option<String>) {
        let got = decode(&[call(0, Some("c"), Some("f"), raw), finish("tool_calls"), done()]);
        match got.iter().find(|e| matches!(e, E::ToolCallEnd { .. })) {
            Some(E::ToolCallEnd { input, input_error, .. }) => (input.clone(), input_error.clone()),
            _ => panic!("no call end: {got:?}"),
        }
    };
    assert_eq!(run(""), (json!({}), None));
    assert_eq!(run("{}{\"stock\":\"MSFT\"}"), (json!({"stock": "MSFT"}), None));
    assert_eq!(run("{\"a\":1}<|call|>"), (json!({"a": 1}), None));
    let (input, error) = run("{\"a\":1}{\"b\":2}");
    assert_eq!(input, json!("{\"a\":1}{\"b\":2}"));
    assert!(error.is_some_and(|e| e.contains("2 JSON values")));
    let (input, error) = run("{\"x\":?}");
    assert_eq!(input, json!("{\"x\":?}"));
    assert!(error.is_some());
}

#[test]
fn malformed_chunks_truncation_and_provider_errors_end_the_stream() {
    let got = decode(&[delta(json!({"content": "x"})), "{\"choices\": [".into(), done()]);
    let E::Error(LlmError::Protocol { message, .. }) = &got[2] else { panic!("{got:?}") };
    assert!(message.contains("malformed chunk") && message.contains("{\"choices\": ["));
    assert_eq!(got.len(), 3, "nothing after the error: {got:?}");

    let wrong_type = delta(json!({"content": 5}));
    let got = decode(&[wrong_type]);
    let [E::Error(LlmError::Protocol { message, .. })] = got.as_slice() else { panic!("{got:?}") };
    assert!(message.contains("invalid type"), "{message}");

    let got = decode(&[role(), delta(json!({"content": "x"}))]);
    let E::Error(LlmError::Protocol { message, .. }) = &got[2] else { panic!("{got:?}") };
    assert!(message.contains("truncated"), "{message}");

    let error = json!({"error": {"message": "overloaded, retry later", "type": "server_error",
            "code": 503}})
    .to_string();
    let got = decode(&[delta(json!({"content": "x"})), error, done()]);
    assert_eq!(
        got[2..],
        [E::Error(LlmError::Api {
            provider: "p".into(),
            error_type: "server_error".into(),
            message: "overloaded, retry later".into(),
        })]
    );

    let mut d = Decoder::new("p");
    let sse = SseEvent { event: "error".into(), data: "{\"message\":\"boom\"}".into() };
    assert_eq!(
        d.feed_sse(&sse),
        [E::Error(LlmError::Api {
            provider: "p".into(),
            error_type: "error".into(),
            message: "boom".into()
        })]
    );
    assert!(d.is_over());
    assert!(d.feed(&done()).is_empty());
}

#[test]
fn a_finish_reason_without_done_completes_and_done_ends_decoding() {
    let got = decode(&[delta(json!({"content": "x"})), finish("stop")]);
    assert_eq!(got.last(), Some(&done_ev(StopReason::EndTurn)));
    let mut d = Decoder::new("p");
    assert_eq!(d.feed(&done()), [done_ev(StopReason::EndTurn)]);
    assert!(d.is_over());
    assert!(d.feed(&delta(json!({"content": "late"}))).is_empty());
    assert!(d.finish().is_empty());
}

#[test]
fn the_message_builder_rebuilds_the_message() {
    let events = decode(&[
        delta(json!({"reasoning_content": "think"})),
        role(),
        delta(json!({"content": "Hi"})),
        call(0, Some("c1"), Some("f"), "{\"a\":"),
        call(0, None, None, "1}"),
        call(1, Some("c2"), Some("g"), "{\"b\":1}{\"c\":2}"),
        finish("tool_calls"),
        json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}).to_string(),
        done(),
    ]);
    let mut b = MessageBuilder::new("m", "p");
    for e in &events {
        b.push(e);
    }
    let message = b.finish().unwrap();
    assert_eq!(
        message,
        AssistantMessage {
            content: vec![
                reasoning("think"),
                ContentBlock::text("Hi"),
                tool_use("c1", "f", json!({"a": 1})),
                ContentBlock::ToolUse {
                    id: "c2".into(),
                    name: "g".into(),
                    input: json!("{\"b\":1}{\"c\":2}"),
                    input_error: Some(
                        repair::parse_arguments("{\"b\":1}{\"c\":2}").unwrap_err().to_string()
                    ),
                },
            ],
            model: "m".into(),
            provider: "p".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage { input_tokens: 3, output_tokens: 4, ..Usage::default() },
        }
    );
}

#[test]
fn images_become_image_url_parts_in_order_with_data_urls_for_inline_bytes() {
    let body = request_body(&request(crate::types::image_conversation()), Family::Openai);
    insta::assert_snapshot!(serde_json::to_string_pretty(&body["messages"]).unwrap());
}
