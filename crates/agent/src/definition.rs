//! Agent definitions: the agent JSON v2 schema (`agents/<key>.json`), its `"""` multi-line
//! prompt preprocessing, validation with field paths, and the resolved [`RunPolicy`] (mode preset
//! plus the file's overrides).
//!
//! Pure functions of the file's text: this module knows nothing of directories, reloading, tool
//! executors or HTTP. The catalog reads files and calls [`parse`]; `agent_file_create` can call
//! it to check what it is about to write.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::str::FromStr;

/// The file's team fields (`type`, `members`, `merger`) and a team run's budget meter.
pub mod team;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::tools::mcp::spec::{self as mcp, McpServer, McpServerFile};
pub use crate::field_error::FieldError;
use llm::Effort;
use team::{Team, TeamKind};

/// Upper bound for `react.maxSteps` and `budget.maxSteps`.
pub const MAX_STEPS: i64 = 50;
/// Most entries of `fallbackModels`.
pub const MAX_FALLBACK_MODELS: usize = 8;
/// Most entries of `knowledgeBases`.
pub const MAX_KNOWLEDGE_BASES: usize = 32;
/// `react.maxSteps` when the file does not say.
pub const DEFAULT_REACT_STEPS: u32 = 6;
/// Steps of a PLAN_EXECUTE run when `budget.maxSteps` does not say.
pub const DEFAULT_PLAN_STEPS: u32 = 6;

/// The six run modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// One direct answer, no tools.
    Plain,
    /// Reason, then answer; no tools.
    Thinking,
    /// At most one round of tool calls, then the answer.
    PlainTooling,
    /// Reason, at most one round of tool calls, then the answer.
    ThinkingTooling,
    /// Up to `maxSteps` rounds of think → one tool → observe.
    React,
    /// Plan first, then steps with 0..N (parallel) tool calls each, then a summary.
    PlanExecute,
}

impl Mode {
    /// All modes, in documentation order.
    pub const ALL: [Mode; 6] = [
        Mode::Plain,
        Mode::Thinking,
        Mode::PlainTooling,
        Mode::ThinkingTooling,
        Mode::React,
        Mode::PlanExecute,
    ];

    /// The canonical name (`PLAN_EXECUTE`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plain => "PLAIN",
            Mode::Thinking => "THINKING",
            Mode::PlainTooling => "PLAIN_TOOLING",
            Mode::ThinkingTooling => "THINKING_TOOLING",
            Mode::React => "REACT",
            Mode::PlanExecute => "PLAN_EXECUTE",
        }
    }

    /// The key of the mode's configuration block (`planExecute`).
    pub fn block_key(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Thinking => "thinking",
            Mode::PlainTooling => "plainTooling",
            Mode::ThinkingTooling => "thinkingTooling",
            Mode::React => "react",
            Mode::PlanExecute => "planExecute",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown mode `{0}`, expected one of PLAIN, THINKING, PLAIN_TOOLING, THINKING_TOOLING, REACT, PLAN_EXECUTE"
)]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    /// Canonical names plus the legacy aliases `RE_ACT`, `THINKING_AND_CONTENT` (→ REACT) and
    /// `THINKING_AND_CONTENT_WITH_DUAL_TOOL_CALLS` (→ PLAN_EXECUTE). Case, surrounding blanks and
    /// `-` for `_` are forgiven, as the original gateway did.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().replace('-', "_").to_ascii_uppercase();
        Ok(match norm.as_str() {
            "PLAIN" => Mode::Plain,
            "THINKING" => Mode::Thinking,
            "PLAIN_TOOLING" => Mode::PlainTooling,
            "THINKING_TOOLING" => Mode::ThinkingTooling,
            "REACT" | "RE_ACT" | "THINKING_AND_CONTENT" => Mode::React,
            "PLAN_EXECUTE" | "THINKING_AND_CONTENT_WITH_DUAL_TOOL_CALLS" => Mode::PlanExecute,
            _ => return Err(UnknownMode(s.to_owned())),
        })
    }
}

impl Serialize for Mode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How much reasoning effort to ask of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Compute {
    /// Little.
    Low,
    /// The provider's default.
    Medium,
    /// Much.
    High,
}

impl Compute {
    /// The provider-neutral effort.
    pub fn effort(self) -> Effort {
        match self {
            Compute::Low => Effort::Low,
            Compute::Medium => Effort::Medium,
            Compute::High => Effort::High,
        }
    }
}

/// The shape of the final answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OutputPolicy {
    /// The answer text only.
    Plain,
    /// The answer with a summary of the reasoning behind it (turns reasoning on).
    ReasoningSummary,
}

/// Whether the model may, or must, call tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ToolPolicy {
    /// No tools are offered.
    Disallow,
    /// The model decides.
    Allow,
    /// The model must call a tool before answering.
    Require,
}

/// Whether the candidate answer gets a second, correcting pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerifyPolicy {
    /// The first answer is final.
    None,
    /// The first answer stays internal; a second pass checks and fixes it and is what streams.
    SecondPassFix,
}

/// `budget` as written in a file: every field optional, numbers kept wide so out-of-range values
/// get a range message rather than a type error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetOverride {
    /// Most model calls per run (1..=100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_calls: Option<i64>,
    /// Most tool calls per run (0..=200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<i64>,
    /// Most steps (REACT rounds, PLAN_EXECUTE steps) per run (1..=50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<i64>,
    /// Wall-clock limit of a run in milliseconds (1000..=3600000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
    /// Teams only: most tokens (input and output) of the whole team run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
}

/// The block of a single-prompt mode (`plain`, `thinking`, `plainTooling`, `thinkingTooling`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptBlock {
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Stream the model's reasoning to the user (`reasoning.*` events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expose_reasoning_to_user: Option<bool>,
}

/// The `react` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReactBlock {
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Stream the model's reasoning to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expose_reasoning_to_user: Option<bool>,
    /// Most think → tool → observe rounds (1..=50, default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<i64>,
}

/// The `planExecute` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanExecuteBlock {
    /// System prompt of the planning call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_system_prompt: Option<String>,
    /// System prompt of the step calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execute_system_prompt: Option<String>,
    /// System prompt of the final summary call; without it the last step's answer is final.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_system_prompt: Option<String>,
    /// Stream the model's reasoning to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expose_reasoning_to_user: Option<bool>,
}

