//! The Ollama provider against the scripted mock upstream over real loopback HTTP: golden event
//! sequences, every wire quirk of `/api/chat` (raw bytes), faults and retries, true streaming,
//! and context handoff from other providers.

use std::time::{Duration, Instant};

use boardsmith::llm::http::Transport;
use boardsmith::llm::mock::{Fault, MockLlm, Script, Step, Turn};
use boardsmith::llm::ollama::OllamaProvider;
use boardsmith::llm::{
    ApiKey, AssistantMessage, ChatRequest, ContentBlock, Family, LlmError, Message, Provider,
    ProviderKind, ProviderSettings, StopReason, StreamEvent, TimeoutStage, ToolDefinition, Usage,
};
use futures::StreamExt;
use serde_json::{Value, json};

const IDLE: Duration = Duration::from_millis(300);

fn transport() -> Transport {
    crate::support::llm_transport(Duration::from_secs(1), IDLE, 2)
}

fn provider_at(base_url: String, api_key: Option<&str>) -> OllamaProvider {
    OllamaProvider::new(ProviderSettings {
        key: "ollama".into(),
        kind: ProviderKind::Ollama,
        base_url,
        api_key: api_key.map(ApiKey::new),
        family: Family::Generic,
        transport: transport(),
    })
}

async fn start(turns: Vec<Turn>) -> (MockLlm, OllamaProvider) {
    let mock = MockLlm::start(Script { turns }, 0).await.unwrap();
    // A trailing slash on the base URL is tolerated.
    let provider = provider_at(format!("{}/", mock.url()), None);
    (mock, provider)
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        model: "qwen3:8b".into(),
        messages: vec![Message::user(text)],
        ..ChatRequest::default()
    }
}

async fn collect(provider: &OllamaProvider, request: ChatRequest) -> Vec<StreamEvent> {
    provider.stream(request).collect().await
}

fn steps(steps: Vec<Step>) -> Turn {
    Turn { steps, ..Turn::default() }
}

/// A turn sent as these exact body chunks.
fn raw(chunks: &[&str]) -> Turn {
    Turn { raw: Some(chunks.iter().map(|c| (*c).to_owned()).collect()), ..Turn::default() }
}

fn text_step(text: &str, chunk: usize) -> Step {
    Step::Text { text: text.into(), chunk: Some(chunk) }
}

fn call_step(name: &str, arguments: Value, fragments: usize) -> Step {
    Step::ToolCall { id: None, name: name.into(), arguments, fragments: Some(fragments) }
}

fn fault(fault: Fault, times: Option<u32>) -> Turn {
    Turn { fault: Some(fault), times, ..Turn::default() }
}

fn status(status: u16, retry_after: Option<f64>, message: &str) -> Fault {
    Fault::Status { status, retry_after, message: Some(message.into()) }
}

fn line(message: Value) -> String {
    format!(
        "{}\n",
        json!({
            "model": "qwen3:8b", "created_at": "2026-01-01T00:00:00Z",
            "message": message, "done": false,
        })
    )
}

fn done_line(reason: &str, input: u64, output: u64) -> String {
    format!(
        "{}\n",
        json!({
            "model": "qwen3:8b", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": ""},
            "done": true, "done_reason": reason, "total_duration": 123_456_789u64,
            "load_duration": 1_000, "prompt_eval_count": input, "prompt_eval_duration": 1_000,
            "eval_count": output, "eval_duration": 1_000,
        })
    )
}

fn td(text: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: text.into() }
}

fn rd(text: &str) -> StreamEvent {
    StreamEvent::ReasoningDelta { text: text.into() }
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

/// The ids of the calls started, each checked to be synthesized as `call_<index>_<8 hex>`.
fn synthesized_ids(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStart { index, id, .. } => {
                let suffix = id.strip_prefix(&format!("call_{index}_")).unwrap_or_else(|| {
                    panic!("id {id} of call {index} is not synthesized as call_<n>_<random>")
                });
                assert!(suffix.len() == 8 && suffix.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
                Some(id.clone())
            }
            _ => None,
        })
        .collect()
}

