//! What a host asks of the engine (a run, a resume) and what it gets back.

use std::sync::Arc;

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
    /// The answering person's note (a reason for a rejection, say), kept in the approval
    /// record. Bounded by the host.
    pub note: Option<String>,
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
    /// The last user message already in context, then the messages this run produced (shared
    /// with `thread`'s conversation).
    pub messages: Vec<Arc<Message>>,
    /// The thread as it was committed at the end of the run.
    pub thread: ThreadRecord,
}

/// How a thread write (posting messages, putting or clearing state, deleting a message) meets
/// the thread: who asks, what to do when a run holds it, and the state version the caller read.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Who asks (the thread's owner, when auth is on).
    pub identity: Identity,
    /// What to do when another run holds the thread, as for a run.
    pub on_busy: OnBusy,
    /// The thread's `state_version` the caller expects (optimistic concurrency); `None` writes
    /// over whatever version the thread has.
    pub expected_version: Option<u64>,
}

/// A client's change of a thread's state (`PUT /v1/threads/{id}/state`), split by what each
/// part may do: typed fields are merged, `context` appends, and the engine's own parts may only
/// be sent back unchanged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateWrite {
    /// Typed state fields: merged into the thread's (objects deep-merged, `null` ignored), then
    /// checked against the graph's state schema.
    pub fields: Map<String, Value>,
    /// Messages to append to the conversation (client messages: the checks of a new message).
    /// Messages the thread already holds, unchanged, are skipped.
    pub context: Vec<Message>,
    /// `execution_meta` as sent: only the thread's own, unchanged, is accepted.
    pub execution_meta: Option<Value>,
    /// `context_summary` as sent: only `null` is accepted (tenx keeps no summary).
    pub context_summary: Option<Value>,
}
