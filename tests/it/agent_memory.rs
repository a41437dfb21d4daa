//! Chat Memory V2 on each backend, the same cases on real temp dirs and on a real PostgreSQL
//! (a database per test): round trips, the system snapshot rule, the replay window, reasoning
//! on replay, damaged lines and rows, serialized appends, the chat index (also as another node
//! sees it) and the snapshot events of a stored chat.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use boardsmith::agent::events::Query;
use boardsmith::agent::memory::{
    ChatMemory, MemoryConfig, MemoryError, RunRecord, SystemSnapshot, replay_messages,
};
use boardsmith::llm::{AssistantMessage, ContentBlock, Message, StopReason, ToolDefinition, Usage};
use boardsmith::store::{Store, StoreOptions};
use serde_json::{Value, json};

use crate::support::pg::TestDb;

/// Where a test's chats live: files in a temp dir, or a PostgreSQL database of their own.
struct Chats {
    dir: tempfile::TempDir,
    db: Option<TestDb>,
}

impl Chats {
    /// A memory over these chats as a node that just started sees them: a cold cache, and on
    /// PostgreSQL connections of its own.
    async fn memory(&self) -> ChatMemory {
        self.memory_with(MemoryConfig::new(self.dir.path())).await
    }

    async fn memory_with(&self, config: MemoryConfig) -> ChatMemory {
        match &self.db {
            None => ChatMemory::new(config),
            Some(db) => {
                let store = Store::connect(&db.url, StoreOptions::default()).await.unwrap();
                ChatMemory::shared(config, Arc::new(store))
            }
        }
    }

    fn file(&self, chat: &str) -> std::path::PathBuf {
        self.dir.path().join(format!("chats/{chat}.json"))
    }

    /// The chat's stored lines, as text (a file's lines, or its rows in order).
    async fn lines(&self, chat: &str) -> Vec<String> {
        match &self.db {
            None => std::fs::read_to_string(self.file(chat))
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect(),
            Some(db) => {
                let sql = "SELECT line FROM chat_runs WHERE chat_id = $1 ORDER BY id";
                let rows = sql_client(db).await.query(sql, &[&chat]).await.unwrap();
                rows.iter().map(|r| r.get(0)).collect()
            }
        }
    }

    /// Appends a damaged line: in a file without its newline, as a crash mid-write leaves it;
    /// as a row, the same text.
    async fn damage(&self, chat: &str, text: &str) {
        match &self.db {
            None => {
                std::fs::create_dir_all(self.dir.path().join("chats")).unwrap();
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(self.file(chat))
                    .unwrap();
                file.write_all(text.as_bytes()).unwrap();
            }
            Some(db) => {
                let sql = "INSERT INTO chat_runs (chat_id, updated_at, line) VALUES ($1, 0, $2)";
                sql_client(db).await.execute(sql, &[&chat, &text]).await.unwrap();
            }
        }
    }

    fn is_files(&self) -> bool {
        self.db.is_none()
    }
}

async fn sql_client(db: &TestDb) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// Runs `test` on files, then on PostgreSQL.
async fn on_each_backend<F, Fut>(test: F)
where
    F: Fn(Chats) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    eprintln!("backend: files");
    test(Chats { dir: tempfile::tempdir().unwrap(), db: None }).await;
    eprintln!("backend: postgres");
    let db = TestDb::new().await;
    test(Chats { dir: tempfile::tempdir().unwrap(), db: Some(db) }).await;
}

fn query(chat: &str, request: &str, message: &str) -> Query {
    Query {
        request_id: request.into(),
        chat_id: chat.into(),
        role: "user".into(),
        message: message.into(),
        agent_key: Some("demoAction".into()),
        ..Query::default()
    }
}

fn response(blocks: Vec<ContentBlock>) -> AssistantMessage {
    AssistantMessage {
        content: blocks,
        model: "deepseek-chat".into(),
        provider: "deepseek".into(),
        usage: Usage { input_tokens: 100, output_tokens: 20, ..Usage::default() },
        ..AssistantMessage::default()
    }
}

fn reasoning(text: &str) -> ContentBlock {
    ContentBlock::Reasoning { text: text.into(), signature: None, redacted: None }
}

fn call(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse { id: id.into(), name: name.into(), input, input_error: None }
}

