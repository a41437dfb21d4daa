//! Parsing untrusted JSON into a [`DashboardState`] with every problem named by its JSON path.
//!
//! Two passes:
//! 1. **Structure** (types, required and unknown fields, enum values) through
//!    `serde_path_to_error`. When the whole document does not deserialize, each part (`title`,
//!    `layout`, every panel, every variable) is tried on its own so that one bad panel does not
//!    hide the problems of the others.
//! 2. **Rules** on the typed state, collecting every issue: title and grid bounds, panel ids,
//!    titles, code size, the renderer of each type, panel spans, refresh intervals and variables.
//!
//! Every [`Issue`] names a path such as `panels[2].renderer` or `variables[0].default` (`$` is the
//! whole document) and says what was expected, so a model can fix it without guessing.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{DashboardState, Layout, Panel, PanelType, Renderer, Variable, VariableType};

/// One problem: where and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// JSON path such as `panels[2].renderer`.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// A state that failed validation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(|i| format!("{}: {}", i.path, i.message)).collect::<Vec<_>>().join("; "))]
pub struct InvalidState(pub Vec<Issue>);

/// Longest dashboard title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Most grid columns.
pub const MAX_COLUMNS: u32 = 12;
/// Largest gap between panels, in pixels.
pub const MAX_GAP: u32 = 64;
/// Most panels in one dashboard.
pub const MAX_PANELS: usize = 48;
/// Longest panel id.
pub const MAX_ID_LEN: usize = 64;
/// Largest panel code, in bytes (64 KiB).
pub const MAX_CODE_BYTES: usize = 64 * 1024;
/// Most grid rows a panel may span.
pub const MAX_PANEL_HEIGHT: u32 = 12;
/// Shortest refresh interval.
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
/// Longest refresh interval.
pub const MAX_REFRESH: Duration = Duration::from_secs(24 * 3600);

/// The root of the document in issue paths.
const ROOT: &str = "$";

/// Parses and validates a state, reporting every problem found.
pub fn parse_state(v: &Value) -> Result<DashboardState, InvalidState> {
    let Some(obj) = v.as_object() else {
        return Err(InvalidState(vec![Issue {
            path: ROOT.into(),
            message: format!(
                "expected a DashboardState object {{title, layout, panels, variables?, refresh?, alerts?}}, got {}",
                kind_of(v)
            ),
        }]));
    };
    let state: DashboardState = match serde_path_to_error::deserialize(v) {
        Ok(s) => s,
        Err(_) => return Err(InvalidState(structural_issues(obj))),
    };
    let issues = check_rules(&state);
    if issues.is_empty() { Ok(state) } else { Err(InvalidState(issues)) }
}

/// Checks the semantic rules of an already typed state (the second pass of [`parse_state`]).
pub fn check_rules(state: &DashboardState) -> Vec<Issue> {
    let mut out = Issues::default();

    let title_chars = state.title.chars().count();
    if state.title.trim().is_empty() {
        out.push("title", "must not be empty");
    } else if title_chars > MAX_TITLE_CHARS {
        out.push("title", format!("is {title_chars} characters; at most {MAX_TITLE_CHARS}"));
    }

    let columns = state.layout.columns;
    if !(1..=MAX_COLUMNS).contains(&columns) {
        out.push("layout.columns", format!("must be 1..={MAX_COLUMNS}, got {columns}"));
    }
    if let Some(gap) = state.layout.gap.filter(|g| *g > MAX_GAP) {
        out.push("layout.gap", format!("must be at most {MAX_GAP} (pixels), got {gap}"));
    }
    if let Some(r) = &state.refresh {
        check_refresh(&mut out, "refresh", r);
    }

    if state.panels.len() > MAX_PANELS {
        out.push("panels", format!("has {} panels; at most {MAX_PANELS}", state.panels.len()));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, p) in state.panels.iter().enumerate() {
        check_panel(&mut out, i, p, columns);
        if let Some(first) = seen.get(p.id.as_str()) {
            out.push(
                format!("panels[{i}].id"),
                format!(
                    "duplicate id \"{}\" (also used by panels[{first}]); ids must be unique",
                    p.id
                ),
            );
        } else {
            seen.insert(&p.id, i);
        }
    }

    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, var) in state.variables.iter().enumerate() {
        check_variable(&mut out, i, var);
        if let Some(first) = names.get(var.name.as_str()) {
            out.push(
                format!("variables[{i}].name"),
                format!(
                    "duplicate variable name \"{}\" (also used by variables[{first}])",
                    var.name
                ),
            );
        } else {
            names.insert(&var.name, i);
        }
    }
    check_alerts(state, &mut |path, message| out.push(path, message));
    out.0
}

