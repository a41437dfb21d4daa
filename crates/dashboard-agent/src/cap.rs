//! Capping tool results sent to a model (default ~6,000 tokens). Truncation is structural —
//! long arrays keep their first items, long strings their start, each with a marker saying how
//! much was cut — so the result is always valid JSON of the same overall shape, plus a hint.

use serde_json::{Map, Value};

use base::text::estimate_tokens;

/// Default budget for one tool result.
pub const DEFAULT_MAX_TOKENS: usize = 6_000;

/// The hint added to a truncated result.
pub const HINT: &str = "--- TRUNCATED --- the result was too large for the context; use a more specific \
     query (filter, slice, or map to fewer fields)";

fn tokens(v: &Value) -> usize {
    estimate_tokens(&v.to_string())
}

fn shrink(v: &Value, items: usize, chars: usize) -> Value {
    match v {
        Value::String(s) if s.chars().count() > chars => {
            let cut: String = s.chars().take(chars).collect();
            Value::String(format!("{cut}…[{} more chars]", s.chars().count() - chars))
        }
        Value::Array(a) => {
            let mut out: Vec<Value> =
                a.iter().take(items).map(|x| shrink(x, items, chars)).collect();
            if a.len() > items {
                out.push(Value::String(format!("…[{} more items]", a.len() - items)));
            }
            Value::Array(out)
        }
        Value::Object(o) => {
            let mut out = Map::new();
            for (i, (k, x)) in o.iter().enumerate() {
                if i >= items.max(8) {
                    out.insert("…".into(), Value::String(format!("[{} more keys]", o.len() - i)));
                    break;
                }
                out.insert(k.clone(), shrink(x, items, chars));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// `value` unchanged if it fits `max_tokens`, else a structurally truncated copy with [`HINT`]
/// (as a `truncated` key on objects; arrays and scalars are wrapped as `{truncated, value}`).
pub fn cap(value: &Value, max_tokens: usize) -> Value {
    if tokens(value) <= max_tokens {
        return value.clone();
    }
    let (mut items, mut chars) = (64usize, 2_000usize);
    loop {
        let mut v = shrink(value, items, chars);
        match &mut v {
            Value::Object(o) => {
                o.insert("truncated".into(), Value::String(HINT.into()));
            }
            _ => v = serde_json::json!({ "truncated": HINT, "value": v }),
        }
        if tokens(&v) <= max_tokens || (items == 1 && chars <= 16) {
            return v;
        }
        items = (items / 2).max(1);
        chars = (chars / 2).max(16);
    }
}

/// [`cap`] for an object with a typed shape (an output schema): only `field`, its free-form
/// part (`results`, `state`), is truncated, so every other field keeps its declared type; the
/// hint goes in a top-level `truncated` key. Objects without `field` are returned whole.
pub fn cap_field(value: &Value, field: &str, max_tokens: usize) -> Value {
    let total = tokens(value);
    let (Value::Object(o), true) = (value, total > max_tokens) else { return value.clone() };
    let Some(inner) = o.get(field) else { return value.clone() };
    // What the other fields and the hint take; the free-form part gets the rest (at least a
    // little, so a truncated result still shows what it was).
    let rest = total.saturating_sub(tokens(inner)) + estimate_tokens(HINT) + 8;
    let mut out = o.clone();
    out.insert(field.to_owned(), cap(inner, max_tokens.saturating_sub(rest).max(200)));
    out.insert("truncated".into(), Value::String(HINT.into()));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_results_are_untouched() {
        let v = json!({"a": [1, 2, 3], "b": "x"});
        assert_eq!(cap(&v, 100), v);
    }

    #[test]
    fn large_results_fit_keep_shape_and_say_so() {
        let rows: Vec<Value> =
            (0..5000).map(|i| json!({"time": i, "close": 1.5, "note": "x".repeat(50)})).collect();
        let v = json!({"dashboard_id": "db_1", "rows": rows});
        let out = cap(&v, 1000);
        assert!(tokens(&out) <= 1000, "{}", tokens(&out));
        assert_eq!(out["dashboard_id"], "db_1");
        assert_eq!(out["truncated"], HINT);
        let kept = out["rows"].as_array().unwrap();
        assert!(kept.last().unwrap().as_str().unwrap().contains("more items"));
        assert_eq!(kept[0]["time"], 0);
    }

    #[test]
    fn cap_field_cuts_only_the_free_form_field() {
        let rows: Vec<Value> = (0..5000).map(|i| json!({"i": i, "s": "x".repeat(40)})).collect();
        let panels: Vec<Value> = (0..100).map(|i| json!({"panelId": format!("p{i}")})).collect();
        let v = json!({"results": rows, "validation": {"panels": panels}});
        let out = cap_field(&v, "results", 3000);
        assert!(tokens(&out) <= 3000, "{}", tokens(&out));
        assert_eq!(out["validation"], v["validation"], "typed fields stay whole");
        assert_eq!(out["truncated"], HINT);
        assert_eq!(out["results"]["truncated"], HINT);
        let small = json!({"results": [1, 2]});
        assert_eq!(cap_field(&small, "results", 3000), small);
        let other = json!({"changes": "y".repeat(40_000)});
        assert_eq!(cap_field(&other, "results", 100), other, "no free-form field: left whole");
    }

    #[test]
    fn cjk_counts_heavier() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("黄金看板"), 4);
    }

    proptest::proptest! {
        #[test]
        fn capped_results_fit_the_budget(n in 0usize..400, len in 0usize..300, budget in 200usize..2000) {
            let v = Value::Array((0..n).map(|i| json!({"i": i, "s": "y".repeat(len)})).collect());
            let out = cap(&v, budget);
            proptest::prop_assert!(tokens(&out) <= budget || tokens(&v) <= budget);
        }
    }
}
