//! `POST /v1/graph/invoke` (run, resume, remote results; the whole run answered at once) and
//! `POST /v1/graph/stop`.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use serde_json::{Value, json};
use tenx_engine::ports::{NullEvents, StopKind};
use tenx_engine::{RunOutput, ThreadOwner};

use super::{api_error, caller, headers_and_body, not_authorized, object_or_empty, refuse_others};
use crate::AppState;
use crate::envelope::{ApiError, ApiResult, ok};
use crate::input::{self, Granularity, GraphInput};
use crate::openapi::schemas::{GraphInput as GraphInputDoc, RunResponses, StopRequest};

/// A parsed run request with its thread id fixed, the ownership checked and a place among the
/// caller's runs taken.
pub struct Prepared {
    /// The input.
    pub input: GraphInput,
    /// The thread.
    pub thread_id: String,
    /// Whether the thread is new.
    pub is_new_thread: bool,
    /// The run's place (the per-user cap), held until the run ends.
    pub slot: crate::runs::Slot,
}

/// Reads, parses and checks a run request (the steps invoke and stream share): the caller and
/// the scope, the body, the thread id (a fresh uuid4 when none is given), ownership (D7), the
/// caller's concurrent runs (429 `TOO_MANY_RUNS`).
pub async fn prepare(state: &AppState, request: Request, scope: &str) -> Result<Prepared, ApiError> {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(state, &headers, scope)?;
    let empty = body
        .as_ref()
        .is_none_or(|body| body.as_object().is_some_and(serde_json::Map::is_empty));
    prepare_input(state, identity, &object_or_empty(body))
        .await
        .map_err(|error| if empty { error.of_empty_body() } else { error })
}

/// As [`prepare`], for a caller already verified and a body already read (a WebSocket frame).
pub async fn prepare_input(
    state: &AppState,
    identity: tenx_engine::Identity,
    body: &Value,
) -> Result<Prepared, ApiError> {
    let mut input = input::parse(body, identity)?;
    let thread_id = input
        .request
        .thread_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    input.request.thread_id = Some(thread_id.clone());
    let owner = state
        .engine()
        .thread_owner(&thread_id)
        .await
        .map_err(|error| api_error(state, error))?;
    if let ThreadOwner::Owned(owner) = &owner {
        // D7 before anything about the thread is told: another user's thread is 403, whatever
        // the request carries, unless it answers a question the caller may answer.
        if state.auth_on()
            && *owner != input.request.identity.user_id
            && !may_answer_open(state, &thread_id, &input.request).await?
        {
            return Err(not_authorized("invoke"));
        }
        // A thread keeps the graph it was started with: a request on it need not name it.
        if input.request.graph.is_none() {
            input.request.graph = super::thread_graph(state, &thread_id, owner).await?;
        }
    }
    let cap = state
        .auth_on()
        .then_some(state.settings().max_concurrent_runs_per_user)
        .flatten();
    let slot = state.runs().acquire(
        state.engine(),
        &thread_id,
        input.request.identity.user_id.as_deref(),
        cap,
    )?;
    Ok(Prepared {
        input,
        thread_id,
        is_new_thread: owner == ThreadOwner::Missing,
        slot,
    })
}

/// Whether `request` answers the question another user's thread waits at, and its caller may
/// answer it (an approver named by the question's `approvers`), or sends again an answer the
/// caller gave on the thread. Everything else on another
/// user's thread is refused before the engine sees it, so a refusal tells nothing of the
/// question (not its id, nor that the thread waits at one).
async fn may_answer_open(
    state: &AppState,
    thread_id: &str,
    request: &tenx_engine::RunRequest,
) -> Result<bool, ApiError> {
    let Some(resume) = &request.resume else {
        return Ok(false);
    };
    let engine = state.engine();
    if let Some(id) = resume.interrupt_id.as_deref() {
        match engine.approval(id, &request.identity).await {
            Ok(detail) if detail.summary.thread_id == thread_id => return Ok(detail.refused.is_none()),
            Ok(_) => {}
            Err(error) if super::hides_question(&error) => {}
            Err(error) => return Err(api_error(state, error)),
        }
        // The caller's own answer sent again: the engine tells them it was already answered.
        let answered = engine
            .answer_record(thread_id, id)
            .await
            .map_err(|error| api_error(state, error))?;
        if answered.is_some_and(|record| {
            request.identity.user_id.is_some()
                && record.get("answered_by").and_then(Value::as_str) == request.identity.user_id.as_deref()
        }) {
            return Ok(true);
        }
    }
    // No id, or one that is not this thread's open question: whether the caller may answer the
    // question the thread waits at now (then the engine says the id is stale).
    let open = engine
        .approvals(&request.identity, 0, usize::MAX)
        .await
        .map_err(|error| api_error(state, error))?;
    Ok(open.iter().any(|summary| summary.thread_id == thread_id))
}