fn the_error(events: &[StreamEvent]) -> &LlmError {
    match events.last() {
        Some(StreamEvent::Error(e)) => e,
        other => panic!("the stream should end with an error, got {other:?} in {events:?}"),
    }
}

fn protocol_message(events: &[StreamEvent]) -> &str {
    match the_error(events) {
        LlmError::Protocol { provider, message } => {
            assert_eq!(provider, "ollama");
            message
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

// ---- 1. Golden event sequences -------------------------------------------------------------

#[tokio::test]
async fn golden_text() {
    let (mock, provider) = start(vec![steps(vec![text_step("Gold is up 1.2%.", 6)])]).await;
    let events = collect(&provider, ask("gold?")).await;
    assert_eq!(
        events,
        [
            StreamEvent::TextStart,
            td("Gold i"),
            td("s up 1"),
            td(".2%."),
            StreamEvent::TextEnd,
            usage(0, 0),
            done(StopReason::EndTurn),
        ]
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].body,
        json!({
            "model": "qwen3:8b",
            "messages": [{"role": "user", "content": "gold?"}],
            "stream": true,
        })
    );
    assert_eq!(requests[0].auth, None);
}

#[tokio::test]
async fn golden_reasoning_then_text() {
    let (_mock, provider) = start(vec![steps(vec![
        Step::Reasoning { text: "User wants gold.".into(), chunk: Some(8), signature: None },
        text_step("Up.", 0),
    ])])
    .await;
    let events = collect(&provider, ask("gold?")).await;
    assert_eq!(
        events,
        [
            StreamEvent::ReasoningStart,
            rd("User wan"),
            rd("ts gold."),
            reasoning_end(),
            StreamEvent::TextStart,
            td("Up."),
            StreamEvent::TextEnd,
            usage(0, 0),
            done(StopReason::EndTurn),
        ]
    );
}

/// Fragmented arguments in the script: Ollama sends every call whole, so there is exactly one
/// argument delta holding the complete object.
#[tokio::test]
async fn golden_single_tool_call_with_fragmented_args() {
    let args = json!({"symbol": "XAUUSD", "interval": "1d", "limit": 30});
    let (_mock, provider) = start(vec![steps(vec![call_step("get_kline", args.clone(), 4)])]).await;
    let events = collect(&provider, ask("kline")).await;
    let ids = synthesized_ids(&events);
    let mut expected = call(0, &ids[0], "get_kline", &args.to_string(), args).to_vec();
    expected.extend([usage(0, 0), done(StopReason::ToolUse)]);
    assert_eq!(events, expected);
}

#[tokio::test]
async fn golden_parallel_tool_calls() {
    let (_mock, provider) = start(vec![steps(vec![
        text_step("Fetching both.", 0),
        call_step("get_price", json!({"symbol": "XAUUSD"}), 1),
        call_step("get_price", json!({"symbol": "XAGUSD"}), 1),
        call_step("get_news", json!({}), 1),
    ])])
    .await;
    let events = collect(&provider, ask("prices")).await;
    let ids = synthesized_ids(&events);
    assert_eq!(ids.len(), 3);
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], "{ids:?}");
    let mut expected = vec![StreamEvent::TextStart, td("Fetching both."), StreamEvent::TextEnd];
    expected.extend(call(
        0,
        &ids[0],
        "get_price",
        r#"{"symbol":"XAUUSD"}"#,
        json!({"symbol": "XAUUSD"}),
    ));
    expected.extend(call(
        1,
        &ids[1],
        "get_price",
        r#"{"symbol":"XAGUSD"}"#,
        json!({"symbol": "XAGUSD"}),
    ));
    expected.extend(call(2, &ids[2], "get_news", "{}", json!({})));
    expected.extend([usage(0, 0), done(StopReason::ToolUse)]);
    assert_eq!(events, expected);
}

