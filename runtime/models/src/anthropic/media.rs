//! A user message's content blocks for the messages API, in block order, adjacent texts joined
//! into one `text` block (empty text left out: the API refuses it):
//!
//! - an image: `{"type": "image", "source": {"type": "base64", "media_type", "data"}}` (JPEG,
//!   PNG, GIF or WEBP, at most [`MAX_IMAGE_BYTES`], the API's limits) or `{"source": {"type":
//!   "url", "url"}}`;
//! - a document's extracted text: `{"type": "document", "source": {"type": "text",
//!   "media_type": "text/plain", "data"}}`;
//! - a file: a PDF as `{"type": "document", "source": {"type": "base64", "media_type":
//!   "application/pdf", "data"}}` or `{"source": {"type": "url", "url"}}`, inline `text/plain`
//!   (UTF-8) as a text source.
//!
//! Refused ([`FaultCode::Unsupported`]): audio and video (the API takes neither; the message
//! points at an audio block's transcript when it has one, which the author can send as text),
//! media by `file_id` (the Files API is a beta this adapter does not enable), an image of another
//! type or over the limit, a file that is neither PDF nor plain text.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use tenx_engine::wire::Message;

use crate::media::{FaultCode, MediaFault, Part, Piece, Source, user_pieces};

/// The most decoded bytes of one inline image the API takes (5 MB).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The image types the API takes.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The content blocks of user message `index`.
pub fn user_blocks(index: usize, message: &Message) -> Result<Vec<Value>, MediaFault> {
    let pieces = user_pieces(index, message)?;
    let mut blocks = Vec::new();
    let mut text = String::new();
    for piece in &pieces {
        if let Part::Text(part) = piece.part {
            text.push_str(part);
            continue;
        }
        if !text.is_empty() {
            blocks.push(json!({"type": "text", "text": std::mem::take(&mut text)}));
        }
        blocks.push(media_block(index, piece)?);
    }
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    Ok(blocks)
}

/// One block of something other than text.
fn media_block(index: usize, piece: &Piece<'_>) -> Result<Value, MediaFault> {
    let refuse = |reason: &str| MediaFault::new(index, piece, FaultCode::Unsupported, reason);
    let invalid = |reason: &str| MediaFault::new(index, piece, FaultCode::Invalid, reason);
    let by_file_id = "the messages API takes media inline or by URL here, not by `file_id` (its Files API is a beta this adapter does not enable)";
    match &piece.part {
        Part::DocumentText(text) => Ok(text_document(text)),
        Part::Image(media) => {
            let source = match &media.source {
                Source::Url(url) => json!({"type": "url", "url": url}),
                Source::Data { base64, bytes } => {
                    let mime = media
                        .mime_type
                        .as_deref()
                        .ok_or_else(|| invalid("an inline image needs a `mime_type`"))?;
                    if !IMAGE_TYPES.contains(&mime) {
                        return Err(refuse("the messages API takes JPEG, PNG, GIF or WEBP images only"));
                    }
                    if *bytes > MAX_IMAGE_BYTES {
                        return Err(refuse("the messages API takes inline images of at most 5 MiB"));
                    }
                    json!({"type": "base64", "media_type": mime, "data": base64})
                }
                Source::FileId(_) => return Err(refuse(by_file_id)),
            };
            Ok(json!({"type": "image", "source": source}))
        }
        Part::File(media) => {
            let mime = media.mime_type.as_deref();
            match &media.source {
                Source::Url(url) => match mime {
                    None | Some("application/pdf") => {
                        Ok(json!({"type": "document", "source": {"type": "url", "url": url}}))
                    }
                    Some(_) => Err(refuse("the messages API takes documents by URL as PDF only")),
                },
                Source::Data { base64, .. } => match mime {
                    Some("application/pdf") => Ok(json!({"type": "document", "source": {
                        "type": "base64", "media_type": "application/pdf", "data": base64,
                    }})),
                    Some("text/plain") => {
                        let bytes = STANDARD
                            .decode(base64)
                            .map_err(|_| invalid("its data is not standard, padded base64"))?;
                        let text =
                            String::from_utf8(bytes).map_err(|_| invalid("its `text/plain` data is not UTF-8"))?;
                        Ok(text_document(&text))
                    }
                    Some(_) => Err(refuse("the messages API takes PDF or plain-text documents only")),
                    None => Err(invalid("an inline document needs a `mime_type`")),
                },
                Source::FileId(_) => Err(refuse(by_file_id)),
            }
        }
        Part::Audio { transcript: true, .. } => Err(refuse(
            "the messages API takes no audio (send its `transcript` as a text block instead)",
        )),
        Part::Audio { .. } => Err(refuse("the messages API takes no audio")),
        Part::Video(_) => Err(refuse("the messages API takes no video")),
        Part::Text(_) => Err(invalid("text is not media")),
    }
}

/// A plain-text document block.
fn text_document(text: &str) -> Value {
    json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}})
}
