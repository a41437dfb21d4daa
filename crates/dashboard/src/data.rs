//! The renderer-neutral data contract: what a panel's code must return for each panel type.
//!
//! Mapping to lightweight-charts / ECharts / HTML happens in the browser; the code returns plain
//! rows. `time` is always **integer UTC seconds** (1970..2100; `utils.toTime` converts dates and
//! milliseconds). Rows are numbered from 0, like JS arrays.
//!
//! | type | return | rowCount |
//! |---|---|---|
//! | `candlestick` | `[{time, open, high, low, close, volume?, ...overlays}]` | rows |
//! | `line`, `area` | `[{time, <series>: number\|null, ...}]` | rows |
//! | `bar` | `[{name\|label\|category\|time, <series>: number\|null, ...}]` | rows |
//! | `pie` | `[{name, value}]` | slices |
//! | `scatter` | `[{x, y, name?, size?}]` | points |
//! | `heatmap` | `{xLabels, yLabels, values: [[x, y, v]]}` or `{labels, matrix}` | cells |
//! | `radar` | `{indicators: [{name, max}], series: [{name, values}]}` | series |
//! | `table` | `[{col: cell}]` or `{columns, rows}` | rows |
//! | `feed` | `[{time, title\|text, ...}]` or `{items: [...]}` | items |
//! | `metric_card` | `{value, label?, change?, unit?}` or an array of 1..=12 | cards |
//!
//! - **candlestick**: `open`, `high`, `low`, `close` numbers (`high >= low`); optional `volume`;
//!   every other field is an overlay line (number or null for warm-up, e.g. `ma20` from
//!   `utils.sma`). `[{time: 1717027200, open: 2350, high: 2361, low: 2342, close: 2355, ma20: null}]`
//! - **line / area**: every field besides `time` is one series (number or null), at least one per
//!   row. `[{time: 1717027200, value: 2355.1}]`, `[{time: 1717027200, gold: 1.2, silver: 0.8}]`
//! - For candlestick, line and area (and bar by `time`), times are strictly ascending with no
//!   duplicates (sort and de-duplicate first).
//! - **bar**: one category key per row (`name`, `label`, `category` or `time`), every other field
//!   is a series (number or null). `[{name: "Energy", value: 1.8}]`
//! - **pie**: `name` a string, `value` a number >= 0 (other fields ignored).
//!   `[{name: "Services", value: 96.2}]`
//! - **scatter**: `x`, `y` numbers; optional `name` (label) and `size`; other fields ignored.
//!   `[{x: 1.1, y: 24.5, name: "AAPL"}]`
//! - **heatmap**: `values` holds `[xIndex, yIndex, value]` into the label arrays (value number or
//!   null): `{xLabels: ["Mon", "Tue"], yLabels: ["BTC"], values: [[0, 0, 1.2], [1, 0, -0.4]]}`;
//!   or a square matrix, e.g. straight from `sdk.correlation.getMatrix`:
//!   `{labels: ["SPX", "GLD"], matrix: [[1, 0.2], [0.2, 1]]}`.
//! - **radar**: `max > 0`; each series has one value per indicator.
//!   `{indicators: [{name: "ROE", max: 50}], series: [{name: "AAPL", values: [31]}]}`
//! - **table**: cells are strings, numbers, booleans or null. `[{symbol: "AAPL", price: 189.2}]` or
//!   `{columns: ["symbol", "price"], rows: [["AAPL", 189.2]]}` (rows may also be objects keyed by
//!   column).
//! - **feed**: `time` UTC seconds and a non-empty `title` or `text`; other fields (`url`, `source`,
//!   `author`, `sentiment`...) are shown when present. Any order.
//!   `[{time: 1717027200, title: "Gold hits record", source: "Reuters"}]`
//! - **metric_card**: `value` a number or string; `label`, `unit` strings; `change` a number, the
//!   percent change (1.5 = +1.5%). No other fields. `{value: 2355.1, label: "Gold", change: 0.8,
//!   unit: "USD"}`

use serde_json::{Map, Value};

use super::PanelType;
use super::validate::{kind_of, type_name};

/// Earliest accepted time (1970-01-01).
const MIN_TIME: i64 = 0;
/// First rejected time (2100-01-01T00:00:00Z).
const MAX_TIME: i64 = 4_102_444_800;
/// At or above this, a time is taken to be milliseconds.
const MILLIS_FROM: f64 = 1e11;
/// Most metric cards in one panel.
const MAX_CARDS: usize = 12;

/// Panel data that breaks its type's contract. The message is for the model that wrote the
/// panel's code: it names the panel type, the row and field, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DataError(pub String);

/// Checks panel data against its type's contract (see the module docs); returns the row count.
pub fn check_data(kind: PanelType, data: &Value) -> Result<usize, DataError> {
    let t = type_name(kind);
    let checked = match kind {
        PanelType::Candlestick => candlestick(t, data),
        PanelType::Line | PanelType::Area => line(t, data),
        PanelType::Bar => bar(t, data),
        PanelType::Pie => pie(t, data),
        PanelType::Scatter => scatter(t, data),
        PanelType::Heatmap => heatmap(t, data),
        PanelType::Radar => radar(t, data),
        PanelType::Table => table(t, data),
        PanelType::Feed => feed(t, data),
        PanelType::MetricCard => metric_card(t, data),
    };
    checked.map_err(DataError)
}

