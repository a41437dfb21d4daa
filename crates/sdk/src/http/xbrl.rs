//! XBRL company facts (SEC EDGAR's `companyfacts` document) → one row per fiscal period, for
//! the `facts` option of a response mapping:
//!
//! ```json
//! "response": {
//!   "facts": {
//!     "period": "{period}",
//!     "fields": {
//!       "revenue": ["us-gaap:Revenues", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"],
//!       "eps": {"concepts": ["us-gaap:EarningsPerShareDiluted"], "unit": "USD/shares"},
//!       "capitalExpenditure": {"concepts": ["us-gaap:PaymentsToAcquirePropertyPlantAndEquipment"], "scale": -1}
//!     }
//!   }
//! }
//! ```
//!
//! The document holds `facts.<taxonomy>.<Concept>.units.<unit>[]`, each fact `{start?, end, val,
//! accn, fy, fp, form, filed}`, repeated once per filing that reports it. Here:
//! - a field takes, per period, the value of the first of its concepts that reports that period
//!   (companies switch concepts over the years), the latest filing winning (restatements);
//! - `annual` periods are durations of 350–380 days (52/53-week years) and, for balance-sheet
//!   instants, the dates annual reports (10-K, 20-F, 40-F) state; `quarter` periods are
//!   durations of 80–100 days and every reported instant. Quarters that filings state only as
//!   year-to-date (cash flows in 10-Qs, the fourth quarter in a 10-K) are the difference of two
//!   year-to-date values with the same start, only for currency amounts (per-share values and
//!   share counts do not subtract);
//! - the first field decides which periods are rows; `time` is the period's first day (for an
//!   instant, the first day of the duration the company reports ending on that date) and
//!   `fiscalPeriod` is `FY2024` or `2024-Q3` from the filing whose own period it is.
//!
//! Knows nothing of HTTP or of which statements exist: the spec names the concepts.

use std::collections::{BTreeMap, HashMap};

use chrono::{Days, NaiveDate};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::template;

/// The `facts` option: which period and which concepts fill which fields.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Facts {
    /// `annual` or `quarter`; a template (`"{period}"`).
    pub period: String,
    /// Output field → where it comes from, in output order. The first decides the rows.
    pub fields: FactFields,
}

/// One output field.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FactField {
    /// `taxonomy:Concept` (a bare `Concept` is `us-gaap`), in order of preference.
    pub concepts: Vec<String>,
    /// Unit key (default `USD`; `USD/shares`, `shares`).
    #[serde(default = "usd")]
    pub unit: String,
    /// Multiplies the value (`-1` for outflows reported as positive payments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
}

fn usd() -> String {
    "USD".into()
}

/// Ordered `name → FactField`; a field may be given as just its list of concepts.
#[derive(Debug, Clone, PartialEq)]
pub struct FactFields(pub Vec<(String, FactField)>);

impl Serialize for FactFields {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FactFields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Concepts(Vec<String>),
            Field(FactField),
        }
        let map = Map::<String, Value>::deserialize(d)?;
        if map.is_empty() {
            return Err(serde::de::Error::custom("facts.fields: name at least one field"));
        }
        let mut out = Vec::with_capacity(map.len());
        for (k, v) in map {
            let f = match serde_json::from_value::<Given>(v) {
                Ok(Given::Concepts(concepts)) => FactField { concepts, unit: usd(), scale: None },
                Ok(Given::Field(f)) => f,
                Err(_) => {
                    return Err(serde::de::Error::custom(format!(
                        "facts field `{k}`: give a list of concepts or \
                         {{concepts, unit?, scale?}}"
                    )));
                }
            };
            if f.concepts.is_empty() {
                return Err(serde::de::Error::custom(format!("facts field `{k}`: no concepts")));
            }
            out.push((k, f));
        }
        Ok(Self(out))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Period {
    Annual,
    Quarter,
}

impl Period {
    /// Day counts (first and last day included) of a duration of this period.
    fn days(self) -> std::ops::RangeInclusive<i64> {
        match self {
            Period::Annual => 350..=380,
            Period::Quarter => 80..=100,
        }
    }
}

