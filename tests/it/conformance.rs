//! The sandbox runs ordinary modern JavaScript correctly: async/await and parallel sdk calls,
//! builtins, Date math, JSON semantics, errors with positions in the submitted code.

use std::time::{Duration, Instant};

use boardsmith::sandbox::{ErrorKind, Limit, PanelContext};
use serde_json::json;

use crate::support;

fn no_vars() -> PanelContext {
    PanelContext::default()
}

#[tokio::test]
async fn promise_all_over_sdk_calls_runs_them_concurrently() {
    let sb = support::sandbox().await;
    let code = "const t0 = Date.now();
        const [a, b] = await Promise.all([sdk.test.sleep({ms: 100}), sdk.test.sleep({ms: 100})]);
        return { a, b, elapsed: Date.now() - t0 };";
    let started = Instant::now();
    let out = sb.run_panel(code, &no_vars()).await.unwrap();
    let wall = started.elapsed();
    assert_eq!(out.value["a"], json!({"slept": 100}));
    assert_eq!(out.value["b"], json!({"slept": 100}));
    assert_eq!(out.sdk_calls, 2);
    let js = out.value["elapsed"].as_f64().unwrap();
    // Sequential calls would take at least 200 ms.
    assert!((95.0..195.0).contains(&js), "JS saw {js} ms for two parallel 100 ms calls");
    assert!(wall < Duration::from_millis(400), "wall {wall:?}");

    // Sequential awaits add up: proves the clock and the sleeps are real.
    let seq =
        "const t0 = Date.now(); await sdk.test.sleep({ms: 100}); await sdk.test.sleep({ms: 100});
        return Date.now() - t0;";
    let out = sb.run_panel(seq, &no_vars()).await.unwrap();
    assert!(out.value.as_f64().unwrap() >= 195.0, "{}", out.value);
}

