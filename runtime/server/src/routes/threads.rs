//! The thread routes (reference-api.md §3): list (the caller's threads, paged), get, state,
//! messages, delete. A thread that does not exist and another user's thread answer the same
//! 404 (D7 and the contract's clarification). The routes that write are in
//! [`super::thread_writes`]; every change of a thread goes through the engine's checks.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tenx_engine::thread::ThreadRecord;

use super::{api_error, caller, headers_and_body, required_body};
use crate::AppState;
use crate::envelope::{ApiError, ApiResult, ok, ok_with};
use crate::openapi::schemas::{DeleteThreadRequest, ReadResponses};
use crate::state::{agent_state, summary_info, thread_info};

/// Paging of a list: `offset ≥ 0`, `0 < limit ≤ 1000` (100 by default).
pub(super) fn paging(query: &BTreeMap<String, String>) -> Result<(usize, usize), ApiError> {
    let number = |name: &str| -> Result<Option<i64>, ApiError> {
        match query.get(name) {
            None => Ok(None),
            Some(text) => text.trim().parse::<i64>().map(Some).map_err(|_| {
                ApiError::invalid_field(json!(["query", name]), "Input should be a valid integer", "int_parsing")
            }),
        }
    };
    let offset = number("offset")?.unwrap_or(0);
    let limit = number("limit")?.unwrap_or(100);
    if offset < 0 {
        return Err(ApiError::http(StatusCode::UNPROCESSABLE_ENTITY, "offset must be >= 0"));
    }
    if limit <= 0 {
        return Err(ApiError::http(StatusCode::UNPROCESSABLE_ENTITY, "limit must be > 0"));
    }
    if limit > 1000 {
        return Err(ApiError::http(
            StatusCode::UNPROCESSABLE_ENTITY,
            "limit must be <= 1000",
        ));
    }
    Ok((
        usize::try_from(offset).unwrap_or(usize::MAX),
        usize::try_from(limit).unwrap_or(1000),
    ))
}

/// A path's thread id, trimmed; a blank one is 422 as in the reference.
pub(super) fn check_thread_id(thread_id: &str) -> Result<&str, ApiError> {
    let trimmed = thread_id.trim();
    if trimmed.is_empty() {
        return Err(ApiError::http(
            StatusCode::UNPROCESSABLE_ENTITY,
            "thread_id cannot be empty or whitespace",
        ));
    }
    Ok(trimmed)
}

async fn load(state: &AppState, headers: &HeaderMap, thread_id: &str, scope: &str) -> Result<ThreadRecord, ApiError> {
    let identity = caller(state, headers, scope)?;
    let thread_id = check_thread_id(thread_id)?;
    state
        .engine()
        .thread(thread_id, &identity)
        .await
        .map_err(|error| api_error(state, error))
}

/// `GET /v1/threads?offset&limit&search`: the caller's threads, newest first. `search` keeps
/// the threads whose id contains it.
#[utoipa::path(get, path = "/v1/threads", tag = "threads", summary = "The caller's threads, newest first",
    params(("offset" = Option<u64>, Query, description = "Skip this many (0)"), ("limit" = Option<u64>, Query, description = "At most this many, 1 to 1000 (100)"), ("search" = Option<String>, Query, description = "Keep threads whose id contains this")),
    responses(ReadResponses), security(("bearer" = ["checkpointer:read"])))]
pub async fn list(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    let identity = caller(&state, &headers, "checkpointer:read")?;
    let (offset, limit) = paging(&query)?;
    let engine = state.engine();
    let threads = match query.get("search").filter(|search| !search.is_empty()) {
        None => engine
            .threads(&identity, offset, limit)
            .await
            .map_err(|error| api_error(&state, error))?,
        Some(search) => {
            const PAGE: usize = 1000;
            let mut matching = Vec::new();
            let mut from = 0_usize;
            loop {
                let page = engine
                    .threads(&identity, from, PAGE)
                    .await
                    .map_err(|error| api_error(&state, error))?;
                let done = page.len() < PAGE;
                matching.extend(
                    page.into_iter()
                        .filter(|thread| thread.thread_id.contains(search.as_str())),
                );
                if done || matching.len() >= offset.saturating_add(limit) {
                    break;
                }
                from = from.saturating_add(PAGE);
            }
            matching.into_iter().skip(offset).take(limit).collect()
        }
    };
    let threads: Vec<Value> = threads.iter().map(summary_info).collect();
    Ok(ok(json!({"threads": threads})))
}

