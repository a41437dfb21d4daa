//! MCP server definitions as agent files write them (`mcpServers`): serde types mirroring the
//! JSON, their validation with field paths, and the wire-safe names of MCP tools.
//!
//! Pure: no processes, no network. The agent definition parses these; the hub
//! ([`super::McpHub`]) connects to what they describe.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::field_error::FieldError;

/// A tool call's timeout when the definition gives no `timeoutMs`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Address space of a stdio server's processes when the definition gives no `memoryMb`:
/// runtimes reserve far more than they use (Node's needs over 1 GiB to start).
pub const DEFAULT_MEMORY_MB: u64 = 4096;
/// Most servers one agent lists.
pub const MAX_SERVERS: usize = 16;
/// What separates the server's name from the tool's in the name the model calls: providers
/// allow only `[A-Za-z0-9_-]{1,64}` in function names (OpenAI, Anthropic), so `fs.read_file`
/// is sent as `fs__read_file`.
pub const SEPARATOR: &str = "__";

/// One entry of `mcpServers` as written: a stdio command, a streamable HTTP URL, or only a
/// `name`: the server of that name defined through `/api/admin/mcp-servers`. Also the body of
/// `PUT /api/admin/mcp-servers/{name}` (which takes the name from the path).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerFile {
    /// The namespace of its tools (`fs` → `fs__read_file`).
    #[serde(default)]
    pub name: String,
    /// stdio: the program to run (a path, or a name looked up on the server's `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio: environment variables set for it (nothing else of the server's environment
    /// reaches it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// stdio: the server may use the network (default false, like the shell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// stdio: further host trees it may read (its installation, when that is outside `/usr`
    /// and the workspace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only_paths: Vec<String>,
    /// stdio: address space per process in MiB (64..=65536, default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<i64>,
    /// Streamable HTTP: the endpoint (`http://` or `https://`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Streamable HTTP: headers sent with every request (e.g. `Authorization`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Longest wait for one tool call, in milliseconds (1..=600000, default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transport {
    /// A child process speaking JSON-RPC lines on stdin/stdout, run confined like the shell.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its environment (besides `PATH`, `HOME` and `LANG`).
        env: BTreeMap<String, String>,
        /// Shares the host's network.
        network: bool,
        /// Extra read-only trees.
        read_only_paths: Vec<PathBuf>,
        /// Address space per process, MiB.
        memory_mb: u64,
    },
    /// MCP's streamable HTTP transport.
    Http {
        /// The endpoint.
        url: String,
        /// Sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// The server of this name defined through the admin API, looked up when a run starts.
    Stored,
}

impl Transport {
    /// `stdio`, `http` or `stored`.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Stored => "stored",
        }
    }
}

/// A validated server definition. Two agents with equal definitions share one connection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct McpServer {
    /// The namespace of its tools.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Longest wait for one tool call.
    pub timeout: Duration,
}

/// Whether `name` can be a server name: 1-32 of `A-Za-z0-9_-`, no `__` (the separator) and no
/// `_` at either end, so `server__tool` splits one way only.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.contains(SEPARATOR)
        && !name.starts_with('_')
        && !name.ends_with('_')
}

/// The name the model calls `tool` of `server` by: `server__tool`, with characters providers
/// refuse replaced by `_`; `None` when that is longer than 64 characters.
pub fn wire_name(server: &str, tool: &str) -> Option<String> {
    let safe: String = tool
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    let name = format!("{server}{SEPARATOR}{safe}");
    (!tool.is_empty() && name.len() <= 64).then_some(name)
}

