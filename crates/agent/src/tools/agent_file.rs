//! The `agent_file_create` tool: writes an agent definition `<agents dir>/<agentId>.json` from
//! the model's arguments (create or update), atomically.
//!
//! It checks what makes the file loadable — the id, the mode and that mode's prompt block — and
//! passes everything else through for the catalog to judge. The temp file is `.<id>.json.<n>.tmp`
//! in the same directory, so a loader that reads `*.json` never sees a half-written file.
//!
//! What it must never do: grant more than its caller has. The new agent's `tools` must be a
//! subset of the calling agent's, `allowShell`/`shellNetwork` only if the caller has them,
//! `"confirmShell": false` only if the caller's commands run unasked, `mcpServers` only the
//! caller's own entries, unchanged, `knowledgeBases` only those the caller may search; a
//! team's members (and merger) must exist and hold nothing the caller lacks, by the same
//! check ([`lacks`]); it never writes over a built-in agent (one embedded in the binary) or a file it did not write
//! itself, and every file it writes says `"createdBy": "agent_file_create"` (shown by
//! `GET /api/agent`).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::mcp::spec::McpServerFile;
use super::{Args, BackendTool, ToolContext, ToolError};
use crate::catalog::{Catalog, Section, builtins};
use crate::definition::AgentDefinition;

/// The tool's name.
pub const NAME: &str = "agent_file_create";

/// The knowledge layer's search tool (`knowledge::tool::NAME` is this): an agent given it is
/// limited to its creator's bases. Named here because `knowledge` sits above `agent`.
pub const KNOWLEDGE_SEARCH: &str = "knowledge_search";

/// Fields the tool sets itself from the caller's grant, never from the model's arguments.
const GRANTS: [&str; 4] = ["allowShell", "shellNetwork", "confirmShell", "createdBy"];

/// Mode, its block, the block's required prompt fields.
const MODES: [(&str, &str, &[&str]); 6] = [
    ("PLAIN", "plain", &["systemPrompt"]),
    ("THINKING", "thinking", &["systemPrompt"]),
    ("PLAIN_TOOLING", "plainTooling", &["systemPrompt"]),
    ("THINKING_TOOLING", "thinkingTooling", &["systemPrompt"]),
    ("REACT", "react", &["systemPrompt"]),
    ("PLAN_EXECUTE", "planExecute", &["planSystemPrompt", "executeSystemPrompt"]),
];

/// Legacy mode names the README still accepts.
const MODE_ALIASES: [(&str, &str); 3] = [
    ("RE_ACT", "REACT"),
    ("THINKING_AND_CONTENT", "REACT"),
    ("THINKING_AND_CONTENT_WITH_DUAL_TOOL_CALLS", "PLAN_EXECUTE"),
];

/// Fields written first, in this order; the rest follow as given.
const HEAD: [&str; 5] = ["description", "providerKey", "model", "mode", "tools"];

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `id` is a valid agent id: 1..=64 of `A-Za-z0-9_-`.
pub fn is_valid_agent_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The `agent_file_create` executor.
#[derive(Clone)]
pub struct AgentFileCreate {
    dir: PathBuf,
    /// Where a team's members are looked up; `None`: teams are refused.
    catalog: Option<Arc<Catalog>>,
}