#[tokio::test]
async fn golden_usage_and_the_collected_message() {
    let turn = Turn {
        steps: vec![text_step("Hi", 0)],
        usage: Some(Usage { input_tokens: 42, output_tokens: 17, ..Usage::default() }),
        ..Turn::default()
    };
    let (_mock, provider) = start(vec![turn]).await;
    let events = collect(&provider, ask("hi")).await;
    assert_eq!(
        events,
        [
            StreamEvent::TextStart,
            td("Hi"),
            StreamEvent::TextEnd,
            usage(42, 17),
            done(StopReason::EndTurn)
        ]
    );
    let message = provider.complete(ask("hi")).await.unwrap();
    assert_eq!(
        message,
        AssistantMessage {
            content: vec![ContentBlock::text("Hi")],
            model: "qwen3:8b".into(),
            provider: "ollama".into(),
            stop_reason: StopReason::EndTurn,
            usage: Usage { input_tokens: 42, output_tokens: 17, ..Usage::default() },
        }
    );
}

#[tokio::test]
async fn complete_rebuilds_reasoning_text_and_tool_calls() {
    let (_mock, provider) = start(vec![steps(vec![
        Step::Reasoning { text: "think".into(), chunk: Some(2), signature: None },
        text_step("Checking gold.", 5),
        call_step("get_price", json!({"symbol": "XAUUSD"}), 1),
    ])])
    .await;
    let message = provider.complete(ask("gold?")).await.unwrap();
    let ContentBlock::ToolUse { id, .. } = &message.content[2] else { panic!("{message:?}") };
    assert!(id.starts_with("call_0_"), "{id}");
    assert_eq!(
        message.content,
        [
            ContentBlock::Reasoning { text: "think".into(), signature: None, redacted: None },
            ContentBlock::text("Checking gold."),
            ContentBlock::ToolUse {
                id: id.clone(),
                name: "get_price".into(),
                input: json!({"symbol": "XAUUSD"}),
                input_error: None,
            },
        ]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

// ---- 2. Wire quirks (exact bytes) ----------------------------------------------------------

/// NDJSON framing: every line split across chunks (the mock's `raw` chunks are strings, so
/// splits fall between characters; a split inside a UTF-8 character is covered by the
/// `http::ndjson` unit test), two lines in one chunk, blank lines, CRLF endings, unknown fields.
#[tokio::test]
async fn quirk_ndjson_framing_across_chunks() {
    let body = [
        line(json!({"role": "assistant", "content": "金价", "images": null})),
        "\n".to_owned(),
        line(json!({"content": "上涨"})),
        "\r\n".to_owned(),
        line(json!({"role": "assistant", "content": "!"})).replace('\n', "\r\n"),
        done_line("stop", 5, 3),
    ]
    .concat();
    let chars: Vec<char> = body.chars().collect();
    let pieces: Vec<String> = chars.chunks(7).map(|c| c.iter().collect()).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let (mock, provider) = start(vec![raw(&pieces)]).await;
    let events = collect(&provider, ask("gold?")).await;
    assert_eq!(
        events,
        [
            StreamEvent::TextStart,
            td("金价"),
            td("上涨"),
            td("!"),
            StreamEvent::TextEnd,
            usage(5, 3),
            done(StopReason::EndTurn),
        ]
    );
    assert_eq!(mock.sent().len(), pieces.len());
}

/// Since Ollama 0.8: content and a tool call in the same line, then more content, another call,
/// and content in the final `done` line.
#[tokio::test]
async fn quirk_content_and_tool_calls_share_lines_and_interleave() {
    let chunks = [
        line(json!({"role": "assistant", "content": "Checking.", "tool_calls": [
            {"function": {"name": "get_price", "arguments": {"symbol": "XAUUSD"}}}
        ]})),
        line(json!({"role": "assistant", "content": " And"})),
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_news", "arguments": {"q": "gold"}}}
        ]})),
        format!(
            "{}\n",
            json!({"model": "m", "created_at": "t", "message": {"role": "assistant", "content": " ok"},
                   "done": true, "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 4})
        ),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (_mock, provider) = start(vec![raw(&chunks)]).await;
    let events = collect(&provider, ask("gold?")).await;
    let ids = synthesized_ids(&events);
    let mut expected = vec![StreamEvent::TextStart, td("Checking."), StreamEvent::TextEnd];
    expected.extend(call(
        0,
        &ids[0],
        "get_price",
        r#"{"symbol":"XAUUSD"}"#,
        json!({"symbol": "XAUUSD"}),
    ));
    expected.extend([StreamEvent::TextStart, td(" And"), StreamEvent::TextEnd]);
    expected.extend(call(1, &ids[1], "get_news", r#"{"q":"gold"}"#, json!({"q": "gold"})));
    expected.extend([
        StreamEvent::TextStart,
        td(" ok"),
        StreamEvent::TextEnd,
        usage(9, 4),
        done(StopReason::ToolUse),
    ]);
    assert_eq!(events, expected);
}

/// Classic Ollama sends no ids: they are synthesized, unique within a message and across
/// messages. Newer versions send `id` (and `function.index`): a given id is kept.
#[tokio::test]
async fn quirk_call_ids_synthesized_when_absent_and_kept_when_given() {
    let no_ids = [
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "a", "arguments": {}}},
            {"function": {"name": "a", "arguments": {}}},
        ]})),
        done_line("stop", 1, 1),
    ];
    let with_ids = [
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_srv1", "function": {"index": 0, "name": "a", "arguments": {"x": 1}}},
        ]})),
        done_line("stop", 1, 1),
    ];
    let no_ids: Vec<&str> = no_ids.iter().map(String::as_str).collect();
    let with_ids: Vec<&str> = with_ids.iter().map(String::as_str).collect();
    let (_mock, provider) =
        start(vec![Turn { times: Some(2), ..raw(&no_ids) }, raw(&with_ids)]).await;
    let first = synthesized_ids(&collect(&provider, ask("x")).await);
    let second = synthesized_ids(&collect(&provider, ask("x")).await);
    assert_eq!(first.len(), 2);
    assert_ne!(first[0], first[1]);
    assert!(!second.contains(&first[0]) && !second.contains(&first[1]), "{first:?} {second:?}");
    let events = collect(&provider, ask("x")).await;
    let mut expected = call(0, "call_srv1", "a", r#"{"x":1}"#, json!({"x": 1})).to_vec();
    expected.extend([usage(1, 1), done(StopReason::ToolUse)]);
    assert_eq!(events, expected);
}

