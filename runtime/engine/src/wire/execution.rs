//! A thread's execution metadata (reference-api.md §7, `ExecutionState`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a thread's run is and why it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionMeta {
    /// The node the run is at (`__start__` before the first; after a completed run, the node that ran last, as in the reference).
    pub current_node: String,
    /// Steps taken by the current (or last) run.
    pub step: u64,
    /// The run's status.
    pub status: ExecutionStatus,
    /// The node a pause happened in.
    pub interrupted_node: Option<String>,
    /// Why it paused: `interrupt` (an approval or interrupt node), `remote_tool_call`, or
    /// `stop_requested`.
    pub interrupt_reason: Option<String>,
    /// `{"interrupt": InterruptObject}` while paused at a question.
    pub interrupt_data: Option<Value>,
    /// The thread's id.
    pub thread_id: String,
    /// Whether a stop was asked for.
    pub stop_current_execution: StopState,
    /// Engine data the API shows as is (`error` after a failure).
    pub internal_data: Map<String, Value>,
}

impl ExecutionMeta {
    /// The metadata of a thread that has not run yet.
    pub fn new(thread_id: impl Into<String>) -> Self {
        Self {
            current_node: "__start__".to_owned(),
            step: 0,
            status: ExecutionStatus::Running,
            interrupted_node: None,
            interrupt_reason: None,
            interrupt_data: None,
            thread_id: thread_id.into(),
            stop_current_execution: StopState::None,
            internal_data: Map::new(),
        }
    }
}

/// A run's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// Running (or never run).
    Running,
    /// Paused before a node or call: waiting for an answer.
    InterruptedBefore,
    /// Paused after a node: a remote tool call or a stop.
    InterruptedAfter,
    /// Finished at `END`.
    Completed,
    /// Failed.
    Error,
}

/// The stop flag of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopState {
    /// No stop asked.
    None,
    /// A stop was asked and not yet seen.
    StopRequested,
    /// The run stopped.
    Stopped,
}
