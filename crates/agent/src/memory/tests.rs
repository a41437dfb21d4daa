//! Unit tests of chat memory that need its private parts.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_operations_run_at_most_file_ops_at_once_and_release_their_permits() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let memory = ChatMemory::new(MemoryConfig::new(Path::new("/unused")));
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let calls: Vec<_> = (0..FILE_OPS * 4)
        .map(|_| {
            let (inner, running, most) = (memory.inner.clone(), running.clone(), most.clone());
            tokio::spawn(async move {
                blocking(&inner, move |_| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok(())
                })
                .await
            })
        })
        .collect();
    for c in calls {
        c.await.unwrap().unwrap();
    }
    let most = most.load(Ordering::SeqCst);
    assert!((2..=FILE_OPS).contains(&most), "{most} at once");
    assert_eq!(memory.inner.file_ops.available_permits(), FILE_OPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_appends_to_new_chats_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let memory = ChatMemory::new(MemoryConfig::new(dir.path()));
    let appends: Vec<_> = (0..FILE_OPS * 5)
        .map(|i| {
            let memory = memory.clone();
            tokio::spawn(async move {
                let query = Query {
                    chat_id: format!("chat-{i}"),
                    message: format!("question {i}"),
                    ..Query::default()
                };
                memory.append(memory.recorder(&format!("run-{i}"), query, 1_000).finish()).await
            })
        })
        .collect();
    for a in appends {
        a.await.unwrap().unwrap();
    }
    assert_eq!(memory.list_chats().await.unwrap().len(), FILE_OPS * 5);
    assert_eq!(memory.inner.file_ops.available_permits(), FILE_OPS);
}

#[test]
fn chat_ids_are_checked() {
    for ok in ["d0e5b9ab-af21-4e3b-8e1a-a977dc6d5656", "chat_1", "a", &"x".repeat(64)] {
        assert!(validate_chat_id(ok).is_ok(), "{ok}");
    }
    for bad in ["", "../etc", "a/b", "a.json", ".", "..", "a b", &"x".repeat(65), "ä"] {
        assert!(matches!(validate_chat_id(bad), Err(MemoryError::InvalidChatId(_))), "{bad}");
    }
}

#[test]
fn config_reads_the_variables() {
    let data = Path::new("/data");
    let config = MemoryConfig::from_vars(data, |_| None).unwrap();
    assert_eq!(config.dir, Path::new("/data/chats"));
    assert_eq!(config.window, 20);
    assert!(config.is_action("show_modal") && !config.is_action("bash"));

    let vars = HashMap::from([
        ("MEMORY_CHAT_DIR", "/elsewhere"),
        ("MEMORY_CHAT_K", "5"),
        ("MEMORY_CHAT_ACTION_TOOLS", " confetti , ,switch_theme"),
    ]);
    let config = MemoryConfig::from_vars(data, |k| vars.get(k).map(|v| (*v).to_owned())).unwrap();
    assert_eq!(config.dir, Path::new("/elsewhere"));
    assert_eq!(config.window, 5);
    assert_eq!(config.action_tools, BTreeSet::from(["confetti".into(), "switch_theme".into()]));

    let bad = MemoryConfig::from_vars(data, |k| (k == "MEMORY_CHAT_K").then(|| "many".into()));
    assert!(matches!(bad, Err(MemoryError::Config(_))));
}

#[test]
fn chat_names_are_cut_by_characters() {
    assert_eq!(chat_name("元素碳的简介，100字"), "元素碳的简介，100");
    assert_eq!(chat_name("  hi  "), "hi");
}

#[test]
fn titles_come_from_the_exchange_not_the_first_words() {
    let memory = ChatMemory::new(MemoryConfig::new(Path::new("/unused")));
    let run = |message: &str| {
        let query = Query { chat_id: "c".into(), message: message.into(), ..Query::default() };
        memory.recorder("r", query, 1).record
    };
    assert_eq!(chat_title(&run("Build me a gold dashboard")), "Gold dashboard");
    assert_eq!(chat_title(&run("can you please show me BTC funding?")), "BTC funding");
    assert_eq!(chat_title(&run("please")), "Please", "all filler keeps its words");
    assert_eq!(chat_title(&run("")), "");
    let long = chat_title(&run(&"word ".repeat(40)));
    assert!(long.chars().count() <= TITLE_CHARS && long.ends_with("word"), "{long}");
    assert_eq!(chat_title(&run(&"x".repeat(80))).chars().count(), TITLE_CHARS);
    // The dashboard the run built names the chat.
    let mut built = run("Build me a gold dashboard");
    let result = r#"{"dashboard_id":"db_1","state":{"title":"Gold vs. the dollar"}}"#;
    built.messages.push(StoredMessage::Tool(ToolEntry {
        name: "execute".into(),
        tool_call_id: "t1".into(),
        content: vec![Part::text(result)],
        ts: 2,
        tool_id: None,
        action_id: None,
        timing: None,
        is_error: false,
        events: Vec::new(),
    }));
    assert_eq!(chat_title(&built), "Gold vs. the dollar");
}

