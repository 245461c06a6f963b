//! Recovery in process: a run is "killed" while a tool call is in flight (its task aborted, so
//! nothing after the in-flight marker is stored), then a second engine over the same store
//! recovers it. Over the memory store; a stop while a request finishes a crashed run also over
//! SQLite. The crash tests with real processes and SQLite are in `tests/tests/crash.rs`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_artifact::LoadedArtifact;
use tenx_engine::ports::{Ids, ModelClient, Ports, Store, ToolError, ToolErrorKind, ToolInvocation, ToolRunner};
use tenx_engine::testing::{ManualClock, RecordingEvents, SequentialIds};
use tenx_engine::wire::{ExecutionStatus, Role};
use tenx_engine::{
    Engine, EngineOptions, Identity, MemoryStore, OnBusy, RecoveryOutcome, RunError, RunOutput, RunRequest,
    ScriptedModel, SkipReason,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::counting::{engine as steered_engine, program as counting_program};
use crate::harness::{Steered, T0, assistant_texts, example_artifact, tool_outputs, user};

/// A tool runner whose calls can be held forever (the process "dies" during them).
pub(crate) struct Holding {
    hold: AtomicBool,
    pub(crate) arrived: Notify,
    /// Wakes the calls held now: they then answer as a call let through does.
    freed: Notify,
    /// Set by [`Holding::free`]: a call that comes to wait after it does not wait.
    free: AtomicBool,
    deduplicates: bool,
    keys: Mutex<Vec<String>>,
}

impl Holding {
    pub(crate) fn new(hold: bool, deduplicates: bool) -> Arc<Self> {
        Arc::new(Self {
            hold: AtomicBool::new(hold),
            arrived: Notify::new(),
            freed: Notify::new(),
            free: AtomicBool::new(false),
            deduplicates,
            keys: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }

    /// Lets the calls sent from now on through (a call already held stays held until stopped).
    pub(crate) fn release(&self) {
        self.hold.store(false, Ordering::SeqCst);
    }

    /// Lets the calls held now answer too (and those sent from now on through).
    pub(crate) fn free(&self) {
        self.release();
        self.free.store(true, Ordering::SeqCst);
        self.freed.notify_waiters();
    }
}

#[async_trait]
impl ToolRunner for Holding {
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        self.keys.lock().unwrap().push(invocation.idempotency_key.to_owned());
        if self.hold.load(Ordering::SeqCst) {
            // Waiting for `free` before the test hears of the call: on a runtime of several
            // threads the test may free it before this task polls again, and `notify_waiters`
            // wakes only the waiters it finds.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            self.arrived.notify_one();
            // Held until a stop cuts it short (a "killed" run's task is aborted instead), or
            // until the test frees it.
            if !self.free.load(Ordering::SeqCst) {
                tokio::select! {
                    () = cancel.cancelled() => {
                        return Err(ToolError {
                            kind: ToolErrorKind::Connection,
                            message: "the call was cancelled".to_owned(),
                        });
                    }
                    () = freed => {}
                }
            }
        }
        Ok(json!(format!("Refunded under {}.", invocation.idempotency_key)))
    }

    fn deduplicates(&self, _: &tenx_artifact::Tool) -> bool {
        self.deduplicates
    }
}

fn engine(artifact: LoadedArtifact, store: Arc<dyn Store>, tools: Arc<Holding>, options: EngineOptions) -> Engine {
    engine_with_ids(artifact, store, tools, options, Arc::new(SequentialIds::new()))
}

fn engine_with_ids(
    artifact: LoadedArtifact,
    store: Arc<dyn Store>,
    tools: Arc<Holding>,
    options: EngineOptions,
    ids: Arc<dyn Ids>,
) -> Engine {
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let ports = Ports {
        store,
        models,
        tools,
        clock: Arc::new(ManualClock::new(T0)),
        ids,
    };
    Engine::new(artifact, ports, options).unwrap()
}

/// Runs the refund example to its approval, answers it, and "kills" the process while the
/// approved refund is in flight. Returns the store (a memory store).
async fn killed_during_the_refund(deduplicates: bool) -> Arc<MemoryStore> {
    killed_during_the_refund_in(Arc::new(MemoryStore::new()), deduplicates).await
}

/// [`killed_during_the_refund`] over `store`.
async fn killed_during_the_refund_in<S: Store + 'static>(store: Arc<S>, deduplicates: bool) -> Arc<S> {
    let tools = Holding::new(true, deduplicates);
    let first = engine(
        example_artifact("refund_approval"),
        store.clone(),
        tools.clone(),
        EngineOptions::default(),
    );
    let mut events = RecordingEvents::new();
    let request = RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user("Refund order 1042, 59.00")],
        ..RunRequest::default()
    };
    let paused = first.run(request, &mut events).await.unwrap();
    let interrupt = paused.thread.pending.unwrap().interrupt.unwrap().id;
    let answer = RunRequest {
        thread_id: Some("t".to_owned()),
        resume: Some(tenx_engine::ResumeAnswer {
            value: json!({"approved": true}),
            interrupt_id: Some(interrupt),
            note: None,
        }),
        ..RunRequest::default()
    };
    let running = tokio::spawn(async move {
        let mut events = RecordingEvents::new();
        first.run(answer, &mut events).await
    });
    tokio::time::timeout(Duration::from_secs(60), tools.arrived.notified())
        .await
        .expect("the refund was sent");
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    assert_eq!(tools.keys(), vec!["refund-1042-5900".to_owned()]);
    store
}

