//! Differences between two versions of a dashboard: change entries keyed by panel id (for the
//! agent and the UI) and an RFC 6902 JSON Patch (for clients holding the exact base version).
//!
//! Entries come in a fixed order: title, layout, refresh, variables, alerts, then removed panels (old
//! order), added panels and modified panels (new order), then one `reordered` entry when the
//! relative order of the panels present in both versions changed. Panels are matched by id,
//! never by index, so removing a panel does not make its successors look modified or moved.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::validate::type_name;
use super::{AlertRule, DashboardState, Panel, Variable};

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A panel was added.
    AddedPanel,
    /// A panel was removed.
    RemovedPanel,
    /// A panel's fields changed.
    ModifiedPanel,
    /// Grid settings changed.
    LayoutChanged,
    /// The title changed.
    TitleChanged,
    /// Variables changed.
    VariablesChanged,
    /// Panels were reordered.
    Reordered,
    /// The dashboard-level refresh interval changed.
    RefreshChanged,
    /// Alert rules were added, removed or changed.
    AlertsChanged,
}

/// One change, keyed by panel id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeEntry {
    /// What changed.
    #[serde(rename = "type")]
    pub kind: ChangeKind,
    /// The panel, for panel changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub panel_id: Option<String>,
    /// Human/model-readable detail.
    pub detail: String,
}

/// Most lines of code diff kept in a `modified_panel` entry.
pub const MAX_CODE_DIFF_LINES: usize = 40;

impl ChangeEntry {
    /// The entry without the unified code diff in `detail` (the field names stay): what live
    /// subscribers get, since their patch already carries the new code.
    pub fn without_code_diff(&self) -> Self {
        let detail = self.detail.split('\n').next().unwrap_or_default().to_owned();
        Self { detail, ..self.clone() }
    }

    fn new(kind: ChangeKind, detail: impl Into<String>) -> Self {
        Self { kind, panel_id: None, detail: detail.into() }
    }

    fn panel(kind: ChangeKind, id: &str, detail: impl Into<String>) -> Self {
        Self { kind, panel_id: Some(id.to_owned()), detail: detail.into() }
    }
}

/// First panel with each id (valid states have unique ids; duplicates must not panic).
fn by_id(panels: &[Panel]) -> HashMap<&str, &Panel> {
    let mut m = HashMap::with_capacity(panels.len());
    for p in panels {
        m.entry(p.id.as_str()).or_insert(p);
    }
    m
}

