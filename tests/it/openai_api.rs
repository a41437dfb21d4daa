//! The OpenAI-compatible API (`/v1`) over real HTTP: a real server whose providers are the
//! scripted mock upstream on loopback, speaking OpenAI's and Anthropic's wire formats. Models
//! listed with the registry's facts, non-streamed and streamed completions (one chunk per
//! upstream delta, usage, `[DONE]`), tool calls both ways, and every error as OpenAI's error
//! object with a proper status. The official clients are the outside peers in
//! `tests/clients/`.

use std::sync::Arc;

use boardsmith::llm::mock::{Fault, MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp};

/// A server with two providers on the same mock: `mock` (OpenAI wire) and `claude`
/// (Anthropic wire).
pub(crate) async fn app_with(mock: &MockLlm) -> TestApp {
    let url = mock.url();
    let text = format!(
        r#"
[providers.mock]
kind = "openai"
base_url = "{url}/v1"
requires_key = false
default_model = "mock-model"
models = [{{ id = "mock-model", context_window = 32000, input_price = 1.0, output_price = 2.0 }}]
timeouts = {{ connect = 1, first_byte = 5, idle = 5 }}
retry = {{ max_retries = 0 }}

[providers.claude]
kind = "anthropic"
base_url = "{url}"
requires_key = false
default_model = "claude-sonnet-4-5"
timeouts = {{ connect = 1, first_byte = 5, idle = 5 }}
retry = {{ max_retries = 0 }}
"#
    );
    let llm = boardsmith::llm::config::LlmConfig::parse(
        &text,
        std::path::Path::new("test.toml"),
        &|_| None,
    )
    .unwrap();
    support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(llm);
    })
    .await
}

async fn mock(turns: Vec<Turn>) -> MockLlm {
    MockLlm::start(Script { turns }, 0).await.unwrap()
}

pub(crate) fn text_turn(text: &str, chunk: usize) -> Turn {
    Turn {
        steps: vec![Step::Text { text: text.into(), chunk: Some(chunk) }],
        usage: Some(boardsmith::llm::Usage {
            input_tokens: 12,
            output_tokens: 5,
            cache_read_tokens: 4,
            ..Default::default()
        }),
        ..Turn::default()
    }
}

async fn completions(app: &TestApp, body: Value) -> reqwest::Response {
    app.http.post(app.url("/v1/chat/completions")).json(&body).send().await.unwrap()
}

/// The JSON of every `data:` frame but `[DONE]`, and whether `[DONE]` ended the stream.
async fn frames(response: reqwest::Response) -> (Vec<Value>, bool) {
    let text = response.text().await.unwrap();
    let mut out = Vec::new();
    let mut done = false;
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let data =
            block.strip_prefix("data: ").unwrap_or_else(|| panic!("not a data frame: {block}"));
        if data == "[DONE]" {
            done = true;
        } else {
            assert!(!done, "nothing follows [DONE]: {data}");
            out.push(serde_json::from_str(data).unwrap());
        }
    }
    (out, done)
}

#[tokio::test]
async fn models_are_listed_with_what_the_registry_knows() {
    let mock = mock(vec![]).await;
    let app = app_with(&mock).await;
    let (status, body) = app.get("/v1/models").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["object"], "list");
    let ids: Vec<&str> =
        body["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["mock/mock-model", "claude/claude-sonnet-4-5"]);
    let mock_model = &body["data"][0];
    assert_eq!(mock_model["object"], "model");
    assert_eq!(mock_model["owned_by"], "mock");
    assert_eq!(mock_model["context_window"], 32000);
    assert_eq!(mock_model["pricing"], json!({"input": 1.0, "output": 2.0}));
    // The Anthropic model's facts come from the built-in registry.
    let claude = &body["data"][1];
    assert_eq!(claude["context_window"], 200_000, "{claude}");
    assert_eq!(claude["capabilities"]["reasoning"], true);

    let (status, one) = app.get("/v1/models/claude/claude-sonnet-4-5").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one, *claude);
    let (status, missing) = app.get("/v1/models/gpt-nope").await;
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["error"]["type"], "not_found_error");
    assert!(missing["error"]["message"].as_str().unwrap().contains("gpt-nope"));
}

