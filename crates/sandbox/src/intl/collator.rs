//! `Intl.Collator` and `String.prototype.localeCompare`: the CLDR root collation as V8 applies
//! it for English, for Latin text. Characters are decomposed (NFD), mapped to collation
//! elements (primary: the base letter, with expansions such as æ → a e; secondary: accents
//! and letter variants such as ø; tertiary: case and compatibility variants), and compared
//! level by level as ICU does: base letters first, then accents, then case with lowercase
//! first. The weights come from V8 itself (`sandbox/intl-gen.js`). Characters outside the
//! Latin, punctuation and currency blocks sort after Latin letters by code point, which is
//! right for Greek, Cyrillic, kana and Han among themselves.
//!
//! Languages whose collation V8 tailors (Spanish ñ, Swedish å, Turkish ı, Cyrillic first in
//! Russian, …) are refused rather than sorted as English.

use std::cmp::Ordering;

use boa_engine::{Context, JsNativeError, JsResult, JsString, JsValue};

use super::data;
use super::locale::{LanguageTag, canonicalize_list, unsupported_locale};
use super::options::Options;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sensitivity {
    Base,
    Accent,
    Case,
    Variant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CaseFirst {
    Upper,
    Lower,
    Off,
}

/// A resolved `Intl.Collator`.
#[derive(Debug, Clone)]
pub(super) struct Collator {
    pub locale: String,
    pub search: bool,
    pub sensitivity: Sensitivity,
    pub ignore_punctuation: bool,
    pub numeric: bool,
    pub case_first: CaseFirst,
}

impl Collator {
    fn default_collator() -> Self {
        Self {
            locale: "en-US".into(),
            search: false,
            sensitivity: Sensitivity::Variant,
            ignore_punctuation: false,
            numeric: false,
            case_first: CaseFirst::Off,
        }
    }

    /// `localeCompare` without locales and options.
    pub fn default_compare(a: &JsString, b: &JsString) -> i32 {
        Self::default_collator().compare(a, b)
    }

    pub fn new(locales: &JsValue, options: &JsValue, ctx: &mut Context) -> JsResult<Self> {
        let requested = canonicalize_list(locales, ctx)?;
        let opts = Options::coerce(options, "Intl.Collator", ctx)?;
        let usage = opts.string_or("usage", &["sort", "search"], "sort", ctx)?;
        opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
        let collation = opts.string("collation", &[], ctx)?;
        if let Some(c) = &collation
            && !(3..=8).contains(&c.len())
        {
            return Err(JsNativeError::range()
                .with_message(format!("Invalid collation : {c}"))
                .into());
        }
        let numeric = opts.boolean("numeric", ctx)?;
        let case_first = opts.string("caseFirst", &["upper", "lower", "false"], ctx)?;
        let sensitivity =
            opts.string("sensitivity", &["base", "accent", "case", "variant"], ctx)?;
        let ignore_punctuation = opts.boolean("ignorePunctuation", ctx)?;

        let tag = requested
            .iter()
            .find(|t| data::ICU_LANGUAGES.binary_search(&t.language.as_str()).is_ok());
        let mut c = Self::default_collator();
        let mut keep = Vec::new();
        if let Some(tag) = tag {
            c.locale = resolve(tag)?;
            if let Some(co) = tag.keyword("co")
                && !matches!(co, "standard" | "search" | "emoji" | "eor")
            {
                // en has no tailored collations; other values are ignored by V8 too.
                let _ = co;
            }
            if let Some(kn) = tag.keyword("kn")
                && numeric.is_none()
            {
                c.numeric = kn.is_empty() || kn == "true";
                keep.push(if kn.is_empty() || kn == "true" {
                    "kn".to_owned()
                } else {
                    format!("kn-{kn}")
                });
            }
            if let Some(kf) = tag.keyword("kf")
                && case_first.is_none()
            {
                c.case_first = match kf {
                    "upper" => CaseFirst::Upper,
                    "lower" => CaseFirst::Lower,
                    _ => CaseFirst::Off,
                };
                keep.push(format!("kf-{kf}"));
            }
        }
        keep.sort();
        if !keep.is_empty() {
            c.locale = format!("{}-u-{}", c.locale, keep.join("-"));
        }
        if let Some(n) = numeric {
            c.numeric = n;
        }
        if let Some(cf) = case_first {
            c.case_first = match cf.as_str() {
                "upper" => CaseFirst::Upper,
                "lower" => CaseFirst::Lower,
                _ => CaseFirst::Off,
            };
        }
        c.search = usage == "search";
        c.sensitivity = match sensitivity.as_deref() {
            Some("base") => Sensitivity::Base,
            Some("accent") => Sensitivity::Accent,
            Some("case") => Sensitivity::Case,
            _ => Sensitivity::Variant,
        };
        c.ignore_punctuation = ignore_punctuation.unwrap_or(false);
        Ok(c)
    }

    pub fn resolved_options(&self) -> Vec<(&'static str, JsValue)> {
        let s = |v: &str| JsValue::from(JsString::from(v));
        vec![
            ("locale", s(&self.locale)),
            ("usage", s(if self.search { "search" } else { "sort" })),
            (
                "sensitivity",
                s(match self.sensitivity {
                    Sensitivity::Base => "base",
                    Sensitivity::Accent => "accent",
                    Sensitivity::Case => "case",
                    Sensitivity::Variant => "variant",
                }),
            ),
            ("ignorePunctuation", JsValue::from(self.ignore_punctuation)),
            ("collation", s("default")),
            ("numeric", JsValue::from(self.numeric)),
            (
                "caseFirst",
                s(match self.case_first {
                    CaseFirst::Upper => "upper",
                    CaseFirst::Lower => "lower",
                    CaseFirst::Off => "false",
                }),
            ),
        ]
    }

    /// -1, 0 or 1.
    pub fn compare(&self, a: &JsString, b: &JsString) -> i32 {
        if a == b {
            return 0;
        }
        let ea = self.elements(a);
        let eb = self.elements(b);
        match self.compare_elements(&ea, &eb) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }

    fn compare_elements(&self, a: &[Ce], b: &[Ce]) -> Ordering {
        let primaries = |e: &[Ce]| e.iter().filter(|c| c.p != 0).map(|c| c.p).collect::<Vec<_>>();
        let ord = primaries(a).cmp(&primaries(b));
        if ord != Ordering::Equal || self.sensitivity == Sensitivity::Base {
            return ord;
        }
        if self.sensitivity != Sensitivity::Case {
            let secondaries =
                |e: &[Ce]| e.iter().filter(|c| c.s != 0).map(|c| c.s).collect::<Vec<_>>();
            let ord = secondaries(a).cmp(&secondaries(b));
            if ord != Ordering::Equal || self.sensitivity == Sensitivity::Accent {
                return ord;
            }
        }
        // Case (and, for variant, the other tertiary differences).
        let upper_first = self.case_first == CaseFirst::Upper;
        let tertiaries = |e: &[Ce]| {
            e.iter()
                .filter(|c| c.p != 0 || (c.s != 0 && self.sensitivity != Sensitivity::Case))
                .map(|c| {
                    // The tertiary rank already orders lowercase before uppercase before
                    // compatibility variants (a < A < ª); upper-first puts case in front.
                    let case = if upper_first { u8::from(!c.upper) } else { u8::from(c.upper) };
                    match (self.sensitivity, upper_first) {
                        (Sensitivity::Case, _) => (case, 0),
                        (_, true) => (case, c.t),
                        (_, false) => (0, c.t),
                    }
                })
                .collect::<Vec<_>>()
        };
        tertiaries(a).cmp(&tertiaries(b))
    }

    /// Collation elements of a string.
    fn elements(&self, s: &JsString) -> Vec<Ce> {
        let chars: Vec<char> = s
            .code_points()
            .map(|c| match c {
                boa_engine::string::CodePoint::Unicode(c) => c,
                boa_engine::string::CodePoint::UnpairedSurrogate(_) => '\u{fffd}',
            })
            .collect();
        let mut out = Vec::with_capacity(chars.len() + 4);
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if self.numeric && c.is_ascii_digit() {
                let start = i;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                let run: Vec<char> =
                    chars[start..i].iter().copied().skip_while(|d| *d == '0').collect();
                let run = if run.is_empty() { vec!['0'] } else { run };
                let zero = primary_of('0');
                out.push(Ce { p: zero, s: COMMON, t: 0, upper: false });
                out.push(Ce {
                    p: 0x8000 + u32::try_from(run.len()).unwrap_or(0x7fff),
                    s: COMMON,
                    t: 0,
                    upper: false,
                });
                for d in run {
                    out.push(Ce { p: primary_of(d), s: COMMON, t: 0, upper: false });
                }
                continue;
            }
            self.push_char(c, &mut out, 0);
            i += 1;
        }
        out
    }

    fn push_char(&self, c: char, out: &mut Vec<Ce>, bump: u8) {
        let cp = u32::from(c);
        if let Ok(i) = data::COLLATION_DECOMPOSITIONS.binary_search_by_key(&cp, |(c, _)| *c) {
            for d in data::COLLATION_DECOMPOSITIONS[i].1.chars() {
                self.push_char(d, out, bump);
            }
            return;
        }
        if let Ok(i) = data::COLLATION_MARKS.binary_search_by_key(&cp, |(c, _)| *c) {
            out.push(Ce { p: 0, s: data::COLLATION_MARKS[i].1, t: 0, upper: false });
            return;
        }
        if let Ok(i) = data::COLLATION_COMPAT.binary_search_by_key(&cp, |(c, _)| *c) {
            for d in data::COLLATION_COMPAT[i].1.chars() {
                self.push_char(d, out, bump.saturating_add(8));
            }
            return;
        }
        if let Ok(i) = data::COLLATION.binary_search_by_key(&cp, |r| r.0) {
            let (_, p1, p2, sec, ter, variable) = data::COLLATION[i];
            if variable == 1 && self.ignore_punctuation {
                return;
            }
            let upper = c.is_uppercase();
            let t = ter.saturating_add(bump);
            out.push(Ce { p: u32::from(p1), s: if sec == 0 { COMMON } else { sec }, t, upper });
            if p2 != 0 {
                out.push(Ce { p: u32::from(p2), s: COMMON, t, upper });
            }
            return;
        }
        if c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
        {
            return;
        }
        if c.is_whitespace() {
            if self.ignore_punctuation {
                return;
            }
            out.push(Ce { p: primary_of(' '), s: COMMON, t: 1, upper: false });
            return;
        }
        // Outside the table: after the Latin letters, by (lowercase) code point; katakana
        // sorts with hiragana (a tertiary difference).
        if ('\u{30a1}'..='\u{30f6}').contains(&c) {
            let h = u32::from(c) - 0x60;
            out.push(Ce { p: 0x10000 + h, s: COMMON, t: 1 + bump, upper: false });
            return;
        }
        let mut lower = c.to_lowercase();
        let l = match (lower.next(), lower.next()) {
            (Some(l), None) => l,
            _ => c,
        };
        let upper = l != c;
        out.push(Ce { p: 0x10000 + u32::from(l), s: COMMON, t: u8::from(upper) + bump, upper });
    }
}

