//! The model port: one call of a language model with a conversation and tools. Providers
//! (`openai`, `anthropic`) and the scripted model implement it; the engine never knows which.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::wire::{Message, TokenUsage};

/// A tool as the model is shown it: the model-facing name, the description, and the parameter
/// schema **without bound arguments**.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The model-facing name (a tool's `name`, or a `transfer_to_…` handoff).
    pub name: String,
    /// The description.
    pub description: String,
    /// The JSON Schema of the arguments the model may set.
    pub parameters: Value,
}

/// One model call.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    /// The model's name (a key of the artifact's `models`).
    pub model_name: &'a str,
    /// Its configuration.
    pub model: &'a tenx_artifact::Model,
    /// The thread the call is made for.
    pub thread_id: &'a str,
    /// The node and agent calling.
    pub node: &'a str,
    /// The agent's name.
    pub agent: &'a str,
    /// The rendered system prompt.
    pub system: String,
    /// What the agent is shown of the conversation, oldest first: by its `input`, the thread's
    /// context or a part of it (led by one user message when it would start otherwise), then its
    /// own turn; and any retry notes of this call.
    pub messages: &'a [Arc<Message>],
    /// The tools offered, in a stable order. Nothing else may be called. Shared: the engine
    /// builds each agent's specs once and every request of that agent lends the same ones.
    pub tools: Arc<[ToolSpec]>,
    /// The JSON Schema a final answer must match, when the agent has an `output`.
    pub output_schema: Option<&'a Value>,
    /// The text of the message that started this run (scripted rules match it).
    pub run_input: &'a str,
    /// The model's position in this thread, as it returned it last time (`None` at first). A
    /// scripted model keeps its turn index here, so the position is part of the checkpoint.
    pub cursor: Option<&'a Value>,
    /// The id of the run this call belongs to ([`crate::thread::RunProgress::run_id`]): a
    /// scripted model with rules picks a rule when it first sees a run, and plays that rule's
    /// turns for as long as the run id stays the same (also across a pause and a resume).
    pub run_id: &'a str,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelToolCall {
    /// The call id (providers give one; the scripted model derives a deterministic one).
    pub id: String,
    /// The model-facing name it called.
    pub name: String,
    /// The arguments exactly as the model wrote them (JSON text, possibly invalid).
    pub arguments: String,
}

/// What one model call returned.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// The answer's text (empty when it only calls tools).
    pub text: String,
    /// The tool calls, in the order the model made them.
    pub tool_calls: Vec<ModelToolCall>,
    /// Tokens used.
    pub usage: Option<TokenUsage>,
    /// The model's new position in the thread (see [`ModelRequest::cursor`]).
    pub cursor: Option<Value>,
}

/// Receives streamed pieces of an answer while the model writes it.
pub trait DeltaSink: Send {
    /// A piece of the answer's text.
    fn text(&mut self, piece: &str);
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct ModelError {
    /// The class of failure (decides retries).
    pub kind: ModelErrorKind,
    /// What happened, without secrets.
    pub message: String,
}

/// Classes of model failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelErrorKind {
    /// No answer in time.
    Timeout,
    /// Could not connect, or the connection broke.
    Connection,
    /// The provider said slow down (HTTP 429); `retry_after_ms` when it said how long to wait
    /// (`Retry-After`), so a node's retry policy waits at least that long.
    RateLimited {
        /// The provider's `Retry-After`, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The provider failed (HTTP 5xx).
    Server,
    /// The provider refused the request (HTTP 4xx other than 429), or the answer was malformed.
    Refused,
    /// A scripted model has no turn left for this call, or no rule matched.
    ScriptExhausted,
    /// The call was cancelled (a stop).
    Cancelled,
}

/// A language model.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Calls the model once. Streams text pieces into `deltas` as they arrive and returns the
    /// whole answer. Stops early, with [`ModelErrorKind::Cancelled`], when `cancel` fires.
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError>;

    /// When this client stands in for the model it is given for (a script a host substitutes
    /// for a declared provider, in a test above all), what it is: [`crate::Engine::new`]
    /// records it in `EngineOptions::substitutions`, so every thread it serves shows it
    /// (`ThreadRecord::substitutions`). A model's own client keeps the default, `None`.
    fn substitution(&self) -> Option<String> {
        None
    }
}
