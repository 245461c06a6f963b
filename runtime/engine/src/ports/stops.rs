//! Stop requests across processes that share one store: what a stop asks ([`StopKind`]), the
//! notice the process running the thread receives ([`StopNotice`]), and the receiver the engine
//! registers with its store ([`StopHandler`]). The store methods that carry them are
//! [`Store::publish_stop`](super::Store::publish_stop) and
//! [`Store::subscribe_stops`](super::Store::subscribe_stops); a store that serves one process
//! (the in-memory one) keeps their defaults, which publish nothing: a local stop reaches a local
//! run directly. What a store that implements them promises is on [`StopNotice`].

use std::fmt;

/// What a stop asks of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopKind {
    /// Cancel: the model or tool call in flight gives up and the run stops before its next step
    /// (`POST /v1/graph/stop`, `on_busy = "cancel"`).
    Cancel,
    /// The step in flight finishes and is checkpointed, then the run stops (a run timeout, a
    /// shutdown).
    AfterStep,
}

impl StopKind {
    /// The name a store keeps: `cancel` or `after_step`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancel => "cancel",
            Self::AfterStep => "after_step",
        }
    }

    /// The kind a store kept ([`StopKind::as_str`]); `None` for a name this build does not know.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "cancel" => Some(Self::Cancel),
            "after_step" => Some(Self::AfterStep),
            _ => None,
        }
    }
}

impl fmt::Display for StopKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A stop request for the run of one thread, as the process holding its lock receives it.
///
/// # The contract a store implements
///
/// - **Addressed to a holding.** `publish_stop` sends the notice to whoever holds the thread's
///   lock *when it is published* (its lease, or whatever identifies that holding), and answers
///   whether anyone held it. No holder: nothing is sent and the answer is `false` (no run is in
///   progress anywhere: the caller answers "not running"). A later holding of the same thread
///   (the next run, in this process or another, e.g. the `on_busy = "cancel"` request that
///   published the notice and then takes the lock) never receives it.
/// - **Read and sent in one step.** Finding the holder and sending must be one statement or
///   transaction, so a lock released in between is not reported held (SQLite: `INSERT … SELECT
///   … FROM locks WHERE thread_id = ? AND expires_at > now`; PostgreSQL with lease rows:
///   `SELECT pg_notify('tenx_stops', <json of thread, kind, holder>) FROM locks WHERE …`, whose
///   row count is the answer).
/// - **Received from before the lock is held.** A store starts receiving for a holding before
///   its lock can be seen as held by a publisher (register the holder id, then take the lock),
///   so a stop published right after the lock was taken is not missed.
/// - **Delivered by the holder's process.** The store in the process that holds the addressed
///   lock calls [`StopHandler::deliver`] on every handler it has (each engine built on it),
///   for notices addressed to a holding it has *now*; other processes ignore them.
/// - **Again until taken.** `deliver` answers whether a run took the stop. A run registers
///   itself a moment after its lock is taken, so while the addressed lock is still held and no
///   handler took the notice, the store delivers it again (at its next poll or wake-up), and
///   forgets it once the lock is released.
/// - **At least once while connected, best effort otherwise.** A receiver that is connected
///   delivers every notice for its holdings at least once (a handler is idempotent: a second
///   delivery to a run already stopping changes nothing). A receiver that was disconnected
///   when a notice was sent may miss it: the run then ends as it would have without the stop.
///   The publisher cannot tell, so it answers as if the stop was set (the reference answers
///   a stop as soon as its flag is set, before the run sees it).
/// - **Prompt.** Within about 100 ms while both processes are up (SQLite polls a `stops` table
///   every 50 ms while it holds leases; PostgreSQL can `NOTIFY` on a channel that every
///   replica `LISTEN`s to, with the thread, kind and holding in the payload, and re-check the
///   holding on receipt).
/// - **Never on the hot path.** A store does no work per step for this; a delivered notice
///   sets the same in-process flag a local stop sets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StopNotice {
    /// The thread whose run is to stop.
    pub thread_id: String,
    /// What the stop asks.
    pub kind: StopKind,
}

/// Receives stop notices. The engine registers one with its store when it is built
/// ([`Store::subscribe_stops`](super::Store::subscribe_stops)); the store keeps it weakly, so
/// an engine that is dropped stops receiving.
pub trait StopHandler: Send + Sync {
    /// Stops the run of `notice.thread_id` in this process, exactly as a local stop does.
    /// Whether a run took it: `false` when none runs the thread here (yet, or any more).
    fn deliver(&self, notice: &StopNotice) -> bool;
}