/// A SQLite store in a fresh directory, which lives as long as the directory does.
async fn sqlite() -> (Arc<tenx_store_sqlite::SqliteStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = tenx_store_sqlite::SqliteStore::open(dir.path().join("tenx.db"))
        .await
        .unwrap();
    (Arc::new(store), dir)
}

async fn records<S: Store + ?Sized>(store: &Arc<S>) -> Vec<Value> {
    store
        .records("t")
        .await
        .unwrap()
        .into_iter()
        .map(|record| record.fields)
        .collect()
}

#[tokio::test]
async fn an_approved_call_in_flight_is_sent_again_with_the_same_key_and_the_run_finishes() {
    let store = killed_during_the_refund(true).await;
    // The answer and the call in flight were committed before the refund was sent.
    let stored = store.load("t").await.unwrap().unwrap();
    assert!(stored.pending.is_none());
    let in_flight = stored.run.as_ref().unwrap().branches[""].in_flight.clone().unwrap();
    assert_eq!(in_flight.tool, "issue_refund");
    assert!(in_flight.approved);
    assert_eq!(store.in_flight("t").await.unwrap().len(), 1);
    assert_eq!(records(&store).await[0]["decision"], "approve");
    assert_eq!(store.unfinished().await.unwrap(), vec!["t".to_owned()]);

    let tools = Holding::new(false, true);
    let second = engine(
        example_artifact("refund_approval"),
        store.clone(),
        tools.clone(),
        EngineOptions::default(),
    );
    let report = second.recover(&mut RecordingEvents::new()).await.unwrap();
    assert_eq!(report.outcome("t"), Some(&RecoveryOutcome::Finished));
    assert_eq!(
        tools.keys(),
        vec!["refund-1042-5900".to_owned()],
        "the same key, sent once more"
    );
    let thread = store.load("t").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        assistant_texts(&thread.context),
        vec!["Refunded under refund-1042-5900.".to_owned()]
    );
    assert!(store.in_flight("t").await.unwrap().is_empty());
    let outcomes: Vec<Value> = records(&store).await.iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, vec![Value::Null, json!("resent"), json!("completed")]);
    assert!(store.unfinished().await.unwrap().is_empty());
    // A second recovery finds nothing to do.
    assert!(
        second
            .recover(&mut RecordingEvents::new())
            .await
            .unwrap()
            .threads
            .is_empty()
    );
}

#[tokio::test]
async fn a_call_that_cannot_deduplicate_becomes_outcome_unknown_and_is_never_sent_again() {
    let store = killed_during_the_refund(false).await;
    let tools = Holding::new(false, false);
    let second = engine(
        example_artifact("refund_approval"),
        store.clone(),
        tools.clone(),
        EngineOptions::default(),
    );
    let report = second.recover(&mut RecordingEvents::new()).await.unwrap();
    assert_eq!(report.outcome("t"), Some(&RecoveryOutcome::Finished));
    assert!(tools.keys().is_empty(), "never sent again");
    let thread = store.load("t").await.unwrap().unwrap();
    let outputs = tool_outputs(&thread.context);
    assert_eq!(outputs.len(), 1);
    assert!(
        outputs[0].as_str().unwrap().contains("(outcome_unknown)"),
        "{outputs:?}"
    );
    // The model's `{result}` turn repeats what it was told.
    assert!(assistant_texts(&thread.context)[0].contains("outcome_unknown"));
    let receipt = store.receipt("t", "refund-1042-5900").await.unwrap().unwrap();
    assert_eq!(receipt.state, tenx_engine::ports::ReceiptState::OutcomeUnknown);
    let outcomes: Vec<Value> = records(&store).await.iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, vec![Value::Null, json!("outcome_unknown")]);
}

