//! Unit tests of the Ollama provider: request bodies and stream parsing.

use super::*;
use crate::event::MessageBuilder;
use crate::types::{AssistantMessage, ToolDefinition};

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest { model: "qwen3:8b".into(), messages, ..ChatRequest::default() }
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
    }
}

fn decode(lines: &[&str]) -> Vec<StreamEvent> {
    let mut d = Decoder::with_id_suffix("ollama", "t");
    let mut out: Vec<StreamEvent> = lines.iter().flat_map(|l| d.feed(l)).collect();
    out.extend(d.finish());
    out
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: t.into() }
}

fn reasoning(t: &str) -> StreamEvent {
    StreamEvent::ReasoningDelta { text: t.into() }
}

fn reasoning_end() -> StreamEvent {
    StreamEvent::ReasoningEnd { signature: None, redacted: None }
}

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage { input_tokens: input, output_tokens: output, ..Usage::default() })
}

fn done(stop_reason: StopReason) -> StreamEvent {
    StreamEvent::Done { stop_reason }
}

fn call(index: usize, id: &str, name: &str, args: &str, input: Value) -> [StreamEvent; 3] {
    [
        StreamEvent::ToolCallStart { index, id: id.into(), name: name.into() },
        StreamEvent::ToolCallDelta { index, args_delta: args.into() },
        StreamEvent::ToolCallEnd {
            index,
            id: id.into(),
            name: name.into(),
            input,
            input_error: None,
        },
    ]
}

const DONE: &str = r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":5,"prompt_eval_count":12,"prompt_eval_duration":1,"eval_count":7,"eval_duration":1}"#;

#[test]
fn request_carries_model_stream_system_prompt_and_user_text() {
    let body = build_request(&request(vec![
        Message::system("Be brief."),
        Message::user("gold?"),
        Message::system("Use tools."),
        Message::User { content: vec![ContentBlock::text("and "), ContentBlock::text("silver?")] },
    ]));
    assert_eq!(
        body,
        json!({
            "model": "qwen3:8b",
            "stream": true,
            "messages": [
                {"role": "system", "content": "Be brief.\n\nUse tools."},
                {"role": "user", "content": "gold?"},
                {"role": "user", "content": "and silver?"},
            ],
        })
    );
}

#[test]
fn tools_follow_the_tool_choice() {
    let mut r = request(vec![Message::user("hi")]);
    r.tools = vec![tool("get_price"), tool("get_news")];
    let body = build_request(&r);
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "function": {
            "name": "get_price",
            "description": "get_price tool",
            "parameters": {"type": "object", "properties": {"symbol": {"type": "string"}}},
        }})
    );
    assert_eq!(body["tools"].as_array().unwrap().len(), 2);
    r.tool_choice = ToolChoice::Required;
    assert_eq!(build_request(&r)["tools"].as_array().unwrap().len(), 2);
    r.tool_choice = ToolChoice::Tool("get_news".into());
    let body = build_request(&r);
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    assert_eq!(body["tools"][0]["function"]["name"], "get_news");
    r.tool_choice = ToolChoice::None;
    assert!(build_request(&r).get("tools").is_none());
}

#[test]
fn options_and_thinking_map_to_ollama_fields() {
    let mut r = request(vec![Message::user("hi")]);
    let body = build_request(&r);
    for absent in ["options", "think", "tools"] {
        assert!(body.get(absent).is_none(), "{absent} in {body}");
    }
    r.temperature = Some(0.2);
    r.max_tokens = Some(512);
    r.thinking = Some(Thinking::Disabled);
    let body = build_request(&r);
    assert_eq!(body["options"], json!({"temperature": 0.2, "num_predict": 512}));
    assert_eq!(body["think"], false);
    r.thinking = Some(Thinking::Enabled { effort: Effort::High, budget_tokens: Some(100) });
    assert_eq!(build_request(&r)["think"], true);
    r.model = "gpt-oss:20b".into();
    assert_eq!(build_request(&r)["think"], "high");
    for (effort, level) in [(Effort::Low, "low"), (Effort::Medium, "medium")] {
        r.thinking = Some(Thinking::Enabled { effort, budget_tokens: None });
        assert_eq!(build_request(&r)["think"], level);
    }
    r.thinking = Some(Thinking::Disabled);
    assert_eq!(build_request(&r)["think"], false);
}

