//! Declarative response mapping for the `http` backing (also reused by the `file` backing):
//! select a sub-value by dot path, then turn arrays or objects into rows of named fields.
//!
//! ```json
//! "response": {
//!   "select": "prices",
//!   "rows": {"time": {"from": "0", "as": "ms_to_s"}, "price": {"from": "1", "as": "number"}}
//! }
//! ```
//!
//! Exactly one of `rows` (array → rows), `entries` (object of entries → rows), `object`
//! (object → one object) or `facts` (XBRL company facts → a row per fiscal period,
//! [`super::xbrl`]) may be given; with none, the selected value is returned as is. Rows that all
//! carry a numeric `time` are sorted ascending and de-duplicated (last one wins; `keepSameTime`
//! keeps them all, for trades within one second), then the `then` steps run
//! ([`super::transform`]); for `object` the steps see the object as a one-row table (`derive`,
//! `drop`). A field of an `object` may itself hold rows (`{"from": "bids", "rows": {...},
//! "then": [...]}`): an order book's levels inside one snapshot.
//!
//! A body may be CSV (`"format": "csv"`: rows of header → cell, empty cells null); `transpose`
//! turns an object of parallel arrays (`{"form": [...], "date": [...]}`) into rows; `errors` lists
//! paths that, when present in a body, mean the provider answered with an error (some do so with
//! HTTP 200).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::convert::{Conv, DEFAULT_DATE, PLACEHOLDERS, convert, date, describe};
use super::template;

/// How a response body becomes the method's result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, try_from = "RawResponseMap")]
pub struct ResponseMap {
    /// Dot path of the sub-value to use (`"data.items"`, `"prices"`, `"0"`); may contain
    /// `{param}` placeholders. Empty or absent: the whole body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<String>,
    /// The selected value is an array (of arrays or objects); each element becomes a row with
    /// these fields, whose `from` paths are relative to the element. A null there is no rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<FieldList>,
    /// The selected value is an object whose entries become rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Entries>,
    /// The selected value is an object mapped onto one result object with these fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<FieldList>,
    /// How the body is parsed (default JSON).
    #[serde(default, skip_serializing_if = "BodyFormat::is_json")]
    pub format: BodyFormat,
    /// The selected value is an object of parallel arrays: turn it into rows first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transpose: bool,
    /// Paths whose presence (non-null) in the body means an error, whose text is reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Steps applied to the rows (or the one `object`) after mapping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<super::transform::Step>,
    /// Rows sharing a `time` are all kept (trades within one second) instead of the last one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_same_time: bool,
    /// The selected value is an XBRL company-facts document: one row per fiscal period
    /// ([`super::xbrl`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<super::xbrl::Facts>,
}

/// How a response body is parsed.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BodyFormat {
    /// JSON.
    #[default]
    Json,
    /// CSV with a header row: an array of `{header: cell}` objects, cells as strings, empty
    /// cells null.
    Csv,
}

