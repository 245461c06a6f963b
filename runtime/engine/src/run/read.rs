//! Reading a thread and stopping its run. A read shows an expired question as expired (the
//! outcome is recorded then, never treated as consent); another user's thread reads exactly
//! like a missing one (D7).

use crate::engine::Engine;
use crate::ports::{EventSink, NullEvents};
use crate::thread::ThreadRecord;
use crate::{ErrorCode, Identity, RunError};

use super::Working;
use super::working::store_error;

impl Engine {
    /// The thread, as its owner may read it; `RESOURCE_NOT_FOUND` for a missing thread and for
    /// another user's.
    pub async fn thread(&self, thread_id: &str, identity: &Identity) -> Result<ThreadRecord, RunError> {
        let inner = &*self.inner;
        let record = inner.ports.store.load(thread_id).await.map_err(store_error)?;
        let record = record
            .filter(|record| !inner.options.auth || record.owner == identity.user_id)
            .ok_or_else(not_found)?;
        let expired = record
            .pending
            .as_ref()
            .and_then(|pending| pending.expires_at)
            .is_some_and(|at| inner.ports.clock.now() >= at);
        if !expired {
            return Ok(record);
        }
        let Ok(Ok(lease)) = tokio::time::timeout(inner.options.busy_wait, inner.ports.store.lock(thread_id)).await
        else {
            return Ok(record);
        };
        let Some(record) = inner.ports.store.load(thread_id).await.map_err(store_error)? else {
            return Err(not_found());
        };
        let graph_name = record.graph.clone();
        let Some(graph) = inner.artifact.artifact.graphs.get(&graph_name) else {
            return Ok(record);
        };
        let mut events = NullEvents;
        let events: &mut dyn EventSink = &mut events;
        let stored_version = Some(record.version);
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut working = Working::new(inner, (graph_name, graph), record, stored_version, events, cancel);
        match super::answer::refuse_if_expired(&mut working).await {
            Ok(()) => {}
            Err(error) if error.code == ErrorCode::InterruptExpired => {}
            Err(error) => return Err(error),
        }
        drop(lease);
        Ok(working.record)
    }

    /// Asks the run of a thread in this process to stop between steps. Whether one was running.
    /// [`Engine::request_stop`] also reaches a run in another process sharing the store.
    pub fn stop(&self, thread_id: &str) -> bool {
        self.inner.running.cancel(thread_id)
    }

    /// Asks the run of a thread in this process to stop once the step in flight (a model call,
    /// a tool call) has finished and been checkpointed, without cancelling it: the run then
    /// ends as a stop does. Whether one was running. Hosts use it for run timeouts and to
    /// shut down.
    pub fn stop_after_step(&self, thread_id: &str) -> bool {
        self.inner.running.stop_after_step(thread_id)
    }
}

/// The answer for a missing thread, and for another user's.
fn not_found() -> RunError {
    RunError::new(ErrorCode::ThreadNotFound, "thread not found")
}
