//! Checks a call's params against its [`MethodSpec`]: unknown, missing, mistyped, out-of-enum
//! and out-of-range params are errors naming the param and what is allowed; defaults are applied.

use serde_json::{Map, Value};

use super::{MethodSpec, ParamSpec, ParamType, SdkError, SourceSpec};

/// Validates `params` (an object, or `undefined`/`null` for none) and returns them with defaults
/// applied.
pub fn validate(
    src: &SourceSpec,
    m: &MethodSpec,
    params: Value,
) -> Result<Map<String, Value>, SdkError> {
    let err = |message: String| SdkError::InvalidParams {
        source_name: src.name.clone(),
        method: m.name.clone(),
        message,
    };
    let mut given = match params {
        Value::Null => Map::new(),
        Value::Object(o) => o,
        other => {
            return Err(err(format!(
                "params must be one object like {{{}}}, got {}",
                m.params.iter().map(|p| format!("{}: ...", p.name)).collect::<Vec<_>>().join(", "),
                type_name(&other)
            )));
        }
    };
    let names: Vec<&str> = m.params.iter().map(|p| p.name.as_str()).collect();
    if let Some(unknown) = given.keys().find(|k| !names.contains(&k.as_str())) {
        let near = closest(unknown, &names);
        let hint = match near.first() {
            Some(n) => format!("did you mean `{n}`? "),
            None => String::new(),
        };
        return Err(err(format!(
            "unknown param `{unknown}`; {hint}accepted params: {}",
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        )));
    }
    let mut out = Map::new();
    for p in &m.params {
        match given.remove(&p.name) {
            // `undefined` arrives as absent and an explicit null means "use the default".
            None | Some(Value::Null) => {
                if let Some(d) = &p.default {
                    out.insert(p.name.clone(), d.clone());
                } else if p.required {
                    return Err(err(format!(
                        "missing required param `{}` ({}): {}",
                        p.name,
                        p.ty.as_str(),
                        p.description
                    )));
                }
            }
            Some(v) => {
                check_type(p, &v).map_err(|e| err(format!("param `{}` {e}", p.name)))?;
                out.insert(p.name.clone(), v);
            }
        }
    }
    Ok(out)
}

/// Checks one value against a param's type, enum and bounds. The error reads after
/// "param `x` ".
pub fn check_type(p: &ParamSpec, v: &Value) -> Result<(), String> {
    let ok = match p.ty {
        ParamType::String => v.is_string(),
        ParamType::Number => v.is_number(),
        ParamType::Integer => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        ParamType::Boolean => v.is_boolean(),
        ParamType::Array => v.is_array(),
        ParamType::Object => v.is_object(),
    };
    if !ok {
        return Err(format!(
            "must be {} {}, got {} {v}",
            article(p.ty),
            p.ty.as_str(),
            type_name(v)
        ));
    }
    if let Some(allowed) = &p.allowed
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!("must be one of {}, got {v}", list.join(", ")));
    }
    if let Some(x) = v.as_f64() {
        if let Some(min) = p.min
            && x < min
        {
            return Err(format!("must be >= {min}, got {v}"));
        }
        if let Some(max) = p.max
            && x > max
        {
            return Err(format!("must be <= {max}, got {v}"));
        }
    }
    Ok(())
}

fn article(t: ParamType) -> &'static str {
    match t {
        ParamType::Integer | ParamType::Array | ParamType::Object => "an",
        _ => "a",
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

use base::text::closest;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn method() -> (SourceSpec, MethodSpec) {
        let m: MethodSpec = serde_json::from_value(json!({
            "name": "getKline", "description": "candles",
            "params": [
                {"name": "symbol", "type": "string", "required": true, "description": "e.g. XAUUSD"},
                {"name": "timeframe", "type": "string", "default": "1D",
                 "enum": ["1m", "1h", "1D"], "description": "bar size"},
                {"name": "limit", "type": "integer", "default": 120, "min": 1, "max": 5000,
                 "description": "bars"}
            ],
            "returns": {"type": "array<Candle>", "description": "bars"}
        }))
        .unwrap();
        let s: SourceSpec = serde_json::from_value(json!({
            "name": "market", "displayName": "Market", "description": "d", "methods": []
        }))
        .unwrap();
        (s, m)
    }

    #[test]
    fn defaults_are_applied() {
        let (s, m) = method();
        let out = validate(&s, &m, json!({"symbol": "XAUUSD"})).unwrap();
        assert_eq!(
            Value::Object(out),
            json!({"symbol": "XAUUSD", "timeframe": "1D", "limit": 120})
        );
    }

    #[test]
    fn errors_name_the_param_and_what_is_allowed() {
        let (s, m) = method();
        let msg = |p| validate(&s, &m, p).unwrap_err().to_string();
        assert_eq!(
            msg(json!({})),
            "market.getKline: missing required param `symbol` (string): e.g. XAUUSD"
        );
        assert_eq!(
            msg(json!({"symbol": "X", "timeframe": "4h"})),
            "market.getKline: param `timeframe` must be one of \"1m\", \"1h\", \"1D\", got \"4h\""
        );
        assert_eq!(
            msg(json!({"symbol": 5})),
            "market.getKline: param `symbol` must be a string, got number 5"
        );
        assert_eq!(
            msg(json!({"symbol": "X", "limit": 1.5})),
            "market.getKline: param `limit` must be an integer, got number 1.5"
        );
        assert_eq!(
            msg(json!({"symbol": "X", "limit": 0})),
            "market.getKline: param `limit` must be >= 1, got 0"
        );
        assert!(msg(json!({"symbl": "X"})).contains("did you mean `symbol`?"));
        assert!(msg(json!("XAUUSD")).contains("params must be one object like {symbol: ..."));
    }

    #[test]
    fn closest_prefers_near_names() {
        assert_eq!(closest("getKlines", &["getKline", "getQuote", "getTrades"])[0], "getKline");
        assert!(closest("zzz", &["getKline"]).is_empty());
    }
}
