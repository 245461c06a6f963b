//! [`SqliteStore`]: the [`Store`] port over one SQLite file. Writes go through one writer
//! connection on its own thread, in arrival order; reads through read-only connections on
//! their own threads; locks through [`crate::lease`]; stops between processes through
//! [`crate::stops`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use tenx_engine::ports::{
    Commit, NumberedRecord, OpenQuestion, Receipt, Record, StopHandler, StopKind, Store, StoreError, ThreadLease,
    ThreadSummary,
};
use tenx_engine::thread::ThreadRecord;

use crate::connection::{open_reader, open_writer};
use crate::lease::{LeaseSettings, Locks, acquire, sweep_expired};
use crate::stops::Stops;
use crate::worker::Worker;
use crate::{SqliteOptions, queries};

/// Threads, receipts, records and leases in one SQLite file (see the crate's docs).
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    writer: Arc<Worker>,
    readers: Arc<Worker>,
    locks: Locks,
    stops: Arc<Stops>,
    lease_ttl: std::time::Duration,
    lease_poll: std::time::Duration,
}

impl SqliteStore {
    /// Opens (or creates) the store file at `path` with the default [`SqliteOptions`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// Opens (or creates) the store file at `path`: switches it to WAL, applies the embedded
    /// migrations (refusing a file with a newer schema, or another application's file), removes
    /// expired leases, and starts the writer and reader threads. Stop requests already in the
    /// file were for earlier leases: only later ones are received.
    pub async fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let writer = {
            let (path, options) = (path.clone(), options.clone());
            Worker::start("tenx-sqlite-writer", 1, move || {
                let mut connection = open_writer(&path, &options)?;
                sweep_expired(&mut connection)?;
                Ok(connection)
            })
            .await?
        };
        let readers = {
            let (path, options) = (path.clone(), options.clone());
            Worker::start("tenx-sqlite-reader", options.readers, move || {
                open_reader(&path, &options)
            })
            .await?
        };
        let last_stop = writer.run(crate::stops::last_seq).await?;
        Ok(Self {
            path,
            writer: Arc::new(writer),
            readers: Arc::new(readers),
            locks: Locks::default(),
            stops: Arc::new(Stops::starting_after(last_stop)),
            lease_ttl: options.lease_ttl,
            lease_poll: options.lease_poll,
        })
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The in-process lock table (tests check that released locks are forgotten).
    #[cfg(test)]
    pub(crate) fn locks(&self) -> &Locks {
        &self.locks
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        let thread_id = thread_id.to_string();
        self.readers
            .run(move |connection| queries::load(connection, &thread_id))
            .await
    }

    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        self.writer
            .run(move |connection| queries::commit(connection, &commit))
            .await
    }

    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        let (thread_id, key) = (thread_id.to_string(), key.to_string());
        self.readers
            .run(move |connection| queries::receipt(connection, &thread_id, &key))
            .await
    }

    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        let thread_id = thread_id.to_string();
        self.readers
            .run(move |connection| queries::in_flight(connection, &thread_id))
            .await
    }

    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        let thread_id = thread_id.to_string();
        self.readers
            .run(move |connection| queries::records(connection, &thread_id))
            .await
    }

    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        let owner = owner.map(str::to_string);
        self.readers
            .run(move |connection| queries::list_threads(connection, owner.as_deref(), offset, limit))
            .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        let thread_id = thread_id.to_string();
        self.writer
            .run(move |connection| queries::delete_thread(connection, &thread_id))
            .await
    }

    async fn open_questions(&self) -> Result<Vec<OpenQuestion>, StoreError> {
        self.readers.run(crate::questions::open_questions).await
    }

    async fn question_thread(&self, interrupt_id: &str) -> Result<Option<String>, StoreError> {
        let interrupt_id = interrupt_id.to_string();
        self.readers
            .run(move |connection| crate::questions::question_thread(connection, &interrupt_id))
            .await
    }

    async fn records_after(&self, after: u64, limit: usize) -> Result<Vec<NumberedRecord>, StoreError> {
        self.readers
            .run(move |connection| crate::questions::records_after(connection, after, limit))
            .await
    }

    async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        self.readers.run(crate::recovery::unfinished).await
    }

    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        let settings = LeaseSettings {
            ttl: self.lease_ttl,
            poll: self.lease_poll,
            stops: Arc::clone(&self.stops),
            readers: Arc::clone(&self.readers),
        };
        let lease = acquire(&self.locks, &self.writer, &settings, thread_id).await?;
        Ok(Box::new(lease))
    }

    async fn publish_stop(&self, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
        let thread_id = thread_id.to_string();
        self.writer
            .run(move |connection| crate::stops::publish(connection, &thread_id, kind))
            .await
    }

    fn subscribe_stops(&self, handler: std::sync::Weak<dyn StopHandler>) {
        self.stops.subscribe(handler);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn released_and_abandoned_locks_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("t.db")).await.unwrap();
        let lease = store.lock("t").await.unwrap();
        assert_eq!(store.locks().len(), 1);
        // A wait that is given up leaves the entry to the holder alone.
        assert!(
            tokio::time::timeout(Duration::from_millis(30), store.lock("t"))
                .await
                .is_err()
        );
        assert_eq!(store.locks().len(), 1);
        drop(lease);
        assert_eq!(store.locks().len(), 0);
        let leases = [store.lock("a").await.unwrap(), store.lock("b").await.unwrap()];
        assert_eq!(store.locks().len(), 2);
        drop(leases);
        assert_eq!(store.locks().len(), 0);
    }
}