/// `GET /v1/threads/{thread_id}`.
#[utoipa::path(get, path = "/v1/threads/{thread_id}", tag = "threads", summary = "ThreadInfo",
    params(("thread_id" = String, Path, description = "The thread")), responses(ReadResponses), security(("bearer" = ["checkpointer:read"])))]
pub async fn read(State(state): State<AppState>, Path(thread_id): Path<String>, headers: HeaderMap) -> ApiResult {
    let record = load(&state, &headers, &thread_id, "checkpointer:read").await?;
    Ok(ok(json!({"thread_data": {"thread": thread_info(&record)}})))
}

/// `GET /v1/threads/{thread_id}/state`: the state dump and, beside it, its `state_version`
/// (what a write may name for optimistic concurrency).
#[utoipa::path(get, path = "/v1/threads/{thread_id}/state", tag = "threads",
    summary = "The state dump (context, execution_meta, the typed fields) and its state_version",
    params(("thread_id" = String, Path, description = "The thread")), responses(ReadResponses), security(("bearer" = ["checkpointer:read"])))]
pub async fn state_of(State(state): State<AppState>, Path(thread_id): Path<String>, headers: HeaderMap) -> ApiResult {
    let record = load(&state, &headers, &thread_id, "checkpointer:read").await?;
    Ok(ok(
        json!({"state": agent_state(&record), "state_version": record.version}),
    ))
}

/// `GET /v1/threads/{thread_id}/messages?offset&limit&search`: the conversation, oldest first;
/// `search` keeps messages whose text contains it.
#[utoipa::path(get, path = "/v1/threads/{thread_id}/messages", tag = "threads", summary = "The conversation, oldest first",
    params(("thread_id" = String, Path, description = "The thread"), ("offset" = Option<u64>, Query, description = "Skip this many (0)"), ("limit" = Option<u64>, Query, description = "At most this many, 1 to 1000 (100)"), ("search" = Option<String>, Query, description = "Keep messages whose text contains this")),
    responses(ReadResponses), security(("bearer" = ["checkpointer:read"])))]
pub async fn messages(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    let (offset, limit) = paging(&query)?;
    let record = load(&state, &headers, &thread_id, "checkpointer:read").await?;
    let search = query.get("search").filter(|search| !search.is_empty());
    let messages: Vec<&tenx_engine::wire::Message> = record
        .context
        .iter()
        .map(|message| &**message)
        .filter(|message| search.is_none_or(|search| message.text_content().contains(search.as_str())))
        .skip(offset)
        .take(limit)
        .collect();
    Ok(ok(json!({"messages": messages})))
}

/// `GET /v1/threads/{thread_id}/messages/{message_id}`: 404 for an unknown id (never the
/// reference's plain-text 500).
#[utoipa::path(get, path = "/v1/threads/{thread_id}/messages/{message_id}", tag = "threads", summary = "One message",
    params(("thread_id" = String, Path, description = "The thread"), ("message_id" = String, Path, description = "The message")),
    responses(ReadResponses), security(("bearer" = ["checkpointer:read"])))]
pub async fn message(
    State(state): State<AppState>,
    Path((thread_id, message_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    let record = load(&state, &headers, &thread_id, "checkpointer:read").await?;
    let found = record.context.iter().find(|message| message.message_id == message_id);
    match found {
        Some(message) => Ok(ok(json!(message))),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "RESOURCE_NOT_FOUND",
            "message not found",
        )),
    }
}

/// `DELETE /v1/threads/{thread_id}` with a JSON body (`{"config": {}}`; required, as in the
/// reference). Waits for a run on the thread to end.
#[utoipa::path(delete, path = "/v1/threads/{thread_id}", tag = "threads",
    summary = "Delete a thread (waits for its run to end)",
    params(("thread_id" = String, Path, description = "The thread")), request_body = DeleteThreadRequest, responses(ReadResponses), security(("bearer" = ["checkpointer:delete"])))]
pub async fn delete(State(state): State<AppState>, Path(thread_id): Path<String>, request: Request) -> ApiResult {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(&state, &headers, "checkpointer:delete")?;
    required_body(body)?;
    let thread_id = check_thread_id(&thread_id)?;
    state
        .engine()
        .delete_thread(thread_id, &identity)
        .await
        .map_err(|error| api_error(&state, error))?;
    if let Some(metrics) = state.metrics() {
        metrics.forget_thread(thread_id);
    }
    Ok(ok_with(
        json!({"success": true, "message": "Thread deleted successfully", "data": true}),
        "OK",
    ))
}
