//! The checkpoint of one thread.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Pending, RunProgress};
use crate::ports::Timestamp;
use crate::wire::{ExecutionMeta, Message};

/// A thread, whole: what the store keeps and the API reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRecord {
    /// The thread's id.
    pub thread_id: String,
    /// The id of the artifact that made the thread (D16): a resume under another is refused.
    pub artifact_id: String,
    /// The graph the thread runs.
    pub graph: String,
    /// The user who created the thread (`None` without auth).
    pub owner: Option<String>,
    /// The state version: every change of state, messages or pending calls moves it by one.
    pub version: u64,
    /// When the thread was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// The graph's typed state fields (validated against its `state_schema`).
    pub state: Map<String, Value>,
    /// The conversation, oldest first.
    pub context: Vec<Message>,
    /// Where the run is, as the API shows it.
    pub execution: ExecutionMeta,
    /// What a paused run waits for.
    pub pending: Option<Pending>,
    /// The progress of the current run (`None` between runs).
    pub run: Option<RunProgress>,
    /// With `resume = last_agent`: the agent node the next run starts at.
    pub resume_at: Option<String>,
    /// Each model's position in this thread (a scripted model's turn index), by model name.
    pub model_cursors: BTreeMap<String, Value>,
    /// Models the host replaced (e.g. by a scripted model in a test), by model name.
    pub substitutions: BTreeMap<String, String>,
}
