//! The node kinds: one file each, declared as a module and listed once in `kinds!`. A kind is its name, description,
//! configuration fields (the table both the validator and `GET /api/workflows/node-types`
//! use), a typed `Config`, kind-specific checks and `run`. Adding a kind is a new file, its
//! `mod` line and one line in the macro call below.
//!
//! The engine knows three kinds by name for their graph semantics: `condition` picks one
//! outgoing edge, `parallel` fans out, `join` collects its predecessors' outputs.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::Deps;
use super::template::Scope;
use ::agent::events::{EventSink, TokenUsage};

/// A configuration field of a node kind.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct Field {
    /// The field's name in the node object.
    pub name: &'static str,
    /// What it holds.
    #[serde(rename = "type")]
    pub ty: FieldType,
    /// Whether a node of the kind must have it.
    pub required: bool,
    /// What it means.
    pub description: &'static str,
}

/// What a configuration field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum FieldType {
    /// A string with `{{...}}` references.
    Template,
    /// A plain string (no references).
    String,
    /// Any JSON; its strings may hold references.
    Json,
    /// A non-negative integer.
    Integer,
}

impl FieldType {
    /// Whether `v` fits.
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            Self::Template | Self::String => v.is_string(),
            Self::Json => true,
            Self::Integer => v.is_u64(),
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Self::Template | Self::String => "a string",
            Self::Json => "JSON",
            Self::Integer => "a non-negative integer",
        }
    }
}

/// What kind-specific checks may consult: the names that exist on this server.
#[derive(Debug, Clone, Default)]
pub struct CheckContext {
    /// Backend tools a `tool` node may call.
    pub tools: Vec<String>,
    /// Agents an `agent` node may run.
    pub agents: Vec<String>,
    /// Knowledge bases a `knowledge` node may search, as `(id, name)`.
    pub knowledge_bases: Vec<(String, String)>,
}

/// Everything a node execution gets.
pub struct NodeCtx {
    /// The workflow run.
    pub run_id: String,
    /// The node.
    pub node_id: String,
    /// The node's task id in the event stream.
    pub task_id: String,
    /// The node's position in the workflow (short ids for its member's tool calls).
    pub index: usize,
    /// The API key the run is for (`None`: the owner), for accounting.
    pub caller: Option<String>,
    /// Inputs and the outputs of the nodes finished before it started.
    pub scope: Scope,
    /// The predecessors that ran, with their outputs, in edge order (for `join`).
    pub preds: Vec<(String, Arc<Value>)>,
    /// Services.
    pub deps: Arc<Deps>,
    /// The run's event stream.
    pub sink: Arc<EventSink>,
    /// Cancelled when the run stops.
    pub cancel: CancellationToken,
    /// The run slots (a `human` node parks its run while it waits).
    pub slots: Arc<super::slots::Slots>,
    /// How long an `llm` or `agent` node waits for a slot of the agent run cap.
    pub agent_wait: std::time::Duration,
    /// Who the run acts for (`None`: the owner).
    pub principal: Option<base::principal::Principal>,
}

/// What a finished node produced.
#[derive(Debug, Clone, Default)]
pub struct NodeResult {
    /// Its output (`{{nodes.<id>.output}}`).
    pub output: Value,
    /// For a `condition` node: the value its outgoing edges are matched against.
    pub branch: Option<String>,
    /// Model tokens it used.
    pub usage: TokenUsage,
}

impl NodeResult {
    /// An output and nothing else.
    pub fn output(output: Value) -> Self {
        Self { output, ..Self::default() }
    }
}

/// Why a node failed: the message (shown in `task.fail` and `run.error`) and details (a
/// sandbox error with line and column, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeError {
    /// What went wrong.
    pub message: String,
    /// Structured details, when there are any.
    pub detail: Option<Value>,
}

impl NodeError {
    /// A message only.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), detail: None }
    }
}

impl From<super::template::RenderError> for NodeError {
    fn from(e: super::template::RenderError) -> Self {
        Self::new(e.to_string())
    }
}

/// One node kind as `GET /api/workflows/node-types` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct KindInfo {
    /// The `type` of a node.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Its configuration fields.
    #[schema(value_type = Vec<Field>)]
    pub fields: &'static [Field],
}

// The kinds' files (declared here, not in the macro, so rustfmt sees them).
pub mod agent;
pub mod code;
pub mod condition;
pub mod human;
pub mod join;
pub mod knowledge;
pub mod llm;
pub mod parallel;
pub mod tool;

