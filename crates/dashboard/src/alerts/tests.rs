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

/// Steps `s` with `firing` at `now` and asks what to tell.
fn tell(s: &mut RuleState, firing: bool, noise: Noise, now: i64) -> Option<Told> {
    let (mut next, t) = s.step(judged(firing), Duration::ZERO, now);
    let told = next.tell(t, noise, now);
    *s = next;
    told
}

#[test]
fn a_flapping_rule_says_so_once_then_waits_until_it_settles() {
    let noise = Noise {
        flap_limit: 3,
        flap_window: Duration::from_secs(600),
        settle: Duration::from_secs(300),
        ..Noise::default()
    };
    let mut s = RuleState::new(0);
    assert_eq!(tell(&mut s, false, noise, 1_000), None, "ok is no news");
    let sent = |t: Transition, r: Reason| Some(Told { status: t, reason: r, send: true });
    assert_eq!(tell(&mut s, true, noise, 60_000), sent(Transition::Firing, Reason::Change));
    assert_eq!(tell(&mut s, false, noise, 120_000), sent(Transition::Resolved, Reason::Change));
    assert_eq!(tell(&mut s, true, noise, 180_000), sent(Transition::Firing, Reason::Change));
    // The fourth change within ten minutes: flapping, said once.
    assert_eq!(tell(&mut s, false, noise, 240_000), sent(Transition::Resolved, Reason::Flapping));
    let muted = tell(&mut s, true, noise, 300_000).unwrap();
    assert_eq!((muted.reason, muted.send), (Reason::Change, false), "recorded, not sent");
    assert_eq!(s.transitions, 5, "every transition has its id");
    assert_eq!(tell(&mut s, true, noise, 400_000), None, "not settled yet");
    // Held firing for five minutes: channels hear it.
    assert_eq!(tell(&mut s, true, noise, 600_000), sent(Transition::Firing, Reason::Settled));
    assert_eq!(s.transitions, 6);
    assert_eq!(s.flapping_since, None);
    assert_eq!(tell(&mut s, true, noise, 660_000), None);
    assert_eq!(tell(&mut s, false, noise, 720_000), sent(Transition::Resolved, Reason::Change));
}

#[test]
fn a_flap_limit_of_zero_never_flaps() {
    let noise = Noise { flap_limit: 0, ..Noise::default() };
    let mut s = RuleState::new(0);
    for i in 1..40 {
        let t = tell(&mut s, i % 2 == 1, noise, i * 1_000).unwrap();
        assert_eq!((t.reason, t.send), (Reason::Change, true), "change {i}");
    }
}

#[test]
fn silences_record_and_channels_hear_the_state_when_they_end() {
    let quiet = Noise { silenced: true, ..Noise::default() };
    let mut s = RuleState::new(0);
    tell(&mut s, false, Noise::default(), 1_000);
    let t = tell(&mut s, true, quiet, 2_000).unwrap();
    assert_eq!((t.status, t.send), (Transition::Firing, false));
    assert_eq!(tell(&mut s, true, quiet, 3_000), None);
    let after = Noise { repeat: Some(Duration::from_secs(60)), ..Noise::default() };
    let t = tell(&mut s, true, after, 4_000).unwrap();
    assert_eq!((t.status, t.reason, t.send), (Transition::Firing, Reason::Settled, true));
    // Reminders every minute while it fires.
    assert_eq!(tell(&mut s, true, after, 30_000), None);
    let r = tell(&mut s, true, after, 64_000).unwrap();
    assert_eq!((r.reason, r.send), (Reason::Reminder, true));
    assert_eq!(tell(&mut s, true, after, 100_000), None);
    // Silenced, it resolves and fires again: channels, who heard firing, hear nothing new.
    tell(&mut s, false, quiet, 110_000);
    tell(&mut s, true, quiet, 120_000);
    assert_eq!(tell(&mut s, true, Noise::default(), 130_000), None);
}

proptest! {
    /// Whatever the judgements, silences and clock: what channels are sent alternates firing
    /// and resolved (reminders aside, which only repeat firing), starting with firing; no
    /// window of `flap_window` holds more than `flap_limit + 2` changes; ids never repeat; and
    /// once the rule holds a state for `settle` without a silence, channels know it.
    #[test]
    fn channels_hear_alternating_news_and_never_a_flood(
        steps in prop::collection::vec((any::<bool>(), any::<bool>(), 1i64..400_000), 1..80),
        repeat in prop::option::of(60u64..3_600),
    ) {
        let noise = Noise {
            repeat: repeat.map(Duration::from_secs),
            flap_limit: 4,
            flap_window: Duration::from_secs(1_800),
            settle: Duration::from_secs(600),
            ..Noise::default()
        };
        let mut s = RuleState::new(0);
        let mut now = 0;
        let mut heard: Vec<(i64, Transition)> = Vec::new();
        let mut ids = std::collections::BTreeSet::new();
        for (firing, silenced, dt) in steps {
            now += dt;
            let before = s.transitions;
            let told = tell(&mut s, firing, Noise { silenced, ..noise }, now);
            prop_assert_eq!(s.transitions - before, u64::from(told.is_some()));
            if told.is_some() {
                prop_assert!(ids.insert(s.transitions), "an id was used twice");
            }
            if let Some(t) = told.filter(|t| t.send) {
                prop_assert!(!silenced);
                if t.reason == Reason::Reminder {
                    prop_assert_eq!(heard.last().map(|h| h.1), Some(Transition::Firing));
                } else {
                    let want = match heard.last() {
                        None | Some((_, Transition::Resolved)) => Transition::Firing,
                        Some((_, Transition::Firing)) => Transition::Resolved,
                    };
                    prop_assert_eq!(t.status, want);
                }
                heard.push((now, t.status));
            }
        }
        let window = 1_800_000;
        let changes: Vec<i64> = heard.windows(2).filter(|w| w[0].1 != w[1].1).map(|w| w[1].0).collect();
        for (i, at) in changes.iter().enumerate() {
            let within = changes[i..].iter().take_while(|t| **t - at <= window).count();
            prop_assert!(within <= noise.flap_limit + 2, "{} changes in a window", within);
        }
        // Held well past `settle`, unsilenced: channels know the state.
        let last = s.status == Status::Firing;
        tell(&mut s, last, noise, now + 700_000);
        tell(&mut s, last, noise, now + 1_400_000);
        let told = s.told.unwrap_or(Transition::Resolved);
        prop_assert_eq!(told == Transition::Firing, last);
    }

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
            id: "r".into(), name: "R".into(), panel_id: "p".into(), when, hold: None, repeat: Some("4h".into()),
            severity: Some(Severity::Critical), notify: vec!["desk".into()], vars: None,
            for_each: None,
        };
        let back: AlertRule = serde_json::from_value(serde_json::to_value(&rule).unwrap()).unwrap();
        prop_assert_eq!(back, rule);
    }
}
