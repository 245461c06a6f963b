//! A stop that cuts a call short after it was sent is, for the call, a crash: its outcome is not
//! known. The call is never recorded as failed: its receipt stays in flight, its result is a
//! placeholder that carries it, and the thread's next run sends the same key again (once), with
//! the approved arguments and no second question, and shows the model the real result. A tool
//! that cannot deduplicate becomes `outcome_unknown` at once. A call the stop reached before it
//! was sent is never sent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_engine::ports::{
    DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest, ModelToolCall, NullEvents, Ports, ReceiptState,
    Store, ToolError, ToolErrorKind, ToolInvocation, ToolRunner,
};
use tenx_engine::testing::{ManualClock, SequentialIds};
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{Engine, EngineOptions, MemoryStore, OnBusy, ResumeAnswer, RunError, RunOutput, RunRequest};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::harness::{T0, compile, person, user};

const PROGRAM: &str = r#"
import std.approval.yes_no

model m {
  provider = scripted
  fallback = { text: "unused" }
}

tool pay(to: string "Who is paid", amount: int(min: 1, max: 100000) "How much, in cents") -> string {
  description = "Pay someone."
  risk = high
  approval {
    message   = "Pay {amount} cents to {to}?"
    response  = yes_no
    on_reject = "Not paid."
    approvers = [role("lead")]
  }
  idempotency_key = "pay-{to}-{amount}"
  run = http(POST, "http://127.0.0.1:9/pay", timeout: 30s)
}

tool note(text: string "What to note") -> string {
  description = "Note something."
  risk = low
  run = http(POST, "http://127.0.0.1:9/note", timeout: 30s)
}

agent a {
  model  = m
  prompt = "Pay when asked."
  tools  = [pay, note]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

const KEY: &str = "pay-alice-111";

/// A service behind the tool: it receives every call (and counts it by key) and, while
/// `hold` is set, answers only when released; a cancel makes the runner give up as the real
/// `http` runner does, though the service already received the call.
struct Service {
    hold: AtomicBool,
    deduplicates: bool,
    keys: Mutex<Vec<String>>,
    arrived: Notify,
}

impl Service {
    fn new(deduplicates: bool) -> Arc<Self> {
        Arc::new(Self {
            hold: AtomicBool::new(true),
            deduplicates,
            keys: Mutex::new(Vec::new()),
            arrived: Notify::new(),
        })
    }

    fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
}

#[async_trait]
impl ToolRunner for Service {
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: "the call was cancelled before it was sent".into(),
            });
        }
        self.keys.lock().unwrap().push(invocation.idempotency_key.to_owned());
        if self.hold.load(Ordering::SeqCst) {
            self.arrived.notify_one();
            cancel.cancelled().await;
            return Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: "the call was cancelled".into(),
            });
        }
        Ok(json!(format!(
            "{} done under {}",
            invocation.tool_name, invocation.idempotency_key
        )))
    }

    fn deduplicates(&self, _: &tenx_artifact::Tool) -> bool {
        self.deduplicates
    }
}

/// A model that answers from a queue and keeps every conversation it was shown.
#[derive(Default)]
struct Model {
    replies: Mutex<Vec<ModelReply>>,
    shown: Mutex<Vec<Vec<std::sync::Arc<Message>>>>,
}

impl Model {
    fn calls(&self, calls: &[(&str, &str, Value)]) {
        let tool_calls = calls
            .iter()
            .map(|(id, name, args)| ModelToolCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                arguments: args.to_string(),
            })
            .collect();
        self.replies.lock().unwrap().push(ModelReply {
            tool_calls,
            ..ModelReply::default()
        });
    }

    fn text(&self, text: &str) {
        self.replies.lock().unwrap().push(ModelReply {
            text: text.to_owned(),
            ..ModelReply::default()
        });
    }

    /// The tool results of the last conversation the model was shown.
    fn last_results(&self) -> Vec<Value> {
        let shown = self.shown.lock().unwrap();
        results(shown.last().unwrap())
    }
}

#[async_trait]
impl ModelClient for Model {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _: &mut dyn DeltaSink,
        _: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        self.shown.lock().unwrap().push(request.messages.to_vec());
        let mut replies = self.replies.lock().unwrap();
        if replies.is_empty() {
            return Err(ModelError {
                kind: tenx_engine::ports::ModelErrorKind::ScriptExhausted,
                message: "no reply left".to_owned(),
            });
        }
        Ok(replies.remove(0))
    }
}