/// An agent file as written (after `"""` preprocessing), before validation. Serializing it gives
/// standard JSON in the same schema (what `agent_file_create` writes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentFile {
    /// What the agent is for (shown in `/api/agents`).
    #[serde(default)]
    pub description: String,
    /// `single` (default) or a team: `sequential`, `parallel`, `routing`, `supervisor`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<TeamKind>,
    /// A team's member agents, by key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// A parallel team's merging member; absent: the answers are concatenated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merger: Option<String>,
    /// Provider key; absent or empty: the server's default provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_key: Option<String>,
    /// Model id; absent or empty: the provider's default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Models (`provider/model`) a model call falls back to, in order, when the model fails
    /// with a retryable error before any output; absent: the server's `[llm] fallback`; `[]`:
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_models: Option<Vec<String>>,
    /// The model (`provider/model`) that condenses the oldest turns of a long chat; absent:
    /// the agent's own model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_model: Option<String>,
    /// Run mode (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Tool names offered to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// MCP servers whose tools join `tools`, namespaced (`fs` → `fs__read_file`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerFile>,
    /// The knowledge bases (names or ids) `knowledge_search` may search for this agent;
    /// absent: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge_bases: Option<Vec<String>>,
    /// Must be `true` when `tools` lists `bash`: the shell runs commands on the server's
    /// machine (confined, but still), so a file has to say so in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_shell: Option<bool>,
    /// The shell may use the network (default false: no network at all, not even loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_network: Option<bool>,
    /// Ask the user before each shell command (default true; `false` runs commands unasked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_shell: Option<bool>,
    /// Who wrote the file when not a person: `agent_file_create` sets it to its own name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Sampling temperature of every model call (0 to 2); absent: the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<serde_json::Number>,
    /// Longest output of a model call, in tokens; absent: the model's registry default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<serde_json::Number>,
    /// Override of the mode's compute preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute: Option<Compute>,
    /// Override of the mode's output preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputPolicy>,
    /// Override of the mode's tool policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_policy: Option<ToolPolicy>,
    /// Override of the mode's verify policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyPolicy>,
    /// Overrides of the mode's budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetOverride>,
    /// PLAIN block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain: Option<PromptBlock>,
    /// THINKING block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<PromptBlock>,
    /// PLAIN_TOOLING block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_tooling: Option<PromptBlock>,
    /// THINKING_TOOLING block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_tooling: Option<PromptBlock>,
    /// REACT block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub react: Option<ReactBlock>,
    /// PLAN_EXECUTE block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_execute: Option<PlanExecuteBlock>,
}

/// The system prompts of a validated agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Prompts {
    /// Every mode but PLAN_EXECUTE.
    Single {
        /// The system prompt.
        system: String,
    },
    /// PLAN_EXECUTE.
    PlanExecute {
        /// Planning call.
        plan: String,
        /// Step calls.
        execute: String,
        /// Final summary call, if any.
        summary: Option<String>,
    },
}

/// Resolved limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// Most model calls.
    pub max_model_calls: u32,
    /// Most tool calls.
    pub max_tool_calls: u32,
    /// Most steps (REACT rounds, PLAN_EXECUTE steps; 1 for the one-shot modes).
    pub max_steps: u32,
    /// Wall-clock limit in milliseconds.
    pub timeout_ms: u64,
}

impl Budget {
    /// The wall-clock limit.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms)
    }
}

/// How a run of an agent behaves: the mode's preset with the file's overrides applied. The run
/// loop reads only this, never the raw overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunPolicy {
    /// The mode this policy came from.
    pub mode: Mode,
    /// Reasoning effort.
    pub compute: Compute,
    /// Answer shape.
    pub output: OutputPolicy,
    /// Tool policy. DISALLOW means no tools are sent at all.
    pub tool_policy: ToolPolicy,
    /// Second pass or not.
    pub verify: VerifyPolicy,
    /// Ask the model to reason (THINKING modes, or output REASONING_SUMMARY).
    pub reasoning: bool,
    /// Stream reasoning to the user as `reasoning.*` events (the block's
    /// `exposeReasoningToUser`, default false).
    pub expose_reasoning: bool,
    /// PLAN_EXECUTE: a planning call comes first.
    pub plan_first: bool,
    /// Most model turns whose tool calls are executed (0: tools never run).
    pub max_tool_rounds: u32,
    /// Most tool calls honoured in one turn; `None`: any number, run in parallel.
    pub max_tools_per_round: Option<u32>,
    /// Limits.
    pub budget: Budget,
}

/// Why an agent file was rejected: every problem found, each with its path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", join(.errors))]
pub struct DefinitionError {
    /// At least one.
    pub errors: Vec<FieldError>,
}

fn join(errors: &[FieldError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// A validated agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDefinition {
    /// The file name without `.json`.
    pub key: String,
    /// Description (may be empty).
    pub description: String,
    /// Provider key; `None`: the server's default.
    pub provider_key: Option<String>,
    /// Model id; `None`: the provider's default.
    pub model: Option<String>,
    /// `fallbackModels`: `provider/model` references, deduplicated, in file order; `None`:
    /// the server's default list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_models: Option<Vec<String>>,
    /// `summaryModel`: `provider/model` that summarizes long chats; `None`: the agent's model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_model: Option<String>,
    /// Run mode.
    pub mode: Mode,
    /// Tool names, deduplicated, in file order.
    pub tools: Vec<String>,
    /// `mcpServers`, validated: their tools join `tools` when a run starts. Shown by name
    /// only (their `env` and `headers` may hold secrets).
    #[serde(serialize_with = "server_names", skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServer>,
    /// `knowledgeBases`: the bases (names or ids) `knowledge_search` may search, trimmed and
    /// deduplicated; `None`: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knowledge_bases: Option<Vec<String>>,
    /// What the `bash` tool may do for this agent.
    pub shell: ShellPolicy,
    /// Set when the file was written at run time by a tool (`agent_file_create`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// `temperature`: sent with every model call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// `maxTokens`: the output limit of every model call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The system prompts of the mode.
    pub prompts: Prompts,
    /// The resolved policy.
    pub policy: RunPolicy,
    /// Set for a team (`type` other than `single`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<Team>,
    /// Non-fatal findings (unknown keys, ignored tools, ...).
    pub warnings: Vec<FieldError>,
    /// The file as parsed (standard JSON after preprocessing), for detail views.
    #[serde(skip)]
    pub file: AgentFile,
}

fn server_names<S: Serializer>(servers: &[McpServer], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(servers.iter().map(|m| &m.name))
}

/// The shell grant of an agent file: `allowShell`, `shellNetwork` and `confirmShell`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellPolicy {
    /// `allowShell`: the `bash` tool may run for this agent (required when it lists `bash`).
    pub allow: bool,
    /// `shellNetwork`: the shell's sandbox shares the host's network.
    pub network: bool,
    /// `confirmShell` (default true): the user approves each command before it runs.
    pub confirm: bool,
}

