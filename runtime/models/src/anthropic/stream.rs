//! A streamed message reassembled from its events: `message_start` (the input usage),
//! `content_block_start` (a text or `tool_use` block at an index), `content_block_delta`
//! (`text_delta` pieces, forwarded to the [`DeltaSink`] at once; `input_json_delta` pieces of a
//! tool's input, joined), `content_block_stop`, `message_delta` (the stop reason and final
//! usage), `message_stop`, `ping`, and `error` (an overload or other failure mid-stream).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use tenx_engine::ports::{DeltaSink, ModelError, ModelErrorKind, ModelReply};

use super::parts::{Block, Parts, Usage};
use crate::call::Assembler;
use crate::failure::{Caller, error_identifiers};
use crate::output::OutputShape;

/// One event's data, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event<'a> {
    MessageStart {
        message: Started,
    },
    ContentBlockStart {
        index: u64,
        content_block: StartedBlock,
    },
    ContentBlockDelta {
        index: u64,
        #[serde(borrow)]
        delta: BlockDelta<'a>,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: Stopped,
        #[serde(default)]
        usage: Option<Usage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

/// `message_start.message`.
#[derive(Deserialize)]
struct Started {
    #[serde(default)]
    usage: Option<Usage>,
}

/// `content_block_start.content_block`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartedBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    #[serde(other)]
    Other,
}

/// `content_block_delta.delta`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta<'a> {
    TextDelta {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    InputJsonDelta {
        #[serde(borrow)]
        partial_json: Cow<'a, str>,
    },
    #[serde(other)]
    Other,
}

/// `message_delta.delta`.
#[derive(Deserialize)]
struct Stopped {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Gathers a streamed message.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    parts: Parts,
    usage: Usage,
    stopped: bool,
}

impl StreamAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Assembler for StreamAssembler {
    type Output = (String, OutputShape);

    /// Whether `message_stop` was seen.
    fn is_done(&self) -> bool {
        self.stopped
    }

    /// Reads one event's data.
    fn push(&mut self, caller: &Caller, data: &str, deltas: &mut dyn DeltaSink) -> Result<(), ModelError> {
        let event: Event<'_> =
            serde_json::from_str(data).map_err(|_| caller.malformed("a stream event is not valid JSON"))?;
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.update(usage);
                }
            }
            Event::ContentBlockStart { index, content_block } => {
                let block = match content_block {
                    StartedBlock::Text { text } => {
                        if !text.is_empty() {
                            deltas.text(&text);
                        }
                        Block::Text(text)
                    }
                    StartedBlock::ToolUse { id, name } => Block::ToolUse {
                        id,
                        name,
                        input: String::new(),
                    },
                    StartedBlock::Other => Block::Other,
                };
                self.parts.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => match (self.parts.blocks.get_mut(&index), delta) {
                (Some(Block::Text(text)), BlockDelta::TextDelta { text: piece }) => {
                    deltas.text(&piece);
                    text.push_str(&piece);
                }
                (Some(Block::ToolUse { input, .. }), BlockDelta::InputJsonDelta { partial_json }) => {
                    input.push_str(&partial_json);
                }
                (None, BlockDelta::TextDelta { .. } | BlockDelta::InputJsonDelta { .. }) => {
                    return Err(caller.malformed(format!("a delta for block {index}, which never started")));
                }
                _ => {}
            },
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.parts.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    self.usage.update(usage);
                }
            }
            Event::MessageStop {} => self.stopped = true,
            Event::Error { error } => {
                let kind = match error.get("type").and_then(Value::as_str) {
                    Some("rate_limit_error") => ModelErrorKind::RateLimited { retry_after_ms: None },
                    Some("overloaded_error" | "api_error") => ModelErrorKind::Server,
                    _ => ModelErrorKind::Refused,
                };
                let detail = error_identifiers(serde_json::json!({ "error": error }).to_string().as_bytes());
                return Err(caller.error(
                    kind,
                    match detail {
                        Some(detail) => format!("the stream reported an error ({detail})"),
                        None => "the stream reported an error".to_owned(),
                    },
                ));
            }
            Event::ContentBlockStop {} | Event::Ping {} | Event::Unknown => {}
        }
        Ok(())
    }

    /// The whole answer, once the stream ended. A stream that ended before `message_stop` and
    /// without a stop reason was cut: a connection error.
    fn finish(
        mut self,
        caller: &Caller,
        output: Option<&Self::Output>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError> {
        if !self.stopped && self.parts.stop_reason.is_none() {
            return Err(caller.error(
                ModelErrorKind::Connection,
                "the stream ended before the answer was complete",
            ));
        }
        self.parts.usage = Some(self.usage.to_tokens());
        self.parts.into_reply(caller, output, deltas)
    }
}
