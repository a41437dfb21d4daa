//! Tool parameter templates: `{{tool_name.field+Nd}}` in a tool call's arguments, resolved
//! against the results of earlier tool calls of the same run (chained references, as in
//! PLAN_EXECUTE where a step uses the previous step's output).
//!
//! Syntax inside `{{ }}` (spaces around it allowed): a tool name (`[A-Za-z_][A-Za-z0-9_-]*`),
//! then one or more `.field` segments (`a.b.c`; a number indexes an array: `items.0.name`),
//! then optionally a date offset `+N`/`-N` with unit `d` (days) or `w` (weeks). The offset
//! applies to `YYYY-MM-DD`, RFC 3339 and `YYYY-MM-DD[T ]HH:MM:SS` strings and keeps their
//! format. A string that is one template takes the referenced JSON value (type kept); a
//! template inside text is interpolated (strings raw, other values as compact JSON). Text
//! between `{{ }}` that is not a reference (`{{.Names}}`, `{{#if x}}`) is left alone.
//!
//! The latest result of a tool wins. A reference to a tool without a result, or to a missing
//! field, is a [`TemplateError`] naming the reference. Knows nothing of tools beyond names and
//! JSON results.

use std::collections::HashSet;
use std::fmt;

use chrono::{DateTime, Days, NaiveDate, NaiveDateTime, SecondsFormat, TimeDelta};
use serde_json::Value;

/// A date offset: `+1d`, `-2w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateOffset {
    /// Signed count of units.
    pub amount: i64,
    /// Days or weeks.
    pub unit: DateUnit,
}

/// Unit of a [`DateOffset`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateUnit {
    /// `d`
    Day,
    /// `w`
    Week,
}

impl DateOffset {
    /// The offset in days, if it fits.
    pub fn days(self) -> Option<i64> {
        match self.unit {
            DateUnit::Day => Some(self.amount),
            DateUnit::Week => self.amount.checked_mul(7),
        }
    }
}

/// A parsed reference: `tool.path...±Nd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The tool whose latest result is read.
    pub tool: String,
    /// Field names or array indices, at least one.
    pub path: Vec<String>,
    /// Date arithmetic on the value, if any.
    pub offset: Option<DateOffset>,
}

impl fmt::Display for Reference {
    /// The canonical text inside the braces (`city_datetime.date+1d`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tool)?;
        for seg in &self.path {
            write!(f, ".{seg}")?;
        }
        if let Some(o) = self.offset {
            let unit = match o.unit {
                DateUnit::Day => 'd',
                DateUnit::Week => 'w',
            };
            if o.amount < 0 {
                write!(f, "-{}{unit}", o.amount.unsigned_abs())?;
            } else {
                write!(f, "+{}{unit}", o.amount)?;
            }
        }
        Ok(())
    }
}

/// A piece of a templated string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Literal text.
    Text(&'a str),
    /// A reference and its source text (`{{ city_datetime.date + 1d }}`).
    Ref {
        /// The exact source text, braces included.
        raw: &'a str,
        /// What it refers to.
        reference: Reference,
    },
}

impl Segment<'_> {
    /// The source text of this piece; concatenating them gives back the input.
    pub fn raw(&self) -> &str {
        match self {
            Segment::Text(t) => t,
            Segment::Ref { raw, .. } => raw,
        }
    }
}

/// Splits a string into text and references. Never fails: anything that is not a reference
/// is text.
pub fn parse(s: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    while let Some(open) = s[i..].find("{{").map(|p| p + i) {
        let Some(close) = s[open + 2..].find("}}").map(|p| p + open + 2) else { break };
        match parse_reference(&s[open + 2..close]) {
            Some(reference) => {
                if text_start < open {
                    out.push(Segment::Text(&s[text_start..open]));
                }
                out.push(Segment::Ref { raw: &s[open..close + 2], reference });
                text_start = close + 2;
                i = close + 2;
            }
            // `{{{a.b}}}`: retry one brace later.
            None => i = open + 1,
        }
    }
    if text_start < s.len() {
        out.push(Segment::Text(&s[text_start..]));
    }
    out
}

/// Whether the string contains at least one reference.
pub fn has_reference(s: &str) -> bool {
    s.contains("{{") && parse(s).iter().any(|seg| matches!(seg, Segment::Ref { .. }))
}

