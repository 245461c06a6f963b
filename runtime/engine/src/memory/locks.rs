//! The per-thread locks of the in-memory store: one tokio [`Mutex`] per locked thread id, held
//! by a [`MemoryLease`]. A waiting `lock` call sleeps until the holder drops its lease (tokio's
//! mutex is fair: waiters are served in order). A lock that nobody holds or waits for is removed,
//! so the table does not grow with the number of threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex, PoisonError};

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::ports::ThreadLease;

/// The lock table.
#[derive(Debug, Default, Clone)]
pub(super) struct Locks {
    table: Arc<StdMutex<HashMap<String, Arc<Mutex<()>>>>>,
}

impl Locks {
    /// Waits for the thread's lock and returns the lease that holds it.
    pub(super) async fn acquire(&self, thread_id: &str) -> MemoryLease {
        let mutex = {
            let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(table.entry(thread_id.to_string()).or_default())
        };
        let guard = mutex.lock_owned().await;
        MemoryLease {
            thread_id: thread_id.to_string(),
            guard: Some(guard),
            locks: self.clone(),
        }
    }

    /// How many threads have a lock entry (held or awaited).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// A held thread lock; dropping it releases the lock and wakes the next waiter.
#[derive(Debug)]
pub(super) struct MemoryLease {
    thread_id: String,
    guard: Option<OwnedMutexGuard<()>>,
    locks: Locks,
}

impl ThreadLease for MemoryLease {
    fn thread_id(&self) -> &str {
        &self.thread_id
    }
}

impl Drop for MemoryLease {
    fn drop(&mut self) {
        // Release first, then forget the entry if nobody else holds a handle to it. Handles are
        // taken under the table lock, so a locker either already holds one (the entry stays) or
        // will create a fresh entry after this removal.
        drop(self.guard.take());
        let mut table = self.locks.table.lock().unwrap_or_else(PoisonError::into_inner);
        if table
            .get(&self.thread_id)
            .is_some_and(|mutex| Arc::strong_count(mutex) == 1)
        {
            table.remove(&self.thread_id);
        }
    }
}
