//! Thread locks across replicas: one holder per thread within a store and across two stores
//! (two pools, as two replicas) on one database; a crashed holder's lease expiring on the
//! database's clock; renewal keeping a lease held longer than its TTL; a cancelled wait taking
//! nothing; and a stale holder whose lease was taken over failing its commit with `Conflict`.

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

use common::{TestSchema, save, thread};
use tenx_engine::ports::{Store, StoreError};

/// The lease rows: (thread, holder, expires_at in ms since the epoch, on the database's clock).
async fn lease_rows(schema: &TestSchema) -> Vec<(String, String, i64)> {
    let client = schema.connect().await;
    client
        .query(
            "SELECT thread_id, holder, (extract(epoch FROM expires_at) * 1000)::int8 FROM locks ORDER BY thread_id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect()
}

/// The database's clock, in ms since the epoch.
async fn database_now(schema: &TestSchema) -> i64 {
    let client = schema.connect().await;
    client
        .query_one("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8", &[])
        .await
        .unwrap()
        .get(0)
}

/// Waits until no lease row is left (releases are deleted right after the drop).
async fn until_released(schema: &TestSchema) {
    for _ in 0..500 {
        if lease_rows(schema).await.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("leases left: {:?}", lease_rows(schema).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_lockers_on_two_stores_never_hold_one_thread_together() {
    let schema = schema_or_skip!();
    let stores = [Arc::new(schema.open().await), Arc::new(schema.open().await)];
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
    until_released(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_held_by_another_store_blocks_until_it_is_dropped() {
    let schema = schema_or_skip!();
    let (first, second) = (schema.open().await, Arc::new(schema.open().await));
    let lease = first.lock("t").await.unwrap();
    let rows = lease_rows(&schema).await;
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
    let renewed = lease_rows(&schema).await;
    let held = renewed.iter().find(|row| row.0 == "t").unwrap();
    assert!(
        held.2 > rows[0].2,
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
    let schema = schema_or_skip!();
    let store = schema.open().await;
    // A holder that died without releasing: its row stays until `expires_at`.
    let client = schema.connect().await;
    let expires: i64 = client
        .query_one(
            "INSERT INTO locks (thread_id, holder, expires_at)
               VALUES ('t', 'dead-replica', clock_timestamp() + interval '400 milliseconds')
             RETURNING (extract(epoch FROM expires_at) * 1000)::int8",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let lease = tokio::time::timeout(Duration::from_secs(10), store.lock("t"))
        .await
        .unwrap()
        .unwrap();
    // Taken only once the dead holder's lease had expired, on the database's clock.
    let taken_at = database_now(&schema).await;
    assert!(taken_at >= expires, "taken {} ms before expiry", expires - taken_at);
    let rows = lease_rows(&schema).await;
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].1, "dead-replica");
    drop(lease);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_dies_holding_a_lock_frees_it_after_the_ttl() {
    let schema = schema_or_skip!();
    // The "replica": a store on a runtime of its own, which takes the lock and then stops
    // (every task gone, the renewal with them) without releasing anything, as `kill -9` would.
    let (base, options) = (schema.base.clone(), schema.options());
    let took = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let store = tenx_store_postgres::PostgresStore::open(&base, options).await.unwrap();
            let lease = store.lock("t").await.unwrap();
            std::mem::forget(lease);
            std::mem::forget(store);
        });
        runtime.shutdown_background();
        std::time::Instant::now()
    })
    .join()
    .unwrap();
    let survivor = schema.open().await;
    let lease = tokio::time::timeout(Duration::from_secs(10), survivor.lock("t"))
        .await
        .unwrap()
        .unwrap();
    let waited = took.elapsed();
    // The TTL is 1 s: the lease could not be had before it ran out, and was soon after.
    assert!(waited >= Duration::from_millis(900), "taken after {waited:?}");
    assert!(waited < Duration::from_secs(5), "taken after {waited:?}");
    drop(lease);
    until_released(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_holder_loses_its_lease_and_its_commit_conflicts() {
    let schema = schema_or_skip!();
    let (first, second) = (schema.open().await, schema.open().await);
    first.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let stale = first.lock("t").await.unwrap();
    let read = first.load("t").await.unwrap().unwrap();
    // The holder stalls past its TTL (its lease expired on the database's clock, as after a
    // paused VM): another replica takes the thread over and commits.
    schema
        .connect()
        .await
        .execute(
            "UPDATE locks SET expires_at = clock_timestamp() - interval '1 second'",
            &[],
        )
        .await
        .unwrap();
    let fresh = tokio::time::timeout(Duration::from_secs(5), second.lock("t"))
        .await
        .unwrap()
        .unwrap();
    second.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    // The stale holder's commit at the version it read fails, and applies nothing.
    let mut next = read;
    next.version = 2;
    next.updated_at = 3;
    assert_eq!(first.commit(save(next, Some(1))).await, Err(StoreError::Conflict));
    assert_eq!(first.load("t").await.unwrap().unwrap().updated_at, 2);
    // Its release leaves the new holder's row alone.
    drop(stale);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rows = lease_rows(&schema).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    drop(fresh);
    until_released(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_sweeps_expired_leases() {
    let schema = schema_or_skip!();
    drop(schema.open().await);
    schema
        .connect()
        .await
        .batch_execute(
            "INSERT INTO locks (thread_id, holder, expires_at) VALUES
               ('old', 'dead', clock_timestamp() - interval '1 hour'),
               ('live', 'alive', clock_timestamp() + interval '1 minute')",
        )
        .await
        .unwrap();
    let store = schema.open().await;
    let rows = lease_rows(&schema).await;
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
    let schema = schema_or_skip!();
    let (first, second) = (schema.open().await, schema.open().await);
    let lease = first.lock("t").await.unwrap();
    for _ in 0..5 {
        assert!(
            tokio::time::timeout(Duration::from_millis(7), second.lock("t"))
                .await
                .is_err()
        );
    }
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
    drop(again);
    until_released(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_wakes_another_replicas_waiter_at_once() {
    let schema = schema_or_skip!();
    // Polling alone would take 10 s: the waiter is woken by the release's NOTIFY.
    let slow = tenx_store_postgres::PostgresOptions {
        lease_poll: Duration::from_secs(10),
        ..schema.options()
    };
    let first = schema.open().await;
    let second = Arc::new(
        tenx_store_postgres::PostgresStore::open(&schema.base, slow)
            .await
            .unwrap(),
    );
    for round in 0..3 {
        let lease = first.lock("t").await.unwrap();
        let waiter = {
            let second = Arc::clone(&second);
            tokio::spawn(async move { second.lock("t").await.map(drop) })
        };
        // The waiter has tried once and is waiting for its next try.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiter.is_finished(), "round {round}: the lock was taken twice");
        let released = std::time::Instant::now();
        drop(lease);
        tokio::time::timeout(Duration::from_secs(3), waiter)
            .await
            .unwrap_or_else(|_| panic!("round {round}: the waiter was not woken"))
            .unwrap()
            .unwrap();
        assert!(released.elapsed() < Duration::from_secs(3), "round {round}");
        until_released(&schema).await;
    }
}

/// The releases of `schema` announced on `tenx_leases` from now on, as they are heard.
async fn announced_releases(schema: &TestSchema) -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (client, mut connection) = tokio_postgres::connect(&schema.base, tokio_postgres::NoTls)
        .await
        .unwrap();
    let (send, heard) = tokio::sync::mpsc::unbounded_channel();
    let ours = schema.schema.clone();
    tokio::spawn(async move {
        // Other tests' schemas announce on the same channel: only this schema's count.
        while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            if let tokio_postgres::AsyncMessage::Notification(notification) = message
                && notification.payload() == ours
                && send.send(()).is_err()
            {
                return;
            }
        }
    });
    client.batch_execute("LISTEN tenx_leases").await.unwrap();
    // The client must outlive the test's listening; its connection task holds the socket.
    std::mem::forget(client);
    heard
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_is_announced_only_when_another_replica_waits_for_it() {
    let schema = schema_or_skip!();
    let slow = tenx_store_postgres::PostgresOptions {
        lease_poll: Duration::from_secs(10),
        ..schema.options()
    };
    let first = schema.open().await;
    let second = Arc::new(
        tenx_store_postgres::PostgresStore::open(&schema.base, slow)
            .await
            .unwrap(),
    );
    let mut heard = announced_releases(&schema).await;

    // Nobody waits: ten releases, and not one notification.
    for _ in 0..10 {
        drop(first.lock("alone").await.unwrap());
        until_released(&schema).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(heard.try_recv().is_err(), "a release nobody waited for was announced");

    // A waiter on the other store counts itself in the row, and the release announces itself.
    let lease = first.lock("t").await.unwrap();
    let waiter = {
        let second = Arc::clone(&second);
        tokio::spawn(async move { second.lock("t").await.map(drop) })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let waiters: i32 = schema
        .connect()
        .await
        .query_one("SELECT waiters FROM locks WHERE thread_id = 't'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(waiters, 1, "one failed take, one waiter counted");
    drop(lease);
    tokio::time::timeout(Duration::from_secs(3), heard.recv())
        .await
        .expect("the release a replica waited for was not announced")
        .unwrap();
    tokio::time::timeout(Duration::from_secs(3), waiter)
        .await
        .expect("the waiter was not woken")
        .unwrap()
        .unwrap();
    // The new holder starts with no waiters.
    until_released(&schema).await;
    let again = second.lock("t").await.unwrap();
    let waiters: i32 = schema
        .connect()
        .await
        .query_one("SELECT waiters FROM locks WHERE thread_id = 't'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(waiters, 0);
    drop(again);
}
