//! The stand-in for the example's orders and payments service (`ORDERS_URL` and `PAYMENTS_URL`
//! both point here): in memory, loopback only, one line on stderr per refund it makes.
//!
//! - `POST /refunds` (`issue_refund`'s `http` call): refunds `{"order_id", "amount_cents"}` once
//!   per `Idempotency-Key`, as a real payment service does. A request with a key already seen
//!   moves no money again: it is counted and answered with the first refund's confirmation.
//! - `GET /refunds`: every key seen, with what it refunded and how many requests carried it.
//! - `POST /orders/lookup` (`lookup_order`): a made-up order and what was refunded of it.
//! - `POST /delay-next-refund` (`{"seconds": N}`, at most 9, under the tool's 10 s timeout):
//!   the next refund answers after N seconds, so the walk-through can show a busy thread.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The longest delay `POST /delay-next-refund` takes: under `issue_refund`'s 10 s timeout.
const MAX_DELAY_SECONDS: u64 = 9;

/// What one idempotency key refunded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refund {
    /// The order refunded.
    pub order_id: String,
    /// The amount refunded, in cents.
    pub amount_cents: u64,
    /// How many requests carried the key (the refund itself happened once).
    pub requests: u64,
}

/// The stand-in's memory, shared by its routes.
#[derive(Debug, Default)]
struct Ledger {
    refunds: BTreeMap<String, Refund>,
    next_delay: Option<Duration>,
}

/// The state behind the routes.
#[derive(Debug, Clone, Default)]
pub struct Payments {
    ledger: Arc<Mutex<Ledger>>,
}

impl Payments {
    /// Every idempotency key seen and what it refunded.
    pub fn refunds(&self) -> BTreeMap<String, Refund> {
        self.ledger().refunds.clone()
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        // The ledger holds plain data: a panic elsewhere leaves it consistent.
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The stand-in's routes.
pub fn router(payments: Payments) -> axum::Router {
    axum::Router::new()
        .route("/refunds", post(refund).get(list))
        .route("/orders/lookup", post(lookup))
        .route("/delay-next-refund", post(delay_next))
        .with_state(payments)
}

#[derive(Debug, Deserialize)]
struct RefundRequest {
    order_id: String,
    amount_cents: u64,
}

fn refused(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

async fn refund(State(payments): State<Payments>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let Some(key) = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
    else {
        return refused(StatusCode::BAD_REQUEST, "an Idempotency-Key header is required");
    };
    let Ok(request) = serde_json::from_slice::<RefundRequest>(&body) else {
        return refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the body must be {\"order_id\": string, \"amount_cents\": integer}",
        );
    };
    let delay = payments.ledger().next_delay.take();
    if let Some(delay) = delay {
        eprintln!("payments stand-in: answering the next refund in {} s", delay.as_secs());
        tokio::time::sleep(delay).await;
    }
    let mut ledger = payments.ledger();
    let refund = ledger.refunds.entry(key.clone()).or_insert_with(|| Refund {
        order_id: request.order_id.clone(),
        amount_cents: request.amount_cents,
        requests: 0,
    });
    refund.requests += 1;
    if refund.requests == 1 {
        eprintln!(
            "payments stand-in: refunded {} cents for order {} (Idempotency-Key {key})",
            refund.amount_cents, refund.order_id
        );
    } else {
        eprintln!(
            "payments stand-in: Idempotency-Key {key} seen again ({} requests); nothing refunded again",
            refund.requests
        );
    }
    let confirmation = format!("Refunded {} cents for order {}", refund.amount_cents, refund.order_id);
    Json(Value::String(confirmation)).into_response()
}

async fn list(State(payments): State<Payments>) -> Response {
    Json(payments.refunds()).into_response()
}

#[derive(Debug, Deserialize)]
struct LookupRequest {
    order_id: String,
}

async fn lookup(State(payments): State<Payments>, body: axum::body::Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<LookupRequest>(&body) else {
        return refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the body must be {\"order_id\": string}",
        );
    };
    let refunded: u64 = payments
        .refunds()
        .values()
        .filter(|refund| refund.order_id == request.order_id)
        .map(|refund| refund.amount_cents)
        .sum();
    Json(json!({
        "order_id": request.order_id,
        "items": [{"name": "Desk lamp", "amount_cents": 5900}, {"name": "Bulb", "amount_cents": 1250}],
        "paid_cents": 7150,
        "refunded_cents": refunded,
    }))
    .into_response()
}

#[derive(Debug, Deserialize)]
struct DelayRequest {
    seconds: u64,
}

async fn delay_next(State(payments): State<Payments>, body: axum::body::Bytes) -> Response {
    match serde_json::from_slice::<DelayRequest>(&body) {
        Ok(DelayRequest { seconds }) if seconds <= MAX_DELAY_SECONDS => {
            payments.ledger().next_delay = Some(Duration::from_secs(seconds));
            Json(json!({"next_refund_delay_seconds": seconds})).into_response()
        }
        _ => refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the body must be {\"seconds\": N} with N at most 9",
        ),
    }
}
