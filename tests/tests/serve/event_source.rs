//! `GET /v1/graph/stream`, the stream a browser `EventSource` can open: the query in place of
//! the body, Server-Sent Events with an `id:` each, the same event sequence as the `POST`
//! stream, an interrupt flow over it, refusals before the stream (a token in the URL, unknown
//! parameters, a stale `interrupt_id`), a reconnect that never runs the message again, and auth
//! through the header only.

use reqwest::Method;
use serde_json::{Value, json};
use tenx_engine::ports::Store;

use super::harness::{Server, read, refund_example, refund_tools, token, user, with_auth};

/// GETs the stream with `query` (already encoded by reqwest); status, content type, text.
async fn open(server: &Server, query: &[(&str, &str)]) -> (u16, String, String) {
    let query: Vec<String> = query
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect();
    let response = server
        .request(Method::GET, &format!("/v1/graph/stream?{}", query.join("&")))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, response.text().await.unwrap())
}

/// Percent-encodes a query component (everything but unreserved characters).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (byte as char).to_string(),
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// The frames of an SSE body: `(id, event, chunk)`.
fn frames(text: &str) -> Vec<(u64, String, Value)> {
    text.split("\n\n")
        .filter(|frame| !frame.is_empty())
        .map(|frame| {
            let mut lines = frame.lines();
            let id = lines.next().unwrap().strip_prefix("id: ").unwrap().parse().unwrap();
            let event = lines.next().unwrap().strip_prefix("event: ").unwrap().to_owned();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            assert!(lines.next().is_none(), "one data line a frame: {frame}");
            (id, event, serde_json::from_str(data).unwrap())
        })
        .collect()
}