/// An Anthropic turn (signed reasoning, text, two calls, one with unparseable arguments kept
/// as a string) answered Anthropic-style (results in a user message), then an OpenAI turn
/// answered with tool messages.
fn foreign_history() -> Vec<Message> {
    vec![
        Message::system("sys"),
        Message::user("price of gold and silver?"),
        Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Reasoning {
                    text: "need two prices".into(),
                    signature: Some("sig-abc".into()),
                    redacted: None,
                },
                ContentBlock::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some("opaque".into()),
                },
                ContentBlock::text("Checking."),
                ContentBlock::ToolUse {
                    id: "toolu_1".into(),
                    name: "get_price".into(),
                    input: json!({"symbol": "XAUUSD"}),
                    input_error: None,
                },
                ContentBlock::ToolUse {
                    id: "toolu_2".into(),
                    name: "get_price".into(),
                    input: Value::String("{\"symbol\": XAG".into()),
                    input_error: Some("not valid JSON".into()),
                },
            ],
            model: "claude-sonnet-4-5".into(),
            provider: "anthropic".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        }),
        Message::User {
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "{\"price\":2650}".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_2".into(),
                    content: "the arguments are not valid JSON".into(),
                    is_error: true,
                },
            ],
        },
        Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Reasoning {
                    text: "retry silver".into(),
                    signature: None,
                    redacted: None,
                },
                ContentBlock::ToolUse {
                    id: "call_abc".into(),
                    name: "get_news".into(),
                    input: Value::String("{\"q\":\"silver\"}<|call|>".into()),
                    input_error: None,
                },
                ContentBlock::ToolUse {
                    id: "call_def".into(),
                    name: "get_quote".into(),
                    input: Value::Null,
                    input_error: None,
                },
            ],
            model: "deepseek-reasoner".into(),
            provider: "deepseek".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        }),
        Message::tool_result("call_abc", "silver up", false),
        Message::tool_result("call_def", "{}", false),
        Message::tool_result("unknown", "orphan", false),
        Message::user("thanks"),
    ]
}

#[test]
fn history_from_other_providers_replays_without_reasoning() {
    let body = build_request(&request(foreign_history()));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "price of gold and silver?"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"function": {"name": "get_price", "arguments": {"symbol": "XAUUSD"}}},
                {"function": {"name": "get_price", "arguments": {"_invalid_arguments": "{\"symbol\": XAG"}}},
            ]},
            {"role": "tool", "content": "{\"price\":2650}", "tool_name": "get_price"},
            {"role": "tool", "content": "Error: the arguments are not valid JSON", "tool_name": "get_price"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "get_news", "arguments": {"q": "silver"}}},
                {"function": {"name": "get_quote", "arguments": {}}},
            ]},
            {"role": "tool", "content": "silver up", "tool_name": "get_news"},
            {"role": "tool", "content": "{}", "tool_name": "get_quote"},
            {"role": "tool", "content": "orphan"},
            {"role": "user", "content": "thanks"},
        ])
    );
    assert!(!body.to_string().contains("sig-abc"));
    assert!(!body.to_string().contains("need two prices"));
}

#[test]
fn a_reasoning_only_assistant_turn_is_skipped_and_an_empty_user_turn_kept() {
    let body = build_request(&request(vec![
        Message::User { content: vec![] },
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::Reasoning {
                text: "hmm".into(),
                signature: None,
                redacted: None,
            }],
            ..AssistantMessage::default()
        }),
    ]));
    assert_eq!(body["messages"], json!([{"role": "user", "content": ""}]));
}

#[test]
fn text_lines_become_one_bracketed_block_then_usage_and_done() {
    let events = decode(&[
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"Gold "},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"is up."},"done":false}"#,
        DONE,
    ]);
    assert_eq!(
        events,
        [
            StreamEvent::TextStart,
            text("Gold "),
            text("is up."),
            StreamEvent::TextEnd,
            usage(12, 7),
            done(StopReason::EndTurn),
        ]
    );
}

