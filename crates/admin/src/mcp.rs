//! MCP servers defined through `/api/admin/mcp-servers`: agents list one by its name alone
//! (`"mcpServers": [{"name": "search"}]`). Their `env` and `headers` values are sealed at rest
//! like provider keys and never shown again (only their names are); a change reaches the MCP
//! client at once, for runs starting afterwards. A stdio server's `readOnlyPaths` never reach
//! the host's `/proc`, `/sys` or `/dev`, and the shell sandbox's masks of the server's own
//! files (data dir, configuration) win over them.

use serde::Serialize;

use super::{Admin, AdminError, Record, State};
use agent::field_error::FieldError;
use agent::tools::mcp::McpServerFile;
use agent::tools::mcp::spec::{self, McpServer, Transport};

/// An MCP server defined here, as the admin API shows it: secrets' names, never values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    /// Its name (agents list `{"name": NAME}`; tools are `NAME__tool`).
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// stdio: the program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio: the variables set for it (values hidden).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_keys: Vec<String>,
    /// stdio: it may use the network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// stdio: further trees it may read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_only_paths: Vec<String>,
    /// stdio: address space per process, MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<i64>,
    /// HTTP: the endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP: the headers sent (values hidden).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header_keys: Vec<String>,
    /// Longest wait for one call, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
}

impl McpServerView {
    fn of(f: &McpServerFile) -> Self {
        Self {
            name: f.name.clone(),
            transport: if f.url.is_some() { "http" } else { "stdio" }.to_owned(),
            command: f.command.clone(),
            args: f.args.clone(),
            env_keys: f.env.keys().cloned().collect(),
            network: f.network,
            read_only_paths: f.read_only_paths.clone(),
            memory_mb: f.memory_mb,
            url: f.url.clone(),
            header_keys: f.headers.keys().cloned().collect(),
            timeout_ms: f.timeout_ms,
        }
    }
}

impl State {
    fn mcp_servers(&self) -> impl Iterator<Item = &McpServerFile> {
        self.records.values().filter_map(|r| match r {
            Record::McpServer { server } => Some(server),
            _ => None,
        })
    }
}

/// Validates one definition named `name`; the error's field is the entry's own (`url`,
/// `env.X`), not an agent file's path.
fn validate(file: &McpServerFile) -> Result<McpServer, AdminError> {
    let mut errors: Vec<FieldError> = Vec::new();
    let mut servers = spec::validate(std::slice::from_ref(file), &mut errors);
    let invalid = |e: &FieldError| {
        let field = e.path.strip_prefix("mcpServers[0]").unwrap_or(&e.path);
        AdminError::Invalid {
            field: field.trim_start_matches('.').to_owned(),
            message: errors.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("; "),
        }
    };
    if let Some(e) = errors.first() {
        return Err(invalid(e));
    }
    // The sandbox refuses these when it starts the server; say so now, naming the field.
    for (j, p) in file.read_only_paths.iter().enumerate() {
        agent::tools::bash::check_read_only(std::path::Path::new(p)).map_err(|message| {
            AdminError::Invalid { field: format!("readOnlyPaths[{j}]"), message }
        })?;
    }
    match servers.pop() {
        Some(s) if s.transport != Transport::Stored => Ok(s),
        _ => Err(AdminError::Invalid {
            field: "command".into(),
            message: "needs `command` (a stdio server) or `url` (streamable HTTP)".into(),
        }),
    }
}

impl Admin {
    /// Every MCP server defined here, by name.
    #[base::boxed]
    pub async fn mcp_servers(&self) -> Vec<McpServerView> {
        self.state.lock().await.mcp_servers().map(McpServerView::of).collect()
    }

    /// Creates or replaces the MCP server `name`; `input.name` may be left out (else it must
    /// be `name`).
    #[base::boxed]
    pub async fn put_mcp_server(
        &self,
        name: &str,
        mut input: McpServerFile,
    ) -> Result<McpServerView, AdminError> {
        if !input.name.is_empty() && input.name != name {
            return Err(AdminError::Invalid {
                field: "name".into(),
                message: format!("`{}` differs from the path's `{name}`", input.name),
            });
        }
        input.name = name.to_owned();
        validate(&input)?;
        let view = McpServerView::of(&input);
        let mut sealed = input;
        for v in sealed.env.values_mut().chain(sealed.headers.values_mut()) {
            *v = self.sealer.seal(v);
        }
        let mut state = self.state.lock().await;
        let record = Record::McpServer { server: sealed };
        let next = state.with(record.clone());
        self.persist(&record).await?;
        self.apply_mcp(&next, false);
        *state = next;
        Ok(view)
    }

    /// Removes the MCP server `name` (agents listing it find it missing when they run).
    #[base::boxed]
    pub async fn delete_mcp_server(&self, name: &str) -> Result<(), AdminError> {
        let mut state = self.state.lock().await;
        let id = format!("mcp:{name}");
        if !state.records.contains_key(&id) {
            return Err(AdminError::NotFound(format!("no MCP server `{name}` is defined here")));
        }
        let next = state.without(&id);
        self.store.delete_admin(&id).await?;
        self.apply_mcp(&next, false);
        *state = next;
        Ok(())
    }

    /// Hands `state`'s servers, opened, to the MCP client. One whose secrets cannot be opened
    /// (sealed under another key file) or that no longer validates is left out and logged.
    pub(super) fn apply_mcp(&self, state: &State, at_start: bool) {
        let Some(hub) = &self.mcp else { return };
        let mut servers = Vec::new();
        for file in state.mcp_servers() {
            let mut open = file.clone();
            let opened = open
                .env
                .values_mut()
                .chain(open.headers.values_mut())
                .try_for_each(|v| self.sealer.open(v).map(|plain| *v = plain));
            match opened.map_err(AdminError::from).and_then(|()| validate(&open)) {
                Ok(server) => servers.push(server),
                Err(e) => {
                    tracing::warn!(server = %file.name, at_start, "admin: MCP server left out: {e}")
                }
            }
        }
        hub.set_stored(servers);
    }
}