impl BodyFormat {
    fn is_json(&self) -> bool {
        *self == BodyFormat::Json
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawResponseMap {
    #[serde(default)]
    select: Option<String>,
    #[serde(default)]
    rows: Option<FieldList>,
    #[serde(default)]
    entries: Option<Entries>,
    #[serde(default)]
    object: Option<FieldList>,
    #[serde(default)]
    format: BodyFormat,
    #[serde(default)]
    transpose: bool,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    then: Vec<super::transform::Step>,
    #[serde(default)]
    keep_same_time: bool,
    #[serde(default)]
    facts: Option<super::xbrl::Facts>,
}

impl TryFrom<RawResponseMap> for ResponseMap {
    type Error = String;
    fn try_from(r: RawResponseMap) -> Result<Self, String> {
        let n = usize::from(r.rows.is_some())
            + usize::from(r.entries.is_some())
            + usize::from(r.object.is_some())
            + usize::from(r.facts.is_some());
        if n > 1 {
            return Err("response: give at most one of `rows`, `entries`, `object`, `facts`".into());
        }
        if let Some(e) = &r.entries {
            let m = usize::from(e.value.is_some())
                + usize::from(e.fields.is_some())
                + usize::from(e.merge);
            if m != 1 {
                return Err(
                    "response.entries: give exactly one of `value`, `fields`, `merge`".into()
                );
            }
        }
        if !r.then.is_empty() && n == 0 {
            return Err(
                "response.then: steps apply to rows; give `rows`, `entries`, `facts` or `object`"
                    .into(),
            );
        }
        Ok(Self {
            select: r.select,
            rows: r.rows,
            entries: r.entries,
            object: r.object,
            format: r.format,
            transpose: r.transpose,
            errors: r.errors,
            then: r.then,
            keep_same_time: r.keep_same_time,
            facts: r.facts,
        })
    }
}

/// Turns the entries of an object into rows: `{"EUR": 0.9}` → `[{currency: "EUR", rate: 0.9}]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entries {
    /// Row field receiving the entry's key.
    pub key: String,
    /// Conversion of the key (default `string`; `iso_to_s` for date keys).
    #[serde(default = "Conv::string", rename = "keyAs")]
    pub key_as: Conv,
    /// Row field receiving the entry's whole value (converted with `valueAs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Row fields taken from the entry's value (an object), paths relative to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<FieldList>,
    /// Copy every member of the entry's value (an object) into the row, converted with
    /// `valueAs`: `{"2024-01-02": {"EUR": 0.91}}` → `{time: ..., EUR: 0.91}`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merge: bool,
    /// Conversion for `value` / `merge` (default `raw`).
    #[serde(default, rename = "valueAs")]
    pub value_as: Conv,
}

/// One output field: where it comes from and how it is converted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Field {
    /// Dot path relative to the element (`"4"` for the 5th item of an array, `"lastPrice"`);
    /// may contain `{param}` placeholders. A key that itself holds dots (a CSV header such as
    /// `"1.5 Month"`) is found whole. Empty: the whole element (kept for an `unpivot` step), or
    /// unused with `value`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// A constant instead of a path (`{"value": "Binance"}`), expanded from the params when a
    /// string (`"{symbol}"`); `{"value": null}` for a standard field the provider cannot fill.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Conversion (default `raw`).
    #[serde(default, rename = "as")]
    pub conv: Conv,
    /// `chrono` format of a `date` conversion (`"%m/%d/%Y"`; default `%Y-%m-%d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Multiply a numeric result (`100` turns a rate of 0.0001 into 0.01 percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// When the value is missing or null, emit null instead of failing. Providers' placeholders
    /// for "no value" (`""`, `"."`, `"null"`, `"N/A"`, `"NaN"`) count as null then. A key that
    /// no element of a non-empty answer has is still an error: the provider's format changed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// The array at `from` becomes rows of these fields (paths relative to each element), as
    /// with a response's `rows`; a null there is no rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<FieldList>,
    /// Steps run on those rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<super::transform::Step>,
}

/// A field that is present, even as `null`, is `Some` (absent is `None` by `default`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Ordered `name → Field` list (a JSON object in the spec; order is kept in the output rows).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldList(pub Vec<(String, Field)>);

impl Serialize for FieldList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FieldList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        let mut out = Vec::with_capacity(map.len());
        for (k, v) in map {
            let f: Field = serde_json::from_value(v)
                .map_err(|e| serde::de::Error::custom(format!("field `{k}`: {e}")))?;
            if f.rows.is_some() && f.value.is_some() {
                return Err(serde::de::Error::custom(format!(
                    "field `{k}`: give `rows` or `value`, not both"
                )));
            }
            if !f.then.is_empty() && f.rows.is_none() {
                return Err(serde::de::Error::custom(format!(
                    "field `{k}`: `then` steps apply to `rows`"
                )));
            }
            out.push((k, f));
        }
        Ok(Self(out))
    }
}