/// The top-level array, or a precise complaint naming what came back instead.
fn array<'a>(t: &str, data: &'a Value, shape: &str) -> Result<&'a [Value], String> {
    match data {
        Value::Array(a) => Ok(a),
        Value::Null => Err(format!(
            "{t}: the code returned nothing (null/undefined); expected an array of {shape} \
             (did you forget `return`?)"
        )),
        Value::Object(o) => {
            let inner = o.iter().find(|(_, v)| v.is_array()).map(|(k, _)| k);
            let hint = inner
                .map(|k| format!(" (return the array itself, e.g. `return data.{k};`)"))
                .unwrap_or_default();
            Err(format!("{t}: expected an array of {shape}, got an object{hint}"))
        }
        other => Err(format!("{t}: expected an array of {shape}, got {}", kind_of(other))),
    }
}

fn row<'a>(t: &str, i: usize, v: &'a Value, shape: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{t}: row {i} is {}; expected an object {shape}", kind_of(v)))
}

/// A short rendering of a value for messages.
fn show(v: &Value) -> String {
    base::text::clip(&v.to_string(), 40)
}

/// Checks one `time` value: integer UTC seconds in 1970..2100.
fn time_of(t: &str, what: &str, v: &Value) -> Result<i64, String> {
    let expected = "expected integer UTC seconds";
    match v {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.abs() >= MILLIS_FROM {
                return Err(format!(
                    "{t}: {what} time {n} looks like milliseconds; divide by 1000 \
                     ({expected}, e.g. Math.floor(ms / 1000))"
                ));
            }
            let Some(secs) = n.as_i64().or_else(|| (f.fract() == 0.0).then_some(f as i64)) else {
                return Err(format!(
                    "{t}: {what} time {n} is not an integer; {expected} (use Math.floor)"
                ));
            };
            if !(MIN_TIME..MAX_TIME).contains(&secs) {
                return Err(format!("{t}: {what} time {n} is outside 1970..2100; {expected}"));
            }
            Ok(secs)
        }
        Value::String(_) => Err(format!(
            "{t}: {what} time is a string ({}); {expected} (utils.toTime converts dates)",
            show(v)
        )),
        other => Err(format!("{t}: {what} time is {}; {expected}", kind_of(other))),
    }
}

/// Tracks strictly ascending times.
#[derive(Default)]
struct Ascending(Option<(usize, i64)>);

impl Ascending {
    fn next(&mut self, t: &str, i: usize, time: i64) -> Result<(), String> {
        if let Some((pi, pt)) = self.0
            && time <= pt
        {
            return Err(format!(
                "{t}: row {i} time {time} is not after row {pi} time {pt} (times must be strictly \
                 ascending, no duplicates)"
            ));
        }
        self.0 = Some((i, time));
        Ok(())
    }
}

/// A series value: a number or null.
fn series_value(t: &str, i: usize, k: &str, v: &Value, role: &str) -> Result<(), String> {
    match v {
        Value::Number(_) | Value::Null => Ok(()),
        other => Err(format!(
            "{t}: row {i} field \"{k}\" is {} ({}); {role} must be numbers or null",
            kind_of(other),
            show(other)
        )),
    }
}

fn candlestick(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{time, open, high, low, close, volume?}";
    const OHLC: [&str; 4] = ["open", "high", "low", "close"];
    let rows = array(t, data, SHAPE)?;
    let mut asc = Ascending::default();
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, SHAPE)?;
        for f in std::iter::once("time").chain(OHLC) {
            if !o.contains_key(f) {
                return Err(format!(
                    "{t} needs rows with time, open, high, low, close; row {i} has no {f}"
                ));
            }
        }
        asc.next(t, i, time_of(t, &format!("row {i}"), &o["time"])?)?;
        let mut px = [0.0; 4];
        for (slot, f) in px.iter_mut().zip(OHLC) {
            *slot = o[f].as_f64().ok_or_else(|| {
                format!(
                    "{t}: row {i} {f} is {}; open, high, low and close must be numbers (drop \
                     incomplete rows)",
                    kind_of(&o[f])
                )
            })?;
        }
        if px[1] < px[2] {
            return Err(format!(
                "{t}: row {i} high {} is below low {} (are the fields swapped?)",
                o["high"], o["low"]
            ));
        }
        for (k, v) in o {
            if k != "time" && !OHLC.contains(&k.as_str()) {
                series_value(t, i, k, v, "volume and overlay fields (e.g. ma20)")?;
            }
        }
    }
    Ok(rows.len())
}