fn results(messages: &[std::sync::Arc<Message>]) -> Vec<Value> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

struct Host {
    engine: Engine,
    store: Arc<MemoryStore>,
    service: Arc<Service>,
    model: Arc<Model>,
}

fn host(deduplicates: bool) -> Host {
    let artifact = compile(PROGRAM);
    let store = Arc::new(MemoryStore::new());
    let service = Service::new(deduplicates);
    let model = Arc::new(Model::default());
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    models.insert("m".to_owned(), model.clone());
    let ports = Ports {
        store: store.clone(),
        models,
        tools: service.clone(),
        clock: Arc::new(ManualClock::new(T0)),
        ids: Arc::new(SequentialIds::new()),
    };
    Host {
        engine: Engine::new(artifact, ports, EngineOptions::default()).unwrap(),
        store,
        service,
        model,
    }
}

fn say(text: &str, on_busy: OnBusy) -> RunRequest {
    RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user(text)],
        on_busy,
        ..RunRequest::default()
    }
}

type Running = tokio::task::JoinHandle<Result<RunOutput, RunError>>;

/// Asks for the payment, approves it, and returns the answer's run once the payment reached
/// the service (which holds it).
async fn approved_payment_in_flight(host: &Host) -> Running {
    host.model
        .calls(&[("c1", "pay", json!({"to": "alice", "amount": 111}))]);
    let paused = host
        .engine
        .run(say("pay alice 1.11", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    let interrupt = paused.thread.pending.unwrap().interrupt.unwrap().id;
    let engine = host.engine.clone();
    let answer = RunRequest {
        thread_id: Some("t".to_owned()),
        resume: Some(ResumeAnswer {
            value: json!({"approved": true}),
            interrupt_id: Some(interrupt),
            note: None,
        }),
        identity: person("bob", &["lead"]),
        ..RunRequest::default()
    };
    let running = tokio::spawn(async move { engine.run(answer, &mut NullEvents).await });
    tokio::time::timeout(Duration::from_secs(10), host.service.arrived.notified())
        .await
        .expect("the payment reached the service");
    running
}

async fn outcomes(store: &MemoryStore) -> Vec<String> {
    store
        .records("t")
        .await
        .unwrap()
        .into_iter()
        .filter(|record| record.kind == "tool_call")
        .map(|record| record.fields["outcome"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn receipt(store: &MemoryStore) -> ReceiptState {
    store.receipt("t", KEY).await.unwrap().unwrap().state
}

async fn stopped(running: Running) -> RunOutput {
    let output = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the stop reached the run")
        .unwrap()
        .unwrap();
    assert_eq!(output.thread.execution.status, ExecutionStatus::InterruptedAfter);
    assert_eq!(
        output.thread.execution.interrupt_reason.as_deref(),
        Some("stop_requested")
    );
    output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_during_an_approved_call_keeps_it_in_flight_and_the_next_run_sends_the_same_key_once() {
    let host = host(true);
    let running = approved_payment_in_flight(&host).await;
    assert!(host.engine.stop("t"));
    let output = stopped(running).await;

    // Not a definite failure: the receipt is still in flight, the record says interrupted.
    assert!(
        matches!(receipt(&host.store).await, ReceiptState::InFlight { .. }),
        "the receipt stays in flight"
    );
    let recorded = outcomes(&host.store).await;
    assert_eq!(recorded, vec!["interrupted".to_owned()]);
    let thread = host.store.load("t").await.unwrap().unwrap();
    assert!(thread.run.is_none(), "the run stopped");
    let placeholder = thread
        .context
        .iter()
        .find(|message| message.role == Role::Tool)
        .unwrap();
    assert!(placeholder.metadata.contains_key("stopped_in_flight"));
    let shown = serde_json::to_string(&results(&output.thread.context)).unwrap();
    assert!(shown.contains("was interrupted"), "{shown}");
    assert!(!shown.contains("failed"), "{shown}");

    // The next run sends the same key once more, asks nothing, and the model sees the result.
    host.service.hold.store(false, Ordering::SeqCst);
    host.model.text("Alice was paid.");
    let next = host
        .engine
        .run(say("did it work?", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(next.thread.execution.status, ExecutionStatus::Completed);
    assert!(next.thread.pending.is_none(), "no second question");
    assert_eq!(host.service.keys(), vec![KEY.to_owned(), KEY.to_owned()]);
    assert_eq!(
        receipt(&host.store).await,
        ReceiptState::Done {
            result: json!(format!("pay done under {KEY}")),
            is_error: false
        }
    );
    assert_eq!(host.model.last_results(), vec![json!(format!("pay done under {KEY}"))]);
    let thread = host.store.load("t").await.unwrap().unwrap();
    let result = thread
        .context
        .iter()
        .find(|message| message.role == Role::Tool)
        .unwrap();
    assert_eq!(result.message_id, placeholder.message_id, "in the placeholder's place");
    assert!(!result.metadata.contains_key("stopped_in_flight"));
    assert_eq!(
        outcomes(&host.store).await,
        vec!["interrupted".to_owned(), "resent".to_owned(), "completed".to_owned()]
    );
    let payment = host
        .store
        .records("t")
        .await
        .unwrap()
        .into_iter()
        .rfind(|record| record.kind == "tool_call")
        .unwrap();
    assert_eq!(payment.fields["approved"], true, "still the approved call");

    // Later runs send nothing again.
    host.model.text("Nothing else.");
    host.engine
        .run(say("anything else?", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(host.service.keys().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_busy_cancel_during_an_approved_call_sends_it_again_in_the_cancelling_run() {
    let host = host(true);
    let running = approved_payment_in_flight(&host).await;
    host.service.hold.store(false, Ordering::SeqCst);
    host.model.text("Alice was paid.");
    let next = tokio::time::timeout(
        Duration::from_secs(10),
        host.engine.run(say("hello", OnBusy::Cancel), &mut NullEvents),
    )
    .await
    .expect("the cancel reached the run")
    .unwrap();
    stopped(running).await;
    assert_eq!(next.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.service.keys(), vec![KEY.to_owned(), KEY.to_owned()]);
    assert_eq!(host.model.last_results(), vec![json!(format!("pay done under {KEY}"))]);
    let recorded = outcomes(&host.store).await;
    assert!(!recorded.contains(&"failed".to_owned()), "{recorded:?}");
    assert!(matches!(
        receipt(&host.store).await,
        ReceiptState::Done { is_error: false, .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_during_a_call_that_cannot_deduplicate_makes_it_outcome_unknown_never_sent_again() {
    let host = host(false);
    let running = approved_payment_in_flight(&host).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    assert_eq!(receipt(&host.store).await, ReceiptState::OutcomeUnknown);
    assert_eq!(outcomes(&host.store).await, vec!["outcome_unknown".to_owned()]);

    host.service.hold.store(false, Ordering::SeqCst);
    host.model.text("I cannot tell whether Alice was paid.");
    host.engine
        .run(say("did it work?", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(host.service.keys(), vec![KEY.to_owned()], "never sent again");
    let shown = serde_json::to_string(&host.model.last_results()).unwrap();
    assert!(shown.contains("outcome_unknown"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calls_a_stop_reaches_before_they_are_sent_are_never_sent() {
    let host = host(true);
    host.model.calls(&[
        ("c1", "note", json!({"text": "first"})),
        ("c2", "note", json!({"text": "second"})),
    ]);
    let engine = host.engine.clone();
    let running = tokio::spawn(async move { engine.run(say("note two things", OnBusy::Wait), &mut NullEvents).await });
    tokio::time::timeout(Duration::from_secs(10), host.service.arrived.notified())
        .await
        .unwrap();
    assert!(host.engine.stop("t"));
    let output = stopped(running).await;
    assert_eq!(host.service.keys(), vec!["t:a:c1".to_owned()]);
    let shown = serde_json::to_string(&results(&output.thread.context)).unwrap();
    assert!(shown.contains("Not run: the run was stopped."), "{shown}");
    assert!(
        host.store.receipt("t", "t:a:c2").await.unwrap().is_none(),
        "no receipt keeps the key of a call never sent"
    );
    assert_eq!(
        outcomes(&host.store).await,
        vec!["interrupted".to_owned(), "not_run".to_owned()]
    );

    host.service.hold.store(false, Ordering::SeqCst);
    host.model.text("Noted.");
    host.engine
        .run(say("done?", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(
        host.service.keys(),
        vec!["t:a:c1".to_owned(), "t:a:c1".to_owned()],
        "the cut call is sent again, the other never"
    );
    assert_eq!(
        host.model.last_results(),
        vec![json!("note done under t:a:c1"), json!("Not run: the run was stopped.")]
    );
}
