//! Media blocks against the local fake servers of both providers: the exact request JSON an
//! image (by URL and inline), a PDF, a document's extracted text and audio become, and the media
//! a provider cannot take failing the call with a coded error, before anything is sent, that
//! quotes neither the data nor the URL.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

mod common;

use common::{Client, ask, client, fixture};
use serde_json::{Value, json};
use tenx_artifact::Provider;
use tenx_engine::ports::{ModelError, ModelErrorKind};
use tenx_engine::wire::{ContentBlock, Message, Role};
use tenx_models::test_support::{Canned, FakeProvider};

/// `%PDF-1.4\n`.
const PDF: &str = "JVBERi0xLjQK";
/// A PNG signature.
const PNG: &str = "iVBORw0KGgo=";
/// The head of a WAV file.
const WAV: &str = "UklGRiQAAABXQVZF";
/// A signed URL: it must never show in an error.
const SIGNED: &str = "https://files.example.com/scan.png?X-Amz-Signature=SECRET-SIGNATURE";

/// A message of `role` with `blocks` (content blocks as the wire sends them).
fn message(role: Role, blocks: Value) -> Message {
    let mut message = Message::text("m-media", role, "", 0.0);
    message.content = serde_json::from_value::<Vec<ContentBlock>>(blocks).unwrap();
    message
}

/// A user message with `blocks`.
fn user_with(blocks: Value) -> Message {
    message(Role::User, blocks)
}

/// A fake of `provider` answering with text, and its client.
async fn served(provider: Provider) -> (FakeProvider, Client) {
    let answer = match provider {
        Provider::Anthropic => fixture("anthropic/text.sse"),
        _ => fixture("openai/text.sse"),
    };
    let fake = FakeProvider::start([Canned::sse(answer, 64)]).await.unwrap();
    let client = client(provider, &fake, json!({}));
    (fake, client)
}

/// The `messages` sent for `conversation`.
async fn sent(provider: Provider, conversation: &[Message]) -> Value {
    let (fake, client) = served(provider).await;
    ask(&client, conversation).await.unwrap();
    fake.received()[0].json()["messages"].clone()
}

/// The error of a call with `conversation`, after checking that nothing was sent and that the
/// error quotes neither inline data nor the signed URL.
async fn refused(provider: Provider, conversation: &[Message]) -> ModelError {
    let (fake, client) = served(provider).await;
    let error = ask(&client, conversation).await.unwrap_err();
    assert!(fake.received().is_empty(), "a refused call sends nothing");
    assert_eq!(error.kind, ModelErrorKind::Refused);
    for secret in [PDF, PNG, WAV, "SECRET"] {
        assert!(!error.message.contains(secret), "{}", error.message);
    }
    error
}

#[tokio::test]
async fn openai_images_by_url_and_inline_become_image_url_parts() {
    let conversation = [user_with(json!([
        {"type": "text", "text": "What is in "},
        {"type": "text", "text": "these pictures?"},
        {"type": "image", "media": {"kind": "url", "url": "https://example.com/cat.png", "detail": "high"}},
        {"type": "image", "media": {"kind": "data", "data_base64": PNG, "mime_type": "image/png"}, "alt_text": "a dog"},
        {"type": "data", "mime_type": "image/webp", "data_base64": PNG},
        {"type": "text", "text": "Answer briefly."},
    ]))];
    assert_eq!(
        sent(Provider::Openai, &conversation).await,
        json!([
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": [
                {"type": "text", "text": "What is in these pictures?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}},
                {"type": "image_url", "image_url": {"url": format!("data:image/webp;base64,{PNG}")}},
                {"type": "text", "text": "Answer briefly."},
            ]},
        ])
    );
}