#[tokio::test]
async fn a_completion_is_answered_in_openai_format_from_either_wire() {
    let mock = mock(vec![text_turn("Carbon is element six.", 5)]).await;
    let app = app_with(&mock).await;
    // The script's usage is each wire's own: Anthropic's input_tokens leaves the cached 4 out,
    // OpenAI's includes them; both come out as OpenAI's (cached included).
    for (model, prompt_tokens) in [("mock/mock-model", 12), ("claude", 16)] {
        let r = completions(
            &app,
            json!({"model": model, "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Tell me about carbon"}
            ], "temperature": 0.2, "max_completion_tokens": 64}),
        )
        .await;
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["object"], "chat.completion");
        assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
        let choice = &body["choices"][0];
        assert_eq!(choice["message"]["role"], "assistant");
        assert_eq!(choice["message"]["content"], "Carbon is element six.");
        assert_eq!(choice["finish_reason"], "stop");
        assert_eq!(body["usage"]["prompt_tokens"], prompt_tokens, "{body}");
        assert_eq!(body["usage"]["completion_tokens"], 5);
        assert_eq!(body["usage"]["total_tokens"], prompt_tokens + 5);
        assert_eq!(body["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
    }
    // What reached the upstreams: the options, in each provider's own format.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["max_completion_tokens"]
            .as_u64()
            .or(requests[0].body["max_tokens"].as_u64()),
        Some(64)
    );
    assert_eq!(requests[0].body["temperature"].as_f64().map(|t| (t * 10.0).round()), Some(2.0));
    assert!(requests[1].body["system"].to_string().contains("Be brief."), "{}", requests[1].body);
    assert_eq!(requests[1].body["max_tokens"], 64);
}

#[tokio::test]
async fn a_stream_sends_one_chunk_per_upstream_delta_then_usage_and_done() {
    let mock = mock(vec![text_turn("Carbon is element six.", 5)]).await;
    let app = app_with(&mock).await;
    let r = completions(
        &app,
        json!({"model": "mock-model", "stream": true, "stream_options": {"include_usage": true},
               "messages": [{"role": "user", "content": "carbon?"}]}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let (chunks, done) = frames(r).await;
    assert!(done, "ends with [DONE]");
    // "Carbon is element six." in pieces of 5 characters: 5 deltas, then finish, then usage.
    let deltas: Vec<&str> =
        chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert_eq!(deltas, ["Carbo", "n is ", "eleme", "nt si", "x."]);
    assert_eq!(chunks.len(), 7, "{chunks:#?}");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(chunks[1]["choices"][0]["delta"].get("role").is_none());
    assert_eq!(chunks[5]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[6]["choices"], json!([]));
    assert_eq!(chunks[6]["usage"]["total_tokens"], 17);
    let id = &chunks[0]["id"];
    assert!(chunks.iter().all(|c| c["id"] == *id && c["object"] == "chat.completion.chunk"));
    assert!(chunks.iter().all(|c| c["model"] == "mock/mock-model"));
}

#[tokio::test]
async fn tool_calls_go_out_and_their_results_come_back() {
    let call = Turn {
        when: boardsmith::llm::mock::Match { has_tool_results: Some(false), ..Default::default() },
        steps: vec![
            Step::Reasoning { text: "Need the weather.".into(), chunk: None, signature: None },
            Step::ToolCall {
                id: Some("call_1".into()),
                name: "weather".into(),
                arguments: json!({"city": "Paris"}),
                fragments: Some(3),
            },
        ],
        ..Turn::default()
    };
    let answer = Turn {
        when: boardsmith::llm::mock::Match {
            tool_result_contains: Some("12C".into()),
            ..Default::default()
        },
        ..text_turn("It is 12C in Paris.", 100)
    };
    let mock = mock(vec![call, answer]).await;
    let app = app_with(&mock).await;
    let tools = json!([{"type": "function", "function": {"name": "weather", "description": "Weather now",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]);
    let question = json!({"role": "user", "content": "Weather in Paris?"});
    // Streamed: the call's id and name first, then its argument fragments.
    let r = completions(
        &app,
        json!({"model": "mock-model", "stream": true, "messages": [question], "tools": tools}),
    )
    .await;
    let (chunks, _) = frames(r).await;
    let calls: Vec<&Value> =
        chunks.iter().filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0)).collect();
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["function"]["name"], "weather");
    let args: String = calls.iter().map(|c| c["function"]["arguments"].as_str().unwrap()).collect();
    assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), json!({"city": "Paris"}));
    assert!(calls.len() >= 3, "fragments stream as they come: {calls:?}");
    assert!(
        chunks.iter().any(|c| c["choices"][0]["delta"]["reasoning_content"] == "Need the weather.")
    );
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "tool_calls");

    // Not streamed: the same call, collected.
    let r =
        completions(&app, json!({"model": "mock-model", "messages": [question], "tools": tools}))
            .await;
    let body: Value = r.json().await.unwrap();
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null, "{body}");
    assert_eq!(message["reasoning_content"], "Need the weather.");
    assert_eq!(message["tool_calls"][0]["id"], "call_1");
    let args: Value =
        serde_json::from_str(message["tool_calls"][0]["function"]["arguments"].as_str().unwrap())
            .unwrap();
    assert_eq!(args, json!({"city": "Paris"}));

    // The client runs the tool and sends the result back.
    let r = completions(
        &app,
        json!({"model": "mock-model", "tools": tools, "messages": [
            question,
            message,
            {"role": "tool", "tool_call_id": "call_1", "content": "12C"}
        ]}),
    )
    .await;
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "It is 12C in Paris.", "{body}");
    // Upstream got the tool definition, the earlier call and its result in OpenAI's format.
    let requests = mock.requests();
    let last = &requests.last().unwrap().body;
    assert_eq!(last["tools"][0]["function"]["name"], "weather");
    let msgs = last["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(msgs[2]["role"], "tool");
    assert_eq!(msgs[2]["tool_call_id"], "call_1");
}

