//! `Intl.NumberFormat`: option resolution (`InitializeNumberFormat` of ECMA-402 2023, V8's
//! messages) and formatting to parts the way ICU does: decimal-exact rounding, grouping,
//! percent, currency (symbol, narrow symbol, code, name; accounting), compact, scientific and
//! engineering notation, and the sign displays.

use boa_engine::{Context, JsNativeError, JsResult, JsValue};

use super::Part;
use super::data;
use super::decimal::{Decimal, RoundingMode};
use super::locale::{Lang, Locale, canonicalize_list, unsupported};
use super::options::{Options, default_number_option};
use super::plural;
use super::shape::NumberData;

const SERVICE: &str = "Intl.NumberFormat";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Decimal,
    Percent,
    Currency,
    Unit,
}

/// The units ECMA-402 sanctions (simple units; `X-per-Y` combines two of them).
const SANCTIONED_UNITS: [&str; 45] = [
    "acre",
    "bit",
    "byte",
    "celsius",
    "centimeter",
    "day",
    "degree",
    "fahrenheit",
    "fluid-ounce",
    "foot",
    "gallon",
    "gigabit",
    "gigabyte",
    "gram",
    "hectare",
    "hour",
    "inch",
    "kilobit",
    "kilobyte",
    "kilogram",
    "kilometer",
    "liter",
    "megabit",
    "megabyte",
    "meter",
    "microsecond",
    "mile",
    "mile-scandinavian",
    "milliliter",
    "millimeter",
    "millisecond",
    "minute",
    "month",
    "nanosecond",
    "ounce",
    "percent",
    "petabyte",
    "pound",
    "second",
    "stone",
    "terabit",
    "terabyte",
    "week",
    "yard",
    "year",
];

