//! `provider = anthropic` against a local fake messages-API server replaying recorded answers:
//! what is sent (headers, system, grouped tool results, tools, the forced output tool,
//! `max_tokens`) and how streamed events, whole messages, failures and retries come back.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

mod common;

use common::{KEY, Pieces, ask, call, client, failure, fixture, long_conversation, request, shared, tools, user};
use serde_json::json;
use tenx_artifact::Provider;
use tenx_engine::ports::{ModelErrorKind, ModelToolCall};
use tenx_engine::wire::TokenUsage;
use tenx_models::test_support::{Canned, FakeProvider};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_streamed_answer_is_forwarded_with_its_usage_and_the_request_is_shaped_for_the_api() {
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/text.sse"), 9)])
        .await
        .unwrap();
    let served = client(Provider::Anthropic, &fake, json!({"temperature": 0.2}));
    let messages = [user("Refund order 1042, 59.00")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, Vec::new(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "Your refund of 59.00 was issued.");
    assert_eq!(sink.pieces, ["Your refund", " of 59.00", " was issued."]);
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            completion_tokens: 15,
            prompt_tokens: 572,
            total_tokens: 587,
            cache_read_input_tokens: 100,
            ..TokenUsage::default()
        })
    );
    let sent = &fake.received()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": "You are a support agent.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Refund order 1042, 59.00"}]}],
            "stream": true,
            "temperature": 0.2,
        })
    );
}

#[tokio::test]
async fn parallel_tool_uses_are_reassembled_from_input_json_deltas() {
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/tool_use.sse"), 6)])
        .await
        .unwrap();
    let served = client(Provider::Anthropic, &fake, json!({"max_tokens": 1024}));
    let messages = [user("Refund order 1042, 59.00")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, tools(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "I'll look the order up and refund it.");
    assert_eq!(sink.pieces.concat(), reply.text);
    assert_eq!(
        reply.tool_calls,
        [
            ModelToolCall {
                id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                name: "lookup_order".into(),
                arguments: r#"{"order_id": "1042"}"#.into(),
            },
            ModelToolCall {
                id: "toolu_01A09q90qw90lq917835lq9".into(),
                name: "issue_refund".into(),
                arguments: r#"{"order_id": "1042", "amount_cents": 5900}"#.into(),
            },
        ]
    );
    assert_eq!(reply.usage.map(|usage| usage.completion_tokens), Some(89));
    let body = fake.received()[0].json();
    assert_eq!(body["max_tokens"], json!(1024), "params override the default");
    assert_eq!(
        body["tools"],
        json!([
            {"name": "lookup_order", "description": "Look up an order.", "input_schema": tools()[0].parameters},
            {"name": "issue_refund", "description": "Refund part or all of an order.", "input_schema": tools()[1].parameters},
        ])
    );
    assert!(body.get("tool_choice").is_none());
}

#[tokio::test]
async fn tool_results_of_one_turn_travel_together_in_one_user_message() {
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/text.sse"), 64)])
        .await
        .unwrap();
    let served = client(Provider::Anthropic, &fake, json!({}));
    let messages = long_conversation();
    call(&served, &messages, tools(), None, &mut Pieces::default())
        .await
        .unwrap();
    let body = fake.received()[0].json();
    assert_eq!(body["system"], json!("You are a support agent."));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Refund order 1042, 59.00"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "lookup_order", "input": {"order_id": "1042"}},
                {"type": "tool_use", "id": "call_2", "name": "issue_refund", "input": {"order_id": "1042", "amount_cents": 5900}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "{\"paid_cents\":5900,\"refunded_cents\":0}"},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "Refund declined.", "is_error": true},
                {"type": "text", "text": "Your last answer was not accepted."},
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "The refund was declined."}]},
            {"role": "user", "content": [{"type": "text", "text": "Then hand me to billing."}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_3", "name": "transfer_to_billing", "input": {"reason": "declined"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_3", "content": "Handed off to `billing`."},
            ]},
        ])
    );
}

#[tokio::test]
async fn structured_output_is_forced_through_a_tool_and_comes_back_as_text() {
    let schema = json!({"type": "object", "properties": {"verdict": {"type": "string"}, "score": {"type": "number"}},
        "required": ["verdict", "score"]});
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/structured.sse"), 16)])
        .await
        .unwrap();
    let (forced, declared) = client(Provider::Anthropic, &fake, json!({"tool_choice": {"type": "auto"}}));
    let messages = [user("Review refund 1042")];
    let mut sink = Pieces::default();
    let reply = forced
        .complete(
            request(&declared, &shared(&messages), Vec::new(), Some(&schema)),
            &mut sink,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(reply.text, r#"{"verdict": "approve", "score": 0.92}"#);
    assert!(reply.tool_calls.is_empty(), "the output tool is not a call");
    assert_eq!(sink.pieces, std::slice::from_ref(&reply.text));
    let body = fake.received()[0].json();
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "final_answer"}));
    assert_eq!(body["tools"][0]["name"], json!("final_answer"));
    assert_eq!(body["tools"][0]["input_schema"], schema);

    // Beside the agent's own tools the model must call one of them; the output tool's name
    // never collides with a tool's.
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/tool_use.sse"), 64)])
        .await
        .unwrap();
    let (beside, declared) = client(Provider::Anthropic, &fake, json!({}));
    let mut offered = tools();
    offered[0].name = "final_answer".into();
    let reply = beside
        .complete(
            request(&declared, &shared(&messages), offered, Some(&schema)),
            &mut Pieces::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 2);
    let body = fake.received()[0].json();
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(body["tools"][2]["name"], json!("final_answer_"));
}

