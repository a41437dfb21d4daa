//! The compact view of a dashboard for models: the `get_state` summary and the one-line
//! "Dashboard Context" injected into every turn.

use serde_json::{Map, Value, json};

use super::DashboardState;
use super::validate::type_name;

/// Characters of code kept in `codePreview`.
pub const PREVIEW_CHARS: usize = 160;
/// Panels listed in the context line before "… and N more".
pub const CONTEXT_PANELS: usize = 24;

/// Panel list and key config with a code preview (no full code, no config).
///
/// `{title, layout, refresh?, variables?: [{name, default}], panels: [{id, title, type, renderer,
/// indicators?, dataSource?: {source, method}, layout?, refresh?, codePreview}], alerts?}`
pub fn summary(state: &DashboardState) -> Value {
    let mut out = Map::new();
    out.insert("title".into(), json!(state.title));
    out.insert("layout".into(), json!(state.layout));
    if let Some(r) = &state.refresh {
        out.insert("refresh".into(), json!(r));
    }
    if !state.variables.is_empty() {
        let vars: Vec<Value> =
            state.variables.iter().map(|v| json!({"name": v.name, "default": v.default})).collect();
        out.insert("variables".into(), Value::Array(vars));
    }
    let panels: Vec<Value> = state
        .panels
        .iter()
        .map(|p| {
            let mut m = Map::new();
            m.insert("id".into(), json!(p.id));
            m.insert("title".into(), json!(p.title));
            m.insert("type".into(), json!(p.kind));
            m.insert("renderer".into(), json!(p.renderer));
            if let Some(i) = p.indicators.as_ref().filter(|i| !i.is_empty()) {
                m.insert("indicators".into(), json!(i));
            }
            if let Some(ds) = p.data_source.as_ref().and_then(source_method) {
                m.insert("dataSource".into(), ds);
            }
            if let Some(l) = p.layout {
                m.insert("layout".into(), json!(l));
            }
            if let Some(r) = &p.refresh {
                m.insert("refresh".into(), json!(r));
            }
            m.insert("codePreview".into(), json!(code_preview(&p.code)));
            Value::Object(m)
        })
        .collect();
    out.insert("panels".into(), Value::Array(panels));
    if !state.alerts.is_empty() {
        // Rules are small and the model edits them whole: all of each.
        out.insert("alerts".into(), json!(state.alerts));
    }
    Value::Object(out)
}

/// `{source, method}` of a `dataSource` (params dropped); `None` when it has neither.
fn source_method(ds: &Value) -> Option<Value> {
    let o = ds.as_object()?;
    let mut m = Map::new();
    for k in ["source", "method"] {
        if let Some(v) = o.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// The first [`PREVIEW_CHARS`] characters of the code with whitespace runs collapsed to one
/// space, ending in "…" when cut.
pub fn code_preview(code: &str) -> String {
    let collapsed = code.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= PREVIEW_CHARS {
        return collapsed;
    }
    let mut cut: String = collapsed.chars().take(PREVIEW_CHARS).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// The one-line "Dashboard Context": `Active dashboard: "Gold" (db_x) — panels: gold-kline (Gold
/// daily, candlestick), gold-news (News, feed)`.
pub fn context_line(id: &str, state: &DashboardState) -> String {
    let mut line = format!("Active dashboard: {:?} ({id})", state.title);
    if state.panels.is_empty() {
        line.push_str(" — no panels");
        return line;
    }
    let listed: Vec<String> = state
        .panels
        .iter()
        .take(CONTEXT_PANELS)
        .map(|p| format!("{} ({}, {})", p.id, p.title, type_name(p.kind)))
        .collect();
    line.push_str(" — panels: ");
    line.push_str(&listed.join(", "));
    if state.panels.len() > CONTEXT_PANELS {
        line.push_str(&format!(", … and {} more", state.panels.len() - CONTEXT_PANELS));
    }
    if !state.variables.is_empty() {
        let vars: Vec<String> =
            state.variables.iter().map(|v| format!("{}={}", v.name, v.default)).collect();
        line.push_str(&format!("; variables: {}", vars.join(", ")));
    }
    if !state.alerts.is_empty() {
        let rules: Vec<&str> = state.alerts.iter().map(|a| a.id.as_str()).collect();
        line.push_str(&format!("; alerts: {}", rules.join(", ")));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::parse_state;

    fn gold() -> DashboardState {
        parse_state(&json!({
            "title": "Gold",
            "layout": {"columns": 2, "gap": 8},
            "variables": [{"name": "symbol", "label": "Symbol", "type": "select",
                           "options": ["XAUUSD", "XAGUSD"], "default": "XAUUSD"}],
            "panels": [
                {"id": "gold-kline", "title": "Gold daily", "type": "candlestick",
                 "renderer": "lightweight-charts", "indicators": ["MA(20)", "MA(60)"],
                 "dataSource": {"source": "market", "method": "getKline", "params": {"limit": 120}},
                 "layout": {"w": 2, "h": 4}, "config": {"big": "x"},
                 "code": "const data = await sdk.market.getKline({\n    symbol: vars.symbol,\n    timeframe: '1D', limit: 120 });\nreturn data;"},
                {"id": "gold-news", "title": "News", "type": "feed", "renderer": "custom",
                 "refresh": "5m", "code": "x".repeat(300)}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn summary_shape() {
        let s = summary(&gold());
        assert_eq!(
            s,
            json!({
                "title": "Gold",
                "layout": {"columns": 2, "gap": 8},
                "variables": [{"name": "symbol", "default": "XAUUSD"}],
                "panels": [
                    {"id": "gold-kline", "title": "Gold daily", "type": "candlestick",
                     "renderer": "lightweight-charts", "indicators": ["MA(20)", "MA(60)"],
                     "dataSource": {"source": "market", "method": "getKline"},
                     "layout": {"w": 2, "h": 4},
                     "codePreview": "const data = await sdk.market.getKline({ symbol: vars.symbol, timeframe: '1D', limit: 120 }); return data;"},
                    {"id": "gold-news", "title": "News", "type": "feed", "renderer": "custom",
                     "refresh": "5m", "codePreview": format!("{}…", "x".repeat(160))}
                ]
            })
        );
    }

    #[test]
    fn preview_cuts_on_chars_not_bytes() {
        let p = code_preview(&"黄".repeat(200));
        assert_eq!(p.chars().count(), 161);
        assert!(p.ends_with('…'));
        assert_eq!(code_preview("  a \n\t b  "), "a b");
    }

    #[test]
    fn context_line_lists_panels() {
        assert_eq!(
            context_line("db_x", &gold()),
            "Active dashboard: \"Gold\" (db_x) — panels: gold-kline (Gold daily, candlestick), gold-news (News, feed); variables: symbol=\"XAUUSD\""
        );
        let mut empty = gold();
        empty.panels.clear();
        empty.variables.clear();
        assert_eq!(context_line("db_y", &empty), "Active dashboard: \"Gold\" (db_y) — no panels");
        let mut many = gold();
        many.variables.clear();
        let p = many.panels[1].clone();
        many.panels = (0..30).map(|i| crate::Panel { id: format!("p{i}"), ..p.clone() }).collect();
        assert!(context_line("d", &many).ends_with("p23 (News, feed), … and 6 more"));
    }
}
