//! The request span over loopback HTTP: one span per request with its id (the `X-Request-ID`
//! answered), method, route template, status and latency, and never the bearer token, the JWT
//! secret or a message's text, whatever the log level.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::harness::{SECRET, Server, refund_example, refund_tools, token, user, with_auth};

/// Everything logged, in one buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Self;

    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

#[tokio::test]
async fn each_request_logs_its_id_route_status_and_latency_and_never_a_token_or_a_message() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    // The process's subscriber: a scoped one can miss events while other tests' threads
    // register the same call sites. Lines are told apart by request id.
    tracing::subscriber::set_global_default(subscriber).expect("only this test installs a subscriber");

    let server = Server::start(refund_example(), refund_tools(), with_auth()).await;
    let bearer = token("log-user", json!({}));
    let alice = server.as_user(&bearer);
    // Markers with letters outside hex, so a random request id or a port can never contain them.
    let secret_text = "my card number is 4111-1111-kq";
    let response = alice
        .request(reqwest::Method::POST, "/v1/graph/invoke")
        .json(&json!({"messages": [user(secret_text)], "config": {"thread_id": "logged-thread"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let request_id = response.headers()["x-request-id"].to_str().unwrap().to_owned();
    let _ = response.text().await.unwrap();
    let response = alice
        .request(
            reqwest::Method::GET,
            "/v1/threads/logged-thread/messages?search=visa-4111-kq",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let read_id = response.headers()["x-request-id"].to_str().unwrap().to_owned();
    let _ = response.text().await.unwrap();

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let line = text
        .lines()
        .find(|line| line.contains(&request_id))
        .unwrap_or_else(|| panic!("no line with the request id {request_id}: {text}"));
    for field in ["method=POST", "route=/v1/graph/invoke", "status=200", "latency_ms="] {
        assert!(line.contains(field), "`{field}` missing: {line}");
    }
    let line = text.lines().find(|line| line.contains(&read_id)).unwrap();
    assert!(
        line.contains("route=/v1/threads/{thread_id}/messages"),
        "the template, not the path: {line}"
    );
    for private in [
        bearer.as_str(),
        SECRET,
        secret_text,
        "4111-1111-kq",
        "visa-4111-kq",
        "logged-thread",
        "log-user",
    ] {
        assert!(!text.contains(private), "`{private}` was logged: {text}");
    }
}