/// The rules' `notify` entries that name none of `channels`, each an issue at its path
/// (`alerts[0].notify[1]`) listing the channels there are. Separate from [`check_rules`]:
/// channels are configuration outside the document, which its callers read.
pub fn unknown_channels(state: &DashboardState, channels: &[String]) -> Vec<Issue> {
    let known = if channels.is_empty() { "none yet".to_owned() } else { channels.join(", ") };
    let mut out = Vec::new();
    for (i, rule) in state.alerts.iter().enumerate() {
        for (j, n) in rule.notify.iter().enumerate() {
            if !channels.contains(n) {
                out.push(Issue {
                    path: format!("alerts[{i}].notify[{j}]"),
                    message: format!("no channel named \"{n}\"; channels: {known}"),
                });
            }
        }
    }
    out
}

/// A refresh interval that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntervalError {
    /// Not a duration.
    #[error("expected a duration such as \"30s\", \"5m\" or \"1h\", got \"{given}\" ({reason})")]
    Unreadable {
        /// The text given.
        given: String,
        /// The parser's message.
        reason: String,
    },
    /// Under 5 s.
    #[error("\"{0}\" is too short; the minimum refresh interval is 5s")]
    TooShort(String),
    /// Over 24 h.
    #[error("\"{0}\" is too long; the maximum refresh interval is 24h")]
    TooLong(String),
}

/// Parses a refresh interval such as `"30s"`, `"5m"` or `"1h 30m"`: 5 s to 24 h.
pub fn refresh_interval(s: &str) -> Result<Duration, IntervalError> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| IntervalError::Unreadable { given: s.to_owned(), reason: e.to_string() })?;
    if d < MIN_REFRESH {
        return Err(IntervalError::TooShort(s.to_owned()));
    }
    if d > MAX_REFRESH {
        return Err(IntervalError::TooLong(s.to_owned()));
    }
    Ok(d)
}

/// Whether `id` is a panel id slug: `[a-z0-9][a-z0-9-]{0,63}`.
pub fn is_slug(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_ID_LEN
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// Whether `name` is a variable name: a JavaScript-style identifier `[A-Za-z_][A-Za-z0-9_]*`
/// of at most 64 characters.
pub fn is_identifier(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The wire name of a panel type (`"metric_card"`).
pub fn type_name(kind: PanelType) -> &'static str {
    match kind {
        PanelType::Candlestick => "candlestick",
        PanelType::Line => "line",
        PanelType::Area => "area",
        PanelType::Bar => "bar",
        PanelType::Heatmap => "heatmap",
        PanelType::Pie => "pie",
        PanelType::Radar => "radar",
        PanelType::Scatter => "scatter",
        PanelType::Table => "table",
        PanelType::Feed => "feed",
        PanelType::MetricCard => "metric_card",
    }
}

/// The wire name of a renderer (`"lightweight-charts"`).
pub fn renderer_name(r: Renderer) -> &'static str {
    match r {
        Renderer::LightweightCharts => "lightweight-charts",
        Renderer::Echarts => "echarts",
        Renderer::Custom => "custom",
    }
}

#[derive(Default)]
struct Issues(Vec<Issue>);

impl Issues {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(Issue { path: path.into(), message: message.into() });
    }
}

fn check_refresh(out: &mut Issues, path: &str, s: &str) {
    if let Err(e) = refresh_interval(s) {
        out.push(path, e.to_string());
    }
}

fn check_panel(out: &mut Issues, i: usize, p: &Panel, columns: u32) {
    let at = |field: &str| format!("panels[{i}].{field}");
    if !is_slug(&p.id) {
        out.push(
            at("id"),
            format!(
                "\"{}\" is not a valid id; use lowercase letters, digits and '-', starting with a \
                 letter or digit, at most {MAX_ID_LEN} characters (e.g. \"gold-kline\")",
                p.id
            ),
        );
    }
    if p.title.trim().is_empty() {
        out.push(at("title"), "must not be empty");
    }
    if p.code.trim().is_empty() {
        out.push(
            at("code"),
            "must not be empty: the body of an async function that returns the panel data",
        );
    } else if p.code.len() > MAX_CODE_BYTES {
        out.push(
            at("code"),
            format!("is {} bytes; at most {MAX_CODE_BYTES} (64 KiB)", p.code.len()),
        );
    }
    let want = p.kind.renderer();
    if p.renderer != want {
        let kind = type_name(p.kind);
        let article = if kind.starts_with('a') { "an" } else { "a" };
        out.push(
            at("renderer"),
            format!(
                "{article} {kind} panel uses renderer \"{}\", not \"{}\"",
                renderer_name(want),
                renderer_name(p.renderer)
            ),
        );
    }
    if let Some(l) = p.layout {
        if l.w < 1 || l.w > columns {
            out.push(
                format!("panels[{i}].layout.w"),
                format!("must be 1..={columns} (the dashboard's layout.columns), got {}", l.w),
            );
        }
        if !(1..=MAX_PANEL_HEIGHT).contains(&l.h) {
            out.push(
                format!("panels[{i}].layout.h"),
                format!("must be 1..={MAX_PANEL_HEIGHT}, got {}", l.h),
            );
        }
    }
    if let Some(r) = &p.refresh {
        check_refresh(out, &at("refresh"), r);
    }
}

