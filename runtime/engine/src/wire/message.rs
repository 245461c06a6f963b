//! A message of a thread's conversation, as the standard API serialises it: every field is
//! always present (reference-api.md §4, "Message JSON").

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContentBlock, TokenUsage};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person using the graph (the only role a client may send).
    User,
    /// The model.
    Assistant,
    /// A system instruction.
    System,
    /// A tool result.
    Tool,
}

/// One message: a role and content blocks, plus the metadata the API returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// The message's id (kept as given for client messages; generated otherwise).
    pub message_id: String,
    /// Who wrote it.
    pub role: Role,
    /// The content, always a list of blocks.
    pub content: Vec<ContentBlock>,
    /// Whether this is a streaming delta (never stored).
    #[serde(default)]
    pub delta: bool,
    /// The model's tool calls in OpenAI form (`arguments` is a JSON string), or `null`.
    #[serde(default)]
    pub tools_calls: Option<Vec<ToolCall>>,
    /// The model's reasoning text, when a provider returns one.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// Seconds since the Unix epoch, as a float.
    #[serde(default)]
    pub timestamp: f64,
    /// Free-form metadata: `allowed_tools` on assistant messages, `function_name`,
    /// `function_argument` and `tool_call_id` on tool results, `node` and others.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// Token usage of the model call that produced the message.
    #[serde(default)]
    pub usages: Option<TokenUsage>,
    /// The provider's raw answer (never stored by tenx; always `null`).
    #[serde(default)]
    pub raw: Option<Value>,
    /// A structured final answer, parsed and validated against the agent's `output` schema.
    #[serde(default)]
    pub parsed_content: Option<Value>,
}

impl Message {
    /// A message with one text block and empty metadata.
    pub fn text(message_id: impl Into<String>, role: Role, text: impl Into<String>, timestamp: f64) -> Self {
        Self {
            message_id: message_id.into(),
            role,
            content: vec![ContentBlock::text(text)],
            delta: false,
            tools_calls: None,
            reasoning: None,
            timestamp,
            metadata: Map::new(),
            usages: None,
            raw: None,
            parsed_content: None,
        }
    }

    /// The message's text: its text blocks and tool-result outputs, in order, concatenated
    /// (non-string outputs JSON-encoded), as the reference's `message.text()`.
    pub fn text_content(&self) -> String {
        self.text_cow().into_owned()
    }

    /// [`Message::text_content`], borrowed when the message's text is one block (most are), so
    /// reading it allocates nothing.
    pub fn text_cow(&self) -> Cow<'_, str> {
        let mut texts = self
            .content
            .iter()
            .filter(|block| matches!(block, ContentBlock::Text { .. } | ContentBlock::ToolResult { .. }));
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (
                Some(
                    ContentBlock::Text { text, .. }
                    | ContentBlock::ToolResult {
                        output: Value::String(text),
                        ..
                    },
                ),
                None,
            ) => Cow::Borrowed(text),
            _ => Cow::Owned(self.concatenated_text()),
        }
    }

    /// Every text block and tool-result output, concatenated.
    fn concatenated_text(&self) -> String {
        let mut text = String::new();
        for block in &self.content {
            match block {
                ContentBlock::Text { text: part, .. } => text.push_str(part),
                ContentBlock::ToolResult { output, .. } => match output {
                    Value::String(part) => text.push_str(part),
                    other => text.push_str(&other.to_string()),
                },
                _ => {}
            }
        }
        text
    }
}

/// A tool call in OpenAI form, as carried in a message's `tools_calls`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, unique within the thread.
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function called.
    pub function: FunctionCall,
}

/// The function part of a [`ToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The model-facing tool name the model called.
    pub name: String,
    /// The arguments, as a JSON **string** (as the model wrote them).
    pub arguments: String,
}
