//! Stops across processes sharing a store: two engines ("replicas") over one in-memory store,
//! joined by a fake stop bus that keeps the store contract (`Store::publish_stop` addresses the
//! holder of the thread's lock; the holder's process delivers it again until a run takes it or
//! the lease is released). A stop or `on_busy = "cancel"` on one replica stops the run of the
//! other exactly as a local stop does; a notice for a thread not running there does nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_engine::ports::{
    Commit, Ports, Receipt, Record, StopHandler, StopKind, StopNotice, Store, StoreError, ThreadLease, ThreadSummary,
    ToolError, ToolErrorKind, ToolInvocation, ToolRunner,
};
use tenx_engine::testing::{ManualClock, SequentialIds};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{Engine, EngineOptions, MemoryStore, OnBusy, RunRequest, ScriptedModel};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::harness::{T0, compile, user};

const PROGRAM: &str = r#"
model m {
  provider = scripted
  rules = [
    {
      match: "(?i)slow (?<words>.+)"
      turns: [
        { tool: "slow", arguments: { message: "{words}" } }
        { text: "{result}" }
      ]
    }
  ]
  fallback = { text: "quick answer" }
}

tool slow(message: string "What to echo, slowly") -> string {
  description = "Echo a message, slowly."
  risk = low
  run = http(POST, "http://127.0.0.1:9/slow", timeout: 30s)
}