/// The issues of the alert rules (paths `alerts[i].field`).
fn check_alerts(state: &DashboardState, push: &mut dyn FnMut(String, String)) {
    use super::alerts::{
        MAX_ALERTS, MAX_FAN_OUT, MAX_HOLD, MAX_NAME_CHARS, MAX_WHEN_CODE_BYTES, MIN_REPEAT, Op,
        When, has_value, parse_span,
    };
    if state.alerts.len() > MAX_ALERTS {
        push("alerts".into(), format!("has {} rules; at most {MAX_ALERTS}", state.alerts.len()));
    }
    let panels: Vec<&str> = state.panels.iter().map(|p| p.id.as_str()).collect();
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in state.alerts.iter().enumerate() {
        let mut at = |field: &str, msg: String| push(format!("alerts[{i}].{field}"), msg);
        if !is_slug(&a.id) {
            at(
                "id",
                format!(
                    "\"{}\" is not a valid id; use lowercase letters, digits and '-' (e.g. \"btc-funding-high\")",
                    a.id
                ),
            );
        } else if seen.contains(&a.id.as_str()) {
            at("id", format!("duplicate id \"{}\"; rule ids must be unique", a.id));
        }
        seen.push(&a.id);
        let chars = a.name.chars().count();
        if a.name.trim().is_empty() {
            at("name", "must not be empty".into());
        } else if chars > MAX_NAME_CHARS {
            at("name", format!("is {chars} characters; at most {MAX_NAME_CHARS}"));
        }
        let panel = state.panels.iter().find(|p| p.id == a.panel_id);
        if panel.is_none() {
            at("panelId", format!("no panel \"{}\"; panels: {}", a.panel_id, panels.join(", ")));
        }
        match &a.when {
            When::Code(code) if code.trim().is_empty() => at(
                "when",
                "code must not be empty: the body of a function (data, vars) returning {firing, value?, message?}".into(),
            ),
            When::Code(code) if code.len() > MAX_WHEN_CODE_BYTES => {
                at("when", format!("code is {} bytes; at most {MAX_WHEN_CODE_BYTES}", code.len()));
            }
            When::Code(_) => {}
            When::Condition(c) => {
                if !c.value.is_finite() {
                    at("when.value", "must be a finite number".into());
                }
                if c.op == Op::ChangePctOver && c.value <= 0.0 {
                    at("when.value", format!("change_pct_over takes a positive percent, got {}", c.value));
                }
                if let Some(w) = &c.window {
                    if c.op != Op::ChangePctOver {
                        at("when.window", "only change_pct_over takes a window".into());
                    } else if let Err(e) = parse_span(w) {
                        at("when.window", format!("\"{w}\" is not a span such as \"24h\" ({e})"));
                    }
                }
                if let Some(p) = panel.filter(|p| !has_value(p.kind)) {
                    at(
                        "when",
                        format!(
                            "panel \"{}\" is a {} panel, which has no single value to compare; give `when` as code",
                            p.id,
                            type_name(p.kind)
                        ),
                    );
                }
            }
        }
        if let Some(h) = &a.hold {
            match parse_span(h) {
                Err(e) => at("for", format!("\"{h}\" is not a span such as \"5m\" ({e})")),
                Ok(d) if d > MAX_HOLD => at("for", format!("\"{h}\" is longer than 24h")),
                Ok(_) => {}
            }
        }
        if let Some(r) = &a.repeat {
            match parse_span(r) {
                Err(e) => at("repeat", format!("\"{r}\" is not a span such as \"4h\" ({e})")),
                Ok(d) if d < MIN_REPEAT => at("repeat", format!("\"{r}\" is shorter than 5m")),
                Ok(_) => {}
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for (j, n) in a.notify.iter().enumerate() {
            if n.trim().is_empty() || n.chars().count() > 64 {
                push(
                    format!("alerts[{i}].notify[{j}]"),
                    "a channel name is 1 to 64 characters".into(),
                );
            } else if names.contains(&n.as_str()) {
                push(
                    format!("alerts[{i}].notify[{j}]"),
                    format!("channel \"{n}\" is listed twice"),
                );
            }
            names.push(n);
        }
        let var_names: Vec<&str> = state.variables.iter().map(|v| v.name.as_str()).collect();
        for key in a.vars.iter().flat_map(|m| m.keys()) {
            if !var_names.contains(&key.as_str()) || !is_identifier(key) {
                push(
                    format!("alerts[{i}].vars.{key}"),
                    format!("no variable \"{key}\"; variables: {}", var_names.join(", ")),
                );
            }
        }
        if let Some(name) = &a.for_each {
            match state.variables.iter().find(|v| v.name == *name) {
                None => push(
                    format!("alerts[{i}].forEach"),
                    format!("no variable \"{name}\"; variables: {}", var_names.join(", ")),
                ),
                Some(v) if v.kind != VariableType::Select => push(
                    format!("alerts[{i}].forEach"),
                    format!(
                        "variable \"{name}\" is not a select; forEach takes a select variable and judges each of its options"
                    ),
                ),
                Some(v) if v.options.as_ref().is_some_and(|o| o.len() > MAX_FAN_OUT) => push(
                    format!("alerts[{i}].forEach"),
                    format!("variable \"{name}\" has more than {MAX_FAN_OUT} options"),
                ),
                Some(_) if a.vars.as_ref().is_some_and(|m| m.contains_key(name)) => push(
                    format!("alerts[{i}].vars.{name}"),
                    format!("\"{name}\" is the forEach variable; it cannot also be fixed"),
                ),
                Some(_) => {}
            }
        }
    }
}

fn check_variable(out: &mut Issues, i: usize, var: &Variable) {
    let at = |field: &str| format!("variables[{i}].{field}");
    if !is_identifier(&var.name) {
        out.push(
            at("name"),
            format!(
                "\"{}\" is not an identifier; use letters, digits and '_', not starting with a \
                 digit (e.g. \"symbol\"), so code can read vars.<name>",
                var.name
            ),
        );
    }
    match var.kind {
        VariableType::Select => match var.options.as_deref() {
            None | Some([]) => out.push(
                at("options"),
                "a select variable needs a non-empty options array of choices",
            ),
            Some(opts) => {
                if !opts.contains(&var.default) {
                    out.push(
                        at("default"),
                        format!(
                            "{} is not one of options {}",
                            var.default,
                            Value::Array(opts.to_vec())
                        ),
                    );
                }
            }
        },
        VariableType::Range => {
            let opts = var.options.as_deref().unwrap_or_default();
            let nums: Option<Vec<f64>> = opts.iter().map(Value::as_f64).collect();
            match nums.as_deref() {
                Some(&[min, max]) | Some(&[min, max, _]) if min <= max => {
                    if let Some(&[_, _, step]) = nums.as_deref()
                        && step <= 0.0
                    {
                        out.push(at("options"), format!("step must be positive, got {step}"));
                    }
                    match var.default.as_f64() {
                        Some(d) if (min..=max).contains(&d) => {}
                        Some(d) => out.push(
                            at("default"),
                            format!("{d} is outside the range [{min}, {max}]"),
                        ),
                        None => out.push(
                            at("default"),
                            format!(
                                "a range variable needs a number default within [{min}, {max}], \
                                 got {}",
                                var.default
                            ),
                        ),
                    }
                }
                Some(&[min, max]) | Some(&[min, max, _]) => out.push(
                    at("options"),
                    format!("min {min} is greater than max {max}; expected [min, max(, step)]"),
                ),
                _ => out.push(
                    at("options"),
                    format!(
                        "a range variable needs options [min, max] or [min, max, step] (numbers), \
                         got {}",
                        var.options
                            .as_ref()
                            .map_or("nothing".into(), |o| Value::Array(o.clone()).to_string())
                    ),
                ),
            }
        }
        VariableType::Text => {
            if !var.default.is_string() {
                out.push(
                    at("default"),
                    format!("a text variable needs a string default, got {}", var.default),
                );
            }
        }
    }
}

/// Structural issues of a document that failed to deserialize, part by part.
fn structural_issues(obj: &serde_json::Map<String, Value>) -> Vec<Issue> {
    const FIELDS: [&str; 6] = ["title", "layout", "panels", "variables", "refresh", "alerts"];
    let mut out = Issues::default();
    for key in obj.keys() {
        if !FIELDS.contains(&key.as_str()) {
            out.push(
                key.clone(),
                format!("unknown field `{key}`{}", expected_fields(key, &FIELDS)),
            );
        }
    }
    for required in ["title", "layout", "panels"] {
        if !obj.contains_key(required) {
            out.push(ROOT, format!("missing field `{required}`"));
        }
    }
    if let Some(v) = obj.get("title") {
        part::<String>(&mut out, "title", v);
    }
    if let Some(v) = obj.get("refresh") {
        part::<Option<String>>(&mut out, "refresh", v);
    }
    if let Some(v) = obj.get("layout") {
        part::<Layout>(&mut out, "layout", v);
    }
    for key in ["panels", "variables", "alerts"] {
        match obj.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{key}[{i}]");
                    match key {
                        "panels" => part::<Panel>(&mut out, &path, item),
                        "variables" => part::<Variable>(&mut out, &path, item),
                        _ => part::<super::AlertRule>(&mut out, &path, item),
                    }
                }
            }
            Some(Value::Null) if key != "panels" => {}
            Some(other) => out.push(key, format!("expected an array, got {}", kind_of(other))),
        }
    }
    if out.0.is_empty() {
        // Unreachable in practice; keep the serde message rather than reporting nothing.
        let err =
            serde_path_to_error::deserialize::<_, DashboardState>(&Value::Object(obj.clone()))
                .err();
        out.push(
            err.as_ref().map_or(ROOT.into(), |e| join_path("", &e.path().to_string())),
            err.map_or("invalid document".into(), |e| friendly(&e.inner().to_string())),
        );
    }
    out.0
}

