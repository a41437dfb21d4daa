use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::validate::parse_state;

fn cond(op: Op, value: f64, field: Option<&str>) -> Condition {
    Condition { op, value, field: field.map(str::to_owned), window: None }
}

fn line(values: &[f64]) -> Value {
    Value::Array(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"time": 1_700_000_000 + i as i64 * 3600, "value": v}))
            .collect(),
    )
}

#[test]
fn thresholds_read_the_last_point() {
    let r =
        judge(&cond(Op::Above, 0.05, None), PanelType::Line, &line(&[0.01, 0.06]), None).unwrap();
    assert!(r.firing);
    assert_eq!(r.value, Some(0.06));
    assert!(r.message.contains("value is 0.06"), "{}", r.message);
    let r =
        judge(&cond(Op::Below, 0.05, None), PanelType::Line, &line(&[0.01, 0.06]), None).unwrap();
    assert!(!r.firing);
}

#[test]
fn crosses_use_the_previous_point_or_the_previous_reading() {
    let up = cond(Op::CrossesAbove, 10.0, None);
    assert!(judge(&up, PanelType::Line, &line(&[9.0, 11.0]), None).unwrap().firing);
    assert!(!judge(&up, PanelType::Line, &line(&[11.0, 12.0]), None).unwrap().firing);
    let card = json!({"value": 11, "label": "BTC"});
    assert!(judge(&up, PanelType::MetricCard, &card, Some(9.5)).unwrap().firing);
    let first = judge(&up, PanelType::MetricCard, &card, None).unwrap();
    assert!(!first.firing, "no earlier value: nothing crossed");
    let down = cond(Op::CrossesBelow, 10.0, None);
    assert!(judge(&down, PanelType::MetricCard, &json!({"value": 9}), Some(10.0)).unwrap().firing);
}

#[test]
fn change_pct_over_a_window_and_from_a_cards_own_change() {
    // Hourly points: 100 → 105 → 120; over 2h the change is +20%, from the previous point ~14%.
    let data = line(&[100.0, 105.0, 120.0]);
    let mut c = cond(Op::ChangePctOver, 15.0, None);
    let r = judge(&c, PanelType::Line, &data, None).unwrap();
    assert!(!r.firing, "{r:?}");
    c.window = Some("2h".into());
    let r = judge(&c, PanelType::Line, &data, None).unwrap();
    assert!(r.firing);
    assert_eq!(r.value, Some(20.0));
    let card = json!({"value": 110, "change": 10.0});
    let r = judge(&cond(Op::ChangePctOver, 5.0, None), PanelType::MetricCard, &card, None).unwrap();
    assert!(r.firing);
    assert!((r.value.unwrap() - 10.0).abs() < 1e-6, "{r:?}");
}

#[test]
fn fields_are_chosen_or_named_in_the_error() {
    let two = json!([{"time": 1, "gold": 1.0, "silver": 2.0}]);
    let e = judge(&cond(Op::Above, 1.0, None), PanelType::Line, &two, None).unwrap_err();
    assert!(e.contains("`gold`") && e.contains("`silver`"), "{e}");
    let r = judge(&cond(Op::Above, 1.5, Some("silver")), PanelType::Line, &two, None).unwrap();
    assert!(r.firing);
    let e = judge(&cond(Op::Above, 1.0, Some("copper")), PanelType::Line, &two, None).unwrap_err();
    assert!(e.contains("no numeric `copper`"), "{e}");
    let candles = json!([{"time": 1, "open": 1, "high": 3, "low": 1, "close": 2}]);
    assert_eq!(
        judge(&cond(Op::Above, 1.0, None), PanelType::Candlestick, &candles, None).unwrap().value,
        Some(2.0)
    );
    let table = json!({"columns": ["symbol", "price"], "rows": [["AAPL", 189.2], ["MSFT", 410.0]]});
    let r = judge(&cond(Op::Above, 400.0, None), PanelType::Table, &table, None).unwrap();
    assert_eq!(r.value, Some(410.0));
    let cards = json!([{"value": 1, "label": "BTC"}, {"value": 2, "label": "ETH"}]);
    let e = judge(&cond(Op::Above, 1.0, None), PanelType::MetricCard, &cards, None).unwrap_err();
    assert!(e.contains("`BTC`") && e.contains("`ETH`"), "{e}");
    let r = judge(&cond(Op::Above, 1.5, Some("ETH")), PanelType::MetricCard, &cards, None).unwrap();
    assert!(r.firing);
    let pie = json!([{"name": "Energy", "value": 30}]);
    assert!(
        judge(&cond(Op::Above, 20.0, Some("Energy")), PanelType::Pie, &pie, None).unwrap().firing
    );
    let e = judge(&cond(Op::Above, 1.0, None), PanelType::Feed, &json!([]), None).unwrap_err();
    assert!(e.contains("as code"), "{e}");
}

