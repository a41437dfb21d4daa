// Optional chaining (?.), nullish coalescing (??) and logical assignment (??=, ||=, &&=).

// @case member-chain-on-missing
const state = { user: { prefs: null }, panels: [] };
return [
  state.user?.prefs?.theme,
  state.missing?.deep.deeper,
  state.panels?.[0]?.title,
  state.user?.prefs ?? 'none',
].map(String);

// @case call-optional
const api = { fmt: (x) => x.toFixed(1), maybe: null };
return [api.fmt?.(3.14159), api.maybe?.(1), api.nothing?.(), typeof api.maybe?.()].map(String);

// @case short-circuit-skips-side-effects
let calls = 0;
const f = () => { calls++; return 'k'; };
const o = null;
const r = o?.[f()].x.y(f());
return { r: String(r), calls };

// @case nullish-vs-or
const cfg = { refresh: 0, title: '', enabled: false, max: null };
return {
  refreshOr: cfg.refresh || 60, refreshNullish: cfg.refresh ?? 60,
  titleOr: cfg.title || 'Untitled', titleNullish: cfg.title ?? 'Untitled',
  enabledNullish: cfg.enabled ?? true, maxNullish: String(cfg.max ?? Infinity), missing: cfg.nope ?? 'd',
};

// @case nullish-assignment-operators
const o = { a: null, b: 0, c: 'x', d: undefined };
o.a ??= 'A';
o.b ??= 'B';
o.b ||= 'B2';
o.c &&= o.c.toUpperCase();
o.d ||= [];
o.e ??= { created: true };
return o;

// @case logical-assignment-short-circuit-no-set
const log = [];
const o = new Proxy({ a: 1 }, { set(t, k, v) { log.push(k); t[k] = v; return true; } });
o.a ??= 5;
o.a ||= 6;
o.b &&= 7;
o.c ??= 8;
return { log, a: o.a, c: o.c };

// @case optional-chain-with-method-this
const panel = { title: 'P', getTitle() { return this?.title ?? 'no-this'; } };
return { a: panel.getTitle?.(), b: (panel?.getTitle)(), c: panel?.['getTitle']() };

// @case optional-chain-array-index
const rows = [[1, 2], null, [3]];
return rows.map((r) => r?.[1] ?? -1);

// @case optional-delete
const o = { a: { b: 1 } };
const r1 = delete o?.a?.b;
const r2 = delete o.x?.y;
return { o, r1, r2 };

// @case optional-call-non-function-throws
const o = { notFn: 42 };
return o.notFn?.();

// @case chain-break-without-optional-throws
const state = { user: null };
return state.user?.name.length + state.user.name;

// @case nullish-on-deep-dashboard-config
const dashboards = [
  { id: 1, layout: { cols: 3 } },
  { id: 2, layout: null },
  { id: 3 },
  { id: 4, layout: { cols: 0 } },
];
return dashboards.map((d) => ({ id: d.id, cols: d.layout?.cols ?? 12, colsOr: d.layout?.cols || 12 }));

// @case optional-chain-on-primitives
const n = 5, s = 'abc';
return [n?.toFixed(2), s?.length, s?.at?.(-1), (null)?.toString()].map(String);

// @case nullish-mixed-with-parens
const a = null, b = 0, c = 3;
return { r1: (a || b) ?? c, r2: a ?? (b || c), r3: (a ?? b) || c };

// @case optional-template-and-in-arrow
const fmt = (bar) => `${bar?.sym ?? '?'}:${bar?.close?.toFixed?.(2) ?? 'n/a'}`;
return [fmt({ sym: 'SPY', close: 501.234 }), fmt({ sym: 'QQQ' }), fmt(null), fmt({ close: '12' })];