/// Whether `key` is a valid agent key (`[A-Za-z0-9_-]{1,64}`; the same rule as tool names).
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parses and validates the text of `agents/<key>.json`.
pub fn parse(key: &str, text: &str) -> Result<AgentDefinition, DefinitionError> {
    let fail = |e: FieldError| DefinitionError { errors: vec![e] };
    if !is_valid_key(key) {
        return Err(fail(FieldError::new(
            "(file name)",
            format!("agent key `{key}` must be 1-64 characters of A-Z a-z 0-9 _ -"),
        )));
    }
    // Some editors start UTF-8 files with a BOM, which JSON does not allow.
    let text = preprocess(text.strip_prefix('\u{feff}').unwrap_or(text)).map_err(fail)?;
    let mut unknown = Vec::new();
    let file = deserialize(&text, &mut unknown).map_err(fail)?;
    let warnings = unknown.into_iter().map(unknown_key_warning).collect();
    validate(key, file, warnings)
}

fn unknown_key_warning(path: String) -> FieldError {
    let message = if path == "systemPrompt" {
        "unknown key, ignored (v2 puts the prompt in the mode's block, e.g. plain.systemPrompt)"
    } else {
        "unknown key, ignored"
    };
    FieldError::new(path, message)
}

/// Deserializes with the failing field's path and collects the paths of ignored keys.
fn deserialize(text: &str, unknown: &mut Vec<String>) -> Result<AgentFile, FieldError> {
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let tracked = serde_path_to_error::Deserializer::new(&mut json, &mut track);
    let result = serde_ignored::deserialize(tracked, |path| unknown.push(ignored_path(&path)));
    let file = match result {
        Ok(file) => file,
        Err(e) => {
            let path = track.path().to_string();
            return Err(if e.is_syntax() || e.is_eof() || path == "." {
                FieldError::new(".", e.to_string())
            } else {
                FieldError::new(path, e.to_string())
            });
        }
    };
    json.end().map_err(|e| FieldError::new(".", e.to_string()))?;
    Ok(file)
}

/// `a.b[0].c`, like serde_path_to_error (serde_ignored's own Display adds `?` for options).
fn ignored_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path as P;
    match path {
        P::Root => String::new(),
        P::Seq { parent, index } => format!("{}[{index}]", ignored_path(parent)),
        P::Map { parent, key } => match ignored_path(parent) {
            p if p.is_empty() => key.clone(),
            p => format!("{p}.{key}"),
        },
        P::Some { parent } | P::NewtypeStruct { parent } | P::NewtypeVariant { parent } => {
            ignored_path(parent)
        }
    }
}

fn nonblank(s: &Option<String>) -> Option<String> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn range(
    errors: &mut Vec<FieldError>,
    path: &str,
    v: Option<i64>,
    lo: i64,
    hi: i64,
) -> Option<i64> {
    let v = v?;
    if (lo..=hi).contains(&v) {
        Some(v)
    } else {
        errors.push(FieldError::new(path, format!("must be {lo}..={hi} (got {v})")));
        None
    }
}

