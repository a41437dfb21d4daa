//! What a share link's viewer is sent: the same events as a signed-in viewer's, with what is
//! for operators taken out. A provider's endpoint (`provenance[].url`) and a failure's
//! internals (its message, stack, logs, host, settings) stay on the server; the provider's name,
//! the demo flag and the analyst's one sentence stay in, so the visitor still knows where each
//! number came from and that a panel is failing.

use serde_json::{Map, Value, json};

/// What a failed panel says to a visitor when the failure has no analyst's sentence.
const PLAIN_FAILURE: &str = "This panel could not be updated.";

/// `text` (one server event as JSON) as a share link's viewer gets it.
pub(super) fn redact(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(mut v) => {
            walk(&mut v);
            v.to_string()
        }
        // Our own events are JSON; anything else is passed on as it is.
        Err(_) => text.to_owned(),
    }
}

fn walk(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("provenance", Value::Array(list)) => {
                        for p in list.iter_mut().filter_map(Value::as_object_mut) {
                            p.remove("url");
                        }
                    }
                    ("error", Value::Object(e)) if e.contains_key("kind") => plain(e),
                    (_, value) => walk(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(walk),
        _ => {}
    }
}

/// A failure as a visitor sees it: its kind, the provider's name and the analyst's sentence.
fn plain(e: &mut Map<String, Value>) {
    let outage = e.get("outage").and_then(Value::as_object);
    let sentence = outage
        .and_then(|o| o.get("summary"))
        .and_then(Value::as_str)
        .unwrap_or(PLAIN_FAILURE)
        .to_owned();
    let provider = outage.and_then(|o| o.get("name")).cloned();
    let mut out = Map::new();
    out.insert("kind".into(), e.get("kind").cloned().unwrap_or(Value::Null));
    out.insert("message".into(), json!(sentence));
    if let Some(name) = provider {
        out.insert("provider".into(), name);
    }
    *e = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_failure_internals_are_taken_out_and_the_rest_kept() {
        let event = json!({
            "type": "dashboard.snapshot",
            "state": {"title": "Gold", "panels": [{"id": "p1", "code": "return 1"}]},
            "panels": {
                "p1": {"data": [1], "provenance": [
                    {"provider": "binance", "demo": false, "fetchedAt": 1, "url": "https://api.binance.com/x"}
                ]},
                "p2": {"error": {"kind": "provider", "message": "HTTP 451 from api.binance.com",
                    "stack": ["at f"], "outage": {"name": "Binance", "summary": "Binance cannot be reached.",
                    "details": "GET https://api.binance.com/x: 451", "host": "api.binance.com"}}},
                "p3": {"error": {"kind": "runtime", "message": "TypeError at line 3", "line": 3}}
            }
        });
        let out: Value = serde_json::from_str(&redact(&event.to_string())).unwrap();
        let p1 = &out["panels"]["p1"]["provenance"][0];
        assert_eq!((&p1["provider"], &p1["demo"]), (&json!("binance"), &json!(false)));
        assert!(p1.get("url").is_none());
        assert_eq!(
            out["panels"]["p2"]["error"],
            json!({"kind": "provider", "message": "Binance cannot be reached.", "provider": "Binance"})
        );
        assert_eq!(
            out["panels"]["p3"]["error"],
            json!({"kind": "runtime", "message": PLAIN_FAILURE})
        );
        assert_eq!(out["state"], event["state"], "the dashboard itself is shown as it is");
        assert!(!out.to_string().contains("api.binance.com"));
        assert_eq!(redact("not json"), "not json");
    }
}
