//! Exact decimal arithmetic for number formatting: a number's shortest round-trip digits (what
//! V8 formats: `(1.005).toLocaleString(undefined, {maximumFractionDigits: 2})` is "1.01"
//! although `(1.005).toFixed(2)` is "1.00"), BigInt and numeric-string digits, and rounding
//! at a decimal position with the ECMA-402 rounding modes and increments.

use std::cmp::Ordering;

/// `roundingMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RoundingMode {
    Ceil,
    Floor,
    Expand,
    Trunc,
    HalfCeil,
    HalfFloor,
    HalfExpand,
    HalfTrunc,
    HalfEven,
}

impl RoundingMode {
    pub const NAMES: [&'static str; 9] = [
        "ceil",
        "floor",
        "expand",
        "trunc",
        "halfCeil",
        "halfFloor",
        "halfExpand",
        "halfTrunc",
        "halfEven",
    ];
    const ALL: [Self; 9] = [
        Self::Ceil,
        Self::Floor,
        Self::Expand,
        Self::Trunc,
        Self::HalfCeil,
        Self::HalfFloor,
        Self::HalfExpand,
        Self::HalfTrunc,
        Self::HalfEven,
    ];

    pub fn from_name(s: &str) -> Option<Self> {
        Self::NAMES.iter().position(|n| *n == s).map(|i| Self::ALL[i])
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|m| *m == self).unwrap_or(6)]
    }

    /// The mode on the magnitude of a number of the given sign.
    fn unsigned(self, negative: bool) -> Unsigned {
        match (self, negative) {
            (Self::Ceil, false) | (Self::Floor, true) | (Self::Expand, _) => Unsigned::Infinity,
            (Self::Ceil, true) | (Self::Floor, false) | (Self::Trunc, _) => Unsigned::Zero,
            (Self::HalfCeil, false) | (Self::HalfFloor, true) | (Self::HalfExpand, _) => {
                Unsigned::HalfInfinity
            }
            (Self::HalfCeil, true) | (Self::HalfFloor, false) | (Self::HalfTrunc, _) => {
                Unsigned::HalfZero
            }
            (Self::HalfEven, _) => Unsigned::HalfEven,
        }
    }
}

#[derive(Clone, Copy)]
enum Unsigned {
    Infinity,
    Zero,
    HalfInfinity,
    HalfZero,
    HalfEven,
}

/// A non-negative decimal: `0.d₀d₁d₂… × 10^exp`; no leading or trailing zero digits, and no
/// digits at all for zero.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Decimal {
    pub digits: Vec<u8>,
    pub exp: i32,
}