/// Applies `map` to a parsed body. `origin` (host/path) and the params are used for placeholder
/// expansion and error messages.
pub fn apply(
    map: &ResponseMap,
    body: &Value,
    params: &Map<String, Value>,
    origin: &str,
) -> Result<Value, String> {
    let sel_path = match &map.select {
        Some(s) => template::expand_plain(s, params),
        None => String::new(),
    };
    for path in &map.errors {
        if let Ok(v) = select(body, path)
            && !v.is_null()
        {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            return Err(format!(
                "{origin} answered with an error: {}",
                base::text::clip(&text, 300)
            ));
        }
    }
    let selected = select(body, &sel_path).map_err(|e| format!("response from {origin}: {e}"))?;
    let transposed;
    let root = if map.transpose {
        transposed = transpose(selected).map_err(|e| format!("response from {origin}: {e}"))?;
        &transposed
    } else {
        selected
    };
    let done = |rows: Vec<Map<String, Value>>| {
        finish(rows, &map.then, map.keep_same_time, params)
            .map_err(|e| format!("response from {origin}: {e}"))
    };
    let at = if sel_path.is_empty() { "the top level".to_owned() } else { format!("`{sel_path}`") };
    let prefix = if sel_path.is_empty() { String::new() } else { format!("{sel_path}.") };
    let bad = |what: &str, v: &Value| {
        format!("response from {origin}: expected {what} at {at}, got {}", describe(v))
    };
    if let Some(fields) = &map.rows {
        // A null array is no rows (World Bank answers `[meta, null]` when nothing matches); a
        // missing one is still an error.
        let items: &[Value] = match root {
            Value::Array(items) => items,
            Value::Null => &[],
            other => return Err(bad("an array", other)),
        };
        let rows = map_rows(fields, items, &prefix, params)
            .map_err(|e| format!("response from {origin}: {e}"))?;
        return done(rows);
    }
    if let Some(e) = &map.entries {
        let Value::Object(obj) = root else { return Err(bad("an object", root)) };
        let fields = e.fields.as_ref().map(|f| expand_fields(f, params));
        let mut rows = Vec::with_capacity(obj.len());
        for (k, v) in obj {
            let here = format!("{prefix}{k}");
            let err = |m: String| format!("response from {origin}: {m}");
            let mut row = Map::new();
            let key = convert(&Value::String(k.clone()), e.key_as)
                .map_err(|m| err(format!("key `{here}`: {m}")))?;
            row.insert(e.key.clone(), key);
            if let Some(name) = &e.value {
                let v = convert(v, e.value_as).map_err(|m| err(format!("at `{here}`: {m}")))?;
                row.insert(name.clone(), v);
            } else if let Some(fields) = &fields {
                if !v.is_object() {
                    return Err(err(format!(
                        "expected an object at `{here}`, got {}",
                        describe(v)
                    )));
                }
                row.extend(map_fields(fields, v, &here, params).map_err(err)?);
            } else {
                let Value::Object(inner) = v else {
                    return Err(err(format!(
                        "expected an object at `{here}`, got {}",
                        describe(v)
                    )));
                };
                for (ik, iv) in inner {
                    let c = convert(iv, e.value_as)
                        .map_err(|m| err(format!("at `{here}.{ik}`: {m}")))?;
                    row.insert(ik.clone(), c);
                }
            }
            rows.push(row);
        }
        return done(rows);
    }
    if let Some(facts) = &map.facts {
        let rows = super::xbrl::apply(facts, root, params)
            .map_err(|e| format!("response from {origin}: {e}"))?;
        return done(rows);
    }
    if let Some(fields) = &map.object {
        if !root.is_object() {
            return Err(bad("an object", root));
        }
        let fields = expand_fields(fields, params);
        let obj = map_fields(&fields, root, &sel_path, params)
            .map_err(|e| format!("response from {origin}: {e}"))?;
        if map.then.is_empty() {
            return Ok(Value::Object(obj));
        }
        // The steps see the object as a one-row table; a filter may leave none (null).
        let mut rows = super::transform::apply(&map.then, vec![obj], params)
            .map_err(|e| format!("response from {origin}: {e}"))?;
        return Ok(rows.pop().map_or(Value::Null, Value::Object));
    }
    Ok(root.clone())
}