/// Parses the inside of `{{ }}`.
pub fn parse_reference(inner: &str) -> Option<Reference> {
    let inner = inner.trim();
    let (head, offset) = split_offset(inner);
    let mut parts = head.trim_end().split('.');
    let tool = parts.next()?;
    let mut first = tool.chars();
    if !first.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        || !first.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let path: Vec<String> = parts.map(str::to_owned).collect();
    if path.is_empty() || !path.iter().all(|seg| is_field(seg)) {
        return None;
    }
    Some(Reference { tool: tool.to_owned(), path, offset })
}

fn is_field(seg: &str) -> bool {
    !seg.is_empty()
        && seg.chars().all(|c| !c.is_whitespace() && !matches!(c, '.' | '{' | '}' | '+'))
        && !ends_like_offset(seg)
}

/// A field may not itself end in `-1d`: that text is an offset.
fn ends_like_offset(seg: &str) -> bool {
    split_offset(seg).1.is_some()
}

/// `"a.b + 2d"` → (`"a.b "`, +2d). The count has 1..=9 digits.
fn split_offset(s: &str) -> (&str, Option<DateOffset>) {
    let none = (s, None);
    let Some(unit_char) = s.chars().last() else { return none };
    let unit = match unit_char {
        'd' | 'D' => DateUnit::Day,
        'w' | 'W' => DateUnit::Week,
        _ => return none,
    };
    let body = s[..s.len() - 1].trim_end();
    let digits_start = body.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let digits = &body[digits_start..];
    if digits.is_empty() || digits.len() > 9 {
        return none;
    }
    let before = body[..digits_start].trim_end();
    let (sign, head) = match before.chars().last() {
        Some('+') => (1, &before[..before.len() - 1]),
        Some('-') => (-1, &before[..before.len() - 1]),
        _ => return none,
    };
    let Ok(n) = digits.parse::<i64>() else { return none };
    (head, Some(DateOffset { amount: sign * n, unit }))
}

/// Why a template could not be resolved. Each names the reference as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The tool has not produced a result in this run.
    #[error("unknown reference {reference}: `{tool}` has no result in this run yet ({ran})")]
    NoResult {
        /// The template as written.
        reference: String,
        /// The tool named.
        tool: String,
        /// Which tools have results, for the message.
        ran: String,
    },
    /// The result has no such field or index.
    #[error("unknown reference {reference}: `{tool}`'s result has no `{at}`{available}")]
    Missing {
        /// The template as written.
        reference: String,
        /// The tool named.
        tool: String,
        /// The path up to and including the missing segment.
        at: String,
        /// `" (fields: a, b)"` or `" (array of 3)"`, for the message.
        available: String,
    },
    /// A date offset on a value that is not a date.
    #[error(
        "{reference}: {value} is not a date (YYYY-MM-DD or RFC 3339), so the offset cannot apply"
    )]
    NotADate {
        /// The template as written.
        reference: String,
        /// The value found, as JSON.
        value: String,
    },
    /// The date arithmetic left chrono's range.
    #[error("{reference}: the date is out of range")]
    OutOfRange {
        /// The template as written.
        reference: String,
    },
}

/// The results of a run's tool calls so far, in order, and the resolver over them.
#[derive(Debug, Clone, Default)]
pub struct ToolResults {
    results: Vec<(String, Value)>,
    known_tools: Option<HashSet<String>>,
}

impl ToolResults {
    /// No results yet; every `{{name.field}}` is treated as a reference.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only `{{name.field}}` whose `name` is one of these tools is a reference; others stay
    /// text (so `{{user.name}}` in a prompt the model writes is not an error).
    pub fn with_known_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.known_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Records a tool's result (it becomes the latest for that name).
    pub fn record(&mut self, tool: impl Into<String>, result: Value) {
        self.results.push((tool.into(), result));
    }

    /// The latest result of a tool.
    pub fn latest(&self, tool: &str) -> Option<&Value> {
        self.results.iter().rev().find(|(name, _)| name == tool).map(|(_, v)| v)
    }