/// What a sequence of chunks shows, without ids and times: event, status or role.
fn shape(chunks: &[Value]) -> Vec<String> {
    chunks
        .iter()
        .map(|chunk| {
            let what = chunk["data"]["status"]
                .as_str()
                .or_else(|| chunk["message"]["role"].as_str())
                .unwrap_or("");
            let delta = if chunk["message"]["delta"] == true {
                "+delta"
            } else {
                ""
            };
            format!("{}:{what}{delta}", chunk["event"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn the_get_stream_sends_the_post_streams_events_as_numbered_sse_frames() {
    let server = Server::refunds().await;
    let (status, content_type, text) = open(
        &server,
        &[("thread_id", "e1"), ("text", "hi"), ("response_granularity", "full")],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(content_type.starts_with("text/event-stream"), "{content_type}");
    let frames = frames(&text);
    let ids: Vec<u64> = frames.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(ids, (1..=frames.len() as u64).collect::<Vec<_>>());
    for (_, event, chunk) in &frames {
        assert_eq!(chunk["event"], event.as_str());
        assert_eq!(chunk["thread_id"], "e1");
    }
    let (last_event, last) = frames
        .last()
        .map(|(_, event, chunk)| (event.clone(), chunk.clone()))
        .unwrap();
    assert_eq!(last_event, "updates");
    assert_eq!(last["data"]["status"], "graph_invoked");
    let user_text = frames
        .iter()
        .find(|(_, _, chunk)| chunk["message"]["role"] == "user")
        .map(|(_, _, chunk)| chunk["message"]["content"][0]["text"].clone());
    assert_eq!(user_text, Some(json!("hi")));

    // The POST stream, with the same input on another thread, has the same sequence.
    let response = server
        .request(Method::POST, "/v1/graph/stream")
        .header("accept", "text/event-stream")
        .json(&json!({"messages": [user("hi")], "config": {"thread_id": "e1-post"}, "response_granularity": "full"}))
        .send()
        .await
        .unwrap();
    let posted: Vec<Value> = response
        .text()
        .await
        .unwrap()
        .split("\n\n")
        .filter(|frame| !frame.is_empty())
        .map(|frame| serde_json::from_str(frame.lines().nth(1).unwrap().strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    let got: Vec<Value> = frames.into_iter().map(|(_, _, chunk)| chunk).collect();
    assert_eq!(shape(&got), shape(&posted));
}

#[tokio::test]
async fn an_interrupt_flow_over_the_get_stream_pauses_then_runs_the_refund_once() {
    let server = Server::refunds().await;
    let (status, _, text) = open(
        &server,
        &[
            ("thread_id", "e2"),
            ("text", "Refund order 1042, 59.00"),
            ("response_granularity", "full"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let frames = frames(&text);
    let pause = frames
        .iter()
        .find(|(_, _, chunk)| chunk["data"]["status"] == "interrupted")
        .map(|(_, _, chunk)| chunk.clone())
        .unwrap();
    let id = pause["data"]["interrupt"]["id"].as_str().unwrap().to_owned();
    assert_eq!(frames.last().unwrap().2["data"]["is_interrupted"], true);
    assert_eq!(server.tools.calls_of("issue_refund"), 0);

    // A stale id is refused before the stream, as JSON, and records nothing.
    let before = server.snapshot("e2").await;
    let (status, content_type, text) = open(
        &server,
        &[
            ("thread_id", "e2"),
            ("resume", r#"{"approved":true}"#),
            ("interrupt_id", "int_nope"),
        ],
    )
    .await;
    assert_eq!(status, 409, "{text}");
    assert!(content_type.starts_with("application/json"), "{content_type}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["error"]["code"], "INTERRUPT_001");
    assert_eq!(server.snapshot("e2").await, before);

    let (status, _, text) = open(
        &server,
        &[
            ("thread_id", "e2"),
            ("resume", r#"{"approved":true}"#),
            ("interrupt_id", &id),
        ],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let reply = frames_text(&text);
    assert!(
        reply.contains(&"Refunded 5900 cents for order 1042".to_owned()),
        "{reply:?}"
    );
    assert_eq!(server.tools.calls_of("issue_refund"), 1);
}

fn frames_text(text: &str) -> Vec<String> {
    frames(text)
        .into_iter()
        .filter(|(_, _, chunk)| chunk["message"]["delta"] == false)
        .filter_map(|(_, _, chunk)| chunk["message"]["content"][0]["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_token_in_the_url_unknown_parameters_and_bad_json_are_refused_and_run_nothing() {
    let server = Server::refunds().await;
    for (query, loc, message) in [
        (
            vec![("thread_id", "e3"), ("text", "hi"), ("token", "abc")],
            "token",
            "a token is never accepted in the URL; send the Authorization header (a same-origin proxy can add it) or stream with fetch() and POST /v1/graph/stream",
        ),
        (
            vec![("thread_id", "e3"), ("text", "hi"), ("access_token", "abc")],
            "access_token",
            "a token is never accepted in the URL; send the Authorization header (a same-origin proxy can add it) or stream with fetch() and POST /v1/graph/stream",
        ),
        (
            vec![("thread_id", "e3"), ("text", "hi"), ("tools", "[]")],
            "tools",
            "Unknown query parameter",
        ),
        (
            vec![("thread_id", "e3"), ("resume", "{approved")],
            "resume",
            "resume must be JSON text (e.g. {\"approved\":true}, or null to cancel)",
        ),
    ] {
        let (status, _, text) = open(&server, &query).await;
        assert_eq!(status, 422, "{text}");
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["error"]["code"], "VALIDATION_ERROR");
        assert_eq!(body["error"]["message"], message);
        assert_eq!(body["error"]["details"][0]["loc"], json!(["query", loc]));
    }
    let (status, _, text) = open(&server, &[("thread_id", "e3")]).await;
    assert_eq!(status, 422, "no text and no resume: {text}");
    assert!(server.store.load("e3").await.unwrap().is_none());

    // An EventSource's reconnect says how far it got: it is told to stop, and nothing runs.
    let response = server
        .request(Method::GET, "/v1/graph/stream?thread_id=e3&text=hi")
        .header("last-event-id", "4")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(server.store.load("e3").await.unwrap().is_none());
}

#[tokio::test]
async fn with_auth_the_get_stream_needs_the_header_its_scope_and_the_threads_owner() {
    let server = Server::start(refund_example(), refund_tools(), with_auth()).await;
    let (status, _, text) = open(&server, &[("thread_id", "e4"), ("text", "hi")]).await;
    assert_eq!(status, 401, "{text}");
    let alice = server.as_user(&token("alice", json!({})));
    let (status, _, text) = open(&alice, &[("thread_id", "e4"), ("text", "hi")]).await;
    assert_eq!(status, 200, "the header, as a same-origin proxy adds it: {text}");
    let before = server.snapshot("e4").await;
    let bob = server.as_user(&token("bob", json!({})));
    let (status, _, text) = open(&bob, &[("thread_id", "e4"), ("text", "hi")]).await;
    assert_eq!(status, 403, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["error"]["message"], "Not authorized to invoke graph");
    assert_eq!(server.snapshot("e4").await, before);
    let reader = server.as_user(&token("alice", json!({"scopes": ["graph:invoke"]})));
    let (status, body) = read(
        reader
            .request(Method::GET, "/v1/graph/stream?thread_id=e4&text=hi")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["message"], "Missing required scope: graph:stream");
    assert_eq!(server.snapshot("e4").await, before);
}

#[tokio::test]
async fn a_cross_origin_reconnect_passes_its_preflight_with_last_event_id() {
    let server = Server::start(refund_example(), refund_tools(), super::harness::production()).await;
    let response = server
        .request(Method::OPTIONS, "/v1/graph/stream")
        .header("origin", "http://localhost:3000")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "authorization,last-event-id")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let allowed = response
        .headers()
        .get("access-control-allow-headers")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(allowed.contains("last-event-id"), "allowed headers: {allowed}");
    assert!(allowed.contains("authorization"), "allowed headers: {allowed}");
    assert_eq!(
        response.headers().get("access-control-allow-origin").unwrap(),
        "http://localhost:3000"
    );
}
