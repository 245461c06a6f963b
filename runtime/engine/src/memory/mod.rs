//! The in-memory store: a [`Store`] that keeps everything in the process, for tests, benchmarks
//! and `tenxc dev`. Lost when the process ends; one process only.
//!
//! It is as honest as a durable store: a [`Commit`] is checked and applied whole under one lock
//! (the version check, then the thread, its receipts and its records), and [`Store::lock`] gives
//! one holder per thread at a time (see [`locks`]).

mod locks;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::ports::{Commit, Receipt, ReceiptState, Record, Store, StoreError, ThreadLease, ThreadSummary};
use crate::thread::ThreadRecord;
use locks::Locks;

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
    threads: HashMap<String, ThreadRecord>,
    /// Receipts by thread, then by idempotency key.
    receipts: HashMap<String, BTreeMap<String, Receipt>>,
    /// Records by thread, oldest first (kept when the thread is deleted).
    records: HashMap<String, Vec<Record>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The data. Nothing panics while the lock is held, but a poisoned lock is still readable:
    /// every write is applied whole after its checks, so the data is never half-changed.
    fn data(&self) -> MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        Ok(self.data().threads.get(thread_id).cloned())
    }

    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        let mut data = self.data();
        if let Some(thread) = &commit.thread {
            let stored = data.threads.get(&thread.thread_id).map(|stored| stored.version);
            if stored != commit.expected_version {
                return Err(StoreError::Conflict);
            }
        }
        if let Some(thread) = commit.thread {
            data.threads.insert(thread.thread_id.clone(), thread);
        }
        for receipt in commit.receipts {
            data.receipts
                .entry(receipt.thread_id.clone())
                .or_default()
                .insert(receipt.key.clone(), receipt);
        }
        for record in commit.records {
            data.records.entry(record.thread_id.clone()).or_default().push(record);
        }
        Ok(())
    }

    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        Ok(self
            .data()
            .receipts
            .get(thread_id)
            .and_then(|receipts| receipts.get(key))
            .cloned())
    }

    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        let data = self.data();
        let receipts = data.receipts.get(thread_id).into_iter().flat_map(BTreeMap::values);
        Ok(receipts
            .filter(|receipt| matches!(receipt.state, ReceiptState::InFlight { .. }))
            .cloned()
            .collect())
    }

    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        Ok(self.data().records.get(thread_id).cloned().unwrap_or_default())
    }

    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        let data = self.data();
        let mut threads: Vec<&ThreadRecord> = data
            .threads
            .values()
            .filter(|thread| owner.is_none_or(|owner| thread.owner.as_deref() == Some(owner)))
            .collect();
        threads.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| b.created_at.cmp(&a.created_at))
                .then_with(|| a.thread_id.cmp(&b.thread_id))
        });
        Ok(threads
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|thread| ThreadSummary {
                thread_id: thread.thread_id.clone(),
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
mod tests;
