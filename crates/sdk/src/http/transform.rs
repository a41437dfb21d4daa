//! Steps applied to mapped rows, in order (`"then": [...]` in a response mapping): keep the rows
//! a param asks for, sort, keep the first or last N, derive fields by arithmetic
//! ([`super::expr`]), build text fields from templates, drop helper fields, turn the columns of
//! a wide row into rows of their own (`unpivot`), run steps per group of rows (`per`).
//!
//! ```json
//! "then": [
//!   {"filter": {"field": "category", "eq": "{category}"}},
//!   {"sort": {"by": "tvl", "desc": true}},
//!   {"take": "{limit}"},
//!   {"derive": {"sharePct": "tvl / sum(tvl) * 100"}}
//! ]
//! ```
//! A step whose template names a param the caller did not give is skipped, so one declaration
//! serves "all categories" and "only DEXes".
//!
//! A yield-curve file has one row per date and one column per tenor; the curve is one row per
//! tenor. `rows` keeps the whole element in a field (`"cells": {"from": ""}`), then:
//! ```json
//! {"unpivot": {"from": "cells", "except": ["Date"], "key": {"tenor": "tenor", "years": "years"},
//!              "value": "yield", "valueAs": "number"}},
//! {"per": {"by": "tenor", "then": [{"derive": {"change1dBps": "(yield - prev(yield)) * 100"}},
//!                                  {"last": "1"}]}}
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::convert::{self, Conv};
use super::expr::{self, Expr};
use super::template;

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Step {
    /// Keep the rows whose field passes the test.
    Filter(Filter),
    /// Sort by a field (nulls last).
    Sort(Sort),
    /// Keep the first N rows (N a template, e.g. `"{limit}"`).
    Take(String),
    /// Keep the last N rows.
    Last(String),
    /// Add fields computed from others: name → expression.
    Derive(Derived),
    /// Add string fields from templates over the row's fields (and the call's params):
    /// `{"url": "https://host/{cik}/{accession|strip:-}"}`; a template naming an absent or null
    /// field gives null.
    Format(std::collections::BTreeMap<String, String>),
    /// Remove fields (helpers used only to derive others).
    Drop(Vec<String>),
    /// Turn each member of an object field into a row of its own.
    Unpivot(Unpivot),
    /// Run steps on each group of rows sharing a field's value (groups in the order they first
    /// appear), then put the groups back together: `prev` and `last` per tenor, per symbol.
    Per(Per),
}

/// Members of the object in field `from` become rows: each carries the row's other fields, the
/// member's name in the `key` fields (each converted its way) and its value in `value`. Null
/// values stay null (a `filter` with `present` drops them), so a missing cell never shifts
/// `prev` onto another date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Unpivot {
    /// The row field holding the object; it is removed from the new rows.
    pub from: String,
    /// Members left out (`["Date"]`: not a tenor).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
    /// Row fields receiving the member's name, each with its conversion
    /// (`{"tenor": "tenor", "years": "years"}`).
    pub key: std::collections::BTreeMap<String, Conv>,
    /// Row field receiving the member's value.
    pub value: String,
    /// Conversion of the value (default `raw`); a provider's "no value" placeholder is null.
    #[serde(default, rename = "valueAs")]
    pub value_as: Conv,
}

/// Steps per group of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Per {
    /// The field whose value makes the groups.
    pub by: String,
    /// The steps run on each group.
    pub then: Vec<Step>,
}

/// A row test. Exactly one of the comparisons is given; strings compare case-insensitively.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Filter {
    /// The row field tested.
    pub field: String,
    /// Equal to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eq: Option<String>,
    /// One of.
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<String>>,
    /// Contains (strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// At least (numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gte: Option<String>,
    /// At most (numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lte: Option<String>,
    /// Not null.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub present: bool,
}

/// A sort key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sort {
    /// The field.
    pub by: String,
    /// Largest first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub desc: bool,
}

/// Derived fields in declaration order, each parsed when the spec is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived(pub Vec<(String, String, Expr)>);