fn ids(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// A question answered in one response.
fn simple_run(memory: &ChatMemory, chat: &str, run: &str, q: &str, a: &str, ts: i64) -> RunRecord {
    let mut rec = memory.recorder(run, query(chat, &format!("req-{run}"), q), ts);
    rec.assistant(&response(vec![ContentBlock::text(a)]), &[], ts + 5, Some(5));
    let mut record = rec.finish();
    record.updated_at = ts + 10;
    record
}

/// The golden chat: run 1 reasons, calls a tool and an action, then answers after more
/// reasoning; run 2 answers directly.
async fn golden_chat(memory: &ChatMemory) {
    let chat = "chat-golden";
    let mut rec =
        memory.recorder("run-1", query(chat, "req-1", "Switch to dark and list files"), 1000);
    rec.system(SystemSnapshot::new("deepseek-chat", Some("You are helpful."), &[], true));
    rec.assistant(
        &response(vec![
            reasoning("need tools"),
            call("call_1", "bash", json!({"command": "ls"})),
            call("call_2", "switch_theme", json!({"theme": "dark"})),
        ]),
        &ids(&["r-1", "tool-1", "action-1"]),
        1010,
        Some(10),
    );
    rec.tool_result("call_1", r#"{"files":["a"]}"#, false, 1020, Some(3));
    rec.tool_result("call_2", "OK", false, 1021, None);
    rec.assistant(
        &response(vec![reasoning("done thinking"), ContentBlock::text("Done.")]),
        &ids(&["r-2", "c-1"]),
        1030,
        Some(8),
    );
    let mut record = rec.finish();
    record.updated_at = 1040;
    memory.append(record).await.unwrap();

    let mut rec = memory.recorder("run-2", query(chat, "req-2", "thanks"), 2000);
    rec.assistant(
        &response(vec![ContentBlock::text("You're welcome.")]),
        &ids(&["c-2"]),
        2010,
        None,
    );
    let mut record = rec.finish();
    record.updated_at = 2020;
    memory.append(record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_and_load_round_trip() {
    on_each_backend(append_and_load_round_trip_on).await;
}

async fn append_and_load_round_trip_on(chats: Chats) {
    let memory = chats.memory().await;
    let mut rec = memory.recorder("run-1", query("chat-1", "req-1", "hello"), 1000);
    rec.system(SystemSnapshot::new(
        "deepseek-chat",
        Some("sys"),
        &[ToolDefinition {
            name: "bash".into(),
            description: "runs".into(),
            input_schema: json!({"type": "object"}),
        }],
        true,
    ));
    rec.assistant(
        &response(vec![reasoning("think"), call("call_1", "bash", json!({"command": "ls"}))]),
        &ids(&["r-1", "t-1"]),
        1001,
        Some(1),
    );
    rec.tool_result("call_1", "boom", true, 1002, Some(2));
    rec.assistant(&response(vec![ContentBlock::text("hi")]), &ids(&["c-1"]), 1003, None);
    let written = memory.append(rec.finish()).await.unwrap();

    let loaded = memory.load("chat-1").await.unwrap();
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.runs, vec![written.clone()]);

    // One JSON line (a file's line, or a row) with the seed's top-level fields and the query
    // at the top.
    let lines = chats.lines("chat-1").await;
    assert_eq!(lines.len(), 1);
    let line: Value = serde_json::from_str(&lines[0]).unwrap();
    let keys: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["chatId", "runId", "transactionId", "updatedAt", "query", "system", "messages"]
    );
    assert_eq!(line["transactionId"], "run-1");
    assert_eq!(line["query"]["agentKey"], "demoAction");
    assert_eq!(line["system"]["model"], "deepseek-chat");
    assert_eq!(line["system"]["messages"], json!([{"role": "system", "content": "sys"}]));
    assert_eq!(line["system"]["tools"][0]["function"]["name"], "bash");
    assert_eq!(line["system"]["stream"], true);
    let roles: Vec<&str> =
        line["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "assistant", "tool", "assistant"]);
    assert_eq!(line["messages"][3]["_toolId"], "t-1");
    assert_eq!(line["messages"][3]["_isError"], true);

    // A fresh instance (cold cache, another node) reads the same.
    assert_eq!(chats.memory().await.load("chat-1").await.unwrap().runs, vec![written]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_is_written_only_when_new_or_changed() {
    on_each_backend(system_is_written_only_when_new_or_changed_on).await;
}

async fn system_is_written_only_when_new_or_changed_on(chats: Chats) {
    let memory = chats.memory().await;
    let s1 = SystemSnapshot::new("m1", Some("a"), &[], true);
    let s2 = SystemSnapshot::new("m2", Some("a"), &[], true);
    for (run, system) in [("r1", &s1), ("r2", &s1), ("r3", &s2)] {
        let mut rec = memory.recorder(run, query("chat-sys", run, "q"), 1);
        rec.system(system.clone());
        memory.append(rec.finish()).await.unwrap();
    }
    // After a restart (or on another node) the last stored system is found in the chat.
    let other = chats.memory().await;
    let mut rec = other.recorder("r4", query("chat-sys", "r4", "q"), 1);
    rec.system(s2.clone());
    other.append(rec.finish()).await.unwrap();
    // The first instance learns of r4's system before deciding on its own next run.
    let mut rec = memory.recorder("r5", query("chat-sys", "r5", "q"), 1);
    rec.system(s1.clone());
    memory.append(rec.finish()).await.unwrap();
    let mut rec = other.recorder("r6", query("chat-sys", "r6", "q"), 1);
    rec.system(s1.clone());
    other.append(rec.finish()).await.unwrap();

    let runs = memory.load("chat-sys").await.unwrap().runs;
    let systems: Vec<Option<&str>> =
        runs.iter().map(|r| r.system.as_ref().and_then(|s| s.model.as_deref())).collect();
    assert_eq!(systems, [Some("m1"), None, Some("m2"), None, Some("m1"), None]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_keeps_the_last_k_runs() {
    on_each_backend(replay_keeps_the_last_k_runs_on).await;
}

async fn replay_keeps_the_last_k_runs_on(chats: Chats) {
    let memory = chats.memory().await;
    for i in 0..25 {
        let run = simple_run(
            &memory,
            "chat-k",
            &format!("run-{i}"),
            &format!("q{i}"),
            &format!("a{i}"),
            i,
        );
        memory.append(run).await.unwrap();
    }
    let replay = memory.replay("chat-k").await.unwrap();
    assert_eq!(replay.len(), 40, "20 runs of user + assistant");
    assert_eq!(replay[0], Message::user("q5"));
    let Message::Assistant(last) = &replay[39] else { panic!("{:?}", replay[39]) };
    assert_eq!(last.text(), "a24");
    assert_eq!((last.model.as_str(), last.provider.as_str()), ("deepseek-chat", "deepseek"));

    let small =
        chats.memory_with(MemoryConfig { window: 3, ..MemoryConfig::new(chats.dir.path()) }).await;
    let replay = small.replay("chat-k").await.unwrap();
    assert_eq!(replay.len(), 6);
    assert_eq!(replay[0], Message::user("q22"));
    assert!(memory.replay("chat-new").await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_keeps_reasoning_only_on_tool_call_turns() {
    on_each_backend(replay_keeps_reasoning_only_on_tool_call_turns_on).await;
}

async fn replay_keeps_reasoning_only_on_tool_call_turns_on(chats: Chats) {
    let memory = chats.memory().await;
    golden_chat(&memory).await;
    let replay = memory.replay("chat-golden").await.unwrap();
    assert_eq!(replay.len(), 6, "{replay:#?}");
    assert_eq!(replay[0], Message::user("Switch to dark and list files"));
    let Message::Assistant(tools) = &replay[1] else { panic!("{:?}", replay[1]) };
    assert_eq!(
        tools.content,
        vec![
            reasoning("need tools"),
            call("call_1", "bash", json!({"command": "ls"})),
            call("call_2", "switch_theme", json!({"theme": "dark"})),
        ]
    );
    assert_eq!(tools.stop_reason, StopReason::ToolUse);
    assert_eq!(tools.usage.input_tokens, 100);
    assert_eq!(
        replay[2],
        Message::Tool {
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: r#"{"files":["a"]}"#.into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: "OK".into(),
                    is_error: false,
                },
            ]
        }
    );
    // The answer turn's reasoning is not replayed.
    let Message::Assistant(answer) = &replay[3] else { panic!("{:?}", replay[3]) };
    assert_eq!(answer.content, vec![ContentBlock::text("Done.")]);
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(replay[4], Message::user("thanks"));
    let reasoning_blocks = replay
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a),
            _ => None,
        })
        .flat_map(|a| &a.content)
        .filter(|b| matches!(b, ContentBlock::Reasoning { .. }))
        .count();
    assert_eq!(reasoning_blocks, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_drops_calls_left_without_a_result() {
    on_each_backend(replay_drops_calls_left_without_a_result_on).await;
}

async fn replay_drops_calls_left_without_a_result_on(chats: Chats) {
    let memory = chats.memory().await;
    // The run was cancelled while the second call ran.
    let mut rec = memory.recorder("run-1", query("chat-cut", "req-1", "go"), 1);
    rec.assistant(
        &response(vec![call("call_1", "bash", json!({})), call("call_2", "bash", json!({}))]),
        &[],
        2,
        None,
    );
    rec.tool_result("call_1", "ok", false, 3, None);
    memory.append(rec.finish()).await.unwrap();
    let runs = memory.load("chat-cut").await.unwrap().runs;
    let replay = replay_messages(&runs, 20);
    let Message::Assistant(a) = &replay[1] else { panic!("{replay:?}") };
    assert_eq!(a.content, vec![call("call_1", "bash", json!({}))]);
    assert!(matches!(&replay[2], Message::Tool { content } if content.len() == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_line_is_ignored_and_reported_and_the_next_append_loads() {
    on_each_backend(a_damaged_line_is_ignored_and_reported_and_the_next_append_loads_on).await;
}

async fn a_damaged_line_is_ignored_and_reported_and_the_next_append_loads_on(chats: Chats) {
    let memory = chats.memory().await;
    memory.append(simple_run(&memory, "chat-crash", "run-1", "q1", "a1", 10)).await.unwrap();
    // A crash in the middle of writing run 2: half its line (in a file, without a newline).
    let half =
        serde_json::to_string(&simple_run(&memory, "chat-crash", "run-2", "q2", "a2", 20)).unwrap();
    chats.damage("chat-crash", &half[..half.len() / 2]).await;

    let loaded = memory.load("chat-crash").await.unwrap();
    assert_eq!(loaded.runs.len(), 1);
    assert_eq!(loaded.runs[0].run_id, "run-1");
    assert_eq!(loaded.warnings.len(), 1);
    // Only a file can end in a line cut short.
    assert_eq!((loaded.warnings[0].line, loaded.warnings[0].partial), (2, chats.is_files()));
    assert_eq!(memory.replay("chat-crash").await.unwrap().len(), 2);
    // Listed from its readable runs (another node, with nothing cached, sees the same).
    for m in [&memory, &chats.memory().await] {
        let listed = m.list_chats().await.unwrap();
        assert_eq!((listed[0].chat_id.as_str(), listed[0].updated_at), ("chat-crash", 20));
    }

    // The next run starts on a fresh line; the broken one stays skipped (now mid-file).
    memory.append(simple_run(&memory, "chat-crash", "run-3", "q3", "a3", 30)).await.unwrap();
    let loaded = memory.load("chat-crash").await.unwrap();
    let runs: Vec<&str> = loaded.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(runs, ["run-1", "run-3"]);
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!((loaded.warnings[0].line, loaded.warnings[0].partial), (2, false));
    let lines = chats.lines("chat-crash").await;
    assert_eq!(lines.len(), 3);
    assert!(lines[2].starts_with(r#"{"chatId":"chat-crash","runId":"run-3""#));
    // The index still lists the chat.
    let listed = memory.list_chats().await.unwrap();
    assert_eq!(listed[0].updated_at, 40);
    // `GET /api/chat`'s detail names the damaged line instead of hiding it.
    let detail =
        serde_json::to_value(memory.chat_detail("chat-crash", false).await.unwrap()).unwrap();
    assert_eq!(detail["damaged"].as_array().unwrap().len(), 1, "{detail}");
    assert_eq!(detail["damaged"][0]["line"], 2);
    assert!(detail["damaged"][0]["reason"].as_str().unwrap().starts_with("unreadable line"));
    memory.append(simple_run(&memory, "chat-ok", "run-1", "q", "a", 50)).await.unwrap();
    let ok = serde_json::to_value(memory.chat_detail("chat-ok", false).await.unwrap()).unwrap();
    assert!(ok.get("damaged").is_none(), "absent when every line was read: {ok}");
    // A chat whose only line is damaged loads empty with its warning, and is not listed.
    chats.damage("chat-void", "{oops").await;
    let void = memory.load("chat-void").await.unwrap();
    assert_eq!((void.runs.len(), void.warnings.len()), (0, 1));
    let listed = chats.memory().await.list_chats().await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|c| c.chat_id.as_str()).collect();
    assert_eq!(ids, ["chat-ok", "chat-crash"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appends_to_one_chat_are_serialized() {
    on_each_backend(concurrent_appends_to_one_chat_are_serialized_on).await;
}

/// Appends 16 runs of `chat` (question and answer `text`) at once, spread over `nodes` in
/// turn, then checks that every run landed whole.
async fn sixteen_at_once(nodes: &[ChatMemory], chat: &str, text: &str) {
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let node = nodes[i % nodes.len()].clone();
            let (chat, text) = (chat.to_owned(), text.to_owned());
            tokio::spawn(async move {
                let run = simple_run(&node, &chat, &format!("run-{i}"), &text, &text, i as i64);
                node.append(run).await.unwrap();
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let loaded = nodes[0].load(chat).await.unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let ids: BTreeSet<String> = loaded.runs.iter().map(|r| r.run_id.clone()).collect();
    assert_eq!(ids.len(), 16);
}

async fn concurrent_appends_to_one_chat_are_serialized_on(chats: Chats) {
    let memory = chats.memory().await;
    sixteen_at_once(std::slice::from_ref(&memory), "chat-busy", &"x".repeat(256 * 1024)).await;
    assert_eq!(chats.lines("chat-busy").await.len(), 16);

    // A run holding the chat lock keeps other appends out until it ends.
    let lock = memory.lock_chat("chat-busy").await.unwrap();
    let waiting = {
        let memory = memory.clone();
        tokio::spawn(async move {
            memory.append(simple_run(&memory, "chat-busy", "late", "q", "a", 99)).await.unwrap();
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiting.is_finished());
    lock.append(simple_run(&memory, "chat-busy", "holder", "q", "a", 98)).await.unwrap();
    drop(lock);
    tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap();
    let runs = memory.load("chat-busy").await.unwrap().runs;
    let tail: Vec<&str> = runs[16..].iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(tail, ["holder", "late"]);

    // Chat locks are a node's own: two nodes appending to one chat at once both get every
    // run recorded, whole.
    sixteen_at_once(&[memory, chats.memory().await], "chat-two", "q").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chats_are_listed_newest_first() {
    on_each_backend(chats_are_listed_newest_first_on).await;
}

async fn chats_are_listed_newest_first_on(chats: Chats) {
    let memory = chats.memory().await;
    assert!(memory.list_chats().await.unwrap().is_empty());
    memory
        .append(simple_run(&memory, "chat-a", "a1", "元素碳的简介，100字", "ok", 100))
        .await
        .unwrap();
    memory.append(simple_run(&memory, "chat-b", "b1", "second chat", "ok", 200)).await.unwrap();
    memory.append(simple_run(&memory, "chat-a", "a2", "more", "ok", 300)).await.unwrap();
    if chats.is_files() {
        // Files that are not chats are ignored.
        std::fs::write(chats.dir.path().join("chats/notes.txt"), "x").unwrap();
        std::fs::write(chats.dir.path().join("chats/bad id.json"), "x").unwrap();
    }

    let listed = serde_json::to_value(memory.list_chats().await.unwrap()).unwrap();
    assert_eq!(
        listed,
        json!([
            {"chatId": "chat-a", "chatName": "元素碳的简介，100", "title": "元素碳的简介，100字", "firstAgentKey": "demoAction",
             "createdAt": 100, "updatedAt": 310},
            {"chatId": "chat-b", "chatName": "second cha", "title": "Second chat",
             "firstAgentKey": "demoAction", "createdAt": 200, "updatedAt": 210},
        ])
    );
    // A chat written by another process (node) is picked up: the cache checks the file, or
    // the chat's line ids.
    let other = chats.memory().await;
    assert_eq!(serde_json::to_value(other.list_chats().await.unwrap()).unwrap(), listed);
    other.append(simple_run(&other, "chat-b", "b2", "again", "ok", 400)).await.unwrap();
    let listed = memory.list_chats().await.unwrap();
    assert_eq!(listed[0].chat_id, "chat-b");
    assert_eq!(listed[0].updated_at, 410);
    other.append(simple_run(&other, "chat-c", "c1", "third", "ok", 50)).await.unwrap();
    let ids: Vec<String> =
        memory.list_chats().await.unwrap().into_iter().map(|c| c.chat_id).collect();
    assert_eq!(ids, ["chat-b", "chat-a", "chat-c"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_and_unknown_chat_ids() {
    on_each_backend(bad_and_unknown_chat_ids_on).await;
}

async fn bad_and_unknown_chat_ids_on(chats: Chats) {
    let memory = chats.memory().await;
    for bad in ["../etc/passwd", "a/b", "", "x.json"] {
        assert!(matches!(memory.load(bad).await, Err(MemoryError::InvalidChatId(_))), "{bad}");
        assert!(matches!(memory.lock_chat(bad).await, Err(MemoryError::InvalidChatId(_))));
    }
    assert!(matches!(memory.load("nope").await, Err(MemoryError::NotFound(_))));
    assert!(matches!(memory.chat_detail("nope", false).await, Err(MemoryError::NotFound(_))));
    let lock = memory.lock_chat("chat-x").await.unwrap();
    assert!(lock.runs().await.unwrap().is_empty());
    let wrong = simple_run(&memory, "chat-y", "r", "q", "a", 1);
    assert!(matches!(lock.append(wrong).await, Err(MemoryError::WrongChat { .. })));
}

fn normalized(mut events: Value) -> Value {
    for event in events.as_array_mut().unwrap() {
        assert!(event["timestamp"].as_i64().unwrap() > 0, "{event}");
        event["timestamp"] = json!(0);
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_events_of_a_stored_chat() {
    on_each_backend(snapshot_events_of_a_stored_chat_on).await;
}

async fn snapshot_events_of_a_stored_chat_on(chats: Chats) {
    let memory = chats.memory().await;
    golden_chat(&memory).await;
    let detail = memory.chat_detail("chat-golden", false).await.unwrap();
    assert_eq!(detail.chat_name, "Switch to");
    let detail = serde_json::to_value(&detail).unwrap();
    assert!(detail.get("messages").is_none());
    assert_eq!(detail["references"], json!([]));
    let chat = "chat-golden";
    let query = |req: &str, msg: &str| {
        json!({"seq": 0, "type": "request.query", "requestId": req, "chatId": chat,
               "role": "user", "message": msg, "agentKey": "demoAction", "timestamp": 0})
    };
    let mut expected = vec![
        query("req-1", "Switch to dark and list files"),
        json!({"type": "chat.start", "chatId": chat, "chatName": "Switch to"}),
        json!({"type": "run.start", "runId": "run-1", "chatId": chat}),
        json!({"type": "reasoning.snapshot", "reasoningId": "r-1", "text": "need tools"}),
        json!({"type": "tool.snapshot", "toolId": "tool-1", "toolName": "bash",
               "arguments": "{\"command\":\"ls\"}"}),
        json!({"type": "action.snapshot", "actionId": "action-1", "actionName": "switch_theme",
               "arguments": "{\"theme\":\"dark\"}"}),
        json!({"type": "tool.result", "toolId": "tool-1", "result": {"files": ["a"]}}),
        json!({"type": "action.result", "actionId": "action-1", "result": "OK"}),
        json!({"type": "reasoning.snapshot", "reasoningId": "r-2", "text": "done thinking"}),
        json!({"type": "content.snapshot", "contentId": "c-1", "text": "Done."}),
        json!({"type": "run.complete", "runId": "run-1"}),
        query("req-2", "thanks"),
        json!({"type": "run.start", "runId": "run-2", "chatId": chat}),
        json!({"type": "content.snapshot", "contentId": "c-2", "text": "You're welcome."}),
        json!({"type": "run.complete", "runId": "run-2"}),
    ];
    for (i, event) in expected.iter_mut().enumerate() {
        event["seq"] = json!(i + 1);
        event["timestamp"] = json!(0);
    }
    assert_eq!(normalized(detail["events"].clone()), Value::Array(expected));

    // Timestamps come from storage: the run's events at their messages' times.
    let events = detail["events"].as_array().unwrap();
    assert_eq!(events[0]["timestamp"], 1000);
    assert_eq!(events[6]["timestamp"], 1020);
    assert_eq!(events[10]["timestamp"], 1040);

    // With raw messages: every stored message, tagged with its run.
    let raw = memory.chat_detail(chat, true).await.unwrap().messages.unwrap();
    assert_eq!(raw.len(), 10);
    assert_eq!(raw[0]["role"], "user");
    assert_eq!(raw[0]["runId"], "run-1");
    assert_eq!(raw[9]["runId"], "run-2");
    assert_eq!(raw[2]["_toolId"], "tool-1");
    assert_eq!(raw[3]["_actionId"], "action-1");
}
