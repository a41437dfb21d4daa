//! Templates between nodes: `{{inputs.<name>}}`, `{{nodes.<id>.output}}` and
//! `{{nodes.<id>.output.<field>...}}` (a field is an object key or an array index) inside
//! strings. Strict: a malformed reference is a parse error, and the validator refuses
//! references to undeclared inputs or to nodes that do not run before the one using them.
//!
//! Rendering a string puts string values in as they are and anything else as compact JSON; in
//! a JSON template (a `tool` node's `args`) a string that is exactly one reference becomes the
//! referenced value itself, typed.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use agent::tools::type_name;

/// A parsed template: literal text and references, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// A piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text.
    Text(String),
    /// A `{{...}}` reference.
    Ref(Ref),
}

/// What a reference reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    /// Where it starts.
    pub root: Root,
    /// The fields below it (`questions`, `0`, ...).
    pub path: Vec<String>,
}

/// The start of a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// `inputs.<name>`.
    Input(String),
    /// `nodes.<id>.output`.
    Node(String),
}

impl std::fmt::Display for Ref {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.root {
            Root::Input(name) => write!(f, "inputs.{name}")?,
            Root::Node(id) => write!(f, "nodes.{id}.output")?,
        }
        for p in &self.path {
            write!(f, ".{p}")?;
        }
        Ok(())
    }
}

/// A template that does not parse: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {at}: {message}")]
pub struct ParseError {
    /// Byte offset of the `{{` at fault.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

/// A reference that cannot be rendered with the values at hand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{{{{{reference}}}}}`: {message}")]
pub struct RenderError {
    /// The reference, as written.
    pub reference: String,
    /// What is missing.
    pub message: String,
}

fn is_segment(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn parse_ref(inner: &str) -> Result<Ref, String> {
    let inner = inner.trim();
    let segments: Vec<&str> = inner.split('.').collect();
    if let Some(bad) = segments.iter().find(|s| !is_segment(s)) {
        return Err(format!(
            "`{{{{{inner}}}}}` is not a reference (segment `{bad}`): write `inputs.<name>` or \
             `nodes.<id>.output[.<field>...]`, each part letters, digits, `_` or `-`"
        ));
    }
    match segments.as_slice() {
        ["inputs", name, path @ ..] => Ok(Ref {
            root: Root::Input((*name).to_owned()),
            path: path.iter().map(|s| (*s).to_owned()).collect(),
        }),
        ["nodes", id, "output", path @ ..] => Ok(Ref {
            root: Root::Node((*id).to_owned()),
            path: path.iter().map(|s| (*s).to_owned()).collect(),
        }),
        ["nodes", id, ..] => {
            Err(format!("`{{{{{inner}}}}}`: a node is read through `nodes.{id}.output`"))
        }
        _ => Err(format!(
            "`{{{{{inner}}}}}` is not a reference: it starts with `inputs.` or `nodes.`"
        )),
    }
}

impl Template {
    /// Parses `text`. Every `{{` must open a reference closed by `}}`.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_owned()));
            }
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                return Err(ParseError {
                    at: offset + open,
                    message: "`{{` is never closed by `}}`".into(),
                });
            };
            let inner = &after[..close];
            if inner.contains("{{") {
                return Err(ParseError {
                    at: offset + open,
                    message: "`{{` is never closed by `}}` before the next `{{`".into(),
                });
            }
            let r =
                parse_ref(inner).map_err(|message| ParseError { at: offset + open, message })?;
            parts.push(Part::Ref(r));
            let consumed = open + 2 + close + 2;
            rest = &rest[consumed..];
            offset += consumed;
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The parts in order.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The references, in order.
    pub fn refs(&self) -> impl Iterator<Item = &Ref> {
        self.parts.iter().filter_map(|p| match p {
            Part::Ref(r) => Some(r),
            Part::Text(_) => None,
        })
    }

    /// The reference when the template is exactly one reference and nothing else.
    pub fn single_ref(&self) -> Option<&Ref> {
        match self.parts.as_slice() {
            [Part::Ref(r)] => Some(r),
            _ => None,
        }
    }

    /// The text with every reference replaced by its value.
    pub fn render(&self, scope: &Scope) -> Result<String, RenderError> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Ref(r) => match scope.lookup(r)? {
                    Value::String(s) => out.push_str(s),
                    other => out.push_str(&other.to_string()),
                },
            }
        }
        Ok(out)
    }
}

/// The values templates read: the run's inputs and the outputs of finished nodes.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The run's input values.
    pub inputs: Arc<Map<String, Value>>,
    /// Outputs of finished nodes by id.
    pub outputs: HashMap<String, Arc<Value>>,
}

impl Scope {
    /// The value a reference points at.
    pub fn lookup(&self, r: &Ref) -> Result<&Value, RenderError> {
        let fail = |message: String| RenderError { reference: r.to_string(), message };
        let mut value = match &r.root {
            Root::Input(name) => {
                self.inputs.get(name).ok_or_else(|| fail(format!("no input `{name}`")))?
            }
            Root::Node(id) => self
                .outputs
                .get(id)
                .map(Arc::as_ref)
                .ok_or_else(|| fail(format!("node `{id}` has no output (it did not run)")))?,
        };
        for field in &r.path {
            value = match value {
                Value::Object(m) => m.get(field),
                Value::Array(a) => field.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            }
            .ok_or_else(|| fail(format!("no field `{field}` in {}", type_name(value))))?;
        }
        Ok(value)
    }

