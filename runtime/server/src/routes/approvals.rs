//! The approvals API: the open requests the caller may answer across threads (oldest first),
//! one request whole, answering it (a resume with its `interrupt_id`, under the same rules),
//! escalating it to another role, and approving several low- or medium-risk requests at once
//! within the server's caps. Who may answer is the engine's decision
//! (`tenx_engine::Engine::approvals`); a refused answer records nothing. The approval record
//! is read through [`super::approval_records`].

use std::collections::BTreeMap;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};
use tenx_engine::approval::{BatchLimits, check_batch};
use tenx_engine::ports::NullEvents;
use tenx_engine::{ErrorCode, Identity, MAX_NOTE_CHARS, ResumeAnswer, RunRequest, ThreadOwner};

use super::{api_error, body, caller};
use crate::AppState;
use crate::envelope::{ApiError, ApiResult, ok};
use crate::openapi::approval_schemas::{ApprovalAnswer, ApprovalResponses, BatchApproval, Escalation};

/// The scope of the reading routes.
pub const READ_SCOPE: &str = "approvals:read";
/// The scope of the answering routes.
pub const ANSWER_SCOPE: &str = "approvals:answer";

/// The batch caps these settings give.
pub fn batch_limits(state: &AppState) -> BatchLimits {
    let batch = state.settings().approval_batch;
    BatchLimits {
        max_count: batch.max_count,
        #[expect(clippy::cast_precision_loss, reason = "a cap on amounts far below 2^53")]
        max_total: batch.max_total as f64,
    }
}

/// `GET /v1/approvals?offset&limit`.
#[utoipa::path(get, path = "/v1/approvals", operation_id = "list_approvals", tag = "approvals",
    summary = "The open requests the caller may answer, across threads, oldest first",
    params(("offset" = Option<u64>, Query, description = "Skip this many (0)"), ("limit" = Option<u64>, Query, description = "At most this many, 1 to 1000 (100)")),
    responses(ApprovalResponses), security(("bearer" = ["approvals:read"])))]
pub async fn list(
    State(state): State<AppState>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    let identity = caller(&state, &headers, READ_SCOPE)?;
    let (offset, limit) = super::threads::paging(&query)?;
    let approvals = state
        .engine()
        .approvals(&identity, offset, limit)
        .await
        .map_err(|error| api_error(&state, error))?;
    let limits = batch_limits(&state);
    Ok(ok(json!({
        "anyone_may_approve": !state.auth_on(),
        "server_time_ms": jiff::Timestamp::now().as_millisecond(),
        "batch": {"max_count": limits.max_count, "max_total": limits.max_total},
        "approvals": approvals,
    })))
}

/// A path's interrupt id, trimmed; a blank one is 422.
fn check_id(interrupt_id: &str) -> Result<&str, ApiError> {
    let trimmed = interrupt_id.trim();
    if trimmed.is_empty() {
        return Err(ApiError::http(
            StatusCode::UNPROCESSABLE_ENTITY,
            "interrupt_id cannot be empty or whitespace",
        ));
    }
    Ok(trimmed)
}

/// `GET /v1/approvals/{interrupt_id}`.
#[utoipa::path(get, path = "/v1/approvals/{interrupt_id}", operation_id = "read_approval", tag = "approvals",
    summary = "One open request whole: impact, evidence, the model's words, what changed, who may answer",
    params(("interrupt_id" = String, Path, description = "The request's interrupt id")),
    responses(ApprovalResponses), security(("bearer" = ["approvals:read"])))]
pub async fn read(State(state): State<AppState>, Path(interrupt_id): Path<String>, headers: HeaderMap) -> ApiResult {
    let identity = caller(&state, &headers, READ_SCOPE)?;
    let detail = state
        .engine()
        .approval(check_id(&interrupt_id)?, &identity)
        .await
        .map_err(|error| api_error(&state, error))?;
    Ok(ok(json!(detail)))
}

/// The body as an object of only the `allowed` fields (422 naming an unknown one).
fn object_body(body: Option<Value>, allowed: &[&str]) -> Result<Map<String, Value>, ApiError> {
    let Some(body) = body else {
        return Err(ApiError::invalid_field(json!(["body"]), "Field required", "missing").of_empty_body());
    };
    let Value::Object(object) = body else {
        return Err(ApiError::invalid_field(
            json!(["body"]),
            "Input should be a valid dictionary",
            "dict_type",
        ));
    };
    if let Some(unknown) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(ApiError::invalid_field(
            json!(["body", unknown]),
            "Extra inputs are not permitted",
            "extra_forbidden",
        ));
    }
    Ok(object)
}

