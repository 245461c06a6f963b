//! The refund example's two services, stood in for on loopback: `ORDERS_URL` answers
//! `POST /orders/lookup` with a fixed order, `PAYMENTS_URL` answers `POST /refunds` with the
//! refund's confirmation and counts every refund, so the bench can check that each approved
//! cycle moved money exactly once. It runs on its own thread and single-threaded runtime.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

/// The running stand-in.
pub struct StandIn {
    /// Where both services listen.
    pub addr: SocketAddr,
    refunds: Arc<AtomicU64>,
}

impl StandIn {
    /// Binds a free loopback port and serves on a thread of its own.
    ///
    /// # Errors
    ///
    /// The port, the runtime or the thread cannot be had.
    pub fn start() -> Result<Self, String> {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(|error| format!("binding the stand-in: {error}"))?;
        let addr = listener
            .local_addr()
            .map_err(|error| format!("the stand-in's address: {error}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|error| format!("the stand-in's socket: {error}"))?;
        let refunds = Arc::new(AtomicU64::new(0));
        let router = Router::new()
            .route("/orders/lookup", post(lookup))
            .route("/refunds", post(refund))
            .with_state(Arc::clone(&refunds));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| format!("the stand-in's runtime: {error}"))?;
        std::thread::Builder::new()
            .name("stand-in".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let _stopped = axum::serve(listener, router).await;
                });
            })
            .map_err(|error| format!("the stand-in's thread: {error}"))?;
        Ok(Self { addr, refunds })
    }

    /// Refunds asked for so far.
    #[must_use]
    pub fn refunds(&self) -> u64 {
        self.refunds.load(Ordering::Relaxed)
    }
}

async fn lookup(Json(body): Json<Value>) -> Json<Value> {
    Json(json!({"order_id": body.get("order_id"), "paid_cents": 5900, "refunded_cents": 0}))
}

async fn refund(State(refunds): State<Arc<AtomicU64>>, Json(body): Json<Value>) -> Json<Value> {
    refunds.fetch_add(1, Ordering::Relaxed);
    let amount = body.get("amount_cents").cloned().unwrap_or(Value::Null);
    let order = body.get("order_id").and_then(Value::as_str).unwrap_or("?");
    Json(Value::String(format!("Refunded {amount} cents for order {order}")))
}
