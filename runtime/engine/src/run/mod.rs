//! Running a thread: one request in, one run driven step by step until it finishes, pauses or
//! fails, with a checkpoint after every step.
//!
//! The files, in the order a request meets them: [`entry`] (the request: lock, load, ownership,
//! what kind of request it is), [`input`] (client messages: roles, tool calls, remote results,
//! validators), [`start`] (a new run: start node, state, progress), [`answer`] (an answer to the
//! open question), [`drive`] (the step loop and its transitions), [`agent`] (agent nodes: model
//! calls, guards, final answers) and [`input_scope`] (what its model is shown of the
//! conversation), [`calls`] (one tool call of a model: refusals, bound
//! arguments, approvals), [`execute`] (exactly-once execution), [`tool_node`], [`interrupt`],
//! [`pause`] (questions and their packages), [`finish`] (the end of a run: done, failed),
//! [`working`] (the working copy of the thread and its commits), [`fork`] (parallel branches:
//! lanes, their commits and how a fork settles) and [`join`] (merging the branches), [`in_flight`] (the call being
//! sent, committed before it is), [`stopped_fork`] (a stop during a fork keeps the run as a
//! crash would, for the thread's next run), [`recover`] (runs a dead process left unfinished),
//! [`retire`] (ending such a run when another artifact made it), [`abandoned`] (the calls in
//! flight of a run that ends where it stands become `outcome_unknown`) and [`reask`] (`tenxc dev`:
//! asking a question of another artifact again, or withdrawing it). Beside runs: [`writes`]
//! (posting messages, writing and clearing state, deleting messages, under the same checks) and
//! its pure [`write_rules`]; [`stops`] (a stop or `on_busy = "cancel"` reaching a run in another
//! process sharing the store).

mod abandoned;
mod agent;
mod answer;
mod approvals;
mod calls;
mod drive;
mod entry;
mod execute;
mod finish;
mod fork;
mod glue;
mod in_flight;
mod input;
mod input_scope;
mod interrupt;
mod join;
mod pause;
mod read;
mod reask;
mod recover;
mod retire;
mod retry;
mod start;
mod stopped_fork;
mod stops;
mod threads;
mod tool_node;
mod working;
mod write_rules;
mod writes;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

pub(crate) use agent::ToolSpecCache;
pub use approvals::{MAX_NOTE_CHARS, RecordPage};
pub use fork::MAX_NESTING;
pub use reask::{ReaskOutcome, ReaskReport, ReaskedThread};
pub use recover::{RecoveredThread, RecoveryOutcome, RecoveryReport, SkipReason};
pub(crate) use stops::cancel_anywhere;
pub use threads::ThreadOwner;
pub(crate) use working::Working;

/// The runs in progress in this process, by thread: how a `cancel` or a stop reaches them.
/// A stop cancels the run's token (a model or tool call in flight gives up); a stop *after the
/// step* ([`Engine::stop_after_step`]) lets the step in flight finish and be checkpointed, and
/// the run stops before its next one.
#[derive(Debug, Default)]
pub(crate) struct Running {
    tokens: Mutex<HashMap<String, CancellationToken>>,
    after_step: Mutex<HashSet<String>>,
    /// How many runs are in `after_step`: a step reads the set only when one is.
    stopping: AtomicUsize,
}

impl Running {
    /// Registers a run of `thread_id` and returns its cancellation token.
    pub(crate) fn start(&self, thread_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.insert(thread_id.to_owned(), token.clone());
        }
        self.forget_stop_after_step(thread_id);
        token
    }

    /// Forgets the run of `thread_id`.
    pub(crate) fn finish(&self, thread_id: &str) {
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.remove(thread_id);
        }
        self.forget_stop_after_step(thread_id);
    }

    fn forget_stop_after_step(&self, thread_id: &str) {
        if self.stopping.load(Ordering::Acquire) == 0 {
            return;
        }
        if let Ok(mut after_step) = self.after_step.lock()
            && after_step.remove(thread_id)
        {
            self.stopping.store(after_step.len(), Ordering::Release);
        }
    }

    /// Asks the run of `thread_id`, if one is in progress here, to stop once its step in flight
    /// is checkpointed. Whether there was one.
    pub(crate) fn stop_after_step(&self, thread_id: &str) -> bool {
        let running = self.tokens.lock().is_ok_and(|tokens| tokens.contains_key(thread_id));
        if running && let Ok(mut after_step) = self.after_step.lock() {
            after_step.insert(thread_id.to_owned());
            self.stopping.store(after_step.len(), Ordering::Release);
        }
        running
    }

    /// Whether the run of `thread_id` was asked to stop after its step.
    pub(crate) fn stops_after_step(&self, thread_id: &str) -> bool {
        self.stopping.load(Ordering::Acquire) > 0
            && self
                .after_step
                .lock()
                .is_ok_and(|after_step| after_step.contains(thread_id))
    }

    /// Cancels the run of `thread_id`, if one is in progress here. Whether there was one.
    pub(crate) fn cancel(&self, thread_id: &str) -> bool {
        match self.tokens.lock() {
            Ok(tokens) => tokens.get(thread_id).map(CancellationToken::cancel).is_some(),
            Err(_) => false,
        }
    }
}

/// What a node step leads to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Flow {
    /// Go to this node (or `END`).
    Go(String),
    /// Stay in the node the branch is at and go on with it (an agent's turn after one of its
    /// calls was answered): no way out is taken, so no visit is counted.
    Stay,
    /// The run paused (a question or a remote call); the checkpoint is committed.
    Paused,
    /// The run ends here with this final assistant text (a rejection at an interrupt node).
    End(String),
    /// A stop (or a newer request's `cancel`) reached the node between two steps.
    Stopped,
}

/// Why a node failed: the node's error, recorded in the run (`NODE_001`), or routed to its
/// `on_error` handler.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeFailure {
    pub(crate) message: String,
}

impl NodeFailure {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// The outcome of a step inside the loop: a node's own failure can be handled (`on_error`);
/// a run error (the recursion limit, a store failure, an impossible target) ends the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StepError {
    /// The node failed.
    Node(NodeFailure),
    /// The run fails with this error.
    Run(crate::RunError),
}

impl From<crate::RunError> for StepError {
    fn from(error: crate::RunError) -> Self {
        Self::Run(error)
    }
}

impl From<NodeFailure> for StepError {
    fn from(failure: NodeFailure) -> Self {
        Self::Node(failure)
    }
}

#[cfg(test)]
mod tests {
    use super::Running;

    #[test]
    fn a_stop_after_the_step_reaches_only_runs_in_progress_and_ends_with_them() {
        let running = Running::default();
        assert!(!running.stop_after_step("t1"), "nothing runs yet");
        let token = running.start("t1");
        let _other = running.start("t2");
        assert!(!running.stops_after_step("t1"));
        assert!(running.stop_after_step("t1"));
        assert!(running.stops_after_step("t1"));
        assert!(!running.stops_after_step("t2"), "only the run asked");
        assert!(!token.is_cancelled(), "the step in flight is not cancelled");
        running.finish("t1");
        assert!(
            !running.stops_after_step("t1"),
            "a later run of the thread is not stopped"
        );
        let _again = running.start("t1");
        assert!(!running.stops_after_step("t1"));
        assert!(running.stop_after_step("t2"));
        running.finish("t2");
        assert!(!running.stops_after_step("t2"));
    }
}
