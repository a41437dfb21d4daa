//! Prompt templates: named texts an administrator keeps once and agents share.
//!
//! An agent's prompt (any `systemPrompt` of its mode block) may contain `{{prompt:NAME}}`; the
//! catalog replaces it with template NAME's text when it loads the agent, so editing a template
//! changes every agent that uses it at once. Templates do not nest (a reference inside a
//! template's text is left as written). A reference to no template keeps the agent from
//! loading, with a problem naming it. Separately, [`render`] fills a template's own
//! `{{variable}}` placeholders for a client that asks for the text with values.
//!
//! Owns the syntax and the substitution; knows nothing of where templates are stored.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::definition::{AgentDefinition, Prompts};

/// One template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptTemplate {
    /// Its name (1-64 of A-Z a-z 0-9 _ - .), as agents refer to it.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// The text; may hold `{{variable}}` placeholders for [`render`].
    pub text: String,
}

/// Longest template text, in bytes.
pub const MAX_TEXT: usize = 64 * 1024;

/// Templates by name, shared with the catalog.
pub type Templates = BTreeMap<String, Arc<str>>;

static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\{\s*prompt:([A-Za-z0-9_.-]{1,64})\s*\}\}").expect("a valid pattern")
});
static VARIABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}").expect("a valid pattern")
});

/// Why a template or a use of one is refused; `field` names where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {message}")]
pub struct TemplateError {
    /// Where (`name`, `text`, `vars.region`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn fail(field: impl Into<String>, message: impl Into<String>) -> TemplateError {
    TemplateError { field: field.into(), message: message.into() }
}

impl PromptTemplate {
    /// Checks the name and the text.
    pub fn validate(&self) -> Result<(), TemplateError> {
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if self.name.is_empty() || self.name.len() > 64 || !self.name.chars().all(ok) {
            return Err(fail("name", "1-64 characters of A-Z a-z 0-9 _ - ."));
        }
        if self.text.trim().is_empty() {
            return Err(fail("text", "must not be empty"));
        }
        if self.text.len() > MAX_TEXT {
            return Err(fail(
                "text",
                format!("at most {MAX_TEXT} bytes (got {})", self.text.len()),
            ));
        }
        Ok(())
    }
}