fn line(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{time, <series>...} such as {time, value}";
    let rows = array(t, data, SHAPE)?;
    let mut asc = Ascending::default();
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, SHAPE)?;
        let Some(time) = o.get("time") else {
            return Err(format!(
                "{t} needs rows with time and numeric fields; row {i} has no time"
            ));
        };
        asc.next(t, i, time_of(t, &format!("row {i}"), time)?)?;
        if o.len() < 2 {
            return Err(format!(
                "{t} needs rows with time and at least one numeric field, e.g. {{time, value}}; \
                 row {i} has only time"
            ));
        }
        for (k, v) in o.iter().filter(|(k, _)| *k != "time") {
            series_value(t, i, k, v, "fields besides time (series)")?;
        }
    }
    Ok(rows.len())
}

fn bar(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{name, <series>...} such as {name, value}";
    const KEYS: [&str; 4] = ["name", "label", "category", "time"];
    let rows = array(t, data, SHAPE)?;
    let mut asc = Ascending::default();
    let mut key_of_first: Option<&str> = None;
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, SHAPE)?;
        let keys: Vec<&str> = KEYS.iter().copied().filter(|k| o.contains_key(*k)).collect();
        let key = match keys.as_slice() {
            [k] => *k,
            [] => {
                return Err(format!(
                    "{t} needs rows with a category key (name, label, category or time) and \
                     numeric fields; row {i} has none of those keys"
                ));
            }
            many => {
                return Err(format!(
                    "{t}: row {i} has several category keys ({}); use exactly one of name, label, \
                     category or time",
                    many.join(", ")
                ));
            }
        };
        match key_of_first {
            None => key_of_first = Some(key),
            Some(k0) if k0 != key => {
                return Err(format!(
                    "{t}: row {i} uses category key {key} but row 0 uses {k0}; use the same key \
                     in every row"
                ));
            }
            Some(_) => {}
        }
        if key == "time" {
            asc.next(t, i, time_of(t, &format!("row {i}"), &o["time"])?)?;
        } else if !matches!(o[key], Value::String(_) | Value::Number(_)) {
            return Err(format!("{t}: row {i} {key} is {}; expected a string", kind_of(&o[key])));
        }
        if o.len() < 2 {
            return Err(format!(
                "{t} needs at least one numeric field besides {key}, e.g. {{{key}, value}}; row \
                 {i} has only {key}"
            ));
        }
        for (k, v) in o.iter().filter(|(k, _)| *k != key) {
            series_value(t, i, k, v, &format!("fields besides {key} (series)"))?;
        }
    }
    Ok(rows.len())
}

fn pie(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{name, value}";
    let rows = array(t, data, SHAPE)?;
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, SHAPE)?;
        match o.get("name") {
            Some(Value::String(_)) => {}
            Some(v) => {
                return Err(format!("{t}: row {i} name is {}; expected a string", kind_of(v)));
            }
            None => return Err(format!("{t} needs rows {SHAPE}; row {i} has no name")),
        }
        match o.get("value") {
            Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v >= 0.0) => {}
            Some(Value::Number(n)) => {
                return Err(format!("{t}: row {i} value {n} is negative; slices need value >= 0"));
            }
            Some(v) => {
                return Err(format!("{t}: row {i} value is {}; expected a number", kind_of(v)));
            }
            None => return Err(format!("{t} needs rows {SHAPE}; row {i} has no value")),
        }
    }
    Ok(rows.len())
}

fn scatter(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{x, y, name?, size?}";
    let rows = array(t, data, SHAPE)?;
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, SHAPE)?;
        for f in ["x", "y"] {
            match o.get(f) {
                Some(Value::Number(_)) => {}
                Some(v) => {
                    return Err(format!("{t}: row {i} {f} is {}; expected a number", kind_of(v)));
                }
                None => return Err(format!("{t} needs rows {SHAPE}; row {i} has no {f}")),
            }
        }
        if let Some(v) = o.get("size").filter(|v| !v.is_number() && !v.is_null()) {
            return Err(format!("{t}: row {i} size is {}; expected a number", kind_of(v)));
        }
        if let Some(v) = o.get("name").filter(|v| !v.is_string() && !v.is_null()) {
            return Err(format!("{t}: row {i} name is {}; expected a string", kind_of(v)));
        }
    }
    Ok(rows.len())
}

fn labels<'a>(t: &str, o: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], String> {
    let Some(v) = o.get(key) else {
        return Err(format!("{t}: missing {key} (an array of strings)"));
    };
    let a = v
        .as_array()
        .ok_or_else(|| format!("{t}: {key} is {}; expected an array of strings", kind_of(v)))?;
    if a.is_empty() {
        return Err(format!("{t}: {key} is empty"));
    }
    if let Some((i, bad)) = a.iter().enumerate().find(|(_, l)| !l.is_string() && !l.is_number()) {
        return Err(format!("{t}: {key}[{i}] is {}; expected a string", kind_of(bad)));
    }
    Ok(a)
}

