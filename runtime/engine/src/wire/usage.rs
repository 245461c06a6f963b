//! Token usage of one model call (reference-api.md §7, `TokenUsages`).

use serde::{Deserialize, Serialize};

/// Tokens one model call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens of the answer.
    pub completion_tokens: u64,
    /// Tokens of the request.
    pub prompt_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
    /// Reasoning tokens.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Prompt-cache writes.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Prompt-cache reads.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Image tokens.
    #[serde(default)]
    pub image_tokens: u64,
    /// Audio tokens.
    #[serde(default)]
    pub audio_tokens: u64,
}
