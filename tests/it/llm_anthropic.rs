//! The Anthropic provider over real HTTP against the scripted mock upstream on loopback: golden
//! event sequences, the dialect's wire quirks as exact bytes, faults and retries, true streaming,
//! replay of signed thinking and context handoff from another provider.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boardsmith::llm::anthropic::AnthropicProvider;
use boardsmith::llm::http::Transport;
use boardsmith::llm::mock::{MockLlm, Script};
use boardsmith::llm::{
    ApiKey, AssistantMessage, ChatRequest, ContentBlock, Effort, Family, LlmError, Message,
    Provider, ProviderKind, ProviderSettings, StopReason, StreamEvent, Thinking, TimeoutStage,
    ToolDefinition, Usage,
};
use futures::StreamExt;
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-key";

/// Small timeouts and backoff so fault tests stay fast.
fn transport() -> Transport {
    crate::support::llm_transport(Duration::from_secs(1), Duration::from_millis(300), 2)
}

fn provider(base_url: &str) -> AnthropicProvider {
    AnthropicProvider::new(ProviderSettings {
        key: "anthropic".into(),
        kind: ProviderKind::Anthropic,
        base_url: base_url.into(),
        api_key: Some(ApiKey::new(KEY)),
        family: Family::Generic,
        transport: transport(),
    })
}

/// A mock answering with these turns (script JSON).
async fn mock(turns: Value) -> (MockLlm, AnthropicProvider) {
    let script: Script = serde_json::from_value(json!({ "turns": turns })).unwrap();
    let mock = MockLlm::start(script, 0).await.unwrap();
    let provider = provider(&mock.url());
    (mock, provider)
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        model: "claude-test".into(),
        messages: vec![Message::system("You build dashboards."), Message::user(text)],
        ..ChatRequest::default()
    }
}

async fn events(provider: &AnthropicProvider, request: ChatRequest) -> Vec<StreamEvent> {
    provider.stream(request).collect().await
}

/// One SSE frame as Anthropic sends it: `event:` equal to `data.type`.
fn frame(data: &Value) -> String {
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
}

fn message_start(input: u64, output: u64) -> String {
    frame(&json!({"type": "message_start", "message": {
        "id": "msg_raw", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": output}}}))
}

fn block_start(index: u64, block: Value) -> String {
    frame(&json!({"type": "content_block_start", "index": index, "content_block": block}))
}

fn block_delta(index: u64, delta: Value) -> String {
    frame(&json!({"type": "content_block_delta", "index": index, "delta": delta}))
}

fn block_stop(index: u64) -> String {
    frame(&json!({"type": "content_block_stop", "index": index}))
}

fn message_end(stop_reason: &str, output: u64) -> Vec<String> {
    vec![
        frame(&json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output}})),
        frame(&json!({"type": "message_stop"})),
    ]
}

fn text_block(index: u64, text: &str) -> Vec<String> {
    vec![
        block_start(index, json!({"type": "text", "text": ""})),
        block_delta(index, json!({"type": "text_delta", "text": text})),
        block_stop(index),
    ]
}

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage { input_tokens: input, output_tokens: output, ..Usage::default() })
}

fn done(stop_reason: StopReason) -> StreamEvent {
    StreamEvent::Done { stop_reason }
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: t.into() }
}

fn args(index: usize, a: &str) -> StreamEvent {
    StreamEvent::ToolCallDelta { index, args_delta: a.into() }
}

fn call_start(index: usize, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart { index, id: id.into(), name: name.into() }
}

fn call_end(index: usize, id: &str, name: &str, input: Value) -> StreamEvent {
    StreamEvent::ToolCallEnd { index, id: id.into(), name: name.into(), input, input_error: None }
}

fn the_error(events: &[StreamEvent]) -> &LlmError {
    match events.last() {
        Some(StreamEvent::Error(e)) => e,
        other => panic!("the stream did not end with an error: {other:?} in {events:?}"),
    }
}

