//! CLDR plural rules: the operands of a formatted number and the cardinal and ordinal
//! categories of en, de, fr and ja. A leaf of `intl`: `number` and `text_formats` use it.

use super::locale::Lang;

/// CLDR plural operands of a formatted number.
#[derive(Debug, Clone, Default)]
pub(super) struct Operands {
    /// The integer digits modulo 10^18: ICU reads at most 18 integer digits (so 10^21 counts
    /// as 0, and is "one" in French, as V8 shows).
    pub i_mod: u64,
    /// Number of visible fraction digits.
    pub v: usize,
    /// Visible fraction digits as an integer, without trailing zeros.
    pub t_zero: bool,
    /// Compact exponent (`c`/`e`).
    pub e: i32,
    /// NaN or Infinity: always "other".
    pub nan: bool,
}

impl Operands {
    /// From the integer and fraction digit strings of a formatted number.
    pub fn set(&mut self, int: &str, frac: &str) {
        let tail = &int[int.len().saturating_sub(18)..];
        self.i_mod = tail.parse().unwrap_or(0);
        self.v = frac.len();
        self.t_zero = frac.bytes().all(|b| b == b'0');
    }

    fn i_is(&self, n: u64) -> bool {
        self.i_mod == n
    }

    /// n (the absolute value) equals the integer `k`.
    fn n_is(&self, k: u64) -> bool {
        self.i_is(k) && self.t_zero
    }
}

/// The cardinal category.
pub(super) fn cardinal(lang: Lang, op: &Operands) -> &'static str {
    if op.nan {
        return "other";
    }
    match lang {
        Lang::En | Lang::De => {
            if op.i_is(1) && op.v == 0 {
                "one"
            } else {
                "other"
            }
        }
        // ICU evaluates the rules in key order: "many" before "one".
        Lang::Fr => {
            if (op.e == 0 && !op.i_is(0) && op.i_mod.is_multiple_of(1_000_000) && op.v == 0)
                || !(0..=5).contains(&op.e)
            {
                "many"
            } else if op.i_is(0) || op.i_is(1) {
                "one"
            } else {
                "other"
            }
        }
        Lang::Ja => "other",
    }
}

/// The ordinal category.
pub(super) fn ordinal(lang: Lang, op: &Operands) -> &'static str {
    if op.nan || !op.t_zero {
        return "other";
    }
    match lang {
        Lang::En => {
            let n10 = op.i_mod % 10;
            let n100 = op.i_mod % 100;
            if n10 == 1 && n100 != 11 {
                "one"
            } else if n10 == 2 && n100 != 12 {
                "two"
            } else if n10 == 3 && n100 != 13 {
                "few"
            } else {
                "other"
            }
        }
        Lang::Fr => {
            if op.n_is(1) {
                "one"
            } else {
                "other"
            }
        }
        Lang::De | Lang::Ja => "other",
    }
}

/// The categories `lang` has (`resolvedOptions().pluralCategories`).
pub(super) fn categories(lang: Lang, ordinal: bool) -> &'static [&'static str] {
    match (lang, ordinal) {
        (Lang::En | Lang::De, false) => &["one", "other"],
        (Lang::Fr, false) => &["many", "one", "other"],
        (Lang::Ja, _) | (Lang::De, true) => &["other"],
        (Lang::En, true) => &["few", "one", "two", "other"],
        (Lang::Fr, true) => &["one", "other"],
    }
}
