//! Everything `tenx_engine::ports::Store` promises, asserted by one set of scenarios run on the
//! PostgreSQL store and, beside it, on the SQLite store, so the two cannot drift apart:
//! versioned atomic commits, receipts, records, listing, deletion, concurrent writers, two
//! stores on one database, and that all of it survives a reopen.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::sync::Arc;

use common::{done, markers, receipt, record, save, thread};
use tenx_engine::ports::{Receipt, ReceiptState, Store, StoreError, ThreadSummary};
use tenx_store_postgres::PostgresStore;

/// Runs `$scenario(store)` on a fresh PostgreSQL schema and on a fresh SQLite file.
macro_rules! on_both_stores {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let schema = schema_or_skip!();
                let store: Arc<dyn Store> = Arc::new(schema.open().await);
                super::$scenario(store).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let dir = tempfile::tempdir().unwrap();
                let store = tenx_store_sqlite::SqliteStore::open(dir.path().join("t.db")).await.unwrap();
                super::$scenario(Arc::new(store)).await;
            }
        }
    )*};
}

on_both_stores!(
    a_commit_applies_only_at_the_expected_version,
    a_refused_commit_applies_nothing,
    a_commit_that_fails_midway_applies_nothing,
    a_commit_without_a_thread_stores_markers_whatever_the_version,
    receipts_are_keyed_by_thread_and_key_and_replaced,
    records_are_appended_in_commit_order_and_survive_deletion,
    listing_is_newest_first_with_owner_filter_and_paging,
    fifty_concurrent_commits_at_one_version_have_one_winner,
    commits_with_and_without_records_racing_at_one_version_have_one_winner,
    a_checkpoint_commit_is_a_commit,
);

