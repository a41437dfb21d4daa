//! Pure numeric kernels over `&[f64]`. A missing value is `NaN` on input and output (the JS
//! binding maps null/undefined/NaN/±Infinity to `NaN` and any non-finite result to `null`).
//!
//! Conventions (mirrored in `sandbox/utils-reference.js` and `sandbox/utils-spec.json`):
//! - window kernels (`sma`, `wma`, rolling `stdev`/`zscore`/`correlation`, `bollinger`) yield
//!   `NaN` for the first `period - 1` positions and for any window containing a missing value;
//! - recursive kernels (`ema`, `rsi`, `macd`, `atr`, cumulative ones) skip missing inputs: the
//!   output at a missing position is `NaN` and the running state carries over.

/// Simple moving average; `NaN` during warm-up or when the window holds a missing value.
///
/// The running sum takes one addition per element (the value entering minus the one leaving,
/// missing ones counted as 0): the additions form a dependency chain, so two per element
/// (`+= x; -= y`) made this loop twice as slow.
pub fn sma(xs: &[f64], p: usize) -> Vec<f64> {
    let zero_if_nan = |x: f64| if x.is_nan() { 0.0 } else { x };
    let mut out = vec![f64::NAN; xs.len()];
    if p == 0 || p > xs.len() {
        return out;
    }
    let div = p as f64;
    let sum: f64 = xs[..p].iter().map(|&x| zero_if_nan(x)).sum();
    let missing = xs[..p].iter().filter(|x| x.is_nan()).count();
    let mean = |sum: f64, missing: usize| if missing == 0 { sum / div } else { f64::NAN };
    out[p - 1] = mean(sum, missing);
    let (mut sum, mut missing) = (sum, missing);
    for ((o, &x), &y) in out[p..].iter_mut().zip(&xs[p..]).zip(xs) {
        sum += zero_if_nan(x) - zero_if_nan(y);
        missing = missing + usize::from(x.is_nan()) - usize::from(y.is_nan());
        *o = mean(sum, missing);
    }
    out
}

/// Linearly weighted moving average (weights 1..=p, newest heaviest).
pub fn wma(xs: &[f64], p: usize) -> Vec<f64> {
    let denom = (p * (p + 1)) as f64 / 2.0;
    let mut out = vec![f64::NAN; xs.len()];
    for i in (p.max(1) - 1)..xs.len() {
        let w = &xs[i + 1 - p..=i];
        if w.iter().any(|x| x.is_nan()) {
            continue;
        }
        let s: f64 = w.iter().enumerate().map(|(j, x)| (j + 1) as f64 * x).sum();
        out[i] = s / denom;
    }
    out
}

/// Exponential moving average, alpha = 2/(p+1), seeded with the SMA of the first `p` valid
/// values (first output at the p-th valid value). Missing inputs are skipped.
pub fn ema(xs: &[f64], p: usize) -> Vec<f64> {
    let alpha = 2.0 / (p as f64 + 1.0);
    let mut out = vec![f64::NAN; xs.len()];
    let (mut count, mut seed, mut prev) = (0usize, 0.0, f64::NAN);
    for (i, &x) in xs.iter().enumerate() {
        if x.is_nan() {
            continue;
        }
        if count < p {
            seed += x;
            count += 1;
            if count == p {
                prev = seed / p as f64;
                out[i] = prev;
            }
        } else {
            prev += alpha * (x - prev);
            out[i] = prev;
        }
    }
    out
}

fn rsi_value(gain: f64, loss: f64) -> f64 {
    if loss == 0.0 {
        if gain == 0.0 { 50.0 } else { 100.0 }
    } else {
        100.0 - 100.0 / (1.0 + gain / loss)
    }
}

/// Wilder RSI. Changes are taken between consecutive valid values; the first output is at the
/// p-th change (index p without missing values). avgLoss 0 gives 100 (50 if avgGain is also 0).
pub fn rsi(xs: &[f64], p: usize) -> Vec<f64> {
    let pf = p as f64;
    let mut out = vec![f64::NAN; xs.len()];
    let (mut last, mut count, mut gain, mut loss) = (f64::NAN, 0usize, 0.0, 0.0);
    for (i, &x) in xs.iter().enumerate() {
        if x.is_nan() {
            continue;
        }
        if last.is_nan() {
            last = x;
            continue;
        }
        let d = x - last;
        last = x;
        let (g, l) = (d.max(0.0), (-d).max(0.0));
        if count < p {
            gain += g;
            loss += l;
            count += 1;
            if count == p {
                gain /= pf;
                loss /= pf;
                out[i] = rsi_value(gain, loss);
            }
        } else {
            gain = (gain * (pf - 1.0) + g) / pf;
            loss = (loss * (pf - 1.0) + l) / pf;
            out[i] = rsi_value(gain, loss);
        }
    }
    out
}

