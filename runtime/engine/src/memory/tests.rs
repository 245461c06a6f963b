use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, json};

use super::*;
use crate::wire::ExecutionMeta;

fn thread(id: &str, owner: Option<&str>, version: u64, updated_at: u64) -> ThreadRecord {
    ThreadRecord {
        format: crate::thread::CheckpointFormat::CURRENT,
        thread_id: id.into(),
        artifact_id: "sha256:art".into(),
        graph: "refunds".into(),
        owner: owner.map(str::to_string),
        version,
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

fn receipt(thread_id: &str, key: &str, state: ReceiptState) -> Receipt {
    Receipt {
        thread_id: thread_id.into(),
        key: key.into(),
        tool: "issue_refund".into(),
        state,
    }
}

fn record(thread_id: &str, at: u64) -> Record {
    Record {
        thread_id: thread_id.into(),
        at,
        kind: "tool_call".into(),
        fields: json!({"at": at}),
    }
}

pub(super) fn save(thread: ThreadRecord, expected_version: Option<u64>) -> Commit {
    Commit {
        thread: Some(thread),
        expected_version,
        receipts: Vec::new(),
        records: Vec::new(),
    }
}

#[tokio::test]
async fn a_commit_applies_only_at_the_expected_version() {
    let store = MemoryStore::new();
    assert_eq!(store.load("t").await, Ok(None));
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    // A new thread must not exist yet.
    assert_eq!(
        store.commit(save(thread("t", None, 1, 1), None)).await,
        Err(StoreError::Conflict)
    );
    // A stale or future version is refused.
    assert_eq!(
        store.commit(save(thread("t", None, 2, 2), Some(0))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        store.commit(save(thread("t", None, 3, 2), Some(2))).await,
        Err(StoreError::Conflict)
    );
    // An update of a thread that does not exist is refused.
    assert_eq!(
        store.commit(save(thread("u", None, 2, 2), Some(1))).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(store.load("u").await, Ok(None));
    store.commit(save(thread("t", None, 2, 2), Some(1))).await.unwrap();
    assert_eq!(store.load("t").await.unwrap().unwrap().version, 2);
}

#[tokio::test]
async fn a_refused_commit_applies_nothing() {
    let store = MemoryStore::new();
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let mut commit = save(thread("t", None, 2, 9), Some(7));
    commit
        .receipts
        .push(receipt("t", "k", ReceiptState::InFlight { started_at: 3 }));
    commit.records.push(record("t", 3));
    assert_eq!(store.commit(commit).await, Err(StoreError::Conflict));
    let stored = store.load("t").await.unwrap().unwrap();
    assert_eq!((stored.version, stored.updated_at), (1, 1));
    assert_eq!(store.receipt("t", "k").await, Ok(None));
    assert_eq!(store.records("t").await, Ok(Vec::new()));
}

#[tokio::test]
async fn a_commit_without_a_thread_stores_markers_whatever_the_version() {
    let store = MemoryStore::new();
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let marker = Commit {
        thread: None,
        expected_version: Some(99),
        receipts: vec![receipt("t", "k", ReceiptState::InFlight { started_at: 5 })],
        records: vec![record("t", 5)],
    };
    store.commit(marker).await.unwrap();
    assert_eq!(store.load("t").await.unwrap().unwrap().version, 1);
    assert_eq!(store.in_flight("t").await.unwrap().len(), 1);
    assert_eq!(store.records("t").await.unwrap().len(), 1);
}

#[tokio::test]
async fn receipts_are_keyed_by_thread_and_key_and_replaced() {
    let store = MemoryStore::new();
    let commit = |receipts| Commit {
        thread: None,
        expected_version: None,
        receipts,
        records: Vec::new(),
    };
    store
        .commit(commit(vec![
            receipt("t", "b", ReceiptState::InFlight { started_at: 1 }),
            receipt("t", "a", ReceiptState::InFlight { started_at: 2 }),
            receipt("t", "c", ReceiptState::OutcomeUnknown),
            receipt("other", "a", ReceiptState::InFlight { started_at: 3 }),
        ]))
        .await
        .unwrap();
    let keys = |receipts: Vec<Receipt>| receipts.into_iter().map(|r| r.key).collect::<Vec<_>>();
    assert_eq!(keys(store.in_flight("t").await.unwrap()), ["a", "b"]);

    let done = ReceiptState::Done {
        result: json!("refunded"),
        is_error: false,
    };
    store
        .commit(commit(vec![receipt("t", "b", done.clone())]))
        .await
        .unwrap();
    assert_eq!(store.receipt("t", "b").await.unwrap().unwrap().state, done);
    assert_eq!(keys(store.in_flight("t").await.unwrap()), ["a"]);
    assert_eq!(keys(store.in_flight("other").await.unwrap()), ["a"]);
    assert_eq!(store.receipt("t", "zz").await, Ok(None));
    assert_eq!(store.in_flight("nobody").await, Ok(Vec::new()));
}

#[tokio::test]
async fn records_are_appended_and_survive_deletion() {
    let store = MemoryStore::new();
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    for at in [1, 2, 3] {
        let commit = Commit {
            thread: None,
            expected_version: None,
            receipts: Vec::new(),
            records: vec![record("t", at)],
        };
        store.commit(commit).await.unwrap();
    }
    let marker = Commit {
        thread: None,
        expected_version: None,
        receipts: vec![receipt("t", "k", ReceiptState::InFlight { started_at: 1 })],
        records: Vec::new(),
    };
    store.commit(marker).await.unwrap();
    assert_eq!(
        store
            .records("t")
            .await
            .unwrap()
            .iter()
            .map(|r| r.at)
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );

    assert_eq!(store.delete_thread("t").await, Ok(true));
    assert_eq!(store.delete_thread("t").await, Ok(false));
    assert_eq!(store.load("t").await, Ok(None));
    assert_eq!(store.receipt("t", "k").await, Ok(None));
    assert_eq!(store.in_flight("t").await, Ok(Vec::new()));
    assert_eq!(store.records("t").await.unwrap().len(), 3);
    // The id can be used again: the thread is new.
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
}

#[tokio::test]
async fn listing_is_newest_first_with_owner_filter_and_paging() {
    let store = MemoryStore::new();
    for (id, owner, updated) in [
        ("a", Some("ann"), 10),
        ("b", Some("bob"), 30),
        ("c", Some("ann"), 20),
        ("d", None, 20),
        ("e", Some("ann"), 20),
    ] {
        store.commit(save(thread(id, owner, 1, updated), None)).await.unwrap();
    }
    let ids = |list: Vec<ThreadSummary>| list.into_iter().map(|t| t.thread_id).collect::<Vec<_>>();
    // Same `updated_at`: by id.
    assert_eq!(
        ids(store.list_threads(None, 0, 10).await.unwrap()),
        ["b", "c", "d", "e", "a"]
    );
    assert_eq!(
        ids(store.list_threads(Some("ann"), 0, 10).await.unwrap()),
        ["c", "e", "a"]
    );
    assert_eq!(ids(store.list_threads(Some("ann"), 1, 1).await.unwrap()), ["e"]);
    assert_eq!(
        ids(store.list_threads(Some("ann"), 3, 10).await.unwrap()),
        Vec::<String>::new()
    );
    assert_eq!(ids(store.list_threads(None, 0, 0).await.unwrap()), Vec::<String>::new());
    assert_eq!(
        ids(store.list_threads(Some("nobody"), 0, 10).await.unwrap()),
        Vec::<String>::new()
    );
    let first = store.list_threads(Some("bob"), 0, 1).await.unwrap();
    assert_eq!(
        first,
        vec![ThreadSummary {
            thread_id: "b".into(),
            owner: Some("bob".into()),
            created_at: 1,
            updated_at: 30
        }]
    );
    // An update moves a thread to the front.
    store
        .commit(save(thread("a", Some("ann"), 2, 40), Some(1)))
        .await
        .unwrap();
    assert_eq!(ids(store.list_threads(Some("ann"), 0, 1).await.unwrap()), ["a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_commits_at_one_version_have_one_winner() {
    let store = Arc::new(MemoryStore::new());
    store.commit(save(thread("t", None, 1, 1), None)).await.unwrap();
    let tasks: Vec<_> = (0..50u64)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.commit(save(thread("t", None, 2, 100 + n), Some(1))).await })
        })
        .collect();
    let mut wins = Vec::new();
    for (n, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(()) => wins.push(n),
            Err(error) => assert_eq!(error, StoreError::Conflict),
        }
    }
    assert_eq!(wins.len(), 1, "{wins:?}");
    let stored = store.load("t").await.unwrap().unwrap();
    assert_eq!(stored.version, 2);
    assert_eq!(stored.updated_at, 100 + wins[0] as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_lockers_never_hold_one_thread_together() {
    let store = Arc::new(MemoryStore::new());
    let holders = Arc::new(AtomicUsize::new(0));
    let entered = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (store, holders, entered) = (Arc::clone(&store), Arc::clone(&holders), Arc::clone(&entered));
            tokio::spawn(async move {
                let lease = store.lock("t").await.unwrap();
                assert_eq!(lease.thread_id(), "t");
                assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                entered.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_micros(200)).await;
                holders.fetch_sub(1, Ordering::SeqCst);
                drop(lease);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(entered.load(Ordering::SeqCst), 50);
    assert_eq!(store.locks.len(), 0, "released locks are forgotten");
}

#[tokio::test]
async fn a_waiting_lock_wakes_when_the_holder_lets_go() {
    let store = Arc::new(MemoryStore::new());
    let lease = store.lock("t").await.unwrap();
    // Another thread's lock is free.
    let other = tokio::time::timeout(Duration::from_millis(100), store.lock("u")).await;
    assert!(other.is_ok());
    drop(other);

    let waiter = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.lock("t").await.map(|lease| lease.thread_id().to_string()) })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished(), "the lock was taken twice");
    drop(lease);
    let woke = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(woke.unwrap(), "t");
    assert_eq!(store.locks.len(), 0);
}

#[tokio::test]
async fn a_cancelled_wait_does_not_keep_the_lock() {
    let store = MemoryStore::new();
    let lease = store.lock("t").await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(20), store.lock("t"))
            .await
            .is_err()
    );
    drop(lease);
    assert_eq!(store.locks.len(), 0);
    let again = tokio::time::timeout(Duration::from_millis(100), store.lock("t")).await;
    assert!(again.is_ok());
}

