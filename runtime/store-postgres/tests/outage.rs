//! The database going away and coming back, through a TCP relay the test controls: while it is
//! down every operation fails promptly with `StoreError::Transient` (the readiness probe
//! `/health/ready` makes included, so readiness is 503 rather than a hang), and once it is back
//! the same store works again without a restart (broken pooled connections are replaced).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{save, thread};
use tenx_engine::ports::{Store, StoreError};
use tenx_store_postgres::PostgresStore;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// A relay from a local port to the database; `down` cuts every connection and refuses new ones.
struct Relay {
    port: u16,
    down: Arc<AtomicBool>,
    cut: Arc<Notify>,
}

impl Relay {
    async fn start(target: (String, u16)) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (down, cut) = (Arc::new(AtomicBool::new(false)), Arc::new(Notify::new()));
        let (is_down, cuts) = (Arc::clone(&down), Arc::clone(&cut));
        tokio::spawn(async move {
            loop {
                let (mut inbound, _) = listener.accept().await.unwrap();
                if is_down.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused
                }
                let (target, cuts) = (target.clone(), Arc::clone(&cuts));
                tokio::spawn(async move {
                    let mut outbound = TcpStream::connect(target).await.unwrap();
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        () = cuts.notified() => {}
                    }
                });
            }
        });
        Self { port, down, cut }
    }

    fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
        if down {
            self.cut.notify_waiters();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_transient_and_the_store_recovers_when_the_database_returns() {
    let schema = schema_or_skip!();
    let config: tokio_postgres::Config = schema.base.parse().unwrap();
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(host) => host.clone(),
        other => panic!("the test database must be reached over TCP, not {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let relay = Relay::start((host, port)).await;
    let user = config.get_user().unwrap_or("postgres");
    let database = config.get_dbname().unwrap_or("postgres");
    let url = format!("postgres://{user}@127.0.0.1:{}/{database}", relay.port);
    let options = tenx_store_postgres::PostgresOptions {
        connect_timeout: Duration::from_secs(1),
        ..schema.options()
    };
    let store = PostgresStore::open(&url, options).await.unwrap();
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    assert_eq!(store.load("\u{0}readiness-probe").await, Ok(None), "ready");

    relay.set_down(true);
    let started = Instant::now();
    let probe = store.load("\u{0}readiness-probe").await;
    assert!(matches!(probe, Err(StoreError::Transient(_))), "{probe:?}");
    let commit = store.commit(save(thread("t", None, 2, 2), Some(1))).await;
    assert!(matches!(commit, Err(StoreError::Transient(_))), "{commit:?}");
    assert!(matches!(store.load("t").await, Err(StoreError::Transient(_))));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    relay.set_down(false);
    let mut back = None;
    for _ in 0..100 {
        if store.load("\u{0}readiness-probe").await == Ok(None) {
            back = Some(());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back.is_some(), "the store did not come back");
    // Nothing of the failed commit was applied; the same commit now goes through.
    assert_eq!(store.load("t").await.unwrap().unwrap().version, 1);
    store.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    let lease = tokio::time::timeout(Duration::from_secs(5), store.lock("t"))
        .await
        .unwrap();
    drop(lease);
}