fn validate(
    key: &str,
    mut file: AgentFile,
    mut warnings: Vec<FieldError>,
) -> Result<AgentDefinition, DefinitionError> {
    let mut errors = Vec::new();
    let team = team::validate(
        key,
        file.kind,
        &file.members,
        file.merger.as_deref(),
        file.budget.as_ref(),
        &mut errors,
        &mut warnings,
    );
    if let Some(t) = &team
        && !t.kind.needs_mode()
        && file.mode.is_none()
    {
        // Sequential and parallel teams make no call of their own; a router without a prompt
        // of its own classifies with the built-in one alone.
        file.mode = Some(Mode::Plain);
        if file.plain.as_ref().and_then(|b| nonblank(&b.system_prompt)).is_none() {
            file.plain = Some(PromptBlock {
                system_prompt: Some(team::ROUTER_PROMPT.to_owned()),
                expose_reasoning_to_user: None,
            });
        }
    }
    let Some(mode) = file.mode else {
        errors.push(FieldError::new(
            "mode",
            "required, one of PLAIN, THINKING, PLAIN_TOOLING, THINKING_TOOLING, REACT, PLAN_EXECUTE",
        ));
        return Err(DefinitionError { errors });
    };

    let needs = |errors: &mut Vec<FieldError>, field: &str, value: Option<String>| {
        if value.is_none() {
            errors.push(FieldError::new(
                format!("{}.{field}", mode.block_key()),
                format!("required by mode {mode}"),
            ));
        }
        value
    };
    let single = |b: &Option<PromptBlock>| {
        (
            b.as_ref().and_then(|b| nonblank(&b.system_prompt)),
            b.as_ref().and_then(|b| b.expose_reasoning_to_user),
        )
    };
    let (prompts, expose) = match mode {
        Mode::Plain | Mode::Thinking | Mode::PlainTooling | Mode::ThinkingTooling => {
            let block = match mode {
                Mode::Plain => &file.plain,
                Mode::Thinking => &file.thinking,
                Mode::PlainTooling => &file.plain_tooling,
                _ => &file.thinking_tooling,
            };
            let (prompt, expose) = single(block);
            let prompt = needs(&mut errors, "systemPrompt", prompt);
            (prompt.map(|system| Prompts::Single { system }), expose)
        }
        Mode::React => {
            let b = file.react.as_ref();
            let prompt =
                needs(&mut errors, "systemPrompt", b.and_then(|b| nonblank(&b.system_prompt)));
            (
                prompt.map(|system| Prompts::Single { system }),
                b.and_then(|b| b.expose_reasoning_to_user),
            )
        }
        Mode::PlanExecute => {
            let b = file.plan_execute.as_ref();
            let plan = needs(
                &mut errors,
                "planSystemPrompt",
                b.and_then(|b| nonblank(&b.plan_system_prompt)),
            );
            let execute = needs(
                &mut errors,
                "executeSystemPrompt",
                b.and_then(|b| nonblank(&b.execute_system_prompt)),
            );
            let summary = b.and_then(|b| nonblank(&b.summary_system_prompt));
            let prompts = match (plan, execute) {
                (Some(plan), Some(execute)) => {
                    Some(Prompts::PlanExecute { plan, execute, summary })
                }
                _ => None,
            };
            (prompts, b.and_then(|b| b.expose_reasoning_to_user))
        }
    };

    let react_steps = range(
        &mut errors,
        "react.maxSteps",
        file.react.as_ref().and_then(|r| r.max_steps),
        1,
        MAX_STEPS,
    );
    let over = file.budget.clone().unwrap_or_default();
    let max_model_calls = range(&mut errors, "budget.maxModelCalls", over.max_model_calls, 1, 100);
    let max_tool_calls = range(&mut errors, "budget.maxToolCalls", over.max_tool_calls, 0, 200);
    let max_steps = range(&mut errors, "budget.maxSteps", over.max_steps, 1, MAX_STEPS);
    let timeout_ms = range(&mut errors, "budget.timeoutMs", over.timeout_ms, 1000, 3_600_000);
    if mode == Mode::React
        && let (Some(r), Some(b)) = (react_steps, max_steps)
        && r != b
    {
        warnings.push(FieldError::new(
            "react.maxSteps",
            format!("budget.maxSteps ({b}) overrides it ({r})"),
        ));
    }

    let mut tools: Vec<String> = Vec::new();
    for (i, name) in file.tools.iter().enumerate() {
        if !is_valid_key(name) {
            errors.push(FieldError::new(
                format!("tools[{i}]"),
                format!("tool name `{name}` must be 1-64 characters of A-Z a-z 0-9 _ -"),
            ));
        } else if tools.contains(name) {
            warnings.push(FieldError::new(format!("tools[{i}]"), format!("`{name}` listed twice")));
        } else {
            tools.push(name.clone());
        }
    }

    let mcp_servers = mcp::validate(&file.mcp_servers, &mut errors);

    let allow = file.allow_shell == Some(true);
    let shell = ShellPolicy {
        allow,
        network: allow && file.shell_network == Some(true),
        confirm: allow && file.confirm_shell != Some(false),
    };
    if tools.iter().any(|t| t == "bash") && !shell.allow {
        errors.push(FieldError::new(
            "allowShell",
            "required: an agent that lists `bash` in tools must also say \"allowShell\": true \
             (the shell runs commands on the server's machine, confined to its workspace)",
        ));
    }
    for (key, set) in [("shellNetwork", file.shell_network), ("confirmShell", file.confirm_shell)] {
        if set.is_some() && !allow {
            warnings.push(FieldError::new(key, "ignored: the agent has no shell"));
        }
    }

    #[allow(clippy::cast_possible_truncation)]
    let temperature = match file.temperature.as_ref().map(serde_json::Number::as_f64) {
        None => None,
        Some(Some(t)) if (0.0..=2.0).contains(&t) => Some(t as f32),
        Some(_) => {
            errors.push(FieldError::new("temperature", "must be a number from 0 to 2"));
            None
        }
    };
    let max_tokens = match file.max_tokens.as_ref().map(serde_json::Number::as_u64) {
        None => None,
        Some(Some(n)) if (1..=1_000_000).contains(&n) => u32::try_from(n).ok(),
        Some(_) => {
            errors.push(FieldError::new("maxTokens", "must be a whole number from 1 to 1000000"));
            None
        }
    };

    let fallback_models = file.fallback_models.as_ref().map(|list| {
        let mut kept: Vec<String> = Vec::new();
        if list.len() > MAX_FALLBACK_MODELS {
            errors.push(FieldError::new(
                "fallbackModels",
                format!("at most {MAX_FALLBACK_MODELS} models"),
            ));
        }
        for (i, reference) in list.iter().enumerate() {
            let reference = reference.trim();
            let at = format!("fallbackModels[{i}]");
            match reference.split_once('/') {
                Some((p, m)) if !p.trim().is_empty() && !m.trim().is_empty() => {
                    if kept.iter().any(|k| k == reference) {
                        warnings.push(FieldError::new(at, format!("`{reference}` listed twice")));
                    } else {
                        kept.push(reference.to_owned());
                    }
                }
                _ => errors.push(FieldError::new(
                    at,
                    format!("`{reference}` must be `provider/model` (e.g. `openai/gpt-4.1-mini`)"),
                )),
            }
        }
        kept
    });

    let knowledge_bases = file.knowledge_bases.as_ref().map(|list| {
        let mut kept: Vec<String> = Vec::new();
        if list.len() > MAX_KNOWLEDGE_BASES {
            errors.push(FieldError::new(
                "knowledgeBases",
                format!("at most {MAX_KNOWLEDGE_BASES} knowledge bases"),
            ));
        }
        for (i, name) in list.iter().enumerate() {
            let name = name.trim();
            let at = format!("knowledgeBases[{i}]");
            if name.is_empty() || name.chars().count() > 100 {
                errors.push(FieldError::new(
                    at,
                    "must be a knowledge base's name or id (1-100 characters)",
                ));
            } else if kept.iter().any(|k| k == name) {
                warnings.push(FieldError::new(at, format!("`{name}` listed twice")));
            } else {
                kept.push(name.to_owned());
            }
        }
        kept
    });

    let summary_model = nonblank(&file.summary_model);
    if let Some(m) = &summary_model
        && !m.split_once('/').is_some_and(|(p, m)| !p.trim().is_empty() && !m.trim().is_empty())
    {
        errors.push(FieldError::new(
            "summaryModel",
            format!("`{m}` must be `provider/model` (e.g. `openai/gpt-4.1-mini`)"),
        ));
    }

    let overrides = Overrides {
        compute: file.compute,
        output: file.output,
        tool_policy: file.tool_policy,
        verify: file.verify,
        steps: max_steps.or(react_steps).map(to_u32),
        max_model_calls: max_model_calls.map(to_u32),
        max_tool_calls: max_tool_calls.map(to_u32),
        timeout_ms: timeout_ms.map(|v| u64::try_from(v).unwrap_or(u64::MAX)),
        expose_reasoning: expose,
    };
    let mut policy = resolve_policy(mode, &overrides);
    if let Some(t) = &team
        && t.kind == TeamKind::Supervisor
    {
        // The supervisor's own run is the team run: it lasts as long as the team may.
        policy.budget.timeout_ms = t.budget.timeout_ms;
    }
    if policy.tool_policy == ToolPolicy::Require && tools.is_empty() && mcp_servers.is_empty() {
        errors.push(FieldError::new(
            "toolPolicy",
            "REQUIRE needs at least one name in tools (or an MCP server)",
        ));
    }
    if policy.tool_policy == ToolPolicy::Disallow && !tools.is_empty() {
        warnings.push(FieldError::new(
            "tools",
            format!("ignored: mode {mode} offers no tools unless toolPolicy is ALLOW or REQUIRE"),
        ));
    }

    match prompts {
        Some(prompts) if errors.is_empty() => Ok(AgentDefinition {
            key: key.to_owned(),
            description: file.description.trim().to_owned(),
            provider_key: nonblank(&file.provider_key),
            model: nonblank(&file.model),
            fallback_models,
            summary_model,
            mode,
            tools,
            mcp_servers,
            knowledge_bases,
            shell,
            created_by: nonblank(&file.created_by),
            temperature,
            max_tokens,
            prompts,
            policy,
            team,
            warnings,
            file,
        }),
        _ => Err(DefinitionError { errors }),
    }
}

