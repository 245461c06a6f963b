//! The checkpoint of one thread.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CheckpointFormat, Pending, RunProgress, UnknownFormat};
use crate::ports::{StoreError, Timestamp};
use crate::wire::{ExecutionMeta, Message};

/// A thread, whole: what the store keeps and the API reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRecord {
    /// The checkpoint format it was read in (a new record's: the current one); it is always
    /// written in the current format, and a newer one is refused when read
    /// ([`CheckpointFormat`]). Checkpoints from before formats were numbered read as format 1.
    #[serde(default = "CheckpointFormat::unnumbered")]
    pub format: CheckpointFormat,
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
    /// The conversation, oldest first. Each message is shared and never changed in place: a copy
    /// of the thread (a branch's working copy, a run's output) shares it, and a change makes its
    /// own (`Arc::make_mut`).
    pub context: Vec<Arc<Message>>,
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
    /// The run a stop ended while it was split into branches (a fork at any depth), kept as a
    /// crash at that moment keeps it: its fork, each branch's progress and messages, a call cut
    /// short still in flight in its branch. It is not a run in progress (nothing goes on with
    /// it by itself, recovery included); the thread's next run goes on with it
    /// (`run/stopped_fork.rs`). `None` otherwise. An older tenx ignores it and reads the thread
    /// as one whose stopped fork was dropped, as it would have left it itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_run: Option<Box<RunProgress>>,
}

/// Why a checkpoint stored as JSON could not be read back.
#[derive(Debug)]
pub enum CheckpointError {
    /// It is in a format this tenx does not read (a newer tenx wrote it).
    Format(UnknownFormat),
    /// It is not a checkpoint this tenx wrote, or it was changed.
    Damaged(serde_json::Error),
}

impl CheckpointError {
    /// The store's error for the checkpoint `what` names (`the stored thread 't1'`).
    pub fn stored(self, what: &str) -> StoreError {
        match self {
            Self::Format(unknown) => StoreError::Failed(format!("{what} cannot be read: {unknown}")),
            Self::Damaged(error) => StoreError::Failed(format!("{what} is damaged: {error}")),
        }
    }
}

impl ThreadRecord {
    /// A checkpoint stored as JSON (as the SQL stores keep it), read back. One in a format this
    /// tenx does not read is refused as such, not as damaged, even when a newer format's fields
    /// would not decode here.
    pub fn from_json(text: &str) -> Result<Self, CheckpointError> {
        serde_json::from_str(text).map_err(|error| {
            /// Only the format, every other field skipped.
            #[derive(Deserialize)]
            struct FormatOnly {
                #[serde(default)]
                format: Option<u64>,
            }
            match serde_json::from_str::<FormatOnly>(text) {
                Ok(FormatOnly { format: Some(number) }) => match CheckpointFormat::read(number) {
                    Err(unknown) => CheckpointError::Format(unknown),
                    Ok(_) => CheckpointError::Damaged(error),
                },
                _ => CheckpointError::Damaged(error),
            }
        })
    }
}