fn expand_fields(fields: &FieldList, params: &Map<String, Value>) -> Vec<(String, Field)> {
    fields
        .0
        .iter()
        .map(|(k, f)| {
            let mut f = f.clone();
            f.from = template::expand_plain(&f.from, params);
            if let Some(Value::String(t)) = &f.value {
                f.value = Some(Value::String(template::expand_plain(t, params)));
            }
            (k.clone(), f)
        })
        .collect()
}

/// Maps each element of `items` (at `{prefix}{i}`) to a row of `fields`, refusing renamed keys.
fn map_rows(
    fields: &FieldList,
    items: &[Value],
    prefix: &str,
    params: &Map<String, Value>,
) -> Result<Vec<Map<String, Value>>, String> {
    let fields = expand_fields(fields, params);
    let rows = items
        .iter()
        .enumerate()
        .map(|(i, item)| map_fields(&fields, item, &format!("{prefix}{i}"), params))
        .collect::<Result<Vec<_>, _>>()?;
    check_drift(&fields, items.iter())?;
    Ok(rows)
}

/// Orders mapped rows by time, then runs the steps.
fn finish(
    rows: Vec<Map<String, Value>>,
    then: &[super::transform::Step],
    keep_same_time: bool,
    params: &Map<String, Value>,
) -> Result<Value, String> {
    let rows = super::transform::apply(then, by_time(rows, !keep_same_time), params)?;
    Ok(Value::Array(rows.into_iter().map(Value::Object).collect()))
}

/// An optional field whose key no element has: the provider renamed or dropped it, which must
/// not pass as a column of nulls.
fn check_drift<'a>(
    fields: &[(String, Field)],
    mut items: impl Iterator<Item = &'a Value> + Clone,
) -> Result<(), String> {
    if items.clone().next().is_none() {
        return Ok(());
    }
    for (name, f) in fields {
        if f.optional
            && f.value.is_none()
            && !f.from.is_empty()
            && items.clone().all(|it| select(it, &f.from).is_err())
        {
            let first = items.next().map(describe).unwrap_or_default();
            return Err(format!(
                "no element has `{}` (expected field `{name}` there; first element is {first}): \
                 the provider's format may have changed",
                f.from
            ));
        }
    }
    Ok(())
}

fn map_fields(
    fields: &[(String, Field)],
    item: &Value,
    here: &str,
    params: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut row = Map::new();
    for (name, f) in fields {
        if let Some(v) = &f.value {
            row.insert(name.clone(), v.clone());
            continue;
        }
        let path = if here.is_empty() { f.from.clone() } else { format!("{here}.{}", f.from) };
        if let Some(sub) = &f.rows {
            let items: &[Value] = match select(item, &f.from) {
                Ok(Value::Array(items)) => items,
                Ok(Value::Null) => &[],
                Err(_) if f.optional => &[],
                Ok(other) => {
                    return Err(format!("expected an array at `{path}`, got {}", describe(other)));
                }
                Err(_) => {
                    return Err(format!(
                        "missing `{path}` (expected field `{name}` there), element is {}",
                        describe(item)
                    ));
                }
            };
            let rows = map_rows(sub, items, &format!("{path}."), params)?;
            let rows =
                finish(rows, &f.then, false, params).map_err(|e| format!("`{name}`: {e}"))?;
            row.insert(name.clone(), rows);
            continue;
        }
        let placeholder = |v: &Value| v.as_str().is_some_and(|s| PLACEHOLDERS.contains(&s.trim()));
        let v = match select(item, &f.from) {
            Ok(v) if f.optional && (v.is_null() || placeholder(v)) => Value::Null,
            Err(_) if f.optional => Value::Null,
            Ok(v) => convert_field(v, f).map_err(|m| format!("at `{path}`: {m}"))?,
            Err(_) => {
                return Err(format!(
                    "missing `{path}` (expected field `{name}` there), element is {}",
                    describe(item)
                ));
            }
        };
        row.insert(name.clone(), v);
    }
    Ok(row)
}