agent a {
  model = m
  prompt = "Echo what you are asked to."
  tools = [slow]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

/// Who holds each thread's lock (replica, lease number), and each replica's handlers.
#[derive(Default)]
struct Bus {
    holders: Mutex<HashMap<String, (usize, u64)>>,
    handlers: Mutex<HashMap<usize, Vec<Weak<dyn StopHandler>>>>,
    next: AtomicU64,
}

impl Bus {
    fn holds(&self, thread_id: &str, holding: (usize, u64)) -> bool {
        self.holders.lock().unwrap().get(thread_id) == Some(&holding)
    }

    /// Hands a notice to the handlers of `replica`. Whether one took it.
    fn deliver(&self, replica: usize, notice: &StopNotice) -> bool {
        let handlers: Vec<Arc<dyn StopHandler>> = self
            .handlers
            .lock()
            .unwrap()
            .get(&replica)
            .into_iter()
            .flatten()
            .filter_map(Weak::upgrade)
            .collect();
        // Every handler is handed it, as a store does (not only up to the first that takes it).
        let mut taken = false;
        for handler in &handlers {
            taken |= handler.deliver(notice);
        }
        taken
    }
}

/// One replica's view of the shared store.
struct Replica {
    store: Arc<MemoryStore>,
    bus: Arc<Bus>,
    me: usize,
}

struct BusLease {
    _inner: Box<dyn ThreadLease>,
    bus: Arc<Bus>,
    thread_id: String,
    holding: (usize, u64),
}

impl ThreadLease for BusLease {
    fn thread_id(&self) -> &str {
        &self.thread_id
    }
}

impl Drop for BusLease {
    fn drop(&mut self) {
        let mut holders = self.bus.holders.lock().unwrap();
        if holders.get(&self.thread_id) == Some(&self.holding) {
            holders.remove(&self.thread_id);
        }
    }
}

#[async_trait]
impl Store for Replica {
    async fn load(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.store.load(thread_id).await
    }
    async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        self.store.commit(commit).await
    }
    async fn receipt(&self, thread_id: &str, key: &str) -> Result<Option<Receipt>, StoreError> {
        self.store.receipt(thread_id, key).await
    }
    async fn in_flight(&self, thread_id: &str) -> Result<Vec<Receipt>, StoreError> {
        self.store.in_flight(thread_id).await
    }
    async fn records(&self, thread_id: &str) -> Result<Vec<Record>, StoreError> {
        self.store.records(thread_id).await
    }
    async fn list_threads(
        &self,
        owner: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        self.store.list_threads(owner, offset, limit).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<bool, StoreError> {
        self.store.delete_thread(thread_id).await
    }
    async fn lock(&self, thread_id: &str) -> Result<Box<dyn ThreadLease>, StoreError> {
        let inner = self.store.lock(thread_id).await?;
        let holding = (self.me, self.bus.next.fetch_add(1, Ordering::Relaxed));
        self.bus.holders.lock().unwrap().insert(thread_id.to_owned(), holding);
        Ok(Box::new(BusLease {
            _inner: inner,
            bus: self.bus.clone(),
            thread_id: thread_id.to_owned(),
            holding,
        }))
    }
    async fn publish_stop(&self, thread_id: &str, kind: StopKind) -> Result<bool, StoreError> {
        let Some(holding) = self.bus.holders.lock().unwrap().get(thread_id).copied() else {
            return Ok(false);
        };
        let (bus, notice) = (
            self.bus.clone(),
            StopNotice {
                thread_id: thread_id.to_owned(),
                kind,
            },
        );
        tokio::spawn(async move {
            while bus.holds(&notice.thread_id, holding) && !bus.deliver(holding.0, &notice) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        Ok(true)
    }
    fn subscribe_stops(&self, handler: Weak<dyn StopHandler>) {
        self.bus
            .handlers
            .lock()
            .unwrap()
            .entry(self.me)
            .or_default()
            .push(handler);
    }
}

/// A tool whose first call waits until it is cancelled or released; later calls answer at once.
#[derive(Default)]
struct Held {
    calls: AtomicUsize,
    release: Notify,
}

#[async_trait]
impl ToolRunner for Held {
    async fn call(&self, _invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) > 0 {
            return Ok(json!("done at once"));
        }
        tokio::select! {
            () = cancel.cancelled() => Err(ToolError { kind: ToolErrorKind::Failed, message: "the call was cancelled".into() }),
            () = self.release.notified() => Ok(json!("done slowly")),
        }
    }
    fn deduplicates(&self, _tool: &tenx_artifact::Tool) -> bool {
        true
    }
}

struct Cluster {
    store: Arc<MemoryStore>,
    bus: Arc<Bus>,
    engines: Vec<Engine>,
    tools: Arc<Held>,
}

fn cluster() -> Cluster {
    let store = Arc::new(MemoryStore::new());
    let bus = Arc::new(Bus::default());
    let tools = Arc::new(Held::default());
    let ids = Arc::new(SequentialIds::new());
    let engines = (0..2)
        .map(|me| {
            let artifact = compile(PROGRAM);
            let models = artifact
                .artifact
                .models
                .keys()
                .map(|name| {
                    (
                        name.clone(),
                        Arc::new(ScriptedModel::new()) as Arc<dyn tenx_engine::ports::ModelClient>,
                    )
                })
                .collect();
            let ports = Ports {
                store: Arc::new(Replica {
                    store: store.clone(),
                    bus: bus.clone(),
                    me,
                }),
                models,
                tools: tools.clone(),
                clock: Arc::new(ManualClock::new(T0)),
                ids: ids.clone(),
            };
            Engine::new(artifact, ports, EngineOptions::default()).unwrap()
        })
        .collect();
    Cluster {
        store,
        bus,
        engines,
        tools,
    }
}

fn say(thread: &str, text: &str, on_busy: OnBusy) -> RunRequest {
    RunRequest {
        thread_id: Some(thread.to_owned()),
        messages: vec![user(text)],
        on_busy,
        ..RunRequest::default()
    }
}

/// Starts a held run of `thread` on replica 0 and waits until its tool call is in flight.
async fn held_run(
    cluster: &Cluster,
    thread: &str,
) -> tokio::task::JoinHandle<Result<tenx_engine::RunOutput, tenx_engine::RunError>> {
    let engine = cluster.engines[0].clone();
    let request = say(thread, "slow please", OnBusy::Wait);
    let run = tokio::spawn(async move { engine.run(request, &mut tenx_engine::ports::NullEvents).await });
    for _ in 0..500 {
        if cluster.tools.calls.load(Ordering::SeqCst) > 0 {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the tool call never began");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_on_another_replica_stops_the_run_and_the_thread_is_checkpointed_stopped() {
    let cluster = cluster();
    let run = held_run(&cluster, "t1").await;
    let other = &cluster.engines[1];
    assert!(!other.stop("t1"), "the run is not in this replica");
    assert!(
        other.request_stop("t1", StopKind::Cancel).await.unwrap(),
        "the replica holding the thread was reached"
    );
    let output = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("the run stopped")
        .unwrap()
        .unwrap();
    let execution = &output.thread.execution;
    assert_eq!(execution.status, ExecutionStatus::InterruptedAfter, "{execution:?}");
    assert_eq!(execution.interrupt_reason.as_deref(), Some("stop_requested"));
    let stored = cluster.store.load("t1").await.unwrap().unwrap();
    assert_eq!(stored.execution.status, ExecutionStatus::InterruptedAfter);
    assert!(stored.run.is_none(), "no run is left in progress");
    // The call was sent when the stop cut it short: its outcome is unknown, so it stays in
    // flight, as a crash leaves it, for the next run to send again under the same key.
    assert_eq!(
        cluster.store.in_flight("t1").await.unwrap().len(),
        1,
        "the call cut short stays in flight"
    );
    // Nothing runs anywhere now: a stop reaches nobody.
    assert!(!other.request_stop("t1", StopKind::Cancel).await.unwrap());
    assert!(!cluster.engines[0].request_stop("t1", StopKind::Cancel).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notice_for_a_thread_not_running_here_does_nothing() {
    let cluster = cluster();
    let run = held_run(&cluster, "t1").await;
    let notice = StopNotice {
        thread_id: "t2".to_owned(),
        kind: StopKind::Cancel,
    };
    assert!(!cluster.bus.deliver(0, &notice), "no run of t2 took it");
    assert!(
        !cluster.engines[1].request_stop("t2", StopKind::Cancel).await.unwrap(),
        "nobody holds t2"
    );
    // Replica 1 runs nothing: a notice for t1 delivered there is not taken either.
    let for_t1 = StopNotice {
        thread_id: "t1".to_owned(),
        kind: StopKind::Cancel,
    };
    assert!(!cluster.bus.deliver(1, &for_t1));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!run.is_finished(), "the run of t1 goes on");
    cluster.tools.release.notify_one();
    let output = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(output.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(output.messages.last().unwrap().text_content(), "done slowly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_after_the_step_reaches_the_other_replica_and_lets_the_step_finish() {
    let cluster = cluster();
    let run = held_run(&cluster, "t1").await;
    assert!(
        cluster.engines[1]
            .request_stop("t1", StopKind::AfterStep)
            .await
            .unwrap()
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!run.is_finished(), "the step in flight is not cancelled");
    cluster.tools.release.notify_one();
    let output = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(output.thread.execution.status, ExecutionStatus::InterruptedAfter);
    let results: Vec<String> = output
        .thread
        .context
        .iter()
        .filter(|message| message.role == tenx_engine::wire::Role::Tool)
        .map(|message| serde_json::to_string(&message.content).unwrap())
        .collect();
    assert!(
        results.iter().any(|result| result.contains("done slowly")),
        "the step finished and was checkpointed: {results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_busy_cancel_on_another_replica_stops_the_run_there_then_runs_its_own() {
    let cluster = cluster();
    let run = held_run(&cluster, "t1").await;
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        cluster.engines[1].run(say("t1", "hello", OnBusy::Cancel), &mut tenx_engine::ports::NullEvents),
    )
    .await
    .expect("the cancel reached the run: the lock was let go before busy_wait")
    .unwrap();
    let first = run.await.unwrap().unwrap();
    assert_eq!(first.thread.execution.status, ExecutionStatus::InterruptedAfter);
    assert_eq!(answer.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(answer.messages.last().unwrap().text_content(), "quick answer");
    let stored = cluster.store.load("t1").await.unwrap().unwrap();
    assert_eq!(
        stored.version, answer.thread.version,
        "the second run's commit is the last"
    );
    assert_eq!(
        cluster.tools.calls.load(Ordering::SeqCst),
        2,
        "the second run sent the call the cancel cut short once more, and nothing else"
    );
}

#[tokio::test]
async fn a_store_for_one_process_sends_no_stop() {
    // The in-memory store keeps the port's defaults: a stop reaches local runs only.
    let store = MemoryStore::new();
    let _lease = store.lock("t1").await.unwrap();
    assert!(!store.publish_stop("t1", StopKind::Cancel).await.unwrap());
}
