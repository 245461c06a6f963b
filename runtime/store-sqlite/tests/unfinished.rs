//! `Store::unfinished`: the threads recovery looks at, from the SQLite file the same as from
//! the engine's listing default (the in-memory store), and the migration that indexes them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::collections::BTreeMap;

use common::{done, markers, open, receipt, save, temp_file, thread};
use rusqlite::Connection;
use tenx_engine::ports::{ReceiptState, Store};
use tenx_engine::thread::{Pending, PendingKind, RunProgress};
use tenx_engine::{Identity, MemoryStore};
use tenx_store_sqlite::{SqliteStore, schema_version};

fn progress() -> RunProgress {
    RunProgress {
        run_id: "run_1".into(),
        started_by: Identity::default(),
        recursion_limit: 25,
        input_text: String::new(),
        branches: BTreeMap::new(),
        fork: None,
    }
}

fn pending() -> Pending {
    Pending {
        kind: PendingKind::InterruptNode { node: "review".into() },
        interrupt: None,
        expires_at: None,
        fingerprint: None,
        asked_at: 1,
        state_version: 1,
        rejection_key: None,
        replaces: None,
        escalation: None,
        branch: None,
        within: Vec::new(),
    }
}

/// Idle, running, waiting, a stray marker, a done receipt: only `running` and `stray` count.
async fn fill(store: &dyn Store) {
    store.commit(save(thread("idle", None, 1, 1), None)).await.unwrap();
    let mut running = thread("running", None, 1, 2);
    running.run = Some(progress());
    store.commit(save(running, None)).await.unwrap();
    let mut waiting = thread("waiting", None, 1, 3);
    waiting.run = Some(progress());
    waiting.pending = Some(pending());
    store.commit(save(waiting, None)).await.unwrap();
    let marker = receipt("stray", "k", ReceiptState::InFlight { started_at: 5 });
    store.commit(markers(vec![marker], Vec::new())).await.unwrap();
    let finished = receipt("idle", "k2", done("ok"));
    store.commit(markers(vec![finished], Vec::new())).await.unwrap();
}

#[tokio::test]
async fn running_threads_and_threads_with_a_call_in_flight_are_unfinished() {
    let (_dir, path) = temp_file();
    let sqlite = open(&path).await;
    let memory = MemoryStore::new();
    fill(&sqlite).await;
    fill(&memory).await;
    let expected = vec!["running".to_owned(), "stray".to_owned()];
    assert_eq!(sqlite.unfinished().await.unwrap(), expected);
    // The in-memory store reads its threads through the port's default; a thread-less marker
    // is not in a listing, so only its running thread is found there.
    assert_eq!(memory.unfinished().await.unwrap(), vec!["running".to_owned()]);
    // Finishing the marker's call takes it off the list; the reopened file says the same.
    let finished = receipt("stray", "k", done("ok"));
    sqlite.commit(markers(vec![finished], Vec::new())).await.unwrap();
    drop(sqlite);
    let reopened = SqliteStore::open(&path).await.unwrap();
    assert_eq!(reopened.unfinished().await.unwrap(), vec!["running".to_owned()]);
}

#[tokio::test]
async fn a_version_1_file_gains_the_in_flight_index() {
    let (_dir, path) = temp_file();
    drop(open(&path).await);
    let connection = Connection::open(&path).unwrap();
    connection
        // What version 1 lacked: migration 2's index, migration 3's table, migration 4's columns.
        .execute_batch(
            "DROP INDEX receipts_in_flight; DROP TABLE stops; DROP INDEX threads_open_questions; \
             DROP INDEX threads_by_open_interrupt; ALTER TABLE threads DROP COLUMN open_interrupt; \
             ALTER TABLE threads DROP COLUMN asked_at; PRAGMA user_version = 1;",
        )
        .unwrap();
    drop(connection);
    let store = SqliteStore::open(&path).await.unwrap();
    let connection = Connection::open(&path).unwrap();
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, schema_version());
    let index: String = connection
        .query_row(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND name = 'receipts_in_flight'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(index, "receipts_in_flight");
    let plan: String = connection
        .query_row(
            "EXPLAIN QUERY PLAN SELECT thread_id FROM receipts WHERE in_flight = 1",
            [],
            |row| row.get(3),
        )
        .unwrap();
    assert!(plan.contains("receipts_in_flight"), "{plan}");
    drop(store);
}