#[tokio::test]
async fn array_object_and_language_features() {
    let sb = support::sandbox().await;
    let code = r#"
        const rows = [{s: 'b', v: 2}, {s: 'a', v: 1}, {s: 'c', v: 3}];
        const sorted = [...rows].sort((x, y) => x.v - y.v).map(r => r.s);
        const total = rows.reduce((acc, r) => acc + r.v, 0);
        const byS = Object.fromEntries(rows.map(({s, v}) => [s, v * 10]));
        const m = new Map(Object.entries(byS)); const set = new Set([1, 1, 2]);
        class Acc { #n = 0; add(x) { this.#n += x; return this; } get n() { return this.#n; } }
        function* gen() { yield* [1, 2, 3]; }
        const opt = rows[5]?.v ?? 'none';
        const tpl = `${sorted.join('-')}:${total}`;
        return { sorted, total, byS, mapSize: m.size, setSize: set.size,
                 acc: new Acc().add(2).add(3).n, gen: [...gen()], opt, tpl,
                 flat: [[1, [2]], [3]].flat(2), at: [1, 2, 3].at(-1),
                 keys: Object.keys({z: 1, y: 2}), str: 'Gold'.padStart(6, '*').toUpperCase() };
    "#;
    let out = sb.run_builder(code, None).await.unwrap();
    assert_eq!(
        out.value,
        json!({"sorted": ["a", "b", "c"], "total": 6, "byS": {"b": 20, "a": 10, "c": 30},
               "mapSize": 3, "setSize": 2, "acc": 5, "gen": [1, 2, 3], "opt": "none",
               "tpl": "a-b-c:6", "flat": [1, 2, 3], "at": 3, "keys": ["z", "y"],
               "str": "**GOLD"})
    );
}

#[tokio::test]
async fn date_math_is_utc_and_exact() {
    let sb = support::sandbox().await;
    let code = "const d = new Date(Date.UTC(2024, 0, 31));
        const next = new Date(d.getTime() + 86400e3);
        const m = new Date(d); m.setUTCMonth(m.getUTCMonth() + 1);
        return { iso: d.toISOString(), next: next.toISOString().slice(0, 10),
                 month: m.toISOString().slice(0, 10), secs: Math.floor(d / 1000),
                 parsed: Date.parse('2024-03-01T00:00:00Z') / 1000, dow: d.getUTCDay(),
                 now: typeof Date.now() };";
    let out = sb.run_builder(code, None).await.unwrap();
    assert_eq!(
        out.value,
        json!({"iso": "2024-01-31T00:00:00.000Z", "next": "2024-02-01", "month": "2024-03-02",
               "secs": 1706659200, "parsed": 1709251200, "dow": 3, "now": "number"})
    );
}

#[tokio::test]
async fn results_follow_json_stringify_semantics_with_the_pristine_intrinsic() {
    let sb = support::sandbox().await;
    let code = "JSON.stringify = () => '\"tampered\"';
        return { d: new Date(0), f() {}, n: NaN, i: -Infinity, u: undefined, arr: [undefined, () => 1],
                 nested: { toJSON() { return 'custom'; } }, s: Symbol('x') };";
    let out = sb.run_builder(code, None).await.unwrap();
    assert_eq!(
        out.value,
        json!({"d": "1970-01-01T00:00:00.000Z", "n": null, "i": null, "arr": [null, null],
               "nested": "custom"})
    );
    let undef = sb.run_builder("return undefined;", None).await.unwrap();
    assert_eq!(undef.value, json!(null));

    let cyclic = sb.run_builder("const a = {}; a.self = a; return a;", None).await.unwrap_err();
    assert_eq!(cyclic.kind, ErrorKind::Result, "{cyclic}");
    let big = sb.run_builder("return { n: 10n };", None).await.unwrap_err();
    assert_eq!(big.kind, ErrorKind::Result, "{big}");
    assert!(big.message.to_lowercase().contains("bigint"), "{big}");
}

#[tokio::test]
async fn errors_carry_line_and_column_of_the_submitted_code() {
    let sb = support::sandbox().await;
    // Thrown in a nested function on line 3.
    let code = "const rows = [];\nfunction last(r) {\n  return r[r.length - 1].close;\n}\nreturn last(rows);";
    let e = sb.run_builder(code, None).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert!(e.message.starts_with("TypeError"), "{e}");
    // Boa points at the property being read (`close`).
    assert_eq!((e.line, e.column), (Some(3), Some(26)), "{e:?}");
    assert_eq!(e.stack, ["last (line 3, column 26)", "<anonymous> (line 5, column 12)"]);

    // Thrown after an await, from panel code.
    let code =
        "const k = await sdk.test.echo({x: 1});\n\nthrow new RangeError('bad period ' + k.x);";
    let e = sb.run_panel(code, &PanelContext::default()).await.unwrap_err();
    assert_eq!(e.message, "RangeError: bad period 1");
    assert_eq!((e.line, e.column), (Some(3), Some(7)), "{e:?}");

    // Syntax errors point at the offending token.
    let e = sb.run_builder("const a = 1;\nconst b = ;\n", None).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.line, Some(2), "{e:?}");
    assert!(e.message.contains("line 2"), "{e}");

    // Non-Error throws and uncaught sdk failures.
    let e = sb.run_builder("throw 'nope';", None).await.unwrap_err();
    assert_eq!(e.message, "Uncaught \"nope\"");
    let e = sb
        .run_panel(
            "return await sdk.test.fail({message: 'upstream 503'});",
            &PanelContext::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Sdk);
    assert_eq!(e.message, "SdkError: upstream 503");
}

#[tokio::test]
async fn sdk_errors_can_be_handled_by_the_code() {
    let sb = support::sandbox().await;
    let code = "try { await sdk.test.fail({message: 'down'}); } catch (e) {
          return { name: e.name, message: e.message, isError: e instanceof Error }; }";
    let out = sb.run_panel(code, &PanelContext::default()).await.unwrap();
    assert_eq!(out.value, json!({"name": "SdkError", "message": "down", "isError": true}));
}

#[tokio::test]
async fn console_output_is_captured_and_capped() {
    let sb = support::sandbox().await;
    let out = sb
        .run_builder(
            "console.log('rows', 3, {a: [1]}); console.warn('careful'); \
                      for (let i = 0; i < 5000; i++) console.log('spam ' + i); return 1;",
            None,
        )
        .await
        .unwrap();
    assert_eq!(out.logs[0].message, "rows 3 {\"a\":[1]}");
    assert_eq!((out.logs[1].level.as_str(), out.logs[1].message.as_str()), ("warn", "careful"));
    let last = out.logs.last().unwrap();
    assert!(last.message.contains("more console lines dropped"), "{last:?}");
    let bytes: usize = out.logs.iter().map(|l| l.message.len()).sum();
    assert!(bytes <= sb.limits().log_bytes + 200, "{bytes}");

    // Logs survive a failure.
    let e = sb.run_builder("console.log('before'); throw new Error('x');", None).await.unwrap_err();
    assert_eq!(e.logs[0].message, "before");
}

