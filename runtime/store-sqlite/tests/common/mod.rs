//! Helpers shared by the store's integration tests: threads, receipts, records and commits.

#![allow(dead_code, reason = "each test file uses a different subset of the helpers")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, json};
use tenx_engine::ports::{Commit, Receipt, ReceiptState, Record};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::ExecutionMeta;
use tenx_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

/// A thread at `version`, last changed at `updated_at`.
pub fn thread(id: &str, owner: Option<&str>, version: u64, updated_at: u64) -> ThreadRecord {
    let mut state = Map::new();
    state.insert("amount_cents".into(), json!(1500));
    ThreadRecord {
        format: tenx_engine::thread::CheckpointFormat::CURRENT,
        thread_id: id.into(),
        artifact_id: "sha256:art".into(),
        graph: "refunds".into(),
        owner: owner.map(str::to_string),
        version,
        created_at: 1,
        updated_at,
        state,
        context: Vec::new(),
        execution: ExecutionMeta::new(id),
        pending: None,
        run: None,
        resume_at: None,
        model_cursors: BTreeMap::new(),
        substitutions: BTreeMap::new(),
        stopped_run: None,
    }
}

pub fn receipt(thread_id: &str, key: &str, state: ReceiptState) -> Receipt {
    Receipt {
        thread_id: thread_id.into(),
        key: key.into(),
        tool: "issue_refund".into(),
        state,
    }
}

pub fn done(result: &str) -> ReceiptState {
    ReceiptState::Done {
        result: json!(result),
        is_error: false,
    }
}

pub fn record(thread_id: &str, at: u64) -> Record {
    Record {
        thread_id: thread_id.into(),
        at,
        kind: "tool_call".into(),
        fields: json!({"at": at, "outcome": "completed"}),
    }
}

/// A commit of `thread` alone.
pub fn save(thread: ThreadRecord, expected_version: Option<u64>) -> Commit {
    Commit {
        thread: Some(thread),
        expected_version,
        receipts: Vec::new(),
        records: Vec::new(),
    }
}

/// A commit without a thread.
pub fn markers(receipts: Vec<Receipt>, records: Vec<Record>) -> Commit {
    Commit {
        thread: None,
        expected_version: None,
        receipts,
        records,
    }
}

/// A fresh directory and the store file's path in it.
pub fn temp_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    (dir, path)
}

/// Options for tests: `NORMAL` (tests need not wait for fsync), short leases.
pub fn fast_options() -> SqliteOptions {
    SqliteOptions {
        synchronous: Synchronous::Normal,
        lease_ttl: std::time::Duration::from_millis(1000),
        lease_poll: std::time::Duration::from_millis(5),
        ..SqliteOptions::default()
    }
}

pub async fn open(path: &Path) -> SqliteStore {
    SqliteStore::open_with(path, fast_options()).await.unwrap()
}