#[tokio::test]
async fn waiting_threads_are_left_alone_and_a_held_thread_is_skipped_as_busy() {
    let store = Arc::new(MemoryStore::new());
    let tools = Holding::new(false, true);
    let options = EngineOptions {
        busy_wait: Duration::from_millis(50),
        ..EngineOptions::default()
    };
    let host = engine(
        example_artifact("refund_approval"),
        store.clone(),
        tools.clone(),
        options,
    );
    let mut events = RecordingEvents::new();
    for thread in ["paused", "held"] {
        let request = RunRequest {
            thread_id: Some(thread.to_owned()),
            messages: vec![user("Refund order 7, 1.00")],
            identity: Identity::anonymous(),
            ..RunRequest::default()
        };
        host.run(request, &mut events).await.unwrap();
    }
    // Make `held` look mid-run: its question answered, no call in flight yet.
    let mut held = store.load("held").await.unwrap().unwrap();
    held.pending = None;
    let version = held.version;
    held.version += 1;
    store
        .commit(tenx_engine::ports::Commit {
            thread: Some(held),
            expected_version: Some(version),
            receipts: Vec::new(),
            records: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(store.unfinished().await.unwrap(), vec!["held".to_owned()]);
    let lease = store.lock("held").await.unwrap();
    let report = host.recover(&mut events).await.unwrap();
    assert_eq!(
        report.outcome("held"),
        Some(&RecoveryOutcome::Skipped(SkipReason::Busy))
    );
    assert_eq!(
        report.outcome("paused"),
        None,
        "a thread waiting at a question is not listed"
    );
    drop(lease);
    assert!(tools.keys().is_empty());
}

/// Counting ids of a second process: they never repeat the first one's (random ids never do).
struct Later(SequentialIds);

impl Ids for Later {
    fn thread_id(&self) -> String {
        format!("later_{}", self.0.thread_id())
    }

    fn run_id(&self) -> String {
        format!("later_{}", self.0.run_id())
    }

    fn message_id(&self) -> String {
        format!("later_{}", self.0.message_id())
    }

    fn interrupt_id(&self) -> String {
        self.0.interrupt_id()
    }
}

/// The refund example with one text changed: another artifact (another id) over the same graph.
fn changed_refund_example() -> LoadedArtifact {
    let text = crate::harness::example("refund_approval").replace("Refund declined.", "The refund was declined.");
    crate::harness::compile_named("examples/refund_approval/main.tenx", &text)
}

#[tokio::test]
async fn a_run_another_artifact_left_mid_call_is_ended_its_call_never_resent_and_a_new_message_runs() {
    let store = killed_during_the_refund(true).await;
    let before = store.load("t").await.unwrap().unwrap();
    let tools = Holding::new(false, true);
    let second = engine_with_ids(
        changed_refund_example(),
        store.clone(),
        tools.clone(),
        EngineOptions::default(),
        Arc::new(Later(SequentialIds::new())),
    );
    assert_ne!(second.artifact_id(), before.artifact_id);
    let mut events = RecordingEvents::new();
    let report = second.recover(&mut events).await.unwrap();
    let Some(RecoveryOutcome::Ended(error)) = report.outcome("t") else {
        panic!("the run is ended: {report:?}");
    };
    assert_eq!(error.code, tenx_engine::ErrorCode::GraphVersionMismatch);
    assert!(tools.keys().is_empty(), "never sent again under another program");

    let thread = store.load("t").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
    assert_eq!(thread.execution.internal_data["error_code"], "GRAPH_VERSION_MISMATCH");
    let message = thread.execution.internal_data["error"].as_str().unwrap();
    assert!(
        message.contains(&before.artifact_id) && message.contains(second.artifact_id()),
        "{message}"
    );
    assert!(thread.run.is_none());
    assert_eq!(thread.version, before.version + 1);
    // Its data is kept: the state, the artifact that made it, the conversation, plus the
    // answer to the call in flight.
    assert_eq!(thread.state, before.state);
    assert_eq!(thread.artifact_id, before.artifact_id);
    assert_eq!(thread.context[..before.context.len()], before.context[..]);
    let outputs = tool_outputs(&thread.context);
    assert_eq!(outputs.len(), 1);
    assert!(
        outputs[0].as_str().unwrap().contains("(outcome_unknown)"),
        "{outputs:?}"
    );
    let receipt = store.receipt("t", "refund-1042-5900").await.unwrap().unwrap();
    assert_eq!(receipt.state, tenx_engine::ports::ReceiptState::OutcomeUnknown);
    let outcomes: Vec<Value> = records(&store).await.iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, vec![Value::Null, json!("outcome_unknown")]);
    assert!(store.in_flight("t").await.unwrap().is_empty());
    assert!(store.unfinished().await.unwrap().is_empty());
    assert!(events.events().iter().any(
        |event| matches!(event, tenx_engine::ports::Event::Error { code, .. } if code == "GRAPH_VERSION_MISMATCH")
    ));
    assert!(
        second
            .recover(&mut RecordingEvents::new())
            .await
            .unwrap()
            .threads
            .is_empty()
    );

    // A new message starts a new run under this artifact.
    let request = RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user("Hello")],
        ..RunRequest::default()
    };
    let next = second.run(request, &mut RecordingEvents::new()).await.unwrap();
    assert_eq!(next.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(next.thread.artifact_id, second.artifact_id());
    assert!(tools.keys().is_empty());
}

