//! `/ping`, `/health/live` and `/health/ready` (public; never rate limited). Ready means the
//! artifact is loaded (it is, or the server would not run) and the store answers.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;
use crate::envelope::ok;
use crate::openapi::schemas::{Live, Ready, SuccessEnvelope};

/// `GET /ping` → `"pong"`.
#[utoipa::path(get, path = "/ping", tag = "health", summary = "`pong` in the envelope",
    responses((status = 200, body = SuccessEnvelope)), security(()))]
pub async fn ping() -> Response {
    ok(Value::String("pong".to_owned()))
}

/// `GET /health/live`: the process answers.
#[utoipa::path(get, path = "/health/live", tag = "health", summary = "The process answers (no envelope)",
    responses((status = 200, body = Live)), security(()))]
pub async fn live() -> Response {
    (StatusCode::OK, axum::Json(json!({"status": "live"}))).into_response()
}

/// `GET /health/ready`: no envelope, 200 or 503, as the reference.
#[utoipa::path(get, path = "/health/ready", tag = "health", summary = "Ready when the store answers (no envelope)",
    responses((status = 200, body = Ready), (status = 503, body = Ready)), security(()))]
pub async fn ready(State(state): State<AppState>) -> Response {
    let store = state.engine().store_ready().await;
    let body = json!({
        "status": if store { "ready" } else { "not_ready" },
        "checks": {
            "checkpointer": if store { "ok" } else { "fail" },
            "artifact": "ok",
            "artifact_id": state.engine().artifact_id(),
        },
    });
    let status = if store {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}
