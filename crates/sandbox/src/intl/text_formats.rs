//! `Intl.PluralRules`, and the English `Intl.RelativeTimeFormat` and `Intl.ListFormat`: the
//! formatters built on the plural rules (`plural`) and `NumberFormat`.

use boa_engine::{Context, JsNativeError, JsResult, JsValue};

use super::Part;
use super::data;
use super::decimal::Decimal;
use super::locale::{Locale, canonicalize_list};
use super::number::{Digits, IntlNum, NumberFormat};
use super::options::Options;
use super::plural::{Operands, cardinal, categories, ordinal};
use super::shape::locale_rows;

/// A resolved `Intl.PluralRules`.
#[derive(Debug, Clone)]
pub(super) struct PluralRules {
    pub locale: Locale,
    pub ordinal: bool,
    pub digits: Digits,
}

impl PluralRules {
    pub fn new(locales: &JsValue, options: &JsValue, ctx: &mut Context) -> JsResult<Self> {
        let requested = canonicalize_list(locales, ctx)?;
        let opts = Options::coerce(options, "Intl.PluralRules", ctx)?;
        opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
        let ty = opts.string_or("type", &["cardinal", "ordinal"], "cardinal", ctx)?;
        let digits = Digits::read(&opts, 0, 3, false, ctx)?;
        let mut locale = Locale::resolve(&requested)?;
        // V8 reports the language only.
        locale.base = locale.tag.as_ref().map_or_else(|| "en".to_owned(), |t| t.language.clone());
        Ok(Self { locale, ordinal: ty == "ordinal", digits })
    }

    pub fn select(&self, n: f64) -> &'static str {
        let mut op = Operands::default();
        if !n.is_finite() {
            op.nan = true;
        } else {
            let mut d = Decimal::from_f64(n);
            let min_frac = self.digits.round(&mut d, n < 0.0);
            let (int, frac) = d.to_strings(1, min_frac);
            op.set(&int, &frac);
        }
        if self.ordinal { ordinal(self.locale.lang, &op) } else { cardinal(self.locale.lang, &op) }
    }

    pub fn resolved_options(&self) -> Vec<(&'static str, JsValue)> {
        let mut out = vec![
            ("locale", js(&self.locale.base)),
            ("type", js(if self.ordinal { "ordinal" } else { "cardinal" })),
        ];
        self.digits.resolved(&mut out);
        out
    }

    pub fn categories(&self) -> &'static [&'static str] {
        categories(self.locale.lang, self.ordinal)
    }
}

fn js(s: &str) -> JsValue {
    JsValue::from(boa_engine::JsString::from(s))
}

/// A resolved `Intl.RelativeTimeFormat` (English data).
#[derive(Debug, Clone)]
pub(super) struct RelativeTimeFormat {
    pub locale: Locale,
    pub style: usize,
    pub numeric_auto: bool,
    pub number: NumberFormat,
}

const RTF_STYLES: [&str; 3] = ["long", "short", "narrow"];

impl RelativeTimeFormat {
    pub fn new(locales: &JsValue, options: &JsValue, ctx: &mut Context) -> JsResult<Self> {
        let requested = canonicalize_list(locales, ctx)?;
        let opts = Options::coerce(options, "Intl.RelativeTimeFormat", ctx)?;
        opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
        let nu = opts.string("numberingSystem", &[], ctx)?;
        let locale = Locale::resolve(&requested)?;
        super::number::check_numbering(nu.as_deref(), &locale)?;
        let style = opts.string_or("style", &RTF_STYLES, "long", ctx)?;
        let numeric = opts.string_or("numeric", &["always", "auto"], "always", ctx)?;
        let number =
            NumberFormat::with_options(&requested, &Options::empty("Intl.NumberFormat"), ctx)?;
        Ok(Self {
            locale,
            style: RTF_STYLES.iter().position(|s| *s == style).unwrap_or(0),
            numeric_auto: numeric == "auto",
            number,
        })
    }

    pub fn resolved_options(&self) -> Vec<(&'static str, JsValue)> {
        vec![
            ("locale", js(&self.locale.base)),
            ("style", js(RTF_STYLES[self.style])),
            ("numeric", js(if self.numeric_auto { "auto" } else { "always" })),
            ("numberingSystem", js("latn")),
        ]
    }

