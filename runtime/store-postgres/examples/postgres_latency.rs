//! Latency of the PostgreSQL store:
//! `DATABASE_URL=postgres://… cargo run --release -p tenx-store-postgres --example postgres_latency`.
//!
//! In a schema of its own (dropped at the end): commits one thread step after another (a
//! checkpoint with a short conversation, a receipt and a record, as a tool step writes them),
//! loads it back, takes and releases its lock, and hands the lock from one store (replica) to
//! another: the median, 90th and 99th percentile of each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a benchmark: a failure should stop it loudly"
)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Map, json};
use std::sync::Arc;
use tenx_engine::ports::{Commit, Receipt, ReceiptState, Record, Store};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::{ExecutionMeta, Message, Role};

use tenx_store_postgres::{PostgresOptions, PostgresStore};

const STEPS: u64 = 1000;

fn thread(version: u64) -> ThreadRecord {
    let mut state = Map::new();
    state.insert("order_id".into(), json!("ord_42"));
    state.insert("amount_cents".into(), json!(1500));
    ThreadRecord {
        format: tenx_engine::thread::CheckpointFormat::CURRENT,
        thread_id: "bench".into(),
        artifact_id: "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0".into(),
        graph: "refunds".into(),
        owner: Some("user_1".into()),
        version,
        created_at: 1_700_000_000_000,
        updated_at: 1_700_000_000_000 + version,
        state,
        context: vec![
            Message::text("m1", Role::User, "Please refund order ord_42, it arrived broken.", 1.0).into(),
            Message::text(
                "m2",
                Role::Assistant,
                "I have issued a refund of 15.00 EUR for ord_42.",
                2.0,
            )
            .into(),
        ],
        execution: ExecutionMeta::new("bench"),
        pending: None,
        run: None,
        resume_at: None,
        model_cursors: BTreeMap::new(),
        substitutions: BTreeMap::new(),
        stopped_run: None,
    }
}

fn step(version: u64) -> Commit {
    Commit {
        thread: Some(thread(version)),
        expected_version: version.checked_sub(1).filter(|previous| *previous > 0),
        receipts: vec![Receipt {
            thread_id: "bench".into(),
            key: format!("refund:{version}"),
            tool: "issue_refund".into(),
            state: ReceiptState::Done {
                result: json!({"refund_id": "re_1", "status": "succeeded"}),
                is_error: false,
            },
        }],
        records: vec![Record {
            thread_id: "bench".into(),
            at: version,
            kind: "tool_call".into(),
            fields: json!({"tool": "issue_refund", "outcome": "completed", "idempotency_key": format!("refund:{version}")}),
        }],
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let index = ((sorted.len() - 1) as f64 * fraction).round() as usize;
    sorted[index]
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{name:<28} median {:>9.1?}  p90 {:>9.1?}  p99 {:>9.1?}  ({} samples)",
        percentile(&samples, 0.5),
        percentile(&samples, 0.9),
        percentile(&samples, 0.99),
        samples.len()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL to a PostgreSQL database (a schema of the bench's own is made and dropped)");
        std::process::exit(2);
    };
    let options = PostgresOptions {
        schema: format!("tenx_bench_{}", std::process::id()),
        ..PostgresOptions::default()
    };
    let store = PostgresStore::open(&url, options.clone()).await.unwrap();
    let (mut commits, mut loads, mut locks) = (Vec::new(), Vec::new(), Vec::new());
    for version in 1..=STEPS {
        let commit = step(version);
        let started = Instant::now();
        store.commit(commit).await.unwrap();
        commits.push(started.elapsed());
        let started = Instant::now();
        let loaded = store.load("bench").await.unwrap();
        loads.push(started.elapsed());
        assert_eq!(loaded.map(|thread| thread.version), Some(version));
        let started = Instant::now();
        drop(store.lock("bench").await.unwrap());
        locks.push(started.elapsed());
    }
    summary("commit (a tool step)", commits);
    summary("load", loads);
    summary("lock (released at once)", locks);
    // The lock handed between two replicas: held on one, awaited on the other, released.
    let other = Arc::new(PostgresStore::open(&url, options.clone()).await.unwrap());
    let mut handoffs = Vec::new();
    for _ in 0..200 {
        let lease = store.lock("handoff").await.unwrap();
        let waiter = {
            let other = Arc::clone(&other);
            tokio::spawn(async move {
                let lease = other.lock("handoff").await.unwrap();
                let taken = Instant::now();
                drop(lease);
                taken
            })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        let released = Instant::now();
        drop(lease);
        let taken = waiter.await.unwrap();
        handoffs.push(taken.duration_since(released));
        // Let the waiter's own release land before the next round.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    summary("lock handoff across stores", handoffs);
    let client = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(client.1);
    client
        .0
        .batch_execute(&format!("DROP SCHEMA {} CASCADE", options.schema))
        .await
        .unwrap();
}
