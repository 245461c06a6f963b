//! The thread routes that write (reference-api.md §3): `PUT` and `DELETE
//! /v1/threads/{id}/state`, `POST /v1/threads/{id}/messages`, `DELETE
//! /v1/threads/{id}/messages/{mid}`. The bodies are read here; every rule (roles, validators,
//! paused and busy threads, state versions, ownership) is the engine's, so none of these is a
//! side door around a run's checks. Each body may carry `state_version` (the version the caller
//! read: a mismatch is 409 `STATE_VERSION_MISMATCH`) and `on_busy` (`wait` or `cancel`, as on
//! invoke).

use axum::extract::{Path, Request, State};
use serde_json::{Map, Value, json};
use tenx_engine::{Identity, StateWrite, WriteOptions};

use super::threads::check_thread_id;
use super::{api_error, caller, headers_and_body, required_body};
use crate::AppState;
use crate::envelope::{ApiError, ApiResult, ok};
use crate::input::{messages_at, on_busy_of, refuse_client_tools};
use crate::openapi::schemas::{PostMessagesRequest, PutStateRequest, ReadResponses, ThreadWriteOptions};
use crate::state::agent_state;

/// `PUT /v1/threads/{thread_id}/state` `{state, config?, state_version?, on_busy?}`: the merged
/// state, with its new `state_version`.
#[utoipa::path(put, path = "/v1/threads/{thread_id}/state", tag = "threads",
    summary = "Merge typed fields and append context through a run's checks; refused on paused and busy threads",
    params(("thread_id" = String, Path, description = "The thread")), request_body = PutStateRequest,
    responses(ReadResponses), security(("bearer" = ["checkpointer:write"])))]
pub async fn put_state(State(state): State<AppState>, Path(thread_id): Path<String>, request: Request) -> ApiResult {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(&state, &headers, "checkpointer:write")?;
    let body = object(required_body(body)?)?;
    let thread_id = check_thread_id(&thread_id)?;
    let options = options(&body, identity)?;
    let mut sent = match body.get("state") {
        Some(Value::Object(sent)) => sent.clone(),
        None => {
            return Err(ApiError::invalid_field(
                json!(["body", "state"]),
                "Field required",
                "missing",
            ));
        }
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "state"]),
                "Input should be a valid dictionary",
                "dict_type",
            ));
        }
    };
    let context = messages_at(sent.get("context"), &["body", "state", "context"])?;
    sent.remove("context");
    let write = StateWrite {
        execution_meta: sent.remove("execution_meta"),
        context_summary: sent.remove("context_summary"),
        fields: sent,
        context,
    };
    let record = state
        .engine()
        .put_state(thread_id, write, &options)
        .await
        .map_err(|error| api_error(&state, error))?;
    Ok(ok(
        json!({"state": agent_state(&record), "state_version": record.version}),
    ))
}

/// `DELETE /v1/threads/{thread_id}/state` (a body is optional: `{config?, state_version?,
/// on_busy?}`).
#[utoipa::path(delete, path = "/v1/threads/{thread_id}/state", tag = "threads",
    summary = "Clear the typed fields and the conversation (the thread, its records and receipts stay)",
    params(("thread_id" = String, Path, description = "The thread")), request_body(content = ThreadWriteOptions, description = "Optional"),
    responses(ReadResponses), security(("bearer" = ["checkpointer:delete"])))]
pub async fn clear_state(State(state): State<AppState>, Path(thread_id): Path<String>, request: Request) -> ApiResult {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(&state, &headers, "checkpointer:delete")?;
    let body = object(body.unwrap_or_else(|| Value::Object(Map::new())))?;
    let thread_id = check_thread_id(&thread_id)?;
    let options = options(&body, identity)?;
    state
        .engine()
        .clear_state(thread_id, &options)
        .await
        .map_err(|error| api_error(&state, error))?;
    Ok(ok(
        json!({"success": true, "message": "State cleared successfully", "data": true}),
    ))
}