async fn a_commit_applies_only_at_the_expected_version(store: Arc<dyn Store>) {
    assert_eq!(store.load("t").await, Ok(None));
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    // A new thread must not exist yet.
    assert_eq!(
        store.commit(save(thread("t", None, 1, 1), None)).await,
        Err(StoreError::Conflict)
    );
    // A stale or future version is refused.
    assert_eq!(
        store.commit(save(thread("t", None, 2, 2), Some(0))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        store.commit(save(thread("t", None, 3, 2), Some(2))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        store.commit(save(thread("t", None, 3, 2), Some(u64::MAX))).await,
        Err(StoreError::Conflict)
    );
    // An update of a thread that does not exist is refused.
    assert_eq!(
        store.commit(save(thread("u", None, 2, 2), Some(1))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(store.load("u").await, Ok(None));
    store.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    assert_eq!(store.load("t").await.unwrap().unwrap(), thread("t", None, 2, 2));
}

async fn a_refused_commit_applies_nothing(store: Arc<dyn Store>) {
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let mut commit = save(thread("t", None, 2, 9), Some(7));
    commit
        .receipts
        .push(receipt("t", "k", ReceiptState::InFlight { started_at: 3 }));
    commit.records.push(record("t", 3));
    assert_eq!(store.commit(commit).await, Err(StoreError::Conflict));
    let stored = store.load("t").await.unwrap().unwrap();
    assert_eq!((stored.version, stored.updated_at), (1, 1));
    assert_eq!(store.receipt("t", "k").await, Ok(None));
    assert_eq!(store.records("t").await, Ok(Vec::new()));
}

async fn a_commit_that_fails_midway_applies_nothing(store: Arc<dyn Store>) {
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    // The thread and a receipt are fine, then a record's timestamp does not fit the store's
    // integers: nothing of the commit is applied.
    let mut commit = save(thread("t", None, 2, 2), Some(1));
    commit.receipts.push(receipt("t", "k", done("ok")));
    commit.records.push(record("t", 5));
    commit.records.push(record("t", u64::MAX));
    assert!(matches!(store.commit(commit).await, Err(StoreError::Failed(_))));
    assert_eq!(store.load("t").await.unwrap().unwrap().version, 1);
    assert_eq!(store.receipt("t", "k").await, Ok(None));
    assert_eq!(store.records("t").await, Ok(Vec::new()));
    // A version that does not fit is refused the same way, and the store goes on.
    assert!(matches!(
        store.commit(save(thread("t", None, u64::MAX, 2), Some(1))).await,
        Err(StoreError::Failed(_))
    ));
    store.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
}

async fn a_commit_without_a_thread_stores_markers_whatever_the_version(store: Arc<dyn Store>) {
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let mut marker = markers(
        vec![receipt("t", "k", ReceiptState::InFlight { started_at: 5 })],
        vec![record("t", 5)],
    );
    marker.expected_version = Some(99);
    store.commit(marker).await.unwrap();
    assert_eq!(store.load("t").await.unwrap().unwrap().version, 1);
    assert_eq!(store.in_flight("t").await.unwrap().len(), 1);
    assert_eq!(store.records("t").await.unwrap(), vec![record("t", 5)]);
}

async fn receipts_are_keyed_by_thread_and_key_and_replaced(store: Arc<dyn Store>) {
    store
        .commit(markers(
            vec![
                receipt("t", "b", ReceiptState::InFlight { started_at: 1 }),
                receipt("t", "a", ReceiptState::InFlight { started_at: 2 }),
                receipt("t", "c", ReceiptState::OutcomeUnknown),
                receipt("t", "é", ReceiptState::InFlight { started_at: 4 }),
                receipt("t", "Z", ReceiptState::InFlight { started_at: 4 }),
                receipt("other", "a", ReceiptState::InFlight { started_at: 3 }),
            ],
            Vec::new(),
        ))
        .await
        .unwrap();
    let keys = |receipts: Vec<Receipt>| receipts.into_iter().map(|r| r.key).collect::<Vec<_>>();
    // Ordered by key in code-point order, as the in-memory store orders them (whatever the
    // database's collation).
    assert_eq!(keys(store.in_flight("t").await.unwrap()), ["Z", "a", "b", "é"]);

    store
        .commit(markers(vec![receipt("t", "b", done("refunded"))], Vec::new()))
        .await
        .unwrap();
    assert_eq!(
        store.receipt("t", "b").await.unwrap(),
        Some(receipt("t", "b", done("refunded")))
    );
    assert_eq!(
        store.receipt("t", "c").await.unwrap().unwrap().state,
        ReceiptState::OutcomeUnknown
    );
    assert_eq!(keys(store.in_flight("t").await.unwrap()), ["Z", "a", "é"]);
    assert_eq!(keys(store.in_flight("other").await.unwrap()), ["a"]);
    assert_eq!(store.receipt("t", "zz").await, Ok(None));
    assert_eq!(store.in_flight("nobody").await, Ok(Vec::new()));
}

async fn records_are_appended_in_commit_order_and_survive_deletion(store: Arc<dyn Store>) {
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    // Commit order, not timestamp order.
    for at in [3, 1, 2] {
        store.commit(markers(Vec::new(), vec![record("t", at)])).await.unwrap();
    }
    store
        .commit(markers(vec![receipt("t", "k", done("ok"))], vec![record("u", 9)]))
        .await
        .unwrap();
    let ats = |records: Vec<tenx_engine::ports::Record>| records.iter().map(|r| r.at).collect::<Vec<_>>();
    assert_eq!(ats(store.records("t").await.unwrap()), [3, 1, 2]);
    assert_eq!(store.records("u").await.unwrap(), vec![record("u", 9)]);

    assert_eq!(store.delete_thread("t").await, Ok(true));
    assert_eq!(store.delete_thread("t").await, Ok(false));
    assert_eq!(store.delete_thread("never").await, Ok(false));
    assert_eq!(store.load("t").await, Ok(None));
    assert_eq!(store.receipt("t", "k").await, Ok(None));
    assert_eq!(ats(store.records("t").await.unwrap()), [3, 1, 2]);
    // The id can be used again: the thread is new.
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
}

async fn listing_is_newest_first_with_owner_filter_and_paging(store: Arc<dyn Store>) {
    for (id, owner, updated) in [
        ("a", Some("ann"), 10),
        ("b", Some("bob"), 30),
        ("c", Some("ann"), 20),
        ("d", None, 20),
        ("e", Some("ann"), 20),
    ] {
        store.commit(save(thread(id, owner, 1, updated), None)).await.unwrap();
    }
    // Same `updated_at`, a newer `created_at` first.
    let mut f = thread("f", Some("ann"), 1, 20);
    f.created_at = 2;
    store.commit(save(f, None)).await.unwrap();
    let ids = |list: Vec<ThreadSummary>| list.into_iter().map(|t| t.thread_id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_threads(None, 0, 10).await.unwrap()),
        ["b", "f", "c", "d", "e", "a"]
    );
    assert_eq!(
        ids(store.list_threads(Some("ann"), 0, 10).await.unwrap()),
        ["f", "c", "e", "a"]
    );
    assert_eq!(ids(store.list_threads(Some("ann"), 1, 2).await.unwrap()), ["c", "e"]);
    assert!(store.list_threads(Some("ann"), 4, 10).await.unwrap().is_empty());
    assert!(store.list_threads(None, 0, 0).await.unwrap().is_empty());
    assert!(store.list_threads(Some("nobody"), 0, 10).await.unwrap().is_empty());
    // Paging bounds beyond the store's integers are clamped, not refused.
    assert_eq!(store.list_threads(None, 0, usize::MAX).await.unwrap().len(), 6);
    assert!(store.list_threads(None, usize::MAX, 1).await.unwrap().is_empty());
    assert_eq!(
        store.list_threads(Some("bob"), 0, 1).await.unwrap(),
        vec![ThreadSummary {
            thread_id: "b".into(),
            owner: Some("bob".into()),
            created_at: 1,
            updated_at: 30
        }]
    );
    // An update moves a thread to the front.
    store
        .commit(save(thread("a", Some("ann"), 2, 40), Some(1)))
        .await
        .unwrap();
    assert_eq!(ids(store.list_threads(Some("ann"), 0, 1).await.unwrap()), ["a"]);
    assert_eq!(ids(store.list_threads(None, 0, 1).await.unwrap()), ["a"]);
}

async fn fifty_concurrent_commits_at_one_version_have_one_winner(store: Arc<dyn Store>) {
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    // Also fifty creations of one new thread: one wins, as one must.
    let tasks: Vec<_> = (0..50u64)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut commit = save(thread("t", None, 2, 100 + n), Some(1));
                commit.records.push(record("t", n));
                commit.receipts.push(receipt("t", &format!("k{n}"), done("ok")));
                let created = store.commit(save(thread("new", None, 1, n), None)).await;
                (store.commit(commit).await, created)
            })
        })
        .collect();
    let (mut wins, mut created) = (Vec::new(), 0);
    for (n, task) in tasks.into_iter().enumerate() {
        let (updated, creation) = task.await.unwrap();
        match updated {
            Ok(()) => wins.push(n as u64),
            Err(error) => assert_eq!(error, StoreError::Conflict),
        }
        match creation {
            Ok(()) => created += 1,
            Err(error) => assert_eq!(error, StoreError::Conflict),
        }
    }
    assert_eq!(wins.len(), 1, "{wins:?}");
    assert_eq!(created, 1);
    let winner = wins[0];
    let stored = store.load("t").await.unwrap().unwrap();
    assert_eq!((stored.version, stored.updated_at), (2, 100 + winner));
    // Only the winner's records and receipts exist.
    assert_eq!(store.records("t").await.unwrap(), vec![record("t", winner)]);
    for n in 0..50u64 {
        let stored = store.receipt("t", &format!("k{n}")).await.unwrap();
        assert_eq!(stored.is_some(), n == winner);
    }
}

