//! A store that fails one chosen commit: the memory store, except that the first commit a test's
//! predicate picks is refused with a store error (nothing of it applied), as a database that
//! drops one write would refuse it. Every other call goes to the memory store.

use std::sync::Weak;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use tenx_engine::MemoryStore;
use tenx_engine::ports::{
    Commit, NumberedRecord, OpenQuestion, Receipt, Record, StopHandler, StopKind, Store, StoreError, ThreadLease,
    ThreadSummary,
};
use tenx_engine::thread::ThreadRecord;

/// Which commit fails: it sees the commit's receipts.
type Pick = Box<dyn Fn(&[Receipt]) -> bool + Send + Sync>;

pub(super) struct FailOnce {
    inner: MemoryStore,
    pick: Pick,
    failed: AtomicBool,
}

impl FailOnce {
    /// The memory store, failing the first commit whose receipts `pick` picks.
    pub(super) fn new(pick: impl Fn(&[Receipt]) -> bool + Send + Sync + 'static) -> Self {
        Self {
            inner: MemoryStore::new(),
            pick: Box::new(pick),
            failed: AtomicBool::new(false),
        }
    }

    /// Whether the chosen commit came, and failed.
    pub(super) fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    fn refuses(&self, commit: &Commit) -> Result<(), StoreError> {
        if !self.failed() && (self.pick)(&commit.receipts) && !self.failed.swap(true, Ordering::SeqCst) {
            return Err(StoreError::Failed("the disk refused the write".to_owned()));
        }
        Ok(())
    }
}

#[async_trait]
impl Store for FailOnce {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.inner.load(thread_id).await
    }
    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        self.refuses(&commit)?;
        self.inner.commit(commit).await
    }
    async fn commit_checkpoint(&self, thread: &ThreadRecord, commit: Commit) -> Result<(), StoreError> {
        self.refuses(&commit)?;
        self.inner.commit_checkpoint(thread, commit).await
    }
    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        self.inner.receipt(thread_id, key).await
    }
    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        self.inner.in_flight(thread_id).await
    }
    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        self.inner.records(thread_id).await
    }
    async fn open_questions(&self) -> Result<Vec<OpenQuestion>, StoreError> {
        self.inner.open_questions().await
    }
    async fn question_thread(&self, interrupt_id: &str) -> Result<Option<String>, StoreError> {
        self.inner.question_thread(interrupt_id).await
    }
    async fn records_after(&self, after: u64, limit: usize) -> Result<Vec<NumberedRecord>, StoreError> {
        self.inner.records_after(after, limit).await
    }
    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        self.inner.list_threads(owner, offset, limit).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.inner.delete_thread(thread_id).await
    }
    async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        self.inner.unfinished().await
    }
    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        self.inner.lock(thread_id).await
    }
    async fn publish_stop(&self, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
        self.inner.publish_stop(thread_id, kind).await
    }
    fn subscribe_stops(&self, handler: Weak<dyn StopHandler>) {
        self.inner.subscribe_stops(handler);
    }
}