#[test]
fn stored_messages_use_the_seed_shapes() {
    let memory = ChatMemory::new(MemoryConfig::new(Path::new("/unused")));
    let query = Query {
        request_id: "req".into(),
        chat_id: "chat".into(),
        role: "user".into(),
        message: "switch to dark".into(),
        ..Query::default()
    };
    let mut rec = memory.recorder("run", query, 100);
    let message = AssistantMessage {
        content: vec![
            ContentBlock::Reasoning { text: "hmm".into(), signature: None, redacted: None },
            ContentBlock::text(""),
            ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "switch_theme".into(),
                input: json!({"theme": "dark"}),
                input_error: None,
            },
        ],
        model: "deepseek-chat".into(),
        provider: "deepseek".into(),
        usage: Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() },
        ..AssistantMessage::default()
    };
    rec.assistant(&message, &["r_1".into(), "c_1".into()], 110, Some(9));
    rec.tool_result("call_1", "OK", false, 120, Some(1));
    let record = rec.finish();
    let v = serde_json::to_value(&record.messages).unwrap();
    let msg_id = v[1]["_msgId"].as_str().unwrap();
    assert!(msg_id.starts_with("m_") && msg_id.len() == 10, "{msg_id}");
    assert_eq!(
        v,
        json!([
            {"role": "user", "content": [{"type": "text", "text": "switch to dark"}], "ts": 100},
            {"role": "assistant", "reasoning_content": [{"type": "text", "text": "hmm"}],
             "ts": 110, "_msgId": msg_id, "_reasoningId": "r_1", "_model": "deepseek-chat",
             "_provider": "deepseek"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
              "function": {"name": "switch_theme", "arguments": "{\"theme\":\"dark\"}"}}],
             "ts": 110, "_msgId": msg_id, "_actionId": "run_action_0", "_timing": 9,
             "_usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
             "_model": "deepseek-chat", "_provider": "deepseek"},
            {"role": "tool", "name": "switch_theme", "tool_call_id": "call_1",
             "content": [{"type": "text", "text": "OK"}], "ts": 120,
             "_actionId": "run_action_0", "_timing": 1},
        ])
    );
    assert_eq!(record.transaction_id, "run");
}

#[test]
fn a_partial_last_line_is_reported_not_fatal() {
    let good = r#"{"chatId":"c","runId":"r","transactionId":"r","updatedAt":1,"query":{"requestId":"r","chatId":"c","role":"user","message":"m"},"messages":[]}"#;
    let bytes = format!("{good}\n{}", &good[..40]);
    let loaded = parse_lines("c", bytes.as_bytes());
    assert_eq!(loaded.runs.len(), 1);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].partial && loaded.warnings[0].line == 2);
    // A bad line in the middle is skipped too, and is not "partial".
    let bytes = format!("{good}\n{{oops\n{good}\n");
    let loaded = parse_lines("c", bytes.as_bytes());
    assert_eq!(loaded.runs.len(), 2);
    assert!(!loaded.warnings[0].partial && loaded.warnings[0].line == 2);
}

#[test]
fn images_are_stored_by_reference_and_come_back_before_the_text_and_in_the_history() {
    let memory = ChatMemory::new(MemoryConfig::new(Path::new("/unused")));
    let query = Query {
        request_id: "req".into(),
        chat_id: "chat".into(),
        message: "build me this".into(),
        ..Query::default()
    };
    let upload = Upload {
        kind: "image".into(),
        name: "chart.png".into(),
        size_bytes: 10,
        mime_type: "image/png".into(),
        sha256: Some("ab".repeat(32)),
        url: None,
    };
    let by_url = Upload {
        name: "x.jpg".into(),
        size_bytes: 0,
        mime_type: String::new(),
        sha256: None,
        url: Some("https://a.example/x.jpg".into()),
        ..upload.clone()
    };
    let mut rec = memory.recorder("run", query, 100);
    rec.images(&[upload.clone(), by_url.clone()]);
    let record = rec.finish();
    let line = serde_json::to_value(&record.messages[0]).unwrap();
    assert_eq!(line["content"][1]["type"], "image");
    assert_eq!(line["content"][1]["upload"]["sha256"], "ab".repeat(32));
    // A line written before images existed still reads.
    let old: StoredMessage = serde_json::from_value(
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "ts": 1}),
    )
    .unwrap();
    assert!(matches!(old, StoredMessage::User(u) if u.content[0].upload.is_none()));

    let replayed = replay_messages(std::slice::from_ref(&record), 1);
    assert_eq!(
        replayed,
        [Message::User {
            content: vec![
                ContentBlock::Image {
                    media_type: "image/png".into(),
                    source: ImageSource::Upload { id: "ab".repeat(32) },
                },
                ContentBlock::Image {
                    media_type: String::new(),
                    source: ImageSource::Url { url: "https://a.example/x.jpg".into() },
                },
                ContentBlock::text("build me this"),
            ]
        }]
    );
    let events = snapshot_events(&[record], &BTreeSet::new());
    let uploads: Vec<&Upload> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RequestUpload { upload, .. } => Some(upload),
            _ => None,
        })
        .collect();
    assert_eq!(uploads, [&upload, &by_url]);
    assert_eq!(events[1].body.type_name(), "request.upload");
}