#[tokio::test]
async fn without_streaming_a_whole_message_is_read() {
    let fake = FakeProvider::start([Canned::json(200, fixture("anthropic/message.json"))])
        .await
        .unwrap();
    let served = client(Provider::Anthropic, &fake, json!({"stream": false}));
    let messages = [user("Check 1042 and 1043")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, tools(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "I'll check both orders.");
    assert_eq!(sink.pieces, ["I'll check both orders."]);
    assert_eq!(
        reply
            .tool_calls
            .iter()
            .map(|call| (call.id.as_str(), call.arguments.as_str()))
            .collect::<Vec<_>>(),
        [
            ("toolu_01A", r#"{"order_id":"1042"}"#),
            ("toolu_01B", r#"{"order_id":"1043"}"#)
        ]
    );
    assert_eq!(reply.usage.map(|usage| usage.total_tokens), Some(2598));
    assert_eq!(fake.received()[0].json()["stream"], json!(false));
}

#[tokio::test]
async fn a_429_and_a_529_are_retried_then_succeed() {
    let fake = FakeProvider::start([
        Canned::json(429, fixture("anthropic/error_429.json")).header("retry-after", "0"),
        Canned::json(529, fixture("anthropic/error_529.json")),
        Canned::sse(fixture("anthropic/text.sse"), 64),
    ])
    .await
    .unwrap();
    let reply = ask(&client(Provider::Anthropic, &fake, json!({})), &[user("hi")])
        .await
        .unwrap();
    assert_eq!(reply.text, "Your refund of 59.00 was issued.");
    assert_eq!(fake.received().len(), 3);
}

#[tokio::test]
async fn a_400_is_never_retried_and_echoes_nothing() {
    let fake = FakeProvider::start([Canned::json(400, fixture("anthropic/error_400.json"))])
        .await
        .unwrap();
    let error = failure(Provider::Anthropic, &fake).await;
    assert_eq!(fake.received().len(), 1);
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert_eq!(
        error.message,
        "provider `anthropic`, model `claude-sonnet-4-5`: HTTP 400 Bad Request (type `invalid_request_error`)"
    );
    assert!(!error.message.contains(KEY) && !error.message.contains("Refund order"));
}

#[tokio::test]
async fn an_error_event_mid_stream_is_a_server_error() {
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/overloaded.sse"), 64)])
        .await
        .unwrap();
    let error = failure(Provider::Anthropic, &fake).await;
    assert_eq!(error.kind, ModelErrorKind::Server);
    assert_eq!(
        error.message,
        "provider `anthropic`, model `claude-sonnet-4-5`: the stream reported an error (type `overloaded_error`)"
    );
    assert_eq!(fake.received().len(), 1, "a started stream is never retried");
}

#[tokio::test]
async fn a_truncated_stream_is_a_connection_error() {
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/truncated.sse"), 64)])
        .await
        .unwrap();
    let error = failure(Provider::Anthropic, &fake).await;
    assert_eq!(error.kind, ModelErrorKind::Connection);
    assert_eq!(
        error.message,
        "provider `anthropic`, model `claude-sonnet-4-5`: the stream ended before the answer was complete"
    );
}

#[tokio::test]
async fn an_event_that_is_not_json_is_a_malformed_answer() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\n\n";
    let fake = FakeProvider::start([Canned::sse(body, 64)]).await.unwrap();
    let error = failure(Provider::Anthropic, &fake).await;
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(
        error
            .message
            .ends_with("malformed answer: a stream event is not valid JSON"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_stop_cancels_a_call_mid_stream() {
    let fake = FakeProvider::start([Canned::sse(fixture("anthropic/truncated.sse"), 64).hanging()])
        .await
        .unwrap();
    let (client, declared) = client(Provider::Anthropic, &fake, json!({}));
    let messages = [user("hi")];
    let cancel = CancellationToken::new();
    let mut sink = Pieces {
        cancel_on_first: Some(cancel.clone()),
        ..Pieces::default()
    };
    let error = client
        .complete(
            request(&declared, &shared(&messages), Vec::new(), None),
            &mut sink,
            &cancel,
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Cancelled);
    assert_eq!(sink.pieces, ["Your refund"]);
}
