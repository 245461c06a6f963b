//! `provider = openai` against a local fake chat-completions server replaying recorded answers:
//! what is sent (headers, messages, tools, schemas, params) and how answers, streams, failures,
//! retries and cancellation come back.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

mod common;

use common::{
    KEY, Pieces, ask, call, client, failure, fixture, long_conversation, model, request, shared, tools, transport, user,
};
use serde_json::json;
use tenx_artifact::Provider;
use tenx_engine::ports::{ModelErrorKind, ModelToolCall};
use tenx_engine::wire::TokenUsage;
use tenx_models::Transport;
use tenx_models::test_support::{Canned, FakeProvider};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_streamed_answer_is_forwarded_piece_by_piece_with_its_usage() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/text.sse"), 7)])
        .await
        .unwrap();
    let served = client(Provider::Openai, &fake, json!({"temperature": 0.2, "max_tokens": 300}));
    let messages = [user("Refund order 1042, 59.00")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, Vec::new(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "Your refund of 59.00 was issued.");
    assert_eq!(sink.pieces, ["Your", " refund", " of 59.00", " was", " issued", "."]);
    assert!(reply.tool_calls.is_empty());
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            completion_tokens: 12,
            prompt_tokens: 57,
            total_tokens: 69,
            cache_read_input_tokens: 32,
            ..TokenUsage::default()
        })
    );

    let received = fake.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are a support agent."},
                {"role": "user", "content": "Refund order 1042, 59.00"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.2,
            "max_tokens": 300,
        }),
        "no tools key without tools, params passed through"
    );
}

#[tokio::test]
async fn parallel_tool_calls_split_across_chunks_are_reassembled() {
    // Pieces of 5 bytes: every event arrives split across many reads.
    let fake = FakeProvider::start([Canned::sse(fixture("openai/parallel_tool_calls.sse"), 5)])
        .await
        .unwrap();
    let served = client(
        Provider::Openai,
        &fake,
        json!({"tool_choice": "required", "parallel_tool_calls": true}),
    );
    let messages = [user("Refund order 1042, 59.00")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, tools(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "");
    assert!(sink.pieces.is_empty());
    assert_eq!(
        reply.tool_calls,
        [
            ModelToolCall {
                id: "call_Qm3f8ZrYp0aB1cD2eF3gH4iJ".into(),
                name: "lookup_order".into(),
                arguments: r#"{"order_id":"1042"}"#.into(),
            },
            ModelToolCall {
                id: "call_Zx9y8W7v6U5t4S3r2Q1p0OnM".into(),
                name: "issue_refund".into(),
                arguments: r#"{"order_id": "1042", "amount_cents": 5900}"#.into(),
            },
        ]
    );
    assert_eq!(reply.usage.map(|usage| usage.total_tokens), Some(168));
    let body = fake.received()[0].json();
    assert_eq!(
        body["tool_choice"],
        json!("required"),
        "the declared tool_choice is sent"
    );
    assert_eq!(body["parallel_tool_calls"], json!(true));
    assert_eq!(
        body["tools"],
        json!([
            {"type": "function", "function": {"name": "lookup_order", "description": "Look up an order.",
                "parameters": tools()[0].parameters}},
            {"type": "function", "function": {"name": "issue_refund", "description": "Refund part or all of an order.",
                "parameters": tools()[1].parameters}},
        ])
    );
}

#[tokio::test]
async fn the_conversation_is_mapped_message_by_message() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/text.sse"), 64)])
        .await
        .unwrap();
    let served = client(Provider::Openai, &fake, json!({}));
    let messages = long_conversation();
    call(&served, &messages, tools(), None, &mut Pieces::default())
        .await
        .unwrap();
    assert_eq!(
        fake.received()[0].json()["messages"],
        json!([
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "Refund order 1042, 59.00"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"order_id\":\"1042\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "issue_refund", "arguments": "{\"order_id\":\"1042\",\"amount_cents\":5900}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"paid_cents\":5900,\"refunded_cents\":0}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Refund declined."},
            {"role": "system", "content": "Your last answer was not accepted."},
            {"role": "assistant", "content": "The refund was declined."},
            {"role": "user", "content": "Then hand me to billing."},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "transfer_to_billing", "arguments": "{\"reason\":\"declined\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_3", "content": "Handed off to `billing`."},
        ])
    );
}

