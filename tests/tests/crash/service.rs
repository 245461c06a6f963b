//! The payments service the `http` tools call (`/refunds`, `/payouts`): on loopback, on its own tokio runtime (so the
//! test's blocking waits never starve it). It deduplicates by `Idempotency-Key` as a
//! well-behaved service does (the first request with a key applies the refund, a repeat gets
//! the stored answer), counts requests and effects per key, and can hold requests open after
//! applying their effect, the way a slow service does when its client dies mid-call.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use serde_json::{Value, json};

#[derive(Default)]
struct Shared {
    hold: AtomicBool,
    /// The key of every request, in arrival order.
    requests: Mutex<Vec<String>>,
    /// Per key: how many times the refund was applied, and the stored answer.
    effects: Mutex<BTreeMap<String, (usize, Value)>>,
}

pub struct Service {
    url: String,
    shared: Arc<Shared>,
    _runtime: tokio::runtime::Runtime,
}

impl Service {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let shared = Arc::new(Shared::default());
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", 0)))
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let router = Router::new()
            .route("/refunds", axum::routing::post(refund))
            .route("/payouts", axum::routing::post(refund))
            .with_state(shared.clone());
        runtime.spawn(async move { axum::serve(listener, router).await });
        Self {
            url,
            shared,
            _runtime: runtime,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Holds every request open (after its effect) until [`Self::release`].
    pub fn hold(&self) {
        self.shared.hold.store(true, Ordering::SeqCst);
    }

    pub fn release(&self) {
        self.shared.hold.store(false, Ordering::SeqCst);
    }

    /// The key of every request, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// How many times each key's effect ran.
    pub fn effects(&self) -> BTreeMap<String, usize> {
        self.shared
            .effects
            .lock()
            .unwrap()
            .iter()
            .map(|(key, (count, _))| (key.clone(), *count))
            .collect()
    }
}

async fn refund(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    let key = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    shared.requests.lock().unwrap().push(key.clone());
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let answer = {
        let mut effects = shared.effects.lock().unwrap();
        let refunds = effects.len() + 1;
        let (_, answer) = effects.entry(key).or_insert_with(|| {
            let amount = &request["amount_cents"];
            let text = match request["payee"].as_str() {
                Some(payee) => format!("Paid {amount} cents to {payee} (payment {refunds})."),
                None => format!(
                    "Refunded {amount} cents on order {} (refund {refunds}).",
                    request["order_id"].as_str().unwrap_or_default()
                ),
            };
            (1, json!(text))
        });
        answer.clone()
    };
    while shared.hold.load(Ordering::SeqCst) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    ([(CONTENT_TYPE, "application/json")], answer.to_string())
}
