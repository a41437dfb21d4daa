//! The tool-argument repair policy (shared notes, "Provider quirks"): arguments are parsed once,
//! when the call is complete. Trailing model tokens (`<|call|>`) are stripped, empty text means
//! `{}`, `{}{…}` keeps the real object; anything else that is not exactly one JSON object is an
//! error the model is shown. A call is never dropped silently.

use serde_json::Value;

/// Why a call's argument text is not one JSON object. The message is written for the model
/// (it is shown the error as the tool's result) and quotes the start of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentsError {
    /// Not JSON at all.
    #[error(
        "the arguments are not valid JSON ({reason}); send one JSON object matching the tool's schema: {preview}"
    )]
    NotJson {
        /// The parser's message.
        reason: String,
        /// The start of the text.
        preview: String,
    },
    /// One JSON value that is not an object.
    #[error("the arguments must be a JSON object, got {kind}: {preview}")]
    NotAnObject {
        /// `an array`, `a string`, ...
        kind: &'static str,
        /// The start of the text.
        preview: String,
    },
    /// Several JSON values one after another.
    #[error(
        "the arguments hold {count} JSON values one after another; make one call per object: {preview}"
    )]
    Several {
        /// How many.
        count: usize,
        /// The start of the text.
        preview: String,
    },
}

/// Parses a tool call's accumulated argument text under the repair policy.
pub fn parse_arguments(raw: &str) -> Result<Value, ArgumentsError> {
    let text = strip_special_tokens(raw);
    if text.is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let mut values = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    for item in stream.by_ref() {
        match item {
            Ok(v) => values.push(v),
            Err(e) => {
                return Err(ArgumentsError::NotJson {
                    reason: e.to_string(),
                    preview: preview(text),
                });
            }
        }
    }
    // `{}` followed by the real object: a provider that sends whole objects per chunk, or an
    // accumulator started at "{}".
    while values.len() > 1 && values[0].as_object().is_some_and(serde_json::Map::is_empty) {
        values.remove(0);
    }
    match values.len() {
        1 => match values.pop() {
            Some(v @ Value::Object(_)) => Ok(v),
            Some(other) => {
                Err(ArgumentsError::NotAnObject { kind: kind(&other), preview: preview(text) })
            }
            None => Ok(Value::Object(serde_json::Map::new())),
        },
        count => Err(ArgumentsError::Several { count, preview: preview(text) }),
    }
}

/// Removes trailing (and leading) special tokens such as `<|call|>` and `<|endoftext|>`.
fn strip_special_tokens(raw: &str) -> &str {
    let mut s = raw.trim();
    loop {
        let before = s;
        if s.ends_with("|>")
            && let Some(start) = s.rfind("<|")
        {
            s = s[..start].trim_end();
        }
        if s.starts_with("<|")
            && let Some(end) = s.find("|>")
        {
            s = s[end + 2..].trim_start();
        }
        if s == before {
            return s;
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first 200 characters of `text`, with `…` when cut: how malformed model or wire text is
/// quoted in error messages.
pub(crate) fn preview(text: &str) -> String {
    base::text::clip(text, 200)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn the_policy_cases() {
        assert_eq!(parse_arguments("").unwrap(), json!({}));
        assert_eq!(parse_arguments("  ").unwrap(), json!({}));
        assert_eq!(parse_arguments(r#"{"a":1}"#).unwrap(), json!({"a": 1}));
        assert_eq!(parse_arguments(r#"{}{"stock":"MSFT"}"#).unwrap(), json!({"stock": "MSFT"}));
        assert_eq!(parse_arguments(r#"{"a":1}<|call|>"#).unwrap(), json!({"a": 1}));
        assert_eq!(parse_arguments(r#"{"a":1} <|endoftext|><|call|>"#).unwrap(), json!({"a": 1}));
        let two = parse_arguments(r#"{"a":1}{"b":2}"#).unwrap_err();
        assert!(matches!(two, ArgumentsError::Several { count: 2, .. }), "{two:?}");
        assert!(two.to_string().contains("2 JSON values"), "{two}");
        let placeholder = parse_arguments(r#"{"x":?}"#).unwrap_err();
        assert!(placeholder.to_string().contains("not valid JSON"), "{placeholder}");
        let array = parse_arguments("[1]").unwrap_err();
        assert_eq!(array, ArgumentsError::NotAnObject { kind: "an array", preview: "[1]".into() });
    }

    proptest! {
        /// Any object, split anywhere and re-joined, parses back to itself; with a `{}` prefix
        /// or a trailing special token too.
        #[test]
        fn objects_survive_the_policy(keys in proptest::collection::vec("[a-z]{1,6}", 0..5), n in 0i64..1000) {
            let obj: serde_json::Map<String, Value> =
                keys.iter().map(|k| (k.clone(), json!(n))).collect();
            let text = Value::Object(obj.clone()).to_string();
            prop_assert_eq!(parse_arguments(&text).unwrap(), Value::Object(obj.clone()));
            prop_assert_eq!(parse_arguments(&format!("{{}}{text}")).unwrap(), Value::Object(obj.clone()));
            prop_assert_eq!(parse_arguments(&format!("{text}<|call|>")).unwrap(), Value::Object(obj));
        }

        /// Garbage never panics and never yields a non-object.
        #[test]
        fn garbage_is_an_error_or_an_object(s in ".{0,40}") {
            if let Ok(v) = parse_arguments(&s) {
                prop_assert!(v.is_object());
            }
        }
    }
}