    /// Parts; number parts carry the unit (singular).
    pub fn format_to_parts(
        &self,
        value: f64,
        unit: &str,
    ) -> JsResult<Vec<(Part, Option<&'static str>)>> {
        const UNITS: [&str; 8] =
            ["year", "quarter", "month", "week", "day", "hour", "minute", "second"];
        let singular = unit.strip_suffix('s').unwrap_or(unit);
        let Some(unit_name) = UNITS.iter().find(|u| **u == singular) else {
            return Err(JsNativeError::range()
                .with_message(format!(
                    "Invalid unit argument for Intl.RelativeTimeFormat.prototype.format() '{unit}'"
                ))
                .into());
        };
        if !value.is_finite() {
            return Err(JsNativeError::range()
                .with_message(
                    "Value need to be finite number for Intl.RelativeTimeFormat.prototype.format()",
                )
                .into());
        }
        let width = u8::try_from(self.style).unwrap_or(0);
        let rows = locale_rows(data::RELATIVE, self.locale.data_name);
        let find = |key: &str| {
            rows.iter()
                .flat_map(|r| r.iter())
                .find(|(u, w, k, _)| u == unit_name && *w == width && *k == key)
                .map(|(_, _, _, text)| *text)
        };
        if self.numeric_auto && value.fract() == 0.0 && value.abs() <= 2.0 {
            #[allow(clippy::cast_possible_truncation)]
            let key = (value as i64).to_string();
            if let Some(word) = find(&key) {
                return Ok(vec![(Part::new("literal", word), None)]);
            }
        }
        let past = value < 0.0 || (value == 0.0 && value.is_sign_negative());
        let abs = IntlNum::from_f64(value.abs());
        let number = self.number.format_to_parts(&abs);
        let mut op = Operands::default();
        let int: String =
            number.iter().filter(|p| p.ty == "integer").map(|p| p.value.as_str()).collect();
        let frac: String =
            number.iter().filter(|p| p.ty == "fraction").map(|p| p.value.as_str()).collect();
        op.set(&int, &frac);
        let cat = cardinal(self.locale.lang, &op);
        let dir = if past { "past" } else { "future" };
        let pattern = find(&format!("{dir}-{cat}"))
            .or_else(|| find(&format!("{dir}-other")))
            .unwrap_or("{0}");
        let mut out = Vec::new();
        let (before, after) = pattern.split_once("{0}").unwrap_or((pattern, ""));
        if !before.is_empty() {
            out.push((Part::new("literal", before), None));
        }
        out.extend(number.into_iter().map(|p| (p, Some(*unit_name))));
        if !after.is_empty() {
            out.push((Part::new("literal", after), None));
        }
        Ok(out)
    }
}

/// A resolved `Intl.ListFormat` (English data).
#[derive(Debug, Clone)]
pub(super) struct ListFormat {
    pub locale: Locale,
    pub ty: &'static str,
    pub style: &'static str,
}

impl ListFormat {
    pub fn new(locales: &JsValue, options: &JsValue, ctx: &mut Context) -> JsResult<Self> {
        let requested = canonicalize_list(locales, ctx)?;
        let opts = Options::coerce(options, "Intl.ListFormat", ctx)?;
        opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
        let ty =
            opts.string_or("type", &["conjunction", "disjunction", "unit"], "conjunction", ctx)?;
        let style = opts.string_or("style", &["long", "short", "narrow"], "long", ctx)?;
        let locale = Locale::resolve(&requested)?;
        let ty: &'static str = match ty.as_str() {
            "disjunction" => "disjunction",
            "unit" => "unit",
            _ => "conjunction",
        };
        let style: &'static str = match style.as_str() {
            "short" => "short",
            "narrow" => "narrow",
            _ => "long",
        };
        Ok(Self { locale, ty, style })
    }

    pub fn resolved_options(&self) -> Vec<(&'static str, JsValue)> {
        vec![("locale", js(&self.locale.base)), ("type", js(self.ty)), ("style", js(self.style))]
    }

    pub fn format_to_parts(&self, items: &[String]) -> Vec<Part> {
        let key = match (self.ty, self.style) {
            ("conjunction", "long") => "standard",
            ("conjunction", "short") => "standard-short",
            ("conjunction", _) => "standard-narrow",
            ("disjunction", "long") => "or",
            ("disjunction", "short") => "or-short",
            ("disjunction", _) => "or-narrow",
            (_, "long") => "unit",
            (_, "short") => "unit-short",
            _ => "unit-narrow",
        };
        let p = locale_rows(data::LISTS, self.locale.data_name)
            .iter()
            .flat_map(|r| r.iter())
            .find(|(k, _)| *k == key)
            .map_or(["{0}, {1}"; 4], |(_, p)| *p);
        let mut out = Vec::new();
        let n = items.len();
        if n == 0 {
            return out;
        }
        if n == 1 {
            out.push(Part::new("element", items[0].as_str()));
            return out;
        }
        // Build right to left: end pattern joins the last two, middle the rest, start the first.
        let glue = |pattern: &str, out: &mut Vec<Part>, first: &str| {
            let (a, rest) = pattern.split_once("{0}").unwrap_or(("", pattern));
            let (mid, b) = rest.split_once("{1}").unwrap_or((rest, ""));
            if !a.is_empty() {
                out.push(Part::new("literal", a));
            }
            out.push(Part::new("element", first));
            if !mid.is_empty() {
                out.push(Part::new("literal", mid));
            }
            b.to_owned()
        };
        let mut tail_literals = Vec::new();
        for (i, item) in items.iter().enumerate().take(n - 1) {
            let pattern = if n == 2 {
                p[0]
            } else if i == 0 {
                p[1]
            } else if i == n - 2 {
                p[3]
            } else {
                p[2]
            };
            tail_literals.push(glue(pattern, &mut out, item));
        }
        out.push(Part::new("element", items[n - 1].as_str()));
        for t in tail_literals.into_iter().rev() {
            if !t.is_empty() {
                out.push(Part::new("literal", t));
            }
        }
        out
    }
}