    /// Renders a string template.
    pub fn render(&self, text: &str) -> Result<String, RenderError> {
        let t = Template::parse(text)
            .map_err(|e| RenderError { reference: text.to_owned(), message: e.to_string() })?;
        t.render(self)
    }

    /// Renders every string inside a JSON value; a string that is exactly one reference
    /// becomes the referenced value itself.
    pub fn render_json(&self, value: &Value) -> Result<Value, RenderError> {
        Ok(match value {
            Value::String(s) => {
                let t = Template::parse(s)
                    .map_err(|e| RenderError { reference: s.clone(), message: e.to_string() })?;
                match t.single_ref() {
                    Some(r) => self.lookup(r)?.clone(),
                    None => Value::String(t.render(self)?),
                }
            }
            Value::Array(a) => {
                Value::Array(a.iter().map(|v| self.render_json(v)).collect::<Result<_, _>>()?)
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), self.render_json(v)?)))
                    .collect::<Result<_, RenderError>>()?,
            ),
            other => other.clone(),
        })
    }
}

/// Every template string inside a JSON value, with its field path below `field`.
pub fn strings_in<'a>(field: &str, value: &'a Value, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(s) => out.push((field.to_owned(), s)),
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                strings_in(&format!("{field}[{i}]"), v, out);
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                strings_in(&format!("{field}.{k}"), v, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn scope() -> Scope {
        let mut outputs = HashMap::new();
        outputs.insert("plan".to_owned(), Arc::new(json!({"questions": ["a?", "b?"], "n": 2})));
        outputs.insert("text".to_owned(), Arc::new(json!("hello")));
        Scope { inputs: Arc::new(json!({"topic": "gold"}).as_object().unwrap().clone()), outputs }
    }

    #[test]
    fn references_render_strings_raw_and_the_rest_as_json() {
        let s = scope();
        assert_eq!(
            s.render("About {{inputs.topic}}: {{ nodes.plan.output.questions.1 }}").unwrap(),
            "About gold: b?"
        );
        assert_eq!(s.render("{{nodes.plan.output.questions}}").unwrap(), r#"["a?","b?"]"#);
        assert_eq!(s.render("{{nodes.text.output}}!").unwrap(), "hello!");
        assert_eq!(s.render("no refs } {").unwrap(), "no refs } {");
    }

    #[test]
    fn a_json_template_keeps_types_of_whole_references() {
        let s = scope();
        let v = s
            .render_json(&json!({"n": "{{nodes.plan.output.n}}", "q": ["{{nodes.plan.output.questions.0}}", "x {{inputs.topic}}"]}))
            .unwrap();
        assert_eq!(v, json!({"n": 2, "q": ["a?", "x gold"]}));
    }

    #[test]
    fn missing_values_are_render_errors_naming_the_reference() {
        let s = scope();
        let e = s.render("{{nodes.plan.output.questions.7}}").unwrap_err();
        assert_eq!(e.reference, "nodes.plan.output.questions.7");
        assert!(e.message.contains("no field `7` in an array"), "{e}");
        let e = s.render("{{nodes.later.output}}").unwrap_err();
        assert!(e.message.contains("did not run"), "{e}");
    }

    #[test]
    fn malformed_references_are_parse_errors_with_their_offset() {
        for (text, at, needle) in [
            ("ab {{inputs.x", 3, "never closed"),
            ("{{nodes.a}}", 0, "nodes.a.output"),
            ("x{{foo.bar}}", 1, "starts with"),
            ("{{inputs..x}}", 0, "segment ``"),
            ("{{inputs.a {{inputs.b}}", 0, "before the next"),
        ] {
            let e = Template::parse(text).unwrap_err();
            assert_eq!(e.at, at, "{text}: {e}");
            assert!(e.message.contains(needle), "{text}: {e}");
        }
    }

    fn segment() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_-]{1,8}"
    }

    fn reference() -> impl Strategy<Value = Ref> {
        (any::<bool>(), segment(), prop::collection::vec(segment(), 0..3)).prop_map(
            |(input, name, path)| Ref {
                root: if input { Root::Input(name) } else { Root::Node(name) },
                path,
            },
        )
    }

    proptest! {
        /// Arbitrary text never panics the parser; text without `{{` is one literal.
        #[test]
        fn parsing_is_total(text in "\\PC{0,80}") {
            let parsed = Template::parse(&text);
            if !text.contains("{{") {
                let t = parsed.unwrap();
                prop_assert_eq!(t.render(&Scope::default()).unwrap(), text);
            }
        }

        /// Text and references written out parse back to the same parts.
        #[test]
        fn written_templates_parse_back(
            pieces in prop::collection::vec(
                prop_oneof!["[^{}]{1,10}".prop_map(Part::Text), reference().prop_map(Part::Ref)],
                0..6,
            ),
        ) {
            // Adjacent literals merge when written out; normalize the expectation the same way.
            let mut expected: Vec<Part> = Vec::new();
            for p in pieces {
                match (expected.last_mut(), p) {
                    (Some(Part::Text(prev)), Part::Text(t)) => prev.push_str(&t),
                    (_, p) => expected.push(p),
                }
            }
            let text: String = expected
                .iter()
                .map(|p| match p { Part::Text(t) => t.clone(), Part::Ref(r) => format!("{{{{{r}}}}}") })
                .collect();
            let t = Template::parse(&text).unwrap();
            prop_assert_eq!(t.parts(), expected.as_slice());
        }
    }
}