#[tokio::test]
async fn an_output_schema_is_sent_as_a_strict_json_schema_when_it_can_be() {
    let strict = json!({"type": "object", "properties": {"verdict": {"type": "string", "enum": ["approve", "reject"]},
        "score": {"type": "number"}}, "required": ["verdict", "score"], "additionalProperties": false});
    let loose = json!({"type": "object", "properties": {"verdict": {"type": "string", "minLength": 1},
        "score": {"type": "number"}}, "required": ["verdict"]});
    for (schema, is_strict) in [(&strict, true), (&loose, false)] {
        let fake = FakeProvider::start([Canned::sse(fixture("openai/structured.sse"), 16)])
            .await
            .unwrap();
        let served = client(Provider::Openai, &fake, json!({}));
        let messages = [user("Review refund 1042")];
        let mut sink = Pieces::default();
        let reply = call(&served, &messages, Vec::new(), Some(schema), &mut sink)
            .await
            .unwrap();
        assert_eq!(reply.text, r#"{"verdict":"approve","score":0.92}"#);
        assert_eq!(sink.pieces.concat(), reply.text);
        assert_eq!(
            fake.received()[0].json()["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "support", "schema": schema, "strict": is_strict}})
        );
    }
}

#[tokio::test]
async fn a_schema_that_is_not_an_object_is_wrapped_and_unwrapped() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/wrapped.sse"), 16)])
        .await
        .unwrap();
    let served = client(Provider::Openai, &fake, json!({}));
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let messages = [user("List two letters")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, Vec::new(), Some(&schema), &mut sink)
        .await
        .unwrap();
    assert_eq!(reply.text, r#"["a","b"]"#);
    assert_eq!(sink.pieces, [r#"["a","b"]"#], "the unwrapped answer is sent whole");
    let format = &fake.received()[0].json()["response_format"]["json_schema"];
    assert_eq!(format["schema"]["properties"]["value"], schema);
    assert_eq!(format["strict"], json!(true), "the wrapper is a closed object");
}

#[tokio::test]
async fn an_authors_response_format_wins() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/structured.sse"), 16)])
        .await
        .unwrap();
    let served = client(
        Provider::Openai,
        &fake,
        json!({"response_format": {"type": "json_object"}}),
    );
    let schema = json!({"type": "object"});
    let messages = [user("Review")];
    call(&served, &messages, Vec::new(), Some(&schema), &mut Pieces::default())
        .await
        .unwrap();
    assert_eq!(
        fake.received()[0].json()["response_format"],
        json!({"type": "json_object"})
    );
}

#[tokio::test]
async fn without_streaming_a_whole_answer_is_read() {
    let fake = FakeProvider::start([
        Canned::json(200, fixture("openai/text.json")),
        Canned::json(200, fixture("openai/tool_calls.json")),
    ])
    .await
    .unwrap();
    let served = client(Provider::Openai, &fake, json!({"stream": false, "seed": 7}));
    let messages = [user("What was paid for 1042?")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, tools(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "Order 1042 was paid 59.00.");
    assert_eq!(sink.pieces, ["Order 1042 was paid 59.00."]);
    assert_eq!(reply.usage.map(|usage| usage.prompt_tokens), Some(57));
    let body = fake.received()[0].json();
    assert_eq!(body["stream"], json!(false));
    assert_eq!(body["seed"], json!(7));
    assert!(body.get("stream_options").is_none());

    let reply = call(&served, &messages, tools(), None, &mut sink).await.unwrap();
    assert_eq!(
        reply
            .tool_calls
            .iter()
            .map(|call| (call.id.as_str(), call.arguments.as_str()))
            .collect::<Vec<_>>(),
        [
            ("call_A1", r#"{"order_id":"1042"}"#),
            ("call_B2", r#"{"order_id":"1043"}"#)
        ]
    );
}

#[tokio::test]
async fn a_refusal_comes_back_as_the_answers_text() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/refusal.sse"), 32)])
        .await
        .unwrap();
    let served = client(Provider::Openai, &fake, json!({}));
    let messages = [user("Something not allowed")];
    let mut sink = Pieces::default();
    let reply = call(&served, &messages, Vec::new(), None, &mut sink).await.unwrap();
    assert_eq!(reply.text, "I'm sorry, I can't help with that.");
    assert_eq!(sink.pieces.concat(), reply.text);
}

fn assert_clean(message: &str) {
    assert!(!message.contains(KEY) && !message.contains("cret"), "{message}");
    assert!(
        !message.contains("PROMPT-MARKER") && !message.contains("Refund order"),
        "{message}"
    );
    assert!(!message.contains("127.0.0.1"), "{message}");
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_then_succeeds() {
    let fake = FakeProvider::start([
        Canned::json(429, fixture("openai/error_429.json")).header("retry-after", "0"),
        Canned::sse(fixture("openai/text.sse"), 64),
    ])
    .await
    .unwrap();
    let reply = ask(
        &client(Provider::Openai, &fake, json!({})),
        &[user("Refund order 1042, 59.00")],
    )
    .await
    .unwrap();
    assert_eq!(reply.text, "Your refund of 59.00 was issued.");
    let received = fake.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body, "the same request is sent again");
}

#[tokio::test]
async fn a_500_is_retried_then_succeeds() {
    let fake = FakeProvider::start([
        Canned::json(500, fixture("openai/error_500.json")),
        Canned::json(503, "upstream unavailable"),
        Canned::sse(fixture("openai/text.sse"), 64),
    ])
    .await
    .unwrap();
    let reply = ask(
        &client(Provider::Openai, &fake, json!({})),
        &[user("Refund order 1042, 59.00")],
    )
    .await
    .unwrap();
    assert_eq!(reply.text, "Your refund of 59.00 was issued.");
    assert_eq!(fake.received().len(), 3);
}

#[tokio::test]
async fn a_server_that_keeps_failing_fails_after_the_last_attempt() {
    let fake = FakeProvider::start([Canned::json(500, fixture("openai/error_500.json"))])
        .await
        .unwrap();
    let error = failure(Provider::Openai, &fake).await;
    assert_eq!(fake.received().len(), 3);
    assert_eq!(error.kind, ModelErrorKind::Server);
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: HTTP 500 Internal Server Error (type `server_error`) after 3 attempts"
    );
}

#[tokio::test]
async fn a_400_is_never_retried_and_echoes_nothing() {
    let fake = FakeProvider::start([Canned::json(400, fixture("openai/error_400.json"))])
        .await
        .unwrap();
    let error = failure(Provider::Openai, &fake).await;
    assert_eq!(fake.received().len(), 1);
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: HTTP 400 Bad Request (type `invalid_request_error`, param `response_format`)"
    );
    assert_clean(&error.message);
}

#[tokio::test]
async fn a_401_that_quotes_the_key_is_not_repeated() {
    let mut body = String::from_utf8(fixture("openai/error_401.json")).unwrap();
    body = body.replace("sk-test-******************************cret", KEY);
    let fake = FakeProvider::start([Canned::json(401, body)]).await.unwrap();
    let error = failure(Provider::Openai, &fake).await;
    assert_eq!(fake.received().len(), 1);
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: HTTP 401 Unauthorized (type `invalid_request_error`, code `invalid_api_key`)"
    );
    assert_clean(&error.message);
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_not_waited_for() {
    let fake = FakeProvider::start([
        Canned::json(429, fixture("openai/error_429.json")).header("retry-after", "3600"),
        Canned::sse(fixture("openai/text.sse"), 64),
    ])
    .await
    .unwrap();
    let error = failure(Provider::Openai, &fake).await;
    assert_eq!(fake.received().len(), 1);
    assert_eq!(
        error.kind,
        ModelErrorKind::RateLimited {
            retry_after_ms: Some(3_600_000)
        },
        "the wait the server asked for reaches the engine"
    );
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: HTTP 429 Too Many Requests (type `requests`, code `rate_limit_exceeded`), Retry-After 3600000 ms"
    );
}

#[tokio::test]
async fn a_retry_after_date_in_the_past_retries_at_once() {
    let fake = FakeProvider::start([
        Canned::json(429, fixture("openai/error_429.json")).header("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"),
        Canned::sse(fixture("openai/text.sse"), 64),
    ])
    .await
    .unwrap();
    let reply = ask(&client(Provider::Openai, &fake, json!({})), &[user("hi")]).await;
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(fake.received().len(), 2);
}

#[tokio::test]
async fn a_chunk_that_is_not_json_is_a_malformed_answer() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/malformed.sse"), 64)])
        .await
        .unwrap();
    let error = failure(Provider::Openai, &fake).await;
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: malformed answer: a stream chunk is not valid JSON"
    );
    assert_eq!(fake.received().len(), 1, "a stream is never retried");
}

