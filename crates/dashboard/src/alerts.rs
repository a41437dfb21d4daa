//! Alert rules: part of the dashboard document (`DashboardState.alerts`), so edits, versions,
//! diffs, drafts and exports cover them like panels. Owns the rule types, reading a panel's
//! current value for a declarative condition ([`judge`]), and the per-rule state machine
//! ([`RuleState::step`]: ok → pending (`for`) → firing → resolved). Their checks (unknown
//! panel, variable, bad span...) are `validate`'s, with the rest of the document's.
//!
//! Pure and synchronous: running panel or rule code, storing states, scheduling and delivering
//! notifications belong to the `alerting` layer.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::PanelType;

/// The wire name of a panel type (`metric_card`), for messages.
fn type_name(kind: PanelType) -> String {
    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// Most alert rules in one dashboard.
pub const MAX_ALERTS: usize = 100;
/// Longest rule name, in characters.
pub const MAX_NAME_CHARS: usize = 120;
/// Largest `when` code, in bytes (16 KiB).
pub const MAX_WHEN_CODE_BYTES: usize = 16 * 1024;
/// Longest `for` hold.
pub const MAX_HOLD: Duration = Duration::from_secs(24 * 3600);
/// Shortest reminder interval of a firing rule.
pub const MIN_REPEAT: Duration = Duration::from_secs(300);
/// Most values one rule fans out over.
pub const MAX_FAN_OUT: usize = 50;

/// One alert rule: a condition on one panel's data, judged on every refresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AlertRule {
    /// Unique slug `[a-z0-9][a-z0-9-]{0,63}`.
    pub id: String,
    /// Shown in notifications ("BTC funding above 0.05%").
    pub name: String,
    /// The panel whose data is judged.
    pub panel_id: String,
    /// The condition: declarative, or the body of a function `(data, vars) => {firing, value?,
    /// message?}` run in the sandbox.
    pub when: When,
    /// How long the condition must hold before the rule fires (`"5m"`); fires at once without.
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    /// While firing, channels are reminded this often (`"4h"`); never without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<String>,
    /// How bad it is (default `warning`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Channel names to notify; in-app notifications are always made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<String>,
    /// Variable values for this rule's panel runs (others keep their defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<Map<String, Value>>,
    /// A variable to fan out over: the rule is judged once per value in the variable's options,
    /// each with its own state ("for each symbol in the list").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<String>,
}

/// When a rule fires: a declarative condition on the panel's value, or code.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum When {
    /// `{op, value, field?, window?}`.
    Condition(Condition),
    /// A function body receiving `data` and `vars`, returning `{firing, value?, message?}`.
    Code(String),
}

impl<'de> Deserialize<'de> for When {
    // By hand rather than `untagged`, so a bad condition says which field is wrong instead of
    // "data did not match any variant".
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(code) => Ok(Self::Code(code)),
            v @ Value::Object(_) => {
                serde_json::from_value(v).map(Self::Condition).map_err(serde::de::Error::custom)
            }
            other => Err(serde::de::Error::custom(format!(
                "expected a condition {{op, value, field?, window?}} or a function body string, got {other}"
            ))),
        }
    }
}

/// A declarative condition on the panel's current value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Condition {
    /// The comparison.
    pub op: Op,
    /// The threshold (for `change_pct_over`, in percent).
    pub value: f64,
    /// Which number to read: a series of a line/area/bar panel, a column of a table, a field of
    /// a candle (default `close`), a card's label or `change` of a metric card, a pie slice's
    /// name. May be left out when there is only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// For `change_pct_over` on a time series: the change over this span (`"24h"`); without it,
    /// the change from the previous point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
}

/// The closed set of comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// The value is above the threshold.
    #[serde(rename = ">")]
    Above,
    /// The value is below the threshold.
    #[serde(rename = "<")]
    Below,
    /// The value went from at or below the threshold to above it.
    #[serde(rename = "crosses_above")]
    CrossesAbove,
    /// The value went from at or above the threshold to below it.
    #[serde(rename = "crosses_below")]
    CrossesBelow,
    /// The value moved more than the threshold, in percent, either way.
    #[serde(rename = "change_pct_over")]
    ChangePctOver,
}

/// How bad a firing rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Worth a look (the default).
    #[default]
    Warning,
    /// Act now.
    Critical,
}

