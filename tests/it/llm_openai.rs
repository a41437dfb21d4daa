//! The OpenAI-compatible provider against the scripted mock upstream over real loopback HTTP:
//! golden event sequences, every wire quirk of the dialect as exact bytes, faults and retries,
//! true streaming, and a history from another provider replayed to this one.

use std::time::{Duration, Instant};

use boardsmith::llm::http::{InteractionLog, RetryPolicy, Timeouts, Transport};
use boardsmith::llm::mock::{Fault, MockLlm, Script, Step, Turn};
use boardsmith::llm::openai::OpenAiProvider;
use boardsmith::llm::{
    ApiKey, AssistantMessage, ChatRequest, ContentBlock, Family, LlmError, Message, Provider,
    ProviderKind, ProviderSettings, StopReason, StreamEvent as E, TimeoutStage, Usage,
};
use futures::StreamExt;
use serde_json::{Value, json};

// -- helpers ------------------------------------------------------------------------------

/// Small waits so every test stays well under two seconds.
fn transport() -> Transport {
    crate::support::llm_transport(Duration::from_secs(1), Duration::from_millis(300), 2)
}

async fn mock(turns: Vec<Turn>) -> MockLlm {
    MockLlm::start(Script { turns }, 0).await.unwrap()
}

fn provider_with(mock: &MockLlm, family: Family, key: Option<&str>) -> OpenAiProvider {
    OpenAiProvider::new(ProviderSettings {
        key: "openai".into(),
        kind: ProviderKind::Openai,
        base_url: format!("{}/v1/", mock.url()),
        api_key: key.map(ApiKey::new),
        family,
        transport: transport(),
    })
}

fn provider(mock: &MockLlm) -> OpenAiProvider {
    provider_with(mock, Family::Openai, Some("sk-test"))
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        model: "gpt-test".into(),
        messages: vec![Message::system("You build dashboards."), Message::user(text)],
        ..ChatRequest::default()
    }
}

fn steps(steps: Vec<Step>) -> Turn {
    Turn { steps, ..Turn::default() }
}

fn text_step(text: &str, chunk: usize) -> Step {
    Step::Text { text: text.into(), chunk: Some(chunk) }
}

fn tool_step(id: &str, name: &str, arguments: Value, fragments: usize) -> Step {
    Step::ToolCall { id: Some(id.into()), name: name.into(), arguments, fragments: Some(fragments) }
}

/// A turn sending these exact body chunks.
fn raw(chunks: &[&str]) -> Turn {
    Turn { raw: Some(chunks.iter().map(|c| (*c).to_owned()).collect()), ..Turn::default() }
}

async fn run(turn: Turn) -> Vec<E> {
    let mock = mock(vec![turn]).await;
    provider(&mock).stream(ask("gold")).collect().await
}

fn text(t: &str) -> E {
    E::TextDelta { text: t.into() }
}

fn reasoning(t: &str) -> E {
    E::ReasoningDelta { text: t.into() }
}

fn reasoning_end() -> E {
    E::ReasoningEnd { signature: None, redacted: None }
}

fn start(index: usize, id: &str, name: &str) -> E {
    E::ToolCallStart { index, id: id.into(), name: name.into() }
}

fn args(index: usize, a: &str) -> E {
    E::ToolCallDelta { index, args_delta: a.into() }
}

fn end(index: usize, id: &str, name: &str, input: Value) -> E {
    E::ToolCallEnd { index, id: id.into(), name: name.into(), input, input_error: None }
}

fn done(stop_reason: StopReason) -> E {
    E::Done { stop_reason }
}

fn zero_usage() -> E {
    E::Usage(Usage::default())
}