#[tokio::test]
async fn a_new_message_to_a_run_a_crash_left_finishes_its_call_in_flight_first() {
    let store = killed_during_the_refund(true).await;
    let before = store.load("t").await.unwrap().unwrap();
    assert!(before.run.is_some() && before.pending.is_none());
    let tools = Holding::new(false, true);
    let second = engine(
        example_artifact("refund_approval"),
        store.clone(),
        tools.clone(),
        EngineOptions::default(),
    );
    // No recovery has run: the message meets the run the crash left.
    let request = RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user("Thanks. Anything else?")],
        ..RunRequest::default()
    };
    // The example's script is played out by the first run (its cursors are the thread's), so
    // the new run fails at its model: what matters here is what happened before it.
    let next = second.run(request, &mut RecordingEvents::new()).await.unwrap_err();
    assert_eq!(next.code, tenx_engine::ErrorCode::NodeFailed, "{next:?}");
    assert_eq!(
        tools.keys(),
        vec!["refund-1042-5900".to_owned()],
        "the call in flight is sent once more under its key, before the new run"
    );
    let thread = store.load("t").await.unwrap().unwrap();
    let outcomes: Vec<Value> = records(&store).await.iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, vec![Value::Null, json!("resent"), json!("completed")]);
    assert!(store.in_flight("t").await.unwrap().is_empty());
    assert!(store.unfinished().await.unwrap().is_empty());
    // The crashed run's result and answer come before the new message, which ran after them.
    let texts = assistant_texts(&thread.context);
    assert_eq!(
        texts.first().map(String::as_str),
        Some("Refunded under refund-1042-5900.")
    );
    let refund_answer = thread
        .context
        .iter()
        .position(|message| message.text_content() == "Refunded under refund-1042-5900.")
        .unwrap();
    let new_message = thread
        .context
        .iter()
        .position(|message| message.text_content() == "Thanks. Anything else?")
        .unwrap();
    assert!(refund_answer < new_message, "{:?}", thread.context);
}

/// The clerk's turn of two lookups, "killed" while the first is in flight (the second not sent
/// yet). Returns the store.
async fn killed_during_a_round(text: &str, steered: &Steered) -> Arc<MemoryStore> {
    steered.push_calls(&[
        ("c1", "lookup_order", json!({"order_id": "1042"})),
        ("c2", "lookup_order", json!({"order_id": "7"})),
    ]);
    let store = Arc::new(MemoryStore::new());
    let held = Holding::new(true, true);
    let first = steered_engine(text, store.clone(), held.clone(), steered);
    let running = tokio::spawn(async move {
        let request = RunRequest {
            thread_id: Some("t".to_owned()),
            messages: vec![user("Look up two orders")],
            ..RunRequest::default()
        };
        first.run(request, &mut RecordingEvents::new()).await
    });
    tokio::time::timeout(Duration::from_secs(60), held.arrived.notified())
        .await
        .expect("the first lookup was sent");
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    store
}