impl AlertRule {
    /// The `for` hold (zero without one; a bad value, refused by validation, counts as zero).
    pub fn hold(&self) -> Duration {
        self.hold.as_deref().and_then(|s| parse_span(s).ok()).unwrap_or_default()
    }

    /// The reminder interval, if any (a bad value, refused by validation, is none).
    pub fn repeat(&self) -> Option<Duration> {
        self.repeat.as_deref().and_then(|s| parse_span(s).ok())
    }

    /// The severity, `warning` by default.
    pub fn severity(&self) -> Severity {
        self.severity.unwrap_or_default()
    }
}

/// Parses a span such as `"5m"` or `"1h 30m"`.
pub(crate) fn parse_span(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim()).map_err(|e| e.to_string())
}

/// What one judgement found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reading {
    /// Whether the condition holds.
    pub firing: bool,
    /// The number judged (for `change_pct_over`, the change in percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// One sentence on what was seen.
    #[serde(default)]
    pub message: String,
}

/// Judges `cond` on a panel's data. `previous` is the value the last judgement read, used by
/// `crosses_*` and `change_pct_over` when the data holds one point only. The error is for the
/// model or analyst who wrote the rule: it names the fields there are.
pub fn judge(
    cond: &Condition,
    kind: PanelType,
    data: &Value,
    previous: Option<f64>,
) -> Result<Reading, String> {
    let series = read_series(kind, data, cond.field.as_deref())?;
    let Some(&(time, current)) = series.points.last() else {
        return Err(format!("the panel's `{}` has no number to judge yet", series.field));
    };
    let before = if series.points.len() >= 2 {
        Some(series.points[series.points.len() - 2].1)
    } else {
        previous
    };
    let t = cond.value;
    let field = &series.field;
    let (firing, value, message) = match cond.op {
        Op::Above => (current > t, current, format!("{field} is {current}, threshold > {t}")),
        Op::Below => (current < t, current, format!("{field} is {current}, threshold < {t}")),
        Op::CrossesAbove | Op::CrossesBelow => {
            let up = cond.op == Op::CrossesAbove;
            let Some(b) = before else {
                return Ok(Reading {
                    firing: false,
                    value: Some(current),
                    message: format!("{field} is {current}; no earlier value to compare yet"),
                });
            };
            let crossed = if up { b <= t && current > t } else { b >= t && current < t };
            let dir = if up { "above" } else { "below" };
            (crossed, current, format!("{field} went from {b} to {current}, crossing {dir} {t}"))
        }
        Op::ChangePctOver => {
            let base = match (&cond.window, time) {
                (Some(w), Some(now)) => {
                    let span = parse_span(w).map_err(|e| format!("window \"{w}\": {e}"))?;
                    let from = now - i64::try_from(span.as_secs()).unwrap_or(i64::MAX);
                    series
                        .points
                        .iter()
                        .rev()
                        .find(|(t, _)| t.is_some_and(|t| t <= from))
                        .or(series.points.first())
                        .map(|p| p.1)
                }
                (Some(_), None) => {
                    return Err(format!(
                        "`window` needs points with a time; the panel's `{field}` has none (leave \
                         `window` out to compare with the previous value)"
                    ));
                }
                (None, _) => series.change.or(before).map(|b| {
                    // A metric card's own `change` is already in percent: undo it to a base.
                    if series.change.is_some() { current / (1.0 + b / 100.0) } else { b }
                }),
            };
            let Some(base) = base.filter(|b| *b != 0.0) else {
                return Ok(Reading {
                    firing: false,
                    value: None,
                    message: format!("{field} is {current}; no earlier non-zero value to compare"),
                });
            };
            let pct = (current - base) / base.abs() * 100.0;
            let pct = (pct * 1e6).round() / 1e6;
            (
                pct.abs() > t,
                pct,
                format!("{field} moved {pct:+}% (from {base} to {current}), threshold {t}%"),
            )
        }
    };
    Ok(Reading { firing, value: Some(value), message })
}

/// The numbers a condition reads, oldest first, with their times when the data has them.
struct Series {
    field: String,
    points: Vec<(Option<i64>, f64)>,
    /// A metric card's own percent change.
    change: Option<f64>,
}

/// Whether a panel type has a value a declarative condition can read.
pub fn has_value(kind: PanelType) -> bool {
    !matches!(kind, PanelType::Heatmap | PanelType::Radar | PanelType::Scatter | PanelType::Feed)
}

