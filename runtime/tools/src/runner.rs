//! [`Tools`]: the engine's `ToolRunner` for `http`, `builtin`, `native` and `mcp` tools, built
//! once per artifact. Building checks everything that can be checked before a run (every native
//! handler registered, every `mcp` tool attached by the host, every builtin known, every URL and
//! header filled and valid) and reports all problems together; a call then dispatches on the
//! tool's `run`.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tenx_artifact::{Artifact, Run, Tool};
use tenx_engine::ports::{Clock, ToolError, ToolErrorKind, ToolInvocation, ToolRunner};
use tokio_util::sync::CancellationToken;

use crate::builtin::Builtin;
use crate::env_template::Variables;
use crate::http::{self, HttpTool};
use crate::load_error::{LoadError, LoadProblem};
use crate::mcp::McpTools;
use crate::native::{NativeCall, NativeHandler, NativeHandlers};

/// How one declared tool runs, prepared at load.
enum Prepared {
    Http(Box<HttpTool>),
    Builtin(Builtin),
    Native(Arc<dyn NativeHandler>),
    Remote,
    Mcp(Arc<dyn McpTools>),
}

/// One declared tool: its binding as declared (to check each invocation against) and how it runs.
struct Entry {
    run: Run,
    prepared: Prepared,
}

/// Runs an artifact's `http`, `builtin`, `native` and `mcp` tools. Build it with [`Tools::builder`].
pub struct Tools {
    tools: BTreeMap<String, Entry>,
    client: Option<reqwest::Client>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Tools")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Collects what [`Tools`] needs besides the artifact.
pub struct ToolsBuilder {
    clock: Arc<dyn Clock>,
    natives: NativeHandlers,
    mcp: Option<Arc<dyn McpTools>>,
}

impl Tools {
    /// A builder; `clock` is what `current_time` reads and what `Retry-After` dates are
    /// measured against.
    pub fn builder(clock: Arc<dyn Clock>) -> ToolsBuilder {
        ToolsBuilder {
            clock,
            natives: NativeHandlers::new(),
            mcp: None,
        }
    }
}

impl ToolsBuilder {
    /// The host's native handlers.
    #[must_use]
    pub fn natives(mut self, natives: NativeHandlers) -> Self {
        self.natives = natives;
        self
    }

    /// The MCP tools the host attached for this artifact (`tenx_mcp::McpClient::attach`).
    #[must_use]
    pub fn mcp(mut self, mcp: Arc<dyn McpTools>) -> Self {
        self.mcp = Some(mcp);
        self
    }

    /// Prepares every tool of `artifact`, filling `http` URLs and headers from `variables` (the
    /// environment resolved at load). Refuses, with every problem at once, an artifact it
    /// cannot run.
    pub fn build(self, artifact: &Artifact, variables: &dyn Variables) -> Result<Tools, LoadError> {
        let mut problems = Vec::new();
        let mut missing: Vec<String> = artifact
            .native_handlers
            .iter()
            .chain(artifact.tools.values().filter_map(|tool| match &tool.run {
                Run::Native { name } => Some(name),
                _ => None,
            }))
            .filter(|name| self.natives.get(name).is_none())
            .cloned()
            .collect();
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            problems.push(LoadProblem::MissingNativeHandlers(missing));
        }
        let mut tools = BTreeMap::new();
        for (name, tool) in &artifact.tools {
            let prepared = match &tool.run {
                Run::Http { .. } => {
                    HttpTool::prepare(name, tool, variables, &mut problems).map(|tool| Prepared::Http(Box::new(tool)))
                }
                Run::Builtin { name: builtin } => {
                    let known = Builtin::named(builtin).map(Prepared::Builtin);
                    if known.is_none() {
                        problems.push(LoadProblem::UnknownBuiltin {
                            tool: name.clone(),
                            name: builtin.clone(),
                        });
                    }
                    known
                }
                Run::Native { name: handler } => self.natives.get(handler).cloned().map(Prepared::Native),
                Run::Mcp { server, tool } => {
                    let attached = self
                        .mcp
                        .as_ref()
                        .filter(|mcp| mcp.attached(name, server, tool))
                        .map(|mcp| Prepared::Mcp(Arc::clone(mcp)));
                    if attached.is_none() {
                        problems.push(LoadProblem::McpServerNotAttached {
                            tool: name.clone(),
                            server: server.clone(),
                        });
                    }
                    attached
                }
                Run::Remote => Some(Prepared::Remote),
            };
            if let Some(prepared) = prepared {
                tools.insert(
                    name.clone(),
                    Entry {
                        run: tool.run.clone(),
                        prepared,
                    },
                );
            }
        }
        let needs_client = tools.values().any(|entry| matches!(entry.prepared, Prepared::Http(_)));
        let client = if needs_client {
            match http::client() {
                Ok(client) => Some(client),
                Err(problem) => {
                    problems.push(problem);
                    None
                }
            }
        } else {
            None
        };
        if !problems.is_empty() {
            return Err(LoadError { problems });
        }
        Ok(Tools {
            tools,
            client,
            clock: self.clock,
        })
    }
}

fn failed(message: impl Into<String>) -> ToolError {
    ToolError {
        kind: ToolErrorKind::Failed,
        message: message.into(),
    }
}

impl Tools {
    /// Runs the call without watching for cancellation.
    async fn dispatch(&self, entry: &Entry, invocation: &ToolInvocation<'_>) -> Result<Value, ToolError> {
        match &entry.prepared {
            Prepared::Http(tool) => match &self.client {
                Some(client) => tool.call(client, invocation, self.clock.now()).await,
                None => Err(failed("the HTTP client is not available")),
            },
            Prepared::Builtin(builtin) => builtin.call(invocation.arguments, &self.clock),
            Prepared::Native(handler) => {
                handler
                    .call(NativeCall {
                        tool_name: invocation.tool_name,
                        arguments: invocation.arguments,
                        identity: invocation.identity,
                        idempotency_key: invocation.idempotency_key,
                        thread_id: invocation.thread_id,
                        call_id: invocation.call_id,
                    })
                    .await
            }
            Prepared::Remote => Err(failed("a remote tool is run by the API client, never by the runtime")),
            Prepared::Mcp(mcp) => mcp.call(invocation).await,
        }
    }
}

#[async_trait]
impl ToolRunner for Tools {
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        let Some(entry) = self.tools.get(invocation.tool_name) else {
            return Err(failed(format!("no tool `{}` is declared", invocation.tool_name)));
        };
        if entry.run != invocation.tool.run {
            return Err(failed(format!(
                "tool `{}` does not match the artifact the tools were loaded for",
                invocation.tool_name
            )));
        }
        if cancel.is_cancelled() {
            return Err(failed("the call was cancelled before it was sent"));
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(failed("the call was cancelled")),
            result = self.dispatch(entry, &invocation) => result,
        }
    }

    fn deduplicates(&self, tool: &Tool) -> bool {
        match &tool.run {
            // The key reaches the service in `Idempotency-Key`.
            Run::Http { .. } => true,
            // Builtins have no effect outside the call: running one again changes nothing.
            Run::Builtin { .. } => true,
            Run::Native { name } => self
                .tools
                .values()
                .find_map(|entry| match (&entry.run, &entry.prepared) {
                    (Run::Native { name: registered }, Prepared::Native(handler)) if registered == name => {
                        Some(handler.deduplicates())
                    }
                    _ => None,
                })
                .unwrap_or(false),
            // MCP calls carry no idempotency key a server honours.
            Run::Remote | Run::Mcp { .. } => false,
        }
    }
}
