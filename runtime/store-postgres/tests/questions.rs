//! What the approvals inbox reads from PostgreSQL: the open questions (oldest first, never a
//! remote call, gone once answered), the thread of an interrupt id, and the record of every
//! thread in append order, exactly as the in-memory store answers; and a version 2 schema gains
//! the columns with its waiting threads filled in.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::save;
use tenx_engine::MemoryStore;
use tenx_engine::ports::{OpenQuestion, Store};
use tenx_engine::testing::{EXPECTED_RECORDS, expected_questions, fill_questions, waiting_thread};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_questions_and_numbered_records_read_as_the_memory_store_reads_them() {
    let schema = schema_or_skip!();
    let postgres = schema.open().await;
    let memory = MemoryStore::new();
    for store in [&postgres as &dyn Store, &memory] {
        fill_questions(store).await.unwrap();
        assert_eq!(store.open_questions().await.unwrap(), expected_questions());
        assert_eq!(
            store.question_thread("int_second").await.unwrap().as_deref(),
            Some("second")
        );
        assert_eq!(store.question_thread("int_late").await.unwrap(), None, "answered");
        let order: Vec<(u64, String, u64)> = store
            .records_after(0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|numbered| (numbered.record.at, numbered.record.thread_id, numbered.seq))
            .collect();
        let threads: Vec<(&str, u64)> = order.iter().map(|(at, thread, _)| (thread.as_str(), *at)).collect();
        assert_eq!(threads, EXPECTED_RECORDS);
        let seqs: Vec<u64> = order.iter().map(|(_, _, seq)| *seq).collect();
        assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "{seqs:?}");
        let after_first = store.records_after(seqs[0], 2).await.unwrap();
        assert_eq!(
            after_first.iter().map(|numbered| numbered.seq).collect::<Vec<_>>(),
            seqs[1..3]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_2_schema_gains_the_question_columns_filled_for_waiting_threads() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
    store
        .commit(save(waiting_thread("first", Some("int_first"), 10), None))
        .await
        .unwrap();
    store
        .commit(save(waiting_thread("remote", None, 5), None))
        .await
        .unwrap();
    drop(store);
    schema
        .connect()
        .await
        .batch_execute(
            "DROP INDEX threads_open_questions; DROP INDEX threads_by_open_interrupt;
             ALTER TABLE threads DROP COLUMN open_interrupt; ALTER TABLE threads DROP COLUMN asked_at;
             DELETE FROM tenx_schema_migrations WHERE version = 3;",
        )
        .await
        .unwrap();
    let store = schema.open().await;
    assert_eq!(
        store.open_questions().await.unwrap(),
        vec![OpenQuestion {
            thread_id: "first".into(),
            interrupt_id: "int_first".into(),
            asked_at: 10,
        }]
    );
    assert_eq!(
        store.question_thread("int_first").await.unwrap().as_deref(),
        Some("first")
    );
}