fn rows(data: &Value) -> Vec<Map<String, Value>> {
    match data {
        Value::Array(a) => a.iter().filter_map(|r| r.as_object().cloned()).collect(),
        // A table's `{columns, rows}` form, rows as arrays or objects.
        Value::Object(o) => {
            let columns: Vec<&str> = o
                .get("columns")
                .and_then(Value::as_array)
                .map(|c| c.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            o.get("rows")
                .and_then(Value::as_array)
                .map(|rs| {
                    rs.iter()
                        .filter_map(|r| match r {
                            Value::Array(cells) => Some(
                                columns
                                    .iter()
                                    .zip(cells)
                                    .map(|(c, v)| ((*c).to_owned(), v.clone()))
                                    .collect(),
                            ),
                            Value::Object(m) => Some(m.clone()),
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// The numeric fields of rows, in first-seen order, except `skip`.
fn numeric_fields(rows: &[Map<String, Value>], skip: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        for (k, v) in r {
            if v.is_number() && !skip.contains(&k.as_str()) && !out.contains(k) {
                out.push(k.clone());
            }
        }
    }
    out
}

fn one_of(fields: &[String]) -> String {
    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
}

fn read_series(kind: PanelType, data: &Value, field: Option<&str>) -> Result<Series, String> {
    let t = type_name(kind);
    if !has_value(kind) {
        return Err(format!(
            "a {t} panel has no single value to compare; give `when` as code instead"
        ));
    }
    match kind {
        PanelType::MetricCard => {
            let cards: Vec<&Map<String, Value>> = match data {
                Value::Array(a) => a.iter().filter_map(Value::as_object).collect(),
                Value::Object(o) => vec![o],
                _ => Vec::new(),
            };
            let label =
                |c: &Map<String, Value>| c.get("label").and_then(Value::as_str).map(str::to_owned);
            let (card, name) = match field {
                None | Some("value") | Some("change") if cards.len() == 1 => {
                    (cards[0], field.unwrap_or("value").to_owned())
                }
                Some(f) => match cards.iter().find(|c| label(c).as_deref() == Some(f)) {
                    Some(c) => (*c, "value".to_owned()),
                    None => {
                        let labels: Vec<String> = cards.iter().filter_map(|c| label(c)).collect();
                        return Err(format!(
                            "the metric card has no card labelled `{f}`; labels: {}",
                            one_of(&labels)
                        ));
                    }
                },
                None => {
                    let labels: Vec<String> = cards.iter().filter_map(|c| label(c)).collect();
                    return Err(format!(
                        "the panel shows {} cards: set `field` to a card's label ({})",
                        cards.len(),
                        one_of(&labels)
                    ));
                }
            };
            let shown = if name == "value" {
                label(card).unwrap_or_else(|| "value".into())
            } else {
                name.clone()
            };
            let Some(v) = card.get(&name).and_then(Value::as_f64) else {
                return Err(format!("the card's `{name}` is not a number"));
            };
            let change =
                (name == "value").then(|| card.get("change").and_then(Value::as_f64)).flatten();
            Ok(Series { field: shown, points: vec![(None, v)], change })
        }
        PanelType::Pie => {
            let slices = rows(data);
            let names: Vec<String> = slices
                .iter()
                .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect();
            let Some(f) = field else {
                return Err(format!("set `field` to a slice's name ({})", one_of(&names)));
            };
            let slice = slices
                .iter()
                .find(|r| r.get("name").and_then(Value::as_str) == Some(f))
                .ok_or_else(|| format!("the pie has no slice `{f}`; slices: {}", one_of(&names)))?;
            let v = slice.get("value").and_then(Value::as_f64).unwrap_or(0.0);
            Ok(Series { field: f.to_owned(), points: vec![(None, v)], change: None })
        }
        _ => {
            let rows = rows(data);
            let skip: &[&str] = match kind {
                PanelType::Bar => &["time", "name", "label", "category"],
                _ => &["time"],
            };
            let fields = numeric_fields(&rows, skip);
            let name = match field {
                Some(f) => {
                    if !fields.iter().any(|x| x == f) && !rows.is_empty() {
                        return Err(format!(
                            "the {t} panel has no numeric `{f}`; it has {}",
                            one_of(&fields)
                        ));
                    }
                    f.to_owned()
                }
                None if kind == PanelType::Candlestick => "close".to_owned(),
                None => match fields.as_slice() {
                    [only] => only.clone(),
                    [] => return Err(format!("the {t} panel has no numeric field to judge yet")),
                    many => {
                        return Err(format!(
                            "the {t} panel has several numbers: set `field` to one of {}",
                            one_of(many)
                        ));
                    }
                },
            };
            let points = rows
                .iter()
                .filter_map(|r| {
                    let v = r.get(&name)?.as_f64()?;
                    Some((r.get("time").and_then(Value::as_i64), v))
                })
                .collect();
            Ok(Series { field: name, points, change: None })
        }
    }
}

/// A rule's state, kept per rule (and per fan-out value) between judgements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The condition does not hold.
    Ok,
    /// The condition holds, for less than the rule's `for` so far.
    Pending,
    /// The condition holds (for at least `for`): notified.
    Firing,
}

/// A change worth a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transition {
    /// The rule started firing.
    Firing,
    /// A firing rule's condition stopped holding.
    Resolved,
}

/// What one evaluation saw.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// The panel (and rule code) ran and the condition was judged.
    Judged(Reading),
    /// The panel or the rule's code failed (a provider outage is not a market move).
    Failed(String),
}

/// One rule's (or fan-out value's) state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleState {
    /// Where the state machine is.
    pub status: Status,
    /// Since when it is there (unix ms).
    pub since: i64,
    /// The last value judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The last judgement's sentence.
    #[serde(default)]
    pub message: String,
    /// When it was last evaluated (unix ms; 0 never).
    pub evaluated_at: i64,
    /// Since when evaluations fail, and why (cleared by the next judgement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_since: Option<i64>,
    /// The last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Notifications so far (transitions, reminders, catch-ups): with the rule's key, names
    /// each notification once (a node that takes over cannot send one again).
    pub transitions: u64,
    /// What channels last heard (`None`: not known yet, taken to be the current state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told: Option<Transition>,
    /// When they heard it (unix ms).
    #[serde(default)]
    pub told_at: i64,
    /// The times of the latest transitions (the flapping test's window).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flips: Vec<i64>,
    /// Since when the rule flaps: transitions are recorded, not sent, until it settles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flapping_since: Option<i64>,
}

/// What keeps a rule from flooding its channels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// Send a reminder while firing this often (the rule's `repeat`).
    pub repeat: Option<Duration>,
    /// A silence covers the rule now: record, send nothing.
    pub silenced: bool,
    /// More than this many transitions within `flap_window` make the rule flap (0: never).
    pub flap_limit: usize,
    /// See `flap_limit`.
    pub flap_window: Duration,
    /// A flapping rule settles once it holds one state this long.
    pub settle: Duration,
}

impl Default for Noise {
    fn default() -> Self {
        Self {
            repeat: None,
            silenced: false,
            flap_limit: 6,
            flap_window: Duration::from_secs(3600),
            settle: Duration::from_secs(900),
        }
    }
}

/// Why a notification was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reason {
    /// The rule fired or resolved.
    #[default]
    Change,
    /// Still firing after the rule's `repeat`.
    Reminder,
    /// The rule changes too often: this one is sent, the next are only recorded until it
    /// settles.
    Flapping,
    /// Channels had not heard the current state (the rule stopped flapping, a silence ended):
    /// they hear it now.
    Settled,
}

/// A notification to make: its status, why, and whether channels get it (a muted one is
/// only recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Told {
    /// `firing` or `resolved`.
    pub status: Transition,
    /// Why.
    pub reason: Reason,
    /// Whether it is sent (else only recorded: silenced, flapping, or nothing new to say).
    pub send: bool,
}