impl std::fmt::Debug for AgentFileCreate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentFileCreate").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl AgentFileCreate {
    /// An executor writing into `agents_dir` (created if missing). It composes no team until
    /// it is given the catalog ([`AgentFileCreate::with_catalog`]).
    pub fn new(agents_dir: impl Into<PathBuf>) -> Self {
        Self { dir: agents_dir.into(), catalog: None }
    }

    /// Checks a team's members against `catalog` (the agents they run as).
    #[must_use]
    pub fn with_catalog(mut self, catalog: Arc<Catalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// The agent definition the arguments describe, and its id.
    pub fn definition(args: &Value) -> Result<(String, Value), ToolError> {
        let a = Args::new(NAME, args)?;
        let id = a.req_str("agentId")?;
        if !is_valid_agent_id(id) {
            return Err(a.error(format!(
                "\"agentId\" must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -, got \"{id}\""
            )));
        }
        let description = a.req_str("description")?;
        let mode_arg = a.req_str("mode")?;
        let upper = mode_arg.trim().to_ascii_uppercase();
        let canonical = MODE_ALIASES
            .iter()
            .find(|(alias, _)| *alias == upper)
            .map_or(upper.as_str(), |(_, m)| m);
        let Some((mode, block_key, prompts)) = MODES.iter().find(|(m, ..)| *m == canonical) else {
            let names: Vec<&str> = MODES.iter().map(|(m, ..)| *m).collect();
            return Err(a.error(format!(
                "\"mode\" must be one of {}, got \"{mode_arg}\"",
                names.join(", ")
            )));
        };
        let provider = a.opt_str("providerKey")?.unwrap_or("");
        let model = a.opt_str("model")?;
        let tools = a.opt_str_array("tools")?;

        let mut out = Map::new();
        out.insert("description".into(), json!(description));
        out.insert("providerKey".into(), json!(provider));
        if let Some(model) = model {
            out.insert("model".into(), json!(model));
        }
        out.insert("mode".into(), json!(mode));
        if let Some(tools) = tools {
            out.insert("tools".into(), json!(tools));
        }
        for (k, v) in a.fields() {
            if k != "agentId"
                && k != "systemPrompt"
                && !HEAD.contains(&k.as_str())
                && !GRANTS.contains(&k.as_str())
            {
                out.insert(k.clone(), v.clone());
            }
        }
        // A top-level `systemPrompt` is shorthand for the block of a one-prompt mode.
        if !out.contains_key(*block_key)
            && prompts.len() == 1
            && let Some(prompt) = a.opt_str("systemPrompt")?
        {
            out.insert((*block_key).into(), json!({ "systemPrompt": prompt }));
        }
        let block = out.get(*block_key).ok_or_else(|| {
            a.error(format!(
                "mode {mode} needs a \"{block_key}\" object with {}",
                prompts.iter().map(|p| format!("\"{p}\"")).collect::<Vec<_>>().join(" and ")
            ))
        })?;
        let block = block
            .as_object()
            .ok_or_else(|| a.error(format!("\"{block_key}\" must be an object")))?;
        for p in *prompts {
            match block.get(*p) {
                Some(Value::String(s)) if !s.trim().is_empty() => {}
                _ => {
                    return Err(a.error(format!(
                        "\"{block_key}.{p}\" is required for mode {mode} (a non-empty string)"
                    )));
                }
            }
        }
        Ok((id.to_owned(), Value::Object(out)))
    }

    /// Validates, checks the grant against `caller` (`None`: a caller with no tools) and
    /// writes; `{agentId, path, created}` (`created` is false for an update).
    pub fn create(
        &self,
        args: &Value,
        caller: Option<&AgentDefinition>,
    ) -> Result<Value, ToolError> {
        let (id, mut definition) = Self::definition(args)?;
        grant(&mut definition, args, caller)?;
        check_members(&definition, caller, self.catalog.as_deref())?;
        let refused = |reason: String| ToolError::Refused { tool: NAME.into(), reason };
        if builtins(Section::Agents).get_file(format!("{id}.json")).is_some() {
            return Err(refused(format!(
                "`{id}` is a built-in agent and cannot be overwritten; choose another agentId"
            )));
        }
        let path = self.dir.join(format!("{id}.json"));
        if let Ok(existing) = fs::read_to_string(&path) {
            let ours = serde_json::from_str::<Value>(&existing)
                .ok()
                .is_some_and(|v| v["createdBy"] == NAME);
            if !ours {
                return Err(refused(format!(
                    "agent `{id}` exists and was not written by {NAME}; choose another agentId"
                )));
            }
        }
        let mut text =
            serde_json::to_string_pretty(&definition).map_err(|e| ToolError::failed(NAME, e))?;
        text.push('\n');
        let created = write_atomic(&self.dir, &path, text.as_bytes()).map_err(|e| {
            ToolError::failed(NAME, format!("cannot write {}: {e}", path.display()))
        })?;
        Ok(json!({ "agentId": id, "path": path.display().to_string(), "created": created }))
    }
}

