//! The shape of the generated locale data (`data.rs`, written by `sandbox/intl-gen.js`) and how
//! a locale's rows are read from its per-locale tables. A leaf of `intl`.

/// Number symbols and patterns of one locale (CLDR `numbers`).
pub(super) struct NumberData {
    pub decimal: &'static str,
    pub group: &'static str,
    pub percent: &'static str,
    pub plus: &'static str,
    pub minus: &'static str,
    pub exponential: &'static str,
    pub infinity: &'static str,
    pub nan: &'static str,
    pub approximately: &'static str,
    /// The range pattern, `{0}–{1}`.
    pub range: &'static str,
    pub min_grouping: u8,
    pub decimal_pattern: &'static str,
    pub percent_pattern: &'static str,
    pub currency_pattern: &'static str,
    pub accounting_pattern: &'static str,
    /// `{0} {1}` per plural category, for `currencyDisplay: "name"`.
    pub currency_unit_patterns: &'static [(&'static str, &'static str)],
    /// (number of zeros of the magnitude, plural category, pattern).
    pub compact_short: &'static [(u8, &'static str, &'static str)],
    pub compact_long: &'static [(u8, &'static str, &'static str)],
    pub compact_currency: &'static [(u8, &'static str, &'static str)],
    /// (code, symbol, narrow symbol) where either differs from the code.
    pub currency_symbols: &'static [(&'static str, &'static str, &'static str)],
}

/// Calendar names and patterns of one locale (CLDR `ca-gregorian`, `timeZoneNames`).
pub(super) struct DateData {
    /// Format abbreviated, wide, narrow; stand-alone abbreviated, wide, narrow.
    pub months: [[&'static str; 12]; 6],
    /// Format abbreviated, wide, narrow, short; stand-alone the same; Sunday first.
    pub days: [[&'static str; 7]; 8],
    /// AM, PM: abbreviated, wide, narrow.
    pub am_pm: [[&'static str; 2]; 3],
    /// Flexible day periods: (from minute, before minute (equal: "at"), [abbreviated, wide, narrow]).
    pub day_periods: &'static [(u16, u16, [&'static str; 3])],
    /// BC, AD: abbreviated, wide, narrow.
    pub eras: [[&'static str; 2]; 3],
    /// full, long, medium, short.
    pub date_formats: [&'static str; 4],
    pub time_formats: [&'static str; 4],
    pub date_time_formats: [&'static str; 4],
    pub date_time_at_formats: [&'static str; 4],
    /// Skeleton → pattern.
    pub available: &'static [(&'static str, &'static str)],
    /// Era, Year, Quarter, Month, Week, Day-Of-Week, Day, Hour, Minute, Second, Timezone.
    pub append_items: [&'static str; 11],
    /// Display names of the same fields and of the day period (for `{2}` in append items).
    pub field_names: [&'static str; 12],
    pub gmt_format: &'static str,
    /// `+HH:mm;-HH:mm`: the signs and digits of GMT offsets.
    pub hour_format: &'static str,
    /// Zone → [short standard, short daylight, long standard, long daylight] ("" = none).
    pub zone_names: &'static [(&'static str, [&'static str; 4])],
    /// Metazone → the same four names.
    pub metazone_names: &'static [(&'static str, [&'static str; 4])],
    /// Zone and metazone names missing here are looked up in `en` (the `en-*` locales carry
    /// only their differences).
    pub names_inherit_en: bool,
}

/// A locale's rows of a per-locale table, then (for the `en-*` ones, which carry only their
/// differences) en's.
pub(super) fn locale_rows<T>(
    tables: &'static [(&'static str, &'static [T])],
    name: &str,
) -> Vec<&'static [T]> {
    let mut out = Vec::new();
    if let Some((_, rows)) = tables.iter().find(|(l, _)| *l == name) {
        out.push(*rows);
    }
    if name.starts_with("en-")
        && let Some((_, rows)) = tables.iter().find(|(l, _)| *l == "en")
    {
        out.push(*rows);
    }
    out
}