#[test]
fn thinking_then_content_closes_the_reasoning_block_and_back() {
    let events = decode(&[
        r#"{"message":{"role":"assistant","content":"","thinking":"Let me"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"","thinking":" think"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"Answer"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"","thinking":"more"},"done":false}"#,
        r#"{"message":{"role":"assistant","thinking":"a","content":"b"},"done":false}"#,
        DONE,
    ]);
    assert_eq!(
        events,
        [
            StreamEvent::ReasoningStart,
            reasoning("Let me"),
            reasoning(" think"),
            reasoning_end(),
            StreamEvent::TextStart,
            text("Answer"),
            StreamEvent::TextEnd,
            StreamEvent::ReasoningStart,
            reasoning("more"),
            reasoning("a"),
            reasoning_end(),
            StreamEvent::TextStart,
            text("b"),
            StreamEvent::TextEnd,
            usage(12, 7),
            done(StopReason::EndTurn),
        ]
    );
}

#[test]
fn whole_tool_calls_get_synthesized_unique_ids_and_stop_as_tool_use() {
    let events = decode(&[
        r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_price","arguments":{"symbol":"XAUUSD"}}},{"function":{"name":"get_news","arguments":{}}}]},"done":false}"#,
        DONE,
    ]);
    let mut expected = Vec::new();
    expected.extend(call(
        0,
        "call_0_t",
        "get_price",
        r#"{"symbol":"XAUUSD"}"#,
        json!({"symbol": "XAUUSD"}),
    ));
    expected.extend(call(1, "call_1_t", "get_news", "{}", json!({})));
    expected.extend([usage(12, 7), done(StopReason::ToolUse)]);
    assert_eq!(events, expected);
    let a = Decoder::new("o");
    let b = Decoder::new("o");
    assert_ne!(a.id_suffix, b.id_suffix, "ids differ between messages");
}

#[test]
fn given_ids_are_kept_unless_missing_empty_or_repeated() {
    let events = decode(&[
        r#"{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"index":0,"name":"a","arguments":{}}},{"id":"call_x","function":{"index":1,"name":"b","arguments":{}}},{"id":"","function":{"name":"c","arguments":{}}},{"id":7,"function":{"name":"d"}}]},"done":false}"#,
        DONE,
    ]);
    let ids: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStart { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["call_x", "call_1_t", "call_2_t", "7"]);
}