#[tokio::test]
async fn a_whole_answer_that_is_not_json_is_a_malformed_answer() {
    let fake = FakeProvider::start([Canned::json(200, "{\"choices\": [")])
        .await
        .unwrap();
    let served = client(Provider::Openai, &fake, json!({"stream": false}));
    let messages = [user("hi")];
    let error = ask(&served, &messages).await.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(
        error
            .message
            .ends_with("malformed answer: the answer is not a chat completion"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_truncated_stream_is_a_connection_error() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/truncated.sse"), 64)])
        .await
        .unwrap();
    let error = failure(Provider::Openai, &fake).await;
    assert_eq!(error.kind, ModelErrorKind::Connection);
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: the stream ended before the answer was complete"
    );
}

#[tokio::test]
async fn a_stop_cancels_a_call_mid_stream() {
    // The fake sends the first events and then nothing: only the cancellation ends the call.
    let fake = FakeProvider::start([Canned::sse(fixture("openai/truncated.sse"), 64).hanging()])
        .await
        .unwrap();
    let (client, declared) = client(Provider::Openai, &fake, json!({}));
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
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: the call was cancelled"
    );
    assert_eq!(sink.pieces, ["Your refund"]);
}

#[tokio::test]
async fn a_stopped_run_never_calls() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/text.sse"), 64)])
        .await
        .unwrap();
    let (client, declared) = client(Provider::Openai, &fake, json!({}));
    let messages = [user("hi")];
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = client
        .complete(
            request(&declared, &shared(&messages), Vec::new(), None),
            &mut Pieces::default(),
            &cancel,
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Cancelled);
    assert!(fake.received().is_empty());
}

