//! The text of a message that text validators read: every part of it a model could be shown,
//! in block order, joined by a newline (so that a pattern cannot be assembled across two
//! blocks without the newline between them).

use crate::wire::{ContentBlock, Message};

/// The message's text parts: text blocks, a document's text and excerpt, an image's alternative
/// text, an audio transcript, a tool result's output (a string as is, anything else as JSON), a
/// reasoning summary and an error message. Media references and raw data are not text.
pub(super) fn of(message: &Message) -> String {
    let mut parts: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text, .. } => parts.push(text.as_str().into()),
            ContentBlock::Document { text, excerpt, .. } => {
                parts.extend(text.as_deref().map(Into::into));
                parts.extend(excerpt.as_deref().map(Into::into));
            }
            ContentBlock::Image { alt_text, .. } => parts.extend(alt_text.as_deref().map(Into::into)),
            ContentBlock::Audio { transcript, .. } => parts.extend(transcript.as_deref().map(Into::into)),
            ContentBlock::ToolResult { output, .. } => match output {
                serde_json::Value::String(text) => parts.push(text.as_str().into()),
                other => parts.push(other.to_string().into()),
            },
            ContentBlock::Reasoning { summary, .. } => parts.push(summary.as_str().into()),
            ContentBlock::Error { message, .. } => parts.push(message.as_str().into()),
            ContentBlock::Video { .. }
            | ContentBlock::Data { .. }
            | ContentBlock::ToolCall { .. }
            | ContentBlock::RemoteToolCall { .. }
            | ContentBlock::Annotation { .. } => {}
        }
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::Role;

    #[test]
    fn every_textual_part_is_read_in_order() {
        let mut message = Message::text("m1", Role::User, "first", 0.0);
        message.content.push(ContentBlock::Document {
            media: None,
            text: Some("doc".into()),
            pages: None,
            excerpt: Some("excerpt".into()),
        });
        message.content.push(ContentBlock::Image {
            media: json!({"url": "https://example.com/a.png"}),
            alt_text: Some("alt".into()),
            bbox: None,
        });
        message.content.push(ContentBlock::ToolResult {
            call_id: "c1".into(),
            output: json!({"ok": true}),
            is_error: false,
            status: None,
        });
        message.content.push(ContentBlock::Data {
            mime_type: "application/octet-stream".into(),
            data_base64: Some("aWdub3Jl".into()),
            media: None,
        });
        assert_eq!(of(&message), "first\ndoc\nexcerpt\nalt\n{\"ok\":true}");
    }

    #[test]
    fn a_message_without_text_reads_empty() {
        let mut message = Message::text("m1", Role::User, "", 0.0);
        message.content.clear();
        assert_eq!(of(&message), "");
    }
}