/// What an agent may do: the capabilities `agent_file_create` may pass on only when the
/// caller holds them too. One shape for the file being written (from the model's arguments)
/// and for a team member it names (from the catalog), so both go through [`lacks`].
#[derive(Debug, Default)]
struct Capabilities {
    tools: Vec<String>,
    /// `mcpServers` entries, as a file spells them.
    mcp_servers: Vec<McpServerFile>,
    allow_shell: bool,
    shell_network: bool,
    /// `"confirmShell": false`: commands run unasked.
    unasked: bool,
    /// `knowledgeBases`; `None`: every base.
    knowledge_bases: Option<Vec<String>>,
}

impl Capabilities {
    /// What an existing agent (a team member) holds.
    fn of(agent: &AgentDefinition) -> Self {
        Self {
            tools: agent.tools.clone(),
            mcp_servers: agent.file.mcp_servers.clone(),
            allow_shell: agent.shell.allow,
            shell_network: agent.shell.network,
            unasked: agent.shell.allow && !agent.shell.confirm,
            knowledge_bases: agent.knowledge_bases.clone(),
        }
    }
}

/// Why `want` holds more than `caller` (`None`: a caller with nothing), if it does: the one
/// "never grants what the caller lacks" rule, for the file written and for every member of
/// a team it composes.
fn lacks(want: &Capabilities, caller: Option<&AgentDefinition>) -> Option<String> {
    let caller_tools: &[String] = caller.map_or(&[], |c| c.tools.as_slice());
    let extra: Vec<&str> =
        want.tools.iter().filter(|t| !caller_tools.contains(t)).map(String::as_str).collect();
    if !extra.is_empty() {
        return Some(format!(
            "an agent can only be given tools its creator has; not available to you: {} \
             (yours: {})",
            extra.join(", "),
            if caller_tools.is_empty() { "none".to_owned() } else { caller_tools.join(", ") }
        ));
    }
    // An MCP server is a program or endpoint with the caller's reach: only the caller's own
    // server definitions, unchanged, may be passed on.
    let caller_servers = caller.map_or(&[][..], |c| c.file.mcp_servers.as_slice());
    if let Some(i) = want.mcp_servers.iter().position(|s| !caller_servers.contains(s)) {
        return Some(mcp_refusal(i));
    }
    let shell = caller.map(|c| c.shell).unwrap_or_default();
    if want.allow_shell && !shell.allow {
        return Some("\"allowShell\" can only be set by an agent that has it".into());
    }
    if want.shell_network && !shell.network {
        return Some("\"shellNetwork\" can only be set by an agent that has it".into());
    }
    if want.unasked && shell.confirm {
        return Some(
            "\"confirmShell\": false can only be set by an agent whose own commands run unasked"
                .into(),
        );
    }
    // Which bases matter only to an agent that can search them.
    let searches = want.tools.iter().any(|t| t == KNOWLEDGE_SEARCH);
    if let (true, Some(allowed)) = (searches, caller.and_then(|c| c.knowledge_bases.as_ref())) {
        let beyond: Vec<&str> = match &want.knowledge_bases {
            None => vec!["every knowledge base"],
            Some(list) => {
                list.iter().filter(|k| !allowed.contains(k)).map(String::as_str).collect()
            }
        };
        if !beyond.is_empty() {
            return Some(format!(
                "an agent can only be given knowledge bases its creator may search; not \
                 available to you: {} (yours: {})",
                beyond.join(", "),
                allowed.join(", ")
            ));
        }
    }
    None
}

