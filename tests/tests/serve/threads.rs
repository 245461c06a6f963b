//! The thread routes and stop (§17 scenarios 18 and 19, with the contract's 404 for a missing
//! thread), and the request-size limit (scenario 22).

use reqwest::Method;
use serde_json::json;

use super::harness::{Server, read, refund_example, refund_tools, user};

#[tokio::test]
async fn thread_routes_page_read_and_delete_and_a_missing_thread_is_404() {
    let server = Server::refunds().await;
    let (status, body) = server.get("/v1/threads?limit=0").await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["message"], "limit must be > 0");
    for path in [
        "/v1/threads/nope",
        "/v1/threads/nope/state",
        "/v1/threads/nope/messages",
    ] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let (status, _) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "t1"}}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = server.get("/v1/threads/t1").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["thread_data"]["thread"]["thread_id"], "t1");
    let (status, body) = server.get("/v1/threads/t1/messages?limit=1&offset=1").await;
    assert_eq!(status, 200);
    let messages = body["data"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "assistant");
    let id = messages[0]["message_id"].as_str().unwrap().to_owned();
    let (status, body) = server.get(&format!("/v1/threads/t1/messages/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["message_id"], id.as_str());
    let (status, _) = server.get("/v1/threads/t1/messages/nope").await;
    assert_eq!(status, 404);

    let (status, body) = read(server.request(Method::DELETE, "/v1/threads/t1").send().await.unwrap()).await;
    assert_eq!(status, 422, "a delete needs its body: {body}");
    let (status, body) = read(
        server
            .request(Method::DELETE, "/v1/threads/t1")
            .json(&json!({"config": {}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"],
        json!({"success": true, "message": "Thread deleted successfully", "data": true})
    );
    let (status, _) = server.get("/v1/threads/t1").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn stop_says_whether_a_run_was_running() {
    let server = Server::refunds().await;
    let (status, body) = server.post("/v1/graph/stop", json!({"thread_id": "ghost"})).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["data"],
        json!({"ok": false, "running": false, "reason": "no-state"})
    );
    server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "done"}}),
        )
        .await;
    let (_, body) = server.post("/v1/graph/stop", json!({"thread_id": "done"})).await;
    assert_eq!(
        body["data"],
        json!({"ok": true, "running": false, "reason": "not-running"})
    );
    let (status, _) = server.post("/v1/graph/stop", json!({"thread_id": "  "})).await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn bodies_over_the_limit_are_413_whether_declared_or_streamed() {
    let settings = tenx_server::ServerSettings {
        max_request_size: 2000,
        ..tenx_server::ServerSettings::default()
    };
    let server = Server::start(refund_example(), refund_tools(), settings).await;
    let big = json!({"messages": [user(&"x".repeat(3000))]});
    let (status, body) = server.post("/v1/graph/invoke", big.clone()).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "REQUEST_TOO_LARGE");
    assert_eq!(body["metadata"]["status"], "error");
    assert!(body["metadata"]["request_id"].is_string());
    let chunked = reqwest::Body::wrap_stream(futures_stream(big.to_string()));
    let response = server
        .request(Method::POST, "/v1/graph/invoke")
        .header("content-type", "application/json")
        .body(chunked)
        .send()
        .await
        .unwrap();
    let (status, body) = read(response).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "REQUEST_TOO_LARGE");
}

/// A body sent in pieces, without a declared length.
fn futures_stream(text: String) -> impl futures_core::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send + 'static {
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
        text.into_bytes().chunks(500).map(|piece| Ok(piece.to_vec())).collect();
    tokio_stream::iter(pieces)
}

#[tokio::test]
async fn over_the_rate_limit_is_429_with_retry_after_and_ping_is_never_limited() {
    use tenx_server::rate_limit::{LimitBy, RateLimitSettings};
    let settings = tenx_server::ServerSettings {
        rate_limit: Some(RateLimitSettings {
            requests: std::num::NonZeroU32::new(4).unwrap(),
            window: std::time::Duration::from_secs(60),
            by: LimitBy::Ip,
        }),
        ..tenx_server::ServerSettings::default()
    };
    let server = Server::start(refund_example(), refund_tools(), settings).await;
    for expected in [3, 2, 1, 0] {
        let response = server.request(Method::GET, "/v1/threads").send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["x-ratelimit-limit"], "4");
        assert_eq!(
            response.headers()["x-ratelimit-remaining"],
            expected.to_string().as_str()
        );
    }
    let response = server.request(Method::GET, "/v1/threads").send().await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["x-ratelimit-remaining"], "0");
    let retry: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=15).contains(&retry), "{retry}");
    let (_, body) = read(response).await;
    assert_eq!(body["error"]["code"], "RATE_LIMIT_EXCEEDED");
    assert_eq!(body["error"]["limit"], 4);
    assert_eq!(body["error"]["window_seconds"], 60);
    assert_eq!(body["metadata"]["status"], "error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Too many requests. Limit: 4 per 60s. Retry after ")
    );
    for _ in 0..10 {
        let (status, _) = server.get("/ping").await;
        assert_eq!(status, 200);
    }
}