#[tokio::test]
async fn a_server_that_is_not_there_is_a_connection_error_after_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let declared = model(
        Provider::Openai,
        "gpt-4o-mini",
        &format!("http://{address}/v1"),
        json!({}),
    );
    let client = tenx_models::client_for("support_model", &declared, Some(KEY), &transport()).unwrap();
    let error = ask(&(client, declared), &[user("hi")]).await.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Connection);
    assert_eq!(
        error.message,
        "provider `openai`, model `gpt-4o-mini`: could not connect after 3 attempts"
    );
}

#[tokio::test]
async fn a_local_server_needs_no_key() {
    let fake = FakeProvider::start([Canned::sse(fixture("openai/text.sse"), 64)])
        .await
        .unwrap();
    let mut declared = model(
        Provider::Openai,
        "llama3.1:8b",
        &format!("{}/v1/", fake.url()),
        json!({}),
    );
    declared.api_key_env = None;
    let client = tenx_models::client_for("local", &declared, None, &transport()).unwrap();
    ask(&(client, declared), &[user("hi")]).await.unwrap();
    let sent = &fake.received()[0];
    assert_eq!(sent.path, "/v1/chat/completions", "a trailing slash is fine");
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.json()["model"], json!("llama3.1:8b"));
}

#[test]
fn setup_problems_are_found_before_any_call() {
    let transport = transport();
    let mut declared = model(Provider::Openai, "gpt-4o-mini", "ftp://example.test", json!({}));
    let error = tenx_models::client_for("m", &declared, Some(KEY), &transport)
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "model `m`: its `base_url` is not an http or https URL"
    );
    declared.base_url = None;
    let error = tenx_models::client_for("m", &declared, None, &transport).err().unwrap();
    assert_eq!(error.to_string(), "model `m`: its API key variable is not set");
    declared.params = json!({"stream": "yes"});
    let error = tenx_models::client_for("m", &declared, Some(KEY), &transport)
        .err()
        .unwrap();
    assert_eq!(error.to_string(), "model `m`: its `params.stream` is not a boolean");
    declared.provider = Provider::Scripted;
    assert!(tenx_models::client_for("m", &declared, Some(KEY), &transport).is_err());
    let debug = format!(
        "{:?}",
        tenx_models::Settings::of("m", &model(Provider::Openai, "x", "http://h", json!({})), Some(KEY)).unwrap()
    );
    assert!(!debug.contains(KEY), "{debug}");
}

#[tokio::test]
async fn a_stalled_stream_times_out_between_pieces_and_a_slow_call_as_a_whole() {
    for (idle_ms, total_ms, expected_ms) in [(300, 30_000, 300), (10_000, 500, 500)] {
        let fake = FakeProvider::start([Canned::sse(fixture("openai/truncated.sse"), 64).hanging()])
            .await
            .unwrap();
        let mut options = common::fast();
        options.timeouts.idle = std::time::Duration::from_millis(idle_ms);
        options.timeouts.total = std::time::Duration::from_millis(total_ms);
        let declared = model(
            Provider::Openai,
            "gpt-4o-mini",
            &format!("{}/v1", fake.url()),
            json!({}),
        );
        let client =
            tenx_models::client_for("support_model", &declared, Some(KEY), &Transport::new(options).unwrap()).unwrap();
        let started = std::time::Instant::now();
        let error = ask(&(client, declared), &[user("hi")]).await.unwrap_err();
        let waited = started.elapsed();
        assert_eq!(error.kind, ModelErrorKind::Timeout);
        assert_eq!(
            error.message,
            format!("provider `openai`, model `gpt-4o-mini`: no answer within {expected_ms} ms")
        );
        assert!(
            waited >= std::time::Duration::from_millis(expected_ms) && waited < std::time::Duration::from_secs(8),
            "{waited:?}"
        );
        assert_eq!(fake.received().len(), 1, "a timeout is never retried");
    }
}