impl Decimal {
    pub fn zero() -> Self {
        Self::default()
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The shortest digits that round-trip to `x` (`|x|` is used).
    pub fn from_f64(x: f64) -> Self {
        if x == 0.0 || !x.is_finite() {
            return Self::zero();
        }
        // `{:e}` prints the shortest round-trip digits: "1.2345e2".
        let s = format!("{:e}", x.abs());
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let digits: Vec<u8> =
            mantissa.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
        Self::normalized(digits, exp + 1)
    }

    /// Digits of an unsigned decimal integer string.
    pub fn from_integer_str(s: &str) -> Self {
        let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
        let len = i32::try_from(digits.len()).unwrap_or(i32::MAX);
        Self::normalized(digits, len)
    }

    /// An unsigned decimal literal (`123.45e-6`, `.5`, `5.`); `None` when malformed.
    pub fn parse_decimal_literal(s: &str) -> Option<Self> {
        let (mantissa, exp) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let exp: i64 = match exp {
            Some(e) => {
                let body = e.strip_prefix(['+', '-']).unwrap_or(e);
                if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                // Exponents past the i32 range become 0 or Infinity upstream; clamp.
                e.parse::<i64>().unwrap_or(if e.starts_with('-') { -1_000_000 } else { 1_000_000 })
            }
            None => 0,
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut digits: Vec<u8> = int.bytes().map(|b| b - b'0').collect();
        digits.extend(frac.bytes().map(|b| b - b'0'));
        let point = i64::try_from(int.len()).unwrap_or(0) + exp;
        let point = i32::try_from(point.clamp(-1_000_000, 1_000_000)).unwrap_or(0);
        Some(Self::normalized(digits, point))
    }

    fn normalized(mut digits: Vec<u8>, mut exp: i32) -> Self {
        let lead = digits.iter().take_while(|d| **d == 0).count();
        digits.drain(..lead);
        exp -= i32::try_from(lead).unwrap_or(0);
        while digits.last() == Some(&0) {
            digits.pop();
        }
        if digits.is_empty() {
            return Self::zero();
        }
        Self { digits, exp }
    }

    /// Multiplies by 10^n.
    pub fn shift(&mut self, n: i32) {
        if !self.is_zero() {
            self.exp += n;
        }
    }

    /// floor(log10(x)); 0 for zero.
    pub fn magnitude(&self) -> i32 {
        if self.is_zero() { 0 } else { self.exp - 1 }
    }

    /// Whether the value has no fractional part.
    pub fn is_integer(&self) -> bool {
        i32::try_from(self.digits.len()).unwrap_or(i32::MAX) <= self.exp || self.is_zero()
    }

    /// Rounds to a multiple of `increment × 10^pos` with `mode` (applied to a number of sign
    /// `negative`).
    pub fn round(&mut self, pos: i32, increment: u32, mode: RoundingMode, negative: bool) {
        if self.is_zero() {
            return;
        }
        let len = i32::try_from(self.digits.len()).unwrap_or(i32::MAX);
        // Digits with place value ≥ 10^pos: the quotient q = floor(x / 10^pos).
        let keep = self.exp - pos;
        if keep >= len && increment == 1 {
            return;
        }
        let mut q: Vec<u8> = if keep <= 0 {
            Vec::new()
        } else {
            let k = usize::try_from(keep).unwrap_or(0);
            let mut q: Vec<u8> = self.digits.iter().take(k).copied().collect();
            q.resize(k, 0);
            q
        };
        // The fraction 0.f below the position, against one half.
        let frac = if keep >= len || keep < 0 {
            Ordering::Less
        } else {
            let k = usize::try_from(keep).unwrap_or(0);
            let first = self.digits[k];
            if first < 5 {
                Ordering::Less
            } else if first > 5 || self.digits.len() > k + 1 {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        };
        let frac_zero = keep >= len;
        let inc = u64::from(increment.max(1));
        let r = mod_small(&q, inc);
        if r == 0 && frac_zero {
            return;
        }
        // Compare 2·(r + f) with the increment.
        let twice = 2 * r;
        let half = if twice > inc {
            Ordering::Greater
        } else if twice == inc {
            if frac_zero { Ordering::Equal } else { Ordering::Greater }
        } else if twice + 1 == inc {
            if frac_zero { Ordering::Less } else { frac }
        } else {
            Ordering::Less
        };
        let up = match mode.unsigned(negative) {
            Unsigned::Zero => false,
            Unsigned::Infinity => true,
            Unsigned::HalfInfinity => half != Ordering::Less,
            Unsigned::HalfZero => half == Ordering::Greater,
            Unsigned::HalfEven => {
                half == Ordering::Greater
                    || (half == Ordering::Equal && mod_small(&q, 2 * inc) >= inc)
            }
        };
        sub_small(&mut q, r);
        if up {
            add_small(&mut q, inc);
        }
        let qlen = i32::try_from(q.len()).unwrap_or(i32::MAX);
        *self = Self::normalized(q, qlen + pos);
    }

    /// Integer digits (at least `min_int`, zero-padded) and fraction digits (at least
    /// `min_frac`, zero-padded; no more than the value has).
    pub fn to_strings(&self, min_int: usize, min_frac: usize) -> (String, String) {
        let len = self.digits.len();
        let mut int = String::new();
        let mut frac = String::new();
        if self.exp > 0 {
            let e = usize::try_from(self.exp).unwrap_or(0);
            for i in 0..e {
                int.push(char::from(b'0' + self.digits.get(i).copied().unwrap_or(0)));
            }
            for d in self.digits.iter().skip(e) {
                frac.push(char::from(b'0' + d));
            }
        } else {
            let zeros = usize::try_from(-self.exp).unwrap_or(0);
            if len > 0 {
                frac.extend(std::iter::repeat_n('0', zeros));
            }
            for d in &self.digits {
                frac.push(char::from(b'0' + d));
            }
        }
        while int.len() < min_int {
            int.insert(0, '0');
        }
        if int.is_empty() {
            int.push('0');
        }
        while frac.len() < min_frac {
            frac.push('0');
        }
        (int, frac)
    }
}

fn mod_small(q: &[u8], m: u64) -> u64 {
    q.iter().fold(0u64, |acc, d| (acc * 10 + u64::from(*d)) % m)
}

fn sub_small(q: &mut [u8], mut v: u64) {
    let mut i = q.len();
    let mut borrow = 0i64;
    while i > 0 && (v > 0 || borrow > 0) {
        i -= 1;
        let sub = i64::try_from(v % 10).unwrap_or(0) + borrow;
        v /= 10;
        let mut d = i64::from(q[i]) - sub;
        borrow = 0;
        if d < 0 {
            d += 10;
            borrow = 1;
        }
        q[i] = u8::try_from(d).unwrap_or(0);
    }
}

fn add_small(q: &mut Vec<u8>, mut v: u64) {
    let mut i = q.len();
    let mut carry = 0u64;
    while v > 0 || carry > 0 {
        let add = v % 10 + carry;
        v /= 10;
        if i == 0 {
            q.insert(0, 0);
            i = 1;
        }
        i -= 1;
        let d = u64::from(q[i]) + add;
        q[i] = u8::try_from(d % 10).unwrap_or(0);
        carry = d / 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(x: f64, pos: i32, inc: u32, mode: RoundingMode) -> String {
        let mut d = Decimal::from_f64(x);
        d.round(pos, inc, mode, x < 0.0);
        let (i, f) = d.to_strings(1, 0);
        if f.is_empty() { i } else { format!("{i}.{f}") }
    }

    #[test]
    fn shortest_digits_and_rounding() {
        assert_eq!(Decimal::from_f64(1.005), Decimal { digits: vec![1, 0, 0, 5], exp: 1 });
        assert_eq!(round(1.005, -2, 1, RoundingMode::HalfExpand), "1.01");
        assert_eq!(round(2.345, -2, 1, RoundingMode::HalfExpand), "2.35");
        assert_eq!(round(2.5, 0, 1, RoundingMode::HalfEven), "2");
        assert_eq!(round(3.5, 0, 1, RoundingMode::HalfEven), "4");
        assert_eq!(round(999.95, -1, 1, RoundingMode::HalfExpand), "1000");
        assert_eq!(round(0.0004, -2, 1, RoundingMode::HalfExpand), "0");
        assert_eq!(round(0.0004, -2, 1, RoundingMode::Expand), "0.01");
        assert_eq!(round(1.234, -2, 5, RoundingMode::HalfExpand), "1.25");
        assert_eq!(round(1.224, -2, 5, RoundingMode::HalfExpand), "1.2");
        assert_eq!(round(-1.5, 0, 1, RoundingMode::Ceil), "1");
        assert_eq!(round(123456.0, 3, 1, RoundingMode::HalfExpand), "123000");
        assert_eq!(
            Decimal::parse_decimal_literal("1234.5600e-2").map(|d| d.to_strings(1, 0)),
            Some(("12".into(), "3456".into()))
        );
    }
}
