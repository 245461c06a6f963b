//! What a thread is, as the engine checkpoints it after every step: the conversation, the typed
//! state, where the run is, and what it waits for. Stamped with the artifact that made it.

mod fork;
mod format;
mod in_flight;
mod pending;
mod progress;
mod record;

pub use fork::{AgentCallProgress, BranchRun, BranchStatus, ForkProgress, InnerFork};
pub use format::{CheckpointFormat, UnknownFormat};
pub use in_flight::InFlightCall;
pub use pending::{Escalation, Pending, PendingKind, QueuedCall, Replaced};
pub use progress::{ApprovedStep, Branch, ROOT_BRANCH, RunProgress};
pub use record::{CheckpointError, ThreadRecord};