/// The input and input error of the call at `index`.
fn call_end(events: &[E], at: usize) -> (String, Value, Option<String>) {
    events
        .iter()
        .find_map(|e| match e {
            E::ToolCallEnd { index, id, input, input_error, .. } if *index == at => {
                Some((id.clone(), input.clone(), input_error.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no end of call {at}: {events:?}"))
}

// -- golden sequences ---------------------------------------------------------------------

#[tokio::test]
async fn golden_text() {
    let mock = mock(vec![steps(vec![text_step("Gold is up 2%.", 5)])]).await;
    let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
    assert_eq!(
        events,
        [
            E::TextStart,
            text("Gold "),
            text("is up"),
            text(" 2%."),
            E::TextEnd,
            zero_usage(),
            done(StopReason::EndTurn),
        ]
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].auth.as_deref(), Some("Bearer sk-test"));
    assert_eq!(
        requests[0].body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You build dashboards."},
                {"role": "user", "content": "gold"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn golden_reasoning_and_text() {
    let events = run(steps(vec![
        Step::Reasoning { text: "User wants gold.".into(), chunk: Some(8), signature: None },
        text_step("Here it is.", 100),
    ]))
    .await;
    assert_eq!(
        events,
        [
            E::ReasoningStart,
            reasoning("User wan"),
            reasoning("ts gold."),
            reasoning_end(),
            E::TextStart,
            text("Here it is."),
            E::TextEnd,
            zero_usage(),
            done(StopReason::EndTurn),
        ]
    );
}

#[tokio::test]
async fn golden_single_tool_call_with_fragmented_arguments() {
    let mock =
        mock(vec![steps(vec![tool_step("call_1", "search", json!({"q": "gold"}), 3)])]).await;
    let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
    assert_eq!(
        events,
        [
            start(0, "call_1", "search"),
            args(0, "{\"q\""),
            args(0, ":\"go"),
            args(0, "ld\"}"),
            end(0, "call_1", "search", json!({"q": "gold"})),
            zero_usage(),
            done(StopReason::ToolUse),
        ]
    );
    // `complete` folds the same stream into the message.
    let message = provider(&mock).complete(ask("gold")).await.unwrap();
    assert_eq!(
        message,
        AssistantMessage {
            content: vec![ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "search".into(),
                input: json!({"q": "gold"}),
                input_error: None,
            }],
            model: "gpt-test".into(),
            provider: "openai".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        }
    );
}

#[tokio::test]
async fn golden_parallel_tool_calls() {
    let events = run(steps(vec![
        text_step("Two lookups.", 100),
        tool_step("call_a", "get_weather", json!({"location": "Paris"}), 2),
        tool_step("call_b", "get_time", json!({"tz": "CET"}), 1),
    ]))
    .await;
    assert_eq!(
        events,
        [
            E::TextStart,
            text("Two lookups."),
            E::TextEnd,
            start(0, "call_a", "get_weather"),
            args(0, "{\"location"),
            args(0, "\":\"Paris\"}"),
            start(1, "call_b", "get_time"),
            args(1, "{\"tz\":\"CET\"}"),
            end(0, "call_a", "get_weather", json!({"location": "Paris"})),
            end(1, "call_b", "get_time", json!({"tz": "CET"})),
            zero_usage(),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn golden_usage() {
    let usage = Usage {
        input_tokens: 1200,
        output_tokens: 340,
        reasoning_tokens: 200,
        cache_read_tokens: 1024,
        cache_write_tokens: 0,
    };
    let turn = Turn { usage: Some(usage), ..steps(vec![text_step("ok", 10)]) };
    let events = run(turn).await;
    assert_eq!(
        events,
        [E::TextStart, text("ok"), E::TextEnd, E::Usage(usage), done(StopReason::EndTurn)]
    );
}

#[tokio::test]
async fn max_tokens_and_content_filter_stops() {
    for stop in [StopReason::MaxTokens, StopReason::ContentFilter] {
        let turn = Turn { stop: Some(stop), ..steps(vec![text_step("cut", 10)]) };
        let events = run(turn).await;
        assert_eq!(events.last(), Some(&done(stop)));
    }
}

// -- quirks (exact wire bytes) ------------------------------------------------------------

const ROLE: &str = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
const FINISH_TOOLS: &str = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n";
const FINISH_STOP: &str =
    "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
const DONE: &str = "data: [DONE]\n\n";

#[tokio::test]
async fn quirk_reasoning_before_the_role_chunk_and_the_reasoning_field() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"User wan\"},\"finish_reason\":null}]}\n\n",
        ROLE,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"ts gold.\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Gold.\",\"reasoning_content\":null},\"finish_reason\":null}]}\n\n",
        FINISH_STOP,
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            E::ReasoningStart,
            reasoning("User wan"),
            reasoning("ts gold."),
            reasoning_end(),
            E::TextStart,
            text("Gold."),
            E::TextEnd,
            done(StopReason::EndTurn),
        ]
    );
}

#[tokio::test]
async fn quirk_id_resent_on_every_chunk() {
    let events = run(raw(&[
        ROLE,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"arguments\":\"{\\\"q\\\":\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"\\\"gold\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        FINISH_TOOLS,
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            start(0, "call_1", "search"),
            args(0, "{\"q\":"),
            args(0, "\"gold\"}"),
            end(0, "call_1", "search", json!({"q": "gold"})),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_numeric_id() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":42,\"function\":{\"name\":\"search\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n",
        FINISH_TOOLS,
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            start(0, "42", "search"),
            args(0, "{}"),
            end(0, "42", "search", json!({})),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_the_string_null_as_id() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"null\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"null\",\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":null}]}\n\n",
        FINISH_TOOLS,
        DONE,
    ]))
    .await;
    let E::ToolCallStart { id, .. } = &events[0] else { panic!("{events:?}") };
    assert!(id.starts_with("call_") && id.len() > 10, "a made-up id: {id}");
    assert_eq!(
        events,
        [
            start(0, id, "search"),
            args(0, "{\"q\":"),
            args(0, "1}"),
            end(0, id, "search", json!({"q": 1})),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_every_call_at_index_zero_with_distinct_ids() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"price\",\"arguments\":\"{\\\"s\\\":\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"XAU\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"price\",\"arguments\":\"{\\\"s\\\":\\\"XAG\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        FINISH_TOOLS,
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            start(0, "call_a", "price"),
            args(0, "{\"s\":"),
            args(0, "\"XAU\"}"),
            start(1, "call_b", "price"),
            args(1, "{\"s\":\"XAG\"}"),
            end(0, "call_a", "price", json!({"s": "XAU"})),
            end(1, "call_b", "price", json!({"s": "XAG"})),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_missing_index_falls_back_to_the_id() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"y\\\":\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"arguments\":\"2}\"}}]},\"finish_reason\":null}]}\n\n",
        FINISH_TOOLS,
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            start(0, "a", "f"),
            args(0, "{\"x\":"),
            start(1, "b", "g"),
            args(1, "{\"y\":"),
            args(0, "1}"),
            args(1, "2}"),
            end(0, "a", "f", json!({"x": 1})),
            end(1, "b", "g", json!({"y": 2})),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_whole_call_in_one_delta_with_finish_reason_and_content() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Checking.\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\\\"gold\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            E::TextStart,
            text("Checking."),
            E::TextEnd,
            start(0, "call_1", "search"),
            args(0, "{\"q\":\"gold\"}"),
            end(0, "call_1", "search", json!({"q": "gold"})),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_finish_reason_in_the_last_content_chunk() {
    let events = run(raw(&[
        ROLE,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Gold \"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"is up.\"},\"finish_reason\":\"length\"}]}\n\n",
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [E::TextStart, text("Gold "), text("is up."), E::TextEnd, done(StopReason::MaxTokens)]
    );
}

#[tokio::test]
async fn quirk_missing_finish_reason_ends_at_done() {
    // xAI: no `finish_reason` key at all.
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"One call.\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_x\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"total_tokens\":13}}\n\n",
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            E::TextStart,
            text("One call."),
            E::TextEnd,
            start(0, "call_x", "f"),
            args(0, "{}"),
            end(0, "call_x", "f", json!({})),
            E::Usage(Usage { input_tokens: 9, output_tokens: 4, ..Usage::default() }),
            done(StopReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn quirk_usage_chunk_with_empty_choices_and_deepseek_cache_fields() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":null}],\"usage\":null}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
        "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120,\"prompt_cache_hit_tokens\":64,\"prompt_cache_miss_tokens\":36,\"completion_tokens_details\":{\"reasoning_tokens\":7}}}\n\n",
        DONE,
    ]))
    .await;
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 20,
        reasoning_tokens: 7,
        cache_read_tokens: 64,
        cache_write_tokens: 0,
    };
    assert_eq!(
        events,
        [E::TextStart, text("ok"), E::TextEnd, E::Usage(usage), done(StopReason::EndTurn)]
    );
}

#[tokio::test]
async fn quirk_unknown_fields_and_obfuscation_are_ignored() {
    let events = run(raw(&[
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"obfuscation\":\"Zx81\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,\"finish_reason\":null,\"native_finish_reason\":null}],\"x_future\":{\"a\":[1,2]}}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"obfuscation\":\"q\"}\n\n",
        DONE,
    ]))
    .await;
    assert_eq!(events, [E::TextStart, text("hi"), E::TextEnd, done(StopReason::EndTurn)]);
}

#[tokio::test]
async fn quirk_sse_framing_crlf_split_no_space_and_comments() {
    let events = run(raw(&[
        ": keep-alive\r\n\r\n",
        "data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"金\"},\"finish_reason\":null}]}\r",
        "\n\r",
        "\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"价\"},\"finish_reason\":\"stop\"}]}\r\n\r\n",
        "data: [DONE]\r\n\r\n",
    ]))
    .await;
    assert_eq!(
        events,
        [E::TextStart, text("金"), text("价"), E::TextEnd, done(StopReason::EndTurn)]
    );
}

/// One call whose arguments arrive as `raw_args` (a JSON string literal's content).
async fn call_with_arguments(raw_args: &str) -> Vec<E> {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n";
    let frag = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{}}}}}]}},\"finish_reason\":null}}]}}\n\n",
        json!(raw_args)
    );
    run(raw(&[first, frag.as_str(), FINISH_TOOLS, DONE])).await
}

