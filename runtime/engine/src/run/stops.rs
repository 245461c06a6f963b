//! Stops that reach a run in another process sharing the store: [`Engine::request_stop`] (the
//! stop route) and [`cancel_anywhere`] (`on_busy = "cancel"`) stop a local run directly and
//! otherwise publish a notice to the holder of the thread's lock
//! ([`Store::publish_stop`](crate::ports::Store::publish_stop)); the engine receives the notices
//! addressed to its own locks as a [`StopHandler`] and stops the run exactly as a local stop
//! does. Nothing here runs per step: a notice sets the flag a local stop sets.

use crate::engine::{Engine, Inner};
use crate::ports::{StopHandler, StopKind, StopNotice};
use crate::{ErrorCode, RunError};

impl Engine {
    /// Asks the run of a thread to stop, wherever it runs: in this process as
    /// [`Engine::stop`] does, or, when another process sharing the store holds the thread's
    /// lock, by a notice to that process (its run stops the same way, a moment later). Whether
    /// a run was reached: `false` when none is in progress anywhere.
    pub async fn request_stop(&self, thread_id: &str, kind: StopKind) -> Result<bool, RunError> {
        let inner = &*self.inner;
        if stop_here(inner, thread_id, kind) {
            return Ok(true);
        }
        inner.ports.store.publish_stop(thread_id, kind).await.map_err(|error| {
            RunError::new(
                ErrorCode::StorageTransient,
                format!("the stop of thread '{thread_id}' could not be sent: {error}"),
            )
        })
    }
}

/// `on_busy = "cancel"`: cancels the thread's run here, or sends the cancel to the process that
/// holds its lock; the request then waits for the lock as any request does. A cancel that
/// cannot be sent leaves the request to wait as `on_busy = "wait"` would.
pub(crate) async fn cancel_anywhere(inner: &Inner, thread_id: &str) {
    if !inner.running.cancel(thread_id) {
        let _sent = inner.ports.store.publish_stop(thread_id, StopKind::Cancel).await;
    }
}

/// Stops the run of `thread_id` in this process. Whether one runs here.
fn stop_here(inner: &Inner, thread_id: &str, kind: StopKind) -> bool {
    match kind {
        StopKind::Cancel => inner.running.cancel(thread_id),
        StopKind::AfterStep => inner.running.stop_after_step(thread_id),
    }
}

impl StopHandler for Inner {
    fn deliver(&self, notice: &StopNotice) -> bool {
        stop_here(self, &notice.thread_id, notice.kind)
    }
}