fn mcp_refusal(i: usize) -> String {
    format!(
        "mcpServers[{i}]: an agent can only be given MCP servers its creator has, exactly as \
         its creator's file defines them"
    )
}

/// Checks the requested tools, MCP servers, shell flags and knowledge bases against the
/// caller's and marks the file.
fn grant(
    definition: &mut Value,
    args: &Value,
    caller: Option<&AgentDefinition>,
) -> Result<(), ToolError> {
    let refused = |reason: String| ToolError::Refused { tool: NAME.into(), reason };
    let a = Args::new(NAME, args)?;
    let mut mcp_servers = Vec::new();
    if let Some(servers) = a.get("mcpServers") {
        let list = servers
            .as_array()
            .ok_or_else(|| a.error("\"mcpServers\" must be an array of server definitions"))?;
        for (i, entry) in list.iter().enumerate() {
            let parsed = serde_json::from_value::<McpServerFile>(entry.clone())
                .map_err(|_| refused(mcp_refusal(i)))?;
            mcp_servers.push(parsed);
        }
    }
    let flag_or = |field: &str, default: bool| -> Result<bool, ToolError> {
        match a.get(field) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(a.error(format!("\"{field}\" must be a boolean"))),
        }
    };
    let lists_bash = definition["tools"].as_array().is_some_and(|t| t.iter().any(|t| t == "bash"));
    // A new agent with `bash` needs `allowShell` to load; the caller has it, or bash was refused.
    let allow_shell = flag_or("allowShell", false)? || lists_bash;
    let knowledge_bases = match a.get("knowledgeBases") {
        None => None,
        Some(v) => Some(
            serde_json::from_value::<Vec<String>>(v.clone())
                .map_err(|_| a.error("\"knowledgeBases\" must be an array of strings"))?,
        ),
    };
    let want = Capabilities {
        tools: a
            .opt_str_array("tools")?
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned)
            .collect(),
        mcp_servers,
        allow_shell,
        shell_network: flag_or("shellNetwork", false)?,
        unasked: allow_shell && !flag_or("confirmShell", true)?,
        // Unsaid, the new agent searches what its creator may (not every base).
        knowledge_bases: knowledge_bases.or_else(|| caller.and_then(|c| c.knowledge_bases.clone())),
    };
    if let Some(reason) = lacks(&want, caller) {
        return Err(refused(reason));
    }
    if let Some(out) = definition.as_object_mut() {
        if want.allow_shell {
            out.insert("allowShell".into(), json!(true));
        }
        if want.shell_network {
            out.insert("shellNetwork".into(), json!(true));
        }
        if want.unasked {
            out.insert("confirmShell".into(), json!(false));
        }
        if let Some(bases) = &want.knowledge_bases {
            out.insert("knowledgeBases".into(), json!(bases));
        }
        out.insert("createdBy".into(), json!(NAME));
    }
    Ok(())
}

/// A team's members (and a parallel team's merger) run with their own definitions: each must
/// exist in `catalog` and hold nothing the caller lacks. Without a catalog no member can be
/// checked, so no team is written.
fn check_members(
    definition: &Value,
    caller: Option<&AgentDefinition>,
    catalog: Option<&Catalog>,
) -> Result<(), ToolError> {
    let refused = |reason: String| ToolError::Refused { tool: NAME.into(), reason };
    let mut keys: Vec<&str> = definition["members"]
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).map(str::trim).collect())
        .unwrap_or_default();
    keys.extend(definition["merger"].as_str().map(str::trim));
    if keys.is_empty() {
        return Ok(());
    }
    let Some(catalog) = catalog else {
        return Err(refused(
            "a team cannot be composed here: its members' capabilities cannot be checked".into(),
        ));
    };
    let snapshot = catalog.snapshot();
    for key in keys {
        let Some(member) = snapshot.agent(key) else {
            return Err(refused(format!(
                "team member `{key}` does not exist; a team's members must exist so what they \
                 may do can be checked against yours"
            )));
        };
        if let Some(reason) = lacks(&Capabilities::of(&member), caller) {
            return Err(refused(format!(
                "a team's members may hold nothing its creator lacks; member `{key}` does: \
                 {reason}"
            )));
        }
    }
    Ok(())
}

