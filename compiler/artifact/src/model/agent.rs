//! Agents and the model configurations they call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentInput, Schema, Script, ValidatorUse};

use super::sort_unique;

/// An agent: a model, a prompt, and the exact tools and handoffs it may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// A key of `models`.
    pub model: String,
    /// The system prompt, a template whose `{placeholders}` name state fields.
    pub prompt: String,
    /// Keys of `tools` the model is offered and may call, sorted, resolved at compile time
    /// (tags and names already expanded). Nothing outside this list is ever dispatched.
    pub allowed_tools: Vec<String>,
    /// The agents this agent may transfer to, sorted by tool name.
    pub handoffs: Vec<Handoff>,
    /// JSON Schema of the agent's structured final output, if it has one.
    #[serde(deserialize_with = "super::required")]
    pub output_schema: Option<Schema>,
    /// Validators applied, in this order, to the model's output: each final answer and the
    /// arguments of each tool call (as canonical JSON text), before anything else uses them.
    pub output_guards: Vec<ValidatorUse>,
    /// How many times the model is asked again, with the error, after an answer fails a guard or
    /// `output_schema` (at most [`MAX_RETRIES`]); when they are used up the node fails with
    /// `NODE_001`.
    pub retries: u64,
    /// What the model is shown of the conversation before the agent's own turn.
    pub input: AgentInput,
    /// Other agents this agent's model may call as tools, sorted by tool name (see
    /// [`AgentTool`]).
    pub agent_tools: Vec<AgentTool>,
}

/// An agent offered to another agent's model as a tool. A call runs the agent on its own: a
/// conversation of one user message (the value of the only string parameter, else the arguments
/// as canonical JSON), its own prompt, tools, approvals, guards and retries; its final answer
/// (its `output_schema` object, else its text) is the call's result. A question asked inside
/// pauses the thread; agents never call each other in a circle.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentTool {
    /// The model-facing tool name.
    pub tool_name: String,
    /// The agent (a key of `agents`) that answers the call.
    pub agent: String,
    /// What the calling model is told the tool does.
    pub description: String,
    /// JSON Schema of the call's arguments: an object schema.
    pub parameters: Schema,
}

/// The most times a model may be asked again after an answer that fails its guards or schema.
pub const MAX_RETRIES: u64 = 10;

/// An agent's `retries` when the program does not set it.
pub const DEFAULT_RETRIES: u64 = 2;

impl Agent {
    pub(crate) fn normalize(&mut self) {
        sort_unique(&mut self.allowed_tools);
        sort_unique(&mut self.handoffs);
        sort_unique(&mut self.agent_tools);
    }
}

/// A declared handoff: the tool the model calls to transfer, and the agent it transfers to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// The model-facing tool name, `transfer_to_<target>`.
    pub tool_name: String,
    /// The agent (a key of `agents`) to transfer to. In each graph, a `handoff` edge leads from
    /// the node of this agent to the node of the target agent.
    pub target: String,
    /// JSON Schema (draft 2020-12) of the payload the model passes when it hands off: an object
    /// schema, the parameters of the `tool_name` tool the model is offered. A handoff without a
    /// payload has `{"additionalProperties":false,"properties":{},"type":"object"}`. Each
    /// property with the name of a state field of the graph is written into that field when the
    /// handoff is taken, before the target node runs.
    pub payload: Schema,
}

/// The payload schema of a handoff that declares none: an object with no properties.
pub const EMPTY_PAYLOAD: &str = r#"{"additionalProperties":false,"properties":{},"type":"object"}"#;

/// How to reach a language model. Credentials are named, never included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The provider protocol.
    pub provider: Provider,
    /// The provider's model name, e.g. `gpt-4o-mini`; `null` for `scripted`.
    #[serde(deserialize_with = "super::required")]
    pub name: Option<String>,
    /// The API base URL; `null` for the provider's default.
    #[serde(deserialize_with = "super::required")]
    pub base_url: Option<String>,
    /// The *name* of the environment variable that holds the API key, never the key itself.
    #[serde(deserialize_with = "super::required")]
    pub api_key_env: Option<String>,
    /// Provider parameters (temperature, max tokens, ...), an object.
    pub params: Value,
    /// For `scripted`: what the model answers; `null` for every other provider.
    #[serde(deserialize_with = "super::required")]
    pub script: Option<Script>,
}

/// A model provider protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Any OpenAI-compatible chat-completions server.
    Openai,
    /// The Anthropic messages API.
    Anthropic,
    /// Deterministic turns from the program; no network, no key.
    Scripted,
}
