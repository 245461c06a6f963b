//! The port [`Tools`](crate::Tools) runs `mcp` tools through: the host attaches the MCP servers
//! it configures (the `tenx-mcp` crate connects, lists and checks every declared tool, failing
//! closed) and hands the result to [`ToolsBuilder::mcp`](crate::ToolsBuilder::mcp). Without it,
//! or when it lacks a declared tool's server, the artifact is refused at load, naming the server.

use async_trait::async_trait;
use serde_json::Value;
use tenx_engine::ports::{ToolError, ToolInvocation};

/// MCP tools attached by the host for one artifact.
#[async_trait]
pub trait McpTools: Send + Sync {
    /// Whether the declared tool `tool_name`, which runs `tool` on MCP server `server`, was
    /// attached (its server is configured and its declaration was checked against the server).
    fn attached(&self, tool_name: &str, server: &str, tool: &str) -> bool;

    /// Runs one call (the runner has checked the tool is declared and watches for cancellation).
    async fn call(&self, invocation: &ToolInvocation<'_>) -> Result<Value, ToolError>;
}
