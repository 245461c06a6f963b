//! `Store::unfinished`: the threads recovery looks at, from PostgreSQL the same as from the
//! SQLite file and (for threads) the engine's listing default, found through the `unfinished`
//! column's and the in-flight receipts' partial indexes rather than by reading checkpoints.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::collections::BTreeMap;

use common::{done, markers, receipt, save, thread};
use tenx_engine::ports::{ReceiptState, Store};
use tenx_engine::thread::{Pending, PendingKind, RunProgress};
use tenx_engine::{Identity, MemoryStore};

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

/// Idle, running, waiting, a stray marker, a done receipt, and a thread whose run ended: only
/// `running`, `Running` and `stray` count.
async fn fill(store: &dyn Store) {
    store.commit(save(thread("idle", None, 1, 1), None)).await.unwrap();
    for id in ["running", "Running"] {
        let mut running = thread(id, None, 1, 2);
        running.run = Some(progress());
        store.commit(save(running, None)).await.unwrap();
    }
    let mut waiting = thread("waiting", None, 1, 3);
    waiting.run = Some(progress());
    waiting.pending = Some(pending());
    store.commit(save(waiting, None)).await.unwrap();
    let mut ended = thread("ended", None, 1, 3);
    ended.run = Some(progress());
    store.commit(save(ended, None)).await.unwrap();
    store.commit(save(thread("ended", None, 2, 4), Some(1))).await.unwrap();
    let marker = receipt("stray", "k", ReceiptState::InFlight { started_at: 5 });
    store.commit(markers(vec![marker], Vec::new())).await.unwrap();
    let finished = receipt("idle", "k2", done("ok"));
    store.commit(markers(vec![finished], Vec::new())).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_threads_and_threads_with_a_call_in_flight_are_unfinished() {
    let schema = schema_or_skip!();
    let postgres = schema.open().await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = tenx_store_sqlite::SqliteStore::open(dir.path().join("t.db"))
        .await
        .unwrap();
    let memory = MemoryStore::new();
    fill(&postgres).await;
    fill(&sqlite).await;
    fill(&memory).await;
    let expected = vec!["Running".to_owned(), "running".to_owned(), "stray".to_owned()];
    assert_eq!(postgres.unfinished().await.unwrap(), expected);
    assert_eq!(sqlite.unfinished().await.unwrap(), expected);
    // The in-memory store reads its threads through the port's default; a thread-less marker
    // is not in a listing, so only its running threads are found there.
    assert_eq!(
        memory.unfinished().await.unwrap(),
        vec!["Running".to_owned(), "running".to_owned()]
    );
    // Finishing the marker's call takes it off the list; a reopened store says the same.
    let finished = receipt("stray", "k", done("ok"));
    postgres.commit(markers(vec![finished], Vec::new())).await.unwrap();
    drop(postgres);
    let reopened = schema.open().await;
    assert_eq!(
        reopened.unfinished().await.unwrap(),
        vec!["Running".to_owned(), "running".to_owned()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_threads_are_found_through_the_indexes() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
    fill(&store).await;
    let client = schema.connect().await;
    // Planned as on a big table, the query reads the partial indexes, never every checkpoint.
    client.batch_execute("SET enable_seqscan = off").await.unwrap();
    let plan: Vec<String> = client
        .query(
            "EXPLAIN SELECT thread_id FROM threads WHERE unfinished
             UNION SELECT thread_id FROM receipts WHERE in_flight ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let plan = plan.join("\n");
    assert!(plan.contains("threads_unfinished"), "{plan}");
    assert!(plan.contains("receipts_in_flight"), "{plan}");
    let flags: Vec<(String, bool)> = client
        .query("SELECT thread_id, unfinished FROM threads ORDER BY thread_id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(
        flags,
        [
            ("Running".to_owned(), true),
            ("ended".to_owned(), false),
            ("idle".to_owned(), false),
            ("running".to_owned(), true),
            ("waiting".to_owned(), false)
        ]
    );
}