fn state_with(alerts: Value) -> Value {
    json!({
        "title": "Crypto",
        "layout": {"columns": 2},
        "panels": [{"id": "funding", "title": "Funding", "type": "line",
                    "renderer": "lightweight-charts", "code": "return []"},
                   {"id": "news", "title": "News", "type": "feed",
                    "renderer": "custom", "code": "return []"}],
        "variables": [{"name": "symbol", "label": "Symbol", "type": "select",
                       "options": ["BTC", "ETH"], "default": "BTC"},
                      {"name": "q", "label": "Q", "type": "text", "default": ""}],
        "alerts": alerts,
    })
}

#[test]
fn rules_parse_and_round_trip() {
    let doc = state_with(json!([
        {"id": "funding-high", "name": "Funding above 0.05%", "panelId": "funding",
         "when": {"op": ">", "value": 0.05}, "for": "5m", "severity": "critical",
         "notify": ["desk"], "forEach": "symbol"},
        {"id": "news-burst", "name": "Many headlines", "panelId": "news",
         "when": "return {firing: data.length > 20, value: data.length}"},
    ]));
    let state = parse_state(&doc).unwrap();
    assert_eq!(state.alerts.len(), 2);
    assert_eq!(state.alerts[0].hold(), Duration::from_secs(300));
    assert_eq!(state.alerts[1].severity(), Severity::Warning);
    assert!(matches!(state.alerts[1].when, When::Code(_)));
    assert_eq!(serde_json::to_value(&state).unwrap(), doc);
    assert_eq!(fan_out(&state.alerts[0], &state.variables), Some(vec![json!("BTC"), json!("ETH")]));
    assert_eq!(fan_out(&state.alerts[1], &state.variables), None);
}

#[test]
fn a_state_without_alerts_serializes_as_before() {
    let mut doc = state_with(json!([]));
    let state = parse_state(&doc).unwrap();
    doc.as_object_mut().unwrap().remove("alerts");
    assert_eq!(serde_json::to_value(&state).unwrap(), doc);
}

#[test]
fn every_bad_rule_is_named_by_its_path() {
    let doc = state_with(json!([
        {"id": "Bad Id", "name": "", "panelId": "nope", "when": {"op": ">", "value": 1},
         "for": "soon", "notify": ["a", "a"], "vars": {"zzz": 1}, "forEach": "q"},
        {"id": "x", "name": "x", "panelId": "news", "when": {"op": "<", "value": 1}},
        {"id": "y", "name": "y", "panelId": "funding",
         "when": {"op": "change_pct_over", "value": -1, "window": "often"}},
        {"id": "y", "name": "y", "panelId": "funding", "when": "  "},
    ]));
    let err = parse_state(&doc).unwrap_err();
    let paths: Vec<&str> = err.0.iter().map(|i| i.path.as_str()).collect();
    for want in [
        "alerts[0].id",
        "alerts[0].name",
        "alerts[0].panelId",
        "alerts[0].for",
        "alerts[0].notify[1]",
        "alerts[0].vars.zzz",
        "alerts[0].forEach",
        "alerts[1].when",
        "alerts[2].when.value",
        "alerts[2].when.window",
        "alerts[3].id",
        "alerts[3].when",
    ] {
        assert!(paths.contains(&want), "{want} missing from {err}");
    }
    assert!(err.to_string().contains("panels: funding, news"), "{err}");
}

#[test]
fn a_structurally_bad_rule_names_its_field() {
    let doc = state_with(json!([{"id": "a", "name": "a", "panelId": "funding",
                                  "when": {"op": "above", "value": 1}}]));
    let err = parse_state(&doc).unwrap_err();
    assert!(err.0.iter().any(|i| i.path.starts_with("alerts[0]")), "{err}");
    assert!(err.to_string().contains("crosses_above"), "names the ops: {err}");
}

fn judged(firing: bool) -> Observation {
    Observation::Judged(Reading { firing, value: Some(1.0), message: String::new() })
}

