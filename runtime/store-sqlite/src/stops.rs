//! Stop requests between processes sharing the file (the store side of
//! [`tenx_engine::ports::StopNotice`]): a row in `stops` addressed to the holder of the
//! thread's lease.
//!
//! - **Publish**: one statement copies the thread's live lease holder into a new row (no live
//!   lease: no row, and the answer is "nobody runs it"); rows older than [`KEEP`] are pruned in
//!   the same job, so the table stays small.
//! - **Receive**: while this store holds (or waits for) at least one lease, a task reads the rows after the
//!   last one it saw, every [`POLL`], on a reader connection. A row addressed to one of this
//!   store's live leases is handed to every registered [`StopHandler`]; one that no handler
//!   took yet (the run registers a moment after its lock is taken) is handed again at each
//!   poll until one does or the lease is released. Rows for other holders are skipped: holder
//!   ids are unique to one lease, so a later run of the thread (here or elsewhere) never
//!   receives an older stop. With no lease held the task ends and the file is not read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rusqlite::{Connection, params};
use tenx_engine::ports::{StopHandler, StopKind, StopNotice, StoreError};

use crate::error::sql;
use crate::lease::now_millis;
use crate::worker::Worker;

/// How often a process holding leases reads new stop rows.
pub const POLL: Duration = Duration::from_millis(50);

/// How long a stop row is kept (in milliseconds): far longer than any poll gap.
pub const KEEP: i64 = 60_000;

/// How many rows one poll reads at most (the next poll reads on).
const PAGE: i64 = 256;

/// This store's side of the stop table, shared with its leases and its polling task.
#[derive(Default)]
pub(crate) struct Stops {
    /// The registered receivers (each engine on this store).
    handlers: Mutex<Vec<Weak<dyn StopHandler>>>,
    /// This store's live leases: holder id → thread id.
    live: Mutex<HashMap<String, String>>,
    /// Notices addressed to a live lease that no handler took yet, with their holder.
    waiting: Mutex<Vec<(String, StopNotice)>>,
    /// The last row seen.
    last: AtomicI64,
    /// Whether the polling task runs.
    polling: AtomicBool,
}

impl std::fmt::Debug for Stops {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Stops")
            .field("last", &self.last.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Stops {
    /// Starts after the rows already in the file (they were for earlier leases).
    pub(crate) fn starting_after(last: i64) -> Self {
        let stops = Self::default();
        stops.last.store(last, Ordering::Release);
        stops
    }

    /// Registers a receiver, forgetting those that are gone.
    pub(crate) fn subscribe(&self, handler: Weak<dyn StopHandler>) {
        let mut handlers = self.handlers.lock().unwrap_or_else(PoisonError::into_inner);
        handlers.retain(|handler| handler.strong_count() > 0);
        handlers.push(handler);
    }

    /// A lease is being taken: its notices are received from now on, before its row can name
    /// it (the polling task starts if it does not run).
    pub(crate) fn hold(self: &Arc<Self>, holder: &str, thread_id: &str, readers: &Arc<Worker>) {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(holder.to_owned(), thread_id.to_owned());
        self.start_polling(readers);
    }

    /// A lease was released: its notices are no longer received.
    pub(crate) fn release(&self, holder: &str) {
        self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(holder);
    }

    /// Whether `holder` is a live lease of this store, on `thread_id`.
    fn holds(&self, holder: &str, thread_id: &str) -> bool {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(holder)
            .is_some_and(|held| held == thread_id)
    }

    fn holds_any(&self) -> bool {
        !self.live.lock().unwrap_or_else(PoisonError::into_inner).is_empty()
    }

    fn start_polling(self: &Arc<Self>, readers: &Arc<Worker>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.polling.swap(true, Ordering::AcqRel) {
            return;
        }
        let (stops, readers) = (Arc::clone(self), Arc::clone(readers));
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(POLL).await;
                if !stops.holds_any() {
                    stops.polling.store(false, Ordering::Release);
                    // A lease taken just now found the task still running: go on for it.
                    if stops.holds_any() && !stops.polling.swap(true, Ordering::AcqRel) {
                        continue;
                    }
                    return;
                }
                // A failed read (the file busy for a moment) is tried again at the next poll.
                let _again_next_time = stops.poll(&readers).await;
            }
        });
    }

    /// Reads the rows after the last one seen and hands those addressed to a live lease of
    /// this store (with those still waiting) to the handlers.
    async fn poll(&self, readers: &Worker) -> Result<(), StoreError> {
        loop {
            let after = self.last.load(Ordering::Acquire);
            let rows = readers.run(move |connection| read_after(connection, after)).await?;
            let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) >= PAGE;
            if let Some((seq, ..)) = rows.last() {
                self.last.fetch_max(*seq, Ordering::AcqRel);
            }
            let mut waiting = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(PoisonError::into_inner));
            for (_, holder, notice) in rows {
                if let Some(notice) = notice
                    && self.holds(&holder, &notice.thread_id)
                {
                    waiting.push((holder, notice));
                }
            }
            waiting.retain(|(holder, notice)| self.holds(holder, &notice.thread_id) && !self.deliver(notice));
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .append(&mut waiting);
            if !full {
                return Ok(());
            }
        }
    }

    /// Hands a notice to every live handler. Whether one took it.
    fn deliver(&self, notice: &StopNotice) -> bool {
        let handlers: Vec<Arc<dyn StopHandler>> = self
            .handlers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let mut taken = false;
        for handler in handlers {
            taken |= handler.deliver(notice);
        }
        taken
    }
}

