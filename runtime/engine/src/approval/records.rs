//! The records every approval decision and every tool call appends (`ports::Record`, kinds
//! `approval` and `tool_call`): who requested, who answered, when, the fingerprint, the
//! decision, the outcome and the idempotency key. Never secrets, never message bodies: the only
//! arguments kept are the normalised arguments (the original and, after an edit, the edited),
//! and a tool's result is never copied in.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ports::{Record, Timestamp};

/// How a question ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOutcome {
    /// Approved as shown: the action runs.
    Approved,
    /// Approved with edited arguments: the edited action runs.
    Edited,
    /// Rejected by the answer.
    Rejected,
    /// Cancelled (`resume: null`).
    Cancelled,
    /// Not answered in time.
    Expired,
    /// Not asked: the same action was rejected earlier in this run, so `on_reject` is returned
    /// without a new question.
    RejectedEarlier,
}

/// One approval decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The question's id (`None` for [`ApprovalOutcome::RejectedEarlier`], never asked).
    pub interrupt_id: Option<String>,
    /// The graph.
    pub graph: String,
    /// The node where the action runs.
    pub node: String,
    /// The tool's declared name.
    pub action: String,
    /// The tool call approved (`None` for a tool node).
    pub tool_call_id: Option<String>,
    /// The package's fingerprint.
    pub fingerprint: String,
    /// The user who started the run.
    pub requested_by: Option<String>,
    /// The user who answered (`None` on expiry, and without auth).
    pub answered_by: Option<String>,
    /// When the question was asked.
    pub asked_at: Timestamp,
    /// When it was answered (`None` on expiry).
    pub answered_at: Option<Timestamp>,
    /// What the answer said: `approve`, `edit`, `reject` or `cancel` (`None` when nobody
    /// answered).
    pub decision: Option<String>,
    /// How it ended.
    pub outcome: ApprovalOutcome,
    /// The idempotency key the approved action runs under (`None` when it does not run).
    pub idempotency_key: Option<String>,
    /// The action as asked: the normalised arguments.
    pub original_arguments: Value,
    /// After an edit, the normalised edited arguments.
    pub edited_arguments: Option<Value>,
    /// After an edit, the fingerprint of the edited action.
    pub edited_fingerprint: Option<String>,
}

impl ApprovalRecord {
    /// The record to append (kind `approval`).
    pub fn into_record(self, thread_id: &str, at: Timestamp) -> Record {
        record(thread_id, at, "approval", &self)
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallOutcome {
    /// It ran and returned a result.
    Completed,
    /// It ran and failed (or its result broke the declared result type).
    Failed,
    /// A repeat of a key already done: the stored result answered, nothing ran.
    Replayed,
    /// Refused before anything ran (a bound argument set by the model, invalid arguments, a
    /// tool outside the node's list).
    Refused,
    /// Its approval was rejected, cancelled or expired: it did not run.
    NotApproved,
    /// A crash interrupted it and it cannot be deduplicated: surfaced, never run again.
    OutcomeUnknown,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The graph.
    pub graph: String,
    /// The node that called it.
    pub node: String,
    /// The tool's declared name (`None` when the model called a name that is no tool).
    pub tool: Option<String>,
    /// The name called (model-facing).
    pub tool_name: String,
    /// The tool call id (a tool node's step id).
    pub call_id: String,
    /// The user who started the run.
    pub requested_by: Option<String>,
    /// The idempotency key it ran under (`None` when it never reached a key).
    pub idempotency_key: Option<String>,
    /// The normalised arguments it ran with (after an edit, the edited ones); `None` when they
    /// never validated (they are then not kept: they may be anything).
    pub arguments: Option<Value>,
    /// The fingerprint of the approval it ran under, if any.
    pub approval_fingerprint: Option<String>,
    /// How it ended.
    pub outcome: ToolCallOutcome,
    /// Why it was refused or failed, in the words shown to the model (never a secret).
    pub reason: Option<String>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended.
    pub finished_at: Timestamp,
}

impl ToolCallRecord {
    /// The record to append (kind `tool_call`).
    pub fn into_record(self, thread_id: &str, at: Timestamp) -> Record {
        record(thread_id, at, "tool_call", &self)
    }
}

fn record(thread_id: &str, at: Timestamp, kind: &str, fields: &impl Serialize) -> Record {
    Record {
        thread_id: thread_id.to_owned(),
        at,
        kind: kind.to_owned(),
        // Plain structs of strings, numbers and JSON values always serialise.
        fields: serde_json::to_value(fields).unwrap_or(Value::Null),
    }
}
