//! The workflow file format as serde types: what `builtin/workflows/*.json`, `workflows/*.json`
//! and the bodies of `POST /api/workflows` hold. Nodes keep their kind-specific configuration
//! as a JSON map here; [`super::validate`] turns a definition into a checked
//! [`Graph`](super::validate::Graph) with every problem named at once.
//!
//! Knows nothing of running: no I/O, no models, no sandbox.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Most nodes a workflow may have.
pub const MAX_NODES: usize = 100;
/// Most edges a workflow may have.
pub const MAX_EDGES: usize = 400;
/// Most bytes of a definition's JSON.
pub const MAX_DEFINITION_BYTES: usize = 256 * 1024;
/// Highest `budget.maxSteps`.
pub const MAX_STEPS: u32 = 1000;
/// Highest `budget.timeoutMs` (6 hours).
pub const MAX_TIMEOUT_MS: u64 = 6 * 3600 * 1000;

/// A workflow: declared inputs, nodes, the edges between them and the run's budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkflowDef {
    /// The id (file stem for files; required in `POST /api/workflows`, the path's in `PUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Display name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// The variables a run is given (`{{inputs.<name>}}` in templates).
    #[serde(default)]
    pub inputs: BTreeMap<String, InputDecl>,
    /// The nodes; the one without incoming edges is where a run starts.
    pub nodes: Vec<NodeDef>,
    /// Directed edges; a `condition` node's outgoing edges carry `when`.
    #[serde(default)]
    pub edges: Vec<EdgeDef>,
    /// Bounds of one run.
    #[serde(default)]
    pub budget: Budget,
}

/// A declared input variable.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputDecl {
    /// Its JSON type (default `any`).
    #[serde(rename = "type", default)]
    pub ty: ValueType,
    /// Used when a run does not give it; an input without a default is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What it means.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// The JSON types an input may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// A string.
    String,
    /// Any number.
    Number,
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// Anything.
    #[default]
    Any,
}

impl ValueType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
            Self::Any => "any",
        }
    }

    /// Whether `v` is of this type.
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            Self::String => v.is_string(),
            Self::Number => v.is_number(),
            Self::Integer => v.is_i64() || v.is_u64(),
            Self::Boolean => v.is_boolean(),
            Self::Object => v.is_object(),
            Self::Array => v.is_array(),
            Self::Any => true,
        }
    }
}

/// One node: its id, its kind (`type`) and the kind's configuration fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeDef {
    /// Unique within the workflow (letters, digits, `_`, `-`); `{{nodes.<id>.output}}`.
    pub id: String,
    /// The node kind (`GET /api/workflows/node-types`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The kind's configuration fields, inline.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub config: Map<String, Value>,
}

/// A directed edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeDef {
    /// The node it leaves.
    pub from: String,
    /// The node it enters.
    pub to: String,
    /// Only on a `condition` node's edges: taken when the condition's value equals this; the
    /// edge without `when` is taken when none matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

/// Bounds of one run: node executions, wall time, model tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    /// Most node executions (default 50).
    #[serde(default = "default_steps")]
    pub max_steps: u32,
    /// Wall time of one run attempt in milliseconds (default 10 minutes).
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    /// Most model tokens (input + output) over the run's `llm` and `agent` nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

fn default_steps() -> u32 {
    50
}

fn default_timeout() -> u64 {
    600_000
}

impl Default for Budget {
    fn default() -> Self {
        Self { max_steps: default_steps(), timeout_ms: default_timeout(), max_tokens: None }
    }
}

/// One validation problem: the node (when it is about one), the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Issue {
    /// The node's id; absent for workflow-level fields.
    #[serde(default)]
    pub node: Option<String>,
    /// The field path (`prompt`, `args.symbol`, `edges[2].to`, `inputs.topic`, ...).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl Issue {
    /// A problem of a node's field.
    pub fn node(node: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { node: Some(node.to_owned()), field: field.into(), message: message.into() }
    }

    /// A workflow-level problem.
    pub fn workflow(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { node: None, field: field.into(), message: message.into() }
    }
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.node {
            Some(n) => write!(f, "node `{n}`, `{}`: {}", self.field, self.message),
            None => write!(f, "`{}`: {}", self.field, self.message),
        }
    }
}