#[tokio::test]
async fn builder_mutates_a_copy_of_state_in_either_form() {
    let sb = support::sandbox().await;
    let state = json!({"title": "Gold", "layout": {"columns": 2}, "panels": [{"id": "a"}]});
    let f = "async (state) => ({ ...state, title: state.title + ' v2', panels: [...state.panels, {id: 'b'}] })";
    let out = sb.run_builder(f, Some(&state)).await.unwrap();
    assert_eq!(out.value["title"], "Gold v2");
    assert_eq!(out.value["panels"], json!([{"id": "a"}, {"id": "b"}]));
    // A body using `state` works too, and mutating in place is fine (it is a copy).
    let body = "state.layout.columns = 3;\nreturn state;";
    let out = sb.run_builder(body, Some(&state)).await.unwrap();
    assert_eq!(out.value["layout"]["columns"], 3);
    assert_eq!(state["layout"]["columns"], 2);
    // No sdk in builders; utils is there.
    let out =
        sb.run_builder("return [typeof sdk, typeof utils, typeof spec];", None).await.unwrap();
    assert_eq!(out.value, json!(["undefined", "object", "undefined"]));
    let e = sb.run_builder("42", Some(&state)).await.unwrap_err();
    assert!(e.message.contains("must be a function"), "{e}");
}

#[tokio::test]
async fn panel_sees_frozen_vars_sdk_and_utils() {
    let sb = support::sandbox().await;
    let mut ctx = PanelContext::default();
    ctx.vars.insert("symbol".into(), json!("XAUUSD"));
    let code = "'use strict';
        let threw = false; try { vars.symbol = 'BTC'; } catch (e) { threw = e instanceof TypeError; }
        return { symbol: vars.symbol, threw, frozen: [Object.isFrozen(vars), Object.isFrozen(sdk),
                 Object.isFrozen(sdk.test), Object.isFrozen(utils)], spec: typeof spec,
                 same: sdk.test === sdk.test && sdk.test.echo === sdk.test.echo,
                 listed: Object.keys(sdk).includes('test') && 'market' in sdk };";
    let out = sb.run_panel(code, &ctx).await.unwrap();
    assert_eq!(
        out.value,
        json!({"symbol": "XAUUSD", "threw": true, "frozen": [true, true, true, true], "spec": "undefined",
               "same": true, "listed": true})
    );
}

#[tokio::test]
async fn limits_are_reported_by_name() {
    let sb = support::sandbox().await;
    let big = "x".repeat(sb.limits().source_bytes + 1);
    let e = sb.run_builder(&big, None).await.unwrap_err();
    assert_eq!(e.limit, Some(Limit::SourceSize));
    let deep = format!("return {}{};", "[".repeat(600), "]".repeat(600));
    let e = sb.run_builder(&deep, None).await.unwrap_err();
    assert_eq!((e.limit, e.line), (Some(Limit::NestingDepth), Some(1)));
    let e = sb.run_builder("while (true) {}", None).await.unwrap_err();
    // Boa's engine limit errors carry no position.
    assert_eq!(e.limit, Some(Limit::LoopIterations), "{e}");
    let e = sb
        .run_builder("function f(n) { return f(n + 1) + 1; }\nreturn f(0);", None)
        .await
        .unwrap_err();
    assert_eq!(e.limit, Some(Limit::Recursion), "{e}");
}

#[tokio::test]
async fn a_worker_left_with_a_large_address_space_is_replaced_not_reused() {
    let sb = support::sandbox_with(1, boardsmith::sandbox::Limits::default()).await;
    // Grows until the memory cap, catches the failure and returns normally.
    let grow = "const a = []; try { for (let i = 0; i < 200; i++) a.push(new Float64Array(1e6)); }
                catch (e) { return { got: a.length, error: e.name }; } return { got: a.length };";
    let out = sb.run_panel(grow, &PanelContext::default()).await.unwrap();
    assert_eq!(out.value["error"], "RangeError", "{}", out.value);
    // The same (only) worker slot must now hold a fresh process with its full budget.
    let use400 = "const a = []; for (let i = 0; i < 50; i++) a.push(new Float64Array(1e6)); return a.length;";
    assert_eq!(sb.run_panel(use400, &PanelContext::default()).await.unwrap().value, json!(50));
    assert!(sb.stats().retired >= 1, "{:?}", sb.stats());
}

#[tokio::test]
async fn check_syntax_parses_without_running() {
    let sb = support::sandbox().await;
    sb.check_syntax("while (true) {}\nreturn await sdk.nope.x();").await.unwrap();
    let e = sb.check_syntax("const a = 1;\nreturn a +;").await.unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::Syntax, Some(2)), "{e:?}");
}
