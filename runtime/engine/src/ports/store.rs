//! The store port: threads (their checkpoint), tool receipts, the append-only record, and the
//! per-thread lock. Honest about transactions: one [`Commit`] is applied whole or not at all,
//! and only if the thread's version is the one the engine read (optimistic concurrency), so a
//! crash never leaves a half-written step and two writers never both win.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{StopHandler, StopKind, Timestamp};
use crate::thread::ThreadRecord;

/// One atomic change.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// The thread's new checkpoint, or `None` to leave it as it is (an in-flight marker alone).
    pub thread: Option<ThreadRecord>,
    /// The version the stored thread must have for the commit to apply: `None` when the thread
    /// must not exist yet (a new thread). Ignored when `thread` is `None`.
    pub expected_version: Option<u64>,
    /// Receipts to insert or replace, keyed by `(thread_id, key)`.
    pub receipts: Vec<Receipt>,
    /// Records to append.
    pub records: Vec<Record>,
}

/// What the store knows about one tool execution, keyed by thread and idempotency key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    /// The thread.
    pub thread_id: String,
    /// The idempotency key.
    pub key: String,
    /// The declared tool.
    pub tool: String,
    /// Where the execution is.
    pub state: ReceiptState,
}

/// The state of a [`Receipt`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ReceiptState {
    /// The call was (about to be) sent and no result is stored: after a crash, recovery sends
    /// it again with the same key, or marks it `outcome_unknown` when the key cannot reach the
    /// service.
    InFlight {
        /// When the marker was stored.
        started_at: Timestamp,
    },
    /// The call returned: a repeat gets this result without running the tool.
    Done {
        /// The result (or the error text).
        result: Value,
        /// Whether the call failed.
        is_error: bool,
    },
    /// A crash interrupted a call that cannot be deduplicated: surfaced, never re-run.
    OutcomeUnknown,
}

/// An entry of the append-only record of decisions and tool calls. Never secrets, never message
/// bodies beyond normalised arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The thread.
    pub thread_id: String,
    /// When it happened.
    pub at: Timestamp,
    /// `approval` or `tool_call`.
    pub kind: String,
    /// The record's fields (see `docs/runtime.md`, "Records").
    pub fields: Value,
}

/// A thread in a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// The thread.
    pub thread_id: String,
    /// Its owner.
    pub owner: Option<String>,
    /// When it was created and last changed.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// A thread waiting at a question a person answers (a tool approval or an interrupt node; never
/// a remote tool call), as the approvals inbox lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenQuestion {
    /// The thread.
    pub thread_id: String,
    /// The open question's interrupt id.
    pub interrupt_id: String,
    /// When it was asked.
    pub asked_at: Timestamp,
}

impl OpenQuestion {
    /// The question `thread` waits at, if it waits at one a person answers.
    pub fn of(thread: &ThreadRecord) -> Option<Self> {
        let pending = thread.pending.as_ref()?;
        let interrupt = pending.interrupt.as_ref()?;
        Some(Self {
            thread_id: thread.thread_id.clone(),
            interrupt_id: interrupt.id.clone(),
            asked_at: pending.asked_at,
        })
    }
}

/// A record with its place in the store's record: `seq` grows with every record appended, across
/// threads, and is never reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumberedRecord {
    /// Its place (1-based).
    pub seq: u64,
    /// The record.
    pub record: Record,
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The thread's version was not the expected one (or it exists when it should not):
    /// somebody else wrote first. Nothing was applied.
    #[error("the thread changed while this request ran")]
    Conflict,
    /// The store is briefly unavailable; the operation may be retried.
    #[error("the store is unavailable: {0}")]
    Transient(String),
    /// Anything else (corruption, a failed migration): the message names it, without secrets.
    #[error("the store failed: {0}")]
    Failed(String),
}

/// A held per-thread lock: one run per thread. Dropping it releases the lock.
pub trait ThreadLease: Send + Sync {
    /// The locked thread.
    fn thread_id(&self) -> &str;
}

/// Durable (or in-memory) storage of threads.
#[async_trait]
pub trait Store: Send + Sync {
    /// The thread's checkpoint, or `None`.
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError>;

    /// Applies a commit atomically (see [`Commit`]).
    async fn commit(&self, commit: Commit) -> Result<(), StoreError>;

    /// Applies `commit` with `thread` as its new checkpoint (`commit.thread` is ignored):
    /// exactly [`Store::commit`] with `Commit::thread` set to `thread`. The checkpoint is lent,
    /// so a store that encodes it anyway needs no copy of it; this default makes the copy.
    /// The engine commits every step through this.
    async fn commit_checkpoint(&self, thread: &ThreadRecord, commit: Commit) -> Result<(), StoreError> {
        let mut commit = commit;
        commit.thread = Some(thread.clone());
        self.commit(commit).await
    }

