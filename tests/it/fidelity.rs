//! Differential fidelity: the same JavaScript runs in the sandbox (the real pool, a hardened
//! Boa realm) and in V8 (Node's `vm`, or the machine's Chromium for features Node 20 lacks),
//! and the outcomes must agree: the result as JSON (key order kept, numbers within 1e-9
//! relative) or the class of the error thrown.
//!
//! Two sources of programs: the corpus in `tests/fidelity/corpus/*.js` (the code models write
//! for panels and builders, one `// @case` per program) and property-based programs generated
//! here (expressions and destructuring patterns). Every divergence must be listed in
//! `tests/fidelity/known-differences.toml` with why; a listed case that now agrees fails too,
//! so the list stays true.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support;

/// Every corpus body is wrapped the same way for both engines, so the comparison covers what
/// the code returns or throws, not how each host reports it.
fn wrap(body: &str) -> String {
    format!(
        "const __stringify = JSON.stringify;
try {{
  const __v = await (async () => {{
{body}
  }})();
  const __t = __stringify(__v);
  return {{ ok: __t === undefined ? \"undefined\" : __t }};
}} catch (__e) {{
  return {{ err: (__e !== null && typeof __e === \"object\" && typeof __e.name === \"string\") ? __e.name : \"thrown \" + typeof __e, msg: String(__e && __e.message !== undefined ? __e.message : __e) }};
}}"
    )
}

fn fidelity_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity")
}

/// Which V8 runs a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Oracle {
    Node,
    Chromium,
}

#[derive(Debug, Clone)]
struct Case {
    id: String,
    body: String,
    oracle: Oracle,
}

/// Splits `tests/fidelity/corpus/<topic>.js` files at `// @case <name>` lines.
fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    for path in support::js_files("tests/fidelity/corpus") {
        let topic = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut current: Option<Case> = None;
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("// @case ") {
                cases.extend(current.take());
                current = Some(Case {
                    id: format!("{topic}/{}", name.trim()),
                    body: String::new(),
                    oracle: Oracle::Node,
                });
            } else if let Some(case) = &mut current {
                if line.trim() == "// @v8 chromium" && case.body.is_empty() {
                    case.oracle = Oracle::Chromium;
                } else {
                    case.body.push_str(line);
                    case.body.push('\n');
                }
            }
        }
        cases.extend(current);
    }
    let mut ids: Vec<_> = cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "duplicate case names in the corpus");
    cases
}

/// What one engine made of a program.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// The `JSON.stringify` text of the result (or `undefined`).
    Ok(String),
    /// The class (`name`) of the thrown error, or `limit:<name>` / `syntax` from the sandbox.
    Err(String, String),
    /// The harness could not run it (timeout, crash): never an agreement.
    Harness(String),
}

impl Outcome {
    fn from_wrapper(v: &Value) -> Self {
        if let Some(t) = v.get("ok").and_then(Value::as_str) {
            return Self::Ok(t.to_owned());
        }
        if let Some(e) = v.get("err").and_then(Value::as_str) {
            let msg = v.get("msg").and_then(Value::as_str).unwrap_or_default();
            return Self::Err(e.to_owned(), msg.to_owned());
        }
        Self::Harness(v.get("harness").map_or_else(|| v.to_string(), Value::to_string))
    }

    fn show(&self) -> String {
        match self {
            Self::Ok(t) => format!("ok {}", clip(t)),
            Self::Err(class, msg) => format!("throws {class}: {}", clip(msg)),
            Self::Harness(m) => format!("harness: {m}"),
        }
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s.to_owned()
    }
}

/// Runs wrapped programs in V8 through `tests/fidelity/run-v8.mjs`.
fn run_v8(programs: &[(String, String)], oracle: Oracle) -> Vec<Outcome> {
    if programs.is_empty() {
        return Vec::new();
    }
    let input: Vec<Value> =
        programs.iter().map(|(name, code)| json!({"name": name, "code": code})).collect();
    let mut cmd = Command::new("node");
    cmd.arg(fidelity_dir().join("run-v8.mjs")).env("TZ", "UTC");
    if oracle == Oracle::Chromium {
        cmd.arg("--chromium");
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    let stdin = serde_json::to_vec(&input).unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || pipe.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "run-v8.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results.len(), programs.len());
    results.iter().map(|r| Outcome::from_wrapper(&r["result"])).collect()
}

/// Runs wrapped programs through the real pool, four at a time.
async fn run_sandbox(sb: &support::TestSandbox, programs: &[(String, String)]) -> Vec<Outcome> {
    futures::stream::iter(programs)
        .map(|(_, code)| async move {
            match sb.run_search(code).await {
                Ok(o) => Outcome::from_wrapper(&o.value),
                Err(e) => match e.limit {
                    Some(l) => Outcome::Err(format!("limit:{}", l.as_str()), e.message),
                    None => {
                        let class = e.message.split(':').next().unwrap_or_default().to_owned();
                        Outcome::Err(class, e.message)
                    }
                },
            }
        })
        .buffered(4)
        .collect()
        .await
}

/// Agreement: equal error classes, or results equal as JSON with key order and 1e-9 relative
/// tolerance on numbers (formatting of numbers inside strings is compared exactly).
fn agree(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Ok(x), Outcome::Ok(y)) => {
            x == y
                || match (serde_json::from_str::<Value>(x), serde_json::from_str::<Value>(y)) {
                    (Ok(x), Ok(y)) => same_json(&x, &y),
                    _ => false,
                }
        }
        (Outcome::Err(x, _), Outcome::Err(y, _)) => x == y,
        _ => false,
    }
}

fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        // serde_json keeps insertion order here (`preserve_order`); IndexMap's `==` would not
        // compare it, so the keys are walked in order.
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
        }
        _ => a == b,
    }
}

/// `tests/fidelity/known-differences.toml`.
#[derive(Debug, Deserialize)]
struct Known {
    #[serde(default)]
    difference: Vec<KnownDifference>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownDifference {
    /// `<topic>/<name>` of a corpus case.
    case: String,
    /// Why it differs and why it stays (by design, not worth the cost, upstream work).
    why: String,
}

fn known() -> BTreeMap<String, String> {
    let path = fidelity_dir().join("known-differences.toml");
    let known: Known = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut map = BTreeMap::new();
    for d in known.difference {
        assert!(!d.why.trim().is_empty(), "{}: a known difference needs a why", d.case);
        assert!(map.insert(d.case.clone(), d.why).is_none(), "{} listed twice", d.case);
    }
    map
}

fn chromium_available() -> bool {
    Path::new(&std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())).exists()
        && PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("web/node_modules/playwright-core")
            .exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_agrees_with_v8_or_is_a_known_difference() {
    let cases = corpus();
    assert!(cases.len() >= 300, "the corpus has {} programs, fewer than 300", cases.len());
    let known = known();
    let ids: std::collections::BTreeSet<_> = cases.iter().map(|c| c.id.clone()).collect();
    for id in known.keys() {
        assert!(ids.contains(id), "known-differences.toml lists {id}, which is not in the corpus");
    }

    let chromium = chromium_available();
    // CI installs Chromium before the tests (scripts/test); elsewhere its cases are skipped.
    assert!(
        chromium || std::env::var_os("CI").is_none(),
        "Chromium is needed for the @v8 chromium cases"
    );
    let mut v8 = BTreeMap::new();
    for oracle in [Oracle::Node, Oracle::Chromium] {
        if oracle == Oracle::Chromium && !chromium {
            continue;
        }
        let programs: Vec<_> = cases
            .iter()
            .filter(|c| c.oracle == oracle)
            .map(|c| (c.id.clone(), wrap(&c.body)))
            .collect();
        for ((id, _), o) in programs.iter().zip(run_v8(&programs, oracle)) {
            v8.insert(id.clone(), o);
        }
    }
    let run: Vec<_> = cases.iter().filter(|c| v8.contains_key(&c.id)).collect();
    let programs: Vec<_> = run.iter().map(|c| (c.id.clone(), wrap(&c.body))).collect();
    let sb = support::sandbox().await;
    let boa = run_sandbox(&sb, &programs).await;

    let (mut same, mut listed, mut unexplained, mut stale) = (0, 0, Vec::new(), Vec::new());
    for (case, ours) in run.iter().zip(&boa) {
        let theirs = &v8[&case.id];
        assert!(
            !matches!(theirs, Outcome::Harness(_)),
            "{}: V8 could not run it: {}",
            case.id,
            theirs.show()
        );
        match (agree(ours, theirs), known.contains_key(&case.id)) {
            (true, false) => same += 1,
            (false, true) => listed += 1,
            (true, true) => stale.push(case.id.clone()),
            (false, false) => unexplained.push(format!(
                "{}\n    V8:      {}\n    sandbox: {}",
                case.id,
                theirs.show(),
                ours.show()
            )),
        }
    }
    println!(
        "fidelity corpus: {} programs, {same} agree with V8, {listed} known differences, {} new, {} skipped (no Chromium)",
        cases.len(),
        unexplained.len(),
        cases.len() - run.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} programs differ from V8 and are not in tests/fidelity/known-differences.toml:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        stale.is_empty(),
        "these now agree with V8: remove them from known-differences.toml: {stale:?}"
    );
}

/// Property-based programs: random expressions over the values where JavaScript's coercions
/// bite, and random destructuring patterns applied to random data. Each proptest case is a
/// batch of programs run as one script per engine (one Node start per batch).
mod generated {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    use super::*;