fn well_formed_unit(unit: &str) -> bool {
    if SANCTIONED_UNITS.contains(&unit) {
        return true;
    }
    unit.split_once("-per-")
        .is_some_and(|(a, b)| SANCTIONED_UNITS.contains(&a) && SANCTIONED_UNITS.contains(&b))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CurrencyDisplay {
    Symbol,
    NarrowSymbol,
    Code,
    Name,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Notation {
    Standard,
    Scientific,
    Engineering,
    Compact,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SignDisplay {
    Auto,
    Never,
    Always,
    ExceptZero,
    Negative,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grouping {
    Auto,
    Always,
    Min2,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RoundingType {
    Fraction,
    Significant,
    MorePrecision,
    LessPrecision,
}

/// Digit options (`SetNumberFormatDigitOptions`), shared with `Intl.PluralRules`.
#[derive(Debug, Clone)]
pub(super) struct Digits {
    pub min_int: usize,
    pub min_frac: u32,
    pub max_frac: u32,
    pub min_sig: u32,
    pub max_sig: u32,
    pub rounding_type: RoundingType,
    /// Which of the pairs `resolvedOptions` shows.
    pub show_sig: bool,
    pub show_frac: bool,
    pub increment: u32,
    pub mode: RoundingMode,
    pub strip_if_integer: bool,
    /// `roundingPriority` as resolved ("auto", "morePrecision", "lessPrecision").
    pub priority: &'static str,
}

impl Digits {
    /// The defaults of a plain decimal formatter (0–3 fraction digits).
    pub fn plain() -> Self {
        Self {
            min_int: 1,
            min_frac: 0,
            max_frac: 3,
            min_sig: 1,
            max_sig: 21,
            rounding_type: RoundingType::Fraction,
            show_sig: false,
            show_frac: true,
            increment: 1,
            mode: RoundingMode::HalfExpand,
            strip_if_integer: false,
            priority: "auto",
        }
    }

    /// Reads the digit options.
    pub fn read(
        opts: &Options,
        mnfd_default: u32,
        mut mxfd_default: u32,
        compact: bool,
        ctx: &mut Context,
    ) -> JsResult<Self> {
        let min_int = opts.number("minimumIntegerDigits", 1, 21, ctx)?.unwrap_or(1);
        let mnfd = opts.get("minimumFractionDigits", ctx)?;
        let mxfd = opts.get("maximumFractionDigits", ctx)?;
        let mnsd = opts.get("minimumSignificantDigits", ctx)?;
        let mxsd = opts.get("maximumSignificantDigits", ctx)?;
        let increment = opts.number("roundingIncrement", 1, 5000, ctx)?.unwrap_or(1);
        const INCREMENTS: [u32; 15] =
            [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000];
        if !INCREMENTS.contains(&increment) {
            return Err(JsNativeError::range()
                .with_message("roundingIncrement value is out of range.")
                .into());
        }
        let mode = opts.string_or("roundingMode", &RoundingMode::NAMES, "halfExpand", ctx)?;
        let mode = RoundingMode::from_name(&mode).unwrap_or(RoundingMode::HalfExpand);
        let priority = opts.string_or(
            "roundingPriority",
            &["auto", "morePrecision", "lessPrecision"],
            "auto",
            ctx,
        )?;
        let strip =
            opts.string_or("trailingZeroDisplay", &["auto", "stripIfInteger"], "auto", ctx)?;
        if increment != 1 {
            mxfd_default = mnfd_default;
        }
        let has_sd = !mnsd.is_undefined() || !mxsd.is_undefined();
        let has_fd = !mnfd.is_undefined() || !mxfd.is_undefined();
        let (mut need_sd, mut need_fd) = (true, true);
        if priority == "auto" {
            need_sd = has_sd;
            if need_sd || (!has_fd && compact) {
                need_fd = false;
            }
        }
        let mut d = Self::plain();
        d.min_int = usize::try_from(min_int).unwrap_or(1);
        d.increment = increment;
        d.mode = mode;
        d.strip_if_integer = strip == "stripIfInteger";
        d.show_sig = need_sd;
        d.show_frac = need_fd;
        if need_sd {
            if has_sd {
                let min = default_number_option(&mnsd, 1, 21, "minimumSignificantDigits", ctx)?
                    .unwrap_or(1);
                let max = default_number_option(&mxsd, min, 21, "maximumSignificantDigits", ctx)?
                    .unwrap_or(21);
                d.min_sig = min;
                d.max_sig = max;
            } else {
                d.min_sig = 1;
                d.max_sig = 21;
            }
        }
        if need_fd {
            if has_fd {
                let min = default_number_option(&mnfd, 0, 20, "minimumFractionDigits", ctx)?;
                let max = default_number_option(&mxfd, 0, 20, "maximumFractionDigits", ctx)?;
                let (min, max) = match (min, max) {
                    (None, Some(max)) => (mnfd_default.min(max), max),
                    (Some(min), None) => (min, mxfd_default.max(min)),
                    (Some(min), Some(max)) if min > max => {
                        return Err(JsNativeError::range()
                            .with_message("maximumFractionDigits value is out of range.")
                            .into());
                    }
                    (Some(min), Some(max)) => (min, max),
                    (None, None) => (mnfd_default, mxfd_default),
                };
                d.min_frac = min;
                d.max_frac = max;
            } else {
                d.min_frac = mnfd_default;
                d.max_frac = mxfd_default;
            }
        }
        if !need_sd && !need_fd {
            d.min_frac = 0;
            d.max_frac = 0;
            d.min_sig = 1;
            d.max_sig = 2;
            d.rounding_type = RoundingType::MorePrecision;
            d.priority = "morePrecision";
            d.show_sig = true;
            d.show_frac = true;
        } else if priority == "auto" {
            d.rounding_type =
                if has_sd { RoundingType::Significant } else { RoundingType::Fraction };
        } else if priority == "morePrecision" {
            d.rounding_type = RoundingType::MorePrecision;
            d.priority = "morePrecision";
        } else {
            d.rounding_type = RoundingType::LessPrecision;
            d.priority = "lessPrecision";
        }
        if increment != 1 {
            if d.rounding_type != RoundingType::Fraction {
                return Err(JsNativeError::typ()
                    .with_message("RoundingType is not fractionDigits")
                    .into());
            }
            if d.max_frac != d.min_frac {
                return Err(JsNativeError::range()
                    .with_message("maximumFractionDigits not equal to minimumFractionDigits")
                    .into());
            }
        }
        Ok(d)
    }

    /// Rounds `x` (of sign `negative`) in place; returns the number of fraction digits to show
    /// at least.
    pub fn round(&self, x: &mut Decimal, negative: bool) -> usize {
        let frac = |x: &mut Decimal| -> (i32, usize) {
            let pos = -i32::try_from(self.max_frac).unwrap_or(0);
            x.round(pos, self.increment, self.mode, negative);
            (pos, self.min_frac as usize)
        };
        let sig = |x: &mut Decimal| -> (i32, usize) {
            let p = i32::try_from(self.max_sig).unwrap_or(21);
            let before = if x.is_zero() { 1 } else { x.exp };
            x.round(before - p, 1, self.mode, negative);
            let e = if x.is_zero() { 1 } else { x.exp };
            // The rounding magnitude after a carry (999.5 → 1000) moves up with it.
            let magnitude = e - p;
            let min = i32::try_from(self.min_sig).unwrap_or(1) - e;
            (magnitude, usize::try_from(min.max(0)).unwrap_or(0))
        };
        let min_frac = match self.rounding_type {
            RoundingType::Fraction => frac(x).1,
            RoundingType::Significant => sig(x).1,
            RoundingType::MorePrecision | RoundingType::LessPrecision => {
                let mut s = x.clone();
                let (sm, smin) = sig(&mut s);
                let mut f = x.clone();
                let (fm, fmin) = frac(&mut f);
                let pick_sig = if self.rounding_type == RoundingType::MorePrecision {
                    sm <= fm
                } else {
                    sm > fm
                };
                if pick_sig {
                    *x = s;
                    smin
                } else {
                    *x = f;
                    fmin
                }
            }
        };
        if self.strip_if_integer && x.is_integer() { 0 } else { min_frac }
    }

    /// The digit entries of `resolvedOptions`, in V8's order.
    pub fn resolved(&self, out: &mut Vec<(&'static str, JsValue)>) {
        out.push(("minimumIntegerDigits", JsValue::from(self.min_int as u32)));
        if self.show_sig && self.show_frac {
            out.push(("minimumSignificantDigits", self.min_sig.into()));
            out.push(("maximumSignificantDigits", self.max_sig.into()));
            out.push(("minimumFractionDigits", self.min_frac.into()));
            out.push(("maximumFractionDigits", self.max_frac.into()));
        } else if self.show_sig {
            out.push(("minimumSignificantDigits", self.min_sig.into()));
            out.push(("maximumSignificantDigits", self.max_sig.into()));
        } else {
            out.push(("minimumFractionDigits", self.min_frac.into()));
            out.push(("maximumFractionDigits", self.max_frac.into()));
        }
    }
}

/// A value to format: `ToIntlMathematicalValue`.
#[derive(Debug, Clone)]
pub(super) enum IntlNum {
    NaN,
    Infinity(bool),
    Finite(bool, Decimal),
}

impl IntlNum {
    pub fn from_f64(x: f64) -> Self {
        if x.is_nan() {
            Self::NaN
        } else if x.is_infinite() {
            Self::Infinity(x < 0.0)
        } else {
            Self::Finite(x.is_sign_negative(), Decimal::from_f64(x))
        }
    }

    /// `ToIntlMathematicalValue`: BigInts and numeric strings keep all their digits.
    pub fn from_value(v: &JsValue, ctx: &mut Context) -> JsResult<Self> {
        let prim = if v.is_object() {
            v.to_primitive(ctx, boa_engine::value::PreferredType::Number)?
        } else {
            v.clone()
        };
        if let Some(b) = prim.as_bigint() {
            let s = b.to_string();
            let negative = s.starts_with('-');
            return Ok(Self::Finite(negative, Decimal::from_integer_str(&s)));
        }
        if let Some(s) = prim.as_string() {
            let text = s.to_std_string_escaped();
            if let Some(n) = Self::parse_string(&text) {
                return Ok(n);
            }
        }
        Ok(Self::from_f64(prim.to_number(ctx)?))
    }

    /// A decimal `StringNumericLiteral` exactly; `None` for what `ToNumber` handles
    /// (hexadecimal and other radix literals, malformed text).
    fn parse_string(text: &str) -> Option<Self> {
        let t = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if t.is_empty() {
            return Some(Self::Finite(false, Decimal::zero()));
        }
        let (negative, body) = match t.as_bytes()[0] {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        if body == "Infinity" {
            return Some(Self::Infinity(negative));
        }
        if body.len() > 1 && body.starts_with('0') && body.as_bytes()[1].is_ascii_alphabetic() {
            return None;
        }
        match Decimal::parse_decimal_literal(body) {
            // Beyond the double range V8 formats ∞, as ToNumber would.
            Some(_) if body.parse::<f64>().is_ok_and(f64::is_infinite) => {
                Some(Self::Infinity(negative))
            }
            Some(d) => Some(Self::Finite(negative, d)),
            None => Some(Self::NaN),
        }
    }

    pub fn is_negative(&self) -> bool {
        matches!(self, Self::Infinity(true) | Self::Finite(true, _))
    }
}

/// A resolved `Intl.NumberFormat`.
#[derive(Debug, Clone)]
pub(super) struct NumberFormat {
    pub locale: Locale,
    pub locale_str: String,
    pub style: Style,
    pub currency: Option<String>,
    pub currency_display: CurrencyDisplay,
    pub accounting: bool,
    pub unit: Option<String>,
    /// 0 long, 1 short, 2 narrow.
    pub unit_display: u8,
    pub digits: Digits,
    pub grouping: Grouping,
    pub notation: Notation,
    pub compact_long: bool,
    pub sign: SignDisplay,
}

/// Numbering systems V8 knows: requesting one of them (other than latn) is refused here.
const NUMBERING_SYSTEMS: &[&str] = &[
    "adlm", "ahom", "arab", "arabext", "bali", "beng", "bhks", "brah", "cakm", "cham", "deva",
    "diak", "fullwide", "gong", "gonm", "gujr", "guru", "hanidec", "hmng", "hmnp", "java", "kali",
    "kawi", "khmr", "knda", "lana", "lanatham", "laoo", "lepc", "limb", "mathbold", "mathdbl",
    "mathmono", "mathsanb", "mathsans", "mlym", "modi", "mong", "mroo", "mtei", "mymr", "mymrshan",
    "mymrtlng", "nagm", "newa", "nkoo", "olck", "orya", "osma", "rohg", "saur", "segment", "shrd",
    "sind", "sinh", "sora", "sund", "takr", "talu", "tamldec", "telu", "thai", "tibt", "tirh",
    "tnsa", "vaii", "wara", "wcho",
];

/// Resolves the numbering system (only `latn` is implemented); returns whether `-u-nu-latn`
/// stays in the resolved locale.
pub(super) fn check_numbering(option: Option<&str>, locale: &Locale) -> JsResult<bool> {
    if let Some(nu) = option {
        let well_formed =
            (3..=8).contains(&nu.len()) && nu.bytes().all(|b| b.is_ascii_alphanumeric());
        if !well_formed {
            return Err(JsNativeError::range()
                .with_message(format!("Invalid numberingSystem : {nu}"))
                .into());
        }
        if nu != "latn" && NUMBERING_SYSTEMS.contains(&nu) {
            return Err(unsupported(format!("numberingSystem '{nu}'")).into());
        }
    }
    match locale.keyword("nu") {
        Some(nu) if nu != "latn" && NUMBERING_SYSTEMS.contains(&nu) && option.is_none() => {
            Err(unsupported(format!("numbering system '{nu}' (-u-nu-{nu})")).into())
        }
        Some("latn") => Ok(option.is_none_or(|o| o == "latn")),
        _ => Ok(false),
    }
}

/// The default fraction digits of a currency.
pub(super) fn currency_digits(code: &str) -> u32 {
    data::CURRENCY_DIGITS.iter().find(|(c, _)| *c == code).map_or(2, |(_, d)| u32::from(*d))
}

impl NumberFormat {
    /// `InitializeNumberFormat`.
    pub fn new(locales: &JsValue, options: &JsValue, ctx: &mut Context) -> JsResult<Self> {
        let requested = canonicalize_list(locales, ctx)?;
        let opts = Options::coerce(options, SERVICE, ctx)?;
        Self::with_options(&requested, &opts, ctx)
    }

    pub fn with_options(
        requested: &[super::locale::LanguageTag],
        opts: &Options,
        ctx: &mut Context,
    ) -> JsResult<Self> {
        opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
        let nu = opts.string("numberingSystem", &[], ctx)?;
        let locale = Locale::resolve(requested)?;
        let keep_nu = check_numbering(nu.as_deref(), &locale)?;
        let locale_str =
            if keep_nu { format!("{}-u-nu-latn", locale.base) } else { locale.base.clone() };

        let style =
            opts.string_or("style", &["decimal", "percent", "currency", "unit"], "decimal", ctx)?;
        let currency = opts.string("currency", &[], ctx)?;
        if let Some(c) = &currency
            && !(c.len() == 3 && c.bytes().all(|b| b.is_ascii_alphabetic()))
        {
            return Err(JsNativeError::range()
                .with_message(format!("Invalid currency code : {c}"))
                .into());
        }
        let currency_display = opts.string_or(
            "currencyDisplay",
            &["code", "symbol", "narrowSymbol", "name"],
            "symbol",
            ctx,
        )?;
        let currency_sign =
            opts.string_or("currencySign", &["standard", "accounting"], "standard", ctx)?;
        let unit = opts.string("unit", &[], ctx)?;
        let unit_display =
            opts.string_or("unitDisplay", &["short", "narrow", "long"], "short", ctx)?;
        let style = match style.as_str() {
            "percent" => Style::Percent,
            "currency" => Style::Currency,
            "unit" => Style::Unit,
            _ => Style::Decimal,
        };
        if let Some(u) = &unit
            && !well_formed_unit(u)
        {
            return Err(JsNativeError::range()
                .with_message(format!("Invalid unit argument for Intl.NumberFormat() '{u}'"))
                .into());
        }
        if style == Style::Unit && unit.is_none() {
            return Err(JsNativeError::typ()
                .with_message("Invalid unit argument for Intl.NumberFormat() ''")
                .into());
        }
        let unit_display = match unit_display.as_str() {
            "long" => 0,
            "narrow" => 2,
            _ => 1,
        };
        if style == Style::Unit
            && let Some(u) = &unit
            && unit_patterns(&locale, u, unit_display).is_none()
        {
            return Err(unsupported(format!("unit '{u}' for locale '{}'", locale.base)).into());
        }
        let currency = currency.map(|c| c.to_ascii_uppercase());
        if style == Style::Currency && currency.is_none() {
            return Err(JsNativeError::typ()
                .with_message("Currency code is required with currency style.")
                .into());
        }
        let currency_display = match currency_display.as_str() {
            "code" => CurrencyDisplay::Code,
            "narrowSymbol" => CurrencyDisplay::NarrowSymbol,
            "name" => CurrencyDisplay::Name,
            _ => CurrencyDisplay::Symbol,
        };
        if style == Style::Currency
            && currency_display == CurrencyDisplay::Name
            && locale.lang != Lang::En
            && let Some(code) = &currency
            // A code CLDR does not know is shown as is; known ones need their names here.
            && data::EN_CURRENCY_NAMES.iter().any(|(c, _, _)| *c == code)
            && currency_name(&locale, code, "other").is_none()
        {
            return Err(unsupported(format!(
                "currencyDisplay 'name' of {code} for locale '{}'",
                locale.base
            ))
            .into());
        }
        let (mnfd, mxfd) = match style {
            Style::Currency => {
                let d = currency_digits(currency.as_deref().unwrap_or("USD"));
                (d, d)
            }
            Style::Percent => (0, 0),
            Style::Decimal | Style::Unit => (0, 3),
        };
        let notation = opts.string_or(
            "notation",
            &["standard", "scientific", "engineering", "compact"],
            "standard",
            ctx,
        )?;
        let notation = match notation.as_str() {
            "scientific" => Notation::Scientific,
            "engineering" => Notation::Engineering,
            "compact" => Notation::Compact,
            _ => Notation::Standard,
        };
        let digits = Digits::read(opts, mnfd, mxfd, notation == Notation::Compact, ctx)?;
        let compact_display = opts.string_or("compactDisplay", &["short", "long"], "short", ctx)?;
        let default_grouping =
            if notation == Notation::Compact { Grouping::Min2 } else { Grouping::Auto };
        let grouping = {
            let v = opts.get("useGrouping", ctx)?;
            if v.is_undefined() {
                default_grouping
            } else if v.as_boolean() == Some(true) {
                Grouping::Always
            } else if !v.to_boolean() {
                Grouping::Off
            } else {
                let s = v.to_string(ctx)?.to_std_string_escaped();
                match s.as_str() {
                    "true" | "false" => default_grouping,
                    "min2" => Grouping::Min2,
                    "auto" => Grouping::Auto,
                    "always" => Grouping::Always,
                    _ => {
                        return Err(JsNativeError::range()
                            .with_message(format!(
                                "Value {s} out of range for Intl.NumberFormat options property useGrouping"
                            ))
                            .into());
                    }
                }
            }
        };
        let sign = opts.string_or(
            "signDisplay",
            &["auto", "never", "always", "exceptZero", "negative"],
            "auto",
            ctx,
        )?;
        let sign = match sign.as_str() {
            "never" => SignDisplay::Never,
            "always" => SignDisplay::Always,
            "exceptZero" => SignDisplay::ExceptZero,
            "negative" => SignDisplay::Negative,
            _ => SignDisplay::Auto,
        };
        Ok(Self {
            locale,
            locale_str,
            style,
            currency,
            currency_display,
            accounting: currency_sign == "accounting",
            unit: if style == Style::Unit { unit } else { None },
            unit_display,
            digits,
            grouping,
            notation,
            compact_long: compact_display == "long",
            sign,
        })
    }

    fn data(&self) -> &'static NumberData {
        self.locale.number_data()
    }

    /// `resolvedOptions()` entries in V8's order.
    pub fn resolved_options(&self) -> Vec<(&'static str, JsValue)> {
        let mut out: Vec<(&'static str, JsValue)> = vec![
            ("locale", js(&self.locale_str)),
            ("numberingSystem", js("latn")),
            (
                "style",
                js(match self.style {
                    Style::Decimal => "decimal",
                    Style::Percent => "percent",
                    Style::Currency => "currency",
                    Style::Unit => "unit",
                }),
            ),
        ];
        if let Some(u) = &self.unit {
            out.push(("unit", js(u)));
            out.push((
                "unitDisplay",
                js(["long", "short", "narrow"][usize::from(self.unit_display)]),
            ));
        }
        if self.style == Style::Currency {
            out.push(("currency", js(self.currency.as_deref().unwrap_or(""))));
            out.push((
                "currencyDisplay",
                js(match self.currency_display {
                    CurrencyDisplay::Symbol => "symbol",
                    CurrencyDisplay::NarrowSymbol => "narrowSymbol",
                    CurrencyDisplay::Code => "code",
                    CurrencyDisplay::Name => "name",
                }),
            ));
            // V8 reads this back from ICU, which has no accounting variant of `never`.
            let accounting = self.accounting && self.sign != SignDisplay::Never;
            out.push(("currencySign", js(if accounting { "accounting" } else { "standard" })));
        }
        self.digits.resolved(&mut out);
        out.push((
            "useGrouping",
            match self.grouping {
                Grouping::Auto => js("auto"),
                Grouping::Always => js("always"),
                Grouping::Min2 => js("min2"),
                Grouping::Off => JsValue::from(false),
            },
        ));
        out.push((
            "notation",
            js(match self.notation {
                Notation::Standard => "standard",
                Notation::Scientific => "scientific",
                Notation::Engineering => "engineering",
                Notation::Compact => "compact",
            }),
        ));
        if self.notation == Notation::Compact {
            out.push(("compactDisplay", js(if self.compact_long { "long" } else { "short" })));
        }
        out.push((
            "signDisplay",
            js(match self.sign {
                SignDisplay::Auto => "auto",
                SignDisplay::Never => "never",
                SignDisplay::Always => "always",
                SignDisplay::ExceptZero => "exceptZero",
                SignDisplay::Negative => "negative",
            }),
        ));
        out.push(("roundingMode", js(self.digits.mode.name())));
        out.push(("roundingIncrement", self.digits.increment.into()));
        out.push((
            "trailingZeroDisplay",
            js(if self.digits.strip_if_integer { "stripIfInteger" } else { "auto" }),
        ));
        // V8 reads this back from ICU, which loses the priority with stripIfInteger.
        let priority = if self.digits.strip_if_integer { "auto" } else { self.digits.priority };
        out.push(("roundingPriority", js(priority)));
        out
    }

    /// Formats to a string.
    pub fn format(&self, x: &IntlNum) -> String {
        self.format_to_parts(x).into_iter().map(|p| p.value).collect()
    }

    /// Formats to parts.
    pub fn format_to_parts(&self, x: &IntlNum) -> Vec<Part> {
        self.format_parts(x).0
    }

    /// Parts and whether the value rounded to zero.
    fn format_parts(&self, x: &IntlNum) -> (Vec<Part>, bool) {
        let data = self.data();
        let negative = x.is_negative();
        let mut number = Vec::new();
        let mut compact: Option<&'static str> = None;
        let mut plural_op = plural::Operands::default();
        let zero = match x {
            IntlNum::NaN => {
                number.push(Part::new("nan", data.nan));
                plural_op.nan = true;
                false
            }
            IntlNum::Infinity(_) => {
                number.push(Part::new("infinity", data.infinity));
                plural_op.nan = true;
                false
            }
            IntlNum::Finite(_, d) => {
                let mut d = d.clone();
                if self.style == Style::Percent {
                    d.shift(2);
                }
                let mut exponent = None;
                let min_frac = match self.notation {
                    Notation::Standard => self.digits.round(&mut d, negative),
                    Notation::Compact => {
                        let (min_frac, pattern, e) = self.round_compact(&mut d, negative);
                        compact = pattern;
                        plural_op.e = e;
                        min_frac
                    }
                    Notation::Scientific | Notation::Engineering => {
                        let (min_frac, e) = self.round_scientific(&mut d, negative);
                        exponent = Some(e);
                        min_frac
                    }
                };
                let (int, frac) = d.to_strings(self.digits.min_int, min_frac);
                // ICU's plural operands count the compact or scientific exponent into the
                // integer (1.2K and 1.2E3 are 1200) and keep the visible fraction digits.
                if let Some(e) = exponent {
                    plural_op.e = e;
                }
                let scale = plural_op.e;
                let (i, f) = shift_point(&int, &frac, scale);
                plural_op.set(&i, &f);
                self.push_digits(&mut number, &int, &frac);
                if let Some(e) = exponent {
                    number.push(Part::new("exponentSeparator", data.exponential));
                    if e < 0 {
                        number.push(Part::new("exponentMinusSign", data.minus));
                    }
                    number.push(Part::new("exponentInteger", e.unsigned_abs().to_string()));
                }
                d.is_zero()
            }
        };
        // The sign: ICU's pattern sign type from the display and the rounded value's signum.
        #[derive(PartialEq)]
        enum SignType {
            Neg,
            Pos,
            PosSign,
        }
        let is_neg = negative;
        let sign_type = match self.sign {
            SignDisplay::Auto => {
                if is_neg {
                    SignType::Neg
                } else {
                    SignType::Pos
                }
            }
            SignDisplay::Always => {
                if is_neg {
                    SignType::Neg
                } else {
                    SignType::PosSign
                }
            }
            SignDisplay::ExceptZero => {
                if zero || matches!(x, IntlNum::NaN) {
                    SignType::Pos
                } else if is_neg {
                    SignType::Neg
                } else {
                    SignType::PosSign
                }
            }
            SignDisplay::Negative => {
                if is_neg && !zero {
                    SignType::Neg
                } else {
                    SignType::Pos
                }
            }
            SignDisplay::Never => SignType::Pos,
        };
        let lang = self.locale.lang;
        // The affix pattern.
        let name_display =
            self.style == Style::Currency && self.currency_display == CurrencyDisplay::Name;
        let pattern_text: &str = match (self.style, compact) {
            (Style::Currency, _) if name_display => data.decimal_pattern,
            (Style::Currency, Some(_)) => "",
            (Style::Currency, None) => {
                if self.accounting {
                    data.accounting_pattern
                } else {
                    data.currency_pattern
                }
            }
            (Style::Percent, _) => data.percent_pattern,
            (Style::Decimal | Style::Unit, _) => data.decimal_pattern,
        };
        let mut pattern = Affixes::parse(pattern_text);
        if self.notation == Notation::Compact && self.style == Style::Percent {
            // ICU formats compact percentages as the unit "percent" ("{0}%", "{0} %").
            pattern.prefix.clear();
            pattern.suffix = match lang {
                Lang::De | Lang::Fr => vec![Tok::Lit(" ".into()), Tok::Unit(data.percent.into())],
                Lang::En | Lang::Ja => vec![Tok::Unit(data.percent.into())],
            };
            pattern.negative = None;
        }
        let use_negative = sign_type == SignType::Neg && pattern.negative.is_some();
        let (mut prefix, mut suffix) = if use_negative {
            pattern.negative.clone().unwrap_or_default()
        } else {
            (pattern.prefix.clone(), pattern.suffix.clone())
        };
        // Compact affixes sit next to the number, inside the style's affixes.
        if let Some(c) = compact {
            if !c.contains('0') {
                // "mille": the pattern replaces the number.
                number.clear();
            }
            let cp = Affixes::parse_compact(c);
            if self.style == Style::Currency && !name_display {
                prefix = cp.prefix;
                suffix = cp.suffix;
            } else {
                prefix.extend(cp.prefix);
                let mut s = cp.suffix;
                s.extend(suffix);
                suffix = s;
            }
        }
        if !use_negative && sign_type != SignType::Pos {
            prefix.insert(0, if sign_type == SignType::Neg { Tok::Minus } else { Tok::Plus });
        } else if use_negative {
            // nothing: the negative subpattern carries the sign (parentheses)
        }
        let currency_text = self.currency_text();
        let mut out = Vec::new();
        let emit = |toks: &[Tok], out: &mut Vec<Part>| {
            for t in toks {
                match t {
                    Tok::Lit(s) => push_literal(out, s),
                    Tok::Compact(s) => out.push(Part::new("compact", s.as_str())),
                    Tok::Unit(s) => out.push(Part::new("unit", s.as_str())),
                    Tok::Currency => out.push(Part::new("currency", currency_text.as_str())),
                    Tok::Percent => out.push(Part::new("percentSign", data.percent)),
                    Tok::Minus => out.push(Part::new("minusSign", data.minus)),
                    Tok::Plus => out.push(Part::new("plusSign", data.plus)),
                }
            }
        };
        emit(&prefix, &mut out);
        // Currency spacing: a currency symbol not ending (starting) in a symbol character next
        // to a digit gets a no-break space.
        if matches!(prefix.last(), Some(Tok::Currency))
            && currency_text.chars().last().is_some_and(|c| !is_symbol(c))
            && number.first().is_some_and(|p| p.ty == "integer")
        {
            out.push(Part::new("literal", "\u{a0}"));
        }
        out.extend(number);
        if matches!(suffix.first(), Some(Tok::Currency))
            && currency_text.chars().next().is_some_and(|c| !is_symbol(c))
            && out
                .last()
                .is_some_and(|p| matches!(p.ty, "integer" | "fraction" | "exponentInteger"))
        {
            out.push(Part::new("literal", "\u{a0}"));
        }
        emit(&suffix, &mut out);
        if name_display {
            let cat = plural::cardinal(lang, &plural_op);
            let code = self.currency.as_deref().unwrap_or("");
            let name = currency_name(&self.locale, code, cat).unwrap_or(code);
            let unit = data
                .currency_unit_patterns
                .iter()
                .find(|(c, _)| *c == cat)
                .or_else(|| data.currency_unit_patterns.iter().find(|(c, _)| *c == "other"))
                .map_or("{0} {1}", |(_, p)| p);
            let mut full = Vec::new();
            let mut rest = unit;
            while let Some(i) = rest.find('{') {
                push_literal(&mut full, &rest[..i]);
                let end = rest[i..].find('}').map_or(rest.len(), |j| i + j + 1);
                match &rest[i..end] {
                    "{0}" => full.append(&mut out),
                    _ => full.push(Part::new("currency", name)),
                }
                rest = &rest[end..];
            }
            push_literal(&mut full, rest);
            out = full;
        }
        if let Some(u) = &self.unit {
            let cat = plural::cardinal(lang, &plural_op);
            // ICU formats the short and narrow percent unit with the percent pattern.
            let percent = (u == "percent"
                && self.unit_display != 0
                && compact.is_none()
                && self.notation != Notation::Compact)
                .then(|| {
                    let p = data.percent_pattern.replace('%', data.percent);
                    let start = p.find(['#', '0']).unwrap_or(0);
                    let end = p.rfind(['#', '0']).map_or(p.len(), |i| i + 1);
                    format!("{}{{0}}{}", &p[..start], &p[end..])
                });
            if let Some(pattern) =
                percent.or_else(|| unit_pattern(&self.locale, u, self.unit_display, cat))
            {
                let mut full = Vec::new();
                let (before, after) = pattern.split_once("{0}").unwrap_or(("", &pattern));
                push_unit_affix(&mut full, before, true);
                full.append(&mut out);
                push_unit_affix(&mut full, after, false);
                out = full;
            }
        }
        (out, zero)
    }

    fn currency_text(&self) -> String {
        let Some(code) = self.currency.as_deref() else { return String::new() };
        match self.currency_display {
            CurrencyDisplay::Code | CurrencyDisplay::Name => code.to_owned(),
            CurrencyDisplay::Symbol | CurrencyDisplay::NarrowSymbol => {
                let data = self.data();
                data.currency_symbols
                    .iter()
                    .find(|(c, _, _)| *c == code)
                    .map_or(code, |(_, s, n)| {
                        if self.currency_display == CurrencyDisplay::Symbol { s } else { n }
                    })
                    .to_owned()
            }
        }
    }

    /// Integer (grouped), decimal and fraction parts.
    fn push_digits(&self, out: &mut Vec<Part>, int: &str, frac: &str) {
        let data = self.data();
        let pattern = match self.style {
            Style::Percent => data.percent_pattern,
            Style::Currency if self.currency_display == CurrencyDisplay::Name => {
                data.decimal_pattern
            }
            Style::Currency if !self.accounting => data.currency_pattern,
            Style::Currency => data.accounting_pattern,
            Style::Decimal | Style::Unit => data.decimal_pattern,
        };
        let (primary, secondary) = grouping_sizes(pattern);
        let min_grouping = match self.grouping {
            Grouping::Off => 0,
            Grouping::Always => 1,
            Grouping::Min2 => 2.max(usize::from(data.min_grouping)),
            // ICU's automatic grouping is min2 in compact notation.
            Grouping::Auto if self.notation == Notation::Compact => {
                2.max(usize::from(data.min_grouping))
            }
            Grouping::Auto => usize::from(data.min_grouping),
        };
        let n = int.len();
        if min_grouping == 0 || primary == 0 || n < primary + min_grouping {
            out.push(Part::new("integer", int));
        } else {
            // Split positions from the right: primary, then every secondary.
            let mut cuts = vec![n - primary];
            let mut at = n - primary;
            while at > secondary {
                at -= secondary;
                cuts.push(at);
            }
            cuts.reverse();
            let mut start = 0;
            for c in cuts {
                out.push(Part::new("integer", &int[start..c]));
                out.push(Part::new("group", data.group));
                start = c;
            }
            out.push(Part::new("integer", &int[start..]));
        }
        if !frac.is_empty() {
            out.push(Part::new("decimal", data.decimal));
            out.push(Part::new("fraction", frac));
        }
    }

    /// Compact notation: scales and rounds; returns (min fraction digits, pattern, exponent).
    fn round_compact(&self, d: &mut Decimal, negative: bool) -> (usize, Option<&'static str>, i32) {
        let data = self.data();
        let table: &'static [(u8, &'static str, &'static str)] =
            if self.style == Style::Currency && self.currency_display != CurrencyDisplay::Name {
                data.compact_currency
            } else if self.compact_long {
                data.compact_long
            } else {
                data.compact_short
            };
        let multiplier = |magnitude: i32| -> i32 {
            let key = table.iter().map(|(z, _, _)| i32::from(*z)).filter(|z| *z <= magnitude).max();
            let Some(key) = key else { return 0 };
            let pattern = table
                .iter()
                .find(|(z, c, _)| i32::from(*z) == key && *c == "other")
                .or_else(|| table.iter().find(|(z, _, _)| i32::from(*z) == key))
                .map_or("0", |(_, _, p)| *p);
            if pattern.chars().all(|c| c == '0') {
                return 0;
            }
            let zeros = i32::try_from(pattern.bytes().filter(|b| *b == b'0').count()).unwrap_or(1);
            -(key - (zeros - 1))
        };
        let mut mult = 0;
        let mut min_frac = 0;
        if !d.is_zero() {
            let magnitude = d.magnitude();
            mult = multiplier(magnitude);
            d.shift(mult);
            min_frac = self.digits.round(d, negative);
            if !d.is_zero() && d.magnitude() != magnitude + mult {
                let next = multiplier(magnitude + 1);
                if next != mult {
                    d.shift(next - mult);
                    min_frac = self.digits.round(d, negative);
                    mult = next;
                }
            }
        } else {
            min_frac = self.digits.round(d, negative).max(min_frac);
        }
        if mult == 0 {
            return (min_frac, None, 0);
        }
        let magnitude = if d.is_zero() { 0 } else { d.magnitude() } - mult;
        let key = table.iter().map(|(z, _, _)| i32::from(*z)).filter(|z| *z <= magnitude).max();
        let Some(key) = key else { return (min_frac, None, 0) };
        let (int, frac) = d.to_strings(1, min_frac);
        let mut op = plural::Operands::default();
        op.set(&int, &frac);
        // The pattern follows the scaled number alone (ICU sets the exponent afterwards).
        let cat = plural::cardinal(self.locale.lang, &op);
        // An explicit pattern for exactly 1 ("1000-count-1": "mille") comes first.
        let exact_one = int == "1" && frac.is_empty();
        let pattern = table
            .iter()
            .find(|(z, c, _)| exact_one && i32::from(*z) == key && *c == "1")
            .or_else(|| table.iter().find(|(z, c, _)| i32::from(*z) == key && *c == cat))
            .or_else(|| table.iter().find(|(z, c, _)| i32::from(*z) == key && *c == "other"))
            .map(|(_, _, p)| *p);
        (min_frac, pattern, -mult)
    }

    /// Scientific and engineering notation: returns (min fraction digits, exponent).
    fn round_scientific(&self, d: &mut Decimal, negative: bool) -> (usize, i32) {
        let interval = if self.notation == Notation::Engineering { 3 } else { 1 };
        let multiplier = |magnitude: i32| -> i32 {
            let shown = if interval == 1 { 1 } else { magnitude.rem_euclid(interval) + 1 };
            shown - magnitude - 1
        };
        if d.is_zero() {
            return (self.digits.round(d, negative), 0);
        }
        let magnitude = d.magnitude();
        let mut mult = multiplier(magnitude);
        d.shift(mult);
        let mut min_frac = self.digits.round(d, negative);
        if !d.is_zero() && d.magnitude() != magnitude + mult {
            let next = multiplier(magnitude + 1);
            if next != mult {
                d.shift(next - mult);
                min_frac = self.digits.round(d, negative);
                mult = next;
            }
        }
        (min_frac, -mult)
    }

    /// `formatRange` / `formatRangeToParts` (parts carry their `source`).
    pub fn format_range(&self, x: &IntlNum, y: &IntlNum) -> Vec<(Part, &'static str)> {
        let a = self.format_to_parts(x);
        let b = self.format_to_parts(y);
        let text = |p: &[Part]| p.iter().map(|p| p.value.as_str()).collect::<String>();
        let data = self.data();
        if text(&a) == text(&b) {
            let mut out: Vec<(Part, &'static str)> = Vec::new();
            let mut inserted = false;
            for p in a {
                if !inserted
                    && matches!(
                        p.ty,
                        "integer"
                            | "nan"
                            | "infinity"
                            | "minusSign"
                            | "plusSign"
                            | "currency"
                            | "literal"
                            | "percentSign"
                    )
                {
                    out.push((Part::new("approximatelySign", data.approximately), "shared"));
                    inserted = true;
                }
                out.push((p, "shared"));
            }
            return out;
        }
        let affixed = |p: &[Part]| {
            p.iter().any(|p| {
                !matches!(
                    p.ty,
                    "integer" | "group" | "decimal" | "fraction" | "minusSign" | "plusSign"
                )
            })
        };
        let sep = if affixed(&a) || affixed(&b) { " – " } else { "–" };
        let _ = data.range;
        let mut out: Vec<(Part, &'static str)> = a.into_iter().map(|p| (p, "startRange")).collect();
        out.push((Part::new("literal", sep), "shared"));
        out.extend(b.into_iter().map(|p| (p, "endRange")));
        out
    }
}

/// A currency's name for a plural category (None: not in this sandbox's data).
fn currency_name(locale: &Locale, code: &str, cat: &str) -> Option<&'static str> {
    if locale.lang == Lang::En {
        return data::EN_CURRENCY_NAMES
            .iter()
            .find(|(c, _, _)| *c == code)
            .map(|(_, one, other)| if cat == "one" { *one } else { *other });
    }
    let lang = locale.data_name;
    let rows = || data::CURRENCY_NAMES.iter().filter(|(l, c, _, _)| *l == lang && *c == code);
    rows()
        .find(|(_, _, k, _)| *k == cat)
        .or_else(|| rows().find(|(_, _, k, _)| *k == "other"))
        .map(|(_, _, _, n)| *n)
}

/// Moves the decimal point of `int.frac` right by `e` places.
fn shift_point(int: &str, frac: &str, e: i32) -> (String, String) {
    let mut i = int.to_owned();
    let mut f = frac.to_owned();
    for _ in 0..e.max(0) {
        if f.is_empty() {
            i.push('0');
        } else {
            i.push(f.remove(0));
        }
    }
    for _ in 0..(-e).max(0) {
        f.insert(0, i.pop().unwrap_or('0'));
    }
    if i.is_empty() {
        i.push('0');
    }
    (i, f)
}

/// The unit patterns of a locale and width: (plural category or "per", pattern).
fn unit_patterns(locale: &Locale, unit: &str, width: u8) -> Option<Vec<(&'static str, String)>> {
    let rows = super::shape::locale_rows(data::UNITS, locale.data_name);
    let find = |u: &str| -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = Vec::new();
        for table in &rows {
            for (name, w, cat, p) in table.iter() {
                if *name == u && *w == width && !out.iter().any(|(c, _)| c == cat) {
                    out.push((*cat, (*p).to_owned()));
                }
            }
        }
        out
    };
    let direct = find(unit);
    if direct.iter().any(|(c, _)| *c != "per") {
        return Some(direct.into_iter().filter(|(c, _)| *c != "per").collect());
    }
    // X-per-Y without its own pattern: X's patterns inside Y's "per" pattern.
    let (a, b) = unit.split_once("-per-")?;
    let per = find(b).into_iter().find(|(c, _)| *c == "per")?.1;
    let first = find(a);
    if first.is_empty() {
        return None;
    }
    Some(
        first
            .into_iter()
            .filter(|(c, _)| *c != "per")
            .map(|(c, p)| (c, per.replace("{0}", &p)))
            .collect(),
    )
}

fn unit_pattern(locale: &Locale, unit: &str, width: u8, cat: &str) -> Option<String> {
    let patterns = unit_patterns(locale, unit, width)?;
    patterns
        .iter()
        .find(|(c, _)| *c == cat)
        .or_else(|| patterns.iter().find(|(c, _)| *c == "other"))
        .map(|(_, p)| p.clone())
}

/// Text around a unit pattern's number: the spaces next to the number are a literal, the
/// rest ("degree Celsius") is the unit.
fn push_unit_affix(out: &mut Vec<Part>, text: &str, before_number: bool) {
    let is_space = |c: char| c.is_whitespace() || c == '\u{a0}' || c == '\u{202f}';
    let (unit, space) = if before_number {
        let t = text.trim_end_matches(is_space);
        (t, &text[t.len()..])
    } else {
        let t = text.trim_start_matches(is_space);
        (t, &text[..text.len() - t.len()])
    };
    if before_number {
        if !unit.is_empty() {
            out.push(Part::new("unit", unit));
        }
        push_literal(out, space);
    } else {
        push_literal(out, space);
        if !unit.is_empty() {
            out.push(Part::new("unit", unit));
        }
    }
}

/// Whether ICU's `[:S:]` holds for a character at the edge of a currency symbol.
fn is_symbol(c: char) -> bool {
    matches!(
        c,
        '$' | '+'
            | '<'
            | '='
            | '>'
            | '^'
            | '`'
            | '|'
            | '~'
            | '¢'
            | '£'
            | '¤'
            | '¥'
            | '¦'
            | '©'
            | '®'
            | '°'
            | '±'
            | '´'
            | '¸'
            | '×'
            | '÷'
            | '￥'
            | '￦'
            | '฿'
            | '៛'
    ) || ('\u{20a0}'..='\u{20cf}').contains(&c)
}

/// Appends literal text, merged into a literal part just before it (as ICU's parts are).
pub(super) fn push_literal(out: &mut Vec<Part>, s: &str) {
    if s.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last.ty == "literal"
    {
        last.value.push_str(s);
        return;
    }
    out.push(Part::new("literal", s));
}

fn js(s: &str) -> JsValue {
    JsValue::from(boa_engine::JsString::from(s))
}

/// Primary and secondary grouping sizes of a pattern (`#,##,##0.###` → 3, 2).
fn grouping_sizes(pattern: &str) -> (usize, usize) {
    let body: String = pattern
        .split(';')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| matches!(c, '#' | '0' | ',' | '.'))
        .collect();
    let int = body.split('.').next().unwrap_or("");
    let groups: Vec<&str> = int.split(',').collect();
    if groups.len() < 2 {
        return (0, 0);
    }
    let primary = groups[groups.len() - 1].len();
    let secondary = if groups.len() >= 3 { groups[groups.len() - 2].len() } else { primary };
    (primary, secondary)
}

#[derive(Debug, Clone)]
enum Tok {
    Lit(String),
    Unit(String),
    Compact(String),
    Currency,
    Percent,
    Minus,
    Plus,
}

#[derive(Debug, Clone, Default)]
struct Affixes {
    prefix: Vec<Tok>,
    suffix: Vec<Tok>,
    negative: Option<(Vec<Tok>, Vec<Tok>)>,
}

impl Affixes {
    fn parse(pattern: &str) -> Self {
        let mut parts = pattern.splitn(2, ';');
        let pos = parts.next().unwrap_or("");
        let (prefix, suffix) = Self::split(pos, false);
        let negative = parts.next().map(|n| Self::split(n, false));
        Self { prefix, suffix, negative }
    }

    /// A compact pattern ("0K", "0 thousand", "¤0K", "0 Mio'.' ¤"): text is the compact field,
    /// spaces are literals.
    fn parse_compact(pattern: &str) -> Self {
        let (prefix, suffix) = Self::split(pattern, true);
        Self { prefix, suffix, negative: None }
    }

    fn split(p: &str, compact: bool) -> (Vec<Tok>, Vec<Tok>) {
        let is_num = |c: char| matches!(c, '#' | '0' | ',' | '.' | '@') || c.is_ascii_digit();
        let mut prefix = Vec::new();
        let mut suffix = Vec::new();
        let mut in_number = false;
        let mut done_number = false;
        let mut quoted = false;
        let mut text = String::new();
        let flush = |text: &mut String, out: &mut Vec<Tok>| {
            if text.is_empty() {
                return;
            }
            if compact {
                // The spaces next to the number are literals; the rest is the compact field
                // ("lakh crore").
                let is_space = |c: char| c.is_whitespace() || c == '\u{a0}' || c == '\u{202f}';
                let t = std::mem::take(text);
                let inner = t.trim_matches(is_space);
                let lead = &t[..t.len() - t.trim_start_matches(is_space).len()];
                let trail = &t[t.trim_end_matches(is_space).len()..];
                if !lead.is_empty() {
                    out.push(Tok::Lit(lead.to_owned()));
                }
                if !inner.is_empty() {
                    out.push(Tok::Compact(inner.to_owned()));
                }
                if !trail.is_empty() && !inner.is_empty() {
                    out.push(Tok::Lit(trail.to_owned()));
                }
            } else {
                out.push(Tok::Lit(std::mem::take(text)));
            }
        };
        for c in p.chars() {
            let target = if done_number || in_number { &mut suffix } else { &mut prefix };
            if quoted {
                if c == '\'' {
                    quoted = false;
                } else {
                    text.push(c);
                }
                continue;
            }
            if c == '\'' {
                quoted = true;
                continue;
            }
            if is_num(c) {
                if !in_number && !done_number {
                    flush(&mut text, target);
                    in_number = true;
                }
                continue;
            }
            if in_number {
                in_number = false;
                done_number = true;
            }
            let target = if done_number { &mut suffix } else { &mut prefix };
            let tok = match c {
                '¤' => Some(Tok::Currency),
                '%' => Some(Tok::Percent),
                '-' => Some(Tok::Minus),
                '+' => Some(Tok::Plus),
                _ => None,
            };
            match tok {
                Some(t) => {
                    flush(&mut text, target);
                    target.push(t);
                }
                None => text.push(c),
            }
        }
        let target = if done_number || in_number { &mut suffix } else { &mut prefix };
        flush(&mut text, target);
        (prefix, suffix)
    }
}