/// Temp file in the same directory, fsync, rename over the target, fsync the directory (so
/// the rename survives a crash). Returns whether the target did not exist before.
fn write_atomic(dir: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    fs::create_dir_all(dir)?;
    let existed = target.exists();
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let written = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, target)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir)?.sync_all()?;
    Ok(!existed)
}

impl BackendTool for AgentFileCreate {
    fn name(&self) -> &str {
        NAME
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let tool = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || tool.create(&args, ctx.agent.as_deref()))
                .await
                .map_err(|e| ToolError::failed(NAME, e))?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(is_valid_agent_id("demo_Mode-1"));
        assert!(is_valid_agent_id(&"a".repeat(64)));
        for bad in ["", "a b", "../x", "a.json", "上海", &"a".repeat(65)] {
            assert!(!is_valid_agent_id(bad), "{bad}");
        }
    }

    #[test]
    fn definition_orders_fields_and_checks_the_mode_block() {
        let (id, def) = AgentFileCreate::definition(&json!({
            "react": {"systemPrompt": "line 1\nline 2", "maxSteps": 5},
            "mode": "re_act",
            "tools": ["bash"],
            "agentId": "fortune",
            "description": "算命大师",
            "budget": {"maxSteps": 6},
        }))
        .unwrap();
        assert_eq!(id, "fortune");
        let keys: Vec<&String> = def.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["description", "providerKey", "mode", "tools", "react", "budget"]);
        assert_eq!(def["mode"], "REACT");
        assert_eq!(def["providerKey"], "");

        let (_, short) = AgentFileCreate::definition(&json!({
            "agentId": "a", "description": "d", "mode": "PLAIN", "systemPrompt": "hi",
            "providerKey": "any-provider", "model": "m",
        }))
        .unwrap();
        assert_eq!(short["plain"]["systemPrompt"], "hi");
        assert_eq!(short["providerKey"], "any-provider");
        assert!(short.get("systemPrompt").is_none());

        let err = |v: Value| AgentFileCreate::definition(&v).unwrap_err().to_string();
        let base = |extra: Value| {
            let mut v = json!({"agentId": "a", "description": "d"});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        assert!(err(base(json!({"mode": "FAST"}))).contains("\"mode\" must be one of PLAIN,"));
        assert!(
            err(base(json!({"mode": "PLAN_EXECUTE", "planExecute": {"planSystemPrompt": "p"}})))
                .contains("\"planExecute.executeSystemPrompt\" is required")
        );
        assert!(err(base(json!({"mode": "THINKING"}))).contains("needs a \"thinking\" object"));
        assert!(
            err(json!({"agentId": "a/b", "description": "d", "mode": "PLAIN"}))
                .contains("\"agentId\" must be 1 to 64")
        );
        assert!(
            err(json!({"agentId": "a", "mode": "PLAIN"})).contains("\"description\" is required")
        );
    }

    #[test]
    fn writes_and_reports_created_then_updated() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        let tool = AgentFileCreate::new(&agents);
        let args = json!({"agentId": "x", "description": "d", "mode": "PLAIN", "plain": {"systemPrompt": "a\nb"}});
        let out = tool.create(&args, None).unwrap();
        assert_eq!(out["created"], true);
        assert_eq!(tool.create(&args, None).unwrap()["created"], false);
        let text = fs::read_to_string(agents.join("x.json")).unwrap();
        assert!(text.contains("\"systemPrompt\": \"a\\nb\""), "{text}");
        let names: Vec<_> =
            fs::read_dir(&agents).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["x.json"], "no temp files left");
    }
}
