//! Thread locks, one holder per thread across every replica on the database, in two layers (as
//! the SQLite store's):
//!
//! 1. **In the process**: one tokio mutex per locked thread id (waiters are served in arrival
//!    order; an entry nobody holds or awaits is forgotten), so the callers of one store queue
//!    without touching the database.
//! 2. **Across replicas**: a lease row in `locks` (thread id, a holder id unique to this lease,
//!    `expires_at`, how many replicas wait for it). Taking it is one statement that inserts the
//!    row, takes it over when it has expired, or else counts one more waiter; a waiter tries
//!    again when a release is announced (`NOTIFY`, [`crate::wake`], sent only when the row
//!    counted a waiter) or every `lease_poll` at the latest. While held, a renewal task moves
//!    `expires_at` to now + `lease_ttl` every third of the TTL; dropping the lease deletes the
//!    row, and only then lets the next local waiter in. A crashed replica renews nothing, so its
//!    leases free themselves after at most `lease_ttl`.
//!
//! Expiry is measured on **the database's clock** (`clock_timestamp()`), never a replica's, so
//! replicas on machines whose clocks disagree still agree on when a lease has expired.
//!
//! Why a lease row and not a session advisory lock: an advisory lock lives as long as its
//! connection, so every held thread would pin one pooled connection for the whole run (a
//! paused-then-resumed run, a slow tool call), and a half-open TCP connection to a dead replica
//! can keep it for as long as the server's keepalive takes to notice. A lease row costs a
//! statement every TTL/3 and frees itself on a deadline the operator chooses.
//!
//! A holder that stalls longer than the TTL (a paused VM) can lose its lease to another replica;
//! commits stay safe even then, because every commit checks the thread's version and the stale
//! holder's commit fails with `Conflict`.
//!
//! A lease receives the stop notices addressed to its holder id from before its row is taken
//! until it is dropped ([`crate::stops`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::Pool;
use tenx_engine::ports::{StoreError, ThreadLease};
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio::task::JoinHandle;

use crate::error::{pool as pool_error, sql};
use crate::stops::Stops;

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
    /// How often a waiter tries again at the latest.
    pub(crate) poll: Duration,
    /// Woken when another replica releases a lease of this schema.
    pub(crate) wake: Arc<tokio::sync::Notify>,
    /// The schema, announced with each release.
    pub(crate) schema: String,
    /// Where the stop notices addressed to this store's leases are received.
    pub(crate) stops: Arc<Stops>,
}

/// Takes the thread's lock: first in the process, then the lease row in the database.
pub(crate) async fn acquire(
    locks: &Locks,
    pool: &Pool,
    settings: &LeaseSettings,
    thread_id: &str,
) -> Result<PostgresLease, StoreError> {
    let mutex = {
        let mut table = locks.table.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(table.entry(thread_id.to_string()).or_default())
    };
    let guard = mutex.lock_owned().await;
    // From here the lease value owns the guard, so a cancelled wait (this future dropped)
    // releases everything through `Drop`.
    let mut lease = PostgresLease {
        thread_id: thread_id.to_string(),
        holder: holder_id(),
        guard: Some(guard),
        locks: locks.clone(),
        pool: pool.clone(),
        schema: settings.schema.clone(),
        renewer: None,
        taking: None,
        stops: Arc::clone(&settings.stops),
    };
    // Received from before the row can name this holder, so no stop addressed to it is missed.
    lease.stops.hold(&lease.holder, &lease.thread_id);
    let ttl = millis(settings.ttl).max(1);
    loop {
        // Armed before trying, so a release announced while the statement runs is not missed.
        let mut woken = std::pin::pin!(settings.wake.notified());
        woken.as_mut().enable();
        // On a task of its own: a wait given up while the statement is under way leaves the
        // statement to finish, and `Drop` removes the row after it (never before it).
        let (pool, thread, holder) = (pool.clone(), lease.thread_id.clone(), lease.holder.clone());
        let taking = lease
            .taking
            .insert(tokio::spawn(async move { take(&pool, &thread, &holder, ttl).await }));
        let taken = taking
            .await
            .map_err(|_| StoreError::Failed(format!("taking the lease of thread '{thread_id}' was abandoned")))?;
        lease.taking = None;
        match taken {
            Ok(true) => break,
            Ok(false) | Err(StoreError::Transient(_)) => {
                let _woken_or_timed_out = tokio::time::timeout(settings.poll, woken).await;
            }
            Err(error) => return Err(error),
        }
    }
    lease.renewer = Some(start_renewer(pool, &lease.thread_id, &lease.holder, settings.ttl));
    Ok(lease)
}

/// A held thread lock. Dropping it deletes the lease row, then releases the in-process lock.
#[derive(Debug)]
pub(crate) struct PostgresLease {
    thread_id: String,
    holder: String,
    guard: Option<OwnedMutexGuard<()>>,
    locks: Locks,
    pool: Pool,
    schema: String,
    renewer: Option<JoinHandle<()>>,
    /// A `take` under way (only while [`acquire`] waits for it).
    taking: Option<JoinHandle<Result<bool, StoreError>>>,
    /// Where its stop notices are received, until it is dropped.
    stops: Arc<Stops>,
}

impl ThreadLease for PostgresLease {
    fn thread_id(&self) -> &str {
        &self.thread_id
    }
}