/// `POST /v1/graph/invoke`.
#[utoipa::path(post, path = "/v1/graph/invoke", tag = "graph",
    summary = "Run, resume (`resume` with `interrupt_id`) or return a remote tool's result; answered when the run ends or pauses",
    request_body = GraphInputDoc, responses(RunResponses), security(("bearer" = ["graph:invoke"])))]
pub async fn invoke(State(state): State<AppState>, request: Request) -> ApiResult {
    let prepared = prepare(&state, request, "graph:invoke").await?;
    let granularity = prepared.input.granularity;
    let done = crate::runs::spawn(&state, prepared.slot, prepared.input.request, NullEvents);
    let limit = state.settings().run_timeout;
    let finished = match limit {
        Some(limit) => tokio::time::timeout(limit, done).await.map_err(|_| timed_out(limit))?,
        None => done.await,
    }
    .map_err(|_| ApiError::http(StatusCode::INTERNAL_SERVER_ERROR, "the run ended without an outcome"))?;
    if finished.timed_out
        && let Some(limit) = limit
    {
        return Err(timed_out(limit));
    }
    let output = finished.outcome.map_err(|error| api_error(&state, error))?;
    Ok(ok(invoke_output(&output, granularity)))
}

/// 504 "Graph run timed out after Ns", as the reference answers a run past `runs.timeout`.
pub fn timed_out(limit: std::time::Duration) -> ApiError {
    ApiError::http(StatusCode::GATEWAY_TIMEOUT, timeout_message(limit))
}

/// The text of a run timeout.
pub fn timeout_message(limit: std::time::Duration) -> String {
    format!("Graph run timed out after {}s", limit.as_secs_f64())
}

/// The invoke response's `data` (reference-api.md §4).
pub fn invoke_output(output: &RunOutput, granularity: Granularity) -> Value {
    let context = match granularity {
        Granularity::Low => Value::Null,
        Granularity::Partial | Granularity::Full => json!(output.thread.context),
    };
    let state = match granularity {
        Granularity::Full => crate::state::agent_state(&output.thread),
        Granularity::Low | Granularity::Partial => Value::Null,
    };
    json!({
        "messages": output.messages,
        "state": state,
        "context": context,
        "summary": null,
        "meta": {"is_new_thread": output.is_new_thread, "thread_id": output.thread_id},
    })
}

/// `POST /v1/graph/stop` `{thread_id}`: asks the thread's run to stop between steps, in this
/// process or in another replica sharing the store (the one holding the thread's lock, which
/// stops it a moment later). `running: true` once the stop was set here or sent there.
#[utoipa::path(post, path = "/v1/graph/stop", tag = "graph", summary = "Stop a thread's run between steps",
    request_body = StopRequest, responses(RunResponses), security(("bearer" = ["graph:stop"])))]
pub async fn stop(State(state): State<AppState>, request: Request) -> ApiResult {
    let (headers, body) = headers_and_body(request).await?;
    let identity = caller(&state, &headers, "graph:stop")?;
    let body = object_or_empty(body);
    let thread_id = match body.get("thread_id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_owned(),
        Some(Value::Number(id)) => id.to_string(),
        _ => {
            return Err(ApiError::invalid_field(
                json!(["body", "thread_id"]),
                "thread_id cannot be empty or whitespace",
                "value_error",
            ));
        }
    };
    if refuse_others(&state, &thread_id, &identity, "stop").await? == ThreadOwner::Missing {
        // A new thread's first run has stored nothing yet. Without auth anyone may stop it, as
        // in the reference; with auth nobody owns it yet, so nobody may (the reference's
        // ownership refuses a stop on an unknown thread too).
        if !state.auth_on() && state.engine().request_stop(&thread_id, StopKind::Cancel).await? {
            return Ok(ok(json!({"ok": true, "running": true})));
        }
        return Ok(ok(json!({"ok": false, "running": false, "reason": "no-state"})));
    }
    if state.engine().request_stop(&thread_id, StopKind::Cancel).await? {
        Ok(ok(json!({"ok": true, "running": true})))
    } else {
        Ok(ok(json!({"ok": true, "running": false, "reason": "not-running"})))
    }
}