    /// Whether no result was recorded.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// Resolves every string in a JSON value (object keys are left alone).
    pub fn resolve_args(&self, args: &Value) -> Result<Value, TemplateError> {
        Ok(match args {
            Value::String(s) => self.resolve_str(s)?,
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.resolve_args(v)).collect::<Result<_, _>>()?)
            }
            Value::Object(map) => {
                Value::Object(
                    map.iter()
                        .map(|(k, v)| Ok((k.clone(), self.resolve_args(v)?)))
                        .collect::<Result<_, TemplateError>>()?,
                )
            }
            other => other.clone(),
        })
    }

    /// Resolves one string: the referenced value itself if the string is one template (with
    /// surrounding spaces), else the interpolated string.
    pub fn resolve_str(&self, s: &str) -> Result<Value, TemplateError> {
        if !s.contains("{{") {
            return Ok(Value::String(s.to_owned()));
        }
        let segments = parse(s);
        let active = |r: &Reference| self.known_tools.as_ref().is_none_or(|k| k.contains(&r.tool));
        if let [Segment::Ref { raw, reference }] = segments.as_slice()
            && active(reference)
        {
            return self.lookup(raw, reference);
        }
        let mut trimmed = segments.iter().filter(|seg| !seg.raw().trim().is_empty());
        if let (Some(Segment::Ref { raw, reference }), None) = (trimmed.next(), trimmed.next())
            && active(reference)
        {
            return self.lookup(raw, reference);
        }
        let mut out = String::with_capacity(s.len());
        for seg in &segments {
            match seg {
                Segment::Ref { raw, reference } if active(reference) => {
                    match self.lookup(raw, reference)? {
                        Value::String(v) => out.push_str(&v),
                        v => out.push_str(&v.to_string()),
                    }
                }
                other => out.push_str(other.raw()),
            }
        }
        Ok(Value::String(out))
    }

    fn lookup(&self, raw: &str, r: &Reference) -> Result<Value, TemplateError> {
        let Some(mut cur) = self.latest(&r.tool).cloned() else {
            let mut ran: Vec<&str> = Vec::new();
            for (name, _) in &self.results {
                if !ran.contains(&name.as_str()) {
                    ran.push(name);
                }
            }
            let ran = if ran.is_empty() {
                "no tool has run".to_owned()
            } else {
                format!("results so far: {}", ran.join(", "))
            };
            return Err(TemplateError::NoResult {
                reference: raw.to_owned(),
                tool: r.tool.clone(),
                ran,
            });
        };
        for (i, seg) in r.path.iter().enumerate() {
            // Tool results that are JSON text are traversed as JSON.
            if let Value::String(s) = &cur
                && let Ok(parsed) = serde_json::from_str::<Value>(s)
                && (parsed.is_object() || parsed.is_array())
            {
                cur = parsed;
            }
            let next = match &cur {
                Value::Object(m) => m.get(seg).cloned(),
                Value::Array(a) => seg.parse::<usize>().ok().and_then(|n| a.get(n).cloned()),
                _ => None,
            };
            cur = next.ok_or_else(|| TemplateError::Missing {
                reference: raw.to_owned(),
                tool: r.tool.clone(),
                at: r.path[..=i].join("."),
                available: match &cur {
                    Value::Object(m) => {
                        let keys: Vec<&str> = m.keys().map(String::as_str).take(20).collect();
                        format!(" (fields: {})", keys.join(", "))
                    }
                    Value::Array(a) => format!(" (an array of {})", a.len()),
                    v => format!(" (it is {})", crate::tools::type_name(v)),
                },
            })?;
        }
        match r.offset {
            None => Ok(cur),
            Some(offset) => shift_date(&cur, offset).map(Value::String).map_err(|not_date| {
                if not_date {
                    TemplateError::NotADate { reference: raw.to_owned(), value: cur.to_string() }
                } else {
                    TemplateError::OutOfRange { reference: raw.to_owned() }
                }
            }),
        }
    }
}