async fn commits_with_and_without_records_racing_at_one_version_have_one_winner(store: Arc<dyn Store>) {
    // PostgreSQL writes a thread-only commit in one statement, and one with records in a
    // transaction under advisory locks: the two kinds racing must still have one winner per
    // version, round after round (no lost update between the paths).
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let mut expected_records = Vec::new();
    for round in 1..=10u64 {
        let tasks: Vec<_> = (0..8u64)
            .map(|n| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    let mut commit = save(thread("t", None, round + 1, round * 100 + n), Some(round));
                    if n % 2 == 0 {
                        commit.records.push(record("t", round * 100 + n));
                    }
                    let created = if n % 2 == 0 {
                        let mut creation = save(thread(&format!("new{round}"), None, 1, n), None);
                        creation.records.push(record(&format!("new{round}"), n));
                        store.commit(creation).await
                    } else {
                        store
                            .commit(save(thread(&format!("new{round}"), None, 1, n), None))
                            .await
                    };
                    (store.commit(commit).await, created)
                })
            })
            .collect();
        let (mut wins, mut created) = (Vec::new(), 0);
        for (n, task) in tasks.into_iter().enumerate() {
            let (updated, creation) = task.await.unwrap();
            match updated {
                Ok(()) => wins.push(n as u64),
                Err(error) => assert_eq!(error, StoreError::Conflict),
            }
            match creation {
                Ok(()) => created += 1,
                Err(error) => assert_eq!(error, StoreError::Conflict),
            }
        }
        assert_eq!(wins.len(), 1, "round {round}: {wins:?}");
        assert_eq!(created, 1, "round {round}");
        let stored = store.load("t").await.unwrap().unwrap();
        assert_eq!((stored.version, stored.updated_at), (round + 1, round * 100 + wins[0]));
        if wins[0] % 2 == 0 {
            expected_records.push(record("t", round * 100 + wins[0]));
        }
    }
    // Each round's winner appended its record if it had one; no loser's record exists.
    assert_eq!(store.records("t").await.unwrap(), expected_records);
}