impl Serialize for Derived {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, text, _) in &self.0 {
            m.serialize_entry(name, text)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Derived {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        let mut out = Vec::with_capacity(map.len());
        for (name, v) in map {
            let Value::String(text) = v else {
                return Err(serde::de::Error::custom(format!(
                    "derive `{name}`: expected an expression string"
                )));
            };
            let e: Expr = text
                .parse()
                .map_err(|m| serde::de::Error::custom(format!("derive `{name}`: {m}")))?;
            out.push((name, text, e));
        }
        Ok(Self(out))
    }
}

/// Applies `steps` to `rows`. Errors name the step and what was wrong.
pub fn apply(
    steps: &[Step],
    mut rows: Vec<Map<String, Value>>,
    params: &Map<String, Value>,
) -> Result<Vec<Map<String, Value>>, String> {
    let expand = |t: &str| template::expand(t, params, &|s| s.to_owned());
    for step in steps {
        match step {
            Step::Filter(f) => {
                let Some(test) = Test::of(f, &expand)? else { continue };
                rows.retain(|r| test.passes(r.get(&f.field).unwrap_or(&Value::Null)));
            }
            Step::Sort(s) => {
                let key = |r: &Map<String, Value>| r.get(&s.by).cloned().unwrap_or(Value::Null);
                rows.sort_by(|a, b| {
                    let (a, b) = (key(a), key(b));
                    match (a.is_null(), b.is_null()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => std::cmp::Ordering::Greater,
                        (false, true) => std::cmp::Ordering::Less,
                        (false, false) if s.desc => compare(&b, &a),
                        (false, false) => compare(&a, &b),
                    }
                });
            }
            Step::Take(n) | Step::Last(n) => {
                let Some(text) = expand(n) else { continue };
                let n: usize = text
                    .trim()
                    .parse()
                    .map_err(|_| format!("take/last: `{text}` is not a count"))?;
                if matches!(step, Step::Take(_)) {
                    rows.truncate(n);
                } else if rows.len() > n {
                    rows.drain(..rows.len() - n);
                }
            }
            Step::Derive(d) => {
                for (name, _, e) in &d.0 {
                    let values: Vec<Value> =
                        (0..rows.len()).map(|i| expr::to_json(e.eval(&rows, i))).collect();
                    for (row, v) in rows.iter_mut().zip(values) {
                        row.insert(name.clone(), v);
                    }
                }
            }
            Step::Format(templates) => {
                for row in &mut rows {
                    let mut scope = params.clone();
                    scope.extend(row.iter().map(|(k, v)| (k.clone(), v.clone())));
                    for (name, tpl) in templates {
                        let v = template::expand(tpl, &scope, &|s| s.to_owned())
                            .map_or(Value::Null, Value::String);
                        row.insert(name.clone(), v);
                    }
                }
            }
            Step::Drop(fields) => {
                for row in &mut rows {
                    for f in fields {
                        // Keep the order of the other fields (the standard shape's).
                        row.shift_remove(f);
                    }
                }
            }
            Step::Unpivot(u) => rows = unpivot(u, rows)?,
            Step::Per(p) => {
                let mut groups: Vec<Vec<Map<String, Value>>> = Vec::new();
                let mut index = std::collections::HashMap::new();
                for row in rows {
                    let key = row.get(&p.by).map_or_else(String::new, text);
                    let at = *index.entry(key).or_insert_with(|| {
                        groups.push(Vec::new());
                        groups.len() - 1
                    });
                    groups[at].push(row);
                }
                rows = Vec::new();
                for group in groups {
                    rows.extend(apply(&p.then, group, params)?);
                }
            }
        }
    }
    Ok(rows)
}

fn unpivot(u: &Unpivot, rows: Vec<Map<String, Value>>) -> Result<Vec<Map<String, Value>>, String> {
    let mut out = Vec::new();
    for (i, mut row) in rows.into_iter().enumerate() {
        let Some(Value::Object(members)) = row.shift_remove(&u.from) else {
            return Err(format!("unpivot: row {i} has no object in `{}`", u.from));
        };
        for (name, v) in members {
            if u.except.contains(&name) {
                continue;
            }
            let mut new = row.clone();
            for (field, conv) in &u.key {
                let k = convert::convert(&Value::String(name.clone()), *conv)
                    .map_err(|e| format!("unpivot: member `{name}`: {e}"))?;
                new.insert(field.clone(), k);
            }
            let placeholder = v.as_str().is_some_and(|s| convert::PLACEHOLDERS.contains(&s.trim()));
            let v = if v.is_null() || placeholder {
                Value::Null
            } else {
                convert::convert(&v, u.value_as)
                    .map_err(|e| format!("unpivot: at `{name}` of row {i}: {e}"))?
            };
            new.insert(u.value.clone(), v);
            out.push(new);
        }
    }
    Ok(out)
}

fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => text(a).cmp(&text(b)),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_lowercase(),
        other => other.to_string(),
    }
}

/// A filter with its templates expanded.
enum Test {
    Eq(String),
    In(Vec<String>),
    Contains(String),
    Gte(f64),
    Lte(f64),
    Present,
}

impl Test {
    /// `None` when the filter's template names an absent param (the step is skipped).
    fn of(f: &Filter, expand: &dyn Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let number = |t: &str| -> Result<Option<f64>, String> {
            let Some(s) = expand(t) else { return Ok(None) };
            s.trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("filter on `{}`: `{s}` is not a number", f.field))
        };
        Ok(if let Some(t) = &f.eq {
            expand(t).map(|s| Test::Eq(s.to_lowercase()))
        } else if let Some(list) = &f.one_of {
            Some(Test::In(
                list.iter().filter_map(|t| expand(t)).map(|s| s.to_lowercase()).collect(),
            ))
        } else if let Some(t) = &f.contains {
            expand(t).map(|s| Test::Contains(s.to_lowercase()))
        } else if let Some(t) = &f.gte {
            number(t)?.map(Test::Gte)
        } else if let Some(t) = &f.lte {
            number(t)?.map(Test::Lte)
        } else if f.present {
            Some(Test::Present)
        } else {
            return Err(format!(
                "filter on `{}`: give one of eq, in, contains, gte, lte, present",
                f.field
            ));
        })
    }

    fn passes(&self, v: &Value) -> bool {
        match self {
            Test::Eq(s) => !v.is_null() && text(v) == *s,
            Test::In(list) => !v.is_null() && list.contains(&text(v)),
            Test::Contains(s) => !v.is_null() && text(v).contains(s.as_str()),
            Test::Gte(n) => v.as_f64().is_some_and(|x| x >= *n),
            Test::Lte(n) => v.as_f64().is_some_and(|x| x <= *n),
            Test::Present => !v.is_null(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(steps: Value, rows: Value, params: Value) -> Result<Value, String> {
        let steps: Vec<Step> = serde_json::from_value(steps).map_err(|e| e.to_string())?;
        let rows =
            rows.as_array().unwrap().iter().map(|r| r.as_object().unwrap().clone()).collect();
        let out = apply(&steps, rows, params.as_object().unwrap())?;
        Ok(Value::Array(out.into_iter().map(Value::Object).collect()))
    }

    #[test]
    fn filters_skip_when_their_param_is_absent() {
        let rows =
            json!([{"c": "Dexes", "tvl": 5}, {"c": "Lending", "tvl": 9}, {"c": null, "tvl": 1}]);
        let steps = json!([{"filter": {"field": "c", "eq": "{category}"}}]);
        assert_eq!(
            run(steps.clone(), rows.clone(), json!({"category": "dexes"})).unwrap(),
            json!([{"c": "Dexes", "tvl": 5}])
        );
        assert_eq!(run(steps, rows.clone(), json!({})).unwrap().as_array().unwrap().len(), 3);
        let min = json!([{"filter": {"field": "tvl", "gte": "{minTvl}"}}]);
        assert_eq!(
            run(min, rows.clone(), json!({"minTvl": 5})).unwrap().as_array().unwrap().len(),
            2
        );
        let some = json!([{"filter": {"field": "c", "in": ["lending", "{other}"]}}]);
        assert_eq!(run(some, rows, json!({})).unwrap(), json!([{"c": "Lending", "tvl": 9}]));
    }

    #[test]
    fn sort_take_last_derive_drop() {
        let rows = json!([{"n": "a", "v": 1}, {"n": "b", "v": 3}, {"n": "c", "v": null}, {"n": "d", "v": 6}]);
        let steps = json!([
            {"sort": {"by": "v", "desc": true}},
            {"take": "{limit}"},
            {"derive": {"share": "v / sum(v) * 100", "half": "v / 2"}},
            {"drop": ["half"]}
        ]);
        let out = run(steps, rows.clone(), json!({"limit": 2})).unwrap();
        assert_eq!(
            out,
            json!([{"n": "d", "v": 6, "share": 66.66666667}, {"n": "b", "v": 3, "share": 33.33333333}])
        );
        let last = run(json!([{"last": "2"}]), rows, json!({})).unwrap();
        assert_eq!(last[0]["n"], "c");
    }

    #[test]
    fn format_builds_text_from_row_fields_and_params() {
        let rows = json!([{"acc": "0001-24-7", "doc": "a.htm"}, {"acc": "0002-24-8", "doc": null}]);
        let steps = json!([{"format": {"url": "https://h/{cik}/{acc|strip:-}/{doc}"}}, {"drop": ["acc", "doc"]}]);
        let out = run(steps, rows, json!({"cik": 42})).unwrap();
        assert_eq!(out, json!([{"url": "https://h/42/0001247/a.htm"}, {"url": null}]));
    }

    #[test]
    fn unpivot_turns_columns_into_rows_and_per_runs_steps_by_group() {
        let rows = json!([
            {"time": 1, "cells": {"Date": "d1", "1 Mo": "4.06", "1.5 Month": null, "2 Yr": "4.78"}},
            {"time": 2, "cells": {"Date": "d2", "1 Mo": "4.04", "1.5 Month": "4.09", "2 Yr": "N/A"}}
        ]);
        let steps = json!([
            {"unpivot": {"from": "cells", "except": ["Date"],
                         "key": {"tenor": "tenor", "years": "years"},
                         "value": "y", "valueAs": "number"}},
            {"per": {"by": "tenor", "then": [
                {"derive": {"d": "(y - prev(y)) * 100"}}, {"last": "1"}]}},
            {"drop": ["years"]}
        ]);
        let out = run(steps, rows.clone(), json!({})).unwrap();
        // Each tenor's last row; a gap the day before gives no change rather than one across
        // two days, and a placeholder is no value.
        assert_eq!(
            out,
            json!([
                {"time": 2, "tenor": "1M", "y": 4.04, "d": -2.0},
                {"time": 2, "tenor": "1.5M", "y": 4.09, "d": null},
                {"time": 2, "tenor": "2Y", "y": null, "d": null}
            ])
        );
        let years = json!([{"unpivot": {"from": "cells", "except": ["Date"],
                                         "key": {"years": "years"}, "value": "y"}}]);
        let out = run(years, rows.clone(), json!({})).unwrap();
        assert_eq!(out[1], json!({"time": 1, "years": 0.125, "y": null}));

        let e = run(
            json!([{"unpivot": {"from": "cells", "key": {"t": "tenor"}, "value": "y"}}]),
            rows.clone(),
            json!({}),
        )
        .unwrap_err();
        assert!(e.contains("member `Date`: expected a maturity"), "{e}");
        let e =
            run(json!([{"unpivot": {"from": "cols", "key": {}, "value": "y"}}]), rows, json!({}))
                .unwrap_err();
        assert!(e.contains("row 0 has no object in `cols`"), "{e}");
    }

    #[test]
    fn bad_steps_are_rejected_when_read_or_say_why() {
        assert!(
            run(json!([{"derive": {"x": "v +"}}]), json!([]), json!({}))
                .unwrap_err()
                .contains("derive `x`")
        );
        assert!(
            run(json!([{"shuffle": true}]), json!([]), json!({}))
                .unwrap_err()
                .contains("unknown variant")
        );
        let e = run(json!([{"take": "{limit}"}]), json!([]), json!({"limit": "many"})).unwrap_err();
        assert!(e.contains("`many` is not a count"), "{e}");
        let e = run(json!([{"filter": {"field": "v"}}]), json!([]), json!({})).unwrap_err();
        assert!(e.contains("give one of"), "{e}");
    }
}