fn to_u32(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The overrides [`resolve_policy`] applies, already range-checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `compute`.
    pub compute: Option<Compute>,
    /// `output`.
    pub output: Option<OutputPolicy>,
    /// `toolPolicy`.
    pub tool_policy: Option<ToolPolicy>,
    /// `verify`.
    pub verify: Option<VerifyPolicy>,
    /// `budget.maxSteps`, else `react.maxSteps`.
    pub steps: Option<u32>,
    /// `budget.maxModelCalls`.
    pub max_model_calls: Option<u32>,
    /// `budget.maxToolCalls`.
    pub max_tool_calls: Option<u32>,
    /// `budget.timeoutMs`.
    pub timeout_ms: Option<u64>,
    /// The mode block's `exposeReasoningToUser`.
    pub expose_reasoning: Option<bool>,
}

/// The mode's preset with `o` applied.
///
/// Presets: PLAIN (LOW compute, no tools, 1 model call); THINKING (MEDIUM, reasoning, output
/// REASONING_SUMMARY, no tools); PLAIN_TOOLING / THINKING_TOOLING (MEDIUM, one tool round with
/// any number of calls, 2 model calls; the latter with reasoning); REACT (MEDIUM, `steps`
/// rounds of at most one tool, default 6); PLAN_EXECUTE (HIGH, plan first, `steps` steps with
/// parallel tools, default 6). Verify is NONE everywhere unless overridden.
///
/// Overrides are applied, not merely recorded: ALLOW/REQUIRE on PLAIN or THINKING gives them one
/// tool round, DISALLOW takes every mode's tool rounds away, REASONING_SUMMARY turns reasoning on,
/// SECOND_PASS_FIX adds a model call to the derived budget. Model and tool call budgets derive from
/// the steps unless `budget` sets them.
pub fn resolve_policy(mode: Mode, o: &Overrides) -> RunPolicy {
    let (compute, output, reasoning) = match mode {
        Mode::Plain => (Compute::Low, OutputPolicy::Plain, false),
        Mode::Thinking => (Compute::Medium, OutputPolicy::ReasoningSummary, true),
        Mode::PlainTooling => (Compute::Medium, OutputPolicy::Plain, false),
        Mode::ThinkingTooling => (Compute::Medium, OutputPolicy::ReasoningSummary, true),
        Mode::React => (Compute::Medium, OutputPolicy::Plain, false),
        Mode::PlanExecute => (Compute::High, OutputPolicy::Plain, false),
    };
    let preset_tools = match mode {
        Mode::Plain | Mode::Thinking => ToolPolicy::Disallow,
        _ => ToolPolicy::Allow,
    };
    let compute = o.compute.unwrap_or(compute);
    let output = o.output.unwrap_or(output);
    let tool_policy = o.tool_policy.unwrap_or(preset_tools);
    let verify = o.verify.unwrap_or(VerifyPolicy::None);
    let reasoning = reasoning || output == OutputPolicy::ReasoningSummary;
    let tools_on = tool_policy != ToolPolicy::Disallow;

    let (steps, rounds, per_round, model_calls, tool_calls, timeout_ms) = match mode {
        Mode::Plain | Mode::Thinking | Mode::PlainTooling | Mode::ThinkingTooling => {
            // One tool round: the deciding call plus the answering call.
            let calls = if tools_on { 2 } else { 1 };
            (o.steps.unwrap_or(1), 1, None, calls, 8, 120_000)
        }
        Mode::React => {
            let s = o.steps.unwrap_or(DEFAULT_REACT_STEPS);
            let calls = if tools_on { s + 1 } else { 1 };
            (s, s, Some(1), calls, s, 300_000)
        }
        Mode::PlanExecute => {
            // Plan + steps + summary; steps reason on even without tools.
            let s = o.steps.unwrap_or(DEFAULT_PLAN_STEPS);
            (s, s, None, s + 2, 4 * s, 600_000)
        }
    };
    let (rounds, tool_calls) = if tools_on { (rounds, tool_calls) } else { (0, 0) };
    let model_calls = model_calls + u32::from(verify == VerifyPolicy::SecondPassFix);
    RunPolicy {
        mode,
        compute,
        output,
        tool_policy,
        verify,
        reasoning,
        expose_reasoning: o.expose_reasoning.unwrap_or(false),
        plan_first: mode == Mode::PlanExecute,
        max_tool_rounds: rounds,
        max_tools_per_round: per_round,
        budget: Budget {
            max_model_calls: o.max_model_calls.unwrap_or(model_calls),
            max_tool_calls: if tools_on { o.max_tool_calls.unwrap_or(tool_calls) } else { 0 },
            max_steps: steps,
            timeout_ms: o.timeout_ms.unwrap_or(timeout_ms),
        },
    }
}

