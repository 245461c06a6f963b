//! What both providers read from the engine's conversation: a message's text, the calls an
//! assistant message made and the text of a tool result. The text of a system or assistant
//! message is its text blocks and its documents' extracted text; media (images, audio, video,
//! data, documents by their media) are read by [`crate::media`], sent in user messages by each
//! provider's `media` module, and refused anywhere else, never dropped.

use serde_json::Value;
use tenx_engine::wire::{ContentBlock, Message};

/// A tool call of an assistant message, as the provider is shown it.
#[derive(Debug, Clone, PartialEq)]
pub struct PastCall {
    /// The call id.
    pub id: String,
    /// The model-facing name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
}

/// The text of a user, system or assistant message: its text blocks (and documents' text), in
/// order, concatenated.
pub fn text_of(message: &Message) -> String {
    let mut text = String::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text: part, .. } => text.push_str(part),
            ContentBlock::Document { text: Some(part), .. } => text.push_str(part),
            _ => {}
        }
    }
    text
}

/// The calls an assistant message made, in order: its `tools_calls` (arguments as written),
/// else its tool-call blocks (arguments re-encoded).
pub fn calls_of(message: &Message) -> Vec<PastCall> {
    if let Some(calls) = &message.tools_calls {
        return calls
            .iter()
            .map(|call| PastCall {
                id: call.id.clone(),
                name: call.function.name.clone(),
                arguments: call.function.arguments.clone(),
            })
            .collect();
    }
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall { id, name, args, .. } | ContentBlock::RemoteToolCall { id, name, args, .. } => {
                Some(PastCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: args.to_string(),
                })
            }
            _ => None,
        })
        .collect()
}

/// A tool result's output as the text the provider is shown: a string as it is, anything else
/// as JSON.
pub fn result_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The tool results of a tool message: `(call id, text, is_error)`, in order.
pub fn results_of(message: &Message) -> Vec<(String, String, bool)> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => Some((call_id.clone(), result_text(output), *is_error)),
            _ => None,
        })
        .collect()
}
