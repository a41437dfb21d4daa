//! `POST /api/query` over real HTTP: a real server, the scripted mock upstream on loopback, a
//! real SSE client. The stream's shape and ids, refusals before streaming, chat memory across
//! runs, `/api/chat` history against the live stream, client disconnect → `run.cancel`, and
//! reconnecting with `Last-Event-ID`.

use std::sync::Arc;
use std::time::Duration;

use boardsmith::llm::mock::{MockLlm, Script, Step, Turn};
use serde_json::{Value, json};

use crate::support::{self, TestApp, sse_events};

/// A server whose only model is the mock at `mock`; runs without readers are cancelled after
/// `grace`.
async fn app_with(mock: &MockLlm, grace: Duration) -> TestApp {
    let url = mock.url();
    support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
        c.service.disconnect_grace = grace;
    })
    .await
}

async fn mock(turns: Vec<Turn>) -> MockLlm {
    MockLlm::start(Script { turns }, 0).await.unwrap()
}

fn text_turn(text: &str, chunk: usize, delay_ms: u64) -> Turn {
    Turn {
        steps: vec![Step::Text { text: text.into(), chunk: Some(chunk) }],
        delay_ms,
        ..Turn::default()
    }
}

async fn post_query(app: &TestApp, body: Value) -> reqwest::Response {
    app.http.post(app.url("/api/query")).json(&body).send().await.unwrap()
}

fn types(events: &[(String, String, Value)]) -> Vec<&str> {
    events.iter().map(|(_, t, _)| t.as_str()).collect()
}