async fn a_checkpoint_commit_is_a_commit(store: Arc<dyn Store>) {
    // `commit_checkpoint` lends the checkpoint; `commit.thread` is ignored.
    let mut commit = save(thread("ignored", None, 1, 1), None);
    commit.records.push(record("t", 4));
    store.commit_checkpoint(&thread("t", None, 1, 4), commit).await.unwrap();
    assert_eq!(store.load("t").await.unwrap(), Some(thread("t", None, 1, 4)));
    assert_eq!(store.load("ignored").await.unwrap(), None);
    assert_eq!(
        store
            .commit_checkpoint(&thread("t", None, 2, 5), save(thread("t", None, 9, 9), Some(9)))
            .await,
        Err(StoreError::Conflict)
    );
    // The readiness probe's id (NUL cannot be stored) is simply no thread.
    assert_eq!(store.load("\u{0}readiness-probe").await, Ok(None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_database_see_each_other_and_conflict() {
    let schema = schema_or_skip!();
    let first = schema.open().await;
    let second = PostgresStore::open(&schema.url(), tenx_store_postgres::PostgresOptions::default())
        .await
        .unwrap();
    assert_eq!(second.schema(), schema.schema, "`?schema=` in the URL names the schema");
    first.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    assert_eq!(second.load("t").await.unwrap().unwrap().version, 1);
    second.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    assert_eq!(
        first.commit(save(thread("t", None, 2, 3), Some(1))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(first.load("t").await.unwrap().unwrap().updated_at, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reopened_store_keeps_everything() {
    let schema = schema_or_skip!();
    let mut paused = thread("t", Some("ann"), 3, 7);
    paused.context.push(
        tenx_engine::wire::Message::text(
            "m1",
            tenx_engine::wire::Role::User,
            "Refund order 42, please ✓",
            1_700_000_000.5,
        )
        .into(),
    );
    {
        let store = schema.open().await;
        store.commit(save(thread("t", Some("ann"), 1, 1), None)).await.unwrap();
        let mut commit = save(paused.clone(), Some(1));
        commit.receipts.push(receipt("t", "k1", done("refunded")));
        commit
            .receipts
            .push(receipt("t", "k2", ReceiptState::InFlight { started_at: 6 }));
        commit.records.push(record("t", 6));
        store.commit(commit).await.unwrap();
    }
    let store = schema.open().await;
    assert_eq!(store.load("t").await.unwrap(), Some(paused.clone()));
    assert_eq!(
        store.receipt("t", "k1").await.unwrap(),
        Some(receipt("t", "k1", done("refunded")))
    );
    assert_eq!(
        store.in_flight("t").await.unwrap(),
        vec![receipt("t", "k2", ReceiptState::InFlight { started_at: 6 })]
    );
    assert_eq!(store.records("t").await.unwrap(), vec![record("t", 6)]);
    assert_eq!(store.list_threads(Some("ann"), 0, 10).await.unwrap().len(), 1);
    // And it goes on at the stored version.
    let mut next = paused;
    next.version = 4;
    store.commit(save(next, Some(3))).await.unwrap();
}

#[tokio::test]
async fn an_unreachable_database_is_a_clear_transient_error_without_the_password() {
    // Nothing listens on port 1; no database is needed for this test.
    let options = tenx_store_postgres::PostgresOptions {
        connect_timeout: std::time::Duration::from_secs(2),
        ..tenx_store_postgres::PostgresOptions::default()
    };
    let error = PostgresStore::open("postgres://ann:hunter2@127.0.0.1:1/tenx", options)
        .await
        .unwrap_err();
    let StoreError::Transient(message) = &error else {
        panic!("expected a transient error, got {error:?}");
    };
    assert!(
        message.starts_with("connecting to 'postgres://ann:***@127.0.0.1:1/tenx'"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
}
