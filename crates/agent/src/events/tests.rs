use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;

/// One wire example per event type, with the seed's field names (optional fields present).
fn examples() -> Vec<Value> {
    vec![
        json!({"seq": 1, "type": "request.query", "requestId": "req_1", "chatId": "chat_1",
               "role": "user", "message": "元素碳的简介，100字", "agentKey": "demoModePlain",
               "references": [{"id": "ref_1", "type": "url", "url": "https://example.com"}],
               "params": {"k": "v"}, "scene": {"url": "https://example.com", "title": "demo"},
               "stream": true, "timestamp": 1770863186548i64}),
        json!({"seq": 2, "type": "request.upload", "requestId": "req_2", "chatId": "chat_1",
               "upload": {"type": "file", "name": "a.csv", "sizeBytes": 12, "mimeType": "text/csv",
                          "sha256": "ab"}, "timestamp": 2}),
        json!({"seq": 3, "type": "request.submit", "requestId": "req_3", "chatId": "chat_1",
               "runId": "run_1", "toolId": "call_1", "payload": {"params": {"ok": true}},
               "viewId": "view_1", "timestamp": 3}),
        json!({"seq": 4, "type": "chat.start", "chatId": "chat_1", "chatName": "元素碳的简介，100",
               "timestamp": 4}),
        json!({"seq": 5, "type": "plan.create", "planId": "plan_1", "chatId": "chat_1",
               "plan": [{"taskId": "task0", "description": "collect", "status": "init"}],
               "timestamp": 5}),
        json!({"seq": 6, "type": "plan.update", "planId": "plan_1", "chatId": "chat_1",
               "plan": [{"taskId": "task0", "status": "completed"}], "timestamp": 6}),
        json!({"seq": 7, "type": "run.start", "runId": "run_1", "chatId": "chat_1", "timestamp": 7}),
        json!({"seq": 8, "type": "run.complete", "runId": "run_1", "finishReason": "stop",
               "timestamp": 8}),
        json!({"seq": 9, "type": "run.cancel", "runId": "run_1", "timestamp": 9}),
        json!({"seq": 10, "type": "run.error", "runId": "run_1",
               "error": {"code": "llm_timeout", "message": "no first byte in 30s"}, "timestamp": 10}),
        json!({"seq": 11, "type": "task.start", "taskId": "task0", "runId": "run_1",
               "taskName": "collect", "description": "collect data", "timestamp": 11}),
        json!({"seq": 12, "type": "task.complete", "taskId": "task0", "runId": "run_1",
               "timestamp": 12}),
        json!({"seq": 13, "type": "task.fail", "taskId": "task0", "runId": "run_1",
               "error": "tool failed", "timestamp": 13}),
        json!({"seq": 14, "type": "reasoning.start", "reasoningId": "r_1", "runId": "run_1",
               "taskId": "task0", "timestamp": 14}),
        json!({"seq": 15, "type": "reasoning.delta", "reasoningId": "r_1", "delta": "think",
               "timestamp": 15}),
        json!({"seq": 16, "type": "reasoning.end", "reasoningId": "r_1", "timestamp": 16}),
        json!({"seq": 17, "type": "reasoning.snapshot", "reasoningId": "r_1", "text": "thought",
               "taskId": "task0", "timestamp": 17}),
        json!({"seq": 18, "type": "content.start", "contentId": "c_1", "runId": "run_1",
               "taskId": "task0", "timestamp": 18}),
        json!({"seq": 19, "type": "content.delta", "contentId": "c_1", "delta": "碳是", "timestamp": 19}),
        json!({"seq": 20, "type": "content.end", "contentId": "c_1", "timestamp": 20}),
        json!({"seq": 21, "type": "content.snapshot",
               "contentId": "8ad0081d-191b-4990-9432-664ea0c38c3e_content_0",
               "text": "碳是一种非金属元素...", "taskId": "task0", "timestamp": 1770863186549i64}),
        json!({"seq": 22, "type": "tool.start", "toolId": "call_1", "runId": "run_1",
               "taskId": "task0", "toolName": "confirm_dialog", "toolType": "html",
               "toolApi": "confirm_dialog", "toolParams": {"title": "ok?"},
               "description": "asks the user", "timestamp": 22}),
        json!({"seq": 23, "type": "tool.args", "toolId": "call_1", "delta": "{\"ci", "chunkIndex": 0,
               "timestamp": 23}),
        json!({"seq": 24, "type": "tool.end", "toolId": "call_1", "timestamp": 24}),
        json!({"seq": 25, "type": "tool.result", "toolId": "call_1", "result": {"ok": true},
               "timestamp": 25}),
        json!({"seq": 26, "type": "tool.snapshot", "toolId": "call_1", "toolName": "bash",
               "taskId": "task0", "toolType": "backend", "toolApi": "bash",
               "toolParams": {"a": 1}, "description": "runs a command",
               "arguments": "{\"command\":\"ls\"}", "timestamp": 26}),
        json!({"seq": 27, "type": "action.start", "actionId": "a_1", "runId": "run_1",
               "taskId": "task0", "actionName": "switch_theme", "description": "theme",
               "timestamp": 27}),
        json!({"seq": 28, "type": "action.args", "actionId": "a_1", "delta": "{\"theme\"",
               "timestamp": 28}),
        json!({"seq": 29, "type": "action.end", "actionId": "a_1", "timestamp": 29}),
        json!({"seq": 30, "type": "action.param", "actionId": "a_1", "param": {"theme": "dark"},
               "timestamp": 30}),
        json!({"seq": 31, "type": "action.result", "actionId": "a_1", "result": "OK",
               "timestamp": 31}),
        json!({"seq": 32, "type": "action.snapshot", "actionId": "a_1", "actionName": "switch_theme",
               "taskId": "task0", "description": "theme", "arguments": "{\"theme\":\"dark\"}",
               "timestamp": 32}),
        json!({"seq": 33, "type": "source.snapshot", "sourceId": "s_1", "runId": "run_1",
               "taskId": "task0", "icon": "https://x/i.png", "title": "X",
               "url": "https://x", "timestamp": 33}),
        json!({"seq": 34, "type": "dashboard.update", "dashboardId": "db_1", "version": 3,
               "changes": [{"op": "replace", "path": "/title", "value": "Gold"}],
               "validation": {"allOk": true}, "timestamp": 34}),
    ]
}

