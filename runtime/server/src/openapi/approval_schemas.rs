//! The request bodies of the approvals API, as `/openapi.json` documents them (the handlers in
//! `routes/approvals.rs` read the JSON themselves, with the same rules).

use serde_json::Value;
use utoipa::{IntoResponses, ToSchema};

use super::schemas::{ErrorEnvelope, SuccessEnvelope};

/// `POST /v1/approvals/{interrupt_id}/answer`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "documentation only: the handler reads the JSON itself")]
pub struct ApprovalAnswer {
    /// The answer, exactly as a resume carries it (`{"approved": true}`,
    /// `{"decision": "edit", "edited_arguments": {…}}`, …); `null` cancels.
    #[schema(value_type = Object, nullable)]
    resume: Value,
    /// A note kept in the approval record (a reason for a rejection), at most 2000 characters.
    note: Option<String>,
}

/// `POST /v1/approvals/{interrupt_id}/escalate`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "documentation only: the handler reads the JSON itself")]
pub struct Escalation {
    /// The role that may answer the request from now on (`^[A-Za-z0-9_.:-]{1,64}$`).
    to_role: String,
    /// Why, 1 to 2000 characters.
    note: String,
}

/// `POST /v1/approvals/batch`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "documentation only: the handler reads the JSON itself")]
pub struct BatchApproval {
    /// The requests to approve as shown, in order: only `low` and `medium` risk, at most the
    /// server's `approval_batch_max_count`, amounts adding up to at most
    /// `approval_batch_max_total`.
    interrupt_ids: Vec<String>,
    /// A note kept in each approval record.
    note: Option<String>,
}

/// The answers of the approvals routes.
#[derive(IntoResponses)]
pub enum ApprovalResponses {
    /// The answer.
    #[response(status = 200)]
    Ok(SuccessEnvelope),
    /// Unauthenticated.
    #[response(status = 401)]
    Unauthorized(ErrorEnvelope),
    /// A missing scope, or a user who may not answer (`APPROVER_REFUSED`, `details.rule`).
    #[response(status = 403)]
    Forbidden(ErrorEnvelope),
    /// No open request has this id (`APPROVAL_NOT_FOUND`).
    #[response(status = 404)]
    NotFound(ErrorEnvelope),
    /// The request expired (`INTERRUPT_EXPIRED`), the thread is busy, another artifact asked it.
    #[response(status = 409)]
    Conflict(ErrorEnvelope),
    /// A malformed body, an answer against its schema, an invalid edit, escalation or batch.
    #[response(status = 422)]
    Unprocessable(ErrorEnvelope),
    /// The rate limit, or the caller's concurrent runs.
    #[response(status = 429)]
    TooMany(ErrorEnvelope),
    /// The run after the answer failed, or the store.
    #[response(status = 500)]
    Failed(ErrorEnvelope),
}