/// An optional note: a string of at most [`MAX_NOTE_CHARS`] characters.
fn note_of(object: &Map<String, Value>, required: bool) -> Result<Option<String>, ApiError> {
    match object.get("note") {
        None | Some(Value::Null) if !required => Ok(None),
        Some(Value::String(note)) if note.chars().count() <= MAX_NOTE_CHARS => Ok(Some(note.clone())),
        Some(Value::String(_)) => Err(ApiError::invalid_field(
            json!(["body", "note"]),
            format!("String should have at most {MAX_NOTE_CHARS} characters"),
            "string_too_long",
        )),
        None | Some(Value::Null) => Err(ApiError::invalid_field(
            json!(["body", "note"]),
            "Field required",
            "missing",
        )),
        Some(_) => Err(ApiError::invalid_field(
            json!(["body", "note"]),
            "Input should be a valid string",
            "string_type",
        )),
    }
}

/// The graph an answer to `interrupt_id` runs in: the graph its thread records (an answer never
/// names one). `None` when the artifact serves one graph. Who may not answer is refused here
/// with the engine's own answer, before the thread is read.
async fn answered_graph(
    state: &AppState,
    interrupt_id: &str,
    thread_id: &str,
    identity: &Identity,
) -> Result<Option<String>, ApiError> {
    let engine = state.engine();
    if engine.artifact().artifact.graphs.len() < 2 {
        return Ok(None);
    }
    match engine.approval(interrupt_id, identity).await {
        Ok(detail) => Ok(Some(detail.summary.graph)),
        // Asked under another artifact (or answered meanwhile): the engine's resume says which.
        Err(error) if error.code == ErrorCode::ApprovalNotFound => {
            let owner = match engine
                .thread_owner(thread_id)
                .await
                .map_err(|error| api_error(state, error))?
            {
                ThreadOwner::Owned(owner) => owner,
                ThreadOwner::Missing => return Err(api_error(state, error)),
            };
            if state.auth_on() && owner != identity.user_id {
                return Err(api_error(state, error));
            }
            super::thread_graph(state, thread_id, &owner).await
        }
        Err(error) => Err(api_error(state, error)),
    }
}

/// What an answer led to, as the approvals API reports it.
async fn answer_one(
    state: &AppState,
    interrupt_id: &str,
    value: Value,
    note: Option<String>,
    identity: &Identity,
) -> Result<Value, ApiError> {
    let engine = state.engine();
    let thread_id = engine
        .approval_thread(interrupt_id)
        .await
        .map_err(|error| api_error(state, error))?;
    let graph = answered_graph(state, interrupt_id, &thread_id, identity).await?;
    let cap = state
        .auth_on()
        .then_some(state.settings().max_concurrent_runs_per_user)
        .flatten();
    let slot = state
        .runs()
        .acquire(engine.clone(), &thread_id, identity.user_id.as_deref(), cap)?;
    let request = RunRequest {
        thread_id: Some(thread_id.clone()),
        graph,
        resume: Some(ResumeAnswer {
            value,
            interrupt_id: Some(interrupt_id.to_owned()),
            note,
        }),
        identity: identity.clone(),
        ..RunRequest::default()
    };
    let done = crate::runs::spawn(state, slot, request, NullEvents);
    let limit = state.settings().run_timeout;
    let finished = match limit {
        Some(limit) => tokio::time::timeout(limit, done)
            .await
            .map_err(|_| super::run::timed_out(limit))?,
        None => done.await,
    }
    .map_err(|_| ApiError::http(StatusCode::INTERNAL_SERVER_ERROR, "the run ended without an outcome"))?;
    if finished.timed_out
        && let Some(limit) = limit
    {
        return Err(super::run::timed_out(limit));
    }
    let output = finished.outcome.map_err(|error| api_error(state, error))?;
    let record = engine
        .answer_record(&thread_id, interrupt_id)
        .await
        .map_err(|error| api_error(state, error))?
        .unwrap_or(Value::Null);
    let decision = record.get("decision").and_then(Value::as_str);
    let outcome = match decision {
        Some("approve") => "approved",
        Some("edit") => "edited",
        Some("reject") => "rejected",
        Some("cancel") => "cancelled",
        Some("respond") => "responded",
        _ => "answered",
    };
    let next = output
        .thread
        .pending
        .as_ref()
        .and_then(|pending| pending.interrupt.as_ref())
        .map(|interrupt| interrupt.id.clone());
    let final_text = output
        .messages
        .iter()
        .rev()
        .find(|message| message.role == tenx_engine::wire::Role::Assistant)
        .map(|message| message.text_content())
        .filter(|text| !text.is_empty());
    Ok(json!({
        "thread_id": thread_id,
        "interrupt_id": interrupt_id,
        "outcome": outcome,
        "status": output.thread.execution.status,
        "next_interrupt_id": next,
        "final_text": final_text,
        "record": record,
    }))
}

/// `POST /v1/approvals/{interrupt_id}/answer`.
#[utoipa::path(post, path = "/v1/approvals/{interrupt_id}/answer", operation_id = "answer_approval", tag = "approvals",
    summary = "Answer a request: the same rules as a resume with its `interrupt_id`; a refused answer records nothing",
    params(("interrupt_id" = String, Path, description = "The request's interrupt id")),
    request_body = ApprovalAnswer, responses(ApprovalResponses), security(("bearer" = ["approvals:answer"])))]