/// `on_busy = "cancel"` against a run a crash left cancels that run: its call in flight is
/// settled first (sent again once, under its key, its result recorded), then the run ends as a
/// cancelled run ends (the round's call not sent yet is answered "not run", and its model is
/// not asked again), and only then is the message served.
#[tokio::test]
async fn on_busy_cancel_against_a_run_a_crash_left_settles_its_call_then_ends_it() {
    let text = counting_program("");
    let steered = Steered::default();
    let store = killed_during_a_round(&text, &steered).await;
    let before = store.load("t").await.unwrap().unwrap();
    assert!(before.run.is_some() && before.pending.is_none());
    let asked_before = steered.seen_tools.lock().unwrap().len();
    // The one model turn left: the answer to the new message.
    steered.push_text("Hello again.");
    let tools = Holding::new(false, true);
    let second = steered_engine(&text, store.clone(), tools.clone(), &steered);
    let request = RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user("Never mind, just say hello.")],
        on_busy: OnBusy::Cancel,
        ..RunRequest::default()
    };
    let output = second.run(request, &mut RecordingEvents::new()).await.unwrap();
    assert_eq!(
        tools.keys(),
        ["t:clerk:c1"],
        "the call in flight is sent again under its key; the call not sent yet is not sent"
    );
    assert_eq!(
        steered.seen_tools.lock().unwrap().len(),
        asked_before + 1,
        "the cancelled run's model is not asked again: one model turn, the new message's"
    );
    assert_eq!(output.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(assistant_texts(&output.thread.context), ["Hello again."]);
    let thread = store.load("t").await.unwrap().unwrap();
    let outcomes: Vec<(Value, Value)> = records(&store)
        .await
        .iter()
        .map(|record| (record["call_id"].clone(), record["outcome"].clone()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (json!("c1"), json!("resent")),
            (json!("c1"), json!("completed")),
            (json!("c2"), json!("not_run")),
        ]
    );
    assert!(matches!(
        store.receipt("t", "t:clerk:c1").await.unwrap().unwrap().state,
        tenx_engine::ports::ReceiptState::Done { .. }
    ));
    assert!(store.in_flight("t").await.unwrap().is_empty());
    assert!(store.unfinished().await.unwrap().is_empty());
    // The round is answered where it was (c1's real result, c2 "not run"), before the message.
    assert_eq!(
        tool_outputs(&thread.context),
        [
            json!("Refunded under t:clerk:c1."),
            json!("Not run: the run was stopped.")
        ]
    );
    let roles: Vec<Role> = thread.context.iter().map(|message| message.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::User,
            Role::Assistant
        ]
    );
}

/// A second process's request to the thread a crash left during the refund on `store` (the
/// run's call in flight), once the request's crash-left part has sent that call again (held):
/// the store, the held tools, the second engine and the request being served.
async fn resending_a_crashed_call<S: Store + 'static>(
    store: Arc<S>,
) -> (
    Arc<S>,
    Arc<Holding>,
    Engine,
    tokio::task::JoinHandle<Result<RunOutput, RunError>>,
) {
    let store = killed_during_the_refund_in(store, true).await;
    let tools = Holding::new(true, true);
    let second = engine(
        example_artifact("refund_approval"),
        store.clone(),
        tools.clone(),
        EngineOptions::default(),
    );
    let request = RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user("Thanks. Anything else?")],
        ..RunRequest::default()
    };
    let serving = {
        let second = second.clone();
        tokio::spawn(async move { second.run(request, &mut RecordingEvents::new()).await })
    };
    tokio::time::timeout(Duration::from_secs(60), tools.arrived.notified())
        .await
        .expect("the call in flight was sent again");
    (store, tools, second, serving)
}

/// The request `serving` ends as a stopped run answers: interrupted after a step by the stop, no
/// run in progress, and only the request's own message returned.
async fn stopped_request(serving: tokio::task::JoinHandle<Result<RunOutput, RunError>>) {
    let output = tokio::time::timeout(Duration::from_secs(60), serving)
        .await
        .expect("the request ends")
        .unwrap()
        .unwrap();
    let execution = &output.thread.execution;
    assert_eq!(execution.status, ExecutionStatus::InterruptedAfter, "{execution:?}");
    assert_eq!(execution.interrupt_reason.as_deref(), Some("stop_requested"));
    assert!(output.thread.run.is_none());
    let texts: Vec<String> = output.messages.iter().map(|message| message.text_content()).collect();
    assert_eq!(
        texts,
        ["Thanks. Anything else?"],
        "a stopped run answers with its message only"
    );
}