/// MACD: `(macd, signal, histogram)`; macd = ema(fast) - ema(slow), signal = ema(macd, signal).
pub fn macd(xs: &[f64], fast: usize, slow: usize, signal: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (f, s) = (ema(xs, fast), ema(xs, slow));
    let m: Vec<f64> = f.iter().zip(&s).map(|(a, b)| a - b).collect();
    let sig = ema(&m, signal);
    let h = m.iter().zip(&sig).map(|(a, b)| a - b).collect();
    (m, sig, h)
}

fn window_mean_var(w: &[f64], ddof: usize) -> Option<(f64, f64)> {
    if w.iter().any(|x| x.is_nan()) || w.len() <= ddof {
        return None;
    }
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let ss: f64 = w.iter().map(|x| (x - mean) * (x - mean)).sum();
    Some((mean, ss / (w.len() - ddof) as f64))
}

/// Rolling standard deviation (`ddof` 1 = sample, 0 = population).
pub fn rolling_stdev(xs: &[f64], p: usize, ddof: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; xs.len()];
    for i in (p.max(1) - 1)..xs.len() {
        if let Some((_, v)) = window_mean_var(&xs[i + 1 - p..=i], ddof) {
            out[i] = v.sqrt();
        }
    }
    out
}

/// Bollinger bands `(upper, middle, lower)`: SMA ± k × population stdev.
pub fn bollinger(xs: &[f64], p: usize, k: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mid = sma(xs, p);
    let sd = rolling_stdev(xs, p, 0);
    let up = mid.iter().zip(&sd).map(|(m, s)| m + k * s).collect();
    let lo = mid.iter().zip(&sd).map(|(m, s)| m - k * s).collect();
    (up, mid, lo)
}

fn valid(xs: &[f64]) -> impl Iterator<Item = f64> + '_ {
    xs.iter().copied().filter(|x| !x.is_nan())
}

/// Sum of the valid values (0 if none).
pub fn sum(xs: &[f64]) -> f64 {
    valid(xs).sum()
}

/// Mean of the valid values (`NaN` if none).
pub fn mean(xs: &[f64]) -> f64 {
    let (s, n) = valid(xs).fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { f64::NAN } else { s / n as f64 }
}

/// Minimum of the valid values (`NaN` if none).
pub fn min(xs: &[f64]) -> f64 {
    valid(xs).fold(f64::NAN, f64::min)
}

/// Maximum of the valid values (`NaN` if none).
pub fn max(xs: &[f64]) -> f64 {
    valid(xs).fold(f64::NAN, f64::max)
}

/// Sample standard deviation of the valid values (`NaN` with fewer than two).
pub fn stdev(xs: &[f64]) -> f64 {
    let v: Vec<f64> = valid(xs).collect();
    window_mean_var(&v, 1).map_or(f64::NAN, |(_, var)| var.sqrt())
}

/// `x[i] / x[i - lag] - 1` (a fraction); `NaN` if either is missing.
pub fn pct_change(xs: &[f64], lag: usize) -> Vec<f64> {
    (0..xs.len()).map(|i| if i >= lag { xs[i] / xs[i - lag] - 1.0 } else { f64::NAN }).collect()
}

/// Period returns: simple `x[i]/x[i-1]-1` or log `ln(x[i]/x[i-1])`; first element `NaN`.
pub fn returns(xs: &[f64], log: bool) -> Vec<f64> {
    (0..xs.len())
        .map(|i| {
            if i == 0 {
                f64::NAN
            } else if log {
                (xs[i] / xs[i - 1]).ln()
            } else {
                xs[i] / xs[i - 1] - 1.0
            }
        })
        .collect()
}

/// Running sum (`compound = false`) or compounded return `Π(1+r) - 1` (`compound = true`).
/// Missing values are skipped (output `NaN` there, the total carries over).
pub fn cumulative(xs: &[f64], compound: bool) -> Vec<f64> {
    let mut acc = if compound { 1.0 } else { 0.0 };
    xs.iter()
        .map(|&x| {
            if x.is_nan() {
                return f64::NAN;
            }
            if compound {
                acc *= 1.0 + x;
                acc - 1.0
            } else {
                acc += x;
                acc
            }
        })
        .collect()
}