/// One reported value.
#[derive(Debug, Clone)]
struct Fact {
    start: Option<NaiveDate>,
    end: NaiveDate,
    val: f64,
    accn: String,
    fy: Option<i64>,
    fp: Option<String>,
    form: String,
    filed: Option<NaiveDate>,
}

impl Fact {
    fn parse(v: &Value) -> Option<Self> {
        let date = |k: &str| v.get(k)?.as_str().and_then(|s| s.parse::<NaiveDate>().ok());
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            start: date("start"),
            end: date("end")?,
            val: v.get("val")?.as_f64()?,
            accn: text("accn").unwrap_or_default(),
            fy: v.get("fy").and_then(Value::as_i64),
            fp: text("fp"),
            form: text("form").unwrap_or_default(),
            filed: date("filed"),
        })
    }

    /// Days in the period, both ends included; `None` for an instant.
    fn days(&self) -> Option<i64> {
        self.start.map(|s| (self.end - s).num_days() + 1)
    }

    fn annual_form(&self) -> bool {
        ["10-K", "20-F", "40-F", "10-KT"].iter().any(|f| self.form.starts_with(f))
    }
}

/// A period's value of one field.
#[derive(Debug, Clone, Copy)]
struct Cell {
    start: Option<NaiveDate>,
    val: f64,
}

/// Maps a companyfacts document to rows (ascending by period end).
pub fn apply(
    facts: &Facts,
    body: &Value,
    params: &Map<String, Value>,
) -> Result<Vec<Map<String, Value>>, String> {
    let period = match template::expand_plain(&facts.period, params).to_ascii_lowercase().as_str() {
        "annual" | "fy" | "year" => Period::Annual,
        "quarter" | "quarterly" | "q" => Period::Quarter,
        other => return Err(format!("period `{other}`: expected `annual` or `quarter`")),
    };
    let Some(all) = body.get("facts").and_then(Value::as_object) else {
        return Err(format!(
            "expected an XBRL company-facts document with `facts`, got {}",
            super::convert::describe(body)
        ));
    };
    let ctx = Context::new(all, period);
    let mut columns: Vec<BTreeMap<NaiveDate, Cell>> = Vec::with_capacity(facts.fields.0.len());
    for (_, field) in &facts.fields.0 {
        let mut col = BTreeMap::new();
        for concept in &field.concepts {
            for (end, cell) in values(all, concept, &field.unit, period) {
                col.entry(end)
                    .or_insert(Cell { val: cell.val * field.scale.unwrap_or(1.0), ..cell });
            }
        }
        columns.push(col);
    }
    let mut rows = Vec::new();
    for (end, anchor) in &columns[0] {
        let start = anchor.start.or_else(|| ctx.starts.get(end).copied()).unwrap_or(*end);
        let mut row = Map::new();
        row.insert("time".into(), Value::from(epoch(start)));
        row.insert("fiscalPeriod".into(), Value::from(ctx.label(*end, period)));
        for ((name, _), col) in facts.fields.0.iter().zip(&columns) {
            let v = col.get(end).map_or(Value::Null, |c| super::expr::to_json(Some(c.val)));
            row.insert(name.clone(), v);
        }
        rows.push(row);
    }
    Ok(rows)
}

fn epoch(d: NaiveDate) -> i64 {
    d.and_hms_opt(0, 0, 0).map_or(0, |t| t.and_utc().timestamp())
}

/// What the whole document says about periods: each filing's own period end, the fiscal label
/// of each period end, and the first day of the durations ending on each date.
struct Context {
    labels: HashMap<NaiveDate, (i64, String)>,
    starts: HashMap<NaiveDate, NaiveDate>,
}