/// A thread paused at an approval, with every kind of value a checkpoint holds: floats that do
/// not survive a decimal round trip, big and negative integers, nested objects, internally
/// tagged enums (content blocks, the pending kind) and unicode.
fn paused_thread(id: &str) -> ThreadRecord {
    use crate::thread::{Branch, Pending, PendingKind, RunProgress};
    use crate::wire::{
        ContentBlock, ExecutionStatus, FunctionCall, InterruptObject, Message, Role, TokenUsage, ToolCall,
    };

    let arguments = json!({"order_id": "1042", "amount_cents": 500});
    let interrupt = InterruptObject {
        id: "int_0123456789abcdef0123456789abcdef".into(),
        key: "tool:call_1:0".into(),
        node: "desk".into(),
        value: json!({"action": "issue_refund", "normalized_arguments": arguments, "evidence": [], "expires_at": null}),
        message: "Refund 500 cents on order 1042? ✓ «ok»".into(),
        reason: "tool_approval".into(),
        response_schema: json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}),
        tool_call_id: Some("call_1".into()),
    };
    let mut assistant = Message::text("msg_2", Role::Assistant, "", 1_796_083_200.123_456_7);
    assistant.content = vec![ContentBlock::ToolCall {
        id: "call_1".into(),
        name: "issue_refund".into(),
        args: arguments.clone(),
        tool_type: None,
    }];
    assistant.tools_calls = Some(vec![ToolCall {
        id: "call_1".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "issue_refund".into(),
            arguments: arguments.to_string(),
        },
    }]);
    assistant
        .metadata
        .insert("allowed_tools".into(), json!(["issue_refund", "lookup_order"]));
    assistant.usages = Some(TokenUsage {
        completion_tokens: 7,
        prompt_tokens: 11,
        total_tokens: 18,
        ..TokenUsage::default()
    });
    let mut record = thread(id, Some("ana"), 2, 1_796_083_200_000);
    record.state.insert("ratio".into(), json!(0.1 + 0.2));
    record.state.insert("big".into(), json!(u64::MAX));
    record.state.insert("negative".into(), json!(-42));
    record
        .state
        .insert("nested".into(), json!({"a": [1, 2.5, "x", null, true], "b": {}}));
    record.context = vec![
        Message::text("msg_1", Role::User, "refund 1042", 1_796_083_199.999_999_9).into(),
        assistant.into(),
    ];
    record.execution.status = ExecutionStatus::InterruptedBefore;
    record.execution.interrupt_data = Some(json!({"interrupt": interrupt}));
    record.pending = Some(Pending {
        kind: PendingKind::ToolApproval {
            node: "desk".into(),
            tool: "issue_refund".into(),
            call_id: "call_1".into(),
            arguments,
            queued: Vec::new(),
        },
        interrupt: Some(interrupt),
        expires_at: Some(1_796_086_800_000),
        fingerprint: Some("sha256:5bd5".into()),
        asked_at: 1_796_083_200_000,
        state_version: 1,
        rejection_key: None,
        replaces: None,
        escalation: None,
        branch: None,
        within: Vec::new(),
    });
    let mut branches = BTreeMap::new();
    branches.insert(
        String::new(),
        Branch {
            node: "desk".into(),
            steps: 2,
            ..Branch::default()
        },
    );
    record.run = Some(RunProgress {
        run_id: "run_1".into(),
        started_by: crate::Identity::default(),
        recursion_limit: 25,
        input_text: "refund 1042".into(),
        branches,
        fork: None,
    });
    record
        .model_cursors
        .insert("desk_model".into(), json!({"turn": 1, "run": {"id": "run_1"}}));
    record
}