/// Panels in order, each id once (its first occurrence).
fn unique(panels: &[Panel]) -> impl Iterator<Item = &Panel> {
    let mut seen = HashSet::new();
    panels.iter().filter(move |p| seen.insert(p.id.as_str()))
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

/// The change entries from `old` to `new`.
pub fn changes(old: &DashboardState, new: &DashboardState) -> Vec<ChangeEntry> {
    let mut out = Vec::new();

    if old.title != new.title {
        out.push(ChangeEntry::new(
            ChangeKind::TitleChanged,
            format!("{:?} → {:?}", old.title, new.title),
        ));
    }

    let mut layout = Vec::new();
    if old.layout.columns != new.layout.columns {
        layout.push(format!("columns {} → {}", old.layout.columns, new.layout.columns));
    }
    if old.layout.gap != new.layout.gap {
        layout.push(format!("gap {} → {}", opt(old.layout.gap), opt(new.layout.gap)));
    }
    if !layout.is_empty() {
        out.push(ChangeEntry::new(ChangeKind::LayoutChanged, layout.join(", ")));
    }

    if old.refresh != new.refresh {
        out.push(ChangeEntry::new(
            ChangeKind::RefreshChanged,
            format!("refresh {} → {}", opt(old.refresh.as_ref()), opt(new.refresh.as_ref())),
        ));
    }

    if old.variables != new.variables {
        out.push(ChangeEntry::new(
            ChangeKind::VariablesChanged,
            variables_detail(&old.variables, &new.variables),
        ));
    }

    if old.alerts != new.alerts {
        out.push(ChangeEntry::new(
            ChangeKind::AlertsChanged,
            alerts_detail(&old.alerts, &new.alerts),
        ));
    }

    let olds = by_id(&old.panels);
    let news = by_id(&new.panels);
    for p in unique(&old.panels).filter(|p| !news.contains_key(p.id.as_str())) {
        out.push(ChangeEntry::panel(ChangeKind::RemovedPanel, &p.id, describe(p)));
    }
    for p in unique(&new.panels).filter(|p| !olds.contains_key(p.id.as_str())) {
        out.push(ChangeEntry::panel(ChangeKind::AddedPanel, &p.id, describe(p)));
    }
    for p in unique(&new.panels) {
        if let Some(o) = olds.get(p.id.as_str())
            && *o != p
        {
            out.push(ChangeEntry::panel(ChangeKind::ModifiedPanel, &p.id, panel_detail(o, p)));
        }
    }

    let kept_old: Vec<&str> =
        unique(&old.panels).map(|p| p.id.as_str()).filter(|id| news.contains_key(id)).collect();
    let kept_new: Vec<&str> =
        unique(&new.panels).map(|p| p.id.as_str()).filter(|id| olds.contains_key(id)).collect();
    if kept_old != kept_new {
        out.push(ChangeEntry::new(
            ChangeKind::Reordered,
            format!("panel order: {} (was: {})", kept_new.join(", "), kept_old.join(", ")),
        ));
    }
    out
}

fn describe(p: &Panel) -> String {
    format!("{:?} ({})", p.title, type_name(p.kind))
}

fn panel_detail(o: &Panel, n: &Panel) -> String {
    let mut fields = Vec::new();
    let mut note = |changed: bool, name: &'static str| {
        if changed {
            fields.push(name);
        }
    };
    note(o.title != n.title, "title");
    note(o.kind != n.kind, "type");
    note(o.renderer != n.renderer, "renderer");
    note(o.code != n.code, "code");
    note(o.indicators != n.indicators, "indicators");
    note(o.config != n.config, "config");
    note(o.data_source != n.data_source, "dataSource");
    note(o.layout != n.layout, "layout");
    note(o.refresh != n.refresh, "refresh");
    let mut detail = fields.join(", ");
    if o.code != n.code {
        detail.push('\n');
        detail.push_str(&code_diff(&o.code, &n.code));
    }
    detail
}

/// A unified diff of panel code with `context` lines around each change, whole.
pub fn unified_code_diff(old: &str, new: &str, context: usize) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut unified = diff.unified_diff();
    unified.context_radius(context).missing_newline_hint(false);
    unified.to_string()
}

/// A compact unified diff of panel code, at most [`MAX_CODE_DIFF_LINES`] lines.
pub fn code_diff(old: &str, new: &str) -> String {
    let text = unified_code_diff(old, new, 1);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines.iter().take(MAX_CODE_DIFF_LINES).copied().collect::<Vec<_>>().join("\n");
    if lines.len() > MAX_CODE_DIFF_LINES {
        let _ = write!(out, "\n… ({} more diff lines)", lines.len() - MAX_CODE_DIFF_LINES);
    }
    out
}

fn variables_detail(old: &[Variable], new: &[Variable]) -> String {
    let find = |vs: &[Variable], name: &str| vs.iter().position(|v| v.name == name);
    let mut parts = Vec::new();
    for v in new.iter().filter(|v| find(old, &v.name).is_none()) {
        parts.push(format!("added {} (default {})", v.name, v.default));
    }
    for v in old.iter().filter(|v| find(new, &v.name).is_none()) {
        parts.push(format!("removed {}", v.name));
    }
    for v in new {
        let Some(o) = find(old, &v.name).map(|i| &old[i]) else { continue };
        let mut fields = Vec::new();
        if o.label != v.label {
            fields.push("label".to_owned());
        }
        if o.kind != v.kind {
            fields.push("type".to_owned());
        }
        if o.options != v.options {
            fields.push("options".to_owned());
        }
        if o.default != v.default {
            fields.push(format!("default {} → {}", o.default, v.default));
        }
        if !fields.is_empty() {
            parts.push(format!("changed {} ({})", v.name, fields.join(", ")));
        }
    }
    if parts.is_empty() {
        let names = |vs: &[Variable]| vs.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
        parts.push(format!("order: {} (was: {})", names(new).join(", "), names(old).join(", ")));
    }
    parts.join("; ")
}

