//! Secrets (the contract's run-time semantics): `${NAME}` values are resolved when the artifact
//! is loaded and never reach a response, a stream chunk, an error text, the thread or its
//! records. A real host (`tenx_runtime::HostBuilder`, the real `http` tool runner) calls a local
//! stand-in service with the secret in its header and URL; the service answers, fails with the
//! secret in its body, or is not there at all.

use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use reqwest::Method;
use serde_json::json;
use tenx_engine::ports::Store;

use super::super::harness::{Server, compile_named, user};

const TOKEN: &str = "tok-5ecr3t-7f3a9c1e";
const PATH: &str = "p4th-5ecr3t-0b1d";

const PROGRAM: &str = r#"
model m {
  provider = scripted
  rules    = [{ match: "(?i)look", turns: [
    { tool: "lookup_order", arguments: { order_id: "1042" } }
    { text: "Result: {result}" }
  ] }]
  fallback = { text: "Ask me to look an order up." }
}

tool lookup_order(order_id: string "The order") -> object {
  description = "Look up an order."
  risk = low
  run  = http(POST, "${ORDERS_URL}/orders", timeout: 2s, headers: { "Authorization": "Bearer ${ORDERS_TOKEN}" })
}

agent a {
  model  = m
  prompt = "Look orders up."
  tools  = [lookup_order]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

/// A stand-in orders service: `/ok/…` answers an order, `/bad/…` fails and echoes the header it
/// was sent (as a careless service might). Returns its base URL and the headers it received.
async fn orders_service() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = |seen: Arc<Mutex<Vec<String>>>, headers: &HeaderMap| {
        let auth = headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        seen.lock().unwrap().push(auth.clone());
        auth
    };
    let (ok_seen, bad_seen) = (seen.clone(), seen.clone());
    let app = axum::Router::new()
        .route(
            &format!("/{PATH}/ok/orders"),
            axum::routing::post(move |headers: HeaderMap| async move {
                record(ok_seen, &headers);
                axum::Json(json!({"order_id": "1042", "status": "shipped"}))
            }),
        )
        .route(
            &format!("/{PATH}/bad/orders"),
            axum::routing::post(move |headers: HeaderMap| async move {
                let auth = record(bad_seen, &headers);
                (StatusCode::INTERNAL_SERVER_ERROR, format!("upstream refused {auth}"))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/{PATH}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

/// The program served by a real host whose environment holds `url` and the token.
async fn served(url: String) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = Arc::new(tenx_engine::MemoryStore::new());
    let artifact = compile_named("tests/serve_secrets.tenx", PROGRAM);
    let engine = tenx_runtime::HostBuilder::new(artifact)
        .store(store.clone())
        .build(|name| match name {
            "ORDERS_URL" => Some(url.clone()),
            "ORDERS_TOKEN" => Some(TOKEN.to_owned()),
            _ => None,
        })
        .unwrap();
    let tools = Arc::new(tenx_engine::testing::FakeTools::new());
    Server::serve(engine, store, tools, Default::default()).await
}

/// Everything a client and the store can show about `thread`, as text.
async fn everything(server: &Server, thread: &str) -> String {
    let mut seen = Vec::new();
    for path in [
        format!("/v1/threads/{thread}"),
        format!("/v1/threads/{thread}/state"),
        format!("/v1/threads/{thread}/messages"),
        "/v1/threads".to_owned(),
        "/v1/graph".to_owned(),
        "/v1/graph/tools".to_owned(),
    ] {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, 200, "{path}: {body}");
        seen.push(body.to_string());
    }
    seen.push(server.snapshot(thread).await);
    let records = server.store.records(thread).await.unwrap();
    seen.push(serde_json::to_string(&records).unwrap());
    seen.join("\n")
}

fn assert_clean(text: &str) {
    assert!(!text.contains(TOKEN), "the token leaked: {text}");
    assert!(!text.contains(PATH), "the URL leaked: {text}");
}

#[tokio::test]
async fn resolved_secrets_never_reach_a_response_a_chunk_an_error_or_the_thread() {
    let (base, seen) = orders_service().await;
    let refused_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let cases = [
        (
            format!("{base}/ok"),
            "Result: {\"order_id\":\"1042\",\"status\":\"shipped\"}",
        ),
        (format!("{base}/bad"), "the service answered 500 Internal Server Error"),
        (
            format!("http://127.0.0.1:{refused_port}/{PATH}"),
            "could not connect to the service",
        ),
    ];
    for (url, shows) in cases {
        let server = served(url.clone()).await;
        let (status, body) = server
            .post(
                "/v1/graph/invoke",
                json!({"messages": [user("look it up")], "config": {"thread_id": "k1"}, "response_granularity": "full"}),
            )
            .await;
        assert_eq!(status, 200, "{url}: {body}");
        let reply = body["data"]["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"].clone();
        assert!(reply.as_str().unwrap().contains(shows), "{url}: {body}");
        assert_clean(&body.to_string());
        let response = server
            .request(Method::POST, "/v1/graph/stream")
            .json(&json!({"messages": [user("look again")], "config": {"thread_id": "k1"}, "response_granularity": "full"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let chunks = response.text().await.unwrap();
        assert!(chunks.contains("updates"), "{chunks}");
        assert_clean(&chunks);
        assert_clean(&everything(&server, "k1").await);
    }
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 4, "two runs each against ok and bad: {sent:?}");
    assert!(
        sent.iter().all(|auth| *auth == format!("Bearer {TOKEN}")),
        "the service got the token"
    );
}