#[tokio::test]
async fn a_read_returns_exactly_what_was_committed() {
    let store = MemoryStore::new();
    let thread = paused_thread("t");
    let done = receipt(
        "t",
        "refund-1042-500",
        ReceiptState::Done {
            result: json!({"id": "re_1", "amount": 5.000_000_000_000_001}),
            is_error: false,
        },
    );
    let mut commit = save(thread.clone(), None);
    commit.receipts = vec![done.clone()];
    commit.records = vec![record("t", 7)];
    store.commit(commit).await.unwrap();
    assert_eq!(store.load("t").await.unwrap(), Some(thread.clone()));
    assert_eq!(store.receipt("t", "refund-1042-500").await.unwrap(), Some(done));
    assert_eq!(store.records("t").await.unwrap(), vec![record("t", 7)]);
    // Every read is a fresh copy: changing one changes nothing stored.
    let mut changed = store.load("t").await.unwrap().unwrap();
    changed.context.clear();
    assert_eq!(store.load("t").await.unwrap(), Some(thread));
}

#[test]
fn a_paused_thread_is_kept_in_fewer_bytes_than_its_json() {
    let thread = paused_thread("t");
    let packed = packed::Packed::pack(&thread, &"thread").unwrap();
    let json = serde_json::to_vec(&thread).unwrap();
    assert!(packed.len() <= json.len(), "{} > {}", packed.len(), json.len());
    assert_eq!(packed.unpack(&"thread").unwrap(), thread);
}

