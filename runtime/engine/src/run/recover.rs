//! Recovery at start-up: a process that died mid-run (killed, crashed, the machine restarted)
//! left threads whose checkpoint has a run in progress that waits for nothing, some with a call
//! in flight. [`Engine::recover`] finds them (`Store::unfinished`), takes each one's lock and
//! drives the run on from its last checkpoint with the ordinary step loop: a model call is made
//! again (it has no effect outside the thread), and a call in flight is finished through the
//! exactly-once path, which re-sends the same idempotency key when the runner deduplicates and
//! otherwise records `outcome_unknown` and never sends it again.
//!
//! A thread that waits (an open question, a remote call) is left waiting; a thread whose lease
//! another live process keeps renewing is left to it; the run of a thread made by another
//! artifact cannot be continued under a graph that may differ, so it is ended with its data
//! kept (see [`super::retire`]).

use std::time::Duration;

use tokio::task::JoinSet;

use crate::RunError;
use crate::engine::{Engine, Inner};
use crate::ports::{EventSink, ThreadLease};
use crate::wire::ExecutionStatus;

use super::Working;
use super::working::store_error;

/// How many threads' locks are awaited at once (a dead holder's lease expires for all of them
/// at about the same time, so the waits overlap instead of adding up).
const LOCK_BATCH: usize = 32;

/// What [`Engine::recover`] did, thread by thread, in thread-id order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecoveryReport {
    /// Each thread the store named as possibly unfinished.
    pub threads: Vec<RecoveredThread>,
}

impl RecoveryReport {
    /// The outcome for `thread_id`, if the store named it.
    pub fn outcome(&self, thread_id: &str) -> Option<&RecoveryOutcome> {
        self.threads
            .iter()
            .find(|thread| thread.thread_id == thread_id)
            .map(|thread| &thread.outcome)
    }
}

/// One thread's recovery.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveredThread {
    /// The thread.
    pub thread_id: String,
    /// What happened to it.
    pub outcome: RecoveryOutcome,
}

/// What recovery did with one thread.
#[derive(Debug, Clone, PartialEq)]
pub enum RecoveryOutcome {
    /// The run went on and finished (reached `END`, or ended with an `on_reject`).
    Finished,
    /// The run went on and now waits again (a new question or remote call), or was stopped.
    Resumed,
    /// The run went on and failed; the thread keeps the error (`internal_data.error`).
    Failed(RunError),
    /// The run could not go on here and was ended with this error, its data kept: the thread
    /// was made by another artifact (`GRAPH_VERSION_MISMATCH`, D16). Its calls in flight became
    /// `outcome_unknown`, never sent again; a new message starts a new run.
    Ended(RunError),
    /// The thread was left as it is.
    Skipped(SkipReason),
}

/// Why recovery left a thread alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Another holder kept the thread's lock for the whole wait (`EngineOptions::busy_wait`):
    /// a live process is running it.
    Busy,
    /// The run waits for an answer or a remote tool result: only that continues it.
    Waiting,
    /// No run is in progress (it finished, or another process recovered it first).
    NotRunning,
    /// The thread runs a graph this artifact does not serve.
    UnknownGraph,
}

impl Engine {
    /// Continues every run a dead process left unfinished (see the module docs). A host calls
    /// it once at start-up, before it serves requests (later calls are harmless: a thread in
    /// use here or elsewhere is busy, and a finished one is skipped). Each thread's lock is
    /// awaited for at most `EngineOptions::busy_wait`, which must exceed the store's lease
    /// lifetime for a dead holder's lease to be taken over (SQLite: 15 s by default).
    ///
    /// Fails only when the store cannot say which threads to look at; a thread that fails is
    /// reported in its entry and the others go on.
    pub async fn recover(&self, events: &mut dyn EventSink) -> Result<RecoveryReport, RunError> {
        self.recover_within(events, self.inner.options.busy_wait).await
    }