fn heatmap(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "expected {xLabels, yLabels, values: [[xIndex, yIndex, value], ...]} or \
                         {labels, matrix} (a square matrix)";
    let Some(o) = data.as_object() else {
        return Err(format!("{t}: {SHAPE}, got {}", kind_of(data)));
    };
    if o.contains_key("matrix") || o.contains_key("labels") {
        let labels = labels(t, o, "labels")?;
        let n = labels.len();
        let Some(m) = o.get("matrix") else {
            return Err(format!("{t}: missing matrix (an array of {n} rows of {n} numbers)"));
        };
        let rows = m.as_array().ok_or_else(|| {
            format!("{t}: matrix is {}; expected an array of {n} rows", kind_of(m))
        })?;
        if rows.len() != n {
            return Err(format!(
                "{t}: matrix has {} rows but labels has {n}; the matrix must be square ({n}×{n})",
                rows.len()
            ));
        }
        for (i, r) in rows.iter().enumerate() {
            let cells = r.as_array().ok_or_else(|| {
                format!("{t}: matrix[{i}] is {}; expected an array of {n} numbers", kind_of(r))
            })?;
            if cells.len() != n {
                return Err(format!(
                    "{t}: matrix[{i}] has {} values but labels has {n}; the matrix must be square",
                    cells.len()
                ));
            }
            if let Some((j, bad)) =
                cells.iter().enumerate().find(|(_, c)| !c.is_number() && !c.is_null())
            {
                return Err(format!(
                    "{t}: matrix[{i}][{j}] is {}; expected a number or null",
                    kind_of(bad)
                ));
            }
        }
        return Ok(n * n);
    }
    if !o.contains_key("values") {
        let keys = o.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
        return Err(format!("{t}: {SHAPE}; got an object with {{{keys}}}"));
    }
    let xs = labels(t, o, "xLabels")?.len();
    let ys = labels(t, o, "yLabels")?.len();
    let values = o["values"].as_array().ok_or_else(|| {
        format!(
            "{t}: values is {}; expected an array of [xIndex, yIndex, value]",
            kind_of(&o["values"])
        )
    })?;
    for (i, cell) in values.iter().enumerate() {
        let triple = cell.as_array().filter(|a| a.len() == 3).ok_or_else(|| {
            format!("{t}: values[{i}] is {}; expected [xIndex, yIndex, value]", show(cell))
        })?;
        for (pos, (axis, len)) in [("xIndex", xs), ("yIndex", ys)].into_iter().enumerate() {
            match triple[pos].as_u64() {
                Some(ix) if (ix as usize) < len => {}
                _ => {
                    return Err(format!(
                        "{t}: values[{i}] {axis} {} is not an index into {} (0..{})",
                        triple[pos],
                        if pos == 0 { "xLabels" } else { "yLabels" },
                        len - 1
                    ));
                }
            }
        }
        if !triple[2].is_number() && !triple[2].is_null() {
            return Err(format!(
                "{t}: values[{i}] value is {}; expected a number or null",
                kind_of(&triple[2])
            ));
        }
    }
    Ok(values.len())
}

fn radar(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str =
        "{indicators: [{name, max}], series: [{name, values: [one number per indicator]}]}";
    let Some(o) = data.as_object() else {
        return Err(format!("{t}: expected {SHAPE}, got {}", kind_of(data)));
    };
    let Some(ind) = o.get("indicators").and_then(Value::as_array).filter(|a| !a.is_empty()) else {
        return Err(format!("{t}: expected {SHAPE}; indicators must be a non-empty array"));
    };
    for (i, x) in ind.iter().enumerate() {
        let ok_name = x.get("name").is_some_and(Value::is_string);
        let max = x.get("max").and_then(Value::as_f64);
        if !ok_name {
            return Err(format!("{t}: indicators[{i}] needs a name (string)"));
        }
        if !max.is_some_and(|m| m > 0.0) {
            return Err(format!("{t}: indicators[{i}] needs max, a number > 0 (the axis scale)"));
        }
    }
    let Some(series) = o.get("series").and_then(Value::as_array) else {
        return Err(format!("{t}: expected {SHAPE}; series must be an array"));
    };
    for (i, s) in series.iter().enumerate() {
        if !s.get("name").is_some_and(Value::is_string) {
            return Err(format!("{t}: series[{i}] needs a name (string)"));
        }
        let Some(values) = s.get("values").and_then(Value::as_array) else {
            return Err(format!("{t}: series[{i}] needs values, an array of numbers"));
        };
        if values.len() != ind.len() {
            return Err(format!(
                "{t}: series[{i}] has {} values but there are {} indicators; give one value per \
                 indicator",
                values.len(),
                ind.len()
            ));
        }
        if let Some((j, bad)) =
            values.iter().enumerate().find(|(_, v)| !v.is_number() && !v.is_null())
        {
            return Err(format!(
                "{t}: series[{i}].values[{j}] is {}; expected a number",
                kind_of(bad)
            ));
        }
    }
    Ok(series.len())
}

fn cell(t: &str, at: &str, v: &Value) -> Result<(), String> {
    match v {
        Value::Array(_) | Value::Object(_) => Err(format!(
            "{t}: {at} is {}; table cells must be strings, numbers, booleans or null (join or pick \
             a field)",
            kind_of(v)
        )),
        _ => Ok(()),
    }
}