/// Adds the offset, keeping the value's format. `Err(true)`: not a date; `Err(false)`: out of
/// range.
fn shift_date(v: &Value, offset: DateOffset) -> Result<String, bool> {
    let s = v.as_str().ok_or(true)?.trim();
    let days = || offset.days().ok_or(false);
    let delta = || days().and_then(|d| TimeDelta::try_days(d).ok_or(false));
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let days = days()?;
        let n = Days::new(days.unsigned_abs());
        let d = if days >= 0 { d.checked_add_days(n) } else { d.checked_sub_days(n) };
        return d.map(|d| d.format("%Y-%m-%d").to_string()).ok_or(false);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        let z = s.ends_with(['Z', 'z']);
        return t
            .checked_add_signed(delta()?)
            .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, z))
            .ok_or(false);
    }
    for sep in ['T', ' '] {
        let fmt = format!("%Y-%m-%d{sep}%H:%M:%S%.f");
        if let Ok(t) = NaiveDateTime::parse_from_str(s, &fmt) {
            return t.checked_add_signed(delta()?).map(|t| t.format(&fmt).to_string()).ok_or(false);
        }
    }
    Err(true)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn results() -> ToolResults {
        let mut r = ToolResults::new();
        r.record("city_datetime", json!({"date": "2026-01-01", "city": "Shanghai"}));
        r.record(
            "city_datetime",
            json!({"date": "2026-02-27", "city": "Shanghai",
            "datetime": "2026-02-27T09:30:00+08:00", "utc": "2026-02-27T01:30:00Z",
            "local": "2026-02-27 09:30:00"}),
        );
        r.record(
            "search",
            json!({"items": [{"name": "gold", "price": 2301.5}], "n": 1,
            "nested": {"a": {"b": {"c": true}}}}),
        );
        r.record("raw", json!("{\"inner\": {\"x\": 7}}"));
        r
    }

    fn resolve(s: &str) -> Result<Value, TemplateError> {
        results().resolve_str(s)
    }

    #[test]
    fn whole_string_keeps_the_type_and_embedded_interpolates() {
        assert_eq!(resolve("{{search.n}}").unwrap(), json!(1));
        assert_eq!(
            resolve(" {{ search.items.0 }} ").unwrap(),
            json!({"name": "gold", "price": 2301.5})
        );
        assert_eq!(resolve("{{search.nested.a.b.c}}").unwrap(), json!(true));
        assert_eq!(resolve("{{raw.inner.x}}").unwrap(), json!(7));
        assert_eq!(
            resolve(
                "{{search.items.0.name}} at {{search.items.0.price}} on {{city_datetime.date}}"
            )
            .unwrap(),
            json!("gold at 2301.5 on 2026-02-27"),
            "the latest city_datetime result wins"
        );
        assert_eq!(resolve("no templates {here}").unwrap(), json!("no templates {here}"));
        assert_eq!(resolve("go {{.Names}} {{#if x}}").unwrap(), json!("go {{.Names}} {{#if x}}"));
    }

    #[test]
    fn date_arithmetic_keeps_the_format() {
        assert_eq!(resolve("{{city_datetime.date+1d}}").unwrap(), json!("2026-02-28"));
        assert_eq!(resolve("{{city_datetime.date+2d}}").unwrap(), json!("2026-03-01"));
        assert_eq!(resolve("{{ city_datetime.date - 1w }}").unwrap(), json!("2026-02-20"));
        assert_eq!(
            resolve("{{city_datetime.datetime+1d}}").unwrap(),
            json!("2026-02-28T09:30:00+08:00")
        );
        assert_eq!(resolve("{{city_datetime.utc-30d}}").unwrap(), json!("2026-01-28T01:30:00Z"));
        assert_eq!(resolve("{{city_datetime.local+1d}}").unwrap(), json!("2026-02-28 09:30:00"));
        assert_eq!(resolve("day {{city_datetime.date+0d}}!").unwrap(), json!("day 2026-02-27!"));
    }

    #[test]
    fn errors_name_the_reference() {
        let e = resolve("{{weather.temp}}").unwrap_err().to_string();
        assert!(e.contains("unknown reference {{weather.temp}}"), "{e}");
        assert!(e.contains("results so far: city_datetime, search, raw"), "{e}");
        let e = resolve("x {{city_datetime.dat}}").unwrap_err().to_string();
        assert!(e.contains("{{city_datetime.dat}}") && e.contains("no `dat`"), "{e}");
        assert!(e.contains("fields: date, city"), "{e}");
        let e = resolve("{{search.items.5.name}}").unwrap_err().to_string();
        assert!(e.contains("no `items.5`") && e.contains("an array of 1"), "{e}");
        let e = resolve("{{city_datetime.city+1d}}").unwrap_err().to_string();
        assert!(e.contains("\"Shanghai\" is not a date"), "{e}");
        let e = ToolResults::new().resolve_str("{{a.b}}").unwrap_err().to_string();
        assert!(e.contains("no tool has run"), "{e}");
        let mut far = ToolResults::new();
        far.record("t", json!({"d": "2026-01-01"}));
        assert!(matches!(
            far.resolve_str("{{t.d+999999999w}}"),
            Err(TemplateError::OutOfRange { .. })
        ));
    }

    #[test]
    fn known_tools_leave_other_braces_alone() {
        let r = results().with_known_tools(["city_datetime", "search"]);
        assert_eq!(r.resolve_str("Hi {{user.name}}").unwrap(), json!("Hi {{user.name}}"));
        assert_eq!(r.resolve_str("{{user.name}}").unwrap(), json!("{{user.name}}"));
        assert_eq!(r.resolve_str("{{search.n}}").unwrap(), json!(1));
    }

    #[test]
    fn args_resolve_recursively() {
        let args = json!({"city": "{{city_datetime.city}}", "date": "{{city_datetime.date+1d}}",
            "list": ["{{search.n}}", 3], "n": null});
        assert_eq!(
            results().resolve_args(&args).unwrap(),
            json!({"city": "Shanghai", "date": "2026-02-28", "list": [1, 3], "n": null})
        );
    }

    #[test]
    fn parser_cases() {
        let segs = parse("a{{{x.y}}}b");
        assert_eq!(segs.len(), 3);
        assert_eq!(segs[0], Segment::Text("a{"));
        assert_eq!(segs[1].raw(), "{{x.y}}");
        assert_eq!(segs[2], Segment::Text("}b"));
        let r = parse_reference("my-tool.a-b-2w").unwrap();
        assert_eq!(r.path, ["a-b"]);
        assert_eq!(r.offset, Some(DateOffset { amount: -2, unit: DateUnit::Week }));
        assert_eq!(parse_reference("tool"), None, "a field is required");
        assert_eq!(parse_reference("1x.a"), None);
        assert_eq!(parse_reference("a..b"), None);
        assert_eq!(parse_reference("a.b+1x"), None);
        assert_eq!(parse_reference("a.b+1234567890d"), None);
        assert!(!has_reference("{{ nothing }}"));
        assert!(has_reference("{{a.b}}"));
    }

    fn reference() -> impl Strategy<Value = Reference> {
        let field = "[A-Za-z0-9_$上海]{1,6}";
        let offset =
            prop::option::of((-999_999i64..999_999, prop::bool::ANY).prop_map(|(amount, week)| {
                DateOffset { amount, unit: if week { DateUnit::Week } else { DateUnit::Day } }
            }));
        ("[A-Za-z_][A-Za-z0-9_-]{0,8}", prop::collection::vec(field, 1..4), offset)
            .prop_filter("fields never end like an offset", |(_, path, _)| {
                path.iter().all(|p| !ends_like_offset(p))
            })
            .prop_map(|(tool, path, offset)| Reference { tool, path, offset })
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_segments_round_trip(s in "(\\PC|\\{\\{|\\}\\}|[.+-]|[0-9]d){0,40}") {
            let segs = parse(&s);
            let joined: String = segs.iter().map(Segment::raw).collect();
            prop_assert_eq!(joined, s.clone());
            let _ = results().resolve_str(&s);
        }

        #[test]
        fn references_round_trip(r in reference(), pad in "[ ]{0,2}") {
            let text = format!("{{{{{pad}{r}{pad}}}}}");
            let segs = parse(&text);
            prop_assert_eq!(segs.len(), 1);
            match &segs[0] {
                Segment::Ref { raw, reference } => {
                    prop_assert_eq!(*raw, text.as_str());
                    prop_assert_eq!(reference, &r);
                }
                other => prop_assert!(false, "not a reference: {:?}", other),
            }
        }

        #[test]
        fn embedded_references_split_text(a in "[a-z ]{0,5}", r in reference(), b in "[a-z ]{0,5}") {
            let text = format!("{a}{{{{{r}}}}}{b}");
            let refs: Vec<_> = parse(&text).into_iter().filter_map(|s| match s {
                Segment::Ref { reference, .. } => Some(reference),
                Segment::Text(_) => None,
            }).collect();
            prop_assert_eq!(refs, vec![r]);
        }
    }
}
