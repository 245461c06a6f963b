//! The messages-API request body: the model, `max_tokens` (required by the API:
//! [`DEFAULT_MAX_TOKENS`] unless `params` sets it), the system prompt at the top level, the
//! conversation as alternating `user`/`assistant` messages of content blocks, the tools with
//! their `input_schema`, structured output through a forced tool, and the declared `params`
//! passed through.
//!
//! The conversation, oldest first: a user message as `user` blocks, its text as a text block
//! and its media and documents as image and document blocks ([`super::media`]); an engine `system`
//! message (a "your answer was not accepted" note) as a `user` text block too (the API has no
//! system role inside `messages`); an assistant message as `text` and `tool_use` blocks; each
//! tool result (a tool's output, an error, a rejected approval, a handoff's result) as a
//! `tool_result` block with its `tool_use_id` and `is_error`. Consecutive messages of one role
//! are merged into one message, so the tool results of one turn travel together in one `user`
//! message, as the API requires; empty text blocks are left out (the API refuses them). Media
//! the API cannot take, and media outside a user message, fail the call with a [`MediaFault`].

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tenx_engine::ports::{ModelRequest, ToolSpec};
use tenx_engine::wire::{Message, Role};

use super::media::user_blocks;
use crate::conversation::{calls_of, results_of, text_of};
use crate::media::{MediaFault, no_media_outside_user};
use crate::output::OutputShape;

/// `max_tokens` when `params` does not set it.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The name of the tool structured output is forced through (made unique against the agent's
/// own tools by appending `_`).
pub const OUTPUT_TOOL: &str = "final_answer";

/// The body of a call, and how its answer is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The JSON body.
    pub body: Value,
    /// The output tool's name and the schema's shape, when the agent has an output schema.
    pub output: Option<(String, OutputShape)>,
}

/// The request body for `request`. `params` (less `stream`) are copied first, so the keys the
/// adapter owns (`model`, `system`, `messages`, `tools`, `stream`, and `tool_choice` when
/// output is forced) always win; `max_tokens` is the author's when set.
pub fn body(
    model: &str,
    params: &Map<String, Value>,
    request: &ModelRequest<'_>,
    stream: bool,
) -> Result<Prepared, MediaFault> {
    let mut body = params.clone();
    body.insert("model".into(), json!(model));
    if !body.contains_key("max_tokens") {
        body.insert("max_tokens".into(), json!(DEFAULT_MAX_TOKENS));
    }
    if !request.system.is_empty() {
        body.insert("system".into(), json!(request.system));
    }
    body.insert("messages".into(), Value::Array(messages(request.messages)?));
    let mut tools: Vec<Value> = request.tools.iter().map(tool).collect();
    let output = request.output_schema.map(|schema| {
        let mut name = OUTPUT_TOOL.to_owned();
        while request.tools.iter().any(|spec| spec.name == name) {
            name.push('_');
        }
        (name, OutputShape::of(schema))
    });
    if let Some((name, shape)) = &output {
        tools.push(json!({
            "name": name,
            "description": "Give your final answer. Call this tool exactly once, when you are done, with the answer as its input.",
            "input_schema": shape.schema,
        }));
        // Alone, the output tool is forced by name; beside the agent's tools the model must
        // call one of them (`any`), and the output tool is how it answers.
        let choice = if request.tools.is_empty() {
            json!({"type": "tool", "name": name})
        } else {
            json!({"type": "any"})
        };
        body.insert("tool_choice".into(), choice);
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(stream));
    Ok(Prepared {
        body: Value::Object(body),
        output,
    })
}

/// The conversation as messages of content blocks, consecutive roles merged.
pub fn messages(conversation: &[Arc<Message>]) -> Result<Vec<Value>, MediaFault> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for (index, message) in conversation.iter().enumerate() {
        no_media_outside_user(index, message)?;
        let (role, blocks) = match message.role {
            Role::User => ("user", user_blocks(index, message)?),
            Role::System => ("user", text_block(&text_of(message)).into_iter().collect()),
            Role::Assistant => ("assistant", assistant_blocks(message)),
            Role::Tool => (
                "user",
                results_of(message)
                    .into_iter()
                    .map(|(call_id, text, is_error)| {
                        let mut block = json!({"type": "tool_result", "tool_use_id": call_id, "content": text});
                        if is_error && let Some(fields) = block.as_object_mut() {
                            fields.insert("is_error".into(), json!(true));
                        }
                        block
                    })
                    .collect(),
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    Ok(turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect())
}

/// A text block, unless the text is empty.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// An assistant message's text and `tool_use` blocks. `input` must be an object: arguments that
/// are not a JSON object are sent as `{}` (the engine refused that call already).
fn assistant_blocks(message: &Message) -> Vec<Value> {
    let mut blocks: Vec<Value> = text_block(&text_of(message)).into_iter().collect();
    for call in calls_of(message) {
        let input = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(input)) => Value::Object(input),
            _ => json!({}),
        };
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    blocks
}

/// A tool with its `input_schema`.
fn tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.parameters,
    })
}