fn table(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "row objects, or {columns: [names], rows: [[cells]]}";
    if let Some(o) = data.as_object() {
        let (Some(cols), Some(rows)) = (o.get("columns"), o.get("rows")) else {
            return Err(format!(
                "{t}: expected an array of {SHAPE}, got an object without columns and rows"
            ));
        };
        let cols = cols.as_array().ok_or_else(|| {
            format!("{t}: columns is {}; expected an array of strings", kind_of(cols))
        })?;
        if let Some((i, c)) = cols.iter().enumerate().find(|(_, c)| !c.is_string()) {
            return Err(format!("{t}: columns[{i}] is {}; expected a string", kind_of(c)));
        }
        let rows = rows
            .as_array()
            .ok_or_else(|| format!("{t}: rows is {}; expected an array", kind_of(rows)))?;
        for (i, r) in rows.iter().enumerate() {
            match r {
                Value::Array(cells) => {
                    if cells.len() != cols.len() {
                        return Err(format!(
                            "{t}: row {i} has {} cells but there are {} columns",
                            cells.len(),
                            cols.len()
                        ));
                    }
                    for (j, c) in cells.iter().enumerate() {
                        cell(t, &format!("row {i} cell {j}"), c)?;
                    }
                }
                Value::Object(fields) => {
                    for (k, c) in fields {
                        cell(t, &format!("row {i} field \"{k}\""), c)?;
                    }
                }
                other => {
                    return Err(format!(
                        "{t}: row {i} is {}; expected an array of cells or an object",
                        kind_of(other)
                    ));
                }
            }
        }
        return Ok(rows.len());
    }
    let rows = array(t, data, SHAPE)?;
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, "{column: cell, ...}")?;
        for (k, c) in o {
            cell(t, &format!("row {i} field \"{k}\""), c)?;
        }
    }
    Ok(rows.len())
}

fn feed(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{time, title or text, ...}";
    let items = match data.as_object().and_then(|o| o.get("items")) {
        Some(items @ Value::Array(_)) => items,
        _ => data,
    };
    let rows = array(t, items, SHAPE)?;
    for (i, r) in rows.iter().enumerate() {
        let o = row(t, i, r, SHAPE)?;
        let Some(time) = o.get("time") else {
            return Err(format!("{t} needs items {SHAPE}; item {i} has no time"));
        };
        time_of(t, &format!("item {i}"), time)?;
        let has_text = ["title", "text"]
            .iter()
            .any(|k| o.get(*k).and_then(Value::as_str).is_some_and(|s| !s.trim().is_empty()));
        if !has_text {
            return Err(format!(
                "{t} needs items {SHAPE}; item {i} has no non-empty title or text string"
            ));
        }
    }
    Ok(rows.len())
}