    /// [`Self::recover`], awaiting each thread's lock for at most `wait` instead of
    /// `EngineOptions::busy_wait`. A host whose replicas share one store calls it again and
    /// again while serving, with a short wait: a thread a live process holds is skipped at once
    /// (`Skipped(Busy)`, it is that process's), and a run whose holder died is continued by the
    /// first sweep after its lease has expired, without waiting for any process to restart.
    pub async fn recover_within(&self, events: &mut dyn EventSink, wait: Duration) -> Result<RecoveryReport, RunError> {
        let inner = &*self.inner;
        let ids = inner.ports.store.unfinished().await.map_err(store_error)?;
        let mut report = RecoveryReport::default();
        for batch in ids.chunks(LOCK_BATCH) {
            let mut leases = take_leases(inner, batch, wait).await;
            for thread_id in batch {
                let outcome = match leases.remove(thread_id) {
                    Some(lease) => {
                        let outcome = recover_thread(inner, thread_id, events).await;
                        drop(lease);
                        outcome
                    }
                    None => RecoveryOutcome::Skipped(SkipReason::Busy),
                };
                report.threads.push(RecoveredThread {
                    thread_id: thread_id.clone(),
                    outcome,
                });
            }
        }
        Ok(report)
    }
}

/// Awaits the locks of `ids` together, each for at most `wait`: the ones taken, by thread.
async fn take_leases(
    inner: &Inner,
    ids: &[String],
    wait: Duration,
) -> std::collections::BTreeMap<String, Box<dyn ThreadLease>> {
    let mut waits = JoinSet::new();
    for thread_id in ids {
        let store = inner.ports.store.clone();
        let thread_id = thread_id.clone();
        waits.spawn(async move {
            let lease = tokio::time::timeout(wait, store.lock(&thread_id)).await;
            (thread_id, lease)
        });
    }
    let mut taken = std::collections::BTreeMap::new();
    while let Some(joined) = waits.join_next().await {
        if let Ok((thread_id, Ok(Ok(lease)))) = joined {
            taken.insert(thread_id, lease);
        }
    }
    taken
}

/// Continues one thread's run under its lock, if it is still unfinished.
pub(crate) async fn recover_thread(inner: &Inner, thread_id: &str, events: &mut dyn EventSink) -> RecoveryOutcome {
    let cancel = inner.running.start(thread_id);
    let outcome = go_on(inner, thread_id, events, cancel, false).await;
    inner.running.finish(thread_id);
    outcome
}

/// [`recover_thread`] for a request that meets a run a crash left before recovery did (see
/// [`super::entry`]): the run goes on under the request's `cancel`, which the request registered
/// for itself, so a stop that reaches this part reaches the request. With `ends_once_settled`
/// (`on_busy = "cancel"`), the run settles its calls and stops as a cancelled run stops.
pub(crate) async fn go_on_first(
    inner: &Inner,
    thread_id: &str,
    cancel: tokio_util::sync::CancellationToken,
    ends_once_settled: bool,
) -> RecoveryOutcome {
    // Its events are not the request's.
    go_on(
        inner,
        thread_id,
        &mut crate::ports::NullEvents,
        cancel,
        ends_once_settled,
    )
    .await
}

async fn go_on(
    inner: &Inner,
    thread_id: &str,
    events: &mut dyn EventSink,
    cancel: tokio_util::sync::CancellationToken,
    ends_once_settled: bool,
) -> RecoveryOutcome {
    let record = match inner.ports.store.load(thread_id).await {
        Ok(Some(record)) => record,
        Ok(None) => return RecoveryOutcome::Skipped(SkipReason::NotRunning),
        Err(error) => return RecoveryOutcome::Failed(store_error(error)),
    };
    if record.pending.is_some() {
        return RecoveryOutcome::Skipped(SkipReason::Waiting);
    }
    if record.run.is_none() {
        return RecoveryOutcome::Skipped(SkipReason::NotRunning);
    }
    if record.artifact_id != inner.artifact_id {
        return match super::retire::end_other_artifact(inner, record, events).await {
            Ok(error) => RecoveryOutcome::Ended(error),
            Err(error) => RecoveryOutcome::Failed(error),
        };
    }
    let Some((graph_name, graph)) = inner.artifact.artifact.graphs.get_key_value(&record.graph) else {
        return RecoveryOutcome::Skipped(SkipReason::UnknownGraph);
    };
    let version = record.version;
    let mut working = Working::new(
        inner,
        (graph_name.clone(), graph),
        record,
        Some(version),
        events,
        cancel,
    );
    working.ends_once_settled = ends_once_settled;
    let driven = super::drive::drive(&mut working).await;
    match driven {
        Err(error) => RecoveryOutcome::Failed(error),
        Ok(()) if working.record.execution.status == ExecutionStatus::Completed => RecoveryOutcome::Finished,
        Ok(()) => RecoveryOutcome::Resumed,
    }
}