#[tokio::test]
async fn openai_documents_become_file_parts_and_extracted_text_stays_text() {
    let conversation = [
        user_with(json!([
            {"type": "text", "text": "Summarise the invoice. "},
            {"type": "document", "media": {"kind": "data", "data_base64": PDF, "mime_type": "application/pdf", "filename": "invoice.pdf"}},
            {"type": "document", "media": {"url": format!("data:application/pdf;base64,{PDF}")}},
            {"type": "document", "media": {"kind": "file_id", "file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
            {"type": "document", "text": "Terms: net 30.", "media": {"kind": "url", "url": "https://example.com/terms.pdf"}},
        ])),
        // Text and documents' extracted text only: the plain string, as before.
        user_with(json!([
            {"type": "text", "text": "And these terms: "},
            {"type": "document", "text": "Refunds within 14 days."},
        ])),
    ];
    assert_eq!(
        sent(Provider::Openai, &conversation).await,
        json!([
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": [
                {"type": "text", "text": "Summarise the invoice. "},
                {"type": "file", "file": {"file_data": format!("data:application/pdf;base64,{PDF}"), "filename": "invoice.pdf"}},
                {"type": "file", "file": {"file_data": format!("data:application/pdf;base64,{PDF}"), "filename": "document.pdf"}},
                {"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
                {"type": "text", "text": "Terms: net 30."},
            ]},
            {"role": "user", "content": "And these terms: Refunds within 14 days."},
        ])
    );
}

#[tokio::test]
async fn openai_inline_audio_becomes_input_audio() {
    let conversation = [user_with(json!([
        {"type": "audio", "media": {"data_base64": WAV, "mime_type": "audio/wav"}, "sample_rate": 16000},
        {"type": "data", "mime_type": "audio/mpeg", "data_base64": WAV},
        {"type": "text", "text": "Transcribe both."},
    ]))];
    assert_eq!(
        sent(Provider::Openai, &conversation).await[1],
        json!({"role": "user", "content": [
            {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
            {"type": "input_audio", "input_audio": {"data": WAV, "format": "mp3"}},
            {"type": "text", "text": "Transcribe both."},
        ]})
    );
}

#[tokio::test]
async fn openai_refuses_what_chat_completions_cannot_take() {
    let prefix = "provider `openai`, model `gpt-4o-mini`: cannot send the";
    let cases = [
        (
            json!([{"type": "text", "text": "Listen."}, {"type": "audio", "media": {"kind": "url", "url": "https://example.com/a.wav?X-Amz-Signature=SECRET"}}]),
            "`audio` block (message 1, block 2; code `media_unsupported`): chat completions takes audio only inline (`input_audio` has no URL or file form): send its `data_base64`",
        ),
        (
            json!([{"type": "audio", "media": {"data_base64": WAV, "mime_type": "audio/ogg"}}]),
            "`audio` block (message 1, block 1; code `media_unsupported`): chat completions takes `wav` or `mp3` audio only",
        ),
        (
            json!([{"type": "video", "media": {"url": "https://example.com/clip.mp4"}}]),
            "`video` block (message 1, block 1; code `media_unsupported`): chat completions takes no video",
        ),
        (
            json!([{"type": "image", "media": {"file_id": "file-abc"}}]),
            "`image` block (message 1, block 1; code `media_unsupported`): chat completions takes an image by URL or inline data, not by `file_id`",
        ),
        (
            json!([{"type": "document", "media": {"url": SIGNED}}]),
            "`document` block (message 1, block 1; code `media_unsupported`): chat completions takes a file inline or by `file_id`, not by URL",
        ),
        (
            json!([{"type": "image", "media": {"data_base64": PNG}}]),
            "`image` block (message 1, block 1; code `media_invalid`): an inline image needs a `mime_type`",
        ),
        (
            json!([{"type": "image", "media": {"url": SIGNED.replace("https", "ftp")}}]),
            "`image` block (message 1, block 1; code `media_invalid`): its `url` is not an http(s) or base64 `data:` URL",
        ),
        (
            json!([{"type": "data", "mime_type": "image/png", "data_base64": "SECRET*not*base64"}]),
            "`data` block (message 1, block 1; code `media_invalid`): its data is not standard, padded base64",
        ),
    ];
    for (blocks, reason) in cases {
        let error = refused(Provider::Openai, &[user_with(blocks)]).await;
        assert_eq!(error.message, format!("{prefix} {reason}"));
    }
}

#[tokio::test]
async fn media_outside_a_user_message_is_refused_by_both_providers() {
    let conversation = [
        user_with(json!([{"type": "text", "text": "Draw a cat."}])),
        message(
            Role::Assistant,
            json!([{"type": "image", "media": {"url": "https://example.com/cat.png"}}]),
        ),
    ];
    for (provider, model) in [
        (Provider::Openai, "gpt-4o-mini"),
        (Provider::Anthropic, "claude-sonnet-4-5"),
    ] {
        let error = refused(provider, &conversation).await;
        assert_eq!(
            error.message,
            format!(
                "provider `{}`, model `{model}`: cannot send the `image` block (message 2, block 1; code `media_unsupported`): only user messages carry media, and this is a `assistant` message",
                if provider == Provider::Openai {
                    "openai"
                } else {
                    "anthropic"
                }
            )
        );
    }
}

#[tokio::test]
async fn anthropic_images_become_image_blocks_by_base64_or_url() {
    let conversation = [user_with(json!([
        {"type": "image", "media": {"url": "https://example.com/cat.png"}},
        {"type": "image", "media": {"data_base64": PNG, "mime_type": "image/png"}},
        {"type": "image", "media": {"url": "data:image/gif;base64,R0lGODlh"}},
        {"type": "text", "text": "What is in these pictures?"},
    ]))];
    assert_eq!(
        sent(Provider::Anthropic, &conversation).await,
        json!([{"role": "user", "content": [
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGODlh"}},
            {"type": "text", "text": "What is in these pictures?"},
        ]}])
    );
}

#[tokio::test]
async fn anthropic_documents_become_document_blocks() {
    let conversation = [user_with(json!([
        {"type": "text", "text": "Compare these."},
        {"type": "document", "media": {"data_base64": PDF, "mime_type": "application/pdf", "filename": "invoice.pdf"}},
        {"type": "document", "media": {"kind": "url", "url": "https://example.com/terms.pdf"}},
        {"type": "document", "text": "Refunds within 14 days.", "media": {"url": "https://example.com/policy.pdf"}},
        {"type": "data", "mime_type": "text/plain; charset=utf-8", "data_base64": "aGVsbG8gd29ybGQ="},
    ]))];
    assert_eq!(
        sent(Provider::Anthropic, &conversation).await,
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Compare these."},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
            {"type": "document", "source": {"type": "url", "url": "https://example.com/terms.pdf"}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Refunds within 14 days."}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hello world"}},
        ]}])
    );
}