/// Deserializes one part, recording its first error under `prefix`.
fn part<T: DeserializeOwned>(out: &mut Issues, prefix: &str, v: &Value) {
    if let Err(e) = serde_path_to_error::deserialize::<_, T>(v) {
        let inner = e.inner().to_string();
        let mut path = join_path(prefix, &e.path().to_string());
        // For an unknown field, the path already ends at the offending key; for missing fields it
        // names the object that lacks it.
        if inner.starts_with("unknown field") && !path.ends_with(&unknown_name(&inner)) {
            path = join_path(&path, &unknown_name(&inner));
        }
        out.push(path, friendly(&inner));
    }
}

fn join_path(prefix: &str, rest: &str) -> String {
    let rest = if rest == "." { "" } else { rest };
    match (prefix.is_empty(), rest.is_empty()) {
        (true, true) => ROOT.into(),
        (true, false) => rest.into(),
        (false, true) => prefix.into(),
        (false, false) if rest.starts_with('[') => format!("{prefix}{rest}"),
        (false, false) => format!("{prefix}.{rest}"),
    }
}

/// The name inside the first backticks of a serde message.
fn unknown_name(msg: &str) -> String {
    msg.split('`').nth(1).unwrap_or_default().to_owned()
}

/// Makes serde's messages friendlier to models: plain type names and "did you mean" hints.
fn friendly(msg: &str) -> String {
    let mut m = msg
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected a sequence", "expected an array")
        .replace("expected a map", "expected an object")
        .replace("expected struct ", "expected an object ")
        .replace("expected a borrowed string", "expected a string");
    if m.starts_with("unknown field") || m.starts_with("unknown variant") {
        let bad = unknown_name(&m);
        let choices: Vec<&str> = m.split('`').skip(3).step_by(2).collect();
        if let Some(best) = suggest(&bad, &choices).map(str::to_owned) {
            let _ = write!(m, " (did you mean `{best}`?)");
        }
    }
    m
}

