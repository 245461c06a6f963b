//! The in-memory store: a [`Store`] that keeps everything in the process, for tests, benchmarks
//! and `tenxc dev`. Lost when the process ends; one process only.
//!
//! It is as honest as a durable store: a [`Commit`] is checked and applied whole under one lock
//! (the version check, then the thread, its receipts and its records), and [`Store::lock`] gives
//! one holder per thread at a time (see [`locks`]).
//!
//! What it holds is small: each receipt and record, and each thread whose run is at rest
//! (paused, completed, failed) or whose checkpoint the engine lent (every step; see [`kept`]),
//! is kept [`packed`] (one compact buffer, encoded before the lock is taken), with the few fields the store itself reads (version, owner, times,
//! whether a receipt is in flight) beside it. A step's checkpoint copies the packed messages of
//! the one it replaces (the conversation's and every fork branch's), and a fork's unmoved branches
//! whole, rather than encoding them again ([`checkpoint`]). A read returns a fresh copy, equal to what was
//! committed. Nothing else grows with the number of threads: a lock entry lives only while it
//! is held or awaited.

mod checkpoint;
mod kept;
mod locks;
mod packed;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::ports::{
    Commit, NumberedRecord, OpenQuestion, Receipt, ReceiptState, Record, Store, StoreError, ThreadLease, ThreadSummary,
    Timestamp,
};
use crate::thread::ThreadRecord;
use checkpoint::{Previous, Spans};
use kept::Kept;
use locks::Locks;
use packed::Packed;

/// Threads, receipts and records in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    data: Mutex<Data>,
    locks: Locks,
}

/// Everything the store holds.
#[derive(Debug, Default)]
struct Data {
    /// Threads by id.
    threads: HashMap<String, StoredThread>,
    /// Receipts by thread, then by idempotency key.
    receipts: HashMap<String, BTreeMap<String, StoredReceipt>>,
    /// Records by thread, oldest first (kept when the thread is deleted).
    records: HashMap<String, Vec<Packed<Record>>>,
    /// Every record in the order it was appended: its thread and its place among that
    /// thread's records (a record's `seq` is its place here, 1-based).
    log: Vec<(String, usize)>,
}

/// A thread's checkpoint (see [`kept`]), with what commits and listings read without decoding it.
#[derive(Debug)]
struct StoredThread {
    version: u64,
    owner: Option<String>,
    created_at: Timestamp,
    updated_at: Timestamp,
    /// The question a person answers that the thread waits at, if any.
    question: Option<OpenQuestion>,
    record: Kept,
    /// Where its messages lie in `record`'s bytes, while its run is in progress (see
    /// [`checkpoint`]): what the next step's checkpoint copies.
    spans: Option<Spans>,
}

impl StoredThread {
    /// Its packed checkpoint and messages' spans, when the next step can copy them.
    fn copyable(&self) -> Option<(Packed<ThreadRecord>, Spans)> {
        match (&self.record, &self.spans) {
            (Kept::Packed(packed), Some(spans)) => Some((packed.clone(), Arc::clone(spans))),
            _ => None,
        }
    }
}

/// A receipt, packed, with whether it is in flight (recovery lists those).
#[derive(Debug)]
struct StoredReceipt {
    in_flight: bool,
    receipt: Packed<Receipt>,
}

/// A commit encoded, ready to apply under the lock.
struct Packing {
    thread: Option<(String, StoredThread)>,
    receipts: Vec<(String, String, StoredReceipt)>,
    records: Vec<(String, Packed<Record>)>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies an encoded commit under the lock: the version check, then everything.
    fn apply(&self, (expected_version, packing): (Option<u64>, Packing)) -> Result<(), StoreError> {
        let mut data = self.data();
        if let Some((thread_id, _)) = &packing.thread {
            let stored = data.threads.get(thread_id).map(|stored| stored.version);
            if stored != expected_version {
                return Err(StoreError::Conflict);
            }
        }
        if let Some((thread_id, thread)) = packing.thread {
            data.threads.insert(thread_id, thread);
        }
        for (thread_id, key, receipt) in packing.receipts {
            data.receipts.entry(thread_id).or_default().insert(key, receipt);
        }
        for (thread_id, record) in packing.records {
            let kept = data.records.entry(thread_id.clone()).or_default();
            kept.push(record);
            let place = kept.len().saturating_sub(1);
            data.log.push((thread_id, place));
        }
        Ok(())
    }