    /// Exactly [`Store::commit_checkpoint`], with a hint a store may use to copy what did not
    /// change rather than encode it again: compared with the checkpoint stored at
    /// `commit.expected_version`, `thread` differs only in its own fields (outside its run's
    /// progress) and in the branches of the thread's own fork whose paths are in `moved` (their
    /// `ForkProgress::branches` entry and their `RunProgress::branches` entry). Every other branch
    /// of that fork, and its progress entry, is the same, in the same place. The engine commits
    /// a fork's later steps through this (each step moves a few of its branches); the default
    /// ignores the hint.
    async fn commit_fork_step(
        &self,
        thread: &ThreadRecord,
        commit: Commit,
        moved: &std::collections::BTreeSet<String>,
    ) -> Result<(), StoreError> {
        let _ = moved;
        self.commit_checkpoint(thread, commit).await
    }

    /// The receipt of `(thread_id, key)`, if any.
    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError>;

    /// Every receipt of a thread still in flight (recovery reads these).
    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError>;

    /// The thread's records, oldest first.
    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError>;

    /// Every thread waiting at a question a person answers, oldest question first (ties by
    /// thread id). The approvals inbox reads this.
    ///
    /// The default lists every thread and loads each; a store with an index overrides it.
    async fn open_questions(&self) -> Result<Vec<OpenQuestion>, StoreError> {
        const PAGE: usize = 1024;
        let mut found = Vec::new();
        let mut offset = 0_usize;
        loop {
            let page = self.list_threads(None, offset, PAGE).await?;
            for summary in &page {
                if let Some(question) = self.load(&summary.thread_id).await?.as_ref().and_then(OpenQuestion::of) {
                    found.push(question);
                }
            }
            if page.len() < PAGE {
                break;
            }
            offset = offset.saturating_add(PAGE);
        }
        found.sort_by(|a, b| a.asked_at.cmp(&b.asked_at).then_with(|| a.thread_id.cmp(&b.thread_id)));
        Ok(found)
    }

    /// The thread whose open question has this interrupt id, if any.
    ///
    /// The default searches [`Store::open_questions`]; a store with an index overrides it.
    async fn question_thread(&self, interrupt_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .open_questions()
            .await?
            .into_iter()
            .find(|question| question.interrupt_id == interrupt_id)
            .map(|question| question.thread_id))
    }

    /// Records of every thread appended after `after` (a [`NumberedRecord::seq`]; `0` for the
    /// first), in order, at most `limit`. Deleted threads' records are included.
    ///
    /// The default, for a store that cannot number its records, refuses.
    async fn records_after(&self, after: u64, limit: usize) -> Result<Vec<NumberedRecord>, StoreError> {
        let _ = (after, limit);
        Err(StoreError::Failed(
            "this store cannot list records across threads".to_owned(),
        ))
    }

    /// Threads, newest first, optionally only one owner's.
    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError>;

    /// Deletes a thread with its receipts (records are kept). Whether it existed.
    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError>;

    /// The threads a run may have been left unfinished in, by id in code-point order: every
    /// thread whose checkpoint has a run in progress and waits for nothing (no open question,
    /// no remote call), and every thread with a receipt still in flight. Recovery reads this at
    /// start-up (`Engine::recover`) and checks each thread under its lock.
    ///
    /// The default lists every thread and loads each; a store with an index overrides it.
    async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        const PAGE: usize = 1024;
        let mut found = std::collections::BTreeSet::new();
        let mut offset = 0_usize;
        loop {
            let page = self.list_threads(None, offset, PAGE).await?;
            for summary in &page {
                let Some(thread) = self.load(&summary.thread_id).await? else {
                    continue;
                };
                if (thread.run.is_some() && thread.pending.is_none())
                    || !self.in_flight(&summary.thread_id).await?.is_empty()
                {
                    found.insert(summary.thread_id.clone());
                }
            }
            if page.len() < PAGE {
                break;
            }
            offset = offset.saturating_add(PAGE);
        }
        Ok(found.into_iter().collect())
    }

    /// Takes the thread's lock, waiting for as long as another holder keeps it (the engine
    /// bounds the wait). The lock is released when the lease is dropped, and by the store when
    /// its holder dies.
    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError>;

    /// Sends a stop request to the holder of `thread_id`'s lock, in whichever process sharing
    /// the store holds it (this one included). Whether anyone held it (`false`: no run is in
    /// progress anywhere, nothing was sent). See [`super::StopNotice`] for what a store
    /// promises about delivery.
    ///
    /// The default, for a store that serves one process, sends nothing: the engine stops a
    /// local run directly.
    async fn publish_stop(&self, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
        let _ = (thread_id, kind);
        Ok(false)
    }

    /// Registers a receiver of the stop requests addressed to this process's locks (the engine
    /// registers itself when it is built). The store keeps it weakly and drops it once it is
    /// gone. The default, for a store that serves one process, receives nothing.
    fn subscribe_stops(&self, handler: std::sync::Weak<dyn StopHandler>) {
        let _ = handler;
    }
}
