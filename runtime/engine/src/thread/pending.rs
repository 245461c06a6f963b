//! What a paused run waits for.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ports::Timestamp;
use crate::wire::InterruptObject;

/// A paused run's open question or awaited result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// What is awaited.
    pub kind: PendingKind,
    /// The question shown (`None` for a remote tool call).
    pub interrupt: Option<InterruptObject>,
    /// When the question lapses.
    pub expires_at: Option<Timestamp>,
    /// The package's fingerprint, `sha256:<64 hex>`.
    pub fingerprint: Option<String>,
    /// When the run paused.
    pub asked_at: Timestamp,
    /// The thread's state version the package was built at (a fingerprint input).
    pub state_version: u64,
    /// The hash of the package's fingerprint inputs without `expires_at`: a rejection of this
    /// action is remembered under it for the rest of the run.
    pub rejection_key: Option<String>,
    /// The question this one replaces: asked again because what the person would approve
    /// changed (the program, or the action since it was approved). The console shows the
    /// difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<Replaced>,
    /// Who the question was handed to, when someone who could answer escalated it: only holders
    /// of that role may answer it now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// The path of the parallel branch that asked, when the question was asked inside a fork:
    /// the answer continues that branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When the question was asked in a fork nested inside that branch: the paths of the
    /// branches below it, outermost first (forks nest, see [`super::InnerFork`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<String>,
}

/// A question that was withdrawn and asked again, as the person was shown it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replaced {
    /// Its interrupt id.
    pub interrupt_id: String,
    /// Its package's fingerprint.
    pub fingerprint: Option<String>,
    /// Its rendered question.
    pub message: String,
    /// Its package (the interrupt's `value`).
    pub value: Value,
}

impl Replaced {
    /// The question `pending` shows, as the question that replaces it keeps it; `None` when it
    /// shows none (a remote tool call).
    pub fn of(pending: &Pending) -> Option<Self> {
        let interrupt = pending.interrupt.as_ref()?;
        Some(Self {
            interrupt_id: interrupt.id.clone(),
            fingerprint: pending.fingerprint.clone(),
            message: interrupt.message.clone(),
            value: interrupt.value.clone(),
        })
    }
}

/// A question handed to another role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// The role that may answer it now.
    pub to_role: String,
    /// Why, in the escalating person's words.
    pub note: String,
    /// Who escalated it.
    pub by: Option<String>,
    /// When.
    pub at: Timestamp,
}

/// The kinds of pause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PendingKind {
    /// A tool call of an agent node waits for its approval.
    ToolApproval {
        /// The agent node.
        node: String,
        /// The declared tool.
        tool: String,
        /// The call id.
        call_id: String,
        /// The validated, normalised arguments the approval is for.
        arguments: Value,
        /// The calls of the same model turn after this one, still to run in order.
        queued: Vec<QueuedCall>,
    },
    /// An interrupt node waits for its answer.
    InterruptNode {
        /// The interrupt node.
        node: String,
    },
    /// A remote tool call waits for the client's result.
    RemoteTool {
        /// The node that called it.
        node: String,
        /// The declared tool.
        tool: String,
        /// The call id the result must name.
        call_id: String,
        /// The calls of the same model turn after this one.
        queued: Vec<QueuedCall>,
        /// The call's arguments, as the client is asked to run it (a call asked inside a
        /// parallel branch is shown to the client again when the thread pauses on it).
        #[serde(default, skip_serializing_if = "Value::is_null")]
        arguments: Value,
    },
}

/// A tool call of a model turn that has not run yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedCall {
    /// The call id.
    pub id: String,
    /// The model-facing name called.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
}