/// Sorts rows by a numeric `time` ascending and drops duplicate times (keeping the last), when
/// every row has one.
pub fn finish_rows(rows: Vec<Map<String, Value>>) -> Value {
    Value::Array(by_time(rows, true).into_iter().map(Value::Object).collect())
}

/// Sorts rows by a numeric `time` ascending (stable: rows of one time keep their order) when
/// every row has one; with `dedupe`, only the last row of each time is kept.
fn by_time(mut rows: Vec<Map<String, Value>>, dedupe: bool) -> Vec<Map<String, Value>> {
    let t = |r: &Map<String, Value>| r.get("time").and_then(Value::as_f64);
    if !rows.is_empty() && rows.iter().all(|r| t(r).is_some()) {
        rows.sort_by(|a, b| t(a).unwrap_or(0.0).total_cmp(&t(b).unwrap_or(0.0)));
        if !dedupe {
            return rows;
        }
        let mut out: Vec<Map<String, Value>> = Vec::with_capacity(rows.len());
        for r in rows {
            match out.last_mut() {
                Some(last) if t(last) == t(&r) => *last = r,
                _ => out.push(r),
            }
        }
        rows = out;
    }
    rows
}

/// Applies a field's conversion, date format and scale.
fn convert_field(v: &Value, f: &Field) -> Result<Value, String> {
    let out = match (f.conv, &f.format) {
        (Conv::Date, format) => date(v, format.as_deref().unwrap_or(DEFAULT_DATE))?,
        (conv, _) => convert(v, conv)?,
    };
    match (f.scale, out.as_f64()) {
        (Some(k), Some(x)) => Ok(super::expr::to_json(Some(x * k))),
        (Some(_), None) if !out.is_null() => {
            Err(format!("`scale` needs a number, got {}", describe(&out)))
        }
        _ => Ok(out),
    }
}

/// `{"a": [1, 2], "b": [3, 4]}` → `[{"a": 1, "b": 3}, {"a": 2, "b": 4}]` (arrays of equal length).
fn transpose(v: &Value) -> Result<Value, String> {
    let Value::Object(cols) = v else {
        return Err(format!(
            "expected an object of parallel arrays to transpose, got {}",
            describe(v)
        ));
    };
    let mut len = None;
    for (k, c) in cols {
        let Value::Array(items) = c else { continue };
        match len {
            None => len = Some(items.len()),
            Some(n) if n != items.len() => {
                return Err(format!(
                    "cannot transpose: `{k}` has {} items, others {n}",
                    items.len()
                ));
            }
            Some(_) => {}
        }
    }
    let rows = (0..len.unwrap_or(0))
        .map(|i| {
            let row: Map<String, Value> = cols
                .iter()
                .filter_map(|(k, c)| c.as_array().map(|a| (k.clone(), a[i].clone())))
                .collect();
            Value::Object(row)
        })
        .collect();
    Ok(Value::Array(rows))
}

/// Appends the array at `select` in `page` to the one at the same path in `first`.
pub fn append_page(first: &mut Value, page: &Value, select: &str) -> Result<(), String> {
    let pointer: String = select
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect();
    let more = match page.pointer(&pointer) {
        Some(Value::Array(items)) => items.clone(),
        Some(other) => {
            return Err(format!("expected an array at `{select}`, got {}", describe(other)));
        }
        None => return Err(format!("missing `{select}`")),
    };
    match first.pointer_mut(&pointer) {
        Some(Value::Array(items)) => {
            items.extend(more);
            Ok(())
        }
        _ => Err(format!("expected an array at `{select}` of the first page")),
    }
}

