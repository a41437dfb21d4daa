//! Unit tests of the run loop.

use super::*;

#[test]
fn window_keeps_system_and_recent_and_tool_pairs() {
    let call = Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::ToolUse {
            id: "c1".into(),
            name: "t".into(),
            input: json!({}),
            input_error: None,
        }],
        ..AssistantMessage::default()
    });
    let big = "x".repeat(400); // 100 tokens
    let msgs = vec![
        Message::system("sys"),
        Message::user(big.clone()),
        Message::user(big.clone()),
        call,
        Message::tool_result("c1", big.clone(), false),
        Message::user("last"),
    ];
    // Window 200 → 150 usable: system + last + (call, result) ≈ 4+1 + 4+1 + 4+1 + 104 = 119.
    let out = WindowTransform.transform(&msgs, 200);
    assert!(matches!(out[0], Message::System { .. }));
    assert_eq!(out.len(), 4, "{out:?}");
    assert!(matches!(out[1], Message::Assistant(_)));
    assert!(matches!(out[2], Message::Tool { .. }));
    // Tiny window: the newest group is still kept.
    let out = WindowTransform.transform(&msgs, 1);
    assert_eq!(out.len(), 2);
}
