//! An answer's content blocks, from a stream or a whole message, and how they become the
//! engine's [`ModelReply`]: the text blocks joined, the `tool_use` blocks as tool calls in block
//! order, the usage; a call of the output tool is the structured answer, as text.

use std::collections::BTreeMap;

use serde::Deserialize;
use tenx_engine::ports::{DeltaSink, ModelError, ModelErrorKind, ModelReply, ModelToolCall};
use tenx_engine::wire::TokenUsage;

use crate::failure::Caller;
use crate::output::OutputShape;

/// One content block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// Text.
    Text(String),
    /// A tool call: its id, name and input as JSON text (gathered from `input_json_delta`).
    ToolUse {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The input, JSON text.
        input: String,
    },
    /// Anything else (thinking, a server tool's result): not part of the reply.
    Other,
}

/// Anthropic's `usage` (every field optional: a stream sends it in parts).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Usage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl Usage {
    /// Takes every count `later` has (a stream's `message_delta` carries the final counts).
    pub fn update(&mut self, later: Self) {
        self.input_tokens = later.input_tokens.or(self.input_tokens);
        self.output_tokens = later.output_tokens.or(self.output_tokens);
        self.cache_creation_input_tokens = later.cache_creation_input_tokens.or(self.cache_creation_input_tokens);
        self.cache_read_input_tokens = later.cache_read_input_tokens.or(self.cache_read_input_tokens);
    }

    /// The engine's usage record: the prompt counts every input token (fresh, written to the
    /// cache and read from it), as OpenAI's `prompt_tokens` does.
    pub fn to_tokens(self) -> TokenUsage {
        let created = self.cache_creation_input_tokens.unwrap_or(0);
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let prompt = self
            .input_tokens
            .unwrap_or(0)
            .saturating_add(created)
            .saturating_add(read);
        let completion = self.output_tokens.unwrap_or(0);
        TokenUsage {
            completion_tokens: completion,
            prompt_tokens: prompt,
            total_tokens: prompt.saturating_add(completion),
            cache_creation_input_tokens: created,
            cache_read_input_tokens: read,
            ..TokenUsage::default()
        }
    }
}

/// An answer's parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts {
    /// Content blocks by index.
    pub blocks: BTreeMap<u64, Block>,
    /// Tokens used.
    pub usage: Option<TokenUsage>,
    /// Why the answer ended (`end_turn`, `tool_use`, `max_tokens`, `refusal`, …).
    pub stop_reason: Option<String>,
}

impl Parts {
    /// The reply. `output` is the output tool's name and the schema's shape: a call of it is
    /// the answer (sent to `deltas` whole), unless the model also called the agent's tools
    /// (then those run first and the model answers later).
    pub fn into_reply(
        self,
        caller: &Caller,
        output: Option<&(String, OutputShape)>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError> {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut answer = None;
        for block in self.blocks.into_values() {
            match block {
                Block::Text(piece) => text.push_str(&piece),
                Block::ToolUse { id, name, input } => {
                    let input = if input.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        input
                    };
                    match output {
                        Some((tool, shape)) if *tool == name => answer = Some(shape.answer(&input)),
                        _ => tool_calls.push(ModelToolCall {
                            id,
                            name,
                            arguments: input,
                        }),
                    }
                }
                Block::Other => {}
            }
        }
        if let Some(answer) = answer.filter(|_| tool_calls.is_empty()) {
            deltas.text(&answer);
            text = answer;
        }
        if text.is_empty() && tool_calls.is_empty() && self.stop_reason.as_deref() == Some("refusal") {
            return Err(caller.error(ModelErrorKind::Refused, "the model declined to answer (`refusal`)"));
        }
        Ok(ModelReply {
            text,
            tool_calls,
            usage: self.usage,
            cursor: None,
        })
    }
}
