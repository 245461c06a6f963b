//! Stops between two stores on one file (as two processes would share it): a stop published by
//! one reaches the other's handler while it holds the thread's lease, within a bound; again
//! until a run takes it; never a later lease of the thread; nothing without a holder; old rows
//! pruned.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{open, temp_file};
use rusqlite::Connection;
use tenx_engine::ports::{StopHandler, StopKind, StopNotice, Store};

/// Records the notices it is handed; takes them once it has refused `refuse` of them.
#[derive(Default)]
struct Handler {
    seen: Mutex<Vec<StopNotice>>,
    refuse: AtomicUsize,
}

impl Handler {
    fn refusing(times: usize) -> Arc<Self> {
        let handler = Arc::new(Self::default());
        handler.refuse.store(times, Ordering::SeqCst);
        handler
    }

    fn seen(&self) -> Vec<StopNotice> {
        self.seen.lock().unwrap().clone()
    }
}

impl StopHandler for Handler {
    fn deliver(&self, notice: &StopNotice) -> bool {
        self.seen.lock().unwrap().push(notice.clone());
        self.refuse
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1))
            .is_err()
    }
}

fn subscribe(store: &dyn Store, handler: &Arc<Handler>) {
    let weak: std::sync::Weak<Handler> = Arc::downgrade(handler);
    store.subscribe_stops(weak);
}

async fn wait_for(what: &str, limit: Duration, done: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what} did not happen within {limit:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    started.elapsed()
}

fn stop_rows(path: &std::path::Path) -> i64 {
    Connection::open(path)
        .unwrap()
        .query_row("SELECT count(*) FROM stops", [], |row| row.get(0))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_published_by_one_store_reaches_the_holder_on_the_other_promptly() {
    let (_dir, path) = temp_file();
    let (running, asking) = (open(&path).await, open(&path).await);
    let (on_running, on_asking) = (Handler::refusing(0), Handler::refusing(0));
    subscribe(&running, &on_running);
    subscribe(&asking, &on_asking);
    let lease = running.lock("t1").await.unwrap();
    assert!(asking.publish_stop("t1", StopKind::Cancel).await.unwrap());
    let took = wait_for("the delivery", Duration::from_secs(2), || !on_running.seen().is_empty()).await;
    assert!(took < Duration::from_millis(500), "delivered after {took:?}");
    assert_eq!(
        on_running.seen(),
        [StopNotice {
            thread_id: "t1".into(),
            kind: StopKind::Cancel
        }]
    );
    // Taken: not handed again. The publisher holds nothing, so it receives nothing.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(on_running.seen().len(), 1);
    assert!(on_asking.seen().is_empty());
    drop(lease);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_kind_survives_the_file_and_the_holders_own_store_receives_it_too() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    let handler = Handler::refusing(0);
    subscribe(&store, &handler);
    let _lease = store.lock("t1").await.unwrap();
    // A lock held by this very store (a run that has not registered yet, another engine on it).
    assert!(store.publish_stop("t1", StopKind::AfterStep).await.unwrap());
    wait_for("the delivery", Duration::from_secs(2), || !handler.seen().is_empty()).await;
    assert_eq!(handler.seen()[0].kind, StopKind::AfterStep);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_holder_nothing_is_sent() {
    let (_dir, path) = temp_file();
    let (one, other) = (open(&path).await, open(&path).await);
    assert!(!other.publish_stop("t1", StopKind::Cancel).await.unwrap());
    assert_eq!(stop_rows(&path), 0);
    // A lease that was released is no holder either.
    drop(one.lock("t1").await.unwrap());
    wait_for("the release", Duration::from_secs(2), || {
        Connection::open(&path)
            .unwrap()
            .query_row("SELECT count(*) FROM locks", [], |row| row.get::<_, i64>(0))
            .unwrap()
            == 0
    })
    .await;
    assert!(!other.publish_stop("t1", StopKind::Cancel).await.unwrap());
    assert_eq!(stop_rows(&path), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_nobody_took_is_handed_again_until_taken_and_forgotten_with_its_lease() {
    let (_dir, path) = temp_file();
    let (running, asking) = (open(&path).await, open(&path).await);
    let handler = Handler::refusing(3);
    subscribe(&running, &handler);
    let lease = running.lock("t1").await.unwrap();
    assert!(asking.publish_stop("t1", StopKind::Cancel).await.unwrap());
    wait_for("four deliveries", Duration::from_secs(3), || handler.seen().len() >= 4).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(handler.seen().len(), 4, "taken at the fourth, then never again");

    // A notice no run ever takes is dropped with the lease it was addressed to.
    let refusing = Handler::refusing(usize::MAX);
    subscribe(&running, &refusing);
    let before = handler.seen().len();
    assert!(asking.publish_stop("t1", StopKind::Cancel).await.unwrap());
    wait_for("a delivery", Duration::from_secs(2), || !refusing.seen().is_empty()).await;
    drop(lease);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let after_release = refusing.seen().len();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        refusing.seen().len(),
        after_release,
        "no delivery once the lease is gone"
    );
    assert!(handler.seen().len() > before, "every handler of the store is handed it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_lease_of_the_thread_never_receives_an_earlier_stop() {
    let (_dir, path) = temp_file();
    let (first, second) = (open(&path).await, open(&path).await);
    let on_first = Handler::refusing(usize::MAX);
    let on_second = Handler::refusing(0);
    subscribe(&first, &on_first);
    subscribe(&second, &on_second);
    let lease = first.lock("t1").await.unwrap();
    // The stop is for the first holder; the publisher takes the lock next (`on_busy = cancel`).
    assert!(second.publish_stop("t1", StopKind::Cancel).await.unwrap());
    wait_for("the delivery", Duration::from_secs(2), || !on_first.seen().is_empty()).await;
    drop(lease);
    let again = tokio::time::timeout(Duration::from_secs(5), second.lock("t1"))
        .await
        .unwrap()
        .unwrap();
    let again_first = first.lock("t2").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(on_second.seen().is_empty(), "the new holder was not stopped");
    drop((again, again_first));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_older_than_a_minute_are_pruned_when_a_stop_is_published() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    {
        let connection = Connection::open(&path).unwrap();
        connection
            .execute(
                "INSERT INTO stops (thread_id, holder, kind, requested_at) VALUES ('old', 'h', 'cancel', ?1), ('recent', 'h', 'cancel', ?2)",
                [now - 120_000, now - 1_000],
            )
            .unwrap();
    }
    let _lease = store.lock("t1").await.unwrap();
    assert!(store.publish_stop("t1", StopKind::Cancel).await.unwrap());
    let connection = Connection::open(&path).unwrap();
    let threads: Vec<String> = connection
        .prepare("SELECT thread_id FROM stops ORDER BY seq")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(threads, ["recent", "t1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stops_already_in_the_file_at_open_are_not_delivered() {
    let (_dir, path) = temp_file();
    let first = open(&path).await;
    let lease = first.lock("t1").await.unwrap();
    assert!(first.publish_stop("t1", StopKind::Cancel).await.unwrap());
    drop(lease);
    drop(first);
    let store = open(&path).await;
    let handler = Handler::refusing(0);
    subscribe(&store, &handler);
    let _lease = store.lock("t1").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(handler.seen().is_empty(), "{:?}", handler.seen());
}
