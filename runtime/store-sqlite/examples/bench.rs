//! Commit latency of the SQLite store: `cargo run --release -p tenx-store-sqlite --example bench`.
//!
//! Commits one thread step after another (a checkpoint with a short conversation, a receipt and
//! a record, as a tool step writes them) under each `synchronous` setting, and prints the median,
//! 90th and 99th percentile latency of `Store::commit`, plus `Store::load`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a benchmark: a failure should stop it loudly"
)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Map, json};
use tenx_engine::ports::{Commit, Receipt, ReceiptState, Record, Store};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::{ExecutionMeta, Message, Role};
use tenx_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

const STEPS: u64 = 2000;

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
    let dir = tempfile::tempdir().unwrap();
    for (name, synchronous) in [("FULL", Synchronous::Full), ("NORMAL", Synchronous::Normal)] {
        let path = dir.path().join(format!("bench-{name}.db"));
        let options = SqliteOptions {
            synchronous,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(&path, options).await.unwrap();
        let mut commits = Vec::new();
        let mut loads = Vec::new();
        for version in 1..=STEPS {
            let commit = step(version);
            let started = Instant::now();
            store.commit(commit).await.unwrap();
            commits.push(started.elapsed());
            let started = Instant::now();
            let loaded = store.load("bench").await.unwrap();
            loads.push(started.elapsed());
            assert_eq!(loaded.map(|thread| thread.version), Some(version));
        }
        summary(&format!("commit, synchronous={name}"), commits);
        summary(&format!("load, synchronous={name}"), loads);
    }
}
