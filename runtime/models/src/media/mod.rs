//! Media in the conversation, as both providers read it: a user message's blocks as
//! [`Piece`]s (text, a document's extracted text, an image, audio, video, a file), each media
//! reference checked ([`reference`]); and the [`MediaFault`] a call fails with when a block cannot
//! be sent, so that no media is ever dropped without a word.
//!
//! Which block is what: `text` is text; a `document` with (non-empty) extracted `text` is that
//! text (the reference server's `document_handling: extract_text`), else its `media` is a file;
//! `image`, `audio` and `video` are their media; a `data` block is read by its `mime_type`
//! (`image/*`, `audio/*`, `video/*`, anything else a file), its `data_base64` inline or its
//! `media`. Media travel only in user messages: a media block in an assistant, system or tool
//! message fails the call. Other blocks (reasoning, annotations, errors, tool calls) are not
//! content a provider takes and are left out, as before.

pub mod reference;

use tenx_engine::ports::{ModelError, ModelErrorKind};
use tenx_engine::wire::{ContentBlock, Message, Role};

use crate::failure::Caller;
pub use reference::{MAX_MEDIA_BYTES, MediaRef, Source};

/// What a user message's block is sent as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part<'a> {
    /// Text.
    Text(&'a str),
    /// A document's extracted text.
    DocumentText(&'a str),
    /// An image.
    Image(MediaRef),
    /// Audio; `transcript` when the block has one (the refusals point at it).
    Audio {
        /// The media.
        media: MediaRef,
        /// Whether the block carries a transcript.
        transcript: bool,
    },
    /// Video.
    Video(MediaRef),
    /// A file (a document's media, or data of another type).
    File(MediaRef),
}

/// One block of a user message, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The block's index in its message.
    pub block: usize,
    /// The block's `type` (`image`, `data`, …), for errors.
    pub kind: &'static str,
    /// What it is sent as.
    pub part: Part<'a>,
}

/// Why a media block was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultCode {
    /// The provider's API cannot take it (`media_unsupported`).
    Unsupported,
    /// The block or its reference is malformed (`media_invalid`).
    Invalid,
}

impl FaultCode {
    /// The code as the error message shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unsupported => "media_unsupported",
            Self::Invalid => "media_invalid",
        }
    }
}

/// A media block that could not be sent: where it is, why, and a reason that never quotes the
/// media or its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaFault {
    /// The message's index in the conversation.
    pub message: usize,
    /// The block's index in the message.
    pub block: usize,
    /// The block's `type`.
    pub kind: &'static str,
    /// Why.
    pub code: FaultCode,
    /// The reason, lowercase, no final period.
    pub reason: String,
}

impl MediaFault {
    /// A fault of the block at `block` of message `message`.
    pub fn new(message: usize, piece: &Piece<'_>, code: FaultCode, reason: impl Into<String>) -> Self {
        Self {
            message,
            block: piece.block,
            kind: piece.kind,
            code,
            reason: reason.into(),
        }
    }

    /// The call's error (`Refused`: sending it again cannot help): "provider `anthropic`, model
    /// `claude-sonnet-4-5`: cannot send the `audio` block (message 1, block 2; code
    /// `media_unsupported`): the messages API takes no audio". Positions count from 1.
    pub fn to_error(&self, caller: &Caller) -> ModelError {
        caller.error(
            ModelErrorKind::Refused,
            format!(
                "cannot send the `{}` block (message {}, block {}; code `{}`): {}",
                self.kind,
                self.message.saturating_add(1),
                self.block.saturating_add(1),
                self.code.as_str(),
                self.reason
            ),
        )
    }
}

/// The blocks of user message `index` as pieces, every media reference checked.
pub fn user_pieces(index: usize, message: &Message) -> Result<Vec<Piece<'_>>, MediaFault> {
    let mut pieces = Vec::with_capacity(message.content.len());
    for (block, content) in message.content.iter().enumerate() {
        let kind = kind_of(content);
        let invalid = |reason: String| MediaFault {
            message: index,
            block,
            kind,
            code: FaultCode::Invalid,
            reason,
        };
        let part = match content {
            ContentBlock::Text { text, .. } => Part::Text(text),
            ContentBlock::Document { text: Some(text), .. } if !text.is_empty() => Part::DocumentText(text),
            ContentBlock::Document { media: Some(media), .. } => {
                Part::File(MediaRef::read(media, None).map_err(invalid)?)
            }
            ContentBlock::Document { .. } => {
                return Err(invalid("it has neither extracted `text` nor `media`".into()));
            }
            ContentBlock::Image { media, .. } => Part::Image(MediaRef::read(media, None).map_err(invalid)?),
            ContentBlock::Audio { media, transcript, .. } => Part::Audio {
                media: MediaRef::read(media, None).map_err(invalid)?,
                transcript: transcript.as_deref().is_some_and(|text| !text.is_empty()),
            },
            ContentBlock::Video { media, .. } => Part::Video(MediaRef::read(media, None).map_err(invalid)?),
            ContentBlock::Data {
                mime_type,
                data_base64,
                media,
            } => {
                let read = match (data_base64, media) {
                    (Some(data), _) => MediaRef::inline(data, mime_type),
                    (None, Some(media)) => MediaRef::read(media, Some(mime_type)),
                    (None, None) => Err("it has neither `data_base64` nor `media`".into()),
                };
                let media = read.map_err(invalid)?;
                match media.top_type() {
                    Some("image") => Part::Image(media),
                    Some("audio") => Part::Audio {
                        media,
                        transcript: false,
                    },
                    Some("video") => Part::Video(media),
                    _ => Part::File(media),
                }
            }
            _ => continue,
        };
        pieces.push(Piece { block, kind, part });
    }
    Ok(pieces)
}

/// Fails when message `index`, not a user message, holds media (a document with extracted text
/// is its text, and is sent as text).
pub fn no_media_outside_user(index: usize, message: &Message) -> Result<(), MediaFault> {
    if message.role == Role::User {
        return Ok(());
    }
    for (block, content) in message.content.iter().enumerate() {
        let media = match content {
            ContentBlock::Image { .. }
            | ContentBlock::Audio { .. }
            | ContentBlock::Video { .. }
            | ContentBlock::Data { .. } => true,
            ContentBlock::Document { text, .. } => text.as_deref().is_none_or(str::is_empty),
            _ => false,
        };
        if media {
            return Err(MediaFault {
                message: index,
                block,
                kind: kind_of(content),
                code: FaultCode::Unsupported,
                reason: format!(
                    "only user messages carry media, and this is a `{}` message",
                    role_name(message.role)
                ),
            });
        }
    }
    Ok(())
}

/// A block's `type`.
fn kind_of(block: &ContentBlock) -> &'static str {
    match block {
        ContentBlock::Text { .. } => "text",
        ContentBlock::Image { .. } => "image",
        ContentBlock::Audio { .. } => "audio",
        ContentBlock::Video { .. } => "video",
        ContentBlock::Document { .. } => "document",
        ContentBlock::Data { .. } => "data",
        ContentBlock::ToolCall { .. } => "tool_call",
        ContentBlock::RemoteToolCall { .. } => "remote_tool_call",
        ContentBlock::ToolResult { .. } => "tool_result",
        ContentBlock::Reasoning { .. } => "reasoning",
        ContentBlock::Annotation { .. } => "annotation",
        ContentBlock::Error { .. } => "error",
    }
}

/// A role's wire name.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
        Role::Tool => "tool",
    }
}