/// Arguments given as a string instead of an object go through the repair policy; unusable ones
/// are kept raw with an error, never dropped.
#[tokio::test]
async fn quirk_string_arguments_are_repaired_or_reported() {
    let chunks = [
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "a", "arguments": "{\"symbol\":\"XAUUSD\"}<|call|>"}},
            {"function": {"name": "b", "arguments": ""}},
            {"function": {"name": "c", "arguments": "{\"x\":?}"}},
        ]})),
        done_line("stop", 1, 1),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (_mock, provider) = start(vec![raw(&chunks)]).await;
    let message = provider.complete(ask("x")).await.unwrap();
    let calls: Vec<(&Value, Option<&String>)> = message
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::ToolUse { input, input_error, .. } => (input, input_error.as_ref()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0], (&json!({"symbol": "XAUUSD"}), None));
    assert_eq!(calls[1], (&json!({}), None));
    assert_eq!(calls[2].0, &json!("{\"x\":?}"));
    assert!(calls[2].1.unwrap().contains("not valid JSON"), "{:?}", calls[2].1);
}

/// `message.thinking` → reasoning; the switch to `message.content` closes it, and a later
/// thinking line opens a new block.
#[tokio::test]
async fn quirk_thinking_content_switches_close_blocks() {
    let chunks = [
        line(json!({"role": "assistant", "content": "", "thinking": "Plan"})),
        line(json!({"role": "assistant", "content": "A"})),
        line(json!({"role": "assistant", "content": "", "thinking": "More"})),
        line(json!({"role": "assistant", "content": "B"})),
        done_line("stop", 2, 2),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (_mock, provider) = start(vec![raw(&chunks)]).await;
    assert_eq!(
        collect(&provider, ask("x")).await,
        [
            StreamEvent::ReasoningStart,
            rd("Plan"),
            reasoning_end(),
            StreamEvent::TextStart,
            td("A"),
            StreamEvent::TextEnd,
            StreamEvent::ReasoningStart,
            rd("More"),
            reasoning_end(),
            StreamEvent::TextStart,
            td("B"),
            StreamEvent::TextEnd,
            usage(2, 2),
            done(StopReason::EndTurn),
        ]
    );
}

/// `done_reason: length` → MaxTokens (even after tool calls); missing counts → zero usage.
#[tokio::test]
async fn quirk_done_reasons() {
    let length = [line(json!({"content": "cut"})), done_line("length", 3, 50)];
    let bare = [line(json!({"content": "x"})), "{\"done\":true}\n".to_owned()];
    let length: Vec<&str> = length.iter().map(String::as_str).collect();
    let bare: Vec<&str> = bare.iter().map(String::as_str).collect();
    let (_mock, provider) =
        start(vec![Turn { times: Some(1), ..raw(&length) }, Turn { times: Some(1), ..raw(&bare) }])
            .await;
    let events = collect(&provider, ask("x")).await;
    assert_eq!(&events[3..], [usage(3, 50), done(StopReason::MaxTokens)]);
    let events = collect(&provider, ask("x")).await;
    assert_eq!(&events[3..], [usage(0, 0), done(StopReason::EndTurn)]);
    let turn = Turn { stop: Some(StopReason::MaxTokens), ..steps(vec![text_step("x", 0)]) };
    let (_mock, provider) = start(vec![turn]).await;
    assert_eq!(collect(&provider, ask("x")).await.last(), Some(&done(StopReason::MaxTokens)));
}

/// An `{"error": "..."}` line mid-stream ends it with an API error; no retry (1 request).
#[tokio::test]
async fn quirk_error_line_mid_stream() {
    let chunks = [
        line(json!({"role": "assistant", "content": "Gold"})),
        "{\"error\":\"an error was encountered while running the model: CUDA error\"}\n".to_owned(),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (mock, provider) = start(vec![raw(&chunks)]).await;
    let events = collect(&provider, ask("x")).await;
    assert_eq!(
        events,
        [
            StreamEvent::TextStart,
            td("Gold"),
            StreamEvent::Error(LlmError::Api {
                provider: "ollama".into(),
                error_type: "error".into(),
                message: "an error was encountered while running the model: CUDA error".into(),
            }),
        ]
    );
    assert_eq!(mock.requests().len(), 1);
}

/// 404 "model not found" is an HTTP error and is not retried.
#[tokio::test]
async fn quirk_model_not_found_is_http_404_not_retried() {
    let (mock, provider) = start(vec![fault(
        status(404, None, "model \"qwen9:1b\" not found, try pulling it first"),
        None,
    )])
    .await;
    let events = collect(&provider, ask("x")).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        the_error(&events),
        &LlmError::Http {
            provider: "ollama".into(),
            status: 404,
            message: "model \"qwen9:1b\" not found, try pulling it first".into(),
            retry_after: None,
        }
    );
    assert_eq!(mock.requests().len(), 1);
}

// ---- 3. Faults -----------------------------------------------------------------------------

#[tokio::test]
async fn fault_429_with_retry_after_is_retried_after_the_wait() {
    let (mock, provider) = start(vec![
        fault(status(429, Some(0.4), "slow down"), Some(1)),
        steps(vec![text_step("ok", 0)]),
    ])
    .await;
    let t0 = Instant::now();
    let events = collect(&provider, ask("x")).await;
    assert_eq!(events.last(), Some(&done(StopReason::EndTurn)), "{events:?}");
    assert_eq!(mock.requests().len(), 2);
    let first_byte = mock.sent().iter().find(|s| s.request == 1).unwrap().at;
    assert!(first_byte - t0 >= Duration::from_millis(400), "waited {:?}", first_byte - t0);
}

#[tokio::test]
async fn fault_529_and_500_are_retried() {
    for code in [529, 500] {
        let (mock, provider) = start(vec![
            fault(status(code, None, "overloaded"), Some(1)),
            steps(vec![text_step("ok", 0)]),
        ])
        .await;
        let events = collect(&provider, ask("x")).await;
        assert_eq!(events[1], td("ok"), "{code}: {events:?}");
        assert_eq!(events.last(), Some(&done(StopReason::EndTurn)));
        assert_eq!(mock.requests().len(), 2, "{code}");
    }
}

#[tokio::test]
async fn fault_400_and_401_are_not_retried() {
    for (code, message) in [(400, "invalid tool schema"), (401, "unauthorized")] {
        let (mock, provider) = start(vec![
            fault(status(code, None, message), Some(1)),
            steps(vec![text_step("never", 0)]),
        ])
        .await;
        let events = collect(&provider, ask("x")).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let e = the_error(&events);
        assert_eq!(e.status(), Some(code));
        assert!(e.to_string().contains(message), "{e}");
        assert!(!e.is_retryable());
        assert_eq!(mock.requests().len(), 1, "{code}");
    }
}

#[tokio::test]
async fn fault_malformed_chunk_is_a_protocol_error() {
    let turn =
        Turn { fault: Some(Fault::Malformed { after: 1 }), ..steps(vec![text_step("abc", 1)]) };
    let (mock, provider) = start(vec![turn]).await;
    let events = collect(&provider, ask("x")).await;
    assert_eq!(events[..2], [StreamEvent::TextStart, td("a")]);
    assert_eq!(events.len(), 3, "nothing after the error: {events:?}");
    let message = protocol_message(&events);
    assert!(message.contains("malformed NDJSON line"), "{message}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn fault_truncated_stream_is_a_protocol_error_without_retry() {
    let turn =
        Turn { fault: Some(Fault::Truncate { after: 2 }), ..steps(vec![text_step("abcd", 1)]) };
    let (mock, provider) = start(vec![turn]).await;
    let events = collect(&provider, ask("x")).await;
    assert_eq!(events[..3], [StreamEvent::TextStart, td("a"), td("b")]);
    assert!(protocol_message(&events).contains("truncated"));
    assert_eq!(events.len(), 4);
    assert_eq!(mock.requests().len(), 1, "no retry after the first byte");
}

#[tokio::test]
async fn fault_stall_beyond_idle_timeout_after_output_is_not_retried() {
    let turn = Turn {
        fault: Some(Fault::Stall { after: 2, ms: 1_500 }),
        ..steps(vec![text_step("abcd", 1)])
    };
    let (mock, provider) = start(vec![turn]).await;
    let t0 = Instant::now();
    let events = collect(&provider, ask("x")).await;
    let waited = t0.elapsed();
    assert_eq!(events[..3], [StreamEvent::TextStart, td("a"), td("b")]);
    assert_eq!(
        the_error(&events),
        &LlmError::Timeout {
            provider: "ollama".into(),
            stage: TimeoutStage::Idle,
            after_ms: u64::try_from(IDLE.as_millis()).unwrap(),
        }
    );
    assert_eq!(events.len(), 4);
    assert!(waited >= IDLE && waited < Duration::from_millis(1_200), "{waited:?}");
    assert_eq!(mock.requests().len(), 1, "no retry after the first byte");
}

// ---- 4. True streaming ---------------------------------------------------------------------

/// Each upstream line becomes its event before the mock sends the next one (25 ms later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_delta_reaches_the_consumer_before_the_next_chunk_is_sent() {
    let turn = Turn { delay_ms: 25, ..steps(vec![text_step("abcdefgh", 1)]) };
    let (mock, provider) = start(vec![turn]).await;
    let mut stream = provider.stream(ask("x"));
    let mut deltas = Vec::new();
    while let Some(e) = stream.next().await {
        let at = Instant::now();
        if let StreamEvent::TextDelta { text } = &e {
            deltas.push((text.clone(), at));
        }
    }
    let sent = mock.sent();
    assert_eq!(sent.len(), 9, "8 text lines and the done line");
    assert_eq!(deltas.len(), 8, "one event per upstream delta");
    for (k, (text, at)) in deltas.iter().enumerate() {
        assert_eq!(text, &"abcdefgh"[k..=k]);
        assert!(*at >= sent[k].at, "delta {k} observed before it was sent");
        assert!(
            *at < sent[k + 1].at,
            "delta {k} observed {:?} after chunk {} was sent (buffered)",
            *at - sent[k + 1].at,
            k + 1
        );
    }
}

// ---- 5. Context handoff --------------------------------------------------------------------

/// The request is valid `/api/chat`: known roles and keys only, string contents, tool calls with
/// object arguments, and every tool message answers a call of the assistant before it by name.
fn assert_valid_ollama_chat(body: &Value) {
    let top = body.as_object().unwrap();
    for key in top.keys() {
        assert!(
            ["model", "messages", "stream", "tools", "options", "think"].contains(&key.as_str()),
            "unknown top-level key {key}"
        );
    }
    assert!(body["model"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(body["stream"], true);
    let mut names_in_scope: Vec<String> = Vec::new();
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        let role = m["role"].as_str().unwrap();
        assert!(m["content"].is_string(), "message {i}: content must be a string: {m}");
        let allowed: &[&str] = match role {
            "system" | "user" => &["role", "content"],
            "assistant" => &["role", "content", "tool_calls"],
            "tool" => &["role", "content", "tool_name"],
            other => panic!("message {i}: unknown role {other}"),
        };
        for key in m.as_object().unwrap().keys() {
            assert!(allowed.contains(&key.as_str()), "message {i} ({role}): key {key}");
        }
        match role {
            "assistant" => {
                names_in_scope.clear();
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    assert_eq!(c.as_object().unwrap().len(), 1, "{c}");
                    let f = &c["function"];
                    assert!(f["name"].as_str().is_some_and(|n| !n.is_empty()), "{c}");
                    assert!(f["arguments"].is_object(), "arguments must be an object: {c}");
                    names_in_scope.push(f["name"].as_str().unwrap().to_owned());
                }
            }
            "tool" => {
                let name = m["tool_name"].as_str().unwrap();
                assert!(names_in_scope.iter().any(|n| n == name), "message {i}: {name}");
            }
            "user" => names_in_scope.clear(),
            _ => {}
        }
    }
    for t in body["tools"].as_array().into_iter().flatten() {
        assert_eq!(t["type"], "function");
        assert!(t["function"]["parameters"].is_object());
    }
}

#[tokio::test]
async fn context_handoff_from_other_providers() {
    let anthropic = AssistantMessage {
        content: vec![
            ContentBlock::Reasoning {
                text: "SECRET-REASONING".into(),
                signature: Some("SIG-123".into()),
                redacted: None,
            },
            ContentBlock::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some("REDACTED-DATA".into()),
            },
            ContentBlock::text("Fetching gold."),
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "get_price".into(),
                input: json!({"symbol": "XAUUSD"}),
                input_error: None,
            },
            ContentBlock::ToolUse {
                id: "toolu_02".into(),
                name: "get_kline".into(),
                input: Value::String("{\"symbol\": \"XAG".into()),
                input_error: Some("the arguments are not valid JSON".into()),
            },
        ],
        model: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        stop_reason: StopReason::ToolUse,
        usage: Usage::default(),
    };
    let deepseek = AssistantMessage {
        content: vec![
            ContentBlock::Reasoning {
                text: "DS-REASONING".into(),
                signature: None,
                redacted: None,
            },
            ContentBlock::ToolUse {
                id: "call_00_x".into(),
                name: "get_news".into(),
                input: json!({"q": "gold"}),
                input_error: None,
            },
        ],
        model: "deepseek-chat".into(),
        provider: "deepseek".into(),
        stop_reason: StopReason::ToolUse,
        usage: Usage::default(),
    };
    let request = ChatRequest {
        model: "gpt-oss:20b".into(),
        messages: vec![
            Message::system("You build dashboards."),
            Message::user("gold and silver"),
            Message::Assistant(anthropic),
            Message::User {
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "toolu_01".into(),
                        content: "{\"price\":2650.1}".into(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "toolu_02".into(),
                        content: "the arguments are not valid JSON".into(),
                        is_error: true,
                    },
                ],
            },
            Message::Assistant(deepseek),
            Message::tool_result("call_00_x", "[\"gold rallies\"]", false),
            Message::user("now chart it"),
        ],
        tools: vec![ToolDefinition {
            name: "get_price".into(),
            description: "Latest price".into(),
            input_schema: json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
        }],
        max_tokens: Some(256),
        temperature: Some(0.3),
        thinking: Some(boardsmith::llm::Thinking::Enabled {
            effort: boardsmith::llm::Effort::Low,
            budget_tokens: None,
        }),
        ..ChatRequest::default()
    };
    let mock = MockLlm::start(Script { turns: vec![steps(vec![text_step("Charted.", 0)])] }, 0)
        .await
        .unwrap();
    let provider = provider_at(mock.url(), Some("sk-ollama"));
    let message = provider.complete(request).await.unwrap();
    assert_eq!(message.text(), "Charted.");
    let recorded = &mock.requests()[0];
    assert_eq!(recorded.auth.as_deref(), Some("Bearer sk-ollama"));
    let body = &recorded.body;
    assert_valid_ollama_chat(body);
    let text = body.to_string();
    for dropped in ["SECRET-REASONING", "SIG-123", "REDACTED-DATA", "DS-REASONING"] {
        assert!(!text.contains(dropped), "{dropped} replayed: {text}");
    }
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You build dashboards."},
            {"role": "user", "content": "gold and silver"},
            {"role": "assistant", "content": "Fetching gold.", "tool_calls": [
                {"function": {"name": "get_price", "arguments": {"symbol": "XAUUSD"}}},
                {"function": {"name": "get_kline", "arguments": {"_invalid_arguments": "{\"symbol\": \"XAG"}}},
            ]},
            {"role": "tool", "content": "{\"price\":2650.1}", "tool_name": "get_price"},
            {"role": "tool", "content": "Error: the arguments are not valid JSON", "tool_name": "get_kline"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "get_news", "arguments": {"q": "gold"}}},
            ]},
            {"role": "tool", "content": "[\"gold rallies\"]", "tool_name": "get_news"},
            {"role": "user", "content": "now chart it"},
        ])
    );
    assert_eq!(body["think"], "low");
    assert_eq!(body["options"], json!({"temperature": 0.3, "num_predict": 256}));
}

#[tokio::test]
async fn health_check_lists_tags_and_reports_an_unreachable_server() {
    let (_mock, provider) = start(vec![]).await;
    provider.health_check().await.unwrap();
    assert_eq!(provider.kind(), ProviderKind::Ollama);
    assert_eq!(provider.key(), "ollama");
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let down = provider_at(format!("http://{free}"), None);
    let e = down.health_check().await.unwrap_err();
    assert!(matches!(e, LlmError::Connection { .. }), "{e:?}");
}
