//! The tool port: runs one call of a declared tool. The engine has already validated and
//! normalised the arguments, asked every approval and stored the in-flight marker; the runner
//! only executes (`http`, `builtin`, `native`, `mcp`; `remote` tools are run by the client).

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::Identity;

/// One call to execute.
#[derive(Debug, Clone)]
pub struct ToolInvocation<'a> {
    /// The tool's declared name (a key of the artifact's `tools`).
    pub tool_name: &'a str,
    /// Its declaration.
    pub tool: &'a tenx_artifact::Tool,
    /// The validated, normalised arguments (bound arguments filled in).
    pub arguments: &'a Value,
    /// The idempotency key the call runs under; an `http` tool sends it as `Idempotency-Key`.
    pub idempotency_key: &'a str,
    /// The verified identity of the run's user, forwarded as claims (never a bearer token).
    pub identity: &'a Identity,
    /// The thread.
    pub thread_id: &'a str,
    /// The tool call id (or the tool node's step id).
    pub call_id: &'a str,
}

/// Why a tool call failed. The `message` is shown to the model, so it never holds a secret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct ToolError {
    /// The class of failure (decides retries).
    pub kind: ToolErrorKind,
    /// What happened, safe to show the model.
    pub message: String,
}

/// Classes of tool failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolErrorKind {
    /// No answer in time: the call may or may not have taken effect.
    Timeout,
    /// Could not connect (nothing was sent) or the connection broke.
    Connection,
    /// HTTP 429; `retry_after_ms` when the service said.
    RateLimited {
        /// The service's `Retry-After`, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// HTTP 5xx.
    Server,
    /// HTTP 4xx other than 429, or an answer that is not JSON.
    Client,
    /// The handler failed (a native or builtin error), or the runner cannot run this tool.
    Failed,
}

/// Runs tools.
#[async_trait]
pub trait ToolRunner: Send + Sync {
    /// Runs one call. Returns the tool's result (validated by the engine against the tool's
    /// `result` schema afterwards).
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError>;

    /// Whether the idempotency key reaches whatever performs this tool's effect, so a repeat
    /// after a crash is deduplicated there (an `http` tool: yes, via its header). When not, a
    /// call interrupted by a crash, or cut short by a stop after it was sent, is marked
    /// `outcome_unknown` instead of being sent again.
    fn deduplicates(&self, tool: &tenx_artifact::Tool) -> bool;
}