#[tokio::test]
async fn repair_empty_arguments_are_an_empty_object() {
    let events = call_with_arguments("").await;
    assert_eq!(
        events,
        [start(0, "call_1", "f"), end(0, "call_1", "f", json!({})), done(StopReason::ToolUse)]
    );
}

#[tokio::test]
async fn repair_an_empty_object_before_the_real_one() {
    let events = call_with_arguments("{}{\"stock\":\"MSFT\"}").await;
    assert_eq!(call_end(&events, 0), ("call_1".into(), json!({"stock": "MSFT"}), None));
}

#[tokio::test]
async fn repair_trailing_special_tokens() {
    let events = call_with_arguments("{\"q\":\"gold\"}<|call|>").await;
    assert_eq!(call_end(&events, 0), ("call_1".into(), json!({"q": "gold"}), None));
}

#[tokio::test]
async fn repair_several_objects_are_an_input_error_not_a_dropped_call() {
    let raw_args = "{\"a\":1}{\"b\":2}";
    let events = call_with_arguments(raw_args).await;
    let (id, input, error) = call_end(&events, 0);
    assert_eq!((id.as_str(), input), ("call_1", json!(raw_args)));
    let error = error.unwrap();
    assert!(error.contains("2 JSON values"), "{error}");
    assert_eq!(events.last(), Some(&done(StopReason::ToolUse)));
}

