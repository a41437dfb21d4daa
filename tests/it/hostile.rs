//! Runs `sandbox/hostile/*.js` through the real pool: each program ends with its expected
//! outcome within deadline + 250 ms, a canary keeps succeeding meanwhile, and no execution
//! observes another's tampering.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use boardsmith::sandbox::{ErrorKind, ExecError, Limits, Outcome, PanelContext};
use futures::StreamExt;
use serde_json::Value;

use crate::support;

const DEADLINE: Duration = Duration::from_secs(2);
/// The pool kills a worker 250 ms past its deadline (its own watchdog stops JS code at the
/// deadline; natives such as a catastrophic regex are killed), plus 250 ms to reap and report.
const SLACK: Duration = Duration::from_millis(500);

struct Case {
    name: String,
    code: String,
    expect: Vec<String>,
    matches: Option<String>,
    result: Option<Value>,
    /// The line the error must name (`// line: N`): limits stop the code where it runs.
    line: Option<u32>,
}

fn corpus() -> Vec<Case> {
    support::js_files("sandbox/hostile")
        .into_iter()
        .map(|p| {
            let code = std::fs::read_to_string(&p).unwrap();
            let header = |key: &str| {
                code.lines()
                    .filter_map(|l| l.strip_prefix("// "))
                    .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
            };
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let expect = header("expect:").unwrap_or_else(|| panic!("{name}: no expect header"));
            Case {
                // `limit:a|b` is shorthand for `limit:a|limit:b`.
                expect: expect
                    .split('|')
                    .map(|o| match o {
                        "ok" | "runtime" | "syntax" | "sdk" | "result" => o.to_owned(),
                        o if o.starts_with("limit:") => o.to_owned(),
                        o => format!("limit:{o}"),
                    })
                    .collect(),
                matches: header("match:"),
                result: header("result:").map(|r| serde_json::from_str(&r).unwrap()),
                line: header("line:").map(|l| l.parse().unwrap()),
                name,
                code,
            }
        })
        .collect()
}

fn outcome_name(r: &Result<Outcome, ExecError>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) if e.kind == ErrorKind::Limit => {
            format!("limit:{}", e.limit.map_or("?", |l| l.as_str()))
        }
        Err(e) => serde_json::to_value(e.kind).unwrap().as_str().unwrap().to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_programs_end_with_their_expected_error_and_do_not_disturb_others() {
    let cases = corpus();
    assert!(cases.len() >= 30, "corpus has {} programs", cases.len());
    let limits = Limits { panel_deadline: DEADLINE, ..Limits::default() };
    let sb = Arc::new(support::sandbox_with(4, limits).await);

    // Canary: ordinary panels keep succeeding while hostile code runs on the other workers.
    let stop = Arc::new(AtomicBool::new(false));
    let canary_ok = Arc::new(AtomicU32::new(0));
    let canary = {
        let (sb, stop, ok) = (sb.clone(), stop.clone(), canary_ok.clone());
        tokio::spawn(async move {
            let code = "const r = await sdk.test.echo({v: [1, 2, 3, 4]}); return utils ? r.v.map(x => x * 2) : null;";
            while !stop.load(Ordering::SeqCst) {
                let out = sb.run_panel(code, &PanelContext::default()).await;
                assert_eq!(out.expect("canary run").value, serde_json::json!([2, 4, 6, 8]));
                ok.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    let results: Vec<(Case, Result<Outcome, ExecError>, Duration)> = futures::stream::iter(cases)
        .map(|case| {
            let sb = sb.clone();
            async move {
                let started = Instant::now();
                let r = sb.run_panel(&case.code, &PanelContext::default()).await;
                (case, r, started.elapsed())
            }
        })
        .buffer_unordered(3)
        .collect()
        .await;

    let mut failures = Vec::new();
    let mut tally = std::collections::BTreeMap::<String, u32>::new();
    for (case, r, elapsed) in &results {
        let got = outcome_name(r);
        *tally.entry(got.clone()).or_default() += 1;
        let mut problems = Vec::new();
        if !case.expect.contains(&got) {
            problems.push(format!("expected {:?}, got {got}: {r:?}", case.expect));
        }
        if let (Some(m), Err(e)) = (&case.matches, r)
            && !e.message.contains(m.as_str())
        {
            problems.push(format!("message {:?} lacks {m:?}", e.message));
        }
        if let (Some(want), Err(e)) = (case.line, r)
            && e.line != Some(want)
        {
            problems.push(format!("error names line {:?}, not {want}", e.line));
        }
        if let (Some(want), Ok(o)) = (&case.result, r)
            && &o.value != want
        {
            problems.push(format!("result {} != {want}", o.value));
        }
        if *elapsed > DEADLINE + SLACK {
            problems.push(format!("took {elapsed:?}"));
        }
        println!("{:<40} {got:<22} {:>6} ms", case.name, elapsed.as_millis());
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    println!("tally: {tally:?}");

    stop.store(true, Ordering::SeqCst);
    canary.await.unwrap();
    assert!(
        canary_ok.load(Ordering::SeqCst) >= 10,
        "canary ran {} times",
        canary_ok.load(Ordering::SeqCst)
    );

    // No execution observes another's tampering: check on every worker, several times over.
    let check = "return [({}).polluted, [1].map(x => x + 1)[0], Math.max(1, 2), typeof leak,
                         await Promise.resolve(7).then(x => x * 2)];";
    for _ in 0..12 {
        let out = sb.run_panel(check, &PanelContext::default()).await.unwrap();
        assert_eq!(out.value, serde_json::json!([null, 2, 2, "undefined", 14]));
    }
    let stats = sb.stats();
    println!("pool: {stats:?}");
    assert!(stats.killed >= 1 && stats.spawned > 4 && stats.retired >= 1, "{stats:?}");
    assert!(
        failures.is_empty(),
        "{} hostile cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