/// The names of the templates `text` refers to, in order, once each.
pub fn references(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in REFERENCE.captures_iter(text) {
        let name = c[1].to_owned();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `text` with every `{{prompt:NAME}}` replaced by that template's text; a reference to no
/// template is an error naming it and the templates there are.
pub fn expand(text: &str, templates: &Templates) -> Result<String, String> {
    if let Some(missing) = references(text).into_iter().find(|n| !templates.contains_key(n)) {
        let known: Vec<&str> = templates.keys().map(String::as_str).collect();
        return Err(format!(
            "unknown prompt template `{missing}` (defined: {})",
            if known.is_empty() { "none".to_owned() } else { known.join(", ") }
        ));
    }
    Ok(REFERENCE
        .replace_all(text, |c: &regex::Captures<'_>| templates[&c[1]].to_string())
        .into_owned())
}

/// The definition with the `{{prompt:NAME}}` references of its prompts expanded; the error
/// names the prompt (`react.systemPrompt`) and the unknown template.
pub fn apply(
    mut def: AgentDefinition,
    templates: &Templates,
) -> Result<AgentDefinition, TemplateError> {
    let block = def.mode.block_key();
    let expand = |text: &mut String, field: &str| {
        *text = expand(text, templates).map_err(|m| fail(format!("{block}.{field}"), m))?;
        Ok::<(), TemplateError>(())
    };
    match &mut def.prompts {
        Prompts::Single { system } => expand(system, "systemPrompt")?,
        Prompts::PlanExecute { plan, execute, summary } => {
            expand(plan, "planSystemPrompt")?;
            expand(execute, "executeSystemPrompt")?;
            if let Some(summary) = summary {
                expand(summary, "summarySystemPrompt")?;
            }
        }
    }
    Ok(def)
}

/// `text` with its `{{variable}}` placeholders filled from `vars` (strings as they are, other
/// values as JSON). A placeholder without a value, or a value no placeholder takes, is an
/// error naming it, so a typo never goes unnoticed.
pub fn render(text: &str, vars: &Map<String, Value>) -> Result<String, TemplateError> {
    let mut used: Vec<&str> = Vec::new();
    for c in VARIABLE.captures_iter(text) {
        let name = c.get(1).map_or("", |m| m.as_str());
        if !vars.contains_key(name) {
            return Err(fail(format!("vars.{name}"), "the template needs a value for it"));
        }
        used.push(name);
    }
    if let Some(extra) = vars.keys().find(|k| !used.contains(&k.as_str())) {
        return Err(fail(format!("vars.{extra}"), "the template has no such placeholder"));
    }
    Ok(VARIABLE
        .replace_all(text, |c: &regex::Captures<'_>| match &vars[&c[1]] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn templates() -> Templates {
        [
            ("tone".to_owned(), Arc::from("Be brief.")),
            ("house.rules".to_owned(), Arc::from("No advice.")),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn references_expand_and_unknown_ones_are_named() {
        let text = "Start. {{prompt:tone}} {{ prompt:house.rules }} {{prompt:tone}} {{plain}}";
        assert_eq!(references(text), ["tone", "house.rules"]);
        assert_eq!(
            expand(text, &templates()).unwrap(),
            "Start. Be brief. No advice. Be brief. {{plain}}"
        );
        let err = expand("{{prompt:nope}}", &templates()).unwrap_err();
        assert!(err.contains("`nope`") && err.contains("house.rules, tone"), "{err}");
        assert!(expand("{{prompt:x}}", &Templates::new()).unwrap_err().contains("defined: none"));
    }

    #[test]
    fn render_fills_placeholders_and_names_what_is_missing_or_extra() {
        let vars = json!({"region": "EMEA", "n": 3}).as_object().unwrap().clone();
        assert_eq!(render("{{region}} top {{ n }}", &vars).unwrap(), "EMEA top 3");
        let only = json!({"region": "EMEA"}).as_object().unwrap().clone();
        assert_eq!(render("{{region}} {{n}}", &only).unwrap_err().field, "vars.n");
        assert_eq!(render("{{region}}", &vars).unwrap_err().field, "vars.n");
        // Agent references are not variables.
        assert_eq!(render("{{prompt:tone}}", &Map::new()).unwrap(), "{{prompt:tone}}");
    }

    #[test]
    fn names_and_texts_are_checked() {
        let t = |name: &str, text: &str| PromptTemplate {
            name: name.into(),
            description: String::new(),
            text: text.into(),
        };
        assert!(t("house.rules-2", "x").validate().is_ok());
        assert_eq!(t("", "x").validate().unwrap_err().field, "name");
        assert_eq!(t("a b", "x").validate().unwrap_err().field, "name");
        assert_eq!(t("a", " ").validate().unwrap_err().field, "text");
        assert_eq!(t("a", &"x".repeat(MAX_TEXT + 1)).validate().unwrap_err().field, "text");
    }

    proptest! {
        /// Text without references comes back unchanged, whatever it holds.
        #[test]
        fn text_without_references_is_unchanged(text in "[^{}]{0,200}") {
            prop_assert_eq!(expand(&text, &templates()).unwrap(), text.clone());
            prop_assert_eq!(render(&text, &Map::new()).unwrap(), text);
        }

        /// Every reference to a known template is replaced; none remains.
        #[test]
        fn known_references_all_expand(parts in proptest::collection::vec((any::<bool>(), "[a-z ]{0,10}"), 0..8)) {
            let text: String = parts
                .iter()
                .map(|(r, s)| if *r { format!("{s}{{{{prompt:tone}}}}") } else { s.clone() })
                .collect();
            let out = expand(&text, &templates()).unwrap();
            prop_assert!(references(&out).is_empty());
            prop_assert_eq!(out.matches("Be brief.").count(), parts.iter().filter(|(r, _)| *r).count());
        }
    }
}
