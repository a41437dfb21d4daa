//! The data-source registry's file format: one `sdk-spec/<source>.json` per source.
//!
//! These types mirror the JSON exactly (camelCase on the wire) and are what `search` code sees as
//! `spec.sources`. Backing details (how a method is served) live in [`Backing`]; the sandbox never
//! sees them because [`crate::provider::public_json`] strips them.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::SdkError;
use super::provider::def::{self as provider_def, ProviderDef};

/// One data source: a named group of methods served by one backing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceSpec {
    /// Identifier used in code: `sdk.<name>.<method>(params)`.
    pub name: String,
    /// Human-readable name.
    pub display_name: String,
    /// What the source offers, written for a model deciding whether to use it.
    pub description: String,
    /// Search keywords (asset classes, regions, topics).
    #[serde(default)]
    pub tags: Vec<String>,
    /// The callable methods.
    pub methods: Vec<MethodSpec>,
    /// How methods are served unless a method overrides it. Defaults to `builtin`.
    #[serde(default)]
    pub backing: Backing,
    /// Environment variable that must be `1`/`true` for this source to be active. Live (network)
    /// sources set this so the product works offline by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_by: Option<String>,
}

/// One callable method of a source.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MethodSpec {
    /// Method name: `sdk.<source>.<name>`.
    pub name: String,
    /// What it returns and when to use it.
    pub description: String,
    /// Parameters, passed as one object: `sdk.src.method({symbol: "XAUUSD"})`.
    #[serde(default)]
    pub params: Vec<ParamSpec>,
    /// Shape of the result.
    pub returns: ReturnSpec,
    /// Response-cache lifetime in seconds (default [`DEFAULT_TTL_SECS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u64>,
    /// Overrides the source's backing for this method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<Backing>,
    /// The providers that serve it, in order (see [`super::provider`]); when empty, its backing
    /// (or the source's) is its one provider.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<ProviderSpec>,
}

/// Default response-cache lifetime.
pub const DEFAULT_TTL_SECS: u64 = 60;

/// One parameter of a method.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParamSpec {
    /// Name of the key in the params object.
    pub name: String,
    /// Expected JSON type.
    #[serde(rename = "type")]
    pub ty: ParamType,
    /// Whether the caller must give it (a param with a default is never required).
    #[serde(default)]
    pub required: bool,
    /// Applied when the caller omits the param.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The closed set of allowed values, if any.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// Inclusive lower bound for numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Inclusive upper bound for numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// What it means, with an example value.
    pub description: String,
}

/// JSON types a parameter may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    /// A JSON string.
    String,
    /// Any JSON number.
    Number,
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
}

impl ParamType {
    /// The name used in specs and error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
        }
    }
}

/// The documented shape of a method's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnSpec {
    /// e.g. `"array<Candle>"`, `"object"`.
    #[serde(rename = "type")]
    pub ty: String,
    /// What the result holds.
    pub description: String,
    /// Field name → description (type and unit) of each row/object field.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// A short, realistic example (one or two rows).
    #[serde(default)]
    pub example: Value,
}

/// How a method is served. Never visible to sandboxed code.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Backing {
    /// Deterministic synthetic data generated in-process (works offline).
    Builtin {
        /// Generator id in `sdk::builtin`; defaults to the method name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generator: Option<String>,
    },
    /// A real HTTP endpoint.
    Http(super::http::HttpBacking),
    /// A CSV/JSON file in the user's data folder.
    File(super::file::FileBacking),
}

impl Backing {
    /// Who serves answers of this backing for `source`, and whether they are demo data: the
    /// built-in generators are `demo`, an HTTP source is its own provider, files are `file`.
    pub fn origin<'a>(&self, source: &'a str) -> (&'a str, bool) {
        match self {
            Backing::Builtin { .. } => (base::provenance::DEMO_PROVIDER, true),
            Backing::Http(_) => (source, false),
            Backing::File(_) => ("file", false),
        }
    }
}

impl Default for Backing {
    fn default() -> Self {
        Self::Builtin { generator: None }
    }
}

/// The param that forces a provider (reserved: no method may declare it).
pub const PROVIDER_PARAM: &str = "provider";

/// One provider of a method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderSpec {
    /// Its name (`binance`, `demo`): what answers' provenance and `provider` params say.
    pub provider: String,
    /// Param name → pattern the param's value must match for this provider to apply
    /// (e.g. `{"symbol": "(?i)^[A-Z0-9]+USDT$"}`: Binance serves crypto pairs only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub when: BTreeMap<String, Pattern>,
    /// Environment variable that must be `1`/`true` for this provider to be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_by: Option<String>,
    /// Fields of the standard shape this provider cannot fill (they are null in its answers);
    /// `search` shows them so panel code can allow for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omits: Vec<String>,
    /// How it is served.
    pub backing: Backing,
}