#[tokio::test]
async fn an_error_inside_the_stream_is_the_providers_error() {
    let events = run(raw(&[
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"},\"finish_reason\":null}]}\n\n",
        "data: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"server_error\",\"code\":null}}\n\n",
        DONE,
    ]))
    .await;
    assert_eq!(
        events,
        [
            E::TextStart,
            text("par"),
            E::Error(LlmError::Api {
                provider: "openai".into(),
                error_type: "server_error".into(),
                message: "upstream overloaded".into(),
            }),
        ]
    );
}

// -- faults -------------------------------------------------------------------------------

fn status(status: u16, retry_after: Option<f64>, message: &str) -> Turn {
    Turn {
        times: Some(1),
        fault: Some(Fault::Status { status, retry_after, message: Some(message.into()) }),
        ..Turn::default()
    }
}

fn ok_turn() -> Turn {
    steps(vec![text_step("fine", 10)])
}

fn is_fine(events: &[E]) -> bool {
    events == [E::TextStart, text("fine"), E::TextEnd, zero_usage(), done(StopReason::EndTurn)]
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    let mock = mock(vec![status(429, Some(0.4), "slow down"), ok_turn()]).await;
    let started = Instant::now();
    let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
    let waited = started.elapsed();
    assert!(is_fine(&events), "{events:?}");
    assert_eq!(mock.requests().len(), 2);
    assert!(waited >= Duration::from_millis(400), "retried after {waited:?}");
}