/// The closest accepted name, if close enough.
fn suggest<'a>(bad: &str, choices: &[&'a str]) -> Option<&'a str> {
    let lower = bad.to_lowercase();
    choices
        .iter()
        .map(|c| (c, strsim::jaro_winkler(&lower, &c.to_lowercase())))
        .filter(|(_, s)| *s >= 0.8)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| *c)
}

fn expected_fields(bad: &str, fields: &[&str]) -> String {
    let list = fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ");
    match suggest(bad, fields) {
        Some(best) => format!(", expected one of {list} (did you mean `{best}`?)"),
        None => format!(", expected one of {list}"),
    }
}

/// "an object", "a string"... for messages.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "title": "Gold",
            "layout": {"columns": 2},
            "panels": [
                {"id": "gold-kline", "title": "Gold daily", "type": "candlestick",
                 "renderer": "lightweight-charts", "code": "return [];"},
                {"id": "gold-news", "title": "News", "type": "feed", "renderer": "custom",
                 "code": "return [];"}
            ]
        })
    }

    fn issues(v: &Value) -> Vec<(String, String)> {
        parse_state(v).unwrap_err().0.into_iter().map(|i| (i.path, i.message)).collect()
    }

    fn one(v: &Value) -> (String, String) {
        let mut all = issues(v);
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    fn pair(p: &str, m: &str) -> (String, String) {
        (p.to_owned(), m.to_owned())
    }

    #[test]
    fn valid_state_parses() {
        let s = parse_state(&base()).unwrap();
        assert_eq!(s.panels.len(), 2);
        assert_eq!(s.panels[0].kind, PanelType::Candlestick);
    }

    #[test]
    fn not_an_object() {
        assert_eq!(
            one(&json!([1])),
            pair(
                "$",
                "expected a DashboardState object {title, layout, panels, variables?, refresh?, alerts?}, got an array"
            )
        );
    }

    #[test]
    fn unknown_top_level_field_names_it_and_suggests() {
        let mut v = base();
        v["titel"] = json!("x");
        assert_eq!(
            one(&v),
            pair(
                "titel",
                "unknown field `titel`, expected one of `title`, `layout`, `panels`, `variables`, `refresh`, `alerts` (did you mean `title`?)"
            )
        );
    }

    #[test]
    fn unknown_panel_field_has_path_and_accepted_names() {
        let mut v = base();
        v["panels"][1]["datasource"] = json!({});
        let (p, m) = one(&v);
        assert_eq!(p, "panels[1].datasource");
        assert!(m.starts_with("unknown field `datasource`, expected one of `id`, `title`"), "{m}");
        assert!(m.ends_with("(did you mean `dataSource`?)"), "{m}");
    }

    #[test]
    fn structural_errors_are_collected_per_panel() {
        let mut v = base();
        v["panels"][0]["renderer"] = json!("chartjs");
        v["panels"][1].as_object_mut().unwrap().remove("code");
        v["layout"]["columns"] = json!("two");
        let all = issues(&v);
        assert_eq!(all.len(), 3, "{all:?}");
        assert_eq!(all[0].0, "layout.columns");
        assert!(all[0].1.contains("expected a non-negative integer"), "{}", all[0].1);
        assert_eq!(all[1].0, "panels[0].renderer");
        assert!(
            all[1].1.starts_with("unknown variant `chartjs`, expected one of `lightweight-charts`"),
            "{}",
            all[1].1
        );
        assert_eq!(all[2], pair("panels[1]", "missing field `code`"));
    }

    #[test]
    fn nested_structural_errors() {
        let mut v = base();
        v["panels"][0]["layout"] = json!({"w": 1, "h": 1, "x": 0});
        v["variables"] = json!([{"name": "s", "label": "S", "type": "dropdown", "default": 1}]);
        v["refresh"] = json!(30);
        let all = issues(&v);
        assert_eq!(all[0], pair("refresh", "invalid type: integer `30`, expected a string"));
        assert_eq!(all[1], pair("panels[0].layout.x", "unknown field `x`, expected `w` or `h`"));
        assert_eq!(all[2].0, "variables[0].type");
        assert!(
            all[2].1.starts_with("unknown variant `dropdown`, expected one of `select`"),
            "{}",
            all[2].1
        );
        let mut v = base();
        v["panels"] = json!({});
        assert_eq!(one(&v), pair("panels", "expected an array, got an object"));
    }

    #[test]
    fn unknown_type_suggests() {
        let mut v = base();
        v["panels"][0]["type"] = json!("candle");
        let (p, m) = one(&v);
        assert_eq!(p, "panels[0].type");
        assert!(m.contains("(did you mean `candlestick`?)"), "{m}");
    }

    #[test]
    fn missing_top_level_fields() {
        assert_eq!(
            one(&json!({"title": "x", "layout": {"columns": 1}})),
            pair("$", "missing field `panels`")
        );
    }

    #[test]
    fn title_rules() {
        let mut v = base();
        v["title"] = json!("  ");
        assert_eq!(one(&v), pair("title", "must not be empty"));
        v["title"] = json!("x".repeat(201));
        assert_eq!(one(&v), pair("title", "is 201 characters; at most 200"));
        v["title"] = json!("é".repeat(200));
        assert!(parse_state(&v).is_ok());
    }

    #[test]
    fn layout_rules() {
        let mut v = base();
        v["layout"] = json!({"columns": 0});
        assert_eq!(one(&v), pair("layout.columns", "must be 1..=12, got 0"));
        v["layout"] = json!({"columns": 13, "gap": 65});
        assert_eq!(
            issues(&v),
            vec![
                pair("layout.columns", "must be 1..=12, got 13"),
                pair("layout.gap", "must be at most 64 (pixels), got 65")
            ]
        );
        v["layout"] = json!({"columns": 12, "gap": 64});
        assert!(parse_state(&v).is_ok());
    }

    #[test]
    fn too_many_panels() {
        let mut v = base();
        let panels: Vec<Value> = (0..49)
            .map(|i| {
                json!({"id": format!("p{i}"), "title": "t", "type": "line",
                            "renderer": "lightweight-charts", "code": "return []"})
            })
            .collect();
        v["panels"] = json!(panels);
        assert_eq!(one(&v), pair("panels", "has 49 panels; at most 48"));
        v["panels"].as_array_mut().unwrap().pop();
        assert!(parse_state(&v).is_ok());
    }

    #[test]
    fn id_rules() {
        let mut v = base();
        v["panels"][0]["id"] = json!("Gold_Kline");
        assert_eq!(
            one(&v),
            pair(
                "panels[0].id",
                "\"Gold_Kline\" is not a valid id; use lowercase letters, digits and '-', starting with a letter or digit, at most 64 characters (e.g. \"gold-kline\")"
            )
        );
        v["panels"][0]["id"] = json!("-x");
        assert_eq!(one(&v).0, "panels[0].id");
        v["panels"][0]["id"] = json!("a".repeat(65));
        assert_eq!(one(&v).0, "panels[0].id");
        v["panels"][0]["id"] = json!("a".repeat(64));
        assert!(parse_state(&v).is_ok());
        v["panels"][0]["id"] = json!("gold-news");
        assert_eq!(
            one(&v),
            pair(
                "panels[1].id",
                "duplicate id \"gold-news\" (also used by panels[0]); ids must be unique"
            )
        );
    }

    #[test]
    fn panel_title_and_code_rules() {
        let mut v = base();
        v["panels"][0]["title"] = json!("");
        v["panels"][1]["code"] = json!(" \n ");
        assert_eq!(
            issues(&v),
            vec![
                pair("panels[0].title", "must not be empty"),
                pair(
                    "panels[1].code",
                    "must not be empty: the body of an async function that returns the panel data"
                )
            ]
        );
        let mut v = base();
        v["panels"][0]["code"] = json!("x".repeat(MAX_CODE_BYTES + 1));
        assert_eq!(one(&v), pair("panels[0].code", "is 65537 bytes; at most 65536 (64 KiB)"));
    }

    #[test]
    fn renderer_must_match_type() {
        let mut v = base();
        v["panels"][0]["renderer"] = json!("echarts");
        v["panels"][1]["type"] = json!("area");
        assert_eq!(
            issues(&v),
            vec![
                pair(
                    "panels[0].renderer",
                    "a candlestick panel uses renderer \"lightweight-charts\", not \"echarts\""
                ),
                pair(
                    "panels[1].renderer",
                    "an area panel uses renderer \"lightweight-charts\", not \"custom\""
                )
            ]
        );
    }

    #[test]
    fn panel_layout_rules() {
        let mut v = base();
        v["panels"][0]["layout"] = json!({"w": 3, "h": 0});
        v["panels"][1]["layout"] = json!({"w": 0, "h": 13});
        assert_eq!(
            issues(&v),
            vec![
                pair("panels[0].layout.w", "must be 1..=2 (the dashboard's layout.columns), got 3"),
                pair("panels[0].layout.h", "must be 1..=12, got 0"),
                pair("panels[1].layout.w", "must be 1..=2 (the dashboard's layout.columns), got 0"),
                pair("panels[1].layout.h", "must be 1..=12, got 13"),
            ]
        );
        v["panels"][0]["layout"] = json!({"w": 2, "h": 12});
        v["panels"][1]["layout"] = json!({"w": 1, "h": 1});
        assert!(parse_state(&v).is_ok());
    }

    #[test]
    fn refresh_rules() {
        assert_eq!(refresh_interval("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(refresh_interval("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(refresh_interval("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(refresh_interval("24h"), Ok(Duration::from_secs(86400)));
        assert_eq!(
            refresh_interval("1s").unwrap_err().to_string(),
            "\"1s\" is too short; the minimum refresh interval is 5s"
        );
        assert_eq!(refresh_interval("2d"), Err(IntervalError::TooLong("2d".into())));
        let e = refresh_interval("soon").unwrap_err().to_string();
        assert!(
            e.starts_with("expected a duration such as \"30s\", \"5m\" or \"1h\", got \"soon\""),
            "{e}"
        );

        let mut v = base();
        v["refresh"] = json!("1s");
        v["panels"][1]["refresh"] = json!("often");
        let all = issues(&v);
        assert_eq!(
            all[0],
            pair("refresh", "\"1s\" is too short; the minimum refresh interval is 5s")
        );
        assert_eq!(all[1].0, "panels[1].refresh");
        assert_eq!(all.len(), 2);
    }

    fn with_vars(vars: Value) -> Value {
        let mut v = base();
        v["variables"] = vars;
        v
    }

    #[test]
    fn valid_variables() {
        let v = with_vars(json!([
            {"name": "symbol", "label": "Symbol", "type": "select",
             "options": ["XAUUSD", "XAGUSD"], "default": "XAUUSD"},
            {"name": "limit", "label": "Bars", "type": "range", "options": [20, 500, 10], "default": 120},
            {"name": "q", "label": "Query", "type": "text", "default": "gold"}
        ]));
        assert_eq!(parse_state(&v).unwrap().variables.len(), 3);
    }

    #[test]
    fn variable_names() {
        let v = with_vars(json!([
            {"name": "1sym", "label": "S", "type": "text", "default": ""},
            {"name": "q", "label": "Q", "type": "text", "default": ""},
            {"name": "q", "label": "Q2", "type": "text", "default": ""}
        ]));
        assert_eq!(
            issues(&v),
            vec![
                pair(
                    "variables[0].name",
                    "\"1sym\" is not an identifier; use letters, digits and '_', not starting with a digit (e.g. \"symbol\"), so code can read vars.<name>"
                ),
                pair(
                    "variables[2].name",
                    "duplicate variable name \"q\" (also used by variables[1])"
                )
            ]
        );
    }

    #[test]
    fn select_variables() {
        let v = with_vars(json!([
            {"name": "a", "label": "A", "type": "select", "default": "x"},
            {"name": "b", "label": "B", "type": "select", "options": [], "default": "x"},
            {"name": "c", "label": "C", "type": "select", "options": ["y", "z"], "default": "x"}
        ]));
        assert_eq!(
            issues(&v),
            vec![
                pair(
                    "variables[0].options",
                    "a select variable needs a non-empty options array of choices"
                ),
                pair(
                    "variables[1].options",
                    "a select variable needs a non-empty options array of choices"
                ),
                pair("variables[2].default", "\"x\" is not one of options [\"y\",\"z\"]")
            ]
        );
    }

    #[test]
    fn range_variables() {
        let v = with_vars(json!([
            {"name": "a", "label": "A", "type": "range", "default": 1},
            {"name": "b", "label": "B", "type": "range", "options": [10, 1], "default": 5},
            {"name": "c", "label": "C", "type": "range", "options": [1, 10], "default": 11},
            {"name": "d", "label": "D", "type": "range", "options": [1, 10, 0], "default": "5"},
            {"name": "e", "label": "E", "type": "range", "options": ["1", 10], "default": 5}
        ]));
        assert_eq!(
            issues(&v),
            vec![
                pair(
                    "variables[0].options",
                    "a range variable needs options [min, max] or [min, max, step] (numbers), got nothing"
                ),
                pair(
                    "variables[1].options",
                    "min 10 is greater than max 1; expected [min, max(, step)]"
                ),
                pair("variables[2].default", "11 is outside the range [1, 10]"),
                pair("variables[3].options", "step must be positive, got 0"),
                pair(
                    "variables[3].default",
                    "a range variable needs a number default within [1, 10], got \"5\""
                ),
                pair(
                    "variables[4].options",
                    "a range variable needs options [min, max] or [min, max, step] (numbers), got [\"1\",10]"
                ),
            ]
        );
    }

    #[test]
    fn text_variables() {
        let v = with_vars(json!([{"name": "q", "label": "Q", "type": "text", "default": 3}]));
        assert_eq!(
            one(&v),
            pair("variables[0].default", "a text variable needs a string default, got 3")
        );
    }

    #[test]
    fn all_rule_issues_are_collected() {
        let mut v = base();
        v["title"] = json!("");
        v["layout"]["columns"] = json!(20);
        v["panels"][0]["id"] = json!("BAD");
        v["panels"][1]["renderer"] = json!("echarts");
        assert_eq!(issues(&v).len(), 4);
        let msg = parse_state(&v).unwrap_err().to_string();
        assert!(
            msg.starts_with("title: must not be empty; layout.columns: must be 1..=12"),
            "{msg}"
        );
    }
}