fn price_tool() -> ToolDefinition {
    ToolDefinition {
        name: "get_price".into(),
        description: "Latest price of a symbol.".into(),
        input_schema: json!({"type": "object", "properties": {"symbol": {"type": "string"}},
                             "required": ["symbol"]}),
    }
}

// --- golden sequences ------------------------------------------------------------------------

#[tokio::test]
async fn golden_text() {
    let (mock, p) = mock(json!([{"steps": [{"type": "text", "text": "Gold is up.", "chunk": 5}],
                                  "usage": {"input_tokens": 12, "output_tokens": 4}}]))
    .await;
    assert_eq!(
        events(&p, ask("gold?")).await,
        vec![
            StreamEvent::TextStart,
            text("Gold "),
            text("is up"),
            text("."),
            StreamEvent::TextEnd,
            usage(12, 4),
            done(StopReason::EndTurn),
        ]
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].auth.as_deref(), Some(KEY));
    assert_eq!(
        requests[0].body,
        json!({
            "model": "claude-test",
            "max_tokens": 8192,
            "system": "You build dashboards.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "gold?"}]}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn golden_reasoning_then_text_and_complete() {
    let turn = json!([{"steps": [
        {"type": "reasoning", "text": "Check the trend.", "chunk": 8, "signature": "sig-1"},
        {"type": "text", "text": "Up 2%."},
    ], "usage": {"input_tokens": 20, "output_tokens": 9}}]);
    let (mock, p) = mock(turn).await;
    let mut request = ask("trend?");
    request.thinking = Some(Thinking::Enabled { effort: Effort::Low, budget_tokens: None });
    assert_eq!(
        events(&p, request.clone()).await,
        vec![
            StreamEvent::ReasoningStart,
            StreamEvent::ReasoningDelta { text: "Check th".into() },
            StreamEvent::ReasoningDelta { text: "e trend.".into() },
            StreamEvent::ReasoningEnd { signature: Some("sig-1".into()), redacted: None },
            StreamEvent::TextStart,
            text("Up 2%."),
            StreamEvent::TextEnd,
            usage(20, 9),
            done(StopReason::EndTurn),
        ]
    );
    assert_eq!(
        mock.requests()[0].body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(
        p.complete(request).await.unwrap(),
        AssistantMessage {
            content: vec![
                ContentBlock::Reasoning {
                    text: "Check the trend.".into(),
                    signature: Some("sig-1".into()),
                    redacted: None,
                },
                ContentBlock::text("Up 2%."),
            ],
            model: "claude-test".into(),
            provider: "anthropic".into(),
            stop_reason: StopReason::EndTurn,
            usage: Usage { input_tokens: 20, output_tokens: 9, ..Usage::default() },
        }
    );
}

#[tokio::test]
async fn golden_single_tool_call_with_fragmented_arguments() {
    let (mock, p) = mock(json!([{"steps": [{"type": "tool_call", "id": "toolu_1",
        "name": "get_kline", "arguments": {"symbol": "XAUUSD", "limit": 30}, "fragments": 3}],
        "usage": {"input_tokens": 30, "output_tokens": 15}}]))
    .await;
    let mut request = ask("chart gold");
    request.tools = vec![price_tool()];
    assert_eq!(
        events(&p, request).await,
        vec![
            call_start(0, "toolu_1", "get_kline"),
            args(0, r#"{"symbol":"#),
            args(0, r#""XAUUSD",""#),
            args(0, r#"limit":30}"#),
            call_end(0, "toolu_1", "get_kline", json!({"symbol": "XAUUSD", "limit": 30})),
            usage(30, 15),
            done(StopReason::ToolUse),
        ]
    );
    let body = &mock.requests()[0].body;
    assert_eq!(
        body["tools"],
        json!([{"name": "get_price", "description": "Latest price of a symbol.",
        "input_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]}}])
    );
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
}

#[tokio::test]
async fn golden_parallel_tool_calls_get_call_indices() {
    // Text is block 0, so the calls are blocks 1 and 2 and call indices 0 and 1.
    let (_mock, p) = mock(json!([{"steps": [
        {"type": "text", "text": "Fetching both."},
        {"type": "tool_call", "id": "toolu_a", "name": "get_price", "arguments": {"symbol": "XAU"}, "fragments": 2},
        {"type": "tool_call", "id": "toolu_b", "name": "get_price", "arguments": {"symbol": "XAG"}, "fragments": 2},
    ], "usage": {"input_tokens": 40, "output_tokens": 22}}]))
    .await;
    let expected = vec![
        StreamEvent::TextStart,
        text("Fetching both."),
        StreamEvent::TextEnd,
        call_start(0, "toolu_a", "get_price"),
        args(0, r#"{"symbol"#),
        args(0, r#"":"XAU"}"#),
        call_end(0, "toolu_a", "get_price", json!({"symbol": "XAU"})),
        call_start(1, "toolu_b", "get_price"),
        args(1, r#"{"symbol"#),
        args(1, r#"":"XAG"}"#),
        call_end(1, "toolu_b", "get_price", json!({"symbol": "XAG"})),
        usage(40, 22),
        done(StopReason::ToolUse),
    ];
    assert_eq!(events(&p, ask("gold and silver")).await, expected);
    let message = p.complete(ask("gold and silver")).await.unwrap();
    assert_eq!(
        message.content,
        vec![
            ContentBlock::text("Fetching both."),
            ContentBlock::ToolUse {
                id: "toolu_a".into(),
                name: "get_price".into(),
                input: json!({"symbol": "XAU"}),
                input_error: None
            },
            ContentBlock::ToolUse {
                id: "toolu_b".into(),
                name: "get_price".into(),
                input: json!({"symbol": "XAG"}),
                input_error: None
            },
        ]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn golden_usage_counts_cache_and_takes_the_cumulative_output() {
    // The mock's message_start reports output_tokens 1; message_delta's 20 is the total.
    let (_mock, p) = mock(json!([{"steps": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 50, "output_tokens": 20, "cache_read_tokens": 1000, "cache_write_tokens": 200}}]))
    .await;
    let events = events(&p, ask("hi")).await;
    assert_eq!(
        events[events.len() - 2..],
        [
            StreamEvent::Usage(Usage {
                input_tokens: 1250,
                output_tokens: 20,
                reasoning_tokens: 0,
                cache_read_tokens: 1000,
                cache_write_tokens: 200,
            }),
            done(StopReason::EndTurn),
        ]
    );
}

// --- wire quirks -------------------------------------------------------------------------------

#[tokio::test]
async fn pings_anywhere_and_unknown_event_block_and_delta_types_are_ignored() {
    let mut raw = vec![
        frame(&json!({"type": "ping"})),
        message_start(7, 1),
        frame(&json!({"type": "ping"})),
        frame(&json!({"type": "content_block_reasoning_summary", "index": 0, "whatever": true})),
        block_start(
            0,
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        ),
        block_delta(
            0,
            json!({"type": "input_json_delta", "partial_json": "{\"query\": \"gold\"}"}),
        ),
        block_stop(0),
        block_start(
            1,
            json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
        ),
        block_stop(1),
        block_start(2, json!({"type": "text", "text": "", "citations": null})),
        frame(&json!({"type": "ping"})),
        block_delta(
            2,
            json!({"type": "citations_delta", "citation": {"type": "web_search_result_location"}}),
        ),
        block_delta(2, json!({"type": "text_delta", "text": "Gold is "})),
        frame(&json!({"type": "ping"})),
        block_delta(2, json!({"type": "text_delta", "text": "up."})),
        block_stop(2),
    ];
    raw.extend(message_end("end_turn", 9));
    let (_mock, p) = mock(json!([{"raw": raw}])).await;
    assert_eq!(
        events(&p, ask("gold?")).await,
        vec![
            StreamEvent::TextStart,
            text("Gold is "),
            text("up."),
            StreamEvent::TextEnd,
            usage(7, 9),
            done(StopReason::EndTurn),
        ]
    );
}

#[tokio::test]
async fn an_overloaded_error_event_mid_stream_is_the_final_event_and_not_retried() {
    let raw = vec![
        message_start(7, 1),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Gold"})),
        frame(
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ];
    let (mock, p) = mock(json!([{"raw": raw}])).await;
    assert_eq!(
        events(&p, ask("gold?")).await,
        vec![
            StreamEvent::TextStart,
            text("Gold"),
            StreamEvent::Error(LlmError::Api {
                provider: "anthropic".into(),
                error_type: "overloaded_error".into(),
                message: "Overloaded".into(),
            }),
        ]
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn redacted_and_signed_thinking_are_replayed_unmodified() {
    let mut raw = vec![
        message_start(10, 1),
        block_start(0, json!({"type": "thinking", "thinking": "", "signature": ""})),
        block_delta(0, json!({"type": "thinking_delta", "thinking": "Price first."})),
        block_delta(0, json!({"type": "signature_delta", "signature": "EqQBCgIYAhIM+sig/=="})),
        block_stop(0),
        block_start(
            1,
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        ),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_01A", "name": "get_price", "input": {}}),
        ),
        block_delta(2, json!({"type": "input_json_delta", "partial_json": ""})),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"symbol\": \"XAU\"}"}),
        ),
        block_stop(2),
    ];
    raw.extend(message_end("tool_use", 30));
    let turns = json!([
        {"match": {"has_tool_results": false}, "raw": raw},
        {"match": {"tool_result_contains": "2400"}, "steps": [{"type": "text", "text": "Gold is 2400."}]},
    ]);
    let (mock, p) = mock(turns).await;
    let mut request = ask("gold?");
    request.tools = vec![price_tool()];
    request.thinking = Some(Thinking::Enabled { effort: Effort::Low, budget_tokens: None });
    let first = p.complete(request.clone()).await.unwrap();
    assert_eq!(
        first.content,
        vec![
            ContentBlock::Reasoning {
                text: "Price first.".into(),
                signature: Some("EqQBCgIYAhIM+sig/==".into()),
                redacted: None,
            },
            ContentBlock::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some("EmwKAhgBEgy3va3pzix/LafPsn4a".into()),
            },
            ContentBlock::ToolUse {
                id: "toolu_01A".into(),
                name: "get_price".into(),
                input: json!({"symbol": "XAU"}),
                input_error: None,
            },
        ]
    );
    request.messages.push(Message::Assistant(first));
    request.messages.push(Message::tool_result("toolu_01A", "2400", false));
    let second = p.complete(request).await.unwrap();
    assert_eq!(second.text(), "Gold is 2400.");

    let body = &mock.requests()[1].body;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "gold?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Price first.", "signature": "EqQBCgIYAhIM+sig/=="},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_price", "input": {"symbol": "XAU"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "2400", "is_error": false},
            ]},
        ])
    );
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
}

#[tokio::test]
async fn output_tokens_are_cumulative_not_added_to_message_start() {
    let mut raw = vec![message_start(11, 25)];
    raw.extend(text_block(0, "hi"));
    raw.extend(message_end("end_turn", 30));
    let (_mock, p) = mock(json!([{"raw": raw}])).await;
    let events = events(&p, ask("hi")).await;
    assert_eq!(events[events.len() - 2], usage(11, 30));
}

#[tokio::test]
async fn a_parameterless_tool_with_empty_input_json_gets_an_empty_object() {
    let mut raw = vec![
        message_start(5, 1),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_n", "name": "list_dashboards", "input": {}}),
        ),
        block_delta(0, json!({"type": "input_json_delta", "partial_json": ""})),
        block_stop(0),
        // A call with no delta at all.
        block_start(1, json!({"type": "tool_use", "id": "toolu_m", "name": "now", "input": {}})),
        block_stop(1),
    ];
    raw.extend(message_end("tool_use", 8));
    let (_mock, p) = mock(json!([{"raw": raw}])).await;
    assert_eq!(
        events(&p, ask("list")).await,
        vec![
            call_start(0, "toolu_n", "list_dashboards"),
            call_end(0, "toolu_n", "list_dashboards", json!({})),
            call_start(1, "toolu_m", "now"),
            call_end(1, "toolu_m", "now", json!({})),
            usage(5, 8),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn unusable_arguments_keep_the_call_and_say_why() {
    let mut raw = vec![
        message_start(5, 1),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_x", "name": "get_price", "input": {}}),
        ),
        block_delta(0, json!({"type": "input_json_delta", "partial_json": "{\"symbol\": ?}"})),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_y", "name": "get_price", "input": {}}),
        ),
        block_delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"symbol\": \"XAG\"}<|call|>"}),
        ),
        block_stop(1),
    ];
    raw.extend(message_end("tool_use", 8));
    let (_mock, p) = mock(json!([{"raw": raw}])).await;
    let message = p.complete(ask("gold")).await.unwrap();
    let [
        ContentBlock::ToolUse { id: x, input: bad, input_error: Some(why), .. },
        ContentBlock::ToolUse { id: y, input: good, input_error: None, .. },
    ] = message.content.as_slice()
    else {
        panic!("{message:?}");
    };
    assert_eq!((x.as_str(), bad), ("toolu_x", &json!("{\"symbol\": ?}")));
    assert!(why.contains("not valid JSON"), "{why}");
    assert_eq!((y.as_str(), good), ("toolu_y", &json!({"symbol": "XAG"})));
}

#[tokio::test]
async fn every_stop_reason_maps() {
    for (wire, ours) in [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Refusal),
        ("pause_turn", StopReason::EndTurn),
    ] {
        let mut raw = vec![message_start(3, 1)];
        raw.extend(text_block(0, "x"));
        raw.extend(message_end(wire, 2));
        let (_mock, p) = mock(json!([{"raw": raw}])).await;
        assert_eq!(events(&p, ask("x")).await.last(), Some(&done(ours)), "{wire}");
    }
}

#[tokio::test]
async fn sse_framing_crlf_split_frames_and_data_without_a_space() {
    let raw = vec![
        "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":4,\"output_tokens\":1}}}\r\n\r".to_owned(),
        "\nevent: content_block_start\r\ndata:{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n".to_owned(),
        "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"金".to_owned(),
        "价\"}}\r\n\r\n: a comment line\r\n\r\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n".to_owned(),
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned(),
    ];
    let (_mock, p) = mock(json!([{"raw": raw}])).await;
    assert_eq!(
        events(&p, ask("gold?")).await,
        vec![
            StreamEvent::TextStart,
            text("金价"),
            StreamEvent::TextEnd,
            usage(4, 2),
            done(StopReason::EndTurn),
        ]
    );
}

// --- faults ------------------------------------------------------------------------------------

fn ok_turn() -> Value {
    json!({"steps": [{"type": "text", "text": "fine"}], "usage": {"input_tokens": 1, "output_tokens": 1}})
}

fn fine() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextStart,
        text("fine"),
        StreamEvent::TextEnd,
        usage(1, 1),
        done(StopReason::EndTurn),
    ]
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_after_the_wait() {
    let (mock, p) = mock(json!([
        {"times": 1, "fault": {"type": "status", "status": 429, "retry_after": 0.3, "message": "slow down"}},
        ok_turn(),
    ]))
    .await;
    let started = Instant::now();
    assert_eq!(events(&p, ask("hi")).await, fine());
    assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
    let requests = mock.requests();
    assert_eq!(requests.iter().map(|r| r.turn).collect::<Vec<_>>(), [Some(0), Some(1)]);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn overloaded_529_and_500_are_retried() {
    for status in [529, 500, 503] {
        let (mock, p) =
            mock(json!([{"times": 1, "fault": {"type": "status", "status": status}}, ok_turn()]))
                .await;
        assert_eq!(events(&p, ask("hi")).await, fine(), "{status}");
        assert_eq!(mock.requests().len(), 2, "{status}");
    }
}

#[tokio::test]
async fn a_status_that_keeps_failing_gives_up_with_the_last_error() {
    let (mock, p) =
        mock(json!([{"fault": {"type": "status", "status": 529, "message": "Overloaded"}}])).await;
    let events = events(&p, ask("hi")).await;
    assert_eq!(
        events,
        vec![StreamEvent::Error(LlmError::Http {
            provider: "anthropic".into(),
            status: 529,
            message: "Overloaded".into(),
            retry_after: None,
        })]
    );
    assert_eq!(mock.requests().len(), 3, "the first try and max_retries = 2");
}

#[tokio::test]
async fn a_400_or_401_is_not_retried_and_carries_the_providers_message() {
    for (status, message) in [
        (400, "max_tokens: must be greater than thinking.budget_tokens"),
        (401, "invalid x-api-key"),
    ] {
        let (mock, p) = mock(json!([
            {"times": 1, "fault": {"type": "status", "status": status, "message": message}},
            ok_turn(),
        ]))
        .await;
        assert_eq!(
            events(&p, ask("hi")).await,
            vec![StreamEvent::Error(LlmError::Http {
                provider: "anthropic".into(),
                status,
                message: message.into(),
                retry_after: None,
            })]
        );
        assert_eq!(mock.requests().len(), 1, "{status}");
    }
}

#[tokio::test]
async fn a_malformed_chunk_is_a_protocol_error_naming_it() {
    // Chunks: message_start, ping, content_block_start, delta... the malformed one comes 4th.
    let (mock, p) = mock(json!([{"steps": [{"type": "text", "text": "abcdef", "chunk": 2}],
                                  "fault": {"type": "malformed", "after": 4}}]))
    .await;
    let events = events(&p, ask("hi")).await;
    assert_eq!(events[..2], [StreamEvent::TextStart, text("ab")]);
    assert_eq!(events.len(), 3, "{events:?}");
    let LlmError::Protocol { provider, message } = the_error(&events) else {
        panic!("{events:?}");
    };
    assert_eq!(provider, "anthropic");
    assert!(message.starts_with("malformed message event ("), "{message}");
    assert!(message.contains(r#"{"choices": [{"delta":"#), "{message}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_truncated_stream_after_output_started_is_an_error_without_retry() {
    // message_start, ping, block start, two deltas, then the connection ends.
    let (mock, p) = mock(json!([
        {"times": 1, "steps": [{"type": "text", "text": "abcdef", "chunk": 3}], "fault": {"type": "truncate", "after": 5}},
        ok_turn(),
    ]))
    .await;
    assert_eq!(
        events(&p, ask("hi")).await,
        vec![
            StreamEvent::TextStart,
            text("abc"),
            text("def"),
            StreamEvent::Error(LlmError::Protocol {
                provider: "anthropic".into(),
                message: "truncated stream: it ended inside text block 0, before message_stop"
                    .into(),
            }),
        ]
    );
    assert_eq!(mock.requests().len(), 1, "no retry after the first byte");
    let again = p.complete(ask("hi")).await;
    assert!(again.is_ok(), "the next call is a new call: {again:?}");
}

#[tokio::test]
async fn a_stall_beyond_the_idle_timeout_is_an_idle_timeout() {
    let (mock, p) = mock(json!([
        {"times": 1, "steps": [{"type": "text", "text": "abcdef", "chunk": 3}], "fault": {"type": "stall", "after": 4, "ms": 1500}},
        ok_turn(),
    ]))
    .await;
    let started = Instant::now();
    let events = events(&p, ask("hi")).await;
    assert!(started.elapsed() < Duration::from_millis(1200), "{:?}", started.elapsed());
    assert_eq!(
        events,
        vec![
            StreamEvent::TextStart,
            text("abc"),
            StreamEvent::Error(LlmError::Timeout {
                provider: "anthropic".into(),
                stage: TimeoutStage::Idle,
                after_ms: 300,
            }),
        ]
    );
    assert_eq!(mock.requests().len(), 1, "no retry after the first byte");
}

// --- true streaming ----------------------------------------------------------------------------

#[tokio::test]
async fn each_upstream_delta_is_an_event_before_the_next_chunk_is_sent() {
    let (mock, p) =
        mock(json!([{"delay_ms": 25, "steps": [{"type": "text", "text": "abcde", "chunk": 1}],
                                  "usage": {"input_tokens": 1, "output_tokens": 5}}]))
        .await;
    let mut stream = p.stream(ask("hi"));
    let mut arrivals = Vec::new();
    while let Some(e) = stream.next().await {
        arrivals.push((Instant::now(), e));
    }
    let sent = mock.sent();
    // Chunks: 0 message_start, 1 ping, 2 block start, 3..=7 deltas, 8 block stop,
    // 9 message_delta, 10 message_stop. The event(s) of each chunk:
    let chunk_of_event = [2, 3, 4, 5, 6, 7, 8, 10, 10];
    assert_eq!(sent.len(), 11);
    assert_eq!(arrivals.len(), chunk_of_event.len(), "{arrivals:?}");
    assert_eq!(
        arrivals.iter().filter(|(_, e)| matches!(e, StreamEvent::TextDelta { .. })).count(),
        5
    );
    for ((at, event), chunk) in arrivals.iter().zip(chunk_of_event) {
        assert!(*at >= sent[chunk].at, "{event:?} before its chunk was sent");
        if let Some(next) = sent.get(chunk + 1) {
            assert!(
                *at < next.at,
                "{event:?} (chunk {chunk}) arrived only after chunk {} was sent",
                chunk + 1
            );
        }
    }
}

// --- context handoff ---------------------------------------------------------------------------

#[tokio::test]
async fn a_history_from_another_provider_is_sent_as_valid_anthropic_messages() {
    let (mock, p) = mock(json!([
        {"match": {"tool_result_contains": "2401.5"}, "steps": [{"type": "text", "text": "Gold: 2401.5, silver: n/a."}]},
    ]))
    .await;
    let openai_turn = AssistantMessage {
        content: vec![
            ContentBlock::Reasoning {
                text: "The user wants both metals.".into(),
                signature: None,
                redacted: None,
            },
            ContentBlock::text("Let me look."),
            ContentBlock::ToolUse {
                id: "call_Y7ib.0".into(),
                name: "get_price".into(),
                input: json!({"symbol": "XAU"}),
                input_error: None,
            },
            ContentBlock::ToolUse {
                id: "call_cTZm".into(),
                name: "get_price".into(),
                input: json!("{\"symbol\": XAG"),
                input_error: Some("the arguments are not valid JSON".into()),
            },
        ],
        model: "deepseek-reasoner".into(),
        provider: "deepseek".into(),
        stop_reason: StopReason::ToolUse,
        usage: Usage::default(),
    };
    let request = ChatRequest {
        model: "claude-test".into(),
        messages: vec![
            Message::system("You build dashboards."),
            Message::user("gold and silver?"),
            Message::Assistant(openai_turn),
            Message::tool_result("call_Y7ib.0", "{\"price\": 2401.5}", false),
            Message::tool_result("call_cTZm", "the arguments are not valid JSON", true),
        ],
        tools: vec![price_tool()],
        temperature: Some(0.3),
        thinking: Some(Thinking::Enabled { effort: Effort::Medium, budget_tokens: None }),
        ..ChatRequest::default()
    };
    let answer = p.complete(request).await.unwrap();
    assert_eq!(answer.text(), "Gold: 2401.5, silver: n/a.");
    assert_eq!(answer.provider, "anthropic");

    let body = &mock.requests()[0].body;
    assert_eq!(
        *body,
        json!({
            "model": "claude-test",
            // Thinking is left out: the tool turn being continued has no signed thinking block,
            // which Anthropic requires when thinking is on. So the temperature is sent.
            "max_tokens": 8192,
            "system": "You build dashboards.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "gold and silver?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "call_Y7ib_0", "name": "get_price", "input": {"symbol": "XAU"}},
                    {"type": "tool_use", "id": "call_cTZm", "name": "get_price", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_Y7ib_0", "content": "{\"price\": 2401.5}", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "call_cTZm", "content": "the arguments are not valid JSON", "is_error": true},
                ]},
            ],
            "tools": [{"name": "get_price", "description": "Latest price of a symbol.",
                       "input_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]}}],
            "tool_choice": {"type": "auto"},
            "temperature": 0.3,
            "stream": true,
        })
    );
    assert_valid_anthropic_messages(&body["messages"]);
}

/// The structural rules Anthropic enforces on `messages`: roles alternate starting with user;
/// no empty content; each assistant `tool_use` is answered by a `tool_result` at the start of
/// the next user message; ids fit `[A-Za-z0-9_-]+`; inputs are objects; thinking is signed.
fn assert_valid_anthropic_messages(messages: &Value) {
    let messages = messages.as_array().unwrap();
    let id_ok = |id: &str| {
        !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    for (i, m) in messages.iter().enumerate() {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        assert_eq!(m["role"], role, "message {i}");
        let content = m["content"].as_array().unwrap();
        assert!(!content.is_empty(), "message {i} is empty");
        for b in content {
            match b["type"].as_str().unwrap() {
                "text" => assert!(!b["text"].as_str().unwrap().is_empty()),
                "thinking" => assert!(!b["signature"].as_str().unwrap().is_empty()),
                "redacted_thinking" => assert!(b["data"].is_string()),
                "tool_use" => {
                    assert_eq!(role, "assistant");
                    assert!(id_ok(b["id"].as_str().unwrap()), "{b}");
                    assert!(b["input"].is_object(), "{b}");
                    let next = messages[i + 1]["content"].as_array().unwrap();
                    let answered = next
                        .iter()
                        .take_while(|r| r["type"] == "tool_result")
                        .any(|r| r["tool_use_id"] == b["id"]);
                    assert!(answered, "{} has no result", b["id"]);
                }
                "tool_result" => {
                    assert_eq!(role, "user");
                    assert!(id_ok(b["tool_use_id"].as_str().unwrap()), "{b}");
                }
                other => panic!("block type {other}"),
            }
        }
    }
}

// --- headers and health check ------------------------------------------------------------------

type Seen = Arc<Mutex<Vec<(String, axum::http::HeaderMap)>>>;

/// A bare server that records each request's path and headers, answers `/v1/messages` with a
/// one-word stream and `/v1/models` with `status`.
async fn header_recorder(models_status: u16) -> (String, Seen) {
    use axum::http::{HeaderMap, StatusCode, Uri};
    use axum::response::IntoResponse;
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
        let record = record.clone();
        async move {
            record.lock().unwrap().push((uri.path().to_owned(), headers));
            if uri.path() == "/v1/models" {
                let status = StatusCode::from_u16(models_status).unwrap();
                let body = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
                let body = if status.is_success() { json!({"data": []}) } else { body };
                return (status, axum::Json(body)).into_response();
            }
            let mut raw = vec![message_start(1, 1)];
            raw.extend(text_block(0, "ok"));
            raw.extend(message_end("end_turn", 1));
            ([("content-type", "text/event-stream")], raw.concat()).into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

#[tokio::test]
async fn requests_and_health_checks_carry_the_anthropic_headers() {
    let (url, seen) = header_recorder(200).await;
    let p = provider(&url);
    assert_eq!(p.complete(ask("hi")).await.unwrap().text(), "ok");
    p.health_check().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let paths: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["/v1/messages", "/v1/models"]);
    for (path, headers) in &seen {
        let all = |name: &str| -> Vec<&str> {
            headers.get_all(name).iter().map(|v| v.to_str().unwrap()).collect()
        };
        assert_eq!(all("x-api-key"), [KEY], "{path}");
        assert_eq!(all("anthropic-version"), ["2023-06-01"], "{path}");
        assert!(all("authorization").is_empty(), "{path}");
        if path == "/v1/messages" {
            assert_eq!(all("content-type"), ["application/json"], "{path}");
        }
    }
}

#[tokio::test]
async fn health_check_passes_against_the_mock_and_reports_a_rejected_key() {
    let (_mock, p) = mock(json!([])).await;
    p.health_check().await.unwrap();
    let (url, _seen) = header_recorder(401).await;
    assert_eq!(
        provider(&url).health_check().await,
        Err(LlmError::Http {
            provider: "anthropic".into(),
            status: 401,
            message: "invalid x-api-key".into(),
            retry_after: None,
        })
    );
}
