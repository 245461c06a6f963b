//! What a host's thread routes need beyond running: who owns a thread (so the API can refuse
//! another user's before a stream starts), listing a user's threads, deleting a thread under its
//! lock, and whether the store answers at all (readiness).

use crate::engine::Engine;
use crate::ports::ThreadSummary;
use crate::{ErrorCode, Identity, RunError};

use super::working::store_error;

/// Who a stored thread belongs to, as [`Engine::thread_owner`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadOwner {
    /// No such thread.
    Missing,
    /// The thread and its owner (`None`: made without auth).
    Owned(Option<String>),
}

impl Engine {
    /// Who owns `thread_id`, read without its lock.
    pub async fn thread_owner(&self, thread_id: &str) -> Result<ThreadOwner, RunError> {
        let record = self.inner.ports.store.load(thread_id).await.map_err(store_error)?;
        Ok(record.map_or(ThreadOwner::Missing, |record| ThreadOwner::Owned(record.owner)))
    }

    /// The caller's threads (every thread without auth), newest first.
    pub async fn threads(
        &self,
        identity: &Identity,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, RunError> {
        let owner = if self.inner.options.auth {
            Some(identity.user_id.as_deref().unwrap_or_default())
        } else {
            None
        };
        self.inner
            .ports
            .store
            .list_threads(owner, offset, limit)
            .await
            .map_err(store_error)
    }

    /// Deletes the caller's thread (its checkpoint and receipts; the records stay), after any
    /// run on it ends: `RESOURCE_NOT_FOUND` for a missing thread and for another user's,
    /// `THREAD_BUSY` when a run holds it past the busy wait.
    pub async fn delete_thread(&self, thread_id: &str, identity: &Identity) -> Result<(), RunError> {
        let inner = &*self.inner;
        let lease = tokio::time::timeout(inner.options.busy_wait, inner.ports.store.lock(thread_id))
            .await
            .map_err(|_| RunError::new(ErrorCode::ThreadBusy, "thread is busy"))?
            .map_err(store_error)?;
        let record = inner.ports.store.load(thread_id).await.map_err(store_error)?;
        let visible = record.is_some_and(|record| !inner.options.auth || record.owner == identity.user_id);
        if !visible {
            return Err(RunError::new(ErrorCode::ThreadNotFound, "thread not found"));
        }
        inner.ports.store.delete_thread(thread_id).await.map_err(store_error)?;
        drop(lease);
        Ok(())
    }

    /// Whether the store answers (a read of a thread id no thread can have).
    pub async fn store_ready(&self) -> bool {
        self.inner.ports.store.load("\u{0}readiness-probe").await.is_ok()
    }

    /// Whether callers are authenticated (the engine's `auth` option).
    pub fn auth(&self) -> bool {
        self.inner.options.auth
    }
}