/// Turns `"""…"""` values of keys whose name contains `systemPrompt` (any case) into standard
/// JSON strings. One newline right after the opening and one right before the closing delimiter
/// are dropped; the text in between is taken literally (quotes, backslashes, CJK), CRLF becomes
/// LF. The closing delimiter is the last three quotes of the first run of three or more, so a
/// prompt may end with a quote. Newlines of the block are re-emitted after the string so JSON
/// error positions further down stay right. Text without `"""` is returned as is.
pub fn preprocess(text: &str) -> Result<Cow<'_, str>, FieldError> {
    const TQ: &[u8] = b"\"\"\"";
    if !text.contains("\"\"\"") {
        return Ok(Cow::Borrowed(text));
    }
    let b = text.as_bytes();
    let line_of = |i: usize| text[..i].matches('\n').count() + 1;
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    // Content range of the last string literal; becomes the current key at a following ':'.
    let mut last_string: Option<(usize, usize)> = None;
    let mut key: Option<(usize, usize)> = None;
    while i < b.len() {
        match b[i] {
            b'"' if b[i..].starts_with(TQ) => {
                let Some((ks, ke)) = key.take() else {
                    return Err(FieldError::new(
                        format!("line {}", line_of(i)),
                        "\"\"\" may only start the value of a key containing systemPrompt",
                    ));
                };
                let name = &text[ks..ke];
                if !name.to_ascii_lowercase().contains("systemprompt") {
                    return Err(FieldError::new(
                        name,
                        format!(
                            "\"\"\" multi-line strings are only allowed for keys containing systemPrompt (line {})",
                            line_of(i)
                        ),
                    ));
                }
                let start = i + 3;
                let mut j = start;
                let close = loop {
                    let Some(q) = b[j..].iter().position(|&c| c == b'"').map(|p| j + p) else {
                        return Err(FieldError::new(
                            name,
                            format!("unterminated \"\"\" string opened on line {}", line_of(i)),
                        ));
                    };
                    let run = b[q..].iter().take_while(|&&c| c == b'"').count();
                    if run >= 3 {
                        break q + run - 3;
                    }
                    j = q + run;
                };
                let raw = &text[start..close];
                let body =
                    raw.strip_prefix("\r\n").or_else(|| raw.strip_prefix('\n')).unwrap_or(raw);
                let body =
                    body.strip_suffix("\r\n").or_else(|| body.strip_suffix('\n')).unwrap_or(body);
                out.push_str(&text[copied..i]);
                push_json_string(&body.replace("\r\n", "\n"), &mut out);
                out.extend(std::iter::repeat_n('\n', raw.matches('\n').count()));
                i = close + 3;
                copied = i;
                last_string = None;
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                last_string = Some((start, end));
                key = None;
                i = end + 1;
            }
            b':' => {
                key = last_string.take();
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                last_string = None;
                key = None;
                i += 1;
            }
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    Ok(Cow::Owned(out))
}

fn push_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(key: &str, text: &str) -> Vec<String> {
        parse(key, text).unwrap_err().errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn triple_quoted_prompt_becomes_a_json_string() {
        let text = "{\n  \"mode\": \"REACT\",\n  \"react\": {\n    \"systemPrompt\": \"\"\"\n你是算命大师\n请先问出生日期\n\"\"\",\n    \"maxSteps\": 6\n  }\n}";
        let out = preprocess(text).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["react"]["systemPrompt"], "你是算命大师\n请先问出生日期");
        assert_eq!(v["react"]["maxSteps"], 6);
        // Line numbers below the block are unchanged.
        assert_eq!(out.lines().count(), text.lines().count());
    }

    #[test]
    fn triple_quoted_text_keeps_quotes_backslashes_tabs_and_cjk_literally() {
        let text = "{\"plain\": {\"systemPrompt\": \"\"\"Say \"hi\" to C:\\temp\\n\tand 中文「引号」\"\"\"}}";
        let v: serde_json::Value = serde_json::from_str(&preprocess(text).unwrap()).unwrap();
        assert_eq!(v["plain"]["systemPrompt"], "Say \"hi\" to C:\\temp\\n\tand 中文「引号」");
    }

    #[test]
    fn a_prompt_may_end_with_a_quote_and_crlf_is_normalised() {
        let text = "{\"plain\": {\"systemPrompt\": \"\"\"\r\nsay \"x\"\r\nthen \"y\"\"\"\"\r\n}}";
        let v: serde_json::Value = serde_json::from_str(&preprocess(text).unwrap()).unwrap();
        assert_eq!(v["plain"]["systemPrompt"], "say \"x\"\nthen \"y\"");
    }

    #[test]
    fn only_keys_containing_system_prompt_may_use_triple_quotes() {
        let text = "{\"planExecute\": {\"PLANSYSTEMPROMPT\": \"\"\"a\"\"\", \"summarySystemPrompt\": \"\"\"\nb\n\"\"\"}}";
        let v: serde_json::Value = serde_json::from_str(&preprocess(text).unwrap()).unwrap();
        assert_eq!(v["planExecute"]["PLANSYSTEMPROMPT"], "a");
        assert_eq!(v["planExecute"]["summarySystemPrompt"], "b");

        let e = preprocess("{\"description\": \"\"\"x\"\"\"}").unwrap_err();
        assert_eq!(e.path, "description");
        assert!(e.message.contains("only allowed for keys containing systemPrompt"), "{e}");
        let e = preprocess("{\"tools\": [\"\"\"x\"\"\"]}").unwrap_err();
        assert_eq!(e.path, "line 1");
        let e =
            preprocess("{\n\"plain\": {\"systemPrompt\": \"\"\"\nnever closed\n}}").unwrap_err();
        assert_eq!(e.to_string(), "systemPrompt: unterminated \"\"\" string opened on line 2");
    }

    #[test]
    fn ordinary_json_passes_through_untouched() {
        let text = r#"{"plain": {"systemPrompt": "a \"\"\" b \\"}, "x": ["\"", ""]}"#;
        assert!(matches!(preprocess(text).unwrap(), Cow::Borrowed(_)));
        let text = r#"{"x": "", "plain": {"systemPrompt": """y"""}, "z": "\"\"\""}"#;
        let v: serde_json::Value = serde_json::from_str(&preprocess(text).unwrap()).unwrap();
        assert_eq!(v["plain"]["systemPrompt"], "y");
        assert_eq!(v["z"], "\"\"\"");
    }

    #[test]
    fn legacy_mode_names_are_aliases() {
        for (name, mode) in [
            ("RE_ACT", Mode::React),
            ("THINKING_AND_CONTENT", Mode::React),
            ("THINKING_AND_CONTENT_WITH_DUAL_TOOL_CALLS", Mode::PlanExecute),
            ("plan-execute", Mode::PlanExecute),
            (" thinking_tooling ", Mode::ThinkingTooling),
        ] {
            assert_eq!(name.parse::<Mode>(), Ok(mode), "{name}");
        }
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
        }
        let e = errors("a", r#"{"mode": "FAST", "plain": {"systemPrompt": "x"}}"#);
        assert!(e[0].starts_with("mode: unknown mode `FAST`, expected one of PLAIN,"), "{e:?}");
        let d = parse("a", r#"{"mode": "RE_ACT", "react": {"systemPrompt": "x"}}"#).unwrap();
        assert_eq!(d.mode, Mode::React);
        assert_eq!(serde_json::to_value(d.mode).unwrap(), "REACT");
    }

    #[test]
    fn validation_collects_every_error_with_its_path() {
        let e = errors(
            "a",
            r#"{"mode": "PLAN_EXECUTE", "planExecute": {"executeSystemPrompt": " "},
                "react": {"maxSteps": 0}, "budget": {"timeoutMs": 5, "maxToolCalls": -1},
                "tools": ["ok", "bad name"]}"#,
        );
        assert_eq!(
            e,
            [
                "planExecute.planSystemPrompt: required by mode PLAN_EXECUTE",
                "planExecute.executeSystemPrompt: required by mode PLAN_EXECUTE",
                "react.maxSteps: must be 1..=50 (got 0)",
                "budget.maxToolCalls: must be 0..=200 (got -1)",
                "budget.timeoutMs: must be 1000..=3600000 (got 5)",
                "tools[1]: tool name `bad name` must be 1-64 characters of A-Z a-z 0-9 _ -",
            ]
        );
        assert_eq!(
            errors("a", r#"{"plain": {"systemPrompt": "x"}}"#)[0].split(',').next(),
            Some("mode: required")
        );
        let e = errors(
            "a",
            r#"{"mode": "REACT", "react": {"systemPrompt": "x"}, "toolPolicy": "REQUIRE"}"#,
        );
        assert_eq!(e, ["toolPolicy: REQUIRE needs at least one name in tools (or an MCP server)"]);
        let e = errors("bad key", r#"{}"#);
        assert!(e[0].starts_with("(file name): agent key `bad key`"), "{e:?}");
    }

    #[test]
    fn type_errors_name_the_field_path() {
        let e =
            errors("a", r#"{"mode": "REACT", "react": {"systemPrompt": "x", "maxSteps": "6"}}"#);
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("react.maxSteps: invalid type: string \"6\""), "{e:?}");
        let e = errors("a", r#"{"mode": "PLAIN", "tools": ["a", 3]}"#);
        assert!(e[0].starts_with("tools[1]: invalid type: integer `3`"), "{e:?}");
        let e = errors("a", "{\n\"mode\": \"PLAIN\",,\n}");
        assert!(e[0].starts_with(".: ") && e[0].contains("line 2"), "{e:?}");
        let e = errors("a", r#"{"mode": "PLAIN", "plain": {"systemPrompt": "x"}} trailing"#);
        assert!(e[0].starts_with(".: trailing characters"), "{e:?}");
    }

    #[test]
    fn bash_needs_an_explicit_allow_shell() {
        let file = |extra: &str| {
            format!(
                r#"{{"mode": "REACT", "tools": ["bash"], {extra} "react": {{"systemPrompt": "x"}}}}"#
            )
        };
        for extra in ["", r#""allowShell": false,"#] {
            let e = errors("a", &file(extra));
            assert_eq!(e.len(), 1, "{e:?}");
            assert!(e[0].starts_with("allowShell: required: an agent that lists `bash`"), "{e:?}");
        }
        let d =
            parse("a", &file(r#""allowShell": true, "createdBy": "agent_file_create","#)).unwrap();
        // Each command is confirmed by the user unless the file says otherwise.
        assert_eq!(d.shell, ShellPolicy { allow: true, network: false, confirm: true });
        assert_eq!(d.created_by.as_deref(), Some("agent_file_create"));
        let d = parse("a", &file(r#""allowShell": true, "shellNetwork": true,"#)).unwrap();
        assert_eq!(d.shell, ShellPolicy { allow: true, network: true, confirm: true });
        let detail = serde_json::to_value(&d).unwrap();
        assert_eq!(
            detail["shell"],
            serde_json::json!({"allow": true, "network": true, "confirm": true})
        );
        let d = parse("a", &file(r#""allowShell": true, "confirmShell": false,"#)).unwrap();
        assert_eq!(d.shell, ShellPolicy { allow: true, network: false, confirm: false });
        // No bash: no shell, and stray shell flags are only warnings.
        let d = parse(
            "a",
            r#"{"mode": "PLAIN", "shellNetwork": true, "confirmShell": false,
                "plain": {"systemPrompt": "x"}}"#,
        )
        .unwrap();
        assert_eq!(d.shell, ShellPolicy::default());
        assert_eq!(d.warnings[0].to_string(), "shellNetwork: ignored: the agent has no shell");
        assert_eq!(d.warnings[1].to_string(), "confirmShell: ignored: the agent has no shell");
    }

    #[test]
    fn unknown_keys_and_ignored_tools_are_warnings() {
        let d = parse(
            "a",
            r#"{"mode": "PLAIN", "systemPrompt": "v1", "icon": "x", "tools": ["bash", "bash"],
                "allowShell": true, "plain": {"systemPrompt": "hi", "maxStep": 3}}"#,
        )
        .unwrap();
        let w: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w[0].starts_with("systemPrompt: unknown key, ignored (v2 puts"), "{w:?}");
        assert!(w.contains(&"icon: unknown key, ignored".to_owned()), "{w:?}");
        assert!(w.contains(&"plain.maxStep: unknown key, ignored".to_owned()), "{w:?}");
        assert!(w.contains(&"tools[1]: `bash` listed twice".to_owned()), "{w:?}");
        assert!(w.iter().any(|m| m.starts_with("tools: ignored: mode PLAIN")), "{w:?}");
        assert_eq!(d.tools, ["bash"]);
    }

    #[test]
    fn empty_provider_and_model_mean_the_defaults() {
        let d = parse(
            "demo_1",
            r#"{"providerKey": "", "model": " ", "mode": "PLAIN", "plain": {"systemPrompt": " hi "}}"#,
        )
        .unwrap();
        assert_eq!((d.provider_key, d.model), (None, None));
        assert_eq!(d.prompts, Prompts::Single { system: "hi".into() });
        assert_eq!(d.key, "demo_1");
        let bom = "\u{feff}{\"mode\": \"PLAIN\", \"plain\": {\"systemPrompt\": \"x\"}}";
        assert!(parse("bom", bom).is_ok());
    }

    #[test]
    fn mode_presets() {
        let p = |m| resolve_policy(m, &Overrides::default());
        let plain = p(Mode::Plain);
        assert_eq!(
            (plain.compute, plain.tool_policy, plain.reasoning, plain.max_tool_rounds),
            (Compute::Low, ToolPolicy::Disallow, false, 0)
        );
        assert_eq!((plain.budget.max_model_calls, plain.budget.max_tool_calls), (1, 0));
        let thinking = p(Mode::Thinking);
        assert!(thinking.reasoning && thinking.max_tool_rounds == 0);
        assert_eq!(thinking.output, OutputPolicy::ReasoningSummary);
        let tooling = p(Mode::PlainTooling);
        assert_eq!((tooling.max_tool_rounds, tooling.max_tools_per_round), (1, None));
        assert_eq!((tooling.reasoning, tooling.budget.max_model_calls), (false, 2));
        let tt = p(Mode::ThinkingTooling);
        assert!(tt.reasoning && tt.max_tool_rounds == 1);
        let react = p(Mode::React);
        assert_eq!((react.max_tool_rounds, react.max_tools_per_round), (6, Some(1)));
        assert_eq!((react.budget.max_steps, react.budget.max_model_calls), (6, 7));
        let pe = p(Mode::PlanExecute);
        assert!(pe.plan_first && pe.max_tools_per_round.is_none());
        assert_eq!(
            (pe.compute, pe.max_tool_rounds, pe.budget.max_model_calls),
            (Compute::High, 6, 8)
        );
        for m in Mode::ALL {
            assert_eq!(p(m).verify, VerifyPolicy::None);
            assert!(!p(m).expose_reasoning);
        }
    }

    #[test]
    fn temperature_and_max_tokens_are_checked_and_carried() {
        let ok = parse(
            "a",
            r#"{"mode": "PLAIN", "temperature": 0.1, "maxTokens": 4096, "plain": {"systemPrompt": "x"}}"#,
        )
        .unwrap();
        assert_eq!((ok.temperature, ok.max_tokens), (Some(0.1), Some(4096)));
        for (extra, field) in [
            (r#""temperature": 2.5"#, "temperature"),
            (r#""temperature": -1"#, "temperature"),
            (r#""maxTokens": 0"#, "maxTokens"),
            (r#""maxTokens": 1.5"#, "maxTokens"),
        ] {
            let text = format!(r#"{{"mode": "PLAIN", {extra}, "plain": {{"systemPrompt": "x"}}}}"#);
            let e = parse("a", &text).unwrap_err();
            assert!(e.errors.iter().any(|f| f.path == field), "{extra}: {e}");
        }
    }

    #[test]
    fn fallback_models_are_provider_model_references() {
        let with = |list: &str| {
            parse(
                "a",
                &format!(
                    r#"{{"mode": "PLAIN", "fallbackModels": {list}, "plain": {{"systemPrompt": "x"}}}}"#
                ),
            )
        };
        let ok = with(r#"["b/m1", " local/Qwen/Qwen3-8B ", "b/m1"]"#).unwrap();
        assert_eq!(ok.fallback_models.unwrap(), ["b/m1", "local/Qwen/Qwen3-8B"]);
        assert!(ok.warnings.iter().any(|w| w.path == "fallbackModels[2]"), "{:?}", ok.warnings);
        assert_eq!(with("[]").unwrap().fallback_models, Some(vec![]), "[] turns fallback off");
        let summary = |m: &str| {
            parse(
                "a",
                &format!(
                    r#"{{"mode": "PLAIN", "summaryModel": "{m}", "plain": {{"systemPrompt": "x"}}}}"#
                ),
            )
        };
        assert_eq!(summary("b/cheap").unwrap().summary_model.as_deref(), Some("b/cheap"));
        assert!(summary("cheap").unwrap_err().errors.iter().any(|e| e.path == "summaryModel"));
        let absent = parse("a", r#"{"mode": "PLAIN", "plain": {"systemPrompt": "x"}}"#).unwrap();
        assert_eq!(absent.fallback_models, None, "absent: the server's default");
        for (list, field) in [
            (r#"["gpt-4.1"]"#, "fallbackModels[0]"),
            (r#"["b/m", "/m"]"#, "fallbackModels[1]"),
            (r#"["b/"]"#, "fallbackModels[0]"),
            (r#"["a/1","a/2","a/3","a/4","a/5","a/6","a/7","a/8","a/9"]"#, "fallbackModels"),
        ] {
            let e = with(list).unwrap_err();
            assert!(e.errors.iter().any(|f| f.path == field), "{list}: {e}");
        }
    }

    #[test]
    fn overrides_are_applied_to_the_preset() {
        // The seed's example: PLAIN with every override.
        let d = parse(
            "a",
            r#"{"mode": "PLAIN", "compute": "HIGH", "output": "REASONING_SUMMARY",
                "toolPolicy": "REQUIRE", "verify": "SECOND_PASS_FIX", "tools": ["bash"],
                "allowShell": true, "budget": {"maxModelCalls": 20, "maxToolCalls": 10, "maxSteps": 6, "timeoutMs": 120000},
                "plain": {"systemPrompt": "x"}}"#,
        )
        .unwrap();
        let p = d.policy;
        assert_eq!(
            (p.compute, p.output, p.tool_policy, p.verify),
            (
                Compute::High,
                OutputPolicy::ReasoningSummary,
                ToolPolicy::Require,
                VerifyPolicy::SecondPassFix
            )
        );
        assert!(p.reasoning, "REASONING_SUMMARY turns reasoning on");
        assert_eq!(p.max_tool_rounds, 1, "tools allowed on PLAIN give it one round");
        assert_eq!(
            p.budget,
            Budget { max_model_calls: 20, max_tool_calls: 10, max_steps: 6, timeout_ms: 120_000 }
        );
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);

        let d = parse(
            "a",
            r#"{"mode": "REACT", "tools": ["t"], "react": {"systemPrompt": "x", "maxSteps": 3, "exposeReasoningToUser": true}}"#,
        )
        .unwrap();
        assert_eq!((d.policy.max_tool_rounds, d.policy.budget.max_model_calls), (3, 4));
        assert!(d.policy.expose_reasoning);
        let d = parse(
            "a",
            r#"{"mode": "REACT", "toolPolicy": "DISALLOW", "verify": "SECOND_PASS_FIX", "budget": {"maxSteps": 9},
                "react": {"systemPrompt": "x", "maxSteps": 3}}"#,
        )
        .unwrap();
        assert_eq!((d.policy.max_tool_rounds, d.policy.budget.max_tool_calls), (0, 0));
        assert_eq!((d.policy.budget.max_steps, d.policy.budget.max_model_calls), (9, 2));
        assert_eq!(
            d.warnings[0].to_string(),
            "react.maxSteps: budget.maxSteps (9) overrides it (3)"
        );
    }

    #[test]
    fn plan_execute_prompts_and_round_trip() {
        let text = r#"{"description": "d", "mode": "PLAN_EXECUTE", "tools": ["a"],
            "planExecute": {"planSystemPrompt": """
plan
""", "executeSystemPrompt": "exec"}}"#;
        let d = parse("pe", text).unwrap();
        assert_eq!(
            d.prompts,
            Prompts::PlanExecute { plan: "plan".into(), execute: "exec".into(), summary: None }
        );
        let again = parse("pe", &serde_json::to_string_pretty(&d.file).unwrap()).unwrap();
        assert_eq!(again, d);
    }
}
