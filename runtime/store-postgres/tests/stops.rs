//! Stops between two stores on one database (two pools and listeners, as two replicas): a stop
//! published by one reaches the other's handler while it holds the thread's lease, within a
//! bound; again until a run takes it; dropped with its lease; never a later lease of the
//! thread; nothing without a holder; and never a store on another schema.

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

use common::TestSchema;
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

/// How many lease rows the schema has.
async fn lease_rows(schema: &TestSchema) -> i64 {
    schema
        .connect()
        .await
        .query_one("SELECT count(*) FROM locks", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_published_by_one_store_reaches_the_holder_on_the_other_promptly() {
    let schema = schema_or_skip!();
    let (running, asking) = (schema.open().await, schema.open().await);
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
async fn a_stop_kind_survives_the_database_and_the_holders_own_store_receives_it_too() {
    let schema = schema_or_skip!();
    let store = schema.open().await;
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
    let schema = schema_or_skip!();
    let (one, other) = (schema.open().await, schema.open().await);
    let handler = Handler::refusing(0);
    subscribe(&one, &handler);
    assert!(!other.publish_stop("t1", StopKind::Cancel).await.unwrap());
    // A lease that was released is no holder either.
    drop(one.lock("t1").await.unwrap());
    let started = Instant::now();
    while lease_rows(&schema).await != 0 {
        assert!(started.elapsed() < Duration::from_secs(2), "the lease was not released");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!other.publish_stop("t1", StopKind::Cancel).await.unwrap());
    // An expired lease neither: its holder crashed (here: the row's deadline moved back).
    let _lease = one.lock("t2").await.unwrap();
    schema
        .connect()
        .await
        .execute(
            "UPDATE locks SET expires_at = clock_timestamp() - interval '1 second' WHERE thread_id = 't2'",
            &[],
        )
        .await
        .unwrap();
    assert!(!other.publish_stop("t2", StopKind::Cancel).await.unwrap());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(handler.seen().is_empty(), "{:?}", handler.seen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_nobody_took_is_handed_again_until_taken_and_forgotten_with_its_lease() {
    let schema = schema_or_skip!();
    let (running, asking) = (schema.open().await, schema.open().await);
    let handler = Handler::refusing(3);
    subscribe(&running, &handler);
    let lease = running.lock("t1").await.unwrap();
    assert!(asking.publish_stop("t1", StopKind::Cancel).await.unwrap());
    wait_for("four deliveries", Duration::from_secs(3), || handler.seen().len() >= 4).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(handler.seen().len(), 4, "taken at the fourth, then never again");

    // Every handler of the store is handed it (the first takes this one).
    let refusing = Handler::refusing(usize::MAX);
    subscribe(&running, &refusing);
    let before = handler.seen().len();
    assert!(asking.publish_stop("t1", StopKind::Cancel).await.unwrap());
    wait_for("a delivery", Duration::from_secs(2), || !refusing.seen().is_empty()).await;
    assert!(handler.seen().len() > before, "every handler of the store is handed it");
    drop(lease);

    // A notice no run ever takes is handed again while its lease is held, and dropped with it.
    let stubborn = schema.open().await;
    let never = Handler::refusing(usize::MAX);
    subscribe(&stubborn, &never);
    let lease = stubborn.lock("t2").await.unwrap();
    assert!(asking.publish_stop("t2", StopKind::Cancel).await.unwrap());
    wait_for("three deliveries", Duration::from_secs(2), || never.seen().len() >= 3).await;
    drop(lease);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let after_release = never.seen().len();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(never.seen().len(), after_release, "no delivery once the lease is gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_lease_of_the_thread_never_receives_an_earlier_stop() {
    let schema = schema_or_skip!();
    let (first, second) = (schema.open().await, schema.open().await);
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
    // And the first store's next lease of the thread neither.
    let first_seen = on_first.seen().len();
    drop(again);
    let again_first = tokio::time::timeout(Duration::from_secs(5), first.lock("t1"))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(on_second.seen().is_empty(), "the new holder was not stopped");
    assert_eq!(
        on_first.seen().len(),
        first_seen,
        "the first store's new lease was not stopped"
    );
    drop(again_first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_on_another_schema_never_receives_a_stop() {
    let (Some(one), Some(other)) = (common::schema(), common::schema()) else {
        return;
    };
    let (here, there) = (one.open().await, other.open().await);
    let (on_here, on_there) = (Handler::refusing(0), Handler::refusing(0));
    subscribe(&here, &on_here);
    subscribe(&there, &on_there);
    // Both hold a thread of the same id, each in its own schema.
    let (_held_here, _held_there) = (here.lock("t1").await.unwrap(), there.lock("t1").await.unwrap());
    assert!(here.publish_stop("t1", StopKind::Cancel).await.unwrap());
    wait_for("the delivery", Duration::from_secs(2), || !on_here.seen().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(on_there.seen().is_empty(), "{:?}", on_there.seen());
}