/// The common secondary weight (letters without accents).
const COMMON: u8 = 1;

#[derive(Debug, Clone, Copy)]
struct Ce {
    p: u32,
    s: u8,
    t: u8,
    upper: bool,
}

fn primary_of(c: char) -> u32 {
    data::COLLATION
        .binary_search_by_key(&u32::from(c), |r| r.0)
        .map_or(0, |i| u32::from(data::COLLATION[i].1))
}

/// The locale a Collator resolves to (V8 keeps the region only for en-US); languages whose
/// collation V8 tailors are refused.
fn resolve(tag: &LanguageTag) -> JsResult<String> {
    let lang = tag.language.as_str();
    if data::COLLATION_ROOT_LANGUAGES.binary_search(&lang).is_err() {
        return Err(unsupported_locale(&tag.to_canonical()).into());
    }
    if tag.script.as_deref().is_some_and(|s| s != "Latn") || !tag.variants.is_empty() {
        return Err(unsupported_locale(&tag.to_canonical()).into());
    }
    if let Some(region) = &tag.region
        && tag.script.is_none()
    {
        let full = format!("{lang}-{region}");
        if let Some((_, root_order)) = data::COLLATION_REGIONS.iter().find(|(t, _)| *t == full) {
            if !root_order {
                return Err(unsupported_locale(&tag.to_canonical()).into());
            }
            return Ok(full);
        }
    }
    if lang == "de" && tag.keyword("co") == Some("phonebk") {
        return Err(unsupported_locale(&tag.to_canonical()).into());
    }
    Ok(lang.to_owned())
}