#[test]
fn content_and_tool_calls_share_a_line_or_interleave() {
    let events = decode(&[
        r#"{"message":{"role":"assistant","content":"Checking.","tool_calls":[{"function":{"name":"a","arguments":{"x":1}}}]},"done":false}"#,
        r#"{"message":{"role":"assistant","content":" Then"},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"b","arguments":{"y":2}}}]},"done":false}"#,
        r#"{"message":{"role":"assistant","content":"done."},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4}"#,
    ]);
    let mut expected = vec![StreamEvent::TextStart, text("Checking."), StreamEvent::TextEnd];
    expected.extend(call(0, "call_0_t", "a", r#"{"x":1}"#, json!({"x": 1})));
    expected.extend([StreamEvent::TextStart, text(" Then"), StreamEvent::TextEnd]);
    expected.extend(call(1, "call_1_t", "b", r#"{"y":2}"#, json!({"y": 2})));
    expected.extend([
        StreamEvent::TextStart,
        text("done."),
        StreamEvent::TextEnd,
        usage(3, 4),
        done(StopReason::ToolUse),
    ]);
    assert_eq!(events, expected);
}

#[test]
fn string_arguments_go_through_the_repair_policy() {
    let events = decode(&[
        r#"{"message":{"content":"","tool_calls":[{"function":{"name":"a","arguments":"{\"x\":1}<|call|>"}},{"function":{"name":"b","arguments":"{\"x\":?}"}},{"function":{"name":"c","arguments":[1]}}]},"done":false}"#,
        DONE,
    ]);
    let ends: Vec<(&Value, Option<&String>)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallEnd { input, input_error, .. } => {
                Some((input, input_error.as_ref()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 3, "no call dropped");
    assert_eq!(ends[0], (&json!({"x": 1}), None));
    assert_eq!(ends[1].0, &json!("{\"x\":?}"));
    assert!(ends[1].1.unwrap().contains("not valid JSON"));
    assert_eq!(ends[2].0, &json!("[1]"));
    assert!(ends[2].1.unwrap().contains("an array"));
    assert_eq!(
        events[1],
        StreamEvent::ToolCallDelta { index: 0, args_delta: "{\"x\":1}<|call|>".into() }
    );
}

#[test]
fn done_reasons_map_to_stop_reasons() {
    let length =
        r#"{"message":{"content":"cut"},"done":true,"done_reason":"length","eval_count":9}"#;
    assert_eq!(decode(&[length]).last(), Some(&done(StopReason::MaxTokens)));
    assert_eq!(decode(&[length])[3], usage(0, 9));
    let no_reason = r#"{"done":true}"#;
    assert_eq!(decode(&[no_reason]), [usage(0, 0), done(StopReason::EndTurn)]);
}

#[test]
fn an_error_line_ends_the_stream_with_an_api_error() {
    let events = decode(&[
        r#"{"message":{"content":"Hi"},"done":false}"#,
        r#"{"error":"an error was encountered while running the model: unexpected EOF"}"#,
        DONE,
    ]);
    assert_eq!(
        events,
        [
            StreamEvent::TextStart,
            text("Hi"),
            StreamEvent::Error(LlmError::Api {
                provider: "ollama".into(),
                error_type: "error".into(),
                message: "an error was encountered while running the model: unexpected EOF".into(),
            }),
        ]
    );
}

#[test]
fn malformed_lines_and_truncation_are_protocol_errors() {
    for bad in [r#"{"message": {"content": "#, "[1]", "[]", "null", r#"{"message":{"content":5}}"#]
    {
        let events = decode(&[bad, DONE]);
        assert_eq!(events.len(), 1, "{bad}: {events:?}");
        let StreamEvent::Error(LlmError::Protocol { message, .. }) = &events[0] else {
            panic!("{events:?}")
        };
        assert!(message.starts_with("malformed NDJSON line"), "{message}");
    }
    let events = decode(&[r#"{"message":{"content":"Hi"},"done":false}"#]);
    let Some(StreamEvent::Error(LlmError::Protocol { message, .. })) = events.last() else {
        panic!("{events:?}")
    };
    assert!(message.contains("truncated"), "{message}");
    assert_eq!(events.len(), 3);
}

#[test]
fn lines_after_done_are_ignored() {
    let events = decode(&[DONE, r#"{"message":{"content":"late"},"done":false}"#]);
    assert_eq!(events, [usage(12, 7), done(StopReason::EndTurn)]);
}

#[test]
fn the_message_builder_rebuilds_the_message() {
    let mut b = MessageBuilder::new("qwen3:8b", "ollama");
    for e in decode(&[
        r#"{"message":{"content":"","thinking":"hmm"},"done":false}"#,
        r#"{"message":{"content":"Gold"},"done":false}"#,
        r#"{"message":{"content":"","tool_calls":[{"function":{"name":"get_price","arguments":{"symbol":"XAUUSD"}}}]},"done":false}"#,
        DONE,
    ]) {
        b.push(&e);
    }
    let m = b.finish().unwrap();
    assert_eq!(
        m,
        AssistantMessage {
            content: vec![
                ContentBlock::Reasoning { text: "hmm".into(), signature: None, redacted: None },
                ContentBlock::text("Gold"),
                ContentBlock::ToolUse {
                    id: "call_0_t".into(),
                    name: "get_price".into(),
                    input: json!({"symbol": "XAUUSD"}),
                    input_error: None,
                },
            ],
            model: "qwen3:8b".into(),
            provider: "ollama".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage { input_tokens: 12, output_tokens: 7, ..Usage::default() },
        }
    );
}

#[test]
fn inline_images_go_in_the_message_images_and_others_become_notes() {
    let body = build_request(&request(crate::types::image_conversation()));
    insta::assert_snapshot!(serde_json::to_string_pretty(&body["messages"]).unwrap());
}