#[test]
fn the_state_machine_holds_for_then_fires_then_resolves() {
    let hold = Duration::from_secs(60);
    let s = RuleState::new(0);
    let (s, t) = s.step(judged(true), hold, 1_000);
    assert_eq!((s.status, t), (Status::Pending, None));
    let (s, t) = s.step(judged(true), hold, 30_000);
    assert_eq!((s.status, t), (Status::Pending, None));
    let (s, t) = s.step(Observation::Failed("Binance cannot be reached".into()), hold, 45_000);
    assert_eq!((s.status, t), (Status::Pending, None), "a failure changes nothing");
    assert_eq!(s.failing_since, Some(45_000));
    assert!(s.no_data(Duration::from_secs(10), 60_000));
    let (s, t) = s.step(judged(true), hold, 61_000);
    assert_eq!((s.status, t, s.transitions), (Status::Firing, Some(Transition::Firing), 1));
    assert_eq!(s.failing_since, None);
    let (s, t) = s.step(judged(true), hold, 90_000);
    assert_eq!((s.status, t), (Status::Firing, None));
    let (s, t) = s.step(judged(false), hold, 120_000);
    assert_eq!((s.status, t, s.transitions), (Status::Ok, Some(Transition::Resolved), 2));
    let (s, t) = s.step(judged(true), hold, 130_000);
    let (s, _) = s.step(judged(false), hold, 140_000);
    assert_eq!((s.status, t), (Status::Ok, None), "a pending rule that stops holding is ok");
}

proptest! {
    /// Notifications alternate firing, resolved, firing, ...; failures never notify nor move the
    /// state; the transition counter counts them; with no hold, the rule fires exactly when the
    /// last judgement fired.
    #[test]
    fn transitions_alternate_and_failures_change_nothing(
        steps in prop::collection::vec((0u8..3, 0i64..120_000), 1..60),
        hold_s in 0u64..90,
    ) {
        let hold = Duration::from_secs(hold_s);
        let mut s = RuleState::new(0);
        let mut now = 0;
        let mut sent = Vec::new();
        let mut last_firing = None;
        for (kind, dt) in steps {
            now += dt;
            let seen = match kind {
                0 => Observation::Failed("down".into()),
                k => judged(k == 1),
            };
            let before = s.clone();
            let (next, t) = s.step(seen.clone(), hold, now);
            if let Observation::Failed(_) = seen {
                prop_assert_eq!(t, None);
                prop_assert_eq!(next.status, before.status);
                prop_assert_eq!(next.transitions, before.transitions);
            } else {
                last_firing = Some(kind == 1);
            }
            if let Some(t) = t {
                sent.push(t);
            }
            prop_assert_eq!(next.transitions as usize, sent.len());
            if hold_s == 0 && let Some(f) = last_firing {
                prop_assert_eq!(next.status == Status::Firing, f);
            }
            s = next;
        }
        for (i, t) in sent.iter().enumerate() {
            let want = if i % 2 == 0 { Transition::Firing } else { Transition::Resolved };
            prop_assert_eq!(*t, want);
        }
        prop_assert_eq!(s.status == Status::Firing, sent.len() % 2 == 1);
    }

    /// A threshold fires exactly when the last number is beyond it, whatever came before.
    #[test]
    fn thresholds_agree_with_the_last_point(
        values in prop::collection::vec(-1e6f64..1e6, 1..40),
        t in -1e6f64..1e6,
    ) {
        let data = line(&values);
        let last = *values.last().unwrap();
        let above = judge(&cond(Op::Above, t, None), PanelType::Line, &data, None).unwrap();
        let below = judge(&cond(Op::Below, t, None), PanelType::Line, &data, None).unwrap();
        prop_assert_eq!(above.firing, last > t);
        prop_assert_eq!(below.firing, last < t);
        let up = judge(&cond(Op::CrossesAbove, t, None), PanelType::Line, &data, None).unwrap();
        let down = judge(&cond(Op::CrossesBelow, t, None), PanelType::Line, &data, None).unwrap();
        prop_assert!(!(up.firing && down.firing));
        if values.len() >= 2 {
            let prev = values[values.len() - 2];
            prop_assert_eq!(up.firing, prev <= t && last > t);
        }
    }

    /// Any rule survives a JSON round trip unchanged.
    #[test]
    fn rules_round_trip(
        op in prop::sample::select(vec![Op::Above, Op::Below, Op::CrossesAbove, Op::CrossesBelow, Op::ChangePctOver]),
        value in -1e9f64..1e9,
        field in prop::option::of("[a-z]{1,8}"),
        code in prop::option::of("[ -~]{1,40}"),
    ) {
        let when = match code {
            Some(c) => When::Code(c),
            None => When::Condition(Condition { op, value, field, window: None }),
        };
        let rule = AlertRule {
            id: "r".into(), name: "R".into(), panel_id: "p".into(), when, hold: None,
            severity: Some(Severity::Critical), notify: vec!["desk".into()], vars: None,
            for_each: None,
        };
        let back: AlertRule = serde_json::from_value(serde_json::to_value(&rule).unwrap()).unwrap();
        prop_assert_eq!(back, rule);
    }
}