impl ProviderSpec {
    /// Whether every `when` pattern matches `params` (a missing param matches nothing).
    pub fn applies(&self, params: &Map<String, Value>) -> bool {
        self.when.iter().all(|(name, pattern)| {
            params
                .get(name)
                .is_some_and(|v| pattern.0.is_match(&super::http::template::format_value(v)))
        })
    }

    /// The first `when` pattern `params` fail, as `symbol=XAUUSD does not match ^…$`.
    pub(crate) fn mismatch(&self, params: &Map<String, Value>) -> Option<String> {
        self.when.iter().find_map(|(name, pattern)| {
            let given = params.get(name).map(super::http::template::format_value);
            match given {
                Some(v) if pattern.0.is_match(&v) => None,
                Some(v) => Some(format!("{name}={v} does not match {}", pattern.0.as_str())),
                None => Some(format!("{name} is not given")),
            }
        })
    }
}

/// A regular expression in a spec file, compiled once when the spec is read.
#[derive(Debug, Clone)]
pub struct Pattern(pub regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        regex::Regex::new(&text).map(Pattern).map_err(serde::de::Error::custom)
    }
}

/// All active sources, validated and indexed.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    sources: BTreeMap<String, SourceSpec>,
    /// Sources found on disk but switched off (`enabledBy` unset), with the variable to set.
    disabled: BTreeMap<String, String>,
    /// Provider definitions (`providers/*.json`) by name.
    providers: BTreeMap<String, ProviderDef>,
}

impl Registry {
    /// Builds a registry from parsed specs without provider definitions (see [`Registry::build`]).
    pub fn new(specs: Vec<SourceSpec>, enabled: &dyn Fn(&str) -> bool) -> Result<Self, SdkError> {
        Self::build(specs, Vec::new(), enabled)
    }

    /// Builds a registry from parsed specs and provider definitions, keeping sources whose
    /// `enabledBy` is in `enabled` (or unset). Rejects duplicate names, duplicate methods and
    /// params with defaults of the wrong type, naming the source and method. Every `http`
    /// backing inherits its provider's definition ([`provider_def::inherit`]).
    pub fn build(
        specs: Vec<SourceSpec>,
        defs: Vec<ProviderDef>,
        enabled: &dyn Fn(&str) -> bool,
    ) -> Result<Self, SdkError> {
        let mut reg = Self::default();
        for def in defs {
            if reg.providers.contains_key(&def.name) {
                return Err(SdkError::Spec(format!(
                    "duplicate provider definition `{}`",
                    def.name
                )));
            }
            reg.providers.insert(def.name.clone(), def);
        }
        for mut spec in specs {
            check_source(&spec)?;
            if let Some(var) = &spec.enabled_by
                && !enabled(var)
            {
                reg.disabled.insert(spec.name.clone(), var.clone());
                continue;
            }
            if reg.sources.contains_key(&spec.name) {
                return Err(SdkError::Spec(format!("duplicate source name `{}`", spec.name)));
            }
            reg.inherit(&mut spec);
            reg.sources.insert(spec.name.clone(), spec);
        }
        Ok(reg)
    }

    /// Lets each `http` backing of `spec` inherit from its provider's definition: a source's
    /// or method's own backing is served by the provider named after the source.
    fn inherit(&self, spec: &mut SourceSpec) {
        let source = spec.name.clone();
        let apply = |b: &mut Backing, provider: &str| {
            if let Backing::Http(h) = b {
                provider_def::inherit(h, provider, self.providers.get(provider));
            }
        };
        apply(&mut spec.backing, &source);
        for m in &mut spec.methods {
            if let Some(b) = &mut m.backing {
                apply(b, &source);
            }
            for p in &mut m.providers {
                let name = p.provider.clone();
                apply(&mut p.backing, &name);
            }
        }
    }

