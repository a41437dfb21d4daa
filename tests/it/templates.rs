//! The example dashboards in `dashboards/`: each parses, and every panel's code, run in the real
//! sandbox over the real SDK, returns data that meets its type's contract, with at least one row.
//! Panels that read a `select` variable are also run with each of its options.

use std::path::PathBuf;

use boardsmith::dashboard::data::check_data;
use boardsmith::dashboard::validate::parse_state;
use boardsmith::dashboard::{DashboardState, VariableType, diff, summary};
use boardsmith::sandbox::PanelContext;
use futures::future::join_all;
use serde_json::{Map, Value};

use crate::support;

fn dashboards() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("dashboards");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn defaults(state: &DashboardState) -> Map<String, Value> {
    state.variables.iter().map(|v| (v.name.clone(), v.default.clone())).collect()
}

/// The variable sets to try: the defaults, then each option of each select variable.
fn variants(state: &DashboardState) -> Vec<(String, Map<String, Value>)> {
    let mut out = vec![("defaults".to_owned(), defaults(state))];
    for v in state.variables.iter().filter(|v| v.kind == VariableType::Select) {
        for opt in v.options.iter().flatten().filter(|o| **o != v.default) {
            let mut vars = defaults(state);
            vars.insert(v.name.clone(), opt.clone());
            out.push((format!("{}={opt}", v.name), vars));
        }
    }
    out
}

#[test]
fn templates_parse_and_are_canonical() {
    let all = dashboards();
    assert!(all.len() >= 5, "expected at least 5 dashboards, found {}", all.len());
    for (name, v) in &all {
        let state = parse_state(v).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!((4..=8).contains(&state.panels.len()), "{name}: {} panels", state.panels.len());
        // The file is exactly the serialized state (no defaults hidden, nothing dropped).
        assert_eq!(&serde_json::to_value(&state).unwrap(), v, "{name}");
        assert!(diff::changes(&state, &state).is_empty());
        let s = summary::summary(&state);
        assert_eq!(s["panels"].as_array().unwrap().len(), state.panels.len());
        assert!(summary::context_line("db_test", &state).contains(&state.panels[0].id));
        for p in &state.panels {
            assert!(p.layout.is_some(), "{name}: {} has no layout hint", p.id);
        }
    }
}

#[tokio::test]
async fn every_template_panel_returns_contract_data() {
    let sb = support::sandbox().await;
    let all = dashboards();
    assert!(all.len() >= 5);
    let mut jobs = Vec::new();
    for (name, v) in &all {
        let state = parse_state(v).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (label, vars) in variants(&state) {
            for p in &state.panels {
                // Non-default variants only matter for panels that read the changed variable.
                if label != "defaults" {
                    let var = label.split('=').next().unwrap();
                    if !p.code.contains(&format!("vars.{var}")) {
                        continue;
                    }
                }
                jobs.push((
                    name.clone(),
                    label.clone(),
                    p.id.clone(),
                    p.kind,
                    p.code.clone(),
                    vars.clone(),
                ));
            }
        }
    }
    let runs = jobs.iter().map(|(_, _, _, _, code, vars)| {
        let sb = &sb;
        async move { sb.run_panel(code, &PanelContext { vars: vars.clone() }).await }
    });
    let results = join_all(runs).await;
    let mut failures = Vec::new();
    let mut ok = 0;
    for ((name, label, id, kind, _, _), result) in jobs.iter().zip(results) {
        match result {
            Err(e) => failures.push(format!("{name} {id} [{label}]: run failed: {e}")),
            Ok(out) => match check_data(*kind, &out.value) {
                Ok(0) => failures.push(format!("{name} {id} [{label}]: no rows")),
                Ok(_) => ok += 1,
                Err(e) => failures.push(format!("{name} {id} [{label}]: {e}")),
            },
        }
    }
    sb.shutdown().await;
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    assert!(ok >= 30, "only {ok} panel runs");
}
