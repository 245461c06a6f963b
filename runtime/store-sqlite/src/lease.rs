//! Thread locks, one holder per thread, in two layers:
//!
//! 1. **In the process**: one tokio mutex per locked thread id (waiters are served in arrival
//!    order; an entry nobody holds or awaits is forgotten), so the callers of one store queue
//!    without touching the file.
//! 2. **Across processes** sharing the file: a lease row in `locks` (thread id, a holder id
//!    unique to this lease, `expires_at`). Taking it is one statement that inserts the row, or
//!    takes it over when it has expired; a waiter polls every `lease_poll`. While held, a
//!    renewal task moves `expires_at` to now + `lease_ttl` every third of the TTL; dropping
//!    the lease deletes the row (on the writer connection, queued before the in-process mutex
//!    is released). A crashed holder renews nothing, so its lease frees itself after at most
//!    `lease_ttl`.
//!
//! While a lease is held, the stop requests other processes address to it are received
//! ([`crate::stops`]).
//!
//! Expiry uses the wall clock (milliseconds since the Unix epoch), the one clock every process
//! on the machine shares. A holder that stalls longer than the TTL (a suspended process) can
//! lose its lease to another process; commits stay safe even then, because every commit checks
//! the thread's version and the stale holder's commit fails with `Conflict`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use tenx_engine::ports::{StoreError, ThreadLease};
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio::task::JoinHandle;

use crate::error::sql;
use crate::stops::Stops;
use crate::worker::Worker;

/// The in-process lock table.
#[derive(Debug, Default, Clone)]
pub(crate) struct Locks {
    table: Arc<StdMutex<HashMap<String, Arc<Mutex<()>>>>>,
}

impl Locks {
    /// How many threads have an in-process entry (held or awaited).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Forgets the entry of `thread_id` if nobody else holds a handle to it.
    fn forget_if_unused(&self, thread_id: &str) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if table.get(thread_id).is_some_and(|mutex| Arc::strong_count(mutex) == 1) {
            table.remove(thread_id);
        }
    }
}

/// What [`acquire`] needs from the store.
pub(crate) struct LeaseSettings {
    /// The lease's lifetime without renewal.
    pub(crate) ttl: Duration,
    /// How often a waiter tries again.
    pub(crate) poll: Duration,
    /// Where the stop requests addressed to this store's leases are received.
    pub(crate) stops: Arc<Stops>,
    /// The connections the stop requests are read on.
    pub(crate) readers: Arc<Worker>,
}

/// Takes the thread's lock: first in the process, then the lease row in the file.
pub(crate) async fn acquire(
    locks: &Locks,
    writer: &Arc<Worker>,
    settings: &LeaseSettings,
    thread_id: &str,
) -> Result<SqliteLease, StoreError> {
    let mutex = {
        let mut table = locks.table.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(table.entry(thread_id.to_string()).or_default())
    };
    let guard = mutex.lock_owned().await;
    // From here the lease value owns the guard, so a cancelled wait (this future dropped)
    // releases everything through `Drop`.
    let mut lease = SqliteLease {
        thread_id: thread_id.to_string(),
        holder: holder_id(),
        guard: Some(guard),
        locks: locks.clone(),
        writer: Arc::clone(writer),
        renewer: None,
        stops: None,
    };
    // Received from before the row can name this holder, so no stop addressed to it is missed.
    settings.stops.hold(&lease.holder, &lease.thread_id, &settings.readers);
    lease.stops = Some(Arc::clone(&settings.stops));
    let ttl = millis(settings.ttl).max(1);
    loop {
        let (thread, holder) = (lease.thread_id.clone(), lease.holder.clone());
        if writer
            .run(move |connection| take(connection, &thread, &holder, ttl))
            .await?
        {
            break;
        }
        tokio::time::sleep(settings.poll).await;
    }
    lease.renewer = start_renewer(writer, &lease.thread_id, &lease.holder, settings.ttl);
    Ok(lease)
}

/// A held thread lock. Dropping it deletes the lease row and releases the in-process lock.
#[derive(Debug)]
pub(crate) struct SqliteLease {
    thread_id: String,
    holder: String,
    guard: Option<OwnedMutexGuard<()>>,
    locks: Locks,
    writer: Arc<Worker>,
    renewer: Option<JoinHandle<()>>,
    /// Where its stop requests are received, until it is dropped.
    stops: Option<Arc<Stops>>,
}

