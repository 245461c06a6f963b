//! `GET /v1/graph/stream`: the stream for a browser `EventSource`, which can only `GET` and can
//! send neither a body nor headers of its own. The query carries what the `POST` body would:
//! `thread_id`, `text` (one user message), `resume` (the answer, as JSON text), `interrupt_id`,
//! `response_granularity`, `graph`, `recursion_limit`, `on_busy`. The run, its scope
//! (`graph:stream`), ownership and every check are those of `POST /v1/graph/stream`; the answer
//! is always Server-Sent Events, the same chunks and event sequence, each frame with an `id:`.
//!
//! A token is never accepted in the URL (it would land in logs, history and `Referer`): with
//! auth on, the `Authorization` header must come from a same-origin proxy, or the browser
//! streams with `fetch()` and `POST`. An `EventSource` reconnects by itself when a stream ends;
//! its reconnect carries `Last-Event-ID` and is answered 204 No Content, which tells it to stop,
//! so a dropped connection never sends the message again.

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Map, Value, json};

use super::caller;
use super::run::prepare_input;
use super::stream::{Framing, respond, start};
use crate::AppState;
use crate::envelope::{ApiError, ApiResult};
use crate::openapi::schemas::RunResponses;

/// The query parameters the stream reads; anything else is refused.
const KNOWN: &[&str] = &[
    "thread_id",
    "text",
    "resume",
    "interrupt_id",
    "response_granularity",
    "graph",
    "recursion_limit",
    "on_busy",
];

/// Query parameters that would put a credential in the URL.
const CREDENTIALS: &[&str] = &["token", "access_token", "authorization", "bearer", "jwt"];

/// `GET /v1/graph/stream?thread_id&text&resume&interrupt_id&response_granularity&graph&…`.
#[utoipa::path(get, path = "/v1/graph/stream", tag = "graph", operation_id = "event_source_stream",
    summary = "The stream for a browser EventSource: the POST stream's run from query parameters, always Server-Sent Events; never a token in the URL",
    params(
        ("thread_id" = Option<String>, Query, description = "The thread (a new one when absent)"),
        ("text" = Option<String>, Query, description = "One user message's text"),
        ("resume" = Option<String>, Query, description = "The answer to the open question, as JSON text"),
        ("interrupt_id" = Option<String>, Query, description = "The open question's id"),
        ("response_granularity" = Option<String>, Query, description = "low, partial or full"),
        ("graph" = Option<String>, Query, description = "Which graph of the artifact runs"),
        ("recursion_limit" = Option<u64>, Query, description = "Lowers the graph's limit, never raises it"),
        ("on_busy" = Option<String>, Query, description = "wait or cancel"),
    ),
    responses(RunResponses), security(("bearer" = ["graph:stream"])))]
pub async fn stream(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    if headers.contains_key("last-event-id") {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    if let Some(name) = query
        .keys()
        .find(|name| CREDENTIALS.contains(&name.to_ascii_lowercase().as_str()))
    {
        return Err(ApiError::invalid_field(
            json!(["query", name]),
            "a token is never accepted in the URL; send the Authorization header (a same-origin proxy can add it) or stream with fetch() and POST /v1/graph/stream",
            "value_error",
        ));
    }
    if let Some(name) = query.keys().find(|name| !KNOWN.contains(&name.as_str())) {
        return Err(ApiError::invalid_field(
            json!(["query", name]),
            "Unknown query parameter",
            "extra_forbidden",
        ));
    }
    let identity = caller(&state, &headers, "graph:stream")?;
    let body = body_of(&query)?;
    let prepared = prepare_input(&state, identity, &body).await?;
    let chunks = start(&state, prepared).await?;
    Ok(respond(chunks, Framing::EventSource))
}

/// The `POST` body the query stands for.
fn body_of(query: &BTreeMap<String, String>) -> Result<Value, ApiError> {
    let mut body = Map::new();
    if let Some(text) = query.get("text") {
        body.insert(
            "messages".to_owned(),
            json!([{"role": "user", "content": [{"type": "text", "text": text}]}]),
        );
    }
    if let Some(thread_id) = query.get("thread_id") {
        body.insert("config".to_owned(), json!({"thread_id": thread_id}));
    }
    if let Some(resume) = query.get("resume") {
        let value: Value = serde_json::from_str(resume).map_err(|_| {
            ApiError::invalid_field(
                json!(["query", "resume"]),
                "resume must be JSON text (e.g. {\"approved\":true}, or null to cancel)",
                "json_invalid",
            )
        })?;
        body.insert("resume".to_owned(), value);
    }
    if let Some(limit) = query.get("recursion_limit") {
        let limit: i64 = limit.trim().parse().map_err(|_| {
            ApiError::invalid_field(
                json!(["query", "recursion_limit"]),
                "Input should be a valid integer",
                "int_parsing",
            )
        })?;
        body.insert("recursion_limit".to_owned(), json!(limit));
    }
    for name in ["interrupt_id", "response_granularity", "graph", "on_busy"] {
        if let Some(value) = query.get(name) {
            body.insert(name.to_owned(), json!(value));
        }
    }
    Ok(Value::Object(body))
}
