//! A whole (not streamed) message: its `content` blocks, `stop_reason` and `usage`.

use serde::Deserialize;
use serde_json::Value;
use tenx_engine::ports::{DeltaSink, ModelError, ModelReply};

use super::parts::{Block, Parts, Usage};
use crate::failure::Caller;
use crate::output::OutputShape;

/// A message.
#[derive(Deserialize)]
struct Answer {
    content: Vec<Content>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

/// A content block.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Content {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    #[serde(other)]
    Other,
}

/// The reply of a whole message's body; its text goes to `deltas` as one piece.
pub fn read(
    caller: &Caller,
    body: &[u8],
    output: Option<&(String, OutputShape)>,
    deltas: &mut dyn DeltaSink,
) -> Result<ModelReply, ModelError> {
    let answer: Answer = serde_json::from_slice(body).map_err(|_| caller.malformed("the answer is not a message"))?;
    let mut parts = Parts {
        usage: answer.usage.map(Usage::to_tokens),
        stop_reason: answer.stop_reason,
        ..Parts::default()
    };
    for (index, content) in answer.content.into_iter().enumerate() {
        let block = match content {
            Content::Text { text } => {
                if !text.is_empty() {
                    deltas.text(&text);
                }
                Block::Text(text)
            }
            Content::ToolUse { id, name, input } => Block::ToolUse {
                id,
                name,
                input: input.to_string(),
            },
            Content::Other => Block::Other,
        };
        parts.blocks.insert(u64::try_from(index).unwrap_or(u64::MAX), block);
    }
    parts.into_reply(caller, output, deltas)
}