impl Context {
    fn new(all: &Map<String, Value>, period: Period) -> Self {
        // The cover page (`dei`) states dates after the period (shares outstanding on the
        // filing day), so it says nothing about a filing's period.
        let every: Vec<Fact> = all
            .iter()
            .filter(|(taxonomy, _)| *taxonomy != "dei")
            .filter_map(|(_, concepts)| concepts.as_object())
            .flat_map(|concepts| concepts.values())
            .filter_map(|c| c.get("units")?.as_object())
            .flat_map(|units| units.values())
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Fact::parse)
            .collect();
        let mut own_end: HashMap<String, NaiveDate> = HashMap::new();
        for f in &every {
            let e = own_end.entry(f.accn.clone()).or_insert(f.end);
            *e = (*e).max(f.end);
        }
        let mut labels: HashMap<NaiveDate, (i64, String, Option<NaiveDate>)> = HashMap::new();
        let mut starts = HashMap::new();
        let mut ytd: Vec<Fact> = Vec::new();
        for f in every {
            if own_end.get(&f.accn) == Some(&f.end)
                && let (Some(fy), Some(fp)) = (f.fy, f.fp.clone())
            {
                let earlier = labels.get(&f.end).is_none_or(|l| f.filed < l.2);
                if earlier {
                    labels.insert(f.end, (fy, fp, f.filed));
                }
            }
            if let (Some(s), Some(d)) = (f.start, f.days()) {
                if period.days().contains(&d) {
                    starts.insert(f.end, s);
                }
                if period == Period::Quarter && (80..=380).contains(&d) {
                    ytd.push(f);
                }
            }
        }
        for (end, start) in chained_quarters(ytd.iter().map(|f| (f.start, f.end))) {
            starts.entry(end).or_insert(start);
        }
        let labels = labels.into_iter().map(|(k, (fy, fp, _))| (k, (fy, fp))).collect();
        Self { labels, starts }
    }

    fn label(&self, end: NaiveDate, period: Period) -> String {
        use chrono::Datelike;
        match (self.labels.get(&end), period) {
            (Some((fy, _)), Period::Annual) => format!("FY{fy}"),
            (Some((fy, fp)), Period::Quarter) if fp.starts_with('Q') => format!("{fy}-{fp}"),
            (Some((fy, _)), Period::Quarter) => format!("{fy}-Q4"),
            // No filing has this as its own period: name it by the calendar.
            (None, Period::Annual) => format!("FY{}", end.year()),
            (None, Period::Quarter) => format!("{}-Q{}", end.year(), end.month0() / 3 + 1),
        }
    }
}

/// For year-to-date durations sharing a start (3, 6, 9, 12 months), the quarters between
/// consecutive ends: `(end, first day)`.
fn chained_quarters(
    spans: impl Iterator<Item = (Option<NaiveDate>, NaiveDate)>,
) -> Vec<(NaiveDate, NaiveDate)> {
    let mut by_start: BTreeMap<NaiveDate, Vec<NaiveDate>> = BTreeMap::new();
    for (s, e) in spans {
        if let Some(s) = s {
            by_start.entry(s).or_default().push(e);
        }
    }
    let mut out = Vec::new();
    for ends in by_start.values_mut() {
        ends.sort();
        ends.dedup();
        for w in ends.windows(2) {
            if Period::Quarter.days().contains(&(w[1] - w[0]).num_days())
                && let Some(first) = w[0].checked_add_days(Days::new(1))
            {
                out.push((w[1], first));
            }
        }
    }
    out
}