#[tokio::test]
async fn overload_and_server_errors_are_retried() {
    for code in [529, 500, 503] {
        let mock = mock(vec![status(code, None, "overloaded"), ok_turn()]).await;
        let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
        assert!(is_fine(&events), "{code}: {events:?}");
        assert_eq!(mock.requests().len(), 2, "{code}");
    }
}

#[tokio::test]
async fn client_errors_are_not_retried_and_carry_the_providers_message() {
    for (code, message) in [(400, "messages: invalid role"), (401, "Incorrect API key provided")] {
        let mock = mock(vec![status(code, None, message), ok_turn()]).await;
        let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
        assert_eq!(
            events,
            [E::Error(LlmError::Http {
                provider: "openai".into(),
                status: code,
                message: message.into(),
                retry_after: None,
            })]
        );
        assert_eq!(mock.requests().len(), 1, "{code}");
    }
}

#[tokio::test]
async fn a_malformed_chunk_is_a_protocol_error() {
    let turn =
        Turn { fault: Some(Fault::Malformed { after: 2 }), ..steps(vec![text_step("abcdef", 2)]) };
    let mock = mock(vec![turn, ok_turn()]).await;
    let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
    assert_eq!(events[..2], [E::TextStart, text("ab")]);
    let [E::Error(LlmError::Protocol { provider, message })] = &events[2..] else {
        panic!("{events:?}")
    };
    assert_eq!(provider, "openai");
    assert!(message.contains("malformed chunk") && message.contains("{\"choices\""), "{message}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_truncated_stream_is_a_protocol_error_and_never_retried() {
    // Output started (role chunk and two text deltas), then the body ends: no retry, even
    // though the next turn would succeed.
    let turn =
        Turn { fault: Some(Fault::Truncate { after: 3 }), ..steps(vec![text_step("abcdef", 2)]) };
    let mock = mock(vec![Turn { times: Some(1), ..turn }, ok_turn()]).await;
    let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
    assert_eq!(events[..3], [E::TextStart, text("ab"), text("cd")]);
    let [E::Error(LlmError::Protocol { message, .. })] = &events[3..] else { panic!("{events:?}") };
    assert!(message.contains("truncated"), "{message}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_stall_beyond_the_idle_timeout_is_an_idle_timeout_without_retry() {
    let turn = Turn {
        times: Some(1),
        fault: Some(Fault::Stall { after: 2, ms: 1500 }),
        ..steps(vec![text_step("abcdef", 2)])
    };
    let mock = mock(vec![turn, ok_turn()]).await;
    let started = Instant::now();
    let events: Vec<E> = provider(&mock).stream(ask("gold")).collect().await;
    assert!(started.elapsed() < Duration::from_millis(1200), "{:?}", started.elapsed());
    assert_eq!(
        events,
        [
            E::TextStart,
            text("ab"),
            E::Error(LlmError::Timeout {
                provider: "openai".into(),
                stage: TimeoutStage::Idle,
                after_ms: 300,
            }),
        ]
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_slow_stream_whose_chunks_each_arrive_within_the_idle_timeout_completes() {
    // 8 chunks 100 ms apart: 800 ms in all, well past the 300 ms idle timeout, which must
    // count from the last chunk, not from the first.
    let turn = Turn { delay_ms: 100, ..steps(vec![text_step("abcdefgh", 1)]) };
    let events = run(turn).await;
    assert!(!events.iter().any(|e| matches!(e, E::Error(_))), "{events:?}");
    let deltas = events.iter().filter(|e| matches!(e, E::TextDelta { .. })).count();
    assert_eq!(deltas, 8, "{events:?}");
}

#[tokio::test]
async fn an_unreachable_server_is_a_connection_error() {
    let settings = ProviderSettings {
        key: "openai".into(),
        kind: ProviderKind::Openai,
        // A port nobody listens on.
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: None,
        family: Family::Generic,
        transport: Transport::new(
            Timeouts { connect: Duration::from_millis(300), ..Timeouts::default() },
            RetryPolicy { max_retries: 0, ..RetryPolicy::default() },
            InteractionLog::default(),
        ),
    };
    let p = OpenAiProvider::new(settings);
    let events: Vec<E> = p.stream(ask("gold")).collect().await;
    assert!(matches!(events.as_slice(), [E::Error(LlmError::Connection { .. })]), "{events:?}");
    assert!(p.health_check().await.is_err());
}

// -- true streaming -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_delta_reaches_the_consumer_before_the_next_is_sent() {
    let turn = Turn { delay_ms: 25, ..steps(vec![text_step("abcdefgh", 1)]) };
    let mock = mock(vec![turn]).await;
    let mut stream = provider(&mock).stream(ask("gold"));
    let mut deltas = Vec::new();
    while let Some(event) = stream.next().await {
        if let E::TextDelta { text } = event {
            deltas.push((text, Instant::now()));
        }
    }
    let sent = mock.sent();
    // Chunk 0 is the role chunk; chunks 1..=8 carry one character each.
    assert_eq!(deltas.iter().map(|(t, _)| t.as_str()).collect::<String>(), "abcdefgh");
    assert_eq!(deltas.len(), 8, "one upstream delta, one event");
    for (k, (text, at)) in deltas.iter().enumerate() {
        let this = &sent[k + 1];
        let next = &sent[k + 2];
        assert!(*at >= this.at, "{text} seen before it was sent");
        assert!(
            *at < next.at,
            "{text} seen {:?} after its chunk, after the next chunk was sent",
            at.duration_since(this.at)
        );
    }
}

// -- context handoff ----------------------------------------------------------------------

/// A history an Anthropic model produced: signed reasoning, redacted reasoning, text, a call
/// with parsed arguments and one whose arguments could not be parsed, results in a `tool`
/// message and in an Anthropic-style user message.
fn anthropic_history() -> Vec<Message> {
    let assistant = |content| {
        Message::Assistant(AssistantMessage {
            content,
            model: "claude-test".into(),
            provider: "anthropic".into(),
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        })
    };
    vec![
        Message::system("You build dashboards."),
        Message::user("chart gold"),
        assistant(vec![
            ContentBlock::Reasoning {
                text: "Need the kline first.".into(),
                signature: Some("EqQBCkYIARgCIkD".into()),
                redacted: None,
            },
            ContentBlock::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some("ErcBCkgIARABGAIiQ".into()),
            },
            ContentBlock::text("Fetching data."),
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "execute".into(),
                input: json!({"code": "return 1;"}),
                input_error: None,
            },
            ContentBlock::ToolUse {
                id: "toolu_02".into(),
                name: "search".into(),
                input: json!("{\"q\": gold}"),
                input_error: Some("the arguments are not valid JSON".into()),
            },
        ]),
        Message::Tool {
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_01".into(),
                    content: "{\"rows\":30}".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_02".into(),
                    content: "the arguments are not valid JSON".into(),
                    is_error: true,
                },
            ],
        },
        assistant(vec![ContentBlock::ToolUse {
            id: "toolu_03".into(),
            name: "ping".into(),
            input: json!({}),
            input_error: None,
        }]),
        Message::User {
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_03".into(),
                content: "pong".into(),
                is_error: false,
            }],
        },
    ]
}