/// The text of the `content.delta`s, joined.
pub(crate) fn streamed_text(events: &[(String, String, Value)]) -> String {
    events
        .iter()
        .filter(|(_, t, _)| t == "content.delta")
        .map(|(_, _, d)| d["delta"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_plain_query_streams_v2_events_with_resumable_ids_one_delta_per_upstream_delta() {
    let mock = mock(vec![text_turn("Carbon is element six.", 5, 0)]).await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    let r =
        post_query(&app, json!({"message": "Tell me about carbon", "agentKey": "demoModePlain"}))
            .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let events = sse_events(r).await;
    let t = types(&events);
    assert_eq!(&t[..4], ["request.query", "chat.start", "run.start", "content.start"], "{t:?}");
    assert_eq!(&t[t.len() - 2..], ["content.end", "run.complete"], "{t:?}");
    // "Carbon is element six." in 5-character deltas: 5 deltas, one event each.
    assert_eq!(t.iter().filter(|x| **x == "content.delta").count(), 5, "{t:?}");
    assert_eq!(streamed_text(&events), "Carbon is element six.");
    let run_id = events[2].2["runId"].as_str().unwrap().to_owned();
    let chat_id = events[1].2["chatId"].as_str().unwrap().to_owned();
    for (i, (id, ty, data)) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(id, &format!("{run_id}:{seq}"));
        assert_eq!(data["seq"], seq);
        assert_eq!(&data["type"], ty);
        assert!(data["timestamp"].as_i64().unwrap() > 1_700_000_000_000);
    }
    let q = &events[0].2;
    assert_eq!(q["requestId"], run_id.as_str(), "requestId defaults to runId");
    assert_eq!(q["chatId"], chat_id.as_str());
    assert_eq!(q["message"], "Tell me about carbon");
    assert_eq!(q["agentKey"], "demoModePlain");
    assert_eq!(events.last().unwrap().2["finishReason"], "stop");
    app.stop().await;
}

#[tokio::test]
async fn bad_queries_are_refused_before_streaming_with_the_field_named() {
    let mock = mock(vec![text_turn("unused", 10, 0)]).await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    let cases = [
        (json!({"message": "hi", "agentKey": "noSuchAgent"}), 404, "noSuchAgent"),
        (json!({"agentKey": "demoModePlain"}), 400, "message"),
        (json!({"message": "   ", "agentKey": "demoModePlain"}), 400, "message"),
        (json!({"message": "hi", "agentKey": "demoModePlain", "chatId": "../x"}), 400, "chatId"),
        (json!({"message": "hi", "agentKey": "demoModePlain", "colour": 1}), 400, "colour"),
        (json!({"message": 5, "agentKey": "demoModePlain"}), 400, "message"),
    ];
    for (body, status, needle) in cases {
        let r = post_query(&app, body.clone()).await;
        assert_eq!(r.status().as_u16(), status, "{body}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
        let env: Value = r.json().await.unwrap();
        assert_eq!(env["code"], status);
        assert!(env["msg"].as_str().unwrap().contains(needle), "{env} should name {needle}");
    }
    assert!(mock.requests().is_empty(), "nothing reached the model");
    let (status, chats) = app.get("/api/chats").await;
    assert_eq!(status, 200);
    assert_eq!(chats["data"], json!([]), "nothing was stored");
    app.stop().await;
}

#[tokio::test]
async fn without_a_configured_model_the_query_says_what_to_set() {
    let app = support::spawn_app().await;
    let r = post_query(&app, json!({"message": "hi", "agentKey": "demoModePlain"})).await;
    assert_eq!(r.status(), 503);
    let env: Value = r.json().await.unwrap();
    let msg = env["msg"].as_str().unwrap();
    assert!(msg.contains("demoModePlain") && msg.contains("API_KEY"), "{msg}");
    app.stop().await;
}

#[tokio::test]
async fn a_second_query_replays_the_chat_and_history_matches_the_live_streams() {
    let mock = mock(vec![
        Turn { times: Some(1), ..text_turn("First answer.", 4, 0) },
        text_turn("Second answer.", 4, 0),
    ])
    .await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    let first = sse_events(
        post_query(&app, json!({"message": "first question", "agentKey": "demoModePlain"})).await,
    )
    .await;
    let chat_id = first[1].2["chatId"].as_str().unwrap().to_owned();
    let second = sse_events(
        post_query(
            &app,
            json!({"message": "second question", "agentKey": "demoModePlain", "chatId": chat_id, "requestId": "req-2"}),
        )
        .await,
    )
    .await;
    let t = types(&second);
    assert_eq!(&t[..3], ["request.query", "run.start", "content.start"], "no chat.start: {t:?}");
    assert_eq!(second[0].2["requestId"], "req-2");
    // The model saw the first exchange before the second question.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let sent: Vec<(String, String)> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].to_string()))
        .collect();
    let roles: Vec<&str> = sent.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "{sent:?}");
    assert!(sent[1].1.contains("first question") && sent[2].1.contains("First answer."));
    assert!(sent[3].1.contains("second question"));

    // History: the live order with chat.start once, each run's content as one snapshot equal
    // to what streamed, run.complete per run.
    let (status, chat) = app.get(&format!("/api/chat?chatId={chat_id}")).await;
    assert_eq!(status, 200, "{chat}");
    let history: Vec<&Value> = chat["data"]["events"].as_array().unwrap().iter().collect();
    let htypes: Vec<&str> = history.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        htypes,
        [
            "request.query",
            "chat.start",
            "run.start",
            "content.snapshot",
            "run.complete",
            "request.query",
            "run.start",
            "content.snapshot",
            "run.complete"
        ],
        "{chat}"
    );
    assert_eq!(history[3]["text"], streamed_text(&first).as_str());
    assert_eq!(history[7]["text"], streamed_text(&second).as_str());
    // The snapshot keeps the ids the live stream used.
    let live_content = first.iter().find(|(_, t, _)| t == "content.start").unwrap();
    assert_eq!(history[3]["contentId"], live_content.2["contentId"]);
    assert_eq!(history[6]["runId"], second[1].2["runId"]);
    // Each run's end as it streamed.
    assert_eq!(history[4]["finishReason"], first.last().unwrap().2["finishReason"]);
    assert_eq!(history[8]["finishReason"], "stop");
    let (_, chats) = app.get("/api/chats").await;
    assert_eq!(chats["data"][0]["chatId"], chat_id.as_str());
    app.stop().await;
}

/// Reads frames until `n` have arrived, returning them and the still-open stream.
async fn read_n(
    response: reqwest::Response,
    n: usize,
) -> (
    Vec<(String, String, Value)>,
    impl futures::Stream<
        Item = Result<
            eventsource_stream::Event,
            eventsource_stream::EventStreamError<reqwest::Error>,
        >,
    >,
) {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let mut stream = Box::pin(response.bytes_stream().eventsource());
    let mut out = Vec::new();
    while out.len() < n {
        let f = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        out.push((f.id, f.event, serde_json::from_str(&f.data).unwrap()));
    }
    (out, stream)
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_the_run_after_the_grace_period() {
    // 40 deltas 50 ms apart: 2 s of streaming if nobody stops it.
    let mock = mock(vec![text_turn(&"abcd".repeat(40), 4, 50)]).await;
    let app = app_with(&mock, Duration::from_millis(100)).await;
    let r = post_query(&app, json!({"message": "long answer", "agentKey": "demoModePlain"})).await;
    let (events, stream) = read_n(r, 6).await;
    let run_id = events[2].2["runId"].as_str().unwrap().to_owned();
    let chat_id = events[1].2["chatId"].as_str().unwrap().to_owned();
    drop(stream);
    // The rest of the run, read back through the replay buffer.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(app.app.agents.live_runs(), 0, "the run ended");
    let rest = sse_events(
        app.http
            .post(app.url("/api/query"))
            .header("Last-Event-ID", format!("{run_id}:6"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let t = types(&rest);
    assert_eq!(&t[t.len() - 2..], ["content.end", "run.cancel"], "{t:?}");
    let deltas = t.iter().filter(|x| **x == "content.delta").count();
    assert!(deltas < 30, "the upstream stream was stopped early ({deltas} more deltas)");
    // The cancelled run is stored with what was said so far.
    let (_, chat) = app.get(&format!("/api/chat?chatId={chat_id}")).await;
    let history = chat["data"]["events"].as_array().unwrap();
    assert!(history.iter().any(|e| e["type"] == "request.query"), "{chat}");
    let end = history.last().unwrap();
    assert_eq!((&end["type"], &end["finishReason"]), (&json!("run.complete"), &json!("cancelled")));
    app.stop().await;
}

#[tokio::test]
async fn a_client_reconnecting_with_last_event_id_gets_the_rest_exactly_once() {
    let mock = mock(vec![text_turn(&"wxyz".repeat(20), 4, 30)]).await;
    let app = app_with(&mock, Duration::from_secs(5)).await;
    let r =
        post_query(&app, json!({"message": "stream please", "agentKey": "demoModePlain"})).await;
    let (head, stream) = read_n(r, 7).await;
    drop(stream);
    let last_id = head.last().unwrap().0.clone();
    let rest = sse_events(
        app.http
            .post(app.url("/api/query"))
            .header("Last-Event-ID", &last_id)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let all: Vec<_> = head.into_iter().chain(rest).collect();
    let seqs: Vec<u64> = all.iter().map(|(_, _, d)| d["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=all.len() as u64).collect::<Vec<_>>(), "no gap, no repeat");
    assert_eq!(types(&all).last(), Some(&"run.complete"), "reconnecting kept the run alive");
    assert_eq!(streamed_text(&all), "wxyz".repeat(20));

    // Malformed and unknown ids.
    for (id, status) in [("garbage", 400), ("no-such-run:3", 404)] {
        let r =
            app.http.post(app.url("/api/query")).header("Last-Event-ID", id).send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{id}");
    }
    app.stop().await;
}

#[tokio::test]
async fn stream_false_answers_with_the_whole_event_list() {
    let mock = mock(vec![text_turn("All at once.", 3, 0)]).await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    let (status, body) = app
        .post("/api/query", json!({"message": "q", "agentKey": "demoModePlain", "stream": false}))
        .await;
    assert_eq!(status, 200, "{body}");
    let events = body["data"]["events"].as_array().unwrap();
    assert_eq!(events.first().unwrap()["type"], "request.query");
    assert_eq!(events.last().unwrap()["type"], "run.complete");
    assert_eq!(events[0]["stream"], false);
    assert!(body["data"]["runId"].is_string() && body["data"]["chatId"].is_string());
    app.stop().await;
}

#[tokio::test]
async fn an_agent_file_written_while_serving_is_queryable_and_a_bad_one_is_skipped() {
    let mock = mock(vec![text_turn("Fresh agent here.", 6, 0)]).await;
    let url = mock.url();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = support::spawn_app_with(dir.clone(), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
        c.catalog.watch = true;
    })
    .await;
    let agents = dir.path().join("agents");
    std::fs::write(
        agents.join("broken.json"),
        r#"{"mode": "PLAIN", "plain": {"systemPrompt": 7}}"#,
    )
    .unwrap();
    std::fs::write(
        agents.join("fresh.json"),
        r#"{"description": "written at run time", "mode": "PLAIN", "plain": {"systemPrompt": """
You are fresh.
"""}}"#,
    )
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _) = app.get("/api/agent?agentKey=fresh").await;
        if status == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the new agent file was not picked up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let events =
        sse_events(post_query(&app, json!({"message": "hi", "agentKey": "fresh"})).await).await;
    assert_eq!(streamed_text(&events), "Fresh agent here.");
    let system = &mock.requests()[0].body["messages"][0];
    assert_eq!(system["role"], "system");
    assert!(system["content"].as_str().unwrap().contains("You are fresh."));
    // The bad file is not an agent; the others still are.
    let (_, list) = app.get("/api/agents").await;
    let keys: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"fresh") && keys.contains(&"demoModePlain"), "{keys:?}");
    assert!(!keys.contains(&"broken"), "{keys:?}");
    let r = post_query(&app, json!({"message": "hi", "agentKey": "broken"})).await;
    assert_eq!(r.status(), 404);
    app.stop().await;
}

#[tokio::test]
async fn a_bash_call_runs_confined_and_the_model_sees_the_sandbox_not_the_host() {
    // Issue 16's escape through a computed path, and a look at the data dir around the
    // workspace: the model gets the sandbox's own /etc/passwd and sees nothing of the store.
    let command = "head -c 40 $(echo L2V0Yy9wYXNzd2Q= | base64 -d); echo; ls -A ..";
    let mock = mock(vec![
        Turn {
            times: Some(1),
            steps: vec![Step::ToolCall {
                id: Some("call_b".into()),
                name: "bash".into(),
                arguments: json!({ "command": command }),
                fragments: None,
            }],
            ..Turn::default()
        },
        text_turn("That is the sandbox's file.", 50, 0),
    ])
    .await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    // The demo agent asks before each command; the user says yes.
    let response =
        post_query(&app, json!({"message": "show /etc/passwd", "agentKey": "demoModeReact"})).await;
    let events = support::sse_answering(&app, response, |event, data| {
        (event == "tool.confirm").then(|| {
            assert_eq!(data["command"], command);
            ("call_b".to_owned(), json!({"approved": true}))
        })
    })
    .await;
    let result = events.iter().find(|(_, t, _)| t == "tool.result").expect("a tool result");
    let out = &result.2["result"];
    assert_eq!(out["stdout"], "root:x:0:0:root:/nonexistent:/usr/sbin/n\nwork\n", "{out}");
    assert_eq!(out["exitCode"], 0, "{out}");
    let tool_msg = mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(tool_msg["content"].to_string().contains("/nonexistent:/usr/sbin/n"), "{tool_msg}");
    assert_eq!(events.last().unwrap().1, "run.complete");
    app.stop().await;
}

#[tokio::test]
async fn runs_past_the_server_and_chat_caps_are_refused_with_429_before_streaming() {
    let turns = (0..6).map(|_| text_turn(&"x".repeat(30), 1, 100)).collect();
    let mock = mock(turns).await;
    let url = mock.url();
    let app = support::spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.llm = Some(support::llm_config(Some(&url)));
        c.service.max_runs = 3;
        c.service.max_runs_per_chat = 1;
    })
    .await;
    let chat = |n: u8| format!("0190a0a0-0000-7000-8000-00000000000{n}");
    let ask =
        |chat_id: String| json!({"message": "hi", "agentKey": "demoModePlain", "chatId": chat_id});
    // Each stream is held open (3 s of paced deltas), so its run stays in progress.
    let a = post_query(&app, ask(chat(1))).await;
    assert_eq!(a.status(), 200);
    let again = post_query(&app, ask(chat(1))).await;
    assert_eq!(again.status(), 429);
    let body: Value = again.json().await.unwrap();
    assert!(body["msg"].as_str().unwrap().contains("AGENT_MAX_RUNS_PER_CHAT"), "{body}");
    let b = post_query(&app, ask(chat(2))).await;
    let c = post_query(&app, ask(chat(3))).await;
    assert_eq!((b.status().as_u16(), c.status().as_u16()), (200, 200));
    let d = post_query(&app, ask(chat(4))).await;
    assert_eq!(d.status(), 429);
    let body: Value = d.json().await.unwrap();
    assert_eq!(body["code"], 429);
    assert!(body["msg"].as_str().unwrap().contains("AGENT_MAX_RUNS"), "{body}");
    // When the runs end, new ones are accepted again.
    for r in [a, b, c] {
        let events = sse_events(r).await;
        assert_eq!(events.last().unwrap().1, "run.complete");
    }
    // (A run leaves the count just after its last event is sent.)
    let mut tries = 0;
    while post_query(&app, ask(chat(4))).await.status() != 200 {
        tries += 1;
        assert!(tries < 40, "still refused after the runs ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.stop().await;
}

#[tokio::test]
async fn reasoning_hidden_from_the_stream_stays_out_of_the_history() {
    let turn = Turn {
        steps: vec![
            Step::Reasoning {
                text: "private chain of thought".into(),
                chunk: None,
                signature: None,
            },
            Step::Text { text: "The answer.".into(), chunk: None },
        ],
        ..Turn::default()
    };
    let mock = mock(vec![turn]).await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    // demoModeThinkingTooling: exposeReasoningToUser false; demoModeThinking: true.
    for (agent, shown) in [("demoModeThinkingTooling", false), ("demoModeThinking", true)] {
        let r = post_query(&app, json!({"message": "Think, then answer", "agentKey": agent})).await;
        let live = sse_events(r).await;
        let streamed = live.iter().any(|(_, t, _)| t == "reasoning.delta");
        assert_eq!(streamed, shown, "{agent}: {:?}", types(&live));
        let chat_id = live.iter().find_map(|(_, _, d)| d["chatId"].as_str()).unwrap().to_owned();
        let (status, chat) = app.get(&format!("/api/chat?chatId={chat_id}")).await;
        assert_eq!(status, 200, "{chat}");
        let text = chat["data"]["events"].to_string();
        assert_eq!(text.contains("private chain of thought"), shown, "{agent}: {text}");
        assert!(text.contains("The answer."), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_sent_to_a_busy_chat_joins_the_running_run() {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let slow = Turn {
        when: boardsmith::llm::mock::Match {
            last_user_contains: Some("second question".into()),
            ..Default::default()
        },
        ..text_turn("Second answer.", 100, 0)
    };
    let mock = mock(vec![slow, text_turn("The first answer, streamed slowly.", 2, 40)]).await;
    let app = app_with(&mock, Duration::from_secs(3)).await;
    let chat = "c-follow-up";
    let first = post_query(
        &app,
        json!({"message": "first question", "agentKey": "demoModeReact", "chatId": chat}),
    )
    .await;
    let mut first = first.bytes_stream().eventsource();
    // Wait until the answer is streaming: the run is busy.
    let mut seen = Vec::new();
    while let Some(Ok(e)) = first.next().await {
        seen.push((e.event.clone(), serde_json::from_str::<Value>(&e.data).unwrap()));
        if e.event == "content.delta" {
            break;
        }
    }
    let second =
        post_query(&app, json!({"message": "second question", "chatId": chat, "busy": "followUp"}))
            .await;
    assert_eq!(second.status(), 200);
    assert_eq!(second.headers()["x-boardsmith-queued"], "followUp");
    let second = sse_events(second).await;
    while let Some(Ok(e)) = first.next().await {
        seen.push((e.event.clone(), serde_json::from_str::<Value>(&e.data).unwrap()));
    }
    for events in [
        seen.iter().map(|(t, d)| (t.as_str(), d)).collect::<Vec<_>>(),
        second.iter().map(|(_, t, d)| (t.as_str(), d)).collect::<Vec<_>>(),
    ] {
        let steer = events.iter().find(|(t, _)| *t == "run.steer").expect("a run.steer");
        assert_eq!(steer.1["mode"], "followUp");
        assert_eq!(steer.1["messages"], json!(["second question"]));
        assert_eq!(events.last().unwrap().0, "run.complete", "{events:#?}");
        let text: String = events
            .iter()
            .filter(|(t, _)| *t == "content.delta")
            .map(|(_, d)| d["delta"].as_str().unwrap())
            .collect();
        assert!(text.ends_with("Second answer."), "{text}");
    }
    // One run answered both: the model saw the first exchange and the follow-up.
    assert_eq!(mock.requests().len(), 2);
    let last = mock.requests()[1].body["messages"].to_string();
    assert!(last.contains("first question") && last.contains("second question"), "{last}");

    // A one-call agent cannot take a message mid-run: the query waits for a run of its own.
    let plain = post_query(
        &app,
        json!({"message": "first question", "agentKey": "demoModePlain", "chatId": "c-plain"}),
    )
    .await;
    let mut plain = plain.bytes_stream().eventsource();
    while let Some(Ok(e)) = plain.next().await {
        if e.event == "content.delta" {
            break;
        }
    }
    let r = post_query(
        &app,
        json!({"message": "second question", "chatId": "c-plain", "busy": "followUp",
               "agentKey": "demoModePlain"}),
    )
    .await;
    assert!(r.headers().get("x-boardsmith-queued").is_none());
    let own = sse_events(r).await;
    assert_eq!(own.last().unwrap().1, "run.complete", "{own:?}");
    drop(plain);

    // With nothing running, `busy` changes nothing: a run of its own.
    let r =
        post_query(&app, json!({"message": "second question", "chatId": chat, "busy": "steer"}))
            .await;
    assert!(r.headers().get("x-boardsmith-queued").is_none());
    let events = sse_events(r).await;
    assert_eq!(events.iter().filter(|(_, t, _)| t == "run.start").count(), 1);
}
