//! Demo values that are pure functions of (series, time), so a past day's value never changes
//! as the clock moves: hashes of lattice points, normal draws per time index, and a
//! mean-reverting (AR(1)) process evaluated at any index without walking from "now".
//!
//! Knows nothing of profiles, params or JSON.

/// SplitMix64 over three words: a fast, well-spread hash for lattice points and draws.
pub fn mix(a: u64, b: u64, c: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ c.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash as a number in `[0, 1)`.
pub fn unit_hash(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal draw that depends only on `(seed, k)` (Box–Muller on two hashes).
pub fn normal_at(seed: u64, k: i64) -> f64 {
    let u1 = 1.0 - unit_hash(mix(seed, k as u64, 1));
    let u2 = unit_hash(mix(seed, k as u64, 2));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A uniform draw in `[0, 1)` for the `j`-th quantity of period `k` of series `seed`.
pub fn uniform(seed: u64, k: i64, j: u64) -> f64 {
    unit_hash(mix(seed ^ j.wrapping_mul(0xa076_1d64_78bd_642f), k as u64, 3))
}

/// A standard normal draw for the `j`-th quantity of period `k` of series `seed`.
pub fn normal(seed: u64, k: i64, j: u64) -> f64 {
    normal_at(seed ^ j.wrapping_mul(0xe703_7ed1_a0b4_28db), k)
}

/// A mean-reverting series at indices `ks`: `mean` plus `vol` times the AR(1) path with
/// `phi = 1 - revert`, clamped to `[lo, hi]` (what a walk pulled toward `mean` looks like).
pub fn reverting(
    seed: u64,
    ks: &[i64],
    mean: f64,
    vol: f64,
    revert: f64,
    lo: f64,
    hi: f64,
) -> Vec<f64> {
    let phi = (1.0 - revert).clamp(0.0, 0.995);
    ar_path(seed, phi, ks).into_iter().map(|z| (mean + vol * z).clamp(lo, hi)).collect()
}

/// Terms after which an AR(1) weight `phi^j` is below 1e-3 (at most 2000).
fn memory(phi: f64) -> i64 {
    if phi <= 0.0 { 1 } else { ((1e-3f64).ln() / phi.ln()).ceil().clamp(1.0, 2000.0) as i64 }
}

/// Indices per block: values inside a block are computed by recurrence from the block's first
/// index, which is summed directly, so a value depends only on its index (bit for bit), never
/// on where a query started.
const BLOCK: i64 = 256;

/// `x_k = Σ_{j<m} φ^j ε_{k−j}` with `ε` = [`normal_at`], for each index in `ks` (ascending):
/// a stationary AR(1) path with unit innovations (standard deviation `1/√(1−φ²)`), the same
/// value at the same index whatever the range asked for.
pub fn ar_path(seed: u64, phi: f64, ks: &[i64]) -> Vec<f64> {
    let m = memory(phi);
    let tail = phi.powi(m as i32);
    let direct = |k: i64| {
        let mut w = 1.0;
        let mut s = 0.0;
        for j in 0..m {
            s += w * normal_at(seed, k - j);
            w *= phi;
        }
        s
    };
    let mut out = Vec::with_capacity(ks.len());
    let mut cur: Option<(i64, f64)> = None;
    for &k in ks {
        let block = k.div_euclid(BLOCK) * BLOCK;
        let (mut at, mut x) = match cur {
            Some((at, x)) if at <= k && at >= block => (at, x),
            _ => (block, direct(block)),
        };
        while at < k {
            at += 1;
            x = phi * x + normal_at(seed, at) - tail * normal_at(seed, at - m);
        }
        cur = Some((at, x));
        out.push(x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_depends_only_on_its_index() {
        let all: Vec<i64> = (1000..1600).collect();
        let whole = ar_path(7, 0.95, &all);
        let late = ar_path(7, 0.95, &all[400..]);
        assert_eq!(&whole[400..], &late[..], "bit for bit, whatever the start");
        let sparse = ar_path(7, 0.95, &[1001, 1300, 1599]);
        assert_eq!(sparse, vec![whole[1], whole[300], whole[599]]);
        assert_ne!(ar_path(8, 0.95, &all[..1]), whole[..1], "another series differs");
    }

    #[test]
    fn the_path_has_the_ar1_spread_and_persistence() {
        let phi: f64 = 0.9;
        let ks: Vec<i64> = (0..20_000).collect();
        let x = ar_path(3, phi, &ks);
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let want = 1.0 / (1.0 - phi * phi);
        assert!((var / want - 1.0).abs() < 0.15, "variance {var}, want {want}");
        let lag1 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum::<f64>() / n / var;
        assert!((lag1 - phi).abs() < 0.05, "lag-1 autocorrelation {lag1}");
    }
}