impl RuleState {
    /// A rule never evaluated.
    pub fn new(now: i64) -> Self {
        Self {
            status: Status::Ok,
            since: now,
            value: None,
            message: String::new(),
            evaluated_at: 0,
            failing_since: None,
            error: None,
            transitions: 0,
            told: None,
            told_at: 0,
            flips: Vec::new(),
            flapping_since: None,
        }
    }

    /// What channels should know now.
    fn current(&self) -> Transition {
        if self.status == Status::Firing { Transition::Firing } else { Transition::Resolved }
    }

    /// After [`RuleState::step`] (`transition` is what it answered): the notification to
    /// make, if any. Channels hear a state only when it is news to them, so what they are
    /// sent alternates firing and resolved (reminders aside) whatever was muted between; a
    /// rule with more than `flap_limit` transitions within `flap_window` sends one `flapping`
    /// notice and then only records until it holds one state for `settle`; a silenced rule
    /// records only, and channels hear the state once the silence ends. A notification that is
    /// not a transition counts in `transitions` (its id) here.
    pub fn tell(&mut self, transition: Option<Transition>, noise: Noise, now: i64) -> Option<Told> {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let told = *self.told.get_or_insert(match transition {
            // A state read from before this field existed: channels heard it.
            None => self.current(),
            Some(Transition::Firing) => Transition::Resolved,
            Some(Transition::Resolved) => Transition::Firing,
        });
        let hear = |s: &mut Self, status: Transition, reason: Reason, counted: bool| {
            let send = !noise.silenced && (status != told || reason == Reason::Reminder);
            if send {
                s.told = Some(status);
                s.told_at = now;
            }
            if !counted {
                s.transitions += 1;
            }
            Some(Told { status, reason, send })
        };
        if let Some(t) = transition {
            self.flips.push(now);
            let keep = noise.flap_limit + 1;
            if self.flips.len() > keep {
                self.flips.drain(..self.flips.len() - keep);
            }
            if self.flapping_since.is_some() {
                return Some(Told { status: t, reason: Reason::Change, send: false });
            }
            let window = now.saturating_sub(self.flips[0]);
            if noise.flap_limit > 0
                && self.flips.len() > noise.flap_limit
                && window <= ms(noise.flap_window)
            {
                self.flapping_since = Some(now);
                return hear(self, t, Reason::Flapping, true);
            }
            return hear(self, t, Reason::Change, true);
        }
        if let Some(since) = self.flapping_since {
            if now.saturating_sub(self.since.max(since)) < ms(noise.settle) {
                return None;
            }
            self.flapping_since = None;
            self.flips.clear();
        }
        let current = self.current();
        if current != told && !noise.silenced {
            return hear(self, current, Reason::Settled, false);
        }
        if current == Transition::Firing
            && !noise.silenced
            && let Some(every) = noise.repeat
            && now.saturating_sub(self.told_at) >= ms(every)
        {
            return hear(self, current, Reason::Reminder, false);
        }
        None
    }

