//! Locales: BCP 47 parsing and canonicalization (`Intl.getCanonicalLocales`), the shape of the
//! generated locale data, and locale negotiation: which of the supported locales a request
//! resolves to, what V8 would report as `resolvedOptions().locale`, and the refusal of a locale
//! V8 would format with data the sandbox does not have.

use boa_engine::{Context, JsNativeError, JsResult, JsValue, js_string};

use super::data;
use super::shape::{DateData, NumberData};

/// A parsed BCP 47 language tag (the subset of `unicode_locale_id` V8 accepts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LanguageTag {
    pub language: String,
    pub script: Option<String>,
    pub region: Option<String>,
    pub variants: Vec<String>,
    /// `-u-` attributes.
    pub attributes: Vec<String>,
    /// `-u-` keywords, sorted by key; "" stands for `true`.
    pub keywords: Vec<(String, String)>,
    /// Other extensions (`a-bbb`, `t-…`), sorted by singleton, then private use (`x-…`).
    pub others: Vec<String>,
}

fn is_alpha(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphabetic())
}

fn is_alnum(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Language aliases V8 applies (the common ones of CLDR `languageAlias`).
const LANGUAGE_ALIASES: &[(&str, &str)] = &[
    ("cmn", "zh"),
    ("in", "id"),
    ("iw", "he"),
    ("ji", "yi"),
    ("jw", "jv"),
    ("mo", "ro"),
    ("tl", "fil"),
];

/// Region aliases (CLDR `territoryAlias`, the deprecated codes).
const REGION_ALIASES: &[(&str, &str)] = &[
    ("BU", "MM"),
    ("CT", "KI"),
    ("DD", "DE"),
    ("DY", "BJ"),
    ("FX", "FR"),
    ("HV", "BF"),
    ("NH", "VU"),
    ("PC", "FM"),
    ("RH", "ZW"),
    ("TP", "TL"),
    ("UK", "GB"),
    ("VD", "VN"),
    ("YD", "YE"),
    ("ZR", "CD"),
];

impl LanguageTag {
    /// Parses and canonicalizes a tag; `None` when it is not a well-formed Unicode locale id.
    pub fn parse(tag: &str) -> Option<Self> {
        let lower = tag.to_ascii_lowercase();
        let mut it = lower.split('-').peekable();
        let first = it.next()?;
        let mut language = match first.len() {
            2 | 3 | 5..=8 if is_alpha(first) => first.to_owned(),
            _ => return None,
        };
        let mut script = None;
        let mut region = None;
        let mut variants = Vec::new();
        if let Some(s) = it.peek()
            && s.len() == 4
            && is_alpha(s)
        {
            let mut s = (*s).to_string();
            s[..1].make_ascii_uppercase();
            script = Some(s);
            it.next();
        }
        if let Some(s) = it.peek()
            && ((s.len() == 2 && is_alpha(s))
                || (s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit())))
        {
            region = Some(s.to_ascii_uppercase());
            it.next();
        }
        while let Some(s) = it.peek() {
            let variant = (5..=8).contains(&s.len()) && is_alnum(s)
                || (s.len() == 4 && s.as_bytes()[0].is_ascii_digit() && is_alnum(s));
            if !variant {
                break;
            }
            if variants.iter().any(|v| v == s) {
                return None;
            }
            variants.push((*s).to_owned());
            it.next();
        }
        let mut attributes = Vec::new();
        let mut keywords: Vec<(String, String)> = Vec::new();
        let mut others: Vec<(char, String)> = Vec::new();
        let mut seen = Vec::new();
        while let Some(singleton) = it.next() {
            if singleton.len() != 1 || !is_alnum(singleton) {
                return None;
            }
            let c = singleton.as_bytes()[0] as char;
            if seen.contains(&c) {
                return None;
            }
            seen.push(c);
            if c == 'x' {
                let rest: Vec<&str> = it.by_ref().collect();
                if rest.is_empty()
                    || rest.iter().any(|s| s.is_empty() || s.len() > 8 || !is_alnum(s))
                {
                    return None;
                }
                others.push(('x', format!("x-{}", rest.join("-"))));
                break;
            }
            let mut subtags = Vec::new();
            while let Some(s) = it.peek() {
                if s.len() == 1 {
                    break;
                }
                if s.len() > 8 || s.is_empty() || !is_alnum(s) {
                    return None;
                }
                subtags.push((*s).to_owned());
                it.next();
            }
            if c == 'u' {
                let mut i = 0;
                while i < subtags.len() && subtags[i].len() > 2 {
                    if !attributes.contains(&subtags[i]) {
                        attributes.push(subtags[i].clone());
                    }
                    i += 1;
                }
                while i < subtags.len() {
                    let key = subtags[i].clone();
                    if key.len() != 2 || !key.as_bytes()[1].is_ascii_alphabetic() {
                        return None;
                    }
                    i += 1;
                    let mut value = Vec::new();
                    while i < subtags.len() && subtags[i].len() > 2 {
                        value.push(subtags[i].clone());
                        i += 1;
                    }
                    let mut value = value.join("-");
                    if value == "true" {
                        value.clear();
                    }
                    if !keywords.iter().any(|(k, _)| *k == key) {
                        keywords.push((key, value));
                    }
                }
                if attributes.is_empty() && keywords.is_empty() {
                    return None;
                }
            } else {
                if subtags.is_empty() || subtags.iter().any(|s| s.len() < 2) && c != 't' {
                    return None;
                }
                others.push((c, format!("{c}-{}", subtags.join("-"))));
            }
        }
        if let Some((_, to)) = LANGUAGE_ALIASES.iter().find(|(from, _)| *from == language) {
            language = (*to).to_owned();
        }
        if language == "sh" {
            language = "sr".into();
            script.get_or_insert_with(|| "Latn".into());
        }
        if let Some(r) = &region
            && let Some((_, to)) = REGION_ALIASES.iter().find(|(from, _)| from == r)
        {
            region = Some((*to).to_owned());
        }
        if let Some(i) = variants.iter().position(|v| v == "posix") {
            variants.remove(i);
            if !keywords.iter().any(|(k, _)| k == "va") {
                keywords.push(("va".into(), "posix".into()));
            }
        }
        variants.sort();
        attributes.sort();
        keywords.sort();
        others.sort_by_key(|(c, _)| if *c == 'x' { '~' } else { *c });
        Some(Self {
            language,
            script,
            region,
            variants,
            attributes,
            keywords,
            others: others.into_iter().map(|(_, s)| s).collect(),
        })
    }

    /// The canonical string form.
    pub fn to_canonical(&self) -> String {
        let mut s = self.language.clone();
        for part in self.script.iter().chain(&self.region).chain(&self.variants) {
            s.push('-');
            s.push_str(part);
        }
        let mut ext: Vec<String> = Vec::new();
        if !self.attributes.is_empty() || !self.keywords.is_empty() {
            let mut u = String::from("u");
            for a in &self.attributes {
                u.push('-');
                u.push_str(a);
            }
            for (k, v) in &self.keywords {
                u.push('-');
                u.push_str(k);
                if !v.is_empty() {
                    u.push('-');
                    u.push_str(v);
                }
            }
            ext.push(u);
        }
        ext.extend(self.others.iter().filter(|o| !o.starts_with("x-")).cloned());
        ext.sort();
        ext.extend(self.others.iter().filter(|o| o.starts_with("x-")).cloned());
        for e in ext {
            s.push('-');
            s.push_str(&e);
        }
        s
    }

    /// A `-u-` keyword's value ("" for `true`).
    pub fn keyword(&self, key: &str) -> Option<&str> {
        self.keywords.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// `CanonicalizeLocaleList`: `undefined` → empty; a string or `Intl.Locale`-less object →
/// canonical tags without duplicates, in order.
pub(super) fn canonicalize_list(
    locales: &JsValue,
    ctx: &mut Context,
) -> JsResult<Vec<LanguageTag>> {
    if locales.is_undefined() {
        return Ok(Vec::new());
    }
    let mut out: Vec<LanguageTag> = Vec::new();
    let push = |s: &str, out: &mut Vec<LanguageTag>| -> JsResult<()> {
        let tag = LanguageTag::parse(s).ok_or_else(|| {
            JsNativeError::range().with_message("Incorrect locale information provided")
        })?;
        if !out.contains(&tag) {
            out.push(tag);
        }
        Ok(())
    };
    if let Some(s) = locales.as_string() {
        push(&s.to_std_string_escaped(), &mut out)?;
        return Ok(out);
    }
    if locales.is_null() {
        return Err(JsNativeError::typ()
            .with_message("Cannot convert undefined or null to object")
            .into());
    }
    let obj = locales.to_object(ctx)?;
    let len = obj.get(js_string!("length"), ctx)?.to_length(ctx)?;
    for i in 0..len {
        if !obj.has_property(i, ctx)? {
            continue;
        }
        let v = obj.get(i, ctx)?;
        let s = if let Some(s) = v.as_string() {
            s.to_std_string_escaped()
        } else if v.is_object() {
            v.to_string(ctx)?.to_std_string_escaped()
        } else {
            return Err(JsNativeError::typ()
                .with_message("Language ID should be string or object.")
                .into());
        };
        push(&s, &mut out)?;
    }
    Ok(out)
}

/// The languages with data here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    En,
    De,
    Fr,
    Ja,
}

/// A negotiated locale.
#[derive(Debug, Clone)]
pub(super) struct Locale {
    pub lang: Lang,
    /// What V8 reports without extensions: "en-US", "en", "de", "en-GB", …
    pub base: String,
    /// The data locale's name (for `names_inherit_en` and per-locale switches): "en", "en-GB", …
    pub data_name: &'static str,
    /// The requested tag (its `-u-` keywords apply).
    pub tag: Option<LanguageTag>,
}

const SUPPORTED: &str = "en (en-US and the regions that format like it), en-GB, en-IN, en-CA, en-AU, \
     de, fr and ja";

/// Error for a locale V8 would format with data this sandbox lacks.
pub(super) fn unsupported_locale(tag: &str) -> JsNativeError {
    JsNativeError::range().with_message(format!(
        "locale '{tag}' is not supported by Intl in this sandbox (supported: {SUPPORTED}); \
         use one of those or format by hand"
    ))
}

/// Error for an option value V8 accepts but the sandbox does not implement.
pub(super) fn unsupported(what: impl std::fmt::Display) -> JsNativeError {
    JsNativeError::range().with_message(format!("{what} is not supported by Intl in this sandbox"))
}

impl Locale {
    /// The default locale (en-US).
    pub fn default_locale() -> Self {
        Self { lang: Lang::En, base: "en-US".into(), data_name: "en", tag: None }
    }

    /// Negotiates `requested` (`ResolveLocale` with lookup over what ICU has): the first tag of a
    /// language ICU knows wins; unknown languages are skipped as V8 skips them.
    pub fn resolve(requested: &[LanguageTag]) -> JsResult<Self> {
        for tag in requested {
            if data::ICU_LANGUAGES.binary_search(&tag.language.as_str()).is_err() {
                continue;
            }
            return Self::from_tag(tag);
        }
        Ok(Self::default_locale())
    }

    fn from_tag(tag: &LanguageTag) -> JsResult<Self> {
        let canonical = tag.to_canonical();
        let lang = match tag.language.as_str() {
            "en" => Lang::En,
            "de" => Lang::De,
            "fr" => Lang::Fr,
            "ja" => Lang::Ja,
            _ => return Err(unsupported_locale(&canonical).into()),
        };
        let default_script = if lang == Lang::Ja { "Jpan" } else { "Latn" };
        if tag.script.as_deref().is_some_and(|s| s != default_script)
            || !tag.variants.is_empty()
            || tag.keyword("va").is_some()
        {
            return Err(unsupported_locale(&canonical).into());
        }
        let region = tag.region.as_deref();
        let data_name: &'static str = match (lang, region) {
            (Lang::En, Some("GB")) => "en-GB",
            (Lang::En, Some("IN")) => "en-IN",
            (Lang::En, Some("CA")) => "en-CA",
            (Lang::En, Some("AU")) => "en-AU",
            (Lang::En, _) => "en",
            (Lang::De, _) => "de",
            (Lang::Fr, _) => "fr",
            (Lang::Ja, _) => "ja",
        };
        let lang_name = &tag.language;
        if let Some(r) = region
            && !data_name.contains('-')
        {
            let distinct = data::DISTINCT_REGIONS
                .iter()
                .find(|(l, _)| l == lang_name)
                .is_some_and(|(_, regions)| regions.contains(&r));
            if distinct {
                return Err(unsupported_locale(&canonical).into());
            }
        }
        let icu_region = region.filter(|r| {
            tag.script.is_none()
                && data::ICU_REGIONS
                    .iter()
                    .find(|(l, _)| l == lang_name)
                    .is_some_and(|(_, regions)| regions.contains(r))
        });
        let base = match icu_region {
            Some(r) => format!("{lang_name}-{r}"),
            None => lang_name.clone(),
        };
        Ok(Self { lang, base, data_name, tag: Some(tag.clone()) })
    }

    /// A `-u-` keyword of the requested tag.
    pub fn keyword(&self, key: &str) -> Option<&str> {
        self.tag.as_ref().and_then(|t| t.keyword(key))
    }

    pub fn number_data(&self) -> &'static NumberData {
        match self.data_name {
            "en-GB" => &data::NUM_EN_GB,
            "en-IN" => &data::NUM_EN_IN,
            "en-CA" => &data::NUM_EN_CA,
            "en-AU" => &data::NUM_EN_AU,
            "de" => &data::NUM_DE,
            "fr" => &data::NUM_FR,
            "ja" => &data::NUM_JA,
            _ => &data::NUM_EN,
        }
    }

    pub fn date_data(&self) -> &'static DateData {
        match self.data_name {
            "en-GB" => &data::DATE_EN_GB,
            "en-IN" => &data::DATE_EN_IN,
            "en-CA" => &data::DATE_EN_CA,
            "en-AU" => &data::DATE_EN_AU,
            "de" => &data::DATE_DE,
            "fr" => &data::DATE_FR,
            "ja" => &data::DATE_JA,
            _ => &data::DATE_EN,
        }
    }
}

/// `Intl.getCanonicalLocales`.
pub(super) fn get_canonical_locales(locales: &JsValue, ctx: &mut Context) -> JsResult<Vec<String>> {
    Ok(canonicalize_list(locales, ctx)?.iter().map(LanguageTag::to_canonical).collect())
}

/// `supportedLocalesOf`: the requested tags V8 has data for (any region of a language ICU knows).
pub(super) fn supported_locales_of(locales: &JsValue, ctx: &mut Context) -> JsResult<Vec<String>> {
    Ok(canonicalize_list(locales, ctx)?
        .iter()
        .filter(|t| data::ICU_LANGUAGES.binary_search(&t.language.as_str()).is_ok())
        .map(LanguageTag::to_canonical)
        .collect())
}