/// Parses a body in `format`; errors name the host/path and show the body's start.
pub fn parse_body(format: BodyFormat, body: &[u8], origin: &str) -> Result<Value, String> {
    match format {
        BodyFormat::Json => serde_json::from_slice(body).map_err(|e| {
            format!(
                "response from {origin} is not valid JSON ({e}); body starts with: {}",
                snippet(body)
            )
        }),
        BodyFormat::Csv => csv_rows(body, b',').map_err(|e| {
            format!(
                "response from {origin} is not valid CSV ({e}); body starts with: {}",
                snippet(body)
            )
        }),
    }
}

/// First 300 characters of a body, on one line, for error messages.
pub fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "(empty body)".into();
    }
    base::text::clip(&one_line, 300)
}

/// Delimited text with a header row → `[{header: cell}]`, cells as strings (empty → null). A
/// header-only or empty body gives no rows.
pub fn csv_rows(bytes: &[u8], delimiter: u8) -> Result<Value, String> {
    let (headers, records) = csv_table(bytes, delimiter)?;
    let rows = records
        .into_iter()
        .map(|rec| {
            let row: Map<String, Value> = headers
                .iter()
                .zip(rec)
                .map(|(h, cell)| {
                    let v = if cell.is_empty() { Value::Null } else { Value::String(cell) };
                    (h.clone(), v)
                })
                .collect();
            Value::Object(row)
        })
        .collect();
    Ok(Value::Array(rows))
}

/// Header names (empty ones as `columnN`) and the non-blank records, cells trimmed; a UTF-8 BOM
/// is skipped. Records may be shorter than the header (missing cells are empty); cells beyond
/// the header are dropped.
pub fn csv_table(bytes: &[u8], delimiter: u8) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers: Vec<String> = rdr
        .headers()
        .map_err(|e| format!("cannot read the header row: {e}"))?
        .iter()
        .enumerate()
        .map(|(i, h)| if h.is_empty() { format!("column{}", i + 1) } else { h.to_owned() })
        .collect();
    let mut records = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| format!("row {}: {e}", i + 2))?;
        if rec.iter().all(str::is_empty) {
            continue;
        }
        let mut cells: Vec<String> = rec.iter().map(str::to_owned).collect();
        cells.resize(headers.len(), String::new());
        cells.truncate(headers.len());
        records.push(cells);
    }
    Ok((headers, records))
}