/// Drawdown from the running peak, `x / peak - 1` (≤ 0). `NaN` at missing values or while the
/// peak is not positive.
pub fn drawdown(xs: &[f64]) -> Vec<f64> {
    let mut peak = f64::NAN;
    xs.iter()
        .map(|&x| {
            if x.is_nan() {
                return f64::NAN;
            }
            if peak.is_nan() || x > peak {
                peak = x;
            }
            if peak > 0.0 { x / peak - 1.0 } else { f64::NAN }
        })
        .collect()
}

/// Most negative drawdown (0 if the series never falls; `NaN` if there is no data).
pub fn max_drawdown(xs: &[f64]) -> f64 {
    min(&drawdown(xs))
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| !x.is_nan() && !y.is_nan())
        .map(|(x, y)| (*x, *y))
        .collect();
    if pairs.len() < 2 {
        return f64::NAN;
    }
    let n = pairs.len() as f64;
    let ma = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let mb = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    let d = (saa * sbb).sqrt();
    if d == 0.0 { f64::NAN } else { sab / d }
}

/// Pearson correlation over the positions where both values are present (`NaN` if fewer
/// than two pairs or zero variance). Slices must have equal length.
pub fn correlation(a: &[f64], b: &[f64]) -> f64 {
    pearson(a, b)
}

/// Rolling Pearson correlation; `NaN` when the window holds a missing value.
pub fn rolling_correlation(a: &[f64], b: &[f64], p: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; a.len()];
    for i in (p.max(1) - 1)..a.len() {
        let (wa, wb) = (&a[i + 1 - p..=i], &b[i + 1 - p..=i]);
        if wa.iter().chain(wb).any(|x| x.is_nan()) {
            continue;
        }
        out[i] = pearson(wa, wb);
    }
    out
}

/// Z-score against the whole series (sample stdev of the valid values).
pub fn zscore(xs: &[f64]) -> Vec<f64> {
    let (m, sd) = (mean(xs), stdev(xs));
    xs.iter().map(|x| if sd > 0.0 { (x - m) / sd } else { f64::NAN }).collect()
}

/// Rolling z-score of each value against the window ending at it (sample stdev).
pub fn rolling_zscore(xs: &[f64], p: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; xs.len()];
    for i in (p.max(1) - 1)..xs.len() {
        if let Some((m, v)) = window_mean_var(&xs[i + 1 - p..=i], 1)
            && v > 0.0
        {
            out[i] = (xs[i] - m) / v.sqrt();
        }
    }
    out
}

/// Wilder ATR over rows with high/low/close. Rows with a missing field are skipped. The first
/// true range is `high - low`; the first output is the mean of the first `p` true ranges.
pub fn atr(h: &[f64], l: &[f64], c: &[f64], p: usize) -> Vec<f64> {
    let pf = p as f64;
    let mut out = vec![f64::NAN; h.len()];
    let (mut prev_close, mut count, mut acc) = (f64::NAN, 0usize, 0.0);
    for i in 0..h.len() {
        let (hi, lo, cl) = (h[i], l[i], c[i]);
        if hi.is_nan() || lo.is_nan() || cl.is_nan() {
            continue;
        }
        let tr = if prev_close.is_nan() {
            hi - lo
        } else {
            (hi - lo).max((hi - prev_close).abs()).max((lo - prev_close).abs())
        };
        prev_close = cl;
        if count < p {
            acc += tr;
            count += 1;
            if count == p {
                acc /= pf;
                out[i] = acc;
            }
        } else {
            acc = (acc * (pf - 1.0) + tr) / pf;
            out[i] = acc;
        }
    }
    out
}

/// Cumulative VWAP with typical price (h+l+c)/3; rows with a missing field are skipped.
pub fn vwap(h: &[f64], l: &[f64], c: &[f64], v: &[f64]) -> Vec<f64> {
    let (mut pv, mut vol) = (0.0, 0.0);
    (0..h.len())
        .map(|i| {
            let (hi, lo, cl, vo) = (h[i], l[i], c[i], v[i]);
            if hi.is_nan() || lo.is_nan() || cl.is_nan() || vo.is_nan() {
                return f64::NAN;
            }
            pv += (hi + lo + cl) / 3.0 * vo;
            vol += vo;
            if vol > 0.0 { pv / vol } else { f64::NAN }
        })
        .collect()
}