    /// Parses every `*.json` file of a directory, and the provider definitions in its
    /// `providers/` folder if it has one.
    pub fn load_dir(dir: &Path, enabled: &dyn Fn(&str) -> bool) -> Result<Self, SdkError> {
        let specs = json_files(dir)?
            .iter()
            .map(|(file, text)| parse_spec(file, text))
            .collect::<Result<Vec<_>, _>>()?;
        let providers_dir = dir.join("providers");
        let defs = if providers_dir.is_dir() {
            json_files(&providers_dir)?
                .iter()
                .map(|(file, text)| provider_def::parse(file, text).map_err(SdkError::Spec))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        Self::build(specs, defs, enabled)
    }

    /// Parses the spec files (and provider definitions) embedded in the binary at build time.
    pub fn embedded(enabled: &dyn Fn(&str) -> bool) -> Result<Self, SdkError> {
        let json = |dir: &include_dir::Dir<'static>| {
            dir.files()
                .filter(|f| f.path().extension().is_some_and(|x| x == "json"))
                .map(|f| (f.path().display().to_string(), f.contents_utf8().unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        let specs = json(&super::EMBEDDED_SPECS)
            .into_iter()
            .map(|(file, text)| parse_spec(&file, text))
            .collect::<Result<Vec<_>, _>>()?;
        let defs = super::EMBEDDED_SPECS
            .get_dir("providers")
            .map(json)
            .unwrap_or_default()
            .into_iter()
            .map(|(file, text)| provider_def::parse(&file, text).map_err(SdkError::Spec))
            .collect::<Result<Vec<_>, _>>()?;
        Self::build(specs, defs, enabled)
    }

    /// The definition of a provider, if it has one.
    pub fn provider(&self, name: &str) -> Option<&ProviderDef> {
        self.providers.get(name)
    }

    /// Every provider definition, by name.
    pub fn provider_defs(&self) -> impl Iterator<Item = &ProviderDef> {
        self.providers.values()
    }

    /// Looks up a source.
    pub fn source(&self, name: &str) -> Option<&SourceSpec> {
        self.sources.get(name)
    }

    /// All active sources, sorted by name.
    pub fn sources(&self) -> impl Iterator<Item = &SourceSpec> {
        self.sources.values()
    }

    /// Sources present but switched off, with the environment variable that enables each.
    pub fn disabled(&self) -> &BTreeMap<String, String> {
        &self.disabled
    }

    /// Number of methods across active sources.
    pub fn method_count(&self) -> usize {
        self.sources.values().map(|s| s.methods.len()).sum()
    }

    /// `{source: [method, ...]}`: what the sandbox needs to build the `sdk` object.
    pub fn catalog(&self) -> BTreeMap<String, Vec<String>> {
        self.sources
            .values()
            .map(|s| (s.name.clone(), s.methods.iter().map(|m| m.name.clone()).collect()))
            .collect()
    }
}

/// `(path, text)` of each `*.json` file directly in `dir`, sorted by name.
fn json_files(dir: &Path) -> Result<Vec<(String, String)>, SdkError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| SdkError::Spec(format!("cannot read {}: {e}", dir.display())))?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .map(|path| {
            std::fs::read_to_string(path)
                .map(|text| (path.display().to_string(), text))
                .map_err(|e| SdkError::Spec(format!("cannot read {}: {e}", path.display())))
        })
        .collect()
}

/// Parses one spec file, naming the file in errors.
pub fn parse_spec(file: &str, text: &str) -> Result<SourceSpec, SdkError> {
    serde_json::from_str(text).map_err(|e| SdkError::Spec(format!("{file}: {e}")))
}

fn check_source(spec: &SourceSpec) -> Result<(), SdkError> {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let bad = |msg: String| Err(SdkError::Spec(format!("source `{}`: {msg}", spec.name)));
    if !ident(&spec.name) {
        return bad("name must be an identifier".into());
    }
    let http_url = |b: Option<&Backing>| match b {
        Some(Backing::Http(h)) => {
            super::http::template::literal_origin(&h.url)?;
            match &h.lookup {
                Some(l) => super::http::template::literal_origin(&l.url).map(|_| ()),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    };
    if let Err(e) = http_url(Some(&spec.backing)) {
        return bad(e);
    }
    let mut seen = std::collections::BTreeSet::new();
    for m in &spec.methods {
        if let Err(e) = http_url(m.backing.as_ref()) {
            return bad(format!("method `{}`: {e}", m.name));
        }
        if !ident(&m.name) {
            return bad(format!("method `{}`: name must be an identifier", m.name));
        }
        if !seen.insert(&m.name) {
            return bad(format!("duplicate method `{}`", m.name));
        }
        if m.params.iter().any(|p| p.name == PROVIDER_PARAM) {
            return bad(format!(
                "method `{}`: `{PROVIDER_PARAM}` is a reserved param name",
                m.name
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for p in &m.providers {
            if let Err(e) = http_url(Some(&p.backing)) {
                return bad(format!("method `{}` provider `{}`: {e}", m.name, p.provider));
            }
            // One provider may be listed twice when each entry says by `when` which params it
            // serves (DefiLlama: one URL for a chain, another for all chains).
            let split = |q: &ProviderSpec| q.provider != p.provider || !q.when.is_empty();
            if !names.insert(&p.provider) && !m.providers.iter().all(split) {
                return bad(format!(
                    "method `{}`: duplicate provider `{}` (entries of one provider each need a \
                     `when`)",
                    m.name, p.provider
                ));
            }
            if let Some(name) = p.when.keys().find(|k| !m.params.iter().any(|q| &q.name == *k)) {
                return bad(format!(
                    "method `{}` provider `{}`: `when` names `{name}`, which is not a param",
                    m.name, p.provider
                ));
            }
        }
        for p in &m.params {
            if let Some(d) = &p.default
                && let Err(e) = super::validate::check_type(p, d)
            {
                return bad(format!("method `{}` param `{}`: default {e}", m.name, p.name));
            }
        }
    }
    Ok(())
}