/// The values of one concept in one unit for the periods asked for, by period end.
fn values(
    all: &Map<String, Value>,
    concept: &str,
    unit: &str,
    period: Period,
) -> BTreeMap<NaiveDate, Cell> {
    let (taxonomy, name) = concept.split_once(':').unwrap_or(("us-gaap", concept));
    let Some(list) = all
        .get(taxonomy)
        .and_then(|t| t.get(name))
        .and_then(|c| c.get("units"))
        .and_then(|u| u.get(unit))
        .and_then(Value::as_array)
    else {
        return BTreeMap::new();
    };
    // One value per (start, end): the latest filing's (a restatement replaces the original).
    let mut latest: BTreeMap<(Option<NaiveDate>, NaiveDate), Fact> = BTreeMap::new();
    for f in list.iter().filter_map(Fact::parse) {
        if period == Period::Annual && f.start.is_none() && !f.annual_form() {
            continue;
        }
        match latest.get(&(f.start, f.end)) {
            Some(old) if old.filed > f.filed => {}
            _ => {
                latest.insert((f.start, f.end), f);
            }
        }
    }
    let mut out = BTreeMap::new();
    let mut ytd: BTreeMap<(NaiveDate, NaiveDate), f64> = BTreeMap::new();
    for ((start, end), f) in &latest {
        match (start, f.days()) {
            (None, _) => {
                out.insert(*end, Cell { start: None, val: f.val });
            }
            (Some(s), Some(d)) if period.days().contains(&d) => {
                out.insert(*end, Cell { start: Some(*s), val: f.val });
            }
            (Some(s), Some(d)) if period == Period::Quarter && d > 100 && d <= 380 => {
                ytd.insert((*s, *end), f.val);
            }
            _ => {}
        }
    }
    // Amounts add up over time; per-share values and (weighted average) share counts do not.
    let amount = unit.len() == 3 && unit.chars().all(|c| c.is_ascii_uppercase());
    if period == Period::Quarter && amount {
        // Year-to-date values include the 3-month ones with the same start.
        for ((s, e), f) in &latest {
            if let (Some(s), Some(d)) = (s, f.days())
                && Period::Quarter.days().contains(&d)
            {
                ytd.insert((*s, *e), f.val);
            }
        }
        for (end, first) in chained_quarters(ytd.keys().map(|(s, e)| (Some(*s), *e))) {
            if out.contains_key(&end) {
                continue;
            }
            let Some(prev_end) = first.checked_sub_days(Days::new(1)) else { continue };
            let start = ytd.keys().find(|(s, e)| *e == end && ytd.contains_key(&(*s, prev_end)));
            if let Some(&(s, _)) = start {
                let v = ytd[&(s, end)] - ytd[&(s, prev_end)];
                out.insert(end, Cell { start: Some(first), val: v });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fact(start: Option<&str>, end: &str, val: f64, accn: &str, fp: &str, form: &str) -> Value {
        let mut f = json!({"end": end, "val": val, "accn": accn, "fy": 2024, "fp": fp,
                           "form": form, "filed": "2024-11-01"});
        if let Some(s) = start {
            f["start"] = json!(s);
        }
        f
    }

    fn doc(concepts: Value) -> Value {
        json!({"cik": 1, "entityName": "X", "facts": {"us-gaap": concepts}})
    }

    fn spec(period: &str, fields: Value) -> Facts {
        serde_json::from_value(json!({"period": period, "fields": fields})).unwrap()
    }

    #[test]
    fn annual_rows_take_the_first_concept_that_reports_each_year() {
        let body = doc(json!({
            "SalesRevenueNet": {"units": {"USD": [
                fact(Some("2021-01-01"), "2021-12-31", 90.0, "a1", "FY", "10-K"),
                fact(Some("2022-01-01"), "2022-12-31", 95.0, "a2", "FY", "10-K"),
            ]}},
            "Revenues": {"units": {"USD": [
                fact(Some("2022-01-01"), "2022-12-31", 100.0, "a2", "FY", "10-K"),
                fact(Some("2022-07-01"), "2022-09-30", 30.0, "q3", "Q3", "10-Q"),
            ]}},
        }));
        let s = spec("annual", json!({"revenue": ["Revenues", "us-gaap:SalesRevenueNet"]}));
        let rows = apply(&s, &body, &Map::new()).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0]["revenue"], json!(90.0));
        assert_eq!(rows[1]["revenue"], json!(100.0), "Revenues first where it reports");
        assert_eq!(rows[1]["time"], json!(epoch("2022-01-01".parse().unwrap())));
    }

    #[test]
    fn a_restatement_replaces_the_original_value() {
        let mut late = fact(Some("2022-01-01"), "2022-12-31", 101.0, "b", "FY", "10-K/A");
        late["filed"] = json!("2025-02-01");
        let body = doc(json!({"Revenues": {"units": {"USD": [
            late,
            fact(Some("2022-01-01"), "2022-12-31", 100.0, "a", "FY", "10-K"),
        ]}}}));
        let rows = apply(&spec("annual", json!({"r": ["Revenues"]})), &body, &Map::new()).unwrap();
        assert_eq!(rows[0]["r"], json!(101.0));
    }

    #[test]
    fn fourth_quarters_and_cash_flows_come_from_year_to_date_differences() {
        // A cash-flow concept stated year to date (3, 6, 9 months, then the year), EPS direct.
        let ytd = [("2024-03-31", 10.0), ("2024-06-30", 25.0), ("2024-09-30", 45.0)];
        let mut cf: Vec<Value> = ytd
            .iter()
            .enumerate()
            .map(|(i, (e, v))| {
                fact(Some("2024-01-01"), e, *v, &format!("q{i}"), &format!("Q{}", i + 1), "10-Q")
            })
            .collect();
        cf.push(fact(Some("2024-01-01"), "2024-12-31", 70.0, "k", "FY", "10-K"));
        let body = doc(json!({
            "NetCashProvidedByUsedInOperatingActivities": {"units": {"USD": cf}},
            "EarningsPerShareDiluted": {"units": {"USD/shares": [
                fact(Some("2024-01-01"), "2024-03-31", 1.0, "q0", "Q1", "10-Q"),
                fact(Some("2024-01-01"), "2024-12-31", 5.0, "k", "FY", "10-K"),
            ]}},
        }));
        let s = spec(
            "quarter",
            json!({
                "ocf": ["NetCashProvidedByUsedInOperatingActivities"],
                "eps": {"concepts": ["EarningsPerShareDiluted"], "unit": "USD/shares"},
            }),
        );
        let rows = apply(&s, &body, &Map::new()).unwrap();
        let got: Vec<(String, f64)> = rows
            .iter()
            .map(|r| (r["fiscalPeriod"].as_str().unwrap().to_owned(), r["ocf"].as_f64().unwrap()))
            .collect();
        let want = [("2024-Q1", 10.0), ("2024-Q2", 15.0), ("2024-Q3", 20.0), ("2024-Q4", 25.0)];
        assert_eq!(got, want.map(|(l, v)| (l.to_owned(), v)));
        assert_eq!(rows[3]["time"], json!(epoch("2024-10-01".parse().unwrap())));
        assert_eq!(rows[0]["eps"], json!(1.0));
        assert_eq!(rows[3]["eps"], Value::Null, "per-share values are never subtracted");
    }

    #[test]
    fn instants_get_the_start_of_the_period_they_close_and_annual_ones_come_from_10k() {
        let body = doc(json!({
            "Assets": {"units": {"USD": [
                fact(None, "2023-12-31", 500.0, "k", "FY", "10-K"),
                fact(None, "2024-06-30", 520.0, "q", "Q2", "10-Q"),
                fact(None, "2024-12-31", 550.0, "k2", "FY", "10-K"),
            ]}},
            "NetIncomeLoss": {"units": {"USD": [
                fact(Some("2024-01-01"), "2024-12-31", 9.0, "k2", "FY", "10-K"),
            ]}},
        }));
        let s = spec("annual", json!({"totalAssets": ["Assets"], "ni": ["NetIncomeLoss"]}));
        let rows = apply(&s, &body, &Map::new()).unwrap();
        assert_eq!(rows.len(), 2, "the 10-Q instant is not an annual period: {rows:?}");
        assert_eq!(rows[1]["time"], json!(epoch("2024-01-01".parse().unwrap())));
        assert_eq!(rows[1]["ni"], json!(9.0));
        assert_eq!(rows[0]["time"], json!(epoch("2023-12-31".parse().unwrap())), "no duration");
        let q = apply(&spec("quarter", json!({"a": ["Assets"]})), &body, &Map::new()).unwrap();
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn scale_turns_payments_into_outflows_and_bad_input_reads_clearly() {
        let body = doc(json!({"PaymentsToAcquirePropertyPlantAndEquipment": {"units": {"USD": [
            fact(Some("2024-01-01"), "2024-12-31", 7.0, "k", "FY", "10-K"),
        ]}}}));
        let s: Facts = serde_json::from_value(json!({"period": "{period}", "fields": {
            "capex": {"concepts": ["PaymentsToAcquirePropertyPlantAndEquipment"], "scale": -1}}}))
        .unwrap();
        let mut p = Map::new();
        p.insert("period".into(), json!("annual"));
        assert_eq!(apply(&s, &body, &p).unwrap()[0]["capex"], json!(-7.0));
        p.insert("period".into(), json!("weekly"));
        assert!(apply(&s, &body, &p).unwrap_err().contains("`weekly`"));
        p.insert("period".into(), json!("annual"));
        let e = apply(&s, &json!({"error": "x"}), &p).unwrap_err();
        assert!(e.contains("company-facts"), "{e}");
        let bad = serde_json::from_value::<Facts>(json!({"period": "annual", "fields": {"x": 3}}));
        assert!(bad.unwrap_err().to_string().contains("facts field `x`"));
    }
}
