//! What a host asks of the engine (a run, a resume) and what it gets back.

use serde_json::{Map, Value};

use crate::Identity;
use crate::thread::ThreadRecord;
use crate::wire::Message;

/// One request to run a thread: a new message, an answer to its open question, or a remote
/// tool's result. The host has already verified the caller; the engine checks everything else.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The graph to run (`None`: the artifact's only graph).
    pub graph: Option<String>,
    /// The thread (`None`: a new thread with a fresh id).
    pub thread_id: Option<String>,
    /// The client's messages: `user` messages, or one `tool` message answering waiting remote
    /// calls.
    pub messages: Vec<Message>,
    /// An answer to the open question, when present (`value: null` cancels).
    pub resume: Option<ResumeAnswer>,
    /// State fields to set before the run starts (validated against the graph's state schema).
    pub initial_state: Map<String, Value>,
    /// The node to start at (`entry` or one of `entries`); `None` for the default.
    pub start_node: Option<String>,
    /// A lower recursion limit for this run (never higher than the engine's).
    pub recursion_limit: Option<u64>,
    /// Who asks.
    pub identity: Identity,
    /// What to do when another run holds the thread.
    pub on_busy: OnBusy,
}

/// An answer to a paused thread's question.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeAnswer {
    /// The answer (`null` cancels).
    pub value: Value,
    /// The question it answers; when given it must be the open one (D1).
    pub interrupt_id: Option<String>,
}

/// What a request does when another run holds its thread (D6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnBusy {
    /// Wait up to the engine's busy timeout, then refuse with `THREAD_BUSY`.
    #[default]
    Wait,
    /// Stop the active run, then run this one.
    Cancel,
}

/// What a run returns.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// The thread.
    pub thread_id: String,
    /// Whether this request created it.
    pub is_new_thread: bool,
    /// The last user message already in context, then the messages this run produced.
    pub messages: Vec<Message>,
    /// The thread as it was committed at the end of the run.
    pub thread: ThreadRecord,
}
