//! Thread locks: one holder per thread within a store, across two stores on one file (as two
//! processes would share it), a crashed holder's lease expiring, and renewal keeping a lease
//! that is held longer than its TTL.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{fast_options, open, temp_file};
use rusqlite::Connection;
use tenx_engine::ports::Store;
use tenx_store_sqlite::SqliteStore;

/// The lease rows in the file: (thread, holder, expires_at).
fn lease_rows(path: &std::path::Path) -> Vec<(String, String, i64)> {
    let connection = Connection::open(path).unwrap();
    let mut statement = connection
        .prepare("SELECT thread_id, holder, expires_at FROM locks ORDER BY thread_id")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_lockers_on_two_stores_never_hold_one_thread_together() {
    let (_dir, path) = temp_file();
    let stores = [Arc::new(open(&path).await), Arc::new(open(&path).await)];
    let holders = Arc::new(AtomicUsize::new(0));
    let entered = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..50)
        .map(|n| {
            let store = Arc::clone(&stores[n % 2]);
            let (holders, entered) = (Arc::clone(&holders), Arc::clone(&entered));
            tokio::spawn(async move {
                let lease = store.lock("t").await.unwrap();
                assert_eq!(lease.thread_id(), "t");
                assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                entered.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_micros(300)).await;
                holders.fetch_sub(1, Ordering::SeqCst);
                drop(lease);
            })
        })
        .collect();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(entered.load(Ordering::SeqCst), 50);
    // Every release has reached the file once a later write has (writes run in order).
    let first = &stores[0];
    first.lock("other").await.map(drop).unwrap();
    first
        .commit(common::save(common::thread("x", None, 1, 1), None))
        .await
        .unwrap();
    let second = &stores[1];
    second
        .commit(common::save(common::thread("y", None, 1, 1), None))
        .await
        .unwrap();
    assert!(lease_rows(&path).is_empty(), "{:?}", lease_rows(&path));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_held_by_another_store_blocks_until_it_is_dropped() {
    let (_dir, path) = temp_file();
    let (first, second) = (open(&path).await, Arc::new(open(&path).await));
    let lease = first.lock("t").await.unwrap();
    let rows = lease_rows(&path);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "t");
    // Another thread's lock is free, in the other store too.
    let other = tokio::time::timeout(Duration::from_secs(5), second.lock("u")).await;
    assert!(other.is_ok());
    drop(other);

    let waiter = {
        let second = Arc::clone(&second);
        tokio::spawn(async move { second.lock("t").await.map(|lease| lease.thread_id().to_string()) })
    };
    // Held for 2.5 times its TTL (1 s): renewal keeps it.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!waiter.is_finished(), "the lock was taken twice");
    let renewed = lease_rows(&path);
    assert!(
        renewed[0].2 > rows[0].2,
        "the lease was not renewed: {rows:?} then {renewed:?}"
    );
    drop(lease);
    let woke = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(woke.unwrap(), "t");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_holders_lease_is_taken_over_once_it_expires() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    // A holder that died without releasing: its row stays until `expires_at`.
    let expires = now_millis() + 400;
    Connection::open(&path)
        .unwrap()
        .execute(
            "INSERT INTO locks (thread_id, holder, expires_at) VALUES ('t', 'dead-process', ?1)",
            [expires],
        )
        .unwrap();
    let lease = tokio::time::timeout(Duration::from_secs(10), store.lock("t"))
        .await
        .unwrap()
        .unwrap();
    // Taken only once the dead holder's lease had expired (the wall clock the leases use).
    let taken_at = now_millis();
    assert!(taken_at >= expires, "taken {} ms before expiry", expires - taken_at);
    let rows = lease_rows(&path);
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].1, "dead-process");
    drop(lease);
}

#[tokio::test]
async fn opening_the_file_sweeps_expired_leases() {
    let (_dir, path) = temp_file();
    drop(open(&path).await);
    let connection = Connection::open(&path).unwrap();
    connection
        .execute(
            "INSERT INTO locks (thread_id, holder, expires_at) VALUES ('old', 'dead', 1), ('live', 'alive', ?1)",
            [now_millis() + 60_000],
        )
        .unwrap();
    drop(connection);
    let store = SqliteStore::open_with(&path, fast_options()).await.unwrap();
    let rows = lease_rows(&path);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "live");
    // A live lease of another holder is respected.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), store.lock("live"))
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_wait_takes_nothing() {
    let (_dir, path) = temp_file();
    let (first, second) = (open(&path).await, open(&path).await);
    let lease = first.lock("t").await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(50), second.lock("t"))
            .await
            .is_err()
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(50), first.lock("t"))
            .await
            .is_err()
    );
    drop(lease);
    let again = tokio::time::timeout(Duration::from_secs(5), second.lock("t")).await;
    assert!(again.is_ok());
    drop(again);
    let again = tokio::time::timeout(Duration::from_secs(5), first.lock("t")).await;
    assert!(again.is_ok());
}

fn now_millis() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}