/// Structural validity for chat completions: every tool message answers a call of the
/// assistant message before it, every call is answered, arguments are strings.
fn assert_valid_chat_completions(messages: &[Value]) {
    let mut pending: Vec<String> = Vec::new();
    for m in messages {
        match m["role"].as_str().unwrap() {
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap();
                let pos = pending.iter().position(|p| p == id).expect("answers a pending call");
                pending.remove(pos);
                assert!(m["content"].is_string());
            }
            role => {
                assert!(pending.is_empty(), "unanswered calls {pending:?} before a {role} message");
                for call in m["tool_calls"].as_array().into_iter().flatten() {
                    assert_eq!(call["type"], "function");
                    assert!(call["function"]["arguments"].is_string(), "{call}");
                    pending.push(call["id"].as_str().unwrap().to_owned());
                }
                let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
                for k in &keys {
                    assert!(
                        ["role", "content", "tool_calls", "reasoning_content"]
                            .contains(&k.as_str()),
                        "unexpected key {k} in {m}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn a_history_from_another_provider_replays_validly() {
    let answer = Turn {
        when: boardsmith::llm::mock::Match { has_tool_results: Some(true), ..Default::default() },
        ..steps(vec![text_step("Chart ready.", 100)])
    };
    let mock = mock(vec![answer]).await;
    let request = ChatRequest {
        model: "deepseek-test".into(),
        messages: anthropic_history(),
        max_tokens: Some(1000),
        ..ChatRequest::default()
    };
    for family in [Family::Deepseek, Family::Openai] {
        let message = provider_with(&mock, family, None).complete(request.clone()).await.unwrap();
        assert_eq!(message.text(), "Chart ready.");
    }
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].auth, None);
    let first_turn = |reasoning: Option<&str>| {
        let mut m = json!({
            "role": "assistant",
            "content": "Fetching data.",
            "tool_calls": [
                {"id": "toolu_01", "type": "function",
                 "function": {"name": "execute", "arguments": "{\"code\":\"return 1;\"}"}},
                {"id": "toolu_02", "type": "function",
                 "function": {"name": "search", "arguments": "{\"q\": gold}"}},
            ],
        });
        if let Some(r) = reasoning {
            m["reasoning_content"] = json!(r);
        }
        m
    };
    let second_turn = |reasoning: Option<&str>| {
        let mut m = json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": "toolu_03", "type": "function",
                            "function": {"name": "ping", "arguments": "{}"}}],
        });
        if let Some(r) = reasoning {
            m["reasoning_content"] = json!(r);
        }
        m
    };
    let expected = |reasoning: [Option<&str>; 2]| {
        json!([
            {"role": "system", "content": "You build dashboards."},
            {"role": "user", "content": "chart gold"},
            first_turn(reasoning[0]),
            {"role": "tool", "tool_call_id": "toolu_01", "content": "{\"rows\":30}"},
            {"role": "tool", "tool_call_id": "toolu_02",
             "content": "the arguments are not valid JSON"},
            second_turn(reasoning[1]),
            {"role": "tool", "tool_call_id": "toolu_03", "content": "pong"},
        ])
    };
    // DeepSeek: reasoning text on every tool-call turn (empty when there was none); the
    // Anthropic signature and redacted data never leave.
    let deepseek = &requests[0].body;
    assert_eq!(deepseek["messages"], expected([Some("Need the kline first."), Some("")]));
    assert_eq!(deepseek["max_tokens"], 1000);
    let text = deepseek.to_string();
    assert!(!text.contains("EqQBCkYIARgCIkD") && !text.contains("ErcBCkgIARABGAIiQ"));
    // OpenAI: no reasoning at all.
    let openai = &requests[1].body;
    assert_eq!(openai["messages"], expected([None, None]));
    assert_eq!(openai["max_completion_tokens"], 1000);
    for body in [deepseek, openai] {
        assert_valid_chat_completions(body["messages"].as_array().unwrap());
    }
}

