//! The payments service the refund example's `issue_refund` calls (`POST ${PAYMENTS_URL}/refunds`),
//! on loopback, on its own tokio runtime (so a test's waits never starve it). It deduplicates by
//! `Idempotency-Key` as a well-behaved service does: the first request with a key applies the
//! refund, a repeat gets the stored answer. It counts requests per key and refunds per order:
//! the same order refunded under a second key is a second refund (that is what a runtime that
//! lost or changed the key would cause). It can hold the requests of one key open after
//! applying their effect, the way a slow service does when its client dies mid-call.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use serde_json::{Value, json};

#[derive(Default)]
struct Books {
    /// Per key: the requests seen and the stored answer.
    keys: BTreeMap<String, (usize, Value)>,
    /// Per order: the refunds applied (one per new key naming it).
    refunds: BTreeMap<String, usize>,
}

#[derive(Default)]
struct Shared {
    held: Mutex<BTreeSet<String>>,
    books: Mutex<Books>,
    /// Requests without an `Idempotency-Key` (the tool always sends one: any is a failure).
    keyless: Mutex<usize>,
}

pub struct Payments {
    url: String,
    shared: Arc<Shared>,
    /// Its own runtime, shut down in the background when the test ends (a test's async
    /// context may not block on dropping it).
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Payments {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Payments {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let shared = Arc::new(Shared::default());
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let router = Router::new()
            .route("/refunds", axum::routing::post(refund))
            .with_state(shared.clone());
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, router).await
        });
        Self {
            url,
            shared,
            runtime: Some(runtime),
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Holds `key`'s requests open, after their effect, until [`Self::release`].
    pub fn hold(&self, key: &str) {
        self.shared.held.lock().unwrap().insert(key.to_owned());
    }

    pub fn release(&self, key: &str) {
        self.shared.held.lock().unwrap().remove(key);
    }

    /// How many requests carried `key`.
    pub fn requests(&self, key: &str) -> usize {
        self.shared
            .books
            .lock()
            .unwrap()
            .keys
            .get(key)
            .map_or(0, |(requests, _)| *requests)
    }

    /// How many times order `order` was refunded.
    pub fn refunds(&self, order: &str) -> usize {
        self.shared
            .books
            .lock()
            .unwrap()
            .refunds
            .get(order)
            .copied()
            .unwrap_or(0)
    }

    /// Every order refunded, with how many times.
    pub fn all_refunds(&self) -> BTreeMap<String, usize> {
        self.shared.books.lock().unwrap().refunds.clone()
    }

    /// How many requests came without an idempotency key.
    pub fn keyless(&self) -> usize {
        *self.shared.keyless.lock().unwrap()
    }
}

async fn refund(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    let Some(key) = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
    else {
        *shared.keyless.lock().unwrap() += 1;
        return (
            axum::http::StatusCode::BAD_REQUEST,
            [(CONTENT_TYPE, "application/json")],
            json!({"error": "no Idempotency-Key"}).to_string(),
        );
    };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let order = request["order_id"].as_str().unwrap_or_default().to_owned();
    let answer = {
        let mut books = shared.books.lock().unwrap();
        let Books { keys, refunds } = &mut *books;
        let (requests, answer) = keys.entry(key.clone()).or_insert_with(|| {
            let times = refunds.entry(order.clone()).or_default();
            *times += 1;
            let text = format!(
                "Refunded {} cents on order {order} (refund {times}).",
                request["amount_cents"]
            );
            (0, json!(text))
        });
        *requests += 1;
        answer.clone()
    };
    while shared.held.lock().unwrap().contains(&key) {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    (
        axum::http::StatusCode::OK,
        [(CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
}