impl Drop for PostgresLease {
    fn drop(&mut self) {
        self.stops.release(&self.holder);
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
        let guard = self.guard.take();
        let taking = self.taking.take();
        let (pool, locks, schema) = (self.pool.clone(), self.locks.clone(), self.schema.clone());
        let (thread, holder) = (self.thread_id.clone(), self.holder.clone());
        let forget = thread.clone();
        let finish = move || {
            drop(guard);
            locks.forget_if_unused(&forget);
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime left to delete the row on: it expires after the TTL.
            finish();
            return;
        };
        runtime.spawn(async move {
            if let Some(taking) = taking {
                let _finished = taking.await;
            }
            // A failed delete (the database unreachable) leaves the row to expire.
            let _released = release(&pool, &thread, &holder, &schema).await;
            finish();
        });
    }
}

/// Renews the lease every third of its TTL until aborted, or until the row is no longer ours.
fn start_renewer(pool: &Pool, thread_id: &str, holder: &str, ttl: Duration) -> JoinHandle<()> {
    let (pool, thread, holder) = (pool.clone(), thread_id.to_string(), holder.to_string());
    let every = (ttl / 3).max(Duration::from_millis(1));
    let ttl = millis(ttl).max(1);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match renew(&pool, &thread, &holder, ttl).await {
                // Renewed, or the database was unreachable for a moment: again at the next tick.
                Ok(true) | Err(StoreError::Transient(_)) => {}
                // Taken over after a stall, or the schema is gone: nothing left to renew.
                Ok(false) | Err(_) => return,
            }
        }
    })
}

/// Inserts the lease row, or takes it over when it has expired. Whether this holder has it; a
/// take that finds the lease held counts itself among its waiters, so the release announces
/// itself ([`release`]).
async fn take(pool: &Pool, thread_id: &str, holder: &str, ttl: i64) -> Result<bool, StoreError> {
    let doing = format!("taking the lease of thread '{thread_id}'");
    let client = pool.get().await.map_err(|error| pool_error(&doing, &error))?;
    // One statement either way: an expired row is taken over (no waiters yet), a live one only
    // gains a waiter; `RETURNING` says whose the row is now. The three tests of expiry read
    // `statement_timestamp()`, one instant for the whole statement, so they cannot disagree.
    let statement = client
        .prepare_cached(
            "INSERT INTO locks AS held (thread_id, holder, expires_at, waiters)
               VALUES ($1, $2, clock_timestamp() + $3::int8 * interval '1 millisecond', 0)
             ON CONFLICT (thread_id) DO UPDATE SET
               holder = CASE WHEN held.expires_at <= statement_timestamp() THEN excluded.holder ELSE held.holder END,
               expires_at = CASE WHEN held.expires_at <= statement_timestamp() THEN excluded.expires_at ELSE held.expires_at END,
               waiters = CASE WHEN held.expires_at <= statement_timestamp() THEN 0 ELSE held.waiters + 1 END
             RETURNING held.holder = $2",
        )
        .await
        .map_err(|error| sql(&doing, &error))?;
    client
        .query_one(&statement, &[&thread_id, &holder, &ttl])
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|error| sql(&doing, &error))
}

/// Extends this holder's lease. Whether it still held it.
async fn renew(pool: &Pool, thread_id: &str, holder: &str, ttl: i64) -> Result<bool, StoreError> {
    let doing = format!("renewing the lease of thread '{thread_id}'");
    let client = pool.get().await.map_err(|error| pool_error(&doing, &error))?;
    let statement = client
        .prepare_cached(
            "UPDATE locks SET expires_at = clock_timestamp() + $3::int8 * interval '1 millisecond'
             WHERE thread_id = $1 AND holder = $2",
        )
        .await
        .map_err(|error| sql(&doing, &error))?;
    client
        .execute(&statement, &[&thread_id, &holder, &ttl])
        .await
        .map(|changed| changed == 1)
        .map_err(|error| sql(&doing, &error))
}

/// Deletes this holder's lease row (not another holder's), and announces it to the replicas
/// when some replica waits for it (a failed take counted itself in `waiters`); a release
/// nobody waits for notifies nobody, so it never queues behind other releases' notifications.
async fn release(pool: &Pool, thread_id: &str, holder: &str, schema: &str) -> Result<(), StoreError> {
    let doing = format!("releasing the lease of thread '{thread_id}'");
    let client = pool.get().await.map_err(|error| pool_error(&doing, &error))?;
    let statement = client
        .prepare_cached(&format!(
            "WITH released AS (DELETE FROM locks WHERE thread_id = $1 AND holder = $2 RETURNING waiters)
             SELECT pg_notify('{}', $3) FROM released WHERE waiters > 0",
            crate::wake::CHANNEL
        ))
        .await
        .map_err(|error| sql(&doing, &error))?;
    client
        .execute(&statement, &[&thread_id, &holder, &schema])
        .await
        .map(drop)
        .map_err(|error| sql(&doing, &error))
}

/// Deletes every expired lease (their holders died); run at open so the table stays small.
pub(crate) async fn sweep_expired(client: &deadpool_postgres::Client) -> Result<(), StoreError> {
    client
        .execute("DELETE FROM locks WHERE expires_at <= clock_timestamp()", &[])
        .await
        .map(drop)
        .map_err(|error| sql("removing expired leases", &error))
}

/// A holder id unique to one lease across replicas: the process id, this process's start in
/// nanoseconds (two machines' processes with one pid differ there), a counter.
fn holder_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    let start = START.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos())
    });
    let lease = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{start}-{lease}", std::process::id())
}

/// A duration in whole milliseconds, saturated.
fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
