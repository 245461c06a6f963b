//! [`McpClient`]: the MCP servers an artifact's `mcp` tools need, attached at load. Attaching
//! connects to each server the artifact names, lists its tools and checks every declared tool
//! against the listing ([`crate::compat`]); any problem anywhere refuses the artifact, with every
//! problem named at once (contract D13: fail closed). The client then runs calls of exactly
//! the declared tools, through the `tenx_tools::McpTools` port.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;
use tenx_artifact::{Artifact, Run};
use tenx_engine::ports::{ToolError, ToolErrorKind, ToolInvocation};

use crate::config::ResolvedConfig;
use crate::result::error;
use crate::server::{Declared, Server, Verdict};

/// One reason an artifact's MCP tools cannot be attached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttachProblem {
    /// The artifact names a server the host does not configure.
    #[error("MCP server `{server}` is not configured by the host (needed by {})", names(.tools))]
    NotConfigured {
        /// The server's name.
        server: String,
        /// The declared tools that run on it.
        tools: Vec<String>,
    },
    /// The server could not be started, reached, or listed.
    #[error("MCP server `{server}` is unreachable: {reason}")]
    Unreachable {
        /// The server's name.
        server: String,
        /// Why (never a URL, header or variable value).
        reason: String,
    },
    /// A declared tool the server does not list.
    #[error("MCP server `{server}` has no tool `{remote}` (declared as `{tool}`)")]
    MissingTool {
        /// The server's name.
        server: String,
        /// The declared tool's name.
        tool: String,
        /// The name it has on the server.
        remote: String,
    },
    /// A declared tool whose parameters the server's `inputSchema` does not accept.
    #[error("MCP tool `{remote}` on server `{server}` does not accept what `{tool}` declares: {}", .reasons.join("; "))]
    Incompatible {
        /// The server's name.
        server: String,
        /// The declared tool's name.
        tool: String,
        /// The name it has on the server.
        remote: String,
        /// Every reason.
        reasons: Vec<String>,
    },
}

fn names(tools: &[String]) -> String {
    tools
        .iter()
        .map(|tool| format!("`{tool}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The artifact's MCP tools cannot be attached: every problem, in server order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the artifact's MCP tools cannot be attached: {}", .problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct AttachError {
    /// What is wrong, at least one.
    pub problems: Vec<AttachProblem>,
}

/// What a host can see of one attached server (for health pages and tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// The tool names the server listed last: what it offers, never what a model is shown.
    pub listed: Vec<String>,
    /// For each declared tool: `None` when it matches, else why it does not (or `unchecked`).
    pub declared: BTreeMap<String, Option<String>>,
    /// How many listings were checked (attach, reconnects, announced changes).
    pub listings: u64,
    /// How many `notifications/tools/list_changed` arrived.
    pub announcements: u64,
}

/// The attached MCP servers of one artifact. Only the artifact's declared `mcp` tools are ever
/// run; whatever else a server offers is never reachable.
#[derive(Debug)]
pub struct McpClient {
    servers: BTreeMap<String, Server>,
    /// Declared tool name → (server, name on the server).
    tools: BTreeMap<String, (String, String)>,
}

impl McpClient {
    /// Attaches every server `artifact`'s `mcp` tools name, from `config`. Fails closed with
    /// every problem: a server not configured, unreachable, or lacking a declared tool, and a
    /// declared tool whose parameters its `inputSchema` does not accept.
    pub async fn attach(artifact: &Artifact, config: &ResolvedConfig) -> Result<Self, AttachError> {
        let mut needed: BTreeMap<String, BTreeMap<String, Declared>> = BTreeMap::new();
        let mut tools = BTreeMap::new();
        for (name, tool) in &artifact.tools {
            if let Run::Mcp { server, tool: remote } = &tool.run {
                needed.entry(server.clone()).or_default().insert(
                    name.clone(),
                    Declared {
                        remote: remote.clone(),
                        parameters: tool.parameters.to_value(),
                    },
                );
                tools.insert(name.clone(), (server.clone(), remote.clone()));
            }
        }
        let mut problems = Vec::new();
        let mut servers = BTreeMap::new();
        for (server, declared) in needed {
            let Some(settings) = config.servers.get(&server) else {
                problems.push(AttachProblem::NotConfigured {
                    server,
                    tools: declared.into_keys().collect(),
                });
                continue;
            };
            match Server::attach(&server, settings, declared).await {
                Err(reason) => problems.push(AttachProblem::Unreachable { server, reason }),
                Ok(attached) => {
                    for (tool, verdict) in attached.checks.verdicts() {
                        let remote = attached
                            .checks
                            .declared
                            .get(&tool)
                            .map(|declared| declared.remote.clone())
                            .unwrap_or_default();
                        match verdict {
                            Verdict::Matches => {}
                            Verdict::Missing => {
                                problems.push(AttachProblem::MissingTool {
                                    server: server.clone(),
                                    tool,
                                    remote,
                                });
                            }
                            Verdict::Mismatch(reasons) => problems.push(AttachProblem::Incompatible {
                                server: server.clone(),
                                tool,
                                remote,
                                reasons,
                            }),
                            Verdict::Unchecked => problems.push(AttachProblem::Unreachable {
                                server: server.clone(),
                                reason: "its tools could not be listed".to_string(),
                            }),
                        }
                    }
                    servers.insert(server, attached);
                }
            }
        }
        if problems.is_empty() {
            Ok(Self { servers, tools })
        } else {
            Err(AttachError { problems })
        }
    }

    /// The declared `mcp` tools, by declared name, with their server and name there.
    pub fn tools(&self) -> &BTreeMap<String, (String, String)> {
        &self.tools
    }

    /// What `server` listed last and how its declared tools fare, if it is attached.
    pub fn status(&self, server: &str) -> Option<ServerStatus> {
        let checks = &self.servers.get(server)?.checks;
        Some(ServerStatus {
            listed: checks.listed(),
            declared: checks
                .verdicts()
                .into_iter()
                .map(|(tool, verdict)| {
                    let problem = match verdict {
                        Verdict::Matches => None,
                        Verdict::Missing => Some("the server does not list it".to_string()),
                        Verdict::Mismatch(reasons) => Some(reasons.join("; ")),
                        Verdict::Unchecked => Some("unchecked".to_string()),
                    };
                    (tool, problem)
                })
                .collect(),
            listings: checks.listings(),
            announcements: checks.announcements(),
        })
    }
}

#[async_trait]
impl tenx_tools::McpTools for McpClient {
    fn attached(&self, tool_name: &str, server: &str, tool: &str) -> bool {
        self.tools
            .get(tool_name)
            .is_some_and(|(attached_server, remote)| attached_server == server && remote == tool)
            && self.servers.contains_key(server)
    }

    async fn call(&self, invocation: &ToolInvocation<'_>) -> Result<Value, ToolError> {
        let Some((server, _)) = self.tools.get(invocation.tool_name) else {
            return Err(error(
                ToolErrorKind::Failed,
                format!("no MCP tool `{}` is declared", invocation.tool_name),
            ));
        };
        let Some(attached) = self.servers.get(server) else {
            return Err(error(
                ToolErrorKind::Failed,
                format!("MCP server `{server}` is not attached"),
            ));
        };
        attached.call(invocation.tool_name, invocation).await
    }
}