/// Walks a dot path (`"a.b.0"`); an empty path is the value itself. Where an object holds the
/// rest of the path as one key (`"1.5 Month"`), that key is taken.
pub fn select<'a>(v: &'a Value, path: &str) -> Result<&'a Value, String> {
    if let Value::Object(o) = v
        && path.contains('.')
        && let Some(whole) = o.get(path)
    {
        return Ok(whole);
    }
    let mut cur = v;
    let mut walked = String::new();
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        let next = match cur {
            Value::Object(o) => o.get(seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        let here = if walked.is_empty() { seg.to_owned() } else { format!("{walked}.{seg}") };
        match next {
            Some(n) => cur = n,
            None => {
                let what = match cur {
                    Value::Array(a) => format!("an array of {} items", a.len()),
                    other => describe(other),
                };
                let parent = if walked.is_empty() {
                    "the top level".to_owned()
                } else {
                    format!("`{walked}`")
                };
                return Err(format!("missing `{here}` ({parent} is {what})"));
            }
        }
        walked = here;
    }
    Ok(cur)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> ResponseMap {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn rows_from_arrays_sorted_and_deduped() {
        let m = map(json!({"rows": {
            "time": {"from": "0", "as": "ms_to_s"}, "close": {"from": "1", "as": "number"}}}));
        let body = json!([[2000, "2.5"], [1000, "1"], [2000, "3"]]);
        let out = apply(&m, &body, &Map::new(), "h/p").unwrap();
        assert_eq!(out, json!([{"time": 1, "close": 1}, {"time": 2, "close": 3}]));
    }

    #[test]
    fn keep_same_time_keeps_every_row_in_wire_order() {
        let m = map(json!({"keepSameTime": true, "rows": {
            "time": {"from": "0", "as": "ms_to_s"}, "id": {"from": "1"}}}));
        let body = json!([[1000, "a"], [1500, "b"], [0, "c"]]);
        let out = apply(&m, &body, &Map::new(), "h/p").unwrap();
        assert_eq!(
            out,
            json!([{"time": 0, "id": "c"}, {"time": 1, "id": "a"}, {"time": 1, "id": "b"}])
        );
    }

    #[test]
    fn an_object_holds_rows_and_derives_from_its_own_fields() {
        let m = map(json!({"object": {
            "mid": {"value": null},
            "bids": {"from": "bids",
                     "rows": {"price": {"from": "0", "as": "number"},
                              "size": {"from": "1", "as": "number"}},
                     "then": [{"take": "{n}"}, {"derive": {"total": "cumsum(size)"}}]},
            "best": {"from": "bids.0.0", "as": "number", "optional": true}
        }, "then": [{"derive": {"mid": "best * 2"}}, {"drop": ["best"]}]}));
        let p = json!({"n": 2});
        let p = p.as_object().unwrap();
        let body = json!({"bids": [["10", "1"], ["9", "2.5"], ["8", "4"]]});
        // The derived field keeps the place its placeholder had.
        assert_eq!(
            apply(&m, &body, p, "h").unwrap(),
            json!({"mid": 20.0, "bids": [{"price": 10, "size": 1, "total": 1.0},
                                         {"price": 9, "size": 2.5, "total": 3.5}]})
        );
        let empty = apply(&m, &json!({"bids": []}), p, "h").unwrap();
        assert_eq!(empty, json!({"mid": null, "bids": []}));
        let e = apply(&m, &json!({"bid": []}), p, "h").unwrap_err();
        assert!(e.contains("missing `bids` (expected field `bids` there)"), "{e}");
        let e = apply(&m, &json!({"bids": [["10"]]}), p, "h").unwrap_err();
        assert!(e.contains("missing `bids.0.1` (expected field `size` there)"), "{e}");
        let bad: Result<ResponseMap, _> = serde_json::from_value(
            json!({"object": {"x": {"from": "x", "then": [{"last": "1"}]}}}),
        );
        assert!(bad.unwrap_err().to_string().contains("`then` steps apply to `rows`"));
    }

    #[test]
    fn optional_fields_tolerate_gaps_but_not_a_renamed_key() {
        let m = map(json!({"rows": {
            "v": {"from": "v", "as": "number", "optional": true},
            "x": {"value": null}
        }}));
        let p = Map::new();
        let gaps = json!([{"v": "."}, {"w": 1}, {"v": "2.5"}]);
        let out = apply(&m, &gaps, &p, "h").unwrap();
        assert_eq!(
            out,
            json!([{"v": null, "x": null}, {"v": null, "x": null}, {"v": 2.5, "x": null}])
        );
        let renamed = json!([{"value": 1}, {"value": 2}]);
        let e = apply(&m, &renamed, &p, "h").unwrap_err();
        assert!(e.contains("no element has `v`") && e.contains("format may have changed"), "{e}");
        assert_eq!(apply(&m, &json!([]), &p, "h").unwrap(), json!([]));
        assert_eq!(apply(&m, &Value::Null, &p, "h").unwrap(), json!([]), "null is no rows");
    }

    #[test]
    fn errors_name_the_path() {
        let m = map(json!({"select": "prices", "rows": {"p": {"from": "1", "as": "number"}}}));
        let e = apply(&m, &json!({"prices": [[1, "x"]]}), &Map::new(), "h/p").unwrap_err();
        assert!(e.contains("at `prices.0.1`"), "{e}");
        let e = apply(&m, &json!({"price": []}), &Map::new(), "h/p").unwrap_err();
        assert!(e.contains("missing `prices`"), "{e}");
        let e = apply(&m, &json!({"prices": {}}), &Map::new(), "h/p").unwrap_err();
        assert!(e.contains("expected an array at `prices`"), "{e}");
    }

    #[test]
    fn exclusive_modes() {
        let r: Result<ResponseMap, _> = serde_json::from_value(json!({"rows": {}, "object": {}}));
        assert!(r.is_err());
    }
}
