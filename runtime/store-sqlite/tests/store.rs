//! Everything `tenx_engine::ports::Store` promises, over a SQLite file: versioned atomic
//! commits, receipts, records, listing, deletion, and that all of it survives a reopen.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::sync::Arc;

use common::{done, markers, open, receipt, record, save, temp_file, thread};
use tenx_engine::ports::{Receipt, ReceiptState, Store, StoreError, ThreadSummary};
use tenx_store_sqlite::SqliteStore;

#[tokio::test]
async fn a_commit_applies_only_at_the_expected_version() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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
    // An update of a thread that does not exist is refused.
    assert_eq!(
        store.commit(save(thread("u", None, 2, 2), Some(1))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(store.load("u").await, Ok(None));
    store.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    assert_eq!(store.load("t").await.unwrap().unwrap(), thread("t", None, 2, 2));
}

#[tokio::test]
async fn a_refused_commit_applies_nothing() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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

#[tokio::test]
async fn a_commit_that_fails_midway_applies_nothing() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    // The thread and the first receipt are written, then a record's timestamp does not fit
    // SQLite's integers: the whole transaction rolls back.
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

#[tokio::test]
async fn a_commit_without_a_thread_stores_markers_whatever_the_version() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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

#[tokio::test]
async fn receipts_are_keyed_by_thread_and_key_and_replaced() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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
    // Ordered by key in code-point order, as the in-memory store orders them.
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

#[tokio::test]
async fn records_are_appended_in_commit_order_and_survive_deletion() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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

#[tokio::test]
async fn listing_is_newest_first_with_owner_filter_and_paging() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
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
    // Paging bounds beyond SQLite's integers are clamped, not refused.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_commits_at_one_version_have_one_winner() {
    let (_dir, path) = temp_file();
    let store = Arc::new(open(&path).await);
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let tasks: Vec<_> = (0..50u64)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut commit = save(thread("t", None, 2, 100 + n), Some(1));
                commit.records.push(record("t", n));
                commit.receipts.push(receipt("t", &format!("k{n}"), done("ok")));
                store.commit(commit).await
            })
        })
        .collect();
    let mut wins = Vec::new();
    for (n, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(()) => wins.push(n as u64),
            Err(error) => assert_eq!(error, StoreError::Conflict),
        }
    }
    assert_eq!(wins.len(), 1, "{wins:?}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_file_see_each_other_and_conflict() {
    let (_dir, path) = temp_file();
    let first = open(&path).await;
    let second = open(&path).await;
    first.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    assert_eq!(second.load("t").await.unwrap().unwrap().version, 1);
    second.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    assert_eq!(
        first.commit(save(thread("t", None, 2, 3), Some(1))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(first.load("t").await.unwrap().unwrap().updated_at, 2);
}

#[tokio::test]
async fn a_reopened_file_keeps_everything() {
    let (_dir, path) = temp_file();
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
        let store = open(&path).await;
        store.commit(save(thread("t", Some("ann"), 1, 1), None)).await.unwrap();
        let mut commit = save(paused.clone(), Some(1));
        commit.receipts.push(receipt("t", "k1", done("refunded")));
        commit
            .receipts
            .push(receipt("t", "k2", ReceiptState::InFlight { started_at: 6 }));
        commit.records.push(record("t", 6));
        store.commit(commit).await.unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.path(), path.as_path());
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