fn alerts_detail(old: &[AlertRule], new: &[AlertRule]) -> String {
    let find = |rs: &[AlertRule], id: &str| rs.iter().position(|r| r.id == id);
    let mut parts = Vec::new();
    for r in new.iter().filter(|r| find(old, &r.id).is_none()) {
        parts.push(format!("added {} ({:?} on panel {})", r.id, r.name, r.panel_id));
    }
    for r in old.iter().filter(|r| find(new, &r.id).is_none()) {
        parts.push(format!("removed {}", r.id));
    }
    for r in new {
        let Some(o) = find(old, &r.id).map(|i| &old[i]) else { continue };
        if o != r {
            // Which wire fields differ, by comparing the serialized rules.
            let (a, b) = (
                serde_json::to_value(o).unwrap_or_default(),
                serde_json::to_value(r).unwrap_or_default(),
            );
            let keys: std::collections::BTreeSet<&String> =
                a.as_object().into_iter().chain(b.as_object()).flat_map(|m| m.keys()).collect();
            let fields: Vec<&str> = keys
                .into_iter()
                .filter(|k| a.get(k.as_str()) != b.get(k.as_str()))
                .map(String::as_str)
                .collect();
            parts.push(format!("changed {} ({})", r.id, fields.join(", ")));
        }
    }
    if parts.is_empty() {
        parts.push("order".to_owned());
    }
    parts.join("; ")
}

/// Each panel whose code differs from `old` to `new` (it is in both): a unified line diff of
/// its whole code, three lines of context, by panel id.
pub fn code_diffs(
    old: &DashboardState,
    new: &DashboardState,
) -> std::collections::BTreeMap<String, String> {
    let olds = by_id(&old.panels);
    new.panels
        .iter()
        .filter_map(|p| {
            let before = olds.get(p.id.as_str())?;
            (before.code != p.code)
                .then(|| (p.id.clone(), unified_code_diff(&before.code, &p.code, 3)))
        })
        .collect()
}

/// Everything a write needs to know about one edit, computed once: the change entries (with
/// code diffs, for the agent), the RFC 6902 patch (for subscribers) and the panels to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// [`changes`] from old to new.
    pub changes: Vec<ChangeEntry>,
    /// [`patch`] from old to new.
    pub patch: json_patch::Patch,
    /// [`changed_panels`]: added or modified, in new order.
    pub changed: Vec<String>,
}