/// Parses a definition from JSON text; a structural error is one [`Issue`] naming its path.
pub fn parse(text: &str) -> Result<WorkflowDef, Issue> {
    if text.len() > MAX_DEFINITION_BYTES {
        return Err(Issue::workflow(
            ".",
            format!("{} bytes; a definition may have at most {MAX_DEFINITION_BYTES}", text.len()),
        ));
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        Issue::workflow(path, e.into_inner().to_string())
    })
}

/// A valid id of a workflow, node or input: 1–64 of letters, digits, `_` and `-`.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The run's input values: the given ones checked against their declarations, defaults
/// applied. Every problem is named by `inputs.<name>`.
pub fn resolve_inputs(
    def: &WorkflowDef,
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, Vec<Issue>> {
    let mut out = Map::new();
    let mut issues = Vec::new();
    for name in given.keys() {
        if !def.inputs.contains_key(name) {
            let known: Vec<&str> = def.inputs.keys().map(String::as_str).collect();
            issues.push(Issue::workflow(
                format!("inputs.{name}"),
                format!("no input `{name}` is declared; declared: [{}]", known.join(", ")),
            ));
        }
    }
    for (name, decl) in &def.inputs {
        match given.get(name).or(decl.default.as_ref()) {
            None => issues.push(Issue::workflow(
                format!("inputs.{name}"),
                format!("required ({}): the input has no default", decl.ty.as_str()),
            )),
            Some(v) if !decl.ty.accepts(v) => issues.push(Issue::workflow(
                format!("inputs.{name}"),
                format!("must be of type {}", decl.ty.as_str()),
            )),
            Some(v) => {
                out.insert(name.clone(), v.clone());
            }
        }
    }
    if issues.is_empty() { Ok(out) } else { Err(issues) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_definition_round_trips_with_its_node_config_inline() {
        let text = json!({
            "name": "t",
            "inputs": {"topic": {"type": "string", "default": "gold"}},
            "nodes": [{"id": "a", "type": "llm", "prompt": "{{inputs.topic}}"}],
            "budget": {"maxSteps": 3}
        })
        .to_string();
        let def = parse(&text).unwrap();
        assert_eq!(def.nodes[0].config["prompt"], "{{inputs.topic}}");
        assert_eq!(def.budget, Budget { max_steps: 3, ..Budget::default() });
        let back = serde_json::to_value(&def).unwrap();
        assert_eq!(
            back["nodes"][0],
            json!({"id": "a", "type": "llm", "prompt": "{{inputs.topic}}"})
        );
    }

    #[test]
    fn structural_errors_name_their_path() {
        let e = parse(r#"{"name": "t", "nodes": [], "budget": {"maxSteps": "x"}}"#).unwrap_err();
        assert_eq!(e.field, "budget.maxSteps", "{e}");
        let e = parse(r#"{"name": "t", "nodes": [], "extra": 1}"#).unwrap_err();
        assert!(e.message.contains("extra"), "{e}");
    }

    #[test]
    fn inputs_get_defaults_types_and_unknown_names_checked() {
        let def = parse(
            &json!({"name": "t", "nodes": [], "inputs": {
                "a": {"type": "integer"}, "b": {"type": "string", "default": "x"}
            }})
            .to_string(),
        )
        .unwrap();
        let ok = resolve_inputs(&def, json!({"a": 2}).as_object().unwrap()).unwrap();
        assert_eq!(Value::Object(ok), json!({"a": 2, "b": "x"}));
        let errs =
            resolve_inputs(&def, json!({"a": 1.5, "c": 1}).as_object().unwrap()).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|i| i.field.as_str()).collect();
        assert_eq!(fields, ["inputs.c", "inputs.a"]);
        let errs = resolve_inputs(&def, &Map::new()).unwrap_err();
        assert_eq!(errs[0].field, "inputs.a");
    }
}
