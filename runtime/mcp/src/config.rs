//! The host's MCP configuration: the servers it runs or reaches, under the names the program's
//! `mcp(server: …)` uses, and how their credentials come from the environment.
//!
//! The typed form ([`McpConfig`]) deserialises from TOML or JSON; it holds **names** of
//! environment variables and `${NAME}` templates, never values. [`McpConfig::resolve`] reads the
//! environment once and reports every missing variable and bad setting together; the resolved
//! form's `Debug` prints no value.
//!
//! ```toml
//! [servers.files]
//! transport = "stdio"
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/shared"]
//! env = ["PATH", "HOME"]          # passed from the host's environment by name; nothing else is
//! timeout_ms = 30000              # per call (and for connecting); 30 s when left out
//!
//! [servers.search]
//! transport = "http"
//! url = "https://mcp.example.com/mcp"
//! headers = { Authorization = "Bearer ${SEARCH_MCP_TOKEN}" }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use tenx_tools::env_template::{self, TemplateError};

/// How long one call (and one connect with its `tools/list`) may take when the host says not.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Headers the MCP transport writes itself, which a configuration may not set.
const RESERVED_HEADERS: [&str; 5] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// The MCP servers a host configures, by the name programs use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// The servers, by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
}

/// One server: a command the host runs (stdio), or a streamable-HTTP endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case", deny_unknown_fields)]
pub enum ServerConfig {
    /// A child process speaking MCP on its standard input and output.
    Stdio {
        /// The program (looked up in the host's `PATH` when not a path).
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Names of the host's environment variables the child receives; it receives no other.
        #[serde(default)]
        env: Vec<String>,
        /// Its working directory; the host's when left out.
        #[serde(default)]
        cwd: Option<PathBuf>,
        /// Timeout of one call, and of connecting, in milliseconds.
        #[serde(default)]
        timeout_ms: Option<u64>,
    },
    /// A streamable-HTTP MCP endpoint.
    Http {
        /// The endpoint's URL, a `${NAME}` template.
        url: String,
        /// Headers sent with every request, values `${NAME}` templates (credentials).
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Timeout of one call, and of connecting, in milliseconds.
        #[serde(default)]
        timeout_ms: Option<u64>,
    },
}

/// A server with its environment read: what a connection needs. `Debug` shows no value.
#[derive(Clone)]
pub struct ResolvedServer {
    /// How to reach it.
    pub(crate) transport: ResolvedTransport,
    /// Timeout of a call or a connect.
    pub(crate) timeout: Duration,
}

/// The resolved transport.
#[derive(Clone)]
pub(crate) enum ResolvedTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: Url,
        headers: HashMap<HeaderName, HeaderValue>,
    },
}

impl std::fmt::Debug for ResolvedServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = formatter.debug_struct("ResolvedServer");
        match &self.transport {
            ResolvedTransport::Stdio { command, env, .. } => debug
                .field("transport", &"stdio")
                .field("command", command)
                .field("env", &env.keys().collect::<Vec<_>>()),
            ResolvedTransport::Http { headers, .. } => debug
                .field("transport", &"http")
                .field("headers", &headers.keys().collect::<Vec<_>>()),
        };
        debug.field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

/// The configuration with its environment read, by server name.
#[derive(Debug, Clone, Default)]
pub struct ResolvedConfig {
    pub(crate) servers: BTreeMap<String, ResolvedServer>,
}

impl ResolvedConfig {
    /// The configured server names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }
}

/// Why a configuration cannot be used: every problem, none holding a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the MCP configuration cannot be used: {}", .problems.join("; "))]
pub struct ConfigError {
    /// What is wrong, server by server.
    pub problems: Vec<String>,
}

/// The value of `name`, or `None` when unset or empty (an empty credential is never meant).
fn read(lookup: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).filter(|value| !value.is_empty())
}