#[tokio::test]
async fn errors_are_openai_error_objects_with_proper_statuses() {
    let limited = Turn {
        when: boardsmith::llm::mock::Match {
            last_user_contains: Some("busy".into()),
            ..Default::default()
        },
        fault: Some(Fault::Status {
            status: 429,
            retry_after: Some(7.0),
            message: Some("slow down".into()),
        }),
        ..Turn::default()
    };
    let broken = Turn {
        when: boardsmith::llm::mock::Match {
            last_user_contains: Some("broken".into()),
            ..Default::default()
        },
        fault: Some(Fault::Status { status: 500, retry_after: None, message: Some("boom".into()) }),
        ..Turn::default()
    };
    let cut = Turn {
        when: boardsmith::llm::mock::Match {
            last_user_contains: Some("cut".into()),
            ..Default::default()
        },
        fault: Some(Fault::Malformed { after: 2 }),
        ..text_turn("This answer will be cut short.", 3)
    };
    let mock = mock(vec![limited, broken, cut]).await;
    let app = app_with(&mock).await;
    let user = |text: &str| json!([{"role": "user", "content": text}]);

    let check = |status: u16, body: &Value, expected: u16, kind: &str, param: Option<&str>| {
        assert_eq!(status, expected, "{body}");
        assert_eq!(body["error"]["type"], kind, "{body}");
        assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
        if let Some(p) = param {
            assert_eq!(body["error"]["param"], p, "{body}");
        }
        // The envelope is there too.
        assert_eq!(body["code"], expected);
    };
    let post = |body: Value| {
        let app = &app;
        async move {
            let r = completions(app, body).await;
            let status = r.status().as_u16();
            let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            (status, r.json::<Value>().await.unwrap(), retry)
        }
    };

    let (s, b, _) = post(json!({"model": "nope/nothing", "messages": user("hi")})).await;
    check(s, &b, 404, "not_found_error", None);
    let (s, b, _) = post(json!({"model": "mock-model", "messages": user("hi"), "n": 3})).await;
    check(s, &b, 400, "invalid_request_error", Some("n"));
    let (s, b, _) =
        post(json!({"model": "mock-model", "messages": user("hi"), "temprature": 1})).await;
    check(s, &b, 400, "invalid_request_error", None);
    assert!(b["error"]["message"].as_str().unwrap().contains("temprature"), "{b}");
    let (s, b, _) = post(json!({"model": "mock-model"})).await;
    check(s, &b, 400, "invalid_request_error", None);
    assert!(b["error"]["message"].as_str().unwrap().contains("messages"), "{b}");

    // Upstream refusals before the first byte are statuses, streamed or not.
    for stream in [false, true] {
        let (s, b, retry) =
            post(json!({"model": "mock-model", "messages": user("busy"), "stream": stream})).await;
        check(s, &b, 429, "rate_limit_error", None);
        assert_eq!(retry.as_deref(), Some("7"), "the provider's wait is passed on");
        assert!(b["error"]["message"].as_str().unwrap().contains("slow down"), "{b}");
        let (s, b, _) =
            post(json!({"model": "mock-model", "messages": user("broken"), "stream": stream}))
                .await;
        check(s, &b, 502, "api_error", None);
    }

    // A failure after the stream started is an error frame, and no [DONE].
    let r =
        completions(&app, json!({"model": "mock-model", "messages": user("cut"), "stream": true}))
            .await;
    assert_eq!(r.status(), 200);
    let (chunks, done) = frames(r).await;
    assert!(!done);
    let last = chunks.last().unwrap();
    assert_eq!(last["error"]["type"], "api_error", "{chunks:#?}");
    assert!(chunks.len() >= 2, "content came first: {chunks:#?}");

    // A known route asked with the wrong method: 405 in the envelope, like every error.
    for (method, path) in
        [(reqwest::Method::DELETE, "/v1/models"), (reqwest::Method::PUT, "/api/keys")]
    {
        let r = app.http.request(method, app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 405, "{path}");
        let b: Value = r.json().await.unwrap();
        assert_eq!(b["code"], 405, "{b}");
        assert!(b["error"]["message"].as_str().unwrap().contains(path), "{b}");
    }

    // Without a credential: 401, as an OpenAI error too.
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .json(&json!({"model": "mock-model", "messages": user("hi")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["error"]["type"], "authentication_error");
}

#[tokio::test]
async fn sampling_knobs_that_are_not_forwarded_are_named_in_a_header() {
    let mock = mock(vec![text_turn("ok", 10)]).await;
    let app = app_with(&mock).await;
    let r = completions(
        &app,
        json!({"model": "mock-model", "messages": [{"role": "user", "content": "hi"}],
               "top_p": 0.5, "stop": ["\n"], "user": "u-1", "metadata": {"a": "b"}}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-boardsmith-ignored-params"], "top_p,stop");
    let sent = &mock.requests()[0].body;
    assert!(sent.get("top_p").is_none() && sent.get("user").is_none(), "{sent}");
}

#[tokio::test]
async fn without_any_provider_completions_are_unavailable() {
    let app = support::spawn_app().await;
    let (status, body) = app.get("/v1/models").await;
    assert_eq!((status, body["data"].clone()), (200, json!([])));
    let (status, body) = app
        .post(
            "/v1/chat/completions",
            json!({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert_eq!(status, 503, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("OPENAI_API_KEY"), "{body}");
}

#[tokio::test]
async fn agents_are_listed_and_run_behind_the_same_wire_format() {
    let mock = mock(vec![text_turn("Carbon is element six.", 5)]).await;
    let app = app_with(&mock).await;
    let (status, body) = app.get("/v1/agents").await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<&str> =
        body["data"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"dashboard") && ids.contains(&"demoModePlain"), "{ids:?}");
    let (status, dashboard) = app.get("/v1/agents/dashboard").await;
    assert_eq!(status, 200, "{dashboard}");
    assert_eq!(dashboard["object"], "agent");
    assert_eq!(dashboard["mode"], "REACT");
    assert_eq!(dashboard["tools"], json!(["search", "execute", "get_state", "mutate"]));
    let (status, missing) = app.get("/v1/agents/nobody").await;
    assert_eq!((status, missing["error"]["type"].clone()), (404, json!("not_found_error")));

    // Not streamed: the answer as content, the run's other events in the extension field.
    let url = app.url("/v1/agents/demoModePlain/completions");
    let ask = json!({"model": "anything", "messages": [{"role": "user", "content": "Tell me about carbon"}], "temperature": 0.5});
    let r = app.http.post(&url).json(&ask).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-boardsmith-ignored-params"], "temperature");
    let chat_id = r.headers()["x-boardsmith-chat-id"].to_str().unwrap().to_owned();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["model"], "agent/demoModePlain");
    assert_eq!(body["choices"][0]["message"]["content"], "Carbon is element six.");
    assert_eq!(body["usage"]["prompt_tokens"], 12, "the run's usage: {body}");
    let ext = &body["boardsmith"];
    assert_eq!(ext["chat_id"], chat_id.as_str());
    let types: Vec<&str> =
        ext["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"request.query"), "{types:?}");
    assert_eq!(types.last(), Some(&"run.complete"), "{types:?}");
    assert!(!types.contains(&"content.delta"), "deltas are the content: {types:?}");

    // Streamed, continuing the chat: the model sees the earlier turn from chat memory.
    let again = json!({"model": "anything", "stream": true, "stream_options": {"include_usage": true},
        "chat_id": chat_id, "messages": [{"role": "user", "content": "And silicon?"}]});
    let r = app.http.post(&url).json(&again).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (chunks, done) = frames(r).await;
    assert!(done);
    let text: String =
        chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert_eq!(text, "Carbon is element six.");
    let events: Vec<&str> =
        chunks.iter().filter_map(|c| c["boardsmith"]["type"].as_str()).collect();
    assert!(events.contains(&"run.start") && events.contains(&"run.complete"), "{events:?}");
    let finish = chunks.iter().find(|c| c["choices"][0]["finish_reason"] == "stop").unwrap();
    assert_eq!(finish["boardsmith"]["type"], "run.complete");
    assert_eq!(chunks.last().unwrap()["usage"]["total_tokens"], 17);
    let requests = mock.requests();
    let sent = requests.last().unwrap().body["messages"].to_string();
    assert!(sent.contains("Tell me about carbon") && sent.contains("And silicon?"), "{sent}");

    // A stateless client sends the conversation itself: it becomes the run's history.
    let stateless = json!({"model": "x", "messages": [
        {"role": "user", "content": "First question"},
        {"role": "assistant", "content": "First answer"},
        {"role": "user", "content": "Second question"}]});
    let r = app.http.post(&url).json(&stateless).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let requests = mock.requests();
    let sent = &requests.last().unwrap().body["messages"];
    let texts: Vec<String> =
        sent.as_array().unwrap().iter().map(|m| m["content"].to_string()).collect();
    let pos = |needle: &str| texts.iter().position(|t| t.contains(needle));
    assert!(
        pos("First question") < pos("First answer") && pos("First answer") < pos("Second question"),
        "{texts:?}"
    );
    assert!(pos("First question").is_some(), "{texts:?}");

    // What an agent cannot take is refused by name.
    let (s, b) = app
        .post(
            "/v1/agents/demoModePlain/completions",
            json!({"model": "x", "tools": [], "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert_eq!((s, b["error"]["param"].clone()), (400, json!("tools")), "{b}");
    let (s, b) = app
        .post(
            "/v1/agents/demoModePlain/completions",
            json!({"model": "x", "messages": [{"role": "assistant", "content": "hi"}]}),
        )
        .await;
    assert_eq!((s, b["error"]["param"].clone()), (400, json!("messages[0]")), "{b}");
    let (s, b) =
        app.post("/v1/chat/completions", json!({"model": "mock-model", "chat_id": "c", "messages": [{"role": "user", "content": "hi"}]})).await;
    assert_eq!((s, b["error"]["param"].clone()), (400, json!("chat_id")), "{b}");
    let (s, b) = app
        .post("/v1/chat/completions", json!({"model": "mock-model", "busy": "steer", "messages": [{"role": "user", "content": "hi"}]}))
        .await;
    assert_eq!((s, b["error"]["param"].clone()), (400, json!("busy")), "{b}");
    // On an agent, `busy` with nothing running is a run of its own.
    let r = app
        .http
        .post(&url)
        .json(&json!({"model": "x", "busy": "followUp", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-boardsmith-queued").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_agent_builds_a_dashboard_through_v1() {
    let mock = MockLlm::start(MockLlm::demo().unwrap(), 0).await.unwrap();
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
    })
    .await;
    let r = app
        .http
        .post(app.url("/v1/agents/dashboard/completions"))
        .json(&json!({"model": "dashboard", "stream": true,
            "messages": [{"role": "user", "content": "Build me a gold dashboard"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let (chunks, done) = frames(r).await;
    assert!(done, "{chunks:#?}");
    let events: Vec<&Value> = chunks.iter().filter_map(|c| c.get("boardsmith")).collect();
    let tools: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool.start")
        .filter_map(|e| e["toolName"].as_str())
        .collect();
    assert!(tools.contains(&"execute") && tools.contains(&"mutate"), "{tools:?} in {events:#?}");
    let update =
        events.iter().rev().find(|e| e["type"] == "dashboard.update").expect("a dashboard.update");
    let id = update["dashboardId"].as_str().unwrap();
    assert_eq!(update["validation"]["allOk"], true, "{update}");
    let text: String =
        chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert!(text.contains("gold desk"), "{text}");
    // The dashboard agent's file sets its sampling; the mock model does not reason, so no
    // thinking parameters are sent to it.
    let requests = mock.requests();
    let first = &requests[0].body;
    assert_eq!(first["temperature"].as_f64().map(|t| (t * 100.0).round()), Some(10.0), "{first}");
    let max = first["max_completion_tokens"].as_u64().or(first["max_tokens"].as_u64());
    assert_eq!(max, Some(4096), "{first}");
    assert!(first.get("reasoning_effort").is_none() && first.get("thinking").is_none(), "{first}");
    // The dashboard it saved is there for everyone else.
    let (status, body) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(status, 200, "{body}");
}
