//! Content blocks (reference-api.md §7), discriminated by `type`. Media blocks keep their media
//! reference as given; the engine reads only text, tool calls and tool results.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One block of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Annotations (citations), passed through.
        #[serde(default)]
        annotations: Vec<Value>,
    },
    /// An image.
    Image {
        /// The media reference.
        media: Value,
        /// Alternative text.
        #[serde(default)]
        alt_text: Option<String>,
        /// A bounding box.
        #[serde(default)]
        bbox: Option<Value>,
    },
    /// Audio.
    Audio {
        /// The media reference.
        media: Value,
        /// A transcript.
        #[serde(default)]
        transcript: Option<String>,
        /// Samples per second.
        #[serde(default)]
        sample_rate: Option<u64>,
        /// Channels.
        #[serde(default)]
        channels: Option<u64>,
    },
    /// Video.
    Video {
        /// The media reference.
        media: Value,
        /// A thumbnail reference.
        #[serde(default)]
        thumbnail: Option<Value>,
    },
    /// A document.
    Document {
        /// The media reference.
        #[serde(default)]
        media: Option<Value>,
        /// Extracted text.
        #[serde(default)]
        text: Option<String>,
        /// Pages.
        #[serde(default)]
        pages: Option<Value>,
        /// An excerpt.
        #[serde(default)]
        excerpt: Option<String>,
    },
    /// Raw data.
    Data {
        /// The MIME type.
        mime_type: String,
        /// Base64 data.
        #[serde(default)]
        data_base64: Option<String>,
        /// The media reference.
        #[serde(default)]
        media: Option<Value>,
    },
    /// A tool call the model made (also carried in the message's `tools_calls`).
    ToolCall {
        /// The call id.
        id: String,
        /// The model-facing tool name.
        name: String,
        /// The arguments, as an object.
        args: Value,
        /// `null` for a server tool.
        #[serde(default)]
        tool_type: Option<String>,
    },
    /// A call of a `remote` tool that the client must run and answer.
    RemoteToolCall {
        /// The call id.
        id: String,
        /// The model-facing tool name.
        name: String,
        /// The arguments.
        args: Value,
        /// Always `"remote"`.
        tool_type: String,
    },
    /// The result of a tool call.
    ToolResult {
        /// The call answered.
        call_id: String,
        /// The result.
        output: Value,
        /// Whether the call failed.
        #[serde(default)]
        is_error: bool,
        /// `completed`, `failed`, or `null`.
        #[serde(default)]
        status: Option<ToolResultStatus>,
    },
    /// Model reasoning.
    Reasoning {
        /// A summary.
        summary: String,
        /// Details.
        #[serde(default)]
        details: Option<Value>,
    },
    /// An annotation.
    Annotation {
        /// `citation` or `note`.
        kind: String,
        /// References.
        #[serde(default)]
        refs: Vec<Value>,
        /// Spans.
        #[serde(default)]
        spans: Option<Value>,
    },
    /// An error shown in the conversation.
    Error {
        /// The message.
        message: String,
        /// A code.
        #[serde(default)]
        code: Option<String>,
        /// Extra data.
        #[serde(default)]
        data: Option<Map<String, Value>>,
    },
}

impl ContentBlock {
    /// A text block without annotations.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            annotations: Vec::new(),
        }
    }

    /// Whether the block carries a tool call (which only the model may make).
    pub fn is_tool_call(&self) -> bool {
        matches!(self, Self::ToolCall { .. } | Self::RemoteToolCall { .. })
    }
}

/// The status of a [`ContentBlock::ToolResult`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolResultStatus {
    /// The tool ran and returned.
    Completed,
    /// The call failed or was refused.
    Failed,
}
