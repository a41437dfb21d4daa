// The usage report as the settings page draws it: rows of `GET /api/usage?groupBy=day,model`
// pivoted into one series per model over every day of the range (a day without calls is a real
// zero), and totals per model for the table. Pure: no DOM. Nothing is estimated: cost is the
// server's `costUsd`, and calls of models without prices stay counted as `unpriced`.

/** What the chart can show: label and how to read it from a row. */
export const METRICS = {
  cost: { label: 'Cost (USD)', value: (r) => r.costUsd ?? 0 },
  tokens: { label: 'Tokens (input + output)', value: (r) => (r.inputTokens ?? 0) + (r.outputTokens ?? 0) },
  requests: { label: 'Requests', value: (r) => r.requests ?? 0 },
};

/** `YYYY-MM-DD` of a Date, in UTC (the server counts UTC days). */
export function isoDay(d) {
  return d.toISOString().slice(0, 10);
}

/** The default range: the last 30 UTC days, today included. */
export function lastDays(n = 30, now = new Date()) {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const from = new Date(to.getTime() - (n - 1) * 86400_000);
  return { from: isoDay(from), to: isoDay(to) };
}

/** Every day from `from` to `to` (inclusive, `YYYY-MM-DD`); empty when the range is backwards. */
export function daysBetween(from, to) {
  const out = [];
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (!Number.isFinite(start) || !Number.isFinite(end)) return out;
  for (let t = start; t <= end && out.length <= 400; t += 86400_000) out.push(isoDay(new Date(t)));
  return out;
}

const SUMMED = ['requests', 'errors', 'inputTokens', 'outputTokens', 'cachedTokens', 'reasoningTokens', 'costUsd', 'unpriced', 'latencyMs'];

/** Totals per model (most expensive, then busiest first) and for the whole range. */
export function totalsByModel(rows) {
  const byModel = new Map();
  const all = { model: 'Total' };
  for (const k of SUMMED) all[k] = 0;
  for (const r of rows) {
    const model = r.model ?? 'unknown';
    let t = byModel.get(model);
    if (!t) {
      t = { model };
      for (const k of SUMMED) t[k] = 0;
      byModel.set(model, t);
    }
    for (const k of SUMMED) {
      const v = typeof r[k] === 'number' && Number.isFinite(r[k]) ? r[k] : 0;
      t[k] += v;
      all[k] += v;
    }
  }
  const models = [...byModel.values()].sort((a, b) => b.costUsd - a.costUsd || b.requests - a.requests || a.model.localeCompare(b.model));
  return { models, total: all };
}

/**
 * The chart's data: `days` (the x axis), `series` [{model, values}] (one value per day) in the
 * table's order, and `max`, the largest stacked day (0: nothing to draw for this metric).
 */
export function pivot(rows, from, to, metric) {
  const read = (METRICS[metric] ?? METRICS.cost).value;
  const days = daysBetween(from, to);
  const index = new Map(days.map((d, i) => [d, i]));
  const { models } = totalsByModel(rows);
  const values = new Map(models.map((m) => [m.model, new Array(days.length).fill(0)]));
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    values.get(r.model ?? 'unknown')[i] += read(r);
  }
  const stacked = days.map((_, i) => models.reduce((s, m) => s + values.get(m.model)[i], 0));
  return {
    days,
    series: models.map((m) => ({ model: m.model, values: values.get(m.model) })),
    max: stacked.reduce((a, b) => Math.max(a, b), 0),
  };
}

/** The metric to show first: cost when anything was priced, else tokens when any were reported, else requests. */
export function defaultMetric(rows) {
  if (rows.some((r) => (r.costUsd ?? 0) > 0)) return 'cost';
  if (rows.some((r) => METRICS.tokens.value(r) > 0)) return 'tokens';
  return 'requests';
}

/**
 * The field an API error names: `data.param` (`providers.lab.baseUrl` → `baseUrl`), else the
 * first `name` quoted in its message (`scopes[0]` → `scopes`); null when it names none.
 */
export function errorParam(err) {
  let p = err?.data?.param;
  if (typeof p !== 'string' || !p) {
    const m = /`([A-Za-z_][\w.[\]]*)`/.exec(err?.message ?? '');
    p = m ? m[1] : null;
  }
  if (!p) return null;
  const last = p.split('.').filter(Boolean).pop() ?? p;
  return last.replace(/\[\d+\]$/, '');
}