    /// Commits a lent checkpoint, copying what the one it replaces holds: its messages, and with
    /// the engine's hint (`moved`, see `Store::commit_fork_step`), its fork's unmoved branches,
    /// when it is the checkpoint the hint is about (the one the commit expects).
    fn commit_lent(
        &self,
        thread: &ThreadRecord,
        commit: Commit,
        moved: Option<&BTreeSet<String>>,
    ) -> Result<(), StoreError> {
        let held = self.data().threads.get(&thread.thread_id).and_then(|stored| {
            let hinted = Some(stored.version) == commit.expected_version;
            stored.copyable().map(|copyable| (copyable, hinted))
        });
        let previous = held.as_ref().map(|((packed, spans), hinted)| Previous {
            bytes: packed.bytes(),
            spans: spans.as_ref(),
            moved: moved.filter(|_| *hinted),
        });
        self.apply(pack(commit, Some((thread, previous)))?)
    }

    /// The data. Nothing panics while the lock is held, but a poisoned lock is still readable:
    /// every write is applied whole after its checks, so the data is never half-changed.
    fn data(&self) -> MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A lent checkpoint as the store keeps it (`record`, the form [`kept`] chose for `thread`, and
/// its messages' spans), with the fields it reads beside it.
fn stored_thread(thread: &ThreadRecord, (record, spans): (Kept, Option<Spans>)) -> (String, StoredThread) {
    let stored = StoredThread {
        version: thread.version,
        owner: thread.owner.clone(),
        created_at: thread.created_at,
        updated_at: thread.updated_at,
        question: OpenQuestion::of(thread),
        record,
        spans,
    };
    (thread.thread_id.clone(), stored)
}

/// A checkpoint lent to the store, with what it may copy from the one it replaces.
type Lent<'l> = (&'l ThreadRecord, Option<Previous<'l>>);

/// Encodes a commit (before the lock is taken: encoding is most of a commit's cost), its
/// checkpoint either lent (`lent`, which then wins) or given in `commit.thread`.
fn pack(commit: Commit, lent: Option<Lent<'_>>) -> Result<(Option<u64>, Packing), StoreError> {
    let thread = match (lent, commit.thread) {
        (Some((thread, previous)), _) => Some(stored_thread(thread, Kept::of_lent(thread, previous)?)),
        (None, Some(thread)) => {
            let (thread_id, version, owner) = (thread.thread_id.clone(), thread.version, thread.owner.clone());
            let (created_at, updated_at) = (thread.created_at, thread.updated_at);
            let question = OpenQuestion::of(&thread);
            let record = Kept::of(thread)?;
            let stored = StoredThread {
                version,
                owner,
                created_at,
                updated_at,
                question,
                record,
                spans: None,
            };
            Some((thread_id, stored))
        }
        (None, None) => None,
    };
    let mut receipts = Vec::with_capacity(commit.receipts.len());
    for receipt in commit.receipts {
        let packed = Packed::pack(&receipt, &format_args!("a receipt of thread '{}'", receipt.thread_id))?;
        let stored = StoredReceipt {
            in_flight: matches!(receipt.state, ReceiptState::InFlight { .. }),
            receipt: packed,
        };
        receipts.push((receipt.thread_id, receipt.key, stored));
    }
    let mut records = Vec::with_capacity(commit.records.len());
    for record in commit.records {
        let packed = Packed::pack(&record, &format_args!("a record of thread '{}'", record.thread_id))?;
        records.push((record.thread_id, packed));
    }
    let expected = commit.expected_version;
    Ok((
        expected,
        Packing {
            thread,
            receipts,
            records,
        },
    ))
}

#[async_trait]
impl Store for MemoryStore {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        let kept = self.data().threads.get(thread_id).map(|stored| stored.record.clone());
        kept.map(|record| record.read(thread_id)).transpose()
    }

    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        self.apply(pack(commit, None)?)
    }

