//! A call sent (or about to be sent) whose result is not stored yet: kept in the checkpoint
//! together with its in-flight receipt, so a run that a crash interrupted knows exactly which
//! call to finish, with which arguments (an edit's included) and whether it was approved.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The call a branch is executing, committed with its in-flight marker before it is sent and
/// cleared in the commit that stores its receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InFlightCall {
    /// The node that makes the call (an agent node or a tool node).
    pub node: String,
    /// The declared tool.
    pub tool: String,
    /// The call id (a model's tool call id, or a tool node's `<node>-<step>`).
    pub call_id: String,
    /// The validated, normalised arguments sent (after an edit, the edited ones).
    pub arguments: Value,
    /// Whether a person approved the call (for the record).
    pub approved: bool,
    /// The idempotency key it was sent under: what names the call among the thread's receipts
    /// in flight (two branches can have calls of one tool in flight at once). `None` in a
    /// checkpoint written before the call kept it, and in a call not committed in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}