impl ThreadLease for SqliteLease {
    fn thread_id(&self) -> &str {
        &self.thread_id
    }
}

impl Drop for SqliteLease {
    fn drop(&mut self) {
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
        if let Some(stops) = self.stops.take() {
            stops.release(&self.holder);
        }
        // Queued on the writer before the in-process lock is let go, so the next local holder's
        // `take` (queued after it) finds the row gone. Queued also when the wait was cancelled:
        // a `take` already queued may still succeed, and this removes its row right after (the
        // holder id is this lease's alone, so it never removes another holder's row).
        let (thread, holder) = (self.thread_id.clone(), self.holder.clone());
        self.writer.send(move |connection| {
            let _released = release(connection, &thread, &holder);
        });
        drop(self.guard.take());
        self.locks.forget_if_unused(&self.thread_id);
    }
}

/// Renews the lease every third of its TTL until aborted, or until the row is no longer ours.
fn start_renewer(writer: &Arc<Worker>, thread_id: &str, holder: &str, ttl: Duration) -> Option<JoinHandle<()>> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let (writer, thread, holder) = (Arc::clone(writer), thread_id.to_string(), holder.to_string());
    let every = (ttl / 3).max(Duration::from_millis(1));
    let ttl = millis(ttl).max(1);
    Some(runtime.spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let (thread, holder) = (thread.clone(), holder.clone());
            match writer
                .run(move |connection| renew(connection, &thread, &holder, ttl))
                .await
            {
                // Renewed, or the file was busy for a moment: try again at the next tick.
                Ok(true) | Err(StoreError::Transient(_)) => {}
                // Taken over after a stall, or the store is gone: nothing left to renew.
                Ok(false) | Err(_) => return,
            }
        }
    }))
}

/// Inserts the lease row, or takes it over when it has expired. Whether this holder has it.
fn take(connection: &mut Connection, thread_id: &str, holder: &str, ttl: i64) -> Result<bool, StoreError> {
    let now = now_millis();
    connection
        .prepare_cached(
            "INSERT INTO locks (thread_id, holder, expires_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (thread_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
             WHERE locks.expires_at <= ?4",
        )
        .and_then(|mut statement| statement.execute(params![thread_id, holder, now.saturating_add(ttl), now]))
        .map(|changed| changed == 1)
        .map_err(|error| sql(&format!("taking the lease of thread '{thread_id}'"), &error))
}

/// Extends this holder's lease. Whether it still held it.
fn renew(connection: &mut Connection, thread_id: &str, holder: &str, ttl: i64) -> Result<bool, StoreError> {
    connection
        .prepare_cached("UPDATE locks SET expires_at = ?3 WHERE thread_id = ?1 AND holder = ?2")
        .and_then(|mut statement| statement.execute(params![thread_id, holder, now_millis().saturating_add(ttl)]))
        .map(|changed| changed == 1)
        .map_err(|error| sql(&format!("renewing the lease of thread '{thread_id}'"), &error))
}

/// Deletes this holder's lease row (not another holder's).
fn release(connection: &mut Connection, thread_id: &str, holder: &str) -> Result<(), StoreError> {
    connection
        .prepare_cached("DELETE FROM locks WHERE thread_id = ?1 AND holder = ?2")
        .and_then(|mut statement| statement.execute(params![thread_id, holder]))
        .map(drop)
        .map_err(|error| sql(&format!("releasing the lease of thread '{thread_id}'"), &error))
}

/// Deletes every expired lease (their holders died); run at open so the table stays small.
pub(crate) fn sweep_expired(connection: &mut Connection) -> Result<(), StoreError> {
    connection
        .execute("DELETE FROM locks WHERE expires_at <= ?1", [now_millis()])
        .map(drop)
        .map_err(|error| sql("removing expired leases", &error))
}

/// A holder id unique to one lease: process id, this process's start of time, a counter.
fn holder_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    let start = START.get_or_init(now_millis);
    let lease = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{start}-{lease}", std::process::id())
}

/// The wall clock in milliseconds since the Unix epoch (0 before it, saturated far after).
pub(crate) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

/// A duration in whole milliseconds, saturated.
fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