impl Diff {
    /// The difference from `old` to `new`.
    pub fn between(old: &DashboardState, new: &DashboardState) -> Self {
        Self {
            changes: changes(old, new),
            patch: patch(old, new),
            changed: changed_panels(old, new),
        }
    }

    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// RFC 6902 patch turning `old` into `new`.
pub fn patch(old: &DashboardState, new: &DashboardState) -> json_patch::Patch {
    let a = serde_json::to_value(old).unwrap_or(Value::Null);
    let b = serde_json::to_value(new).unwrap_or(Value::Null);
    json_patch::diff(&a, &b)
}

/// Ids of panels added or modified from `old` to `new` (the ones to test-run), in new order.
pub fn changed_panels(old: &DashboardState, new: &DashboardState) -> Vec<String> {
    let olds = by_id(&old.panels);
    unique(&new.panels)
        .filter(|p| olds.get(p.id.as_str()).is_none_or(|o| *o != *p))
        .map(|p| p.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layout, PanelLayout, PanelType, Renderer, VariableType};
    use proptest::prelude::*;
    use serde_json::json;

    fn panel(id: &str, kind: PanelType) -> Panel {
        Panel {
            id: id.into(),
            title: format!("Panel {id}"),
            kind,
            renderer: kind.renderer(),
            code: format!("const rows = await sdk.market.getKline({{}});\nreturn rows; // {id}\n"),
            indicators: None,
            config: None,
            data_source: None,
            layout: None,
            refresh: None,
        }
    }

    fn state(ids: &[&str]) -> DashboardState {
        DashboardState {
            title: "Gold".into(),
            layout: Layout { columns: 2, gap: None },
            panels: ids.iter().map(|id| panel(id, PanelType::Line)).collect(),
            variables: vec![],
            refresh: None,
            alerts: vec![],
        }
    }

    #[test]
    fn alert_rules_added_removed_and_changed_are_one_entry() {
        let rule = |id: &str, value: f64| {
            serde_json::from_value::<AlertRule>(json!({"id": id, "name": id, "panelId": "a",
                "when": {"op": ">", "value": value}}))
            .unwrap()
        };
        let old = DashboardState { alerts: vec![rule("x", 1.0), rule("y", 1.0)], ..state(&["a"]) };
        let new = DashboardState { alerts: vec![rule("x", 2.0), rule("z", 1.0)], ..state(&["a"]) };
        let c = changes(&old, &new);
        assert_eq!(kinds(&c), [(ChangeKind::AlertsChanged, None)]);
        assert_eq!(c[0].detail, "added z (\"z\" on panel a); removed y; changed x (when)");
        assert!(changes(&old, &old).is_empty());
    }

    fn kinds(c: &[ChangeEntry]) -> Vec<(ChangeKind, Option<&str>)> {
        c.iter().map(|e| (e.kind, e.panel_id.as_deref())).collect()
    }

    #[test]
    fn identical_states_have_no_changes() {
        let a = state(&["a", "b"]);
        assert!(changes(&a, &a).is_empty());
        assert!(changed_panels(&a, &a).is_empty());
        assert!(patch(&a, &a).0.is_empty());
    }

    #[test]
    fn removal_does_not_shift_others() {
        let a = state(&["a", "b", "c"]);
        let b = state(&["a", "c"]);
        let c = changes(&a, &b);
        assert_eq!(kinds(&c), vec![(ChangeKind::RemovedPanel, Some("b"))]);
        assert_eq!(c[0].detail, "\"Panel b\" (line)");
        assert!(changed_panels(&a, &b).is_empty());
    }

    #[test]
    fn order_of_entries_and_details() {
        let mut a = state(&["a", "b", "c"]);
        a.variables = vec![Variable {
            name: "symbol".into(),
            label: "Symbol".into(),
            kind: VariableType::Select,
            options: Some(vec![json!("XAUUSD"), json!("XAGUSD")]),
            default: json!("XAUUSD"),
        }];
        let mut b = a.clone();
        b.title = "Gold 2".into();
        b.layout = Layout { columns: 3, gap: Some(8) };
        b.refresh = Some("1m".into());
        b.variables[0].default = json!("XAGUSD");
        b.variables.push(Variable {
            name: "limit".into(),
            label: "Bars".into(),
            kind: VariableType::Range,
            options: Some(vec![json!(10), json!(500)]),
            default: json!(120),
        });
        b.panels.retain(|p| p.id != "a");
        b.panels.reverse(); // c, b
        b.panels.push(panel("d", PanelType::Pie));
        b.panels[1].title = "B!".into();
        b.panels[1].code = b.panels[1].code.replace("getKline({})", "getKline({limit: 50})");
        b.panels[1].layout = Some(PanelLayout { w: 2, h: 3 });
        let c = changes(&a, &b);
        assert_eq!(
            kinds(&c),
            vec![
                (ChangeKind::TitleChanged, None),
                (ChangeKind::LayoutChanged, None),
                (ChangeKind::RefreshChanged, None),
                (ChangeKind::VariablesChanged, None),
                (ChangeKind::RemovedPanel, Some("a")),
                (ChangeKind::AddedPanel, Some("d")),
                (ChangeKind::ModifiedPanel, Some("b")),
                (ChangeKind::Reordered, None),
            ]
        );
        assert_eq!(c[0].detail, "\"Gold\" → \"Gold 2\"");
        assert_eq!(c[1].detail, "columns 2 → 3, gap none → 8");
        assert_eq!(c[2].detail, "refresh none → 1m");
        assert_eq!(
            c[3].detail,
            "added limit (default 120); changed symbol (default \"XAUUSD\" → \"XAGUSD\")"
        );
        assert_eq!(c[5].detail, "\"Panel d\" (pie)");
        assert_eq!(
            c[6].detail,
            "title, code, layout\n@@ -1,2 +1,2 @@\n-const rows = await sdk.market.getKline({});\n+const rows = await sdk.market.getKline({limit: 50});\n return rows; // b"
        );
        assert_eq!(c[7].detail, "panel order: c, b (was: b, c)");
        assert_eq!(changed_panels(&a, &b), vec!["b", "d"]);
        // The wire form of an entry.
        assert_eq!(
            serde_json::to_value(&c[4]).unwrap(),
            json!({"type": "removed_panel", "panel_id": "a", "detail": "\"Panel a\" (line)"})
        );
    }

    #[test]
    fn long_code_diffs_are_capped() {
        let a = state(&["a"]);
        let mut b = a.clone();
        b.panels[0].code = (0..100).map(|i| format!("line {i}\n")).collect();
        let c = changes(&a, &b);
        let lines: Vec<&str> = c[0].detail.lines().collect();
        assert_eq!(lines[0], "code");
        assert_eq!(lines.len(), 1 + MAX_CODE_DIFF_LINES + 1);
        assert_eq!(*lines.last().unwrap(), "… (63 more diff lines)");
    }

    #[test]
    fn variable_reorder_only() {
        let v = |n: &str| Variable {
            name: n.into(),
            label: n.into(),
            kind: VariableType::Text,
            options: None,
            default: json!(""),
        };
        let mut a = state(&[]);
        a.variables = vec![v("x"), v("y")];
        let mut b = a.clone();
        b.variables.reverse();
        assert_eq!(changes(&a, &b)[0].detail, "order: y, x (was: x, y)");
    }

    #[test]
    fn duplicate_ids_do_not_panic() {
        let a = state(&["a", "a"]);
        let b = state(&["a"]);
        let _ = changes(&a, &b);
        let _ = changed_panels(&b, &a);
    }

    // ---- property tests ----

    const IDS: [&str; 8] = ["gold-kline", "btc", "news", "a", "b-2", "macro", "x1", "feed"];
    const TYPES: [PanelType; 5] = [
        PanelType::Candlestick,
        PanelType::Line,
        PanelType::Pie,
        PanelType::Table,
        PanelType::MetricCard,
    ];

    fn arb_panel(id: &'static str) -> impl Strategy<Value = Panel> {
        (
            prop::sample::select(vec!["Gold", "BTC", "新闻", "a/b~c"]),
            prop::sample::select(TYPES.to_vec()),
            prop::sample::select(vec!["return 1;", "return [];\n// x", "const a = 1;\nreturn a;"]),
            prop::option::of(prop::collection::vec(
                prop::sample::select(vec!["MA(20)", "RSI"]),
                0..3,
            )),
            prop::option::of(prop::collection::btree_map(
                prop::sample::select(vec!["color", "a/b", "~0", ""]),
                0..3u32,
                0..3,
            )),
            prop::option::of((1..4u32, 1..6u32)),
            prop::option::of(prop::sample::select(vec!["30s", "5m"])),
        )
            .prop_map(move |(title, kind, code, ind, cfg, layout, refresh)| Panel {
                id: id.into(),
                title: title.into(),
                kind,
                renderer: kind.renderer(),
                code: code.into(),
                indicators: ind.map(|v| v.into_iter().map(Value::from).collect()),
                config: cfg.map(|m| m.into_iter().map(|(k, v)| (k.to_owned(), json!(v))).collect()),
                data_source: None,
                layout: layout.map(|(w, h)| PanelLayout { w, h }),
                refresh: refresh.map(str::to_owned),
            })
    }

    fn arb_state() -> impl Strategy<Value = DashboardState> {
        let panels = prop::sample::subsequence(IDS.to_vec(), 0..=IDS.len())
            .prop_shuffle()
            .prop_flat_map(|ids| ids.into_iter().map(arb_panel).collect::<Vec<_>>());
        let variables = prop::collection::vec(
            (prop::sample::select(vec!["symbol", "limit", "q"]), 0..3i32),
            0..3,
        )
        .prop_map(|vs| {
            let mut seen = HashSet::new();
            vs.into_iter()
                .filter(|(n, _)| seen.insert(*n))
                .map(|(n, d)| Variable {
                    name: n.into(),
                    label: n.to_uppercase(),
                    kind: VariableType::Range,
                    options: Some(vec![json!(0), json!(5)]),
                    default: json!(d),
                })
                .collect()
        });
        (
            prop::sample::select(vec!["Gold", "Crypto", "宏观"]),
            1..4u32,
            prop::option::of(0..3u32),
            panels,
            variables,
            prop::option::of(prop::sample::select(vec!["1m", "1h"])),
        )
            .prop_map(|(title, columns, gap, panels, variables, refresh)| DashboardState {
                title: title.into(),
                layout: Layout { columns, gap },
                panels,
                variables,
                refresh: refresh.map(str::to_owned),
                alerts: Vec::new(),
            })
    }

    /// A state and an edit of it: panels removed, added, modified and moved.
    fn arb_edit() -> impl Strategy<Value = (DashboardState, DashboardState)> {
        (arb_state(), arb_state(), any::<u64>()).prop_map(|(a, other, seed)| {
            let mut b = a.clone();
            let mut s = seed;
            let mut next = |n: usize| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if n == 0 { 0 } else { (s >> 33) as usize % n }
            };
            // Remove some.
            b.panels.retain(|_| next(4) != 0);
            // Modify some, from the other state's panel with the same id when there is one.
            for p in &mut b.panels {
                match next(5) {
                    0 => p.title.push('!'),
                    1 => p.code.push_str("\nreturn 2;"),
                    2 => {
                        if let Some(o) = other.panels.iter().find(|o| o.id == p.id) {
                            *p = o.clone();
                        }
                    }
                    _ => {}
                }
            }
            // Add the other state's panels that are new here.
            for o in &other.panels {
                if !b.panels.iter().any(|p| p.id == o.id) && next(2) == 0 {
                    let at = next(b.panels.len() + 1);
                    b.panels.insert(at, o.clone());
                }
            }
            // Move one.
            if b.panels.len() > 1 && next(2) == 0 {
                let (i, j) = (next(b.panels.len()), next(b.panels.len()));
                b.panels.swap(i, j);
            }
            if next(3) == 0 {
                b.title = other.title.clone();
            }
            if next(3) == 0 {
                b.layout = other.layout.clone();
            }
            if next(3) == 0 {
                b.variables = other.variables.clone();
            }
            if next(3) == 0 {
                b.refresh = other.refresh.clone();
            }
            (a, b)
        })
    }

