//! The approvals inbox's store conformance fixture: threads waiting at questions asked at
//! different times, a remote call (never listed), an idle thread, one question answered, and
//! records across threads, interleaved. Every store's tests fill it ([`fill_questions`]) and
//! compare what the store answers with [`expected_questions`] and [`EXPECTED_RECORDS`], so the
//! in-memory, SQLite and PostgreSQL stores (and the port's defaults) answer alike.

use std::collections::BTreeMap;

use serde_json::{Map, json};

use crate::ports::{Commit, OpenQuestion, Record, Store, StoreError};
use crate::thread::{Pending, PendingKind, ThreadRecord};
use crate::wire::{ExecutionMeta, InterruptObject};

/// `(thread, at)` of each record [`fill_questions`] appends, in append order.
pub const EXPECTED_RECORDS: [(&str, u64); 4] = [("late", 40), ("first", 41), ("idle", 42), ("late", 43)];

/// A thread at `version`, waiting at the interrupt `interrupt` asked at `asked_at`, or at a remote
/// call when `interrupt` is `None`.
pub fn waiting_thread(id: &str, interrupt: Option<&str>, asked_at: u64) -> ThreadRecord {
    let kind = match interrupt {
        Some(_) => PendingKind::InterruptNode { node: "review".into() },
        None => PendingKind::RemoteTool {
            node: "agent".into(),
            tool: "lookup".into(),
            call_id: "c1".into(),
            queued: Vec::new(),
            arguments: serde_json::Value::Null,
        },
    };
    let mut thread = idle_thread(id, asked_at);
    thread.pending = Some(Pending {
        kind,
        interrupt: interrupt.map(|id| InterruptObject {
            id: id.into(),
            key: "node:review:0".into(),
            node: "review".into(),
            value: json!({}),
            message: "ok?".into(),
            reason: "human_review".into(),
            response_schema: json!({}),
            tool_call_id: None,
        }),
        expires_at: None,
        fingerprint: None,
        asked_at,
        state_version: 1,
        rejection_key: None,
        replaces: None,
        escalation: None,
        branch: None,
        within: Vec::new(),
    });
    thread
}

fn idle_thread(id: &str, updated_at: u64) -> ThreadRecord {
    ThreadRecord {
        format: crate::thread::CheckpointFormat::CURRENT,
        thread_id: id.into(),
        artifact_id: "sha256:art".into(),
        graph: "refunds".into(),
        owner: None,
        version: 1,
        created_at: 1,
        updated_at,
        state: Map::new(),
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

fn record(thread_id: &str, at: u64) -> Record {
    Record {
        thread_id: thread_id.into(),
        at,
        kind: "approval".into(),
        fields: json!({"decision": "approve"}),
    }
}

fn save(thread: ThreadRecord, expected_version: Option<u64>, records: Vec<Record>) -> Commit {
    Commit {
        thread: Some(thread),
        expected_version,
        receipts: Vec::new(),
        records,
    }
}

/// Three waiting threads asked at 30 (`late`), 10 (`first`) and 20 (`second`), a remote call, an
/// idle thread; then `late` is answered (its question cleared, with a record), and three more
/// records are appended across threads ([`EXPECTED_RECORDS`]).
pub async fn fill_questions(store: &dyn Store) -> Result<(), StoreError> {
    store
        .commit(save(waiting_thread("late", Some("int_late"), 30), None, Vec::new()))
        .await?;
    store
        .commit(save(waiting_thread("first", Some("int_first"), 10), None, Vec::new()))
        .await?;
    store
        .commit(save(waiting_thread("second", Some("int_second"), 20), None, Vec::new()))
        .await?;
    store
        .commit(save(waiting_thread("remote", None, 5), None, Vec::new()))
        .await?;
    store.commit(save(idle_thread("idle", 1), None, Vec::new())).await?;
    let mut answered = waiting_thread("late", Some("int_late"), 30);
    answered.pending = None;
    answered.version = 2;
    store.commit(save(answered, Some(1), vec![record("late", 40)])).await?;
    let more = Commit {
        thread: None,
        expected_version: None,
        receipts: Vec::new(),
        records: vec![record("first", 41), record("idle", 42)],
    };
    store.commit(more).await?;
    let last = Commit {
        thread: None,
        expected_version: None,
        receipts: Vec::new(),
        records: vec![record("late", 43)],
    };
    store.commit(last).await
}

/// The open questions after [`fill_questions`], oldest first.
pub fn expected_questions() -> Vec<OpenQuestion> {
    [("first", "int_first", 10), ("second", "int_second", 20)]
        .into_iter()
        .map(|(thread_id, interrupt_id, asked_at)| OpenQuestion {
            thread_id: thread_id.into(),
            interrupt_id: interrupt_id.into(),
            asked_at,
        })
        .collect()
}