/// Validates `mcpServers`; problems go to `errors` with paths such as `mcpServers[1].url`.
pub fn validate(list: &[McpServerFile], errors: &mut Vec<FieldError>) -> Vec<McpServer> {
    let mut out: Vec<McpServer> = Vec::new();
    if list.len() > MAX_SERVERS {
        errors.push(FieldError::new("mcpServers", format!("at most {MAX_SERVERS} servers")));
    }
    for (i, entry) in list.iter().enumerate() {
        let at = |field: &str| format!("mcpServers[{i}].{field}");
        let before = errors.len();
        let name = entry.name.trim();
        if !is_valid_name(name) {
            errors.push(FieldError::new(
                at("name"),
                format!(
                    "`{name}` must be 1-32 characters of A-Z a-z 0-9 _ - without `__` and not \
                     starting or ending with `_` (tools are called `NAME__tool`)"
                ),
            ));
        } else if out.iter().any(|s| s.name == name) {
            errors.push(FieldError::new(at("name"), format!("`{name}` listed twice")));
        }
        let timeout = match entry.timeout_ms {
            None => DEFAULT_TIMEOUT,
            Some(ms @ 1..=600_000) => Duration::from_millis(ms.unsigned_abs()),
            Some(ms) => {
                errors.push(FieldError::new(
                    at("timeoutMs"),
                    format!("must be 1..=600000 (got {ms})"),
                ));
                DEFAULT_TIMEOUT
            }
        };
        let command = entry.command.as_deref().map(str::trim).filter(|c| !c.is_empty());
        let url = entry.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
        let only_name = McpServerFile { name: entry.name.clone(), ..McpServerFile::default() };
        let transport = match (command, url) {
            (None, None) if *entry == only_name => Some(Transport::Stored),
            (Some(_), Some(_)) | (None, None) => {
                errors.push(FieldError::new(
                    format!("mcpServers[{i}]"),
                    "needs exactly one of `command` (a stdio server) or `url` (streamable HTTP), \
                     or only a `name` (a server defined through /api/admin/mcp-servers)",
                ));
                None
            }
            (Some(command), None) => {
                if !entry.headers.is_empty() {
                    errors.push(FieldError::new(
                        at("headers"),
                        "only for HTTP servers (`url`); a stdio server takes `env`",
                    ));
                }
                for key in entry.env.keys() {
                    let ok =
                        key.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if !ok {
                        errors.push(FieldError::new(
                            at(&format!("env.{key}")),
                            "a variable name is letters, digits and `_`, not starting with a digit",
                        ));
                    }
                }
                let mut read_only_paths = Vec::new();
                for (j, p) in entry.read_only_paths.iter().enumerate() {
                    let path = PathBuf::from(p.trim());
                    if path.is_absolute() {
                        read_only_paths.push(path);
                    } else {
                        errors.push(FieldError::new(
                            at(&format!("readOnlyPaths[{j}]")),
                            format!("`{p}` must be an absolute path"),
                        ));
                    }
                }
                let memory_mb = match entry.memory_mb {
                    None => DEFAULT_MEMORY_MB,
                    Some(mb @ 64..=65_536) => mb.unsigned_abs(),
                    Some(mb) => {
                        errors.push(FieldError::new(
                            at("memoryMb"),
                            format!("must be 64..=65536 (got {mb})"),
                        ));
                        DEFAULT_MEMORY_MB
                    }
                };
                Some(Transport::Stdio {
                    command: command.to_owned(),
                    args: entry.args.clone(),
                    env: entry.env.clone(),
                    network: entry.network == Some(true),
                    read_only_paths,
                    memory_mb,
                })
            }
            (None, Some(url)) => {
                let stdio_only = [
                    ("args", !entry.args.is_empty()),
                    ("env", !entry.env.is_empty()),
                    ("network", entry.network.is_some()),
                    ("readOnlyPaths", !entry.read_only_paths.is_empty()),
                    ("memoryMb", entry.memory_mb.is_some()),
                ];
                for (field, set) in stdio_only {
                    if set {
                        errors.push(FieldError::new(
                            at(field),
                            "only for stdio servers (`command`); an HTTP server takes `headers`",
                        ));
                    }
                }
                match reqwest::Url::parse(url) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
                    _ => errors.push(FieldError::new(
                        at("url"),
                        format!("`{url}` must be an http:// or https:// URL"),
                    )),
                }
                for (key, value) in &entry.headers {
                    let name_ok = reqwest::header::HeaderName::from_bytes(key.as_bytes()).is_ok();
                    let value_ok = reqwest::header::HeaderValue::from_str(value).is_ok();
                    if !name_ok || !value_ok {
                        errors.push(FieldError::new(
                            at(&format!("headers.{key}")),
                            "not a valid HTTP header name and value",
                        ));
                    }
                }
                Some(Transport::Http { url: url.to_owned(), headers: entry.headers.clone() })
            }
        };
        if let Some(transport) = transport
            && errors.len() == before
        {
            out.push(McpServer { name: name.to_owned(), transport, timeout });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Vec<McpServer>, Vec<String>> {
        let list: Vec<McpServerFile> = serde_json::from_str(json).unwrap();
        let mut errors = Vec::new();
        let out = validate(&list, &mut errors);
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors.iter().map(ToString::to_string).collect())
        }
    }

    #[test]
    fn stdio_and_http_entries_validate() {
        let servers = check(
            r#"[{"name": "fs", "command": "node", "args": ["x.js"], "env": {"A_1": "v"},
                 "readOnlyPaths": ["/opt/fs"], "timeoutMs": 5000},
                {"name": "web-api", "url": "https://mcp.example/mcp",
                 "headers": {"Authorization": "Bearer t"}}]"#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].timeout, Duration::from_secs(5));
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "node".into(),
                args: vec!["x.js".into()],
                env: BTreeMap::from([("A_1".into(), "v".into())]),
                network: false,
                read_only_paths: vec![PathBuf::from("/opt/fs")],
                memory_mb: DEFAULT_MEMORY_MB,
            }
        );
        assert_eq!(servers[1].timeout, DEFAULT_TIMEOUT);
        assert!(
            matches!(&servers[1].transport, Transport::Http { url, .. } if url == "https://mcp.example/mcp")
        );
    }

    #[test]
    fn errors_name_the_field() {
        let errors = check(
            r#"[{"name": "a__b", "command": "x"},
                {"name": "ok", "command": "x", "url": "http://h/"},
                {"name": "h", "url": "ftp://h/", "args": ["1"], "headers": {"Bad Name": "v"}},
                {"name": "t", "command": "x", "timeoutMs": 0, "env": {"1X": "v"},
                 "readOnlyPaths": ["rel"], "memoryMb": 10},
                {"name": "t", "command": "y"}]"#,
        )
        .unwrap_err();
        let joined = errors.join("\n");
        for needle in [
            "mcpServers[0].name: `a__b` must be",
            "mcpServers[1]: needs exactly one of `command`",
            "mcpServers[2].url: `ftp://h/` must be an http:// or https:// URL",
            "mcpServers[2].args: only for stdio servers",
            "mcpServers[2].headers.Bad Name: not a valid HTTP header",
            "mcpServers[3].timeoutMs: must be 1..=600000 (got 0)",
            "mcpServers[3].env.1X: a variable name",
            "mcpServers[3].readOnlyPaths[0]: `rel` must be an absolute path",
            "mcpServers[3].memoryMb: must be 64..=65536 (got 10)",
        ] {
            assert!(joined.contains(needle), "missing {needle:?} in\n{joined}");
        }
        // The second `t` is a duplicate only of a valid first one; the first was invalid.
        assert!(!joined.contains("listed twice"), "{joined}");
        let twice = check(r#"[{"name": "t", "command": "x"}, {"name": "t", "command": "y"}]"#);
        assert_eq!(twice.unwrap_err(), ["mcpServers[1].name: `t` listed twice"]);
    }

    #[test]
    fn a_name_alone_refers_to_a_stored_server() {
        let servers = check(r#"[{"name": "search"}]"#).unwrap();
        assert_eq!(servers[0].transport, Transport::Stored);
        let errors = check(r#"[{"name": "search", "args": ["x"]}]"#).unwrap_err();
        assert!(errors[0].starts_with("mcpServers[0]: needs exactly one of"), "{errors:?}");
    }

    #[test]
    fn wire_names_are_provider_safe() {
        assert_eq!(wire_name("fs", "read_file").as_deref(), Some("fs__read_file"));
        assert_eq!(wire_name("git", "log.show/all").as_deref(), Some("git__log_show_all"));
        assert_eq!(wire_name("fs", &"x".repeat(61)), None);
        assert_eq!(wire_name("fs", ""), None);
        assert!(is_valid_name("my-server_1"));
        for bad in ["", "_a", "a_", "a__b", "a.b", &"x".repeat(33)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }
}