    fn ids(s: &DashboardState) -> HashSet<String> {
        s.panels.iter().map(|p| p.id.clone()).collect()
    }

    fn check_pair(a: &DashboardState, b: &DashboardState) -> Result<(), TestCaseError> {
        let mut doc = serde_json::to_value(a).unwrap();
        json_patch::patch(&mut doc, &patch(a, b)).unwrap();
        prop_assert_eq!(&doc, &serde_json::to_value(b).unwrap());
        // And the patched document parses back to `b`.
        prop_assert_eq!(&serde_json::from_value::<DashboardState>(doc).unwrap(), b);

        prop_assert!(changes(a, a).is_empty());
        let c = changes(a, b);
        prop_assert_eq!(c.is_empty(), a == b, "{:?}", c);

        let of = |k: ChangeKind| -> HashSet<String> {
            c.iter().filter(|e| e.kind == k).filter_map(|e| e.panel_id.clone()).collect()
        };
        let (ia, ib) = (ids(a), ids(b));
        prop_assert_eq!(of(ChangeKind::AddedPanel), &ib - &ia);
        prop_assert_eq!(of(ChangeKind::RemovedPanel), &ia - &ib);

        // changed_panels = added + modified, in new order.
        let expected: Vec<String> = b
            .panels
            .iter()
            .filter(|p| {
                c.iter().any(|e| {
                    matches!(e.kind, ChangeKind::AddedPanel | ChangeKind::ModifiedPanel)
                        && e.panel_id.as_deref() == Some(p.id.as_str())
                })
            })
            .map(|p| p.id.clone())
            .collect();
        prop_assert_eq!(changed_panels(a, b), expected);

        // Reordered iff the surviving ids' relative order differs.
        let kept = |s: &DashboardState, other: &HashSet<String>| -> Vec<String> {
            s.panels.iter().map(|p| p.id.clone()).filter(|id| other.contains(id)).collect()
        };
        prop_assert_eq!(
            c.iter().any(|e| e.kind == ChangeKind::Reordered),
            kept(a, &ib) != kept(b, &ia)
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn edits_roundtrip((a, b) in arb_edit()) {
            check_pair(&a, &b)?;
            check_pair(&b, &a)?;
        }

        #[test]
        fn unrelated_states_roundtrip(a in arb_state(), b in arb_state()) {
            check_pair(&a, &b)?;
        }
    }

    #[test]
    fn renderer_is_part_of_the_panel() {
        let a = state(&["a"]);
        let mut b = a.clone();
        b.panels[0].renderer = Renderer::Echarts;
        assert_eq!(changes(&a, &b)[0].detail, "renderer");
    }
}