    async fn commit_checkpoint(&self, thread: &ThreadRecord, commit: Commit) -> Result<(), StoreError> {
        self.commit_lent(thread, commit, None)
    }

    async fn commit_fork_step(
        &self,
        thread: &ThreadRecord,
        commit: Commit,
        moved: &BTreeSet<String>,
    ) -> Result<(), StoreError> {
        self.commit_lent(thread, commit, Some(moved))
    }

    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        let packed = self
            .data()
            .receipts
            .get(thread_id)
            .and_then(|receipts| receipts.get(key))
            .map(|stored| stored.receipt.clone());
        packed
            .map(|receipt| receipt.unpack(&format_args!("receipt '{key}' of thread '{thread_id}'")))
            .transpose()
    }

    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        let packed: Vec<Packed<Receipt>> = {
            let data = self.data();
            let receipts = data.receipts.get(thread_id).into_iter().flat_map(BTreeMap::values);
            receipts
                .filter(|stored| stored.in_flight)
                .map(|stored| stored.receipt.clone())
                .collect()
        };
        packed
            .iter()
            .map(|receipt| receipt.unpack(&format_args!("a receipt of thread '{thread_id}'")))
            .collect()
    }

    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        let packed = self.data().records.get(thread_id).cloned().unwrap_or_default();
        packed
            .iter()
            .map(|record| record.unpack(&format_args!("a record of thread '{thread_id}'")))
            .collect()
    }

    async fn open_questions(&self) -> Result<Vec<OpenQuestion>, StoreError> {
        let mut found: Vec<OpenQuestion> = self
            .data()
            .threads
            .values()
            .filter_map(|thread| thread.question.clone())
            .collect();
        found.sort_by(|a, b| a.asked_at.cmp(&b.asked_at).then_with(|| a.thread_id.cmp(&b.thread_id)));
        Ok(found)
    }

    async fn question_thread(&self, interrupt_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .data()
            .threads
            .values()
            .filter_map(|thread| thread.question.as_ref())
            .find(|question| question.interrupt_id == interrupt_id)
            .map(|question| question.thread_id.clone()))
    }

    async fn records_after(&self, after: u64, limit: usize) -> Result<Vec<NumberedRecord>, StoreError> {
        let packed: Vec<(u64, Packed<Record>)> = {
            let data = self.data();
            let start = usize::try_from(after).unwrap_or(usize::MAX);
            data.log
                .iter()
                .enumerate()
                .skip(start)
                .take(limit)
                .filter_map(|(index, (thread_id, place))| {
                    let record = data.records.get(thread_id)?.get(*place)?.clone();
                    Some((u64::try_from(index).unwrap_or(u64::MAX).saturating_add(1), record))
                })
                .collect()
        };
        packed
            .into_iter()
            .map(|(seq, record)| {
                Ok(NumberedRecord {
                    seq,
                    record: record.unpack(&format_args!("record {seq}"))?,
                })
            })
            .collect()
    }

    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        let data = self.data();
        let mut threads: Vec<(&String, &StoredThread)> = data
            .threads
            .iter()
            .filter(|(_, thread)| owner.is_none_or(|owner| thread.owner.as_deref() == Some(owner)))
            .collect();
        threads.sort_by(|(a_id, a), (b_id, b)| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| b.created_at.cmp(&a.created_at))
                .then_with(|| a_id.cmp(b_id))
        });
        Ok(threads
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(thread_id, thread)| ThreadSummary {
                thread_id: thread_id.clone(),
                owner: thread.owner.clone(),
                created_at: thread.created_at,
                updated_at: thread.updated_at,
            })
            .collect())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        let mut data = self.data();
        data.receipts.remove(thread_id);
        Ok(data.threads.remove(thread_id).is_some())
    }

    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        Ok(Box::new(self.locks.acquire(thread_id).await))
    }
}

#[cfg(test)]
mod fork_tests;
#[cfg(test)]
mod tests;