/// `thread` as `paused_thread`, its run in progress, with `messages` text messages after its
/// own two.
pub(super) fn running_thread(id: &str, messages: usize) -> ThreadRecord {
    use crate::wire::{ExecutionStatus, Message, Role};

    let mut thread = paused_thread(id);
    thread.pending = None;
    thread.execution.status = ExecutionStatus::Running;
    thread.execution.interrupt_data = None;
    for index in 0..messages {
        let text = format!("step {index}: «{}»", "x".repeat(index));
        thread
            .context
            .push(Message::text(format!("msg_step_{index}"), Role::Assistant, text, 1.5).into());
    }
    thread
}

#[test]
fn a_checkpoint_packs_to_the_bytes_write_named_writes() {
    for thread in [thread("t", None, 1, 1), paused_thread("t"), running_thread("t", 30)] {
        let mut bytes = Vec::new();
        let spans = checkpoint::pack(&mut bytes, &thread, None, &"thread").unwrap();
        assert_eq!(bytes, rmp_serde::to_vec_named(&thread).unwrap());
        assert_eq!(spans.context().len(), thread.context.len());
    }
}

#[test]
fn a_step_copies_the_messages_the_checkpoint_it_replaces_holds() {
    let before = running_thread("t", 3);
    let mut held = Vec::new();
    let spans = checkpoint::pack(&mut held, &before, None, &"thread").unwrap();
    let mut after = running_thread("t", 5);
    after.version = 3;
    let previous = checkpoint::Previous {
        bytes: &held,
        spans: &spans,
        moved: None,
    };
    let mut bytes = Vec::new();
    let copied = checkpoint::pack(&mut bytes, &after, Some(previous), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&after).unwrap());
    assert_eq!(copied.context().len(), 7);
    let shared: Vec<bool> = copied
        .context()
        .iter()
        .enumerate()
        .map(|(index, span)| spans.context().get(index).is_some_and(|held| span.copied_from(held)))
        .collect();
    assert_eq!(shared, [true, true, true, true, true, false, false]);

    // A conversation that lost a message copies those before it and encodes the rest.
    let mut shorter = after.clone();
    shorter.context.remove(1);
    let mut bytes = Vec::new();
    checkpoint::pack(&mut bytes, &shorter, Some(previous), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&shorter).unwrap());
}