/// A stop-after-step landing while a request finishes the run a crash left lets the call in
/// flight finish (sent again once, under its key, its result kept), then stops the request as
/// a stop does: its own run stops before its first step, and nothing is left in flight.
async fn stop_after_step_while_finishing_a_crashed_run<S: Store + 'static>(store: Arc<S>) {
    let (store, tools, second, serving) = resending_a_crashed_call(store).await;
    assert!(second.stop_after_step("t"), "the request is in progress");
    tools.free();
    stopped_request(serving).await;
    assert_eq!(
        tools.keys(),
        ["refund-1042-5900".to_owned()],
        "sent again once, under its key"
    );
    let outcomes: Vec<Value> = records(&store).await.iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, vec![Value::Null, json!("resent"), json!("completed")]);
    assert!(store.in_flight("t").await.unwrap().is_empty(), "the call finished");
    let thread = store.load("t").await.unwrap().unwrap();
    assert!(tool_outputs(&thread.context).contains(&json!("Refunded under refund-1042-5900.")));
    assert!(
        thread
            .context
            .iter()
            .all(|message| !message.metadata.contains_key("stopped_in_flight"))
    );
}

/// A stop that lands while a request finishes the run a crash left stops the whole request:
/// the call it cut short keeps the stop's rules (its receipt in flight, a placeholder carrying
/// it), and the request's own run stops before its first step, as a stopped run answers (the
/// message kept, nothing run for it). The thread's next run finishes the call under its key.
async fn stop_while_finishing_a_crashed_run<S: Store + 'static>(store: Arc<S>) {
    let (store, tools, second, serving) = resending_a_crashed_call(store).await;
    tools.release();
    assert!(second.stop("t"), "the request is in progress");
    stopped_request(serving).await;
    assert_eq!(
        tools.keys(),
        ["refund-1042-5900".to_owned()],
        "sent again once, under its key, and cut short by the stop; nothing after the stop"
    );
    let thread = store.load("t").await.unwrap().unwrap();
    assert!(assistant_texts(&thread.context).is_empty(), "no model answered");
    let outcomes: Vec<Value> = records(&store).await.iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, vec![Value::Null, json!("resent"), json!("interrupted")]);
    assert_eq!(
        store.in_flight("t").await.unwrap().len(),
        1,
        "the cut-short call stays in flight"
    );
    let placeholder = thread
        .context
        .iter()
        .find(|message| message.metadata.contains_key("stopped_in_flight"))
        .expect("the call's placeholder carries it");
    let at = |text: &str| thread.context.iter().position(|message| message.text_content() == text);
    let placeholder_at = thread
        .context
        .iter()
        .position(|message| message.message_id == placeholder.message_id);
    assert!(placeholder_at < at("Thanks. Anything else?"), "{:?}", thread.context);

    // The next message finishes the call under its key before anything else.
    let next = RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user("Hello?")],
        ..RunRequest::default()
    };
    let _ = second.run(next, &mut RecordingEvents::new()).await;
    assert_eq!(
        tools.keys(),
        ["refund-1042-5900".to_owned(), "refund-1042-5900".to_owned()]
    );
    assert!(store.in_flight("t").await.unwrap().is_empty());
    let thread = store.load("t").await.unwrap().unwrap();
    assert!(
        thread
            .context
            .iter()
            .all(|message| !message.metadata.contains_key("stopped_in_flight"))
    );
    assert!(tool_outputs(&thread.context).contains(&json!("Refunded under refund-1042-5900.")));
}

#[tokio::test]
async fn a_stop_after_step_while_a_request_finishes_a_crashed_run_finishes_the_call_and_stops() {
    stop_after_step_while_finishing_a_crashed_run(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_after_step_while_a_request_finishes_a_crashed_run_finishes_the_call_and_stops_on_sqlite() {
    let (store, _dir) = sqlite().await;
    stop_after_step_while_finishing_a_crashed_run(store).await;
}

#[tokio::test]
async fn a_stop_while_a_request_finishes_a_crashed_run_stops_the_request() {
    stop_while_finishing_a_crashed_run(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_while_a_request_finishes_a_crashed_run_stops_the_request_on_sqlite() {
    let (store, _dir) = sqlite().await;
    stop_while_finishing_a_crashed_run(store).await;
}
