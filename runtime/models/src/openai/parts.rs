//! An answer's parts as they are gathered, from a stream or a whole answer, and how they become
//! the engine's [`ModelReply`]: the text (or the refusal, as text, when there is no text), the
//! tool calls in index order, the usage.

use std::collections::BTreeMap;

use serde::Deserialize;
use tenx_engine::ports::{DeltaSink, ModelError, ModelErrorKind, ModelReply, ModelToolCall};
use tenx_engine::wire::TokenUsage;

use crate::failure::Caller;
use crate::output::OutputShape;

/// A tool call being gathered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartialCall {
    /// The call id.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments so far.
    pub arguments: String,
}

/// An answer's parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts {
    /// The text.
    pub text: String,
    /// The refusal text (OpenAI's `refusal`), if the model refused.
    pub refusal: String,
    /// Tool calls by their index.
    pub calls: BTreeMap<u64, PartialCall>,
    /// Tokens used.
    pub usage: Option<TokenUsage>,
    /// Why the answer ended (`stop`, `tool_calls`, `length`, `content_filter`).
    pub finish_reason: Option<String>,
}

/// OpenAI's `usage` (every field optional: compatible servers leave some out or send `null`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Default, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    audio_tokens: Option<u64>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Default, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
    #[serde(default)]
    audio_tokens: Option<u64>,
}

impl Usage {
    /// The engine's usage record.
    pub fn to_tokens(&self) -> TokenUsage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let completion = self.completion_tokens.unwrap_or(0);
        let prompt_details = self.prompt_tokens_details.clone().unwrap_or_default();
        let completion_details = self.completion_tokens_details.clone().unwrap_or_default();
        TokenUsage {
            completion_tokens: completion,
            prompt_tokens: prompt,
            total_tokens: self.total_tokens.unwrap_or(prompt.saturating_add(completion)),
            reasoning_tokens: completion_details.reasoning_tokens.unwrap_or(0),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: prompt_details.cached_tokens.unwrap_or(0),
            image_tokens: 0,
            audio_tokens: prompt_details
                .audio_tokens
                .unwrap_or(0)
                .saturating_add(completion_details.audio_tokens.unwrap_or(0)),
        }
    }
}

impl Parts {
    /// The reply. With an output schema and no tool call, the text is the answer as the engine
    /// checks it (unwrapped; then sent to `deltas` whole, as it was not streamed).
    pub fn into_reply(
        self,
        caller: &Caller,
        output: Option<&OutputShape>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(caller.malformed(format!("tool call {index} has no function name")));
            }
            tool_calls.push(ModelToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: if call.arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                },
            });
        }
        let mut text = if self.text.is_empty() { self.refusal } else { self.text };
        if text.is_empty() && tool_calls.is_empty() && self.finish_reason.as_deref() == Some("content_filter") {
            return Err(caller.error(
                ModelErrorKind::Refused,
                "the provider's content filter stopped the answer",
            ));
        }
        if let Some(shape) = output.filter(|shape| shape.wrapped)
            && tool_calls.is_empty()
        {
            text = shape.answer(&text);
            deltas.text(&text);
        }
        Ok(ModelReply {
            text,
            tool_calls,
            usage: self.usage,
            cursor: None,
        })
    }
}