#[test]
fn a_message_changed_under_its_id_is_refused_in_debug_builds() {
    let before = running_thread("t", 2);
    let mut held = Vec::new();
    let spans = checkpoint::pack(&mut held, &before, None, &"thread").unwrap();
    let mut after = before.clone();
    if let Some(message) = after.context.get_mut(2).map(Arc::make_mut) {
        message.timestamp = 2.5;
    }
    let previous = checkpoint::Previous {
        bytes: &held,
        spans: &spans,
        moved: None,
    };
    let outcome = checkpoint::pack(&mut Vec::new(), &after, Some(previous), &"thread 't'");
    if cfg!(debug_assertions) {
        let Err(StoreError::Failed(message)) = outcome else {
            panic!("{outcome:?}");
        };
        assert!(message.contains("'msg_step_0' changed under its id"), "{message}");
    }
}

#[tokio::test]
async fn steps_of_a_run_read_back_as_committed_and_rest_without_spans() {
    use crate::wire::ExecutionStatus;

    let store = MemoryStore::new();
    let mut thread = running_thread("t", 0);
    thread.version = 1;
    store
        .commit_checkpoint(&thread, save(thread.clone(), None))
        .await
        .unwrap();
    for step in 1..=4 {
        thread = running_thread("t", step);
        thread.version = u64::try_from(step).unwrap() + 1;
        let commit = save(thread.clone(), Some(thread.version - 1));
        store.commit_checkpoint(&thread, commit).await.unwrap();
        assert_eq!(store.load("t").await.unwrap(), Some(thread.clone()));
        assert!(store.data().threads["t"].spans.is_some());
    }
    thread.execution.status = ExecutionStatus::Completed;
    thread.version += 1;
    let commit = save(thread.clone(), Some(thread.version - 1));
    store.commit_checkpoint(&thread, commit).await.unwrap();
    assert_eq!(store.load("t").await.unwrap(), Some(thread));
    assert!(store.data().threads["t"].spans.is_none());
}