/// Prunes old rows, then addresses a stop to the live lease of `thread_id`, if there is one.
/// Whether there was.
pub(crate) fn publish(connection: &mut Connection, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
    let now = now_millis();
    connection
        .prepare_cached("DELETE FROM stops WHERE requested_at < ?1")
        .and_then(|mut statement| statement.execute([now.saturating_sub(KEEP)]))
        .map_err(|error| sql("pruning old stop requests", &error))?;
    connection
        .prepare_cached(
            "INSERT INTO stops (thread_id, holder, kind, requested_at)
             SELECT thread_id, holder, ?2, ?3 FROM locks WHERE thread_id = ?1 AND expires_at > ?3",
        )
        .and_then(|mut statement| statement.execute(params![thread_id, kind.as_str(), now]))
        .map(|inserted| inserted == 1)
        .map_err(|error| sql(&format!("sending a stop for thread '{thread_id}'"), &error))
}

/// The newest row's sequence number (0 for none).
pub(crate) fn last_seq(connection: &mut Connection) -> Result<i64, StoreError> {
    connection
        .query_row("SELECT coalesce(max(seq), 0) FROM stops", [], |row| row.get(0))
        .map_err(|error| sql("reading the stop requests", &error))
}

/// The rows after `after`, oldest first, at most [`PAGE`], with their holder; a row of a kind
/// this build does not know has no notice (it is seen, and skipped).
fn read_after(connection: &mut Connection, after: i64) -> Result<Vec<(i64, String, Option<StopNotice>)>, StoreError> {
    let mut statement = connection
        .prepare_cached("SELECT seq, thread_id, holder, kind FROM stops WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        .map_err(|error| sql("reading the stop requests", &error))?;
    let rows = statement
        .query_map(params![after, PAGE], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
            ))
        })
        .map_err(|error| sql("reading the stop requests", &error))?;
    let mut found = Vec::new();
    for row in rows {
        let (seq, thread_id, holder, kind) = row.map_err(|error| sql("reading the stop requests", &error))?;
        let notice = StopKind::parse(&kind).map(|kind| StopNotice { thread_id, kind });
        found.push((seq, holder, notice));
    }
    Ok(found)
}