/// `POST /v1/threads/{thread_id}/messages` `{messages (non-empty), metadata?, config?,
/// state_version?, on_busy?}`: appends the messages without running the graph. `metadata` is
/// accepted as the reference accepts it (an object) and not kept.
#[utoipa::path(post, path = "/v1/threads/{thread_id}/messages", tag = "threads",
    summary = "Append user messages without running the graph (roles, validators, paused and busy threads checked)",
    params(("thread_id" = String, Path, description = "The thread")), request_body = PostMessagesRequest,
    responses(ReadResponses), security(("bearer" = ["checkpointer:write"])))]
pub async fn post_messages(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    request: Request,
) -> ApiResult {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(&state, &headers, "checkpointer:write")?;
    let body = object(required_body(body)?)?;
    let thread_id = check_thread_id(&thread_id)?;
    refuse_client_tools(&body)?;
    let options = options(&body, identity)?;
    if !matches!(body.get("metadata"), None | Some(Value::Null | Value::Object(_))) {
        return Err(ApiError::invalid_field(
            json!(["body", "metadata"]),
            "Input should be a valid dictionary",
            "dict_type",
        ));
    }
    let messages = match body.get("messages") {
        None | Some(Value::Null) => {
            return Err(ApiError::invalid_field(
                json!(["body", "messages"]),
                "Field required",
                "missing",
            ));
        }
        given => messages_at(given, &["body", "messages"])?,
    };
    if messages.is_empty() {
        return Err(ApiError::invalid_field(
            json!(["body", "messages"]),
            "List should have at least 1 item after validation, not 0",
            "too_short",
        ));
    }
    state
        .engine()
        .post_messages(thread_id, messages, &options)
        .await
        .map_err(|error| api_error(&state, error))?;
    Ok(ok(
        json!({"success": true, "message": "Messages put successfully", "data": true}),
    ))
}

/// `DELETE /v1/threads/{thread_id}/messages/{message_id}` with a JSON body (`{"config": {}}`;
/// required, as in the reference).
#[utoipa::path(delete, path = "/v1/threads/{thread_id}/messages/{message_id}", tag = "threads",
    summary = "Delete one message (never half of a tool exchange)",
    params(("thread_id" = String, Path, description = "The thread"), ("message_id" = String, Path, description = "The message")),
    request_body = ThreadWriteOptions, responses(ReadResponses), security(("bearer" = ["checkpointer:delete"])))]
pub async fn delete_message(
    State(state): State<AppState>,
    Path((thread_id, message_id)): Path<(String, String)>,
    request: Request,
) -> ApiResult {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(&state, &headers, "checkpointer:delete")?;
    let body = object(required_body(body)?)?;
    let thread_id = check_thread_id(&thread_id)?;
    let options = options(&body, identity)?;
    state
        .engine()
        .delete_message(thread_id, &message_id, &options)
        .await
        .map_err(|error| api_error(&state, error))?;
    Ok(ok(json!({"success": true, "message": "Message deleted successfully"})))
}

/// A body that must be a JSON object.
fn object(body: Value) -> Result<Map<String, Value>, ApiError> {
    match body {
        Value::Object(body) => Ok(body),
        _ => Err(ApiError::invalid_field(
            json!(["body"]),
            "Input should be a valid dictionary or object to extract fields from",
            "model_attributes_type",
        )),
    }
}

/// The write's options: `config` (an object when given), `state_version`, `on_busy`.
fn options(body: &Map<String, Value>, identity: Identity) -> Result<WriteOptions, ApiError> {
    if !matches!(body.get("config"), None | Some(Value::Null | Value::Object(_))) {
        return Err(ApiError::invalid_field(
            json!(["body", "config"]),
            "Input should be a valid dictionary",
            "dict_type",
        ));
    }
    let expected_version = match body.get("state_version") {
        None | Some(Value::Null) => None,
        Some(Value::Number(number)) if number.as_u64().is_some() => number.as_u64(),
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "state_version"]),
                "Input should be a non-negative integer",
                "int_type",
            ));
        }
    };
    Ok(WriteOptions {
        identity,
        on_busy: on_busy_of(body)?,
        expected_version,
    })
}
