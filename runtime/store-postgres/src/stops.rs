//! Stop requests between replicas on one database (the store side of
//! [`tenx_engine::ports::StopNotice`]): a `NOTIFY` addressed to the holder of the thread's lease.
//!
//! - **Publish**: one statement, `SELECT pg_notify('tenx_stops', <json>) FROM locks WHERE
//!   thread_id = $1 AND expires_at > clock_timestamp()`, finds the thread's live lease holder
//!   and sends the notice to it (schema, thread, kind, holder in the payload); its row count is
//!   the answer (no live lease: nothing sent, "nobody runs it"). The notification is delivered
//!   when the statement commits, so a lease released in between is never reported held.
//! - **Receive**: the store's listening connection ([`crate::wake`]) also `LISTEN`s on
//!   [`CHANNEL`] and hands every payload here. One of this store's schema addressed to one of
//!   its live leases (registered before the lease's row is taken, so none is missed) goes to
//!   every registered [`StopHandler`]; one that no handler took yet (the run registers a moment
//!   after its lock is taken) is handed again every [`RETRY`] until one does or the lease is
//!   released. Payloads for other schemas or holders are ignored: holder ids are unique to one
//!   lease, so a later run of the thread (here or elsewhere) never receives an older stop.
//!   Nothing runs while no notice waits.
//! - **At least once while connected**: a notice sent while the listening connection is down
//!   is missed (the run ends as it would have without the stop).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::Value;
use tenx_engine::ports::{StopHandler, StopKind, StopNotice, StoreError};

use crate::error::{pool as pool_error, sql};

/// The channel stop notices are sent on; the payload names the schema.
pub(crate) const CHANNEL: &str = "tenx_stops";

/// How often a notice no handler took yet is handed again while its lease is held.
pub const RETRY: Duration = Duration::from_millis(50);

/// This store's side of the stop notices, shared with its leases and its listener.
#[derive(Default)]
pub(crate) struct Stops {
    /// The schema whose notices are this store's.
    schema: String,
    /// The registered receivers (each engine on this store).
    handlers: Mutex<Vec<Weak<dyn StopHandler>>>,
    /// This store's live leases (and leases being taken): holder id → thread id.
    live: Mutex<HashMap<String, String>>,
    /// Notices addressed to a live lease that no handler took yet, with their holder.
    waiting: Mutex<Vec<(String, StopNotice)>>,
    /// Whether the task handing waiting notices again runs.
    retrying: AtomicBool,
}

impl std::fmt::Debug for Stops {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Stops")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl Stops {
    /// The stop notices of `schema`.
    pub(crate) fn new(schema: &str) -> Self {
        Self {
            schema: schema.to_owned(),
            ..Self::default()
        }
    }

    /// Registers a receiver, forgetting those that are gone.
    pub(crate) fn subscribe(&self, handler: Weak<dyn StopHandler>) {
        let mut handlers = self.handlers.lock().unwrap_or_else(PoisonError::into_inner);
        handlers.retain(|handler| handler.strong_count() > 0);
        handlers.push(handler);
    }

    /// A lease is being taken: its notices are received from now on, before its row can name it.
    pub(crate) fn hold(&self, holder: &str, thread_id: &str) {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(holder.to_owned(), thread_id.to_owned());
    }

    /// A lease was released (or never taken): its notices are no longer received.
    pub(crate) fn release(&self, holder: &str) {
        self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(holder);
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(waiting, _)| waiting != holder);
    }

    /// Whether `holder` is a live lease of this store, on `thread_id`.
    fn holds(&self, holder: &str, thread_id: &str) -> bool {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(holder)
            .is_some_and(|held| held == thread_id)
    }

    /// A payload heard on [`CHANNEL`]: handed to the handlers when it is addressed to a live
    /// lease of this store, and kept to be handed again when no handler took it.
    pub(crate) fn received(self: &Arc<Self>, payload: &str) {
        let Some((schema, holder, notice)) = parse(payload) else {
            return;
        };
        if schema != self.schema || !self.holds(&holder, &notice.thread_id) || self.deliver(&notice) {
            return;
        }
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((holder, notice));
        self.start_retrying();
    }

    /// Hands the waiting notices again every [`RETRY`] until none waits.
    fn start_retrying(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.retrying.swap(true, Ordering::AcqRel) {
            return;
        }
        // Weak: a store that is dropped takes its waiting notices with it.
        let stops = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(RETRY).await;
                let Some(stops) = stops.upgrade() else {
                    return;
                };
                if !stops.retry() {
                    stops.retrying.store(false, Ordering::Release);
                    // A notice queued just now found the task still running: go on for it.
                    let queued = !stops.waiting.lock().unwrap_or_else(PoisonError::into_inner).is_empty();
                    if queued && !stops.retrying.swap(true, Ordering::AcqRel) {
                        continue;
                    }
                    return;
                }
            }
        });
    }

    /// Hands every waiting notice whose lease is still live again. Whether any is left waiting.
    fn retry(&self) -> bool {
        let mut waiting = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(PoisonError::into_inner));
        waiting.retain(|(holder, notice)| self.holds(holder, &notice.thread_id) && !self.deliver(notice));
        let mut kept = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        kept.append(&mut waiting);
        !kept.is_empty()
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

/// Sends a stop to the live lease holder of `thread_id` in `schema`, if there is one, in one
/// statement. Whether there was.
pub(crate) async fn publish(pool: &Pool, schema: &str, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
    let doing = format!("sending a stop for thread '{thread_id}'");
    let client = pool.get().await.map_err(|error| pool_error(&doing, &error))?;
    let statement = client
        .prepare_cached(&format!(
            "SELECT pg_notify('{CHANNEL}', json_build_object(
                        'schema', $2::text, 'holder', holder, 'thread', thread_id, 'kind', $3::text)::text)
               FROM locks WHERE thread_id = $1 AND expires_at > clock_timestamp()"
        ))
        .await
        .map_err(|error| sql(&doing, &error))?;
    client
        .query(&statement, &[&thread_id, &schema, &kind.as_str()])
        .await
        .map(|rows| !rows.is_empty())
        .map_err(|error| sql(&doing, &error))
}

/// The schema, holder and notice of a payload; `None` for one this build cannot read (a kind
/// it does not know, say).
fn parse(payload: &str) -> Option<(String, String, StopNotice)> {
    let value: Value = serde_json::from_str(payload).ok()?;
    let field = |name: &str| value.get(name).and_then(Value::as_str);
    let kind = StopKind::parse(field("kind")?)?;
    let notice = StopNotice {
        thread_id: field("thread")?.to_owned(),
        kind,
    };
    Some((field("schema")?.to_owned(), field("holder")?.to_owned(), notice))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn payloads_are_read_and_unknown_ones_ignored() {
        let (schema, holder, notice) =
            parse(r#"{"schema":"s","holder":"1-2-3","thread":"t\"1","kind":"after_step"}"#).unwrap();
        assert_eq!((schema.as_str(), holder.as_str()), ("s", "1-2-3"));
        assert_eq!(
            notice,
            StopNotice {
                thread_id: "t\"1".into(),
                kind: StopKind::AfterStep
            }
        );
        assert!(parse(r#"{"schema":"s","holder":"h","thread":"t","kind":"pause"}"#).is_none());
        assert!(parse(r#"{"schema":"s","thread":"t","kind":"cancel"}"#).is_none());
        assert!(parse("not json").is_none());
    }
}
