//! The chat-completions request body: the model, the conversation mapped message by message,
//! the tools as functions, structured output as `response_format`, streaming with usage, and the
//! declared `params` passed through.
//!
//! The conversation, oldest first: the system prompt as a `system` message; a user message as
//! `user`; an engine `system` message (a "your answer was not accepted" note) as `system`; an
//! assistant message as `assistant` with its `tool_calls` (arguments as the model wrote them);
//! each tool result (a tool's output, an error, a rejected approval, a handoff's result) as a
//! `tool` message with its `tool_call_id`. A user message holding media has an array `content`
//! ([`super::media`]); media a message cannot carry fail the call with a [`MediaFault`].

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tenx_engine::ports::{ModelRequest, ToolSpec};
use tenx_engine::wire::{Message, Role};

use super::media::user_content;
use super::strict::is_strict_compatible;
use crate::conversation::{calls_of, results_of, text_of};
use crate::media::{MediaFault, no_media_outside_user};
use crate::output::OutputShape;

/// The body of a call, and how its answer is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The JSON body.
    pub body: Value,
    /// The output schema's shape, when the agent has one.
    pub output: Option<OutputShape>,
}

/// The request body for `request`. `params` are the model's declared `params` without the ones
/// this adapter reads itself (`stream`); they are copied first, so the keys the adapter owns
/// (`model`, `messages`, `tools`, `stream`, `stream_options`) always win, and an author's own
/// `response_format` wins over the one derived from the output schema.
pub fn body(
    model: &str,
    params: &Map<String, Value>,
    request: &ModelRequest<'_>,
    stream: bool,
) -> Result<Prepared, MediaFault> {
    let mut body = params.clone();
    body.insert("model".into(), json!(model));
    body.insert(
        "messages".into(),
        Value::Array(messages(&request.system, request.messages)?),
    );
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.iter().map(tool).collect()));
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    } else {
        body.insert("stream".into(), json!(false));
    }
    let output = request.output_schema.map(OutputShape::of);
    if let Some(shape) = &output
        && !body.contains_key("response_format")
    {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(request.agent),
                    "schema": shape.schema,
                    "strict": is_strict_compatible(&shape.schema),
                }
            }),
        );
    }
    Ok(Prepared {
        body: Value::Object(body),
        output,
    })
}

/// The messages: the system prompt, then the conversation.
pub fn messages(system: &str, conversation: &[Arc<Message>]) -> Result<Vec<Value>, MediaFault> {
    let mut messages = Vec::with_capacity(conversation.len().saturating_add(1));
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for (index, message) in conversation.iter().enumerate() {
        no_media_outside_user(index, message)?;
        match message.role {
            Role::User => messages.push(json!({"role": "user", "content": user_content(index, message)?})),
            Role::System => messages.push(json!({"role": "system", "content": text_of(message)})),
            Role::Assistant => messages.push(assistant(message)),
            Role::Tool => {
                for (call_id, text, _is_error) in results_of(message) {
                    messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
                }
            }
        }
    }
    Ok(messages)
}

/// An assistant message with its calls (`content` is `null` when it only called tools).
fn assistant(message: &Message) -> Value {
    let text = text_of(message);
    let calls: Vec<Value> = calls_of(message)
        .into_iter()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            })
        })
        .collect();
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    if calls.is_empty() {
        out.insert("content".into(), json!(text));
    } else {
        out.insert(
            "content".into(),
            if text.is_empty() { Value::Null } else { json!(text) },
        );
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(out)
}

/// A tool as a function.
fn tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        }
    })
}

/// The `json_schema.name`: the agent's name in `[A-Za-z0-9_-]`, at most 64 characters.
fn schema_name(agent: &str) -> String {
    let name: String = agent
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .take(64)
        .collect();
    if name.is_empty() { "output".into() } else { name }
}
