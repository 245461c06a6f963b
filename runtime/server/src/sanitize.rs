//! Production mode's answer to a malformed request (reference-api.md §2): a 422
//! `VALIDATION_ERROR` says "The request data is invalid. Please check your input." with empty
//! `details`, so nothing of the request (or of pydantic's view of it) is echoed back. Every other
//! answer passes unchanged; 5xx texts are replaced where engine errors are mapped
//! ([`crate::routes::api_error`]).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What production says instead of a validation error's text.
pub const INVALID_REQUEST: &str = "The request data is invalid. Please check your input.";

/// The largest error body this reads back (a validation error is a few hundred bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Rewrites a `VALIDATION_ERROR` answer as production gives it.
pub async fn validation_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if response.status() != StatusCode::UNPROCESSABLE_ENTITY || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "the error could not be read").into_response();
    };
    let Ok(mut answer) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    if answer.pointer("/error/code").and_then(Value::as_str) != Some("VALIDATION_ERROR") {
        return Response::from_parts(parts, Body::from(bytes));
    }
    for (path, value) in [
        ("/error/message", json!(INVALID_REQUEST)),
        ("/error/details", json!([])),
        ("/metadata/message", json!(INVALID_REQUEST)),
    ] {
        if let Some(place) = answer.pointer_mut(path) {
            *place = value;
        }
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(answer.to_string()))
}