    /// The state after `seen` at `now` for a rule holding for `hold`, and the transition to
    /// notify, if any. A failure changes nothing but the failure fields.
    pub fn step(&self, seen: Observation, hold: Duration, now: i64) -> (Self, Option<Transition>) {
        let mut next = self.clone();
        next.evaluated_at = now;
        let reading = match seen {
            Observation::Failed(error) => {
                next.failing_since.get_or_insert(now);
                next.error = Some(error);
                return (next, None);
            }
            Observation::Judged(r) => r,
        };
        next.failing_since = None;
        next.error = None;
        next.value = reading.value;
        next.message = reading.message;
        let hold_ms = i64::try_from(hold.as_millis()).unwrap_or(i64::MAX);
        let (status, transition) = match (self.status, reading.firing) {
            (Status::Ok, true) if hold_ms == 0 => (Status::Firing, Some(Transition::Firing)),
            (Status::Ok, true) => (Status::Pending, None),
            (Status::Pending, true) if now.saturating_sub(self.since) >= hold_ms => {
                (Status::Firing, Some(Transition::Firing))
            }
            (Status::Pending, true) => (Status::Pending, None),
            (Status::Firing, true) => (Status::Firing, None),
            (Status::Firing, false) => (Status::Ok, Some(Transition::Resolved)),
            (Status::Ok | Status::Pending, false) => (Status::Ok, None),
        };
        if status != self.status {
            next.status = status;
            next.since = now;
        }
        if transition.is_some() {
            next.transitions += 1;
        }
        (next, transition)
    }

    /// Whether evaluations have failed for at least `after` ("no data").
    pub fn no_data(&self, after: Duration, now: i64) -> bool {
        let after = i64::try_from(after.as_millis()).unwrap_or(i64::MAX);
        self.failing_since.is_some_and(|s| now.saturating_sub(s) >= after)
    }
}

/// The values a rule fans out over: `None` for a rule without `forEach` (one state), else the
/// options of the named variable (at most [`MAX_FAN_OUT`]).
pub fn fan_out(rule: &AlertRule, variables: &[super::Variable]) -> Option<Vec<Value>> {
    let name = rule.for_each.as_deref()?;
    let var = variables.iter().find(|v| v.name == name)?;
    Some(var.options.clone().unwrap_or_default().into_iter().take(MAX_FAN_OUT).collect())
}

/// The key of a fan-out value in state keys and notifications (`"BTC"`, `"3"`).
pub fn fan_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