pub async fn answer(State(state): State<AppState>, Path(interrupt_id): Path<String>, request: Request) -> ApiResult {
    let headers = request.headers().clone();
    let identity = caller(&state, &headers, ANSWER_SCOPE)?;
    let object = object_body(body(request).await?, &["resume", "note"])?;
    let Some(value) = object.get("resume").cloned() else {
        return Err(ApiError::invalid_field(
            json!(["body", "resume"]),
            "Field required",
            "missing",
        ));
    };
    let note = note_of(&object, false)?;
    let answered = answer_one(&state, check_id(&interrupt_id)?, value, note, &identity).await?;
    Ok(ok(answered))
}

/// `POST /v1/approvals/{interrupt_id}/escalate`.
#[utoipa::path(post, path = "/v1/approvals/{interrupt_id}/escalate", operation_id = "escalate_approval", tag = "approvals",
    summary = "Hand a request to another role with a note; only that role may answer it afterwards",
    params(("interrupt_id" = String, Path, description = "The request's interrupt id")),
    request_body = Escalation, responses(ApprovalResponses), security(("bearer" = ["approvals:answer"])))]
pub async fn escalate(State(state): State<AppState>, Path(interrupt_id): Path<String>, request: Request) -> ApiResult {
    let headers = request.headers().clone();
    let identity = caller(&state, &headers, ANSWER_SCOPE)?;
    let object = object_body(body(request).await?, &["to_role", "note"])?;
    let Some(Value::String(to_role)) = object.get("to_role") else {
        return Err(ApiError::invalid_field(
            json!(["body", "to_role"]),
            "Field required: a role name",
            "missing",
        ));
    };
    let note = note_of(&object, true)?.unwrap_or_default();
    let detail = state
        .engine()
        .escalate(check_id(&interrupt_id)?, to_role, &note, &identity)
        .await
        .map_err(|error| api_error(&state, error))?;
    Ok(ok(json!(detail)))
}

/// `POST /v1/approvals/batch`.
#[utoipa::path(post, path = "/v1/approvals/batch", operation_id = "batch_approve", tag = "approvals",
    summary = "Approve several low- or medium-risk requests as shown, capped in count and total amount; refused whole before anything runs",
    request_body = BatchApproval, responses(ApprovalResponses), security(("bearer" = ["approvals:answer"])))]
pub async fn batch(State(state): State<AppState>, request: Request) -> ApiResult {
    let headers = request.headers().clone();
    let identity = caller(&state, &headers, ANSWER_SCOPE)?;
    let object = object_body(body(request).await?, &["interrupt_ids", "note"])?;
    let ids: Vec<String> = match object.get("interrupt_ids") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                ApiError::invalid_field(
                    json!(["body", "interrupt_ids"]),
                    "Input should be a list of strings",
                    "list_type",
                )
            })?,
        _ => {
            return Err(ApiError::invalid_field(
                json!(["body", "interrupt_ids"]),
                "Field required: a list of interrupt ids",
                "missing",
            ));
        }
    };
    let note = note_of(&object, false)?;
    let limits = batch_limits(&state);
    if ids.len() > limits.max_count {
        return Err(ApiError::from(
            tenx_engine::RunError::new(
                tenx_engine::ErrorCode::BatchRefused,
                format!(
                    "a batch approves at most {} requests; this one has {}",
                    limits.max_count,
                    ids.len()
                ),
            )
            .with_details(json!({"rule": "count"})),
        ));
    }
    // Every request is read first, as the caller may see it: one that cannot be approved
    // refuses the whole batch before anything runs.
    let engine = state.engine();
    let mut summaries = Vec::with_capacity(ids.len());
    for id in &ids {
        let detail = engine
            .approval(id, &identity)
            .await
            .map_err(|error| api_error(&state, error))?;
        if let Some(refusal) = detail.refused.clone() {
            return Err(ApiError::from(
                tenx_engine::RunError::new(tenx_engine::ErrorCode::ApproverRefused, refusal.message)
                    .with_details(json!({"rule": refusal.rule, "interrupt_id": id})),
            ));
        }
        summaries.push(detail.summary);
    }
    check_batch(&summaries, limits).map_err(|error| api_error(&state, error))?;
    let mut results = Vec::with_capacity(summaries.len());
    for summary in summaries {
        let Some(approve) = summary.response.approve_answer() else {
            continue;
        };
        let id = summary.interrupt_id.clone();
        match answer_one(&state, &id, approve, note.clone(), &identity).await {
            Ok(answered) => results.push(json!({"interrupt_id": id, "ok": true, "outcome": answered.get("outcome"), "thread_id": summary.thread_id})),
            Err(error) => results.push(
                json!({"interrupt_id": id, "ok": false, "error": {"code": error.code, "message": error.message}}),
            ),
        }
    }
    Ok(ok(json!({"results": results})))
}
