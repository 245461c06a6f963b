//! The ceiling on this machine: a bare axum JSON handler. `POST /v1/graph/invoke` parses the
//! body as JSON and answers a small envelope shaped like a turn's (the user's message echoed
//! and one assistant message), with no engine, store or middleware behind it.

use axum::Json;
use axum::Router;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The handler's router.
pub fn router() -> Router {
    Router::new().route("/v1/graph/invoke", post(invoke))
}

/// Serves [`router`] on `listener` until the process ends.
///
/// # Errors
///
/// The listener fails.
pub async fn serve(listener: TcpListener) -> std::io::Result<()> {
    axum::serve(listener, router()).await
}

async fn invoke(Json(body): Json<Value>) -> Json<Value> {
    let asked = body.get("messages").and_then(|messages| messages.get(0)).cloned();
    Json(json!({
        "data": {
            "messages": [
                asked,
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            ],
            "state": null,
            "context": null,
            "summary": null,
            "meta": {"is_new_thread": true, "thread_id": "bare"},
        },
        "metadata": {"message": "OK", "request_id": "bare"},
    }))
}