    /// Shows a value so that types stay apart (`-0`, `NaN`, `undefined`, BigInt) in JSON.
    const SHOW: &str = r#"const __show = (v) => {
  if (v === undefined) return "undefined";
  if (typeof v === "number") return Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : Number.isFinite(v) ? v : String(v);
  if (typeof v === "bigint") return v + "n";
  if (typeof v === "symbol" || typeof v === "function") return typeof v;
  if (v !== null && typeof v === "object") {
    try { return JSON.parse(JSON.stringify(v, (k, x) => x === undefined ? "undefined" : typeof x === "bigint" ? x + "n" : x)); }
    catch (e) { return "unserializable " + e.name; }
  }
  return v;
};
const __out = [];
"#;

    fn literal() -> impl Strategy<Value = String> {
        let fixed = [
            // Negative literals are parenthesized: `-0 ** 2` does not parse.
            "0",
            "(-0)",
            "1",
            "(-1.5)",
            "0.1",
            "0.2",
            "3",
            "(2**53)",
            "1e21",
            "1e-7",
            "NaN",
            "Infinity",
            "(-Infinity)",
            "''",
            "'1'",
            "'abc'",
            "' 12 '",
            "'0x1f'",
            "'1e3'",
            "null",
            "undefined",
            "true",
            "false",
            "[]",
            "[1, 2]",
            "[0]",
            "[,]",
            "({})",
            "({ a: 1 })",
            "10n",
            "(-3n)",
            "'a,b'",
            "new Date(0)",
            "/x/g",
        ];
        prop_oneof![
            3 => proptest::sample::select(fixed.to_vec()).prop_map(str::to_owned),
            1 => any::<i32>().prop_map(|n| format!("({n})")),
            1 => (-1e6f64..1e6).prop_map(|x| format!("({x})")),
        ]
    }

    fn expression() -> impl Strategy<Value = String> {
        let binary = [
            "+", "-", "*", "/", "%", "**", "==", "===", "!=", "!==", "<", "<=", ">", ">=", "&&",
            "||", "??", "&", "|", "^", "<<", ">>", ">>>",
        ];
        let unary = ["-", "+", "!", "~", "typeof", "void"];
        let calls = [
            "String(#)",
            "Number(#)",
            "Boolean(#)",
            "parseInt(#)",
            "parseFloat(#)",
            "Math.round(#)",
            "Math.floor(#)",
            "Math.sign(#)",
            "Math.max(#, 2)",
            "Math.min(#)",
            "Math.abs(#)",
            "Number.isInteger(#)",
            "Object.is(#, -0)",
            "[#].flat()",
            "String(#).padStart(6, '*')",
            "String(#).at(-1)",
            "[#, 1, 'b'].sort()",
            "[3, #, 1].toSorted()",
            "JSON.stringify(#)",
            "Object.keys(Object(#))",
            "`<${#}>`",
            "(#)?.length",
            "(#)?.toString()",
            "Number(#).toFixed(2)",
            "Array.isArray(#)",
            "[1, 2, 3].at(#)",
            "[#].includes(NaN)",
            "Number(#).toString(16)",
            "encodeURIComponent(#)",
            "isNaN(#)",
        ];
        literal().prop_recursive(4, 24, 3, move |inner| {
            prop_oneof![
                (inner.clone(), proptest::sample::select(binary.to_vec()), inner.clone())
                    .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
                (proptest::sample::select(unary.to_vec()), inner.clone())
                    .prop_map(|(op, a)| format!("({op} {a})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
                (proptest::sample::select(calls.to_vec()), inner.clone())
                    .prop_map(|(f, a)| f.replace('#', &a)),
            ]
        })
    }

    /// A destructuring pattern; binding names are given when rendered.
    #[derive(Debug, Clone)]
    enum Pat {
        Name(Option<String>),
        Object(Vec<(String, Pat)>, bool),
        Array(Vec<Option<Pat>>, bool),
    }

    fn pattern() -> impl Strategy<Value = Pat> {
        let default = proptest::option::weighted(0.3, literal());
        let key = proptest::sample::select(vec!["a", "b", "c", "d", "0", "length"]);
        default.prop_map(Pat::Name).prop_recursive(3, 16, 4, move |inner| {
            prop_oneof![
                (
                    proptest::collection::vec(
                        (key.clone().prop_map(str::to_owned), inner.clone()),
                        0..4
                    ),
                    any::<bool>()
                )
                    .prop_map(|(props, rest)| Pat::Object(props, rest)),
                (
                    proptest::collection::vec(proptest::option::weighted(0.8, inner.clone()), 0..4),
                    any::<bool>()
                )
                    .prop_map(|(items, rest)| Pat::Array(items, rest)),
            ]
        })
    }

    fn data() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![literal(), Just("'str'".to_owned()),];
        leaf.prop_recursive(3, 16, 4, |inner| {
            let key = proptest::sample::select(vec!["a", "b", "c", "d", "e", "0"]);
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|xs| format!("[{}]", xs.join(", "))),
                proptest::collection::vec((key, inner), 0..4).prop_map(|kv| {
                    let body: Vec<_> = kv.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
                    format!("({{ {} }})", body.join(", "))
                }),
            ]
        })
    }

    /// Renders a pattern, naming bindings `v0`, `v1`, ... in order.
    fn render(p: &Pat, names: &mut Vec<String>) -> String {
        let fresh = |names: &mut Vec<String>| {
            let n = format!("v{}", names.len());
            names.push(n.clone());
            n
        };
        match p {
            Pat::Name(default) => {
                let n = fresh(names);
                default.as_ref().map_or(n.clone(), |d| format!("{n} = {d}"))
            }
            Pat::Object(props, rest) => {
                let mut parts: Vec<_> = props
                    .iter()
                    .enumerate()
                    .filter(|(i, (k, _))| !props[..*i].iter().any(|(k2, _)| k2 == k))
                    .map(|(_, (k, p))| format!("{k:?}: {}", render(p, names)))
                    .collect();
                if *rest {
                    parts.push(format!("...{}", fresh(names)));
                }
                format!("{{ {} }}", parts.join(", "))
            }
            Pat::Array(items, rest) => {
                let mut parts: Vec<_> = items
                    .iter()
                    .map(|i| i.as_ref().map_or(String::new(), |p| render(p, names)))
                    .collect();
                if *rest {
                    parts.push(format!("...{}", fresh(names)));
                }
                format!("[{}]", parts.join(", "))
            }
        }
    }

    fn program() -> impl Strategy<Value = String> {
        prop_oneof![
            expression().prop_map(|e| format!("return __show({e});")),
            (pattern(), data()).prop_map(|(p, d)| {
                // `const v0 = 1 = data` does not parse: a lone name takes no default.
                let p = if let Pat::Name(_) = p { Pat::Name(None) } else { p };
                let mut names = Vec::new();
                let pat = render(&p, &mut names);
                // A lone name pattern is valid too (`const v0 = ...`).
                let shown: Vec<_> = names.iter().map(|n| format!("__show({n})")).collect();
                format!("const {pat} = {d};\nreturn [{}];", shown.join(", "))
            }),
        ]
    }

    fn batch(programs: &[String]) -> String {
        let mut body = SHOW.to_owned();
        for p in programs {
            body.push_str(&format!(
                "__out.push((() => {{ try {{ {p} }} catch (e) {{ return \"throws \" + (e && e.name); }} }})());\n"
            ));
        }
        body.push_str("return __out;");
        wrap(&body)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn generated_programs_agree_with_v8() {
        const BATCHES: u32 = 24;
        const PER_BATCH: usize = 40;
        let sb = support::sandbox().await;
        let handle = tokio::runtime::Handle::current();
        let mut runner = TestRunner::new(Config {
            cases: BATCHES,
            failure_persistence: None,
            ..Config::default()
        });
        let checked = std::sync::atomic::AtomicUsize::new(0);
        let result = tokio::task::block_in_place(|| {
            runner.run(&proptest::collection::vec(program(), PER_BATCH), |programs| {
                let code = batch(&programs);
                let theirs = run_v8(&[("batch".to_owned(), code.clone())], Oracle::Node).remove(0);
                let ours =
                    handle.block_on(run_sandbox(&sb, &[("batch".to_owned(), code)])).remove(0);
                let (Outcome::Ok(t), Outcome::Ok(o)) = (&theirs, &ours) else {
                    return Err(TestCaseError::fail(format!(
                        "batch failed: V8 {} / sandbox {}",
                        theirs.show(),
                        ours.show()
                    )));
                };
                let t: Vec<Value> = serde_json::from_str(t).unwrap();
                let o: Vec<Value> = serde_json::from_str(o).unwrap();
                let diffs: Vec<_> = programs
                    .iter()
                    .zip(t.iter().zip(&o))
                    .filter(|(_, (t, o))| !same_json(t, o))
                    .map(|(p, (t, o))| format!("{p}\n    V8:      {t}\n    sandbox: {o}"))
                    .collect();
                checked.fetch_add(programs.len(), std::sync::atomic::Ordering::Relaxed);
                prop_assert!(
                    diffs.is_empty(),
                    "{} generated programs differ from V8:\n{}",
                    diffs.len(),
                    diffs.join("\n")
                );
                Ok(())
            })
        });
        println!(
            "fidelity generated: {} programs (expressions and destructuring) checked against V8",
            checked.load(std::sync::atomic::Ordering::Relaxed)
        );
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
