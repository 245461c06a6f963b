//! The interrupt object a paused thread shows (reference-api.md §6), as tenx fills it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An open question of a paused thread: an approval of a tool call or an interrupt node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptObject {
    /// `int_` + 32 lowercase hex digits from a CSPRNG; new on every pause.
    pub id: String,
    /// `node:<node>:<n>` for an interrupt node, `tool:<tool_call_id>:<n>` for a tool approval.
    pub key: String,
    /// The node the thread is paused in.
    pub node: String,
    /// What the person is shown: the approval package, or an interrupt node's package/value.
    pub value: Value,
    /// The rendered question.
    pub message: String,
    /// The machine-readable reason (`tool_approval`, `human_review`, or as declared).
    pub reason: String,
    /// The JSON Schema an answer must match.
    pub response_schema: Value,
    /// The tool call this approval is for; `null` for an interrupt node.
    pub tool_call_id: Option<String>,
}