#[tokio::test]
async fn health_check_lists_models() {
    let mock = mock(vec![]).await;
    provider(&mock).health_check().await.unwrap();
    let p = provider(&mock);
    assert_eq!((p.key(), p.kind(), p.family()), ("openai", ProviderKind::Openai, Family::Openai));
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The interaction log: the request and every upstream delta at debug, with the trace id and
/// stage; secret-looking fields masked; nothing when the switch is off.
#[tokio::test(flavor = "current_thread")]
async fn the_interaction_log_has_the_request_and_every_delta() {
    // Tracing caches each callsite's interest process-wide: another test's thread reaching a
    // callsite while this one's subscriber is in place can leave it cached as "never" (0 delta
    // lines, seen under load). So the check runs alone, in a child process of this binary.
    const CHILD: &str = "BOARDSMITH_INTERACTION_LOG_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let name = "llm_openai::the_interaction_log_has_the_request_and_every_delta";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
        return;
    }
    let m = mock(vec![steps(vec![text_step("Gold is up", 3)])]).await;
    let run = |enabled: bool| {
        let m = m.clone();
        async move {
            let captured = Captured::default();
            let writer = captured.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::DEBUG)
                .with_writer(move || writer.clone())
                .with_ansi(false)
                .finish();
            let _guard = tracing::subscriber::set_default(subscriber);
            // Callsite interest is cached process-wide: a callsite first hit by another test's
            // thread while this subscriber was being registered can stay cached as "never"
            // (0 delta lines seen once in a full parallel run). Recompute it now.
            tracing::callsite::rebuild_interest_cache();
            let mut p = ProviderSettings {
                key: "openai".into(),
                kind: ProviderKind::Openai,
                base_url: format!("{}/v1", m.url()),
                api_key: Some(ApiKey::new("sk-secret-1")),
                family: Family::Openai,
                transport: transport(),
            };
            p.transport.log = InteractionLog { enabled, mask_sensitive: true };
            let mut req = ask("gold?");
            req.trace_id = Some("trace-42".into());
            // A secret-looking field in a tool schema must be masked in the log.
            req.tools = vec![boardsmith::llm::ToolDefinition {
                name: "login".into(),
                description: "d".into(),
                input_schema: json!({"type": "object", "properties": {}, "password": "hunter2"}),
            }];
            let events: Vec<E> = OpenAiProvider::new(p).stream(req).collect().await;
            assert!(matches!(events.last(), Some(E::Done { .. })), "{events:?}");
            String::from_utf8(captured.0.lock().unwrap().clone()).unwrap()
        }
    };
    let log = run(true).await;
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("trace-42")).collect();
    assert!(lines.iter().any(|l| l.contains("stage=\"request\"")), "{log}");
    // Role chunk, 4 text chunks, finish chunk, usage chunk, [DONE].
    let deltas = lines.iter().filter(|l| l.contains("stage=\"delta\"")).count();
    assert!(deltas >= 6, "{deltas} delta lines: {log}");
    assert!(!log.contains("sk-secret-1") && !log.contains("hunter2"), "{log}");
    assert!(run(false).await.lines().all(|l| !l.contains("trace-42")));
}
