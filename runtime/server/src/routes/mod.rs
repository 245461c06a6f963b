//! The handlers of the standard API, one file per group: [`health`] (`/ping`, `/health/*`),
//! [`run`] (invoke, stop), [`stream`] (`/v1/graph/stream`), [`introspect`] (`/v1/graph`, its
//! tools and state schema), [`ws`] (`/v1/graph/ws`), [`threads`] (the thread routes), [`unconfigured`] (store and file
//! routes, which answer 503 as the reference does without a store). Every route is mounted from
//! one table, [`table`], which `/openapi.json` is generated from too. Shared here: reading a
//! body within the limit, the caller, and the ownership check (D7).
//! Beside them: [`event_source`] (the `GET` stream), [`thread_writes`] (the thread writes),
//! [`approvals`] and [`approval_records`] (the approvals API the console reads), and
//! [`console`] (the approval console's page and files).

pub mod approval_records;
pub mod approvals;
pub mod console;
pub mod event_source;
pub mod health;
pub mod introspect;
pub mod run;
pub mod stream;
pub mod table;
pub mod thread_writes;
pub mod threads;
pub mod unconfigured;
pub mod ws;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tenx_engine::{ErrorCode, Identity, RunError, ThreadOwner};

use crate::AppState;
use crate::envelope::ApiError;
use crate::middleware::{BodyLimit, too_large};

/// Every route these settings mount ([`table::table`]).
pub fn routes(settings: &crate::ServerSettings) -> Router<AppState> {
    table::router(table::table(settings))
}

/// The body of `request` as JSON, read within the body limit: 413 past it, 422
/// `json_invalid` for text that is not JSON, `None` for an empty body.
pub async fn body(request: Request) -> Result<Option<Value>, ApiError> {
    let limit = request
        .extensions()
        .get::<BodyLimit>()
        .copied()
        .unwrap_or(BodyLimit(10 * 1024 * 1024));
    let limited = http_body_util::Limited::new(request.into_body(), limit.0);
    let bytes = match limited.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            return Err(too_large(limit.0));
        }
        Err(_) => {
            return Err(ApiError::http(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            ));
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&bytes).map(Some).map_err(|error| {
        ApiError::invalid_field(
            json!(["body", json_error_position(&bytes, &error)]),
            "JSON decode error",
            "json_invalid",
        )
    })
}

/// Where a body stops being JSON, as pydantic's `json_invalid` says it: the 0-based character
/// position of the token that failed (serde names the line and column where it noticed, which
/// for a word such as `not` is past its first letter).
fn json_error_position(bytes: &[u8], error: &serde_json::Error) -> usize {
    let text = String::from_utf8_lossy(bytes);
    let line_start: usize = text
        .split_inclusive('\n')
        .take(error.line().saturating_sub(1))
        .map(|line| line.chars().count())
        .sum();
    let chars: Vec<char> = text.chars().collect();
    let mut position = line_start
        .saturating_add(error.column().saturating_sub(1))
        .min(chars.len());
    while position > 0 && chars.get(position - 1).is_some_and(char::is_ascii_alphabetic) {
        position -= 1;
    }
    position
}

/// Splits a request into its headers and its JSON body.
pub async fn headers_and_body(request: Request) -> Result<(HeaderMap, Option<Value>), ApiError> {
    let headers = request.headers().clone();
    Ok((headers, body(request).await?))
}

/// The verified caller, with the scope a route needs.
pub fn caller(state: &AppState, headers: &HeaderMap, scope: &str) -> Result<Identity, ApiError> {
    let identity = crate::auth::identify(state.verifier(), headers)?;
    crate::auth::require_scope(&identity, scope)?;
    Ok(identity)
}

/// D7 for invoke, stream and stop: another user's thread is 403 `Not authorized to <action>
/// graph`. A missing thread passes (invoke creates it).
pub async fn refuse_others(
    state: &AppState,
    thread_id: &str,
    identity: &Identity,
    action: &str,
) -> Result<ThreadOwner, ApiError> {
    let owner = state
        .engine()
        .thread_owner(thread_id)
        .await
        .map_err(|error| api_error(state, error))?;
    if state.auth_on()
        && let ThreadOwner::Owned(owner) = &owner
        && *owner != identity.user_id
    {
        return Err(not_authorized(action));
    }
    Ok(owner)
}

/// D7's refusal of another user's thread: 403 `Not authorized to <action> graph`, the
/// reference's authorization denial, an `HTTPException` (reference-api.md §11).
pub fn not_authorized(action: &str) -> ApiError {
    ApiError::http(StatusCode::FORBIDDEN, format!("Not authorized to {action} graph"))
}

/// Whether an engine refusal of a question lookup says only that the caller may not have it
/// (unknown, answered, or not theirs to answer), as opposed to a failure to report.
pub fn hides_question(error: &RunError) -> bool {
    matches!(
        error.code,
        ErrorCode::ApprovalNotFound | ErrorCode::ApproverRefused | ErrorCode::NotAuthorized
    )
}

/// The graph the existing thread `thread_id` runs, when the artifact serves several (`None`
/// with one graph, when the request need not name it, or when the thread is gone). Read only
/// for a request already allowed on the thread: the engine's read is its owner's.
pub async fn thread_graph(
    state: &AppState,
    thread_id: &str,
    owner: &Option<String>,
) -> Result<Option<String>, ApiError> {
    let engine = state.engine();
    if engine.artifact().artifact.graphs.len() < 2 {
        return Ok(None);
    }
    let as_owner = Identity {
        user_id: owner.clone(),
        ..Identity::default()
    };
    match engine.thread(thread_id, &as_owner).await {
        Ok(record) => Ok(Some(record.graph)),
        Err(error) if error.code == ErrorCode::ThreadNotFound => Ok(None),
        Err(error) => Err(api_error(state, error)),
    }
}

/// An engine error as the API answers it; production hides internal detail of 5xx errors.
pub fn api_error(state: &AppState, error: RunError) -> ApiError {
    let mut api = ApiError::from(error);
    if state.settings().mode == crate::Mode::Production && api.status.is_server_error() {
        api.message = production_message(&api.code).to_owned();
        api.details = Vec::new();
    }
    api
}

/// What production mode says instead of an internal error's text (reference-api.md §2).
pub fn production_message(code: &str) -> &'static str {
    if code.starts_with("NODE_") {
        "An error occurred in a graph node."
    } else if code.starts_with("GRAPH_") {
        "An error occurred executing the graph."
    } else if code.starts_with("STORAGE_") {
        "An error occurred accessing storage."
    } else {
        "An unexpected error occurred. Please contact support."
    }
}

/// An empty body is `{}`.
pub fn object_or_empty(body: Option<Value>) -> Value {
    body.unwrap_or_else(|| Value::Object(serde_json::Map::new()))
}

/// A body that must be present (the reference's `body: Field required`, whose message is
/// "Validation error" as for every empty body).
pub fn required_body(body: Option<Value>) -> Result<Value, ApiError> {
    body.ok_or_else(|| ApiError::invalid_field(json!(["body"]), "Field required", "missing").of_empty_body())
}