macro_rules! kinds {
    ($($variant:ident => $module:ident),* $(,)?) => {
        /// The node kinds.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum NodeKind {
            $(
                #[doc = concat!("`", stringify!($module), "`")]
                $variant
            ),*
        }

        impl NodeKind {
            /// Every kind.
            pub const ALL: &'static [NodeKind] = &[$(NodeKind::$variant),*];

            /// The `type` of a node.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => stringify!($module)),* }
            }

            /// What it does.
            pub fn description(self) -> &'static str {
                match self { $(Self::$variant => $module::DESCRIPTION),* }
            }

            /// Its configuration fields.
            pub fn fields(self) -> &'static [Field] {
                match self { $(Self::$variant => $module::FIELDS),* }
            }
        }

        /// A node's checked, typed configuration.
        #[derive(Debug, Clone)]
        pub enum NodeConfig {
            $(
                #[doc = concat!("`", stringify!($module), "`")]
                $variant($module::Config)
            ),*
        }

        impl NodeConfig {
            /// Its kind.
            pub fn kind(&self) -> NodeKind {
                match self { $(Self::$variant(_) => NodeKind::$variant),* }
            }

            fn typed(kind: NodeKind, map: Map<String, Value>) -> Result<Self, serde_json::Error> {
                Ok(match kind {
                    $(NodeKind::$variant => Self::$variant(serde_json::from_value(Value::Object(map))?)),*
                })
            }

            fn check_kind(&self, cx: &CheckContext) -> Vec<(String, String)> {
                match self { $(Self::$variant(c) => $module::check(c, cx)),* }
            }

            /// Runs the node.
            #[base::boxed]
            pub async fn run(&self, ctx: &NodeCtx) -> Result<NodeResult, NodeError> {
                match self { $(Self::$variant(c) => $module::run(c, ctx).await),* }
            }
        }
    };
}

kinds! {
    Llm => llm,
    Agent => agent,
    Tool => tool,
    Code => code,
    Condition => condition,
    Parallel => parallel,
    Join => join,
    Human => human,
    Knowledge => knowledge,
}

impl NodeKind {
    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The kind as the node-types listing shows it.
    pub fn info(self) -> KindInfo {
        KindInfo { kind: self.name(), description: self.description(), fields: self.fields() }
    }
}

impl NodeConfig {
    /// Checks a node's configuration map against its kind's field table (unknown fields,
    /// missing required ones, types), then the kind's own checks; every problem as
    /// `(field, message)`.
    pub fn from_map(
        kind: NodeKind,
        map: &Map<String, Value>,
        cx: &CheckContext,
    ) -> Result<Self, Vec<(String, String)>> {
        let fields = kind.fields();
        let mut problems = Vec::new();
        for (name, value) in map {
            match fields.iter().find(|f| f.name == name) {
                None => {
                    let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
                    let hint = base::text::closest(name, &names);
                    let hint = match hint.first() {
                        Some(h) => format!("; did you mean `{h}`?"),
                        None => String::new(),
                    };
                    problems.push((
                        name.clone(),
                        format!(
                            "not a field of a `{}` node (fields: {}){hint}",
                            kind.name(),
                            names.join(", ")
                        ),
                    ));
                }
                Some(f) if !f.ty.accepts(value) => {
                    problems.push((name.clone(), format!("must be {}", f.ty.expected())));
                }
                Some(_) => {}
            }
        }
        for f in fields.iter().filter(|f| f.required) {
            if !map.contains_key(f.name) {
                problems.push((f.name.to_owned(), format!("required: {}", f.description)));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let config = Self::typed(kind, map.clone())
            .map_err(|e| vec![("(config)".to_owned(), e.to_string())])?;
        let problems = config.check_kind(cx);
        if problems.is_empty() { Ok(config) } else { Err(problems) }
    }

    /// The template fields (string templates and JSON with templates) as `(field, value)`.
    pub fn template_fields(map: &Map<String, Value>, kind: NodeKind) -> Vec<(String, &Value)> {
        kind.fields()
            .iter()
            .filter(|f| matches!(f.ty, FieldType::Template | FieldType::Json))
            .filter_map(|f| map.get(f.name).map(|v| (f.name.to_owned(), v)))
            .collect()
    }
}