#[tokio::test]
async fn anthropic_refuses_audio_video_file_ids_and_unsupported_types() {
    let prefix = "provider `anthropic`, model `claude-sonnet-4-5`: cannot send the";
    let cases = [
        (
            json!([{"type": "audio", "media": {"data_base64": WAV, "mime_type": "audio/wav"}}]),
            "`audio` block (message 1, block 1; code `media_unsupported`): the messages API takes no audio",
        ),
        (
            json!([{"type": "text", "text": "Hear this."}, {"type": "audio", "media": {"url": SIGNED}, "transcript": "hello"}]),
            "`audio` block (message 1, block 2; code `media_unsupported`): the messages API takes no audio (send its `transcript` as a text block instead)",
        ),
        (
            json!([{"type": "data", "mime_type": "video/mp4", "data_base64": PNG}]),
            "`data` block (message 1, block 1; code `media_unsupported`): the messages API takes no video",
        ),
        (
            json!([{"type": "document", "media": {"kind": "file_id", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}}]),
            "`document` block (message 1, block 1; code `media_unsupported`): the messages API takes media inline or by URL here, not by `file_id` (its Files API is a beta this adapter does not enable)",
        ),
        (
            json!([{"type": "image", "media": {"data_base64": PNG, "mime_type": "image/bmp"}}]),
            "`image` block (message 1, block 1; code `media_unsupported`): the messages API takes JPEG, PNG, GIF or WEBP images only",
        ),
        (
            json!([{"type": "document", "media": {"data_base64": PDF, "mime_type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}}]),
            "`document` block (message 1, block 1; code `media_unsupported`): the messages API takes PDF or plain-text documents only",
        ),
        (
            json!([{"type": "data", "mime_type": "text/plain", "data_base64": "/w=="}]),
            "`data` block (message 1, block 1; code `media_invalid`): its `text/plain` data is not UTF-8",
        ),
        (
            json!([{"type": "document"}]),
            "`document` block (message 1, block 1; code `media_invalid`): it has neither extracted `text` nor `media`",
        ),
    ];
    for (blocks, reason) in cases {
        let error = refused(Provider::Anthropic, &[user_with(blocks)]).await;
        assert_eq!(error.message, format!("{prefix} {reason}"));
    }
}

#[tokio::test]
async fn anthropic_refuses_an_inline_image_over_five_mib() {
    // 5 MiB + 3 bytes of zeros.
    let big = "A".repeat((5 * 1024 * 1024 / 3 + 1) * 4);
    let error = refused(
        Provider::Anthropic,
        &[user_with(
            json!([{"type": "image", "media": {"data_base64": big, "mime_type": "image/png"}}]),
        )],
    )
    .await;
    assert_eq!(
        error.message,
        "provider `anthropic`, model `claude-sonnet-4-5`: cannot send the `image` block (message 1, block 1; code `media_unsupported`): the messages API takes inline images of at most 5 MiB"
    );
}