fn metric_card(t: &str, data: &Value) -> Result<usize, String> {
    const SHAPE: &str = "{value, label?, change?, unit?}";
    const FIELDS: [&str; 4] = ["value", "label", "change", "unit"];
    let card = |what: &str, v: &Value| -> Result<(), String> {
        let Some(o) = v.as_object() else {
            return Err(format!("{t}: {what} is {}; expected {SHAPE}", kind_of(v)));
        };
        if let Some(k) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "{t}: {what} has unknown field \"{k}\"; cards have value, label, change (percent) \
                 and unit"
            ));
        }
        match o.get("value") {
            Some(Value::Number(_) | Value::String(_)) => {}
            Some(v) => {
                return Err(format!(
                    "{t}: {what} value is {}; expected a number or string",
                    kind_of(v)
                ));
            }
            None => return Err(format!("{t}: {what} has no value; expected {SHAPE}")),
        }
        for k in ["label", "unit"] {
            if let Some(v) = o.get(k).filter(|v| !v.is_string() && !v.is_null()) {
                return Err(format!("{t}: {what} {k} is {}; expected a string", kind_of(v)));
            }
        }
        if let Some(v) = o.get("change").filter(|v| !v.is_number() && !v.is_null()) {
            return Err(format!(
                "{t}: {what} change is {}; expected a number (percent change)",
                kind_of(v)
            ));
        }
        Ok(())
    };
    match data {
        Value::Array(cards) => {
            if cards.len() > MAX_CARDS {
                return Err(format!("{t}: {} cards; at most {MAX_CARDS}", cards.len()));
            }
            for (i, c) in cards.iter().enumerate() {
                card(&format!("card {i}"), c)?;
            }
            Ok(cards.len())
        }
        Value::Object(_) => card("the card", data).map(|()| 1),
        Value::Null => Err(format!(
            "{t}: the code returned nothing (null/undefined); expected {SHAPE} or an array of them \
             (did you forget `return`?)"
        )),
        other => Err(format!("{t}: expected {SHAPE} or an array of them, got {}", kind_of(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T0: i64 = 1_717_000_000;

    fn err(kind: PanelType, v: Value) -> String {
        check_data(kind, &v).unwrap_err().0
    }

    fn candles(n: i64) -> Value {
        (0..n)
            .map(|i| json!({"time": T0 + i * 86400, "open": 10, "high": 12, "low": 9, "close": 11, "volume": 5}))
            .collect()
    }

    #[test]
    fn candlestick_valid_with_overlays() {
        let mut v = candles(3);
        v[0]["ma20"] = Value::Null;
        v[1]["ma20"] = json!(10.5);
        assert_eq!(check_data(PanelType::Candlestick, &v), Ok(3));
        assert_eq!(check_data(PanelType::Candlestick, &json!([])), Ok(0));
    }

    #[test]
    fn candlestick_failures() {
        use PanelType::Candlestick as C;
        let mut v = candles(5);
        v[3].as_object_mut().unwrap().remove("low");
        assert_eq!(
            err(C, v),
            "candlestick needs rows with time, open, high, low, close; row 3 has no low"
        );
        let mut v = candles(3);
        v[1]["close"] = Value::Null;
        assert_eq!(
            err(C, v),
            "candlestick: row 1 close is null; open, high, low and close must be numbers (drop incomplete rows)"
        );
        let mut v = candles(3);
        v[2]["high"] = json!(1);
        assert_eq!(err(C, v), "candlestick: row 2 high 1 is below low 9 (are the fields swapped?)");
        let mut v = candles(3);
        v[0]["symbol"] = json!("XAU");
        assert_eq!(
            err(C, v),
            "candlestick: row 0 field \"symbol\" is a string (\"XAU\"); volume and overlay fields (e.g. ma20) must be numbers or null"
        );
        assert_eq!(
            err(C, json!({"bars": []})),
            "candlestick: expected an array of {time, open, high, low, close, volume?}, got an object (return the array itself, e.g. `return data.bars;`)"
        );
        assert_eq!(
            err(C, Value::Null),
            "candlestick: the code returned nothing (null/undefined); expected an array of {time, open, high, low, close, volume?} (did you forget `return`?)"
        );
        assert_eq!(
            err(C, json!([1])),
            "candlestick: row 0 is a number; expected an object {time, open, high, low, close, volume?}"
        );
    }

    #[test]
    fn time_rules() {
        use PanelType::Line as L;
        assert_eq!(
            err(L, json!([{"time": T0, "value": 1}, {"time": T0, "value": 2}])),
            "line: row 1 time 1717000000 is not after row 0 time 1717000000 (times must be strictly ascending, no duplicates)"
        );
        assert_eq!(
            err(L, json!([{"time": T0 * 1000, "value": 1}])),
            "line: row 0 time 1717000000000 looks like milliseconds; divide by 1000 (expected integer UTC seconds, e.g. Math.floor(ms / 1000))"
        );
        assert_eq!(
            err(L, json!([{"time": 1717000000.5, "value": 1}])),
            "line: row 0 time 1717000000.5 is not an integer; expected integer UTC seconds (use Math.floor)"
        );
        assert_eq!(
            err(L, json!([{"time": -5, "value": 1}])),
            "line: row 0 time -5 is outside 1970..2100; expected integer UTC seconds"
        );
        assert_eq!(
            err(L, json!([{"time": 5_000_000_000_i64, "value": 1}])),
            "line: row 0 time 5000000000 is outside 1970..2100; expected integer UTC seconds"
        );
        assert_eq!(
            err(L, json!([{"time": "2024-05-01", "value": 1}])),
            "line: row 0 time is a string (\"2024-05-01\"); expected integer UTC seconds (utils.toTime converts dates)"
        );
        assert_eq!(
            err(L, json!([{"time": null, "value": 1}])),
            "line: row 0 time is null; expected integer UTC seconds"
        );
        // A float with an integral value is fine (JS numbers).
        assert_eq!(check_data(L, &json!([{"time": 1717000000.0, "value": 1}])), Ok(1));
    }

    #[test]
    fn line_and_area() {
        let ok = json!([{"time": T0, "gold": 1, "silver": null}, {"time": T0 + 60, "gold": 2}]);
        assert_eq!(check_data(PanelType::Line, &ok), Ok(2));
        assert_eq!(check_data(PanelType::Area, &ok), Ok(2));
        assert_eq!(
            err(PanelType::Area, json!([{"time": T0}])),
            "area needs rows with time and at least one numeric field, e.g. {time, value}; row 0 has only time"
        );
        assert_eq!(
            err(PanelType::Line, json!([{"value": 1}])),
            "line needs rows with time and numeric fields; row 0 has no time"
        );
        assert_eq!(
            err(PanelType::Line, json!([{"time": T0, "value": "1.5"}])),
            "line: row 0 field \"value\" is a string (\"1.5\"); fields besides time (series) must be numbers or null"
        );
    }

    #[test]
    fn bar() {
        use PanelType::Bar as B;
        assert_eq!(check_data(B, &json!([{"name": "Energy", "value": 1.8, "prev": null}])), Ok(1));
        assert_eq!(
            check_data(B, &json!([{"time": T0, "in": 1, "out": -2}, {"time": T0 + 1, "in": 3}])),
            Ok(2)
        );
        assert_eq!(
            err(B, json!([{"value": 1}])),
            "bar needs rows with a category key (name, label, category or time) and numeric fields; row 0 has none of those keys"
        );
        assert_eq!(
            err(B, json!([{"name": "a", "time": T0, "value": 1}])),
            "bar: row 0 has several category keys (name, time); use exactly one of name, label, category or time"
        );
        assert_eq!(
            err(B, json!([{"name": "a", "v": 1}, {"label": "b", "v": 2}])),
            "bar: row 1 uses category key label but row 0 uses name; use the same key in every row"
        );
        assert_eq!(
            err(B, json!([{"name": "a"}])),
            "bar needs at least one numeric field besides name, e.g. {name, value}; row 0 has only name"
        );
        assert_eq!(
            err(B, json!([{"name": "a", "sector": "Tech"}])),
            "bar: row 0 field \"sector\" is a string (\"Tech\"); fields besides name (series) must be numbers or null"
        );
        assert_eq!(
            err(B, json!([{"time": T0 + 1, "v": 1}, {"time": T0, "v": 1}])),
            "bar: row 1 time 1717000000 is not after row 0 time 1717000001 (times must be strictly ascending, no duplicates)"
        );
        assert_eq!(
            err(B, json!([{"name": null, "v": 1}])),
            "bar: row 0 name is null; expected a string"
        );
    }

    #[test]
    fn pie() {
        use PanelType::Pie as P;
        assert_eq!(
            check_data(
                P,
                &json!([{"name": "a", "value": 0}, {"name": "b", "value": 2.5, "pct": 1}])
            ),
            Ok(2)
        );
        assert_eq!(
            err(P, json!({"name": "a", "value": 1})),
            "pie: expected an array of {name, value}, got an object"
        );
        assert_eq!(
            err(P, json!([{"value": 1}])),
            "pie needs rows {name, value}; row 0 has no name"
        );
        assert_eq!(
            err(P, json!([{"name": "a"}])),
            "pie needs rows {name, value}; row 0 has no value"
        );
        assert_eq!(
            err(P, json!([{"name": "a", "value": -1}])),
            "pie: row 0 value -1 is negative; slices need value >= 0"
        );
        assert_eq!(
            err(P, json!([{"name": 1, "value": 1}])),
            "pie: row 0 name is a number; expected a string"
        );
        assert_eq!(
            err(P, json!([{"name": "a", "value": "1"}])),
            "pie: row 0 value is a string; expected a number"
        );
    }

    #[test]
    fn scatter() {
        use PanelType::Scatter as S;
        assert_eq!(
            check_data(S, &json!([{"x": 1, "y": 2, "name": "AAPL", "size": 3, "sector": "Tech"}])),
            Ok(1)
        );
        assert_eq!(
            err(S, json!([{"x": 1}])),
            "scatter needs rows {x, y, name?, size?}; row 0 has no y"
        );
        assert_eq!(
            err(S, json!([{"x": null, "y": 1}])),
            "scatter: row 0 x is null; expected a number"
        );
        assert_eq!(
            err(S, json!([{"x": 1, "y": 1, "size": "big"}])),
            "scatter: row 0 size is a string; expected a number"
        );
        assert_eq!(
            err(S, json!([{"x": 1, "y": 1, "name": 5}])),
            "scatter: row 0 name is a number; expected a string"
        );
    }

    #[test]
    fn heatmap_matrix_form() {
        use PanelType::Heatmap as H;
        let ok = json!({"labels": ["A", "B"], "window": 90, "matrix": [[1, 0.5], [0.5, null]]});
        assert_eq!(check_data(H, &ok), Ok(4));
        assert_eq!(
            err(H, json!({"labels": ["A", "B"], "matrix": [[1, 0.5]]})),
            "heatmap: matrix has 1 rows but labels has 2; the matrix must be square (2×2)"
        );
        assert_eq!(
            err(H, json!({"labels": ["A", "B"], "matrix": [[1, 0.5], [1]]})),
            "heatmap: matrix[1] has 1 values but labels has 2; the matrix must be square"
        );
        assert_eq!(
            err(H, json!({"labels": ["A"], "matrix": [["x"]]})),
            "heatmap: matrix[0][0] is a string; expected a number or null"
        );
        assert_eq!(
            err(H, json!({"matrix": [[1]]})),
            "heatmap: missing labels (an array of strings)"
        );
        assert_eq!(err(H, json!({"labels": []})), "heatmap: labels is empty");
    }

    #[test]
    fn heatmap_index_form() {
        use PanelType::Heatmap as H;
        let ok = json!({"xLabels": ["Mon", "Tue"], "yLabels": ["BTC"], "values": [[0, 0, 1.2], [1, 0, null]]});
        assert_eq!(check_data(H, &ok), Ok(2));
        assert_eq!(
            err(H, json!({"xLabels": ["Mon"], "yLabels": ["BTC"], "values": [[1, 0, 1]]})),
            "heatmap: values[0] xIndex 1 is not an index into xLabels (0..0)"
        );
        assert_eq!(
            err(H, json!({"xLabels": ["Mon"], "yLabels": ["BTC"], "values": [[0, 0]]})),
            "heatmap: values[0] is [0,0]; expected [xIndex, yIndex, value]"
        );
        assert_eq!(
            err(H, json!({"xLabels": ["Mon"], "values": []})),
            "heatmap: missing yLabels (an array of strings)"
        );
        assert_eq!(
            err(H, json!([[1, 2]])),
            "heatmap: expected {xLabels, yLabels, values: [[xIndex, yIndex, value], ...]} or {labels, matrix} (a square matrix), got an array"
        );
        assert_eq!(
            err(H, json!({"data": []})),
            "heatmap: expected {xLabels, yLabels, values: [[xIndex, yIndex, value], ...]} or {labels, matrix} (a square matrix); got an object with {data}"
        );
    }

    #[test]
    fn radar() {
        use PanelType::Radar as R;
        let ok = json!({"indicators": [{"name": "ROE", "max": 50}, {"name": "PE", "max": 60}],
                        "series": [{"name": "AAPL", "values": [31, 28]}, {"name": "MSFT", "values": [35, null]}]});
        assert_eq!(check_data(R, &ok), Ok(2));
        assert_eq!(
            err(
                R,
                json!({"indicators": [{"name": "ROE", "max": 50}], "series": [{"name": "A", "values": [1, 2]}]})
            ),
            "radar: series[0] has 2 values but there are 1 indicators; give one value per indicator"
        );
        assert_eq!(
            err(R, json!({"indicators": [{"name": "ROE"}], "series": []})),
            "radar: indicators[0] needs max, a number > 0 (the axis scale)"
        );
        assert_eq!(
            err(R, json!({"indicators": [], "series": []})),
            "radar: expected {indicators: [{name, max}], series: [{name, values: [one number per indicator]}]}; indicators must be a non-empty array"
        );
        assert_eq!(
            err(R, json!({"indicators": [{"name": "a", "max": 1}], "series": [{"values": [1]}]})),
            "radar: series[0] needs a name (string)"
        );
    }

    #[test]
    fn table() {
        use PanelType::Table as T;
        assert_eq!(check_data(T, &json!([{"a": 1, "b": "x", "c": null, "d": true}])), Ok(1));
        assert_eq!(
            check_data(T, &json!({"columns": ["a", "b"], "rows": [[1, "x"], {"a": 2}]})),
            Ok(2)
        );
        assert_eq!(
            err(T, json!([{"symbols": ["A"]}])),
            "table: row 0 field \"symbols\" is an array; table cells must be strings, numbers, booleans or null (join or pick a field)"
        );
        assert_eq!(
            err(T, json!({"columns": ["a", "b"], "rows": [[1]]})),
            "table: row 0 has 1 cells but there are 2 columns"
        );
        assert_eq!(
            err(T, json!({"data": []})),
            "table: expected an array of row objects, or {columns: [names], rows: [[cells]]}, got an object without columns and rows"
        );
        assert_eq!(
            err(T, json!(["a"])),
            "table: row 0 is a string; expected an object {column: cell, ...}"
        );
    }

    #[test]
    fn feed() {
        use PanelType::Feed as F;
        let items = json!([{"time": T0, "title": "a", "url": "u"}, {"time": T0 - 5, "text": "b", "sentiment": 0.3}]);
        assert_eq!(check_data(F, &items), Ok(2));
        assert_eq!(check_data(F, &json!({"items": items})), Ok(2));
        assert_eq!(
            err(F, json!([{"title": "a"}])),
            "feed needs items {time, title or text, ...}; item 0 has no time"
        );
        assert_eq!(
            err(F, json!([{"time": T0, "title": " "}])),
            "feed needs items {time, title or text, ...}; item 0 has no non-empty title or text string"
        );
        assert_eq!(
            err(F, json!([{"time": T0 * 1000, "title": "a"}])),
            "feed: item 0 time 1717000000000 looks like milliseconds; divide by 1000 (expected integer UTC seconds, e.g. Math.floor(ms / 1000))"
        );
    }

    #[test]
    fn metric_card() {
        use PanelType::MetricCard as M;
        assert_eq!(
            check_data(M, &json!({"value": 1, "label": "Gold", "change": -0.5, "unit": "USD"})),
            Ok(1)
        );
        assert_eq!(check_data(M, &json!([{"value": "Greed"}, {"value": 3}])), Ok(2));
        assert_eq!(
            err(M, json!({"price": 1})),
            "metric_card: the card has unknown field \"price\"; cards have value, label, change (percent) and unit"
        );
        assert_eq!(
            err(M, json!({"label": "x"})),
            "metric_card: the card has no value; expected {value, label?, change?, unit?}"
        );
        assert_eq!(
            err(M, json!([{"value": null}])),
            "metric_card: card 0 value is null; expected a number or string"
        );
        assert_eq!(
            err(M, json!([{"value": 1, "change": "1%"}])),
            "metric_card: card 0 change is a string; expected a number (percent change)"
        );
        let many: Vec<Value> = (0..13).map(|i| json!({"value": i})).collect();
        assert_eq!(err(M, json!(many)), "metric_card: 13 cards; at most 12");
        assert_eq!(
            err(M, json!(3)),
            "metric_card: expected {value, label?, change?, unit?} or an array of them, got a number"
        );
    }
}
