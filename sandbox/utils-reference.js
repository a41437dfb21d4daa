// Straightforward JS reference implementations of the numeric `utils` functions, used by the
// unit tests in crates/sandbox/src/utils/tests.rs to check the native kernels. Plain arrays of numbers
// (or null) in, arrays with null for missing values out. Deliberately naive (no sliding sums).
const ref = (() => {
  const miss = (x) => x === null || x === undefined || typeof x !== 'number' || !Number.isFinite(x);
  const out = (x) => (Number.isFinite(x) ? x : null);
  const windowOk = (xs, i, p) => {
    if (i + 1 < p) return false;
    for (let j = i - p + 1; j <= i; j++) if (miss(xs[j])) return false;
    return true;
  };
  const meanOf = (w) => w.reduce((a, b) => a + b, 0) / w.length;
  const varOf = (w, ddof) => {
    const m = meanOf(w);
    return w.reduce((a, b) => a + (b - m) * (b - m), 0) / (w.length - ddof);
  };
  const valid = (xs) => xs.filter((x) => !miss(x));
  const emaRaw = (xs, p) => {
    const a = 2 / (p + 1);
    const res = xs.map(() => null);
    const seed = [];
    let prev = null;
    xs.forEach((x, i) => {
      if (miss(x)) return;
      if (seed.length < p) {
        seed.push(x);
        if (seed.length === p) { prev = meanOf(seed); res[i] = prev; }
      } else {
        prev = a * x + (1 - a) * prev;
        res[i] = prev;
      }
    });
    return res;
  };
  const pearson = (a, b) => {
    const pa = [], pb = [];
    a.forEach((x, i) => { if (!miss(x) && !miss(b[i])) { pa.push(x); pb.push(b[i]); } });
    if (pa.length < 2) return null;
    const ma = meanOf(pa), mb = meanOf(pb);
    let sab = 0, saa = 0, sbb = 0;
    for (let i = 0; i < pa.length; i++) {
      sab += (pa[i] - ma) * (pb[i] - mb); saa += (pa[i] - ma) ** 2; sbb += (pb[i] - mb) ** 2;
    }
    const d = Math.sqrt(saa * sbb);
    return d === 0 ? null : out(sab / d);
  };
  const wilder = (items, p, f) => {
    // items: [index, value] pairs; Wilder smoothing with SMA seed.
    const res = [];
    let acc = 0;
    items.forEach(([i, v], n) => {
      if (n < p) { acc += v; if (n === p - 1) { acc /= p; res.push([i, acc]); } }
      else { acc = (acc * (p - 1) + v) / p; res.push([i, acc]); }
    });
    return res;
  };
  return {
    sma(xs, p) {
      return xs.map((_, i) => (windowOk(xs, i, p) ? out(meanOf(xs.slice(i - p + 1, i + 1))) : null));
    },
    wma(xs, p) {
      return xs.map((_, i) => {
        if (!windowOk(xs, i, p)) return null;
        let s = 0;
        for (let j = 0; j < p; j++) s += (j + 1) * xs[i - p + 1 + j];
        return out(s / (p * (p + 1) / 2));
      });
    },
    ema(xs, p) { return emaRaw(xs, p).map(out); },
    rsi(xs, p = 14) {
      const res = xs.map(() => null);
      const gains = [], losses = [];
      let last = null;
      xs.forEach((x, i) => {
        if (miss(x)) return;
        if (last !== null) { const d = x - last; gains.push([i, Math.max(d, 0)]); losses.push([i, Math.max(-d, 0)]); }
        last = x;
      });
      const g = wilder(gains, p), l = wilder(losses, p);
      g.forEach(([i, ag], n) => {
        const al = l[n][1];
        res[i] = al === 0 ? (ag === 0 ? 50 : 100) : 100 - 100 / (1 + ag / al);
      });
      return res;
    },
    macd(xs, fast = 12, slow = 26, signal = 9) {
      const f = emaRaw(xs, fast), s = emaRaw(xs, slow);
      const m = xs.map((_, i) => (f[i] === null || s[i] === null ? null : f[i] - s[i]));
      const sg = emaRaw(m, signal);
      const h = m.map((x, i) => (x === null || sg[i] === null ? null : x - sg[i]));
      return { macd: m.map(out), signal: sg.map(out), histogram: h.map(out) };
    },
    bollinger(xs, p = 20, k = 2) {
      const mid = this.sma(xs, p);
      const sd = xs.map((_, i) => (windowOk(xs, i, p) ? Math.sqrt(varOf(xs.slice(i - p + 1, i + 1), 0)) : null));
      return {
        upper: mid.map((m, i) => (m === null ? null : out(m + k * sd[i]))),
        middle: mid,
        lower: mid.map((m, i) => (m === null ? null : out(m - k * sd[i]))),
      };
    },
    stdev(xs, p) {
      if (p === undefined) { const v = valid(xs); return v.length < 2 ? null : out(Math.sqrt(varOf(v, 1))); }
      return xs.map((_, i) => (windowOk(xs, i, p) && p > 1 ? out(Math.sqrt(varOf(xs.slice(i - p + 1, i + 1), 1))) : null));
    },
    mean(xs) { const v = valid(xs); return v.length ? out(meanOf(v)) : null; },
    sum(xs) { return out(valid(xs).reduce((a, b) => a + b, 0)); },
    min(xs) { const v = valid(xs); return v.length ? Math.min(...v) : null; },
    max(xs) { const v = valid(xs); return v.length ? Math.max(...v) : null; },
    pctChange(xs, lag = 1) {
      return xs.map((x, i) => (i < lag || miss(x) || miss(xs[i - lag]) ? null : out(x / xs[i - lag] - 1)));
    },
    returns(xs, type = 'simple') {
      return xs.map((x, i) => {
        if (i === 0 || miss(x) || miss(xs[i - 1])) return null;
        return out(type === 'log' ? Math.log(x / xs[i - 1]) : x / xs[i - 1] - 1);
      });
    },
    cumulative(xs, type = 'sum') {
      let acc = type === 'return' ? 1 : 0;
      return xs.map((x) => {
        if (miss(x)) return null;
        if (type === 'return') { acc *= 1 + x; return out(acc - 1); }
        acc += x; return out(acc);
      });
    },
    drawdown(xs) {
      let peak = null;
      return xs.map((x) => {
        if (miss(x)) return null;
        if (peak === null || x > peak) peak = x;
        return peak > 0 ? out(x / peak - 1) : null;
      });
    },
    maxDrawdown(xs) { const d = valid(this.drawdown(xs)); return d.length ? Math.min(...d) : null; },
    correlation(a, b, p) {
      if (p === undefined) return pearson(a, b);
      return a.map((_, i) => (windowOk(a, i, p) && windowOk(b, i, p) ? pearson(a.slice(i - p + 1, i + 1), b.slice(i - p + 1, i + 1)) : null));
    },
    zscore(xs, p) {
      if (p === undefined) {
        const v = valid(xs);
        const m = meanOf(v), sd = v.length < 2 ? NaN : Math.sqrt(varOf(v, 1));
        return xs.map((x) => (miss(x) || !(sd > 0) ? null : out((x - m) / sd)));
      }
      return xs.map((x, i) => {
        if (!windowOk(xs, i, p) || p < 2) return null;
        const w = xs.slice(i - p + 1, i + 1);
        const sd = Math.sqrt(varOf(w, 1));
        return sd > 0 ? out((x - meanOf(w)) / sd) : null;
      });
    },
    atr(rows, p = 14) {
      const res = rows.map(() => null);
      const trs = [];
      let pc = null;
      rows.forEach((r, i) => {
        if (!r || miss(r.high) || miss(r.low) || miss(r.close)) return;
        const tr = pc === null ? r.high - r.low : Math.max(r.high - r.low, Math.abs(r.high - pc), Math.abs(r.low - pc));
        pc = r.close;
        trs.push([i, tr]);
      });
      wilder(trs, p).forEach(([i, v]) => { res[i] = out(v); });
      return res;
    },
    vwap(rows) {
      let pv = 0, vol = 0;
      return rows.map((r) => {
        if (!r || miss(r.high) || miss(r.low) || miss(r.close) || miss(r.volume)) return null;
        pv += ((r.high + r.low + r.close) / 3) * r.volume; vol += r.volume;
        return vol > 0 ? out(pv / vol) : null;
      });
    },
  };
})();