impl McpConfig {
    /// Reads every variable the configuration names through `lookup` (the process environment,
    /// or a map in tests), fills the templates and checks the settings. Fails with all problems.
    pub fn resolve(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<ResolvedConfig, ConfigError> {
        let lookup: &dyn Fn(&str) -> Option<String> = &lookup;
        let mut problems = Vec::new();
        let mut servers = BTreeMap::new();
        for (name, server) in &self.servers {
            let before = problems.len();
            let timeout_ms = match server {
                ServerConfig::Stdio { timeout_ms, .. } | ServerConfig::Http { timeout_ms, .. } => {
                    timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
                }
            };
            if timeout_ms == 0 {
                problems.push(format!("server `{name}`: `timeout_ms` must be at least 1"));
            }
            let transport = match server {
                ServerConfig::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                    ..
                } => {
                    if command.is_empty() {
                        problems.push(format!("server `{name}`: `command` is empty"));
                    }
                    let mut values = BTreeMap::new();
                    let mut missing = Vec::new();
                    for variable in env {
                        if !env_template::is_variable_name(variable) {
                            problems.push(format!("server `{name}`: `{variable}` is not a variable name"));
                        } else if let Some(value) = read(lookup, variable) {
                            values.insert(variable.clone(), value);
                        } else {
                            missing.push(format!("`{variable}`"));
                        }
                    }
                    if !missing.is_empty() {
                        problems.push(format!(
                            "server `{name}`: environment variables not set: {}",
                            missing.join(", ")
                        ));
                    }
                    Some(ResolvedTransport::Stdio {
                        command: command.clone(),
                        args: args.clone(),
                        env: values,
                        cwd: cwd.clone(),
                    })
                }
                ServerConfig::Http { url, headers, .. } => resolve_http(name, url, headers, lookup, &mut problems),
            };
            if let (Some(transport), true) = (transport, problems.len() == before) {
                servers.insert(
                    name.clone(),
                    ResolvedServer {
                        transport,
                        timeout: Duration::from_millis(timeout_ms),
                    },
                );
            }
        }
        if problems.is_empty() {
            Ok(ResolvedConfig { servers })
        } else {
            Err(ConfigError { problems })
        }
    }
}

/// Fills an HTTP server's URL and headers; problems name the place, never a value. `None`
/// when the URL could not be made.
fn resolve_http(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<String>,
) -> Option<ResolvedTransport> {
    let values: BTreeMap<String, String> = [url]
        .into_iter()
        .chain(headers.values().map(String::as_str))
        .filter_map(|text| env_template::variable_names(text).ok())
        .flatten()
        .filter_map(|variable| read(lookup, variable).map(|value| (variable.to_string(), value)))
        .collect();
    let mut fill = |text: &str, part: &str| match env_template::fill(text, &values) {
        Ok(filled) => Some(filled),
        Err(error @ (TemplateError::Missing { .. } | TemplateError::Malformed { .. })) => {
            problems.push(format!("server `{name}`, {part}: {error}"));
            None
        }
    };
    let filled_url = fill(url, "its URL");
    let mut filled_headers = Vec::new();
    for (header, template) in headers {
        if let Some(value) = fill(template, &format!("header `{header}`")) {
            filled_headers.push((header.clone(), value));
        }
    }
    let parsed = filled_url.and_then(|text| {
        let parsed = Url::parse(&text)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some());
        if parsed.is_none() {
            problems.push(format!(
                "server `{name}`: its URL, once filled in, is not an absolute http or https URL"
            ));
        }
        parsed
    });
    let mut header_map = HashMap::new();
    for (header, value) in filled_headers {
        let Ok(header_name) = HeaderName::from_bytes(header.as_bytes()) else {
            problems.push(format!("server `{name}`: header `{header}` is not a header name"));
            continue;
        };
        if RESERVED_HEADERS.contains(&header_name.as_str()) {
            problems.push(format!(
                "server `{name}`: header `{header}` is written by the MCP transport itself"
            ));
            continue;
        }
        let Ok(mut header_value) = HeaderValue::from_str(&value) else {
            problems.push(format!(
                "server `{name}`: header `{header}`, once filled in, holds a character a header cannot"
            ));
            continue;
        };
        header_value.set_sensitive(true);
        header_map.insert(header_name, header_value);
    }
    parsed.map(|url| ResolvedTransport::Http {
        url,
        headers: header_map,
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
