//! A user message's `content` for chat completions. A message of text only (text blocks and
//! documents' extracted text) is one string, the blocks' texts joined, as it always was; a
//! message with media is an array of parts, in block order, adjacent texts joined into one
//! `text` part:
//!
//! - an image: `{"type": "image_url", "image_url": {"url", "detail"?}}`, the url an http(s) URL or
//!   a `data:<mime>;base64,…` URL built from inline data (any `image/*` type: compatible servers
//!   take more than OpenAI's PNG, JPEG, WEBP and GIF);
//! - audio: `{"type": "input_audio", "input_audio": {"data", "format"}}`, inline only, `wav`
//!   (`audio/wav`, `audio/x-wav`, `audio/wave`, `audio/vnd.wave`) or `mp3` (`audio/mpeg`,
//!   `audio/mp3`);
//! - a file (a document's media, other data): `{"type": "file", "file": {"file_data":
//!   "data:<mime>;base64,…", "filename"}}` (the filename `document` plus the type's extension
//!   when the reference names none), or `{"file": {"file_id"}}` by the provider's file id.
//!
//! Refused ([`FaultCode::Unsupported`]): video (the API has no video input), audio by URL or
//! file id and audio of another format, an image by file id, a file by URL.

use serde_json::{Map, Value, json};
use tenx_engine::wire::Message;

use crate::media::{FaultCode, MediaFault, MediaRef, Part, Piece, Source, user_pieces};

/// The `content` of user message `index`.
pub fn user_content(index: usize, message: &Message) -> Result<Value, MediaFault> {
    let pieces = user_pieces(index, message)?;
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut media = false;
    for piece in &pieces {
        match &piece.part {
            Part::Text(part) | Part::DocumentText(part) => text.push_str(part),
            _ => {
                media = true;
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": std::mem::take(&mut text)}));
                }
                parts.push(media_part(index, piece)?);
            }
        }
    }
    if !media {
        return Ok(Value::String(text));
    }
    if !text.is_empty() {
        parts.push(json!({"type": "text", "text": text}));
    }
    Ok(Value::Array(parts))
}

/// One media part.
fn media_part(index: usize, piece: &Piece<'_>) -> Result<Value, MediaFault> {
    let refuse = |reason: &str| MediaFault::new(index, piece, FaultCode::Unsupported, reason);
    let invalid = |reason: &str| MediaFault::new(index, piece, FaultCode::Invalid, reason);
    match &piece.part {
        Part::Image(media) => {
            let url = match &media.source {
                Source::Url(url) => url.clone(),
                Source::Data { base64, .. } => match media.mime_type.as_deref() {
                    Some(mime) if mime.starts_with("image/") => format!("data:{mime};base64,{base64}"),
                    Some(_) => return Err(refuse("an inline image must have an `image/*` `mime_type`")),
                    None => return Err(invalid("an inline image needs a `mime_type`")),
                },
                Source::FileId(_) => {
                    return Err(refuse(
                        "chat completions takes an image by URL or inline data, not by `file_id`",
                    ));
                }
            };
            let mut image = Map::new();
            image.insert("url".into(), Value::String(url));
            if let Some(detail) = &media.detail {
                image.insert("detail".into(), json!(detail));
            }
            Ok(json!({"type": "image_url", "image_url": image}))
        }
        Part::Audio { media, .. } => {
            let Source::Data { base64, .. } = &media.source else {
                return Err(refuse(
                    "chat completions takes audio only inline (`input_audio` has no URL or file form): send its `data_base64`",
                ));
            };
            let format = match media.mime_type.as_deref() {
                Some("audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave") => "wav",
                Some("audio/mpeg" | "audio/mp3") => "mp3",
                Some(_) => return Err(refuse("chat completions takes `wav` or `mp3` audio only")),
                None => return Err(invalid("inline audio needs a `mime_type`")),
            };
            Ok(json!({"type": "input_audio", "input_audio": {"data": base64, "format": format}}))
        }
        Part::File(media) => match &media.source {
            Source::Data { base64, .. } => {
                let Some(mime) = media.mime_type.as_deref() else {
                    return Err(invalid("an inline file needs a `mime_type`"));
                };
                Ok(json!({"type": "file", "file": {
                    "file_data": format!("data:{mime};base64,{base64}"),
                    "filename": filename(media, mime),
                }}))
            }
            Source::FileId(id) => Ok(json!({"type": "file", "file": {"file_id": id}})),
            Source::Url(_) => Err(refuse(
                "chat completions takes a file inline or by `file_id`, not by URL",
            )),
        },
        Part::Video(_) => Err(refuse("chat completions takes no video")),
        Part::Text(_) | Part::DocumentText(_) => Err(invalid("text is not media")),
    }
}

/// The reference's filename, else `document` with the type's usual extension.
fn filename(media: &MediaRef, mime: &str) -> String {
    if let Some(name) = &media.filename {
        return name.clone();
    }
    let extension = match mime {
        "application/pdf" => ".pdf",
        "text/plain" => ".txt",
        "text/markdown" => ".md",
        "text/csv" => ".csv",
        "application/json" => ".json",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => ".docx",
        _ => "",
    };
    format!("document{extension}")
}