#[test]
fn every_event_type_round_trips_with_the_seed_field_names() {
    for example in examples() {
        let event: Event =
            serde_json::from_value(example.clone()).unwrap_or_else(|e| panic!("{example}: {e}"));
        assert_eq!(event.type_name(), example["type"], "{example}");
        assert_eq!(serde_json::to_value(&event).unwrap(), example);
    }
    // Every variant is covered.
    let types: std::collections::BTreeSet<String> =
        examples().iter().map(|e| e["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(types.len(), 34);
}

#[test]
fn wire_json_is_flat_with_seq_and_type_first_and_timestamp_last() {
    let event = Event {
        seq: 5,
        body: EventBody::ContentSnapshot {
            content_id: "c_0".into(),
            text: "hi".into(),
            task_id: None,
        },
        timestamp: 1770863186549,
    };
    assert_eq!(
        serde_json::to_string(&event).unwrap(),
        r#"{"seq":5,"type":"content.snapshot","contentId":"c_0","text":"hi","timestamp":1770863186549}"#
    );
}

#[test]
fn optional_fields_are_omitted_and_may_be_absent_on_input() {
    let minimal = [
        json!({"seq": 1, "type": "request.query", "requestId": "r", "chatId": "c", "role": "user",
               "message": "m", "timestamp": 1}),
        json!({"seq": 1, "type": "chat.start", "chatId": "c", "timestamp": 1}),
        json!({"seq": 1, "type": "run.complete", "runId": "r", "timestamp": 1}),
        json!({"seq": 1, "type": "tool.start", "toolId": "t", "runId": "r", "timestamp": 1}),
        json!({"seq": 1, "type": "tool.args", "toolId": "t", "delta": "{", "timestamp": 1}),
        json!({"seq": 1, "type": "tool.snapshot", "toolId": "t", "timestamp": 1}),
        json!({"seq": 1, "type": "action.snapshot", "actionId": "a", "timestamp": 1}),
        json!({"seq": 1, "type": "source.snapshot", "sourceId": "s", "timestamp": 1}),
        json!({"seq": 1, "type": "task.fail", "taskId": "t", "runId": "r", "timestamp": 1}),
    ];
    for example in minimal {
        let event: Event = serde_json::from_value(example.clone()).unwrap();
        assert_eq!(serde_json::to_value(&event).unwrap(), example);
    }
}

#[test]
fn old_names_and_missing_required_fields_are_rejected() {
    for bad in [
        json!({"seq": 1, "type": "message.delta", "delta": "x", "timestamp": 1}),
        json!({"seq": 1, "type": "query.message", "message": "x", "timestamp": 1}),
        json!({"seq": 1, "type": "tool.args", "toolId": "t", "args": "{", "timestamp": 1}),
        json!({"seq": 1, "type": "run.start", "runId": "r", "timestamp": 1}),
    ] {
        assert!(serde_json::from_value::<Event>(bad.clone()).is_err(), "{bad}");
    }
}

#[test]
fn event_ids_parse_back() {
    assert_eq!(parse_event_id(&event_id("run-1", 7)), Some(("run-1", 7)));
    assert_eq!(parse_event_id(" a:b:12 "), Some(("a:b", 12)));
    assert_eq!(parse_event_id("run-1"), None);
    assert_eq!(parse_event_id(":3"), None);
    assert_eq!(parse_event_id("run-1:x"), None);
}

fn delta(n: usize) -> EventBody {
    EventBody::ContentDelta { content_id: "c".into(), delta: n.to_string() }
}

fn seq_of(event: &Event) -> u64 {
    event.seq
}

#[tokio::test]
async fn the_sink_numbers_from_one_with_monotonic_timestamps() {
    let logs = RunLogs::new(RunLogConfig::default());
    let sink = logs.start("run-1").unwrap();
    let a = sink.emit(EventBody::RunStart { run_id: "run-1".into(), chat_id: "c".into() });
    let b = sink.emit(delta(0));
    assert_eq!((a.seq, b.seq), (1, 2));
    assert!(b.timestamp >= a.timestamp && a.timestamp > 1_700_000_000_000);
    assert_eq!(sink.last_seq(), 2);
    assert_eq!(logs.start("run-1").unwrap_err(), StreamError::DuplicateRun("run-1".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_gets_every_event_then_the_end() {
    let logs = RunLogs::new(RunLogConfig::default());
    let sink = logs.start("run-1").unwrap();
    let mut sub = sink.subscribe(0).unwrap();
    let producer = tokio::spawn(async move {
        for n in 0..500 {
            sink.emit(delta(n));
            if n % 50 == 0 {
                tokio::task::yield_now().await;
            }
        }
        sink.finish();
    });
    let mut seqs = Vec::new();
    while let Some(event) = sub.next().await.unwrap() {
        seqs.push(seq_of(&event));
    }
    producer.await.unwrap();
    assert_eq!(seqs, (1..=500).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_replays_the_rest_then_follows_live_without_gap_or_duplicate() {
    let logs = std::sync::Arc::new(RunLogs::new(RunLogConfig::default()));
    let sink = logs.start("run-1").unwrap();
    for n in 0..10 {
        sink.emit(delta(n));
    }
    // The client saw up to seq 4, then reconnects while the run keeps emitting concurrently.
    let producer = tokio::spawn(async move {
        for n in 10..2000 {
            sink.emit(delta(n));
            if n % 7 == 0 {
                tokio::task::yield_now().await;
            }
        }
    });
    let mut sub = logs.resume("run-1:4").unwrap();
    let mut seqs = Vec::new();
    while let Some(event) = sub.next().await.unwrap() {
        seqs.push(event.seq);
    }
    producer.await.unwrap();
    assert_eq!(seqs, (5..=2000).collect::<Vec<_>>());

    // After the run: a late reconnect gets the tail and the end at once.
    let mut late = logs.resume("run-1:1998").unwrap();
    assert_eq!(late.next().await.unwrap().unwrap().seq, 1999);
    assert_eq!(late.next().await.unwrap().unwrap().seq, 2000);
    assert!(late.next().await.unwrap().is_none());
}

#[tokio::test]
async fn into_stream_yields_the_same_events() {
    use futures::StreamExt;
    let logs = RunLogs::new(RunLogConfig::default());
    let sink = logs.start("run-1").unwrap();
    let stream = sink.subscribe(0).unwrap().into_stream();
    for n in 0..3 {
        sink.emit(delta(n));
    }
    drop(sink);
    let seqs: Vec<u64> = stream.map(|e| e.unwrap().seq).collect().await;
    assert_eq!(seqs, vec![1, 2, 3]);
}

#[tokio::test]
async fn the_count_bound_evicts_old_events_and_says_so() {
    let logs = RunLogs::new(RunLogConfig { max_events: 5, ..RunLogConfig::default() });
    let sink = logs.start("run-1").unwrap();
    let mut slow = sink.subscribe(0).unwrap();
    for n in 0..8 {
        sink.emit(delta(n));
    }
    // Seqs 1..=3 are gone: a reader that needs them is told, not silently skipped.
    let evicted = StreamError::Evicted { run_id: "run-1".into(), after: 0, oldest: 4 };
    assert_eq!(slow.next().await.unwrap_err(), evicted);
    assert_eq!(
        logs.resume("run-1:2").unwrap_err(),
        StreamError::Evicted { run_id: "run-1".into(), after: 2, oldest: 4 }
    );
    let mut ok = logs.resume("run-1:3").unwrap();
    assert_eq!(ok.next().await.unwrap().unwrap().seq, 4);
}

#[tokio::test]
async fn finished_runs_expire_after_the_retention_time_and_live_ones_never_do() {
    let logs = RunLogs::new(RunLogConfig {
        retention: Duration::from_millis(50),
        ..RunLogConfig::default()
    });
    let done = logs.start("done").unwrap();
    done.emit(delta(0));
    done.finish();
    let live = logs.start("live").unwrap();
    live.emit(delta(0));
    assert!(logs.get("done").is_some());
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert!(logs.get("done").is_none());
    assert_eq!(logs.resume("done:1").unwrap_err(), StreamError::UnknownRun("done".into()));
    assert!(logs.get("live").is_some());
    assert_eq!(logs.len(), 1);
    assert_eq!(logs.resume("garbage").unwrap_err(), StreamError::BadEventId("garbage".into()));
}

#[tokio::test]
async fn a_resume_past_the_end_waits_for_the_end_without_overflow() {
    let logs = RunLogs::new(RunLogConfig::default());
    let sink = logs.start("run-1").unwrap();
    sink.emit(delta(0));
    let mut sub = logs.resume(&format!("run-1:{}", u64::MAX)).unwrap();
    drop(sink);
    assert!(sub.next().await.unwrap().is_none());
}

#[tokio::test]
async fn starting_a_run_sweeps_expired_logs_and_keeps_live_ones() {
    let retention = Duration::from_millis(40);
    let logs = RunLogs::new(RunLogConfig { retention, ..RunLogConfig::default() });
    for id in ["a", "b"] {
        logs.start(id).unwrap().finish();
    }
    tokio::time::sleep(Duration::from_millis(60)).await;
    // The first start after the interval sweeps both expired logs.
    let _c = logs.start("c").unwrap();
    assert_eq!(logs.len(), 1);
    logs.start("d").unwrap().finish();
    tokio::time::sleep(Duration::from_millis(60)).await;
    let _e = logs.start("e").unwrap();
    // `d` expired and was swept; `c` is live and stays.
    assert!(logs.get("c").is_some());
    assert!(logs.get("d").is_none());
    assert_eq!(logs.len(), 2);
}

#[test]
fn a_tools_source_adopts_the_calling_task_unless_it_names_one() {
    let source = |task_id: Option<&str>| EventBody::SourceSnapshot {
        source_id: "doc".into(),
        run_id: Some("r".into()),
        task_id: task_id.map(str::to_owned),
        icon: None,
        title: None,
        url: None,
    };
    let mut e = source(None);
    e.adopt_task("r_agent_1");
    assert_eq!(e, source(Some("r_agent_1")));
    let mut e = source(Some("node"));
    e.adopt_task("r_agent_1");
    assert_eq!(e, source(Some("node")));
    let mut other = EventBody::RunCancel { run_id: "r".into() };
    other.adopt_task("r_agent_1");
    assert_eq!(other, EventBody::RunCancel { run_id: "r".into() });
}

/// Records what a mirror is told, in order.
#[derive(Debug, Default)]
struct Recorded(std::sync::Mutex<Vec<(String, u64, bool)>>);

impl RunMirror for Recorded {
    fn emitted(&self, run_id: &str, event: &Arc<Event>) {
        self.0.lock().unwrap().push((run_id.to_owned(), event.seq, false));
    }
    fn finished(&self, run_id: &str, last_seq: u64) {
        self.0.lock().unwrap().push((run_id.to_owned(), last_seq, true));
    }
}

#[tokio::test]
async fn a_mirror_sees_every_event_in_order_then_the_end() {
    let logs = RunLogs::new(RunLogConfig::default());
    let mirror = Arc::new(Recorded::default());
    logs.set_mirror(mirror.clone());
    let sink = logs.start("run-1").unwrap();
    for n in 0..3 {
        sink.emit(delta(n));
    }
    sink.finish();
    let seen = mirror.0.lock().unwrap().clone();
    let want: Vec<_> = [(1, false), (2, false), (3, false), (3, true)]
        .into_iter()
        .map(|(s, end)| ("run-1".to_owned(), s, end))
        .collect();
    assert_eq!(seen, want);
}

/// An event as another node's log numbered it.
fn foreign(seq: u64) -> Event {
    Event { seq, body: delta(seq as usize), timestamp: 1_700_000_000_000 + seq as i64 }
}

#[tokio::test]
async fn a_follower_takes_the_owners_events_in_order_refuses_gaps_and_can_be_forgotten() {
    let logs = RunLogs::new(RunLogConfig::default());
    let follower = logs.follow("run-1", 4).unwrap();
    assert_eq!(follower.last_seq(), 4);
    let mut sub = follower.subscribe(4).unwrap();
    assert_eq!(follower.readers(), 1);
    assert_eq!(follower.put(foreign(5)), Ok(true));
    assert_eq!(follower.put(foreign(5)), Ok(false), "a repeat is ignored");
    assert_eq!(follower.put(foreign(7)), Err(6), "a gap is refused");
    assert_eq!(follower.put(foreign(6)), Ok(true));
    assert_eq!(sub.next().await.unwrap().unwrap().seq, 5);
    assert_eq!(sub.next().await.unwrap().unwrap().seq, 6);
    // Readers here share the follower's log; a second follower of the run is refused.
    assert!(logs.resume("run-1:5").is_ok());
    assert_eq!(logs.follow("run-1", 0).unwrap_err(), StreamError::DuplicateRun("run-1".into()));
    // Forgotten (it stopped before the run ended): its readers end, later ones find nothing.
    logs.forget(follower);
    assert!(sub.next().await.unwrap().is_none());
    assert_eq!(logs.resume("run-1:5").unwrap_err(), StreamError::UnknownRun("run-1".into()));
}

#[tokio::test]
async fn a_complete_follower_stays_readable_like_a_finished_run() {
    let logs = RunLogs::new(RunLogConfig::default());
    let follower = logs.follow("run-1", 0).unwrap();
    for seq in 1..=3 {
        follower.put(foreign(seq)).unwrap();
    }
    drop(follower);
    let mut sub = logs.resume("run-1:1").unwrap();
    let mut seqs = Vec::new();
    while let Some(e) = sub.next().await.unwrap() {
        seqs.push(e.seq);
    }
    assert_eq!(seqs, [2, 3]);
}

#[test]
fn the_panels_still_failing_are_those_of_each_dashboards_last_validation() {
    let update = |d: &str, panels: Value, deleted: bool| EventBody::DashboardUpdate {
        dashboard_id: d.into(),
        version: 1,
        changes: json!([]),
        validation: json!({ "panels": panels }),
        deleted,
    };
    let fail = |p: &str| json!({"panelId": p, "status": "error", "error": format!("{p} broke")});
    let pass = |p: &str| json!({"panelId": p, "status": "success"});
    let updates = [
        update("a", json!([fail("x"), fail("y")]), false),
        update("a", json!([pass("x")]), false), // fixed x; y was not run again
        update("b", json!([fail("z")]), false),
        update("c", json!([fail("w")]), false),
        update("c", Value::Null, true), // deleted
    ];
    let failing = failing_panels(&updates);
    let ids: Vec<(&str, &str)> =
        failing.iter().map(|f| (f.dashboard_id.as_str(), f.panel_id.as_str())).collect();
    assert_eq!(ids, [("a", "y"), ("b", "z")]);
    assert_eq!(failing[0].error, "y broke");
    assert!(failing_panels(&[]).is_empty());
}
