//! What the approvals inbox reads from the store: the open questions (oldest first, never a
//! remote call, gone once answered), the thread of an interrupt id, and the record of every
//! thread in append order. The SQLite file answers exactly as the in-memory store and the
//! port's listing defaults do, and a version 3 file gains the columns with its waiting threads
//! filled in.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use async_trait::async_trait;
use common::{open, save, temp_file};
use rusqlite::Connection;
use tenx_engine::MemoryStore;
use tenx_engine::ports::{Commit, OpenQuestion, Receipt, Record, Store, StoreError, ThreadLease, ThreadSummary};
use tenx_engine::testing::{EXPECTED_RECORDS, expected_questions, fill_questions, waiting_thread};
use tenx_engine::thread::ThreadRecord;
use tenx_store_sqlite::SqliteStore;

/// A store that answers only the required methods, so the port's defaults answer the rest.
struct Defaults(MemoryStore);

#[async_trait]
impl Store for Defaults {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.0.load(thread_id).await
    }
    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        self.0.commit(commit).await
    }
    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        self.0.receipt(thread_id, key).await
    }
    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        self.0.in_flight(thread_id).await
    }
    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        self.0.records(thread_id).await
    }
    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        self.0.list_threads(owner, offset, limit).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.0.delete_thread(thread_id).await
    }
    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        self.0.lock(thread_id).await
    }
}

#[tokio::test]
async fn open_questions_are_listed_oldest_first_and_found_by_interrupt_id() {
    let (_dir, path) = temp_file();
    let sqlite = open(&path).await;
    let memory = MemoryStore::new();
    let defaults = Defaults(MemoryStore::new());
    for store in [&sqlite as &dyn Store, &memory, &defaults] {
        fill_questions(store).await.unwrap();
        assert_eq!(store.open_questions().await.unwrap(), expected_questions());
        assert_eq!(
            store.question_thread("int_second").await.unwrap().as_deref(),
            Some("second")
        );
        assert_eq!(store.question_thread("int_late").await.unwrap(), None, "answered");
        assert_eq!(store.question_thread("int_nobody").await.unwrap(), None);
    }
    // Reopened, the file says the same.
    drop(sqlite);
    let reopened = SqliteStore::open(&path).await.unwrap();
    assert_eq!(reopened.open_questions().await.unwrap(), expected_questions());
}

#[tokio::test]
async fn records_are_numbered_across_threads_in_append_order() {
    let (_dir, path) = temp_file();
    let sqlite = open(&path).await;
    let memory = MemoryStore::new();
    for store in [&sqlite as &dyn Store, &memory] {
        fill_questions(store).await.unwrap();
        let all = store.records_after(0, 100).await.unwrap();
        let order: Vec<(&str, u64)> = all
            .iter()
            .map(|numbered| (numbered.record.thread_id.as_str(), numbered.record.at))
            .collect();
        assert_eq!(order, EXPECTED_RECORDS);
        assert_eq!(
            all.iter().map(|numbered| numbered.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        let page = store.records_after(1, 2).await.unwrap();
        assert_eq!(page.iter().map(|numbered| numbered.seq).collect::<Vec<_>>(), [2, 3]);
        assert!(store.records_after(4, 10).await.unwrap().is_empty());
        // A deleted thread's records stay in the record.
        store.delete_thread("late").await.unwrap();
        assert_eq!(store.records_after(0, 100).await.unwrap().len(), 4);
    }
    let defaults = Defaults(MemoryStore::new());
    let refused = defaults.records_after(0, 10).await.unwrap_err();
    assert!(matches!(refused, StoreError::Failed(message) if message.contains("cannot list records")));
}

#[tokio::test]
async fn a_version_3_file_gains_the_question_columns_filled_for_waiting_threads() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    store
        .commit(save(waiting_thread("first", Some("int_first"), 10), None))
        .await
        .unwrap();
    store
        .commit(save(waiting_thread("remote", None, 5), None))
        .await
        .unwrap();
    drop(store);
    let connection = Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "DROP INDEX threads_open_questions; DROP INDEX threads_by_open_interrupt; \
             ALTER TABLE threads DROP COLUMN open_interrupt; ALTER TABLE threads DROP COLUMN asked_at; \
             PRAGMA user_version = 3;",
        )
        .unwrap();
    drop(connection);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(
        store.open_questions().await.unwrap(),
        vec![OpenQuestion {
            thread_id: "first".into(),
            interrupt_id: "int_first".into(),
            asked_at: 10,
        }]
    );
    let connection = Connection::open(&path).unwrap();
    let plan: String = connection
        .query_row(
            "EXPLAIN QUERY PLAN SELECT thread_id FROM threads WHERE open_interrupt = 'x'",
            [],
            |row| row.get(3),
        )
        .unwrap();
    assert!(plan.contains("threads_by_open_interrupt"), "{plan}");
}
