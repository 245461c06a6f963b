//! The host of the stopped-fork tests: models that research one topic each, the service
//! behind their one tool (it can hold a call until the run is stopped), and an engine over the
//! memory store, SQLite or PostgreSQL.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_engine::ports::{
    DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall, NullEvents, Ports,
    Store, ToolError, ToolErrorKind, ToolInvocation, ToolRunner,
};
use tenx_engine::testing::{ManualClock, SequentialIds};
use tenx_engine::thread::{BranchStatus, ThreadRecord};
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{
    Engine, EngineOptions, MemoryStore, OnBusy, RecoveryOutcome, RunError, RunOutput, RunRequest, SkipReason,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::harness::{T0, compile, user};

/// The models of every agent. A researcher (its topic is the last word of its prompt) asks
/// `fetch` for its topic, then answers with what it got; asked again without a result, it asks
/// under a new call id, as a real model would (so a call the engine asked for again would go
/// out under another key). Holds the first question of `hold_topic` until the run is stopped.
#[derive(Default)]
pub(super) struct Researchers {
    pub(super) hold_topic: Mutex<Option<String>>,
    /// A researcher whose model refuses (its branch fails).
    pub(super) fail_topic: Mutex<Option<String>>,
    pub(super) held: Notify,
    /// Each question: the agent (a researcher's topic) and the conversation it was shown.
    pub(super) shown: Mutex<Vec<(String, Vec<std::sync::Arc<Message>>)>>,
}

impl Researchers {
    pub(super) fn asks(&self, who: &str) -> usize {
        self.shown
            .lock()
            .unwrap()
            .iter()
            .filter(|(asked, _)| asked == who)
            .count()
    }

    /// The conversation `who` was last shown.
    pub(super) fn last_shown(&self, who: &str) -> Vec<std::sync::Arc<Message>> {
        let shown = self.shown.lock().unwrap();
        shown.iter().rev().find(|(asked, _)| asked == who).unwrap().1.clone()
    }

    /// Everything any model was shown, as JSON text.
    pub(super) fn all_shown(&self) -> String {
        serde_json::to_string(
            &*self
                .shown
                .lock()
                .unwrap()
                .iter()
                .map(|(_, messages)| messages)
                .collect::<Vec<_>>(),
        )
        .unwrap()
    }
}

#[async_trait]
impl ModelClient for Researchers {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let who = match request.agent {
            "planner" | "writer" | "boss" => request.agent.to_owned(),
            _ => request
                .system
                .trim_end_matches('.')
                .rsplit(' ')
                .next()
                .unwrap_or_default()
                .to_owned(),
        };
        let asked = {
            let mut shown = self.shown.lock().unwrap();
            shown.push((who.clone(), request.messages.to_vec()));
            shown.iter().filter(|(asked, _)| *asked == who).count()
        };
        let text = |text: String| ModelReply {
            text,
            ..ModelReply::default()
        };
        match who.as_str() {
            "planner" => return Ok(text("Two angles.".to_owned())),
            "writer" => return Ok(text("The report.".to_owned())),
            _ => {}
        }
        if self.fail_topic.lock().unwrap().as_deref() == Some(who.as_str()) {
            return Err(ModelError {
                kind: ModelErrorKind::Refused,
                message: "refused".to_owned(),
            });
        }
        let hold = self.hold_topic.lock().unwrap().clone();
        if asked == 1 && hold.as_deref() == Some(who.as_str()) {
            self.held.notify_one();
            cancel.cancelled().await;
            return Err(ModelError {
                kind: ModelErrorKind::Cancelled,
                message: "cancelled".to_owned(),
            });
        }
        let found = request.messages.last().filter(|message| message.role == Role::Tool);
        if who == "boss" {
            return Ok(match found {
                Some(found) => text(format!("Boss: {}", results(std::slice::from_ref(found))[0])),
                None => ModelReply {
                    tool_calls: vec![ModelToolCall {
                        id: format!("boss-{asked}"),
                        name: "researcher".to_owned(),
                        arguments: json!({"input": "news"}).to_string(),
                    }],
                    ..ModelReply::default()
                },
            });
        }
        if let Some(found) = found {
            let output = results(std::slice::from_ref(found)).remove(0);
            let note = format!("{who}: {}", output.as_str().unwrap_or_default());
            return Ok(text(json!({"notes": [note]}).to_string()));
        }
        Ok(ModelReply {
            tool_calls: vec![ModelToolCall {
                id: format!("{who}-{asked}"),
                name: "fetch".to_owned(),
                arguments: json!({"q": who}).to_string(),
            }],
            ..ModelReply::default()
        })
    }
}

/// The service behind `fetch`: it receives every call (and logs its key) and answers `found
/// <q>`, except that while `hold` is set it keeps the call for `q == hold_q` (every call when
/// `hold_q` is `*`) until the run is cancelled, then gives up as the real `http` runner does,
/// though the service has the call.
pub(super) struct Service {
    pub(super) hold_q: Mutex<Option<String>>,
    pub(super) hold: AtomicBool,
    pub(super) keys: Mutex<Vec<(String, String)>>,
    pub(super) arrived: Notify,
    /// How many calls it holds now.
    pub(super) holding: AtomicUsize,
}

impl Service {
    pub(super) fn keys_of(&self, q: &str) -> Vec<String> {
        let keys = self.keys.lock().unwrap();
        keys.iter()
            .filter(|(asked, _)| asked == q)
            .map(|(_, key)| key.clone())
            .collect()
    }
}

#[async_trait]
impl ToolRunner for Service {
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        let q = invocation.arguments["q"].as_str().unwrap_or_default().to_owned();
        self.keys
            .lock()
            .unwrap()
            .push((q.clone(), invocation.idempotency_key.to_owned()));
        let held = self.hold_q.lock().unwrap().clone();
        if self.hold.load(Ordering::SeqCst) && (held.as_deref() == Some(q.as_str()) || held.as_deref() == Some("*")) {
            self.holding.fetch_add(1, Ordering::SeqCst);
            self.arrived.notify_one();
            cancel.cancelled().await;
            self.holding.fetch_sub(1, Ordering::SeqCst);
            return Err(ToolError {
                kind: ToolErrorKind::Failed,
                message: "the call was cancelled".into(),
            });
        }
        Ok(json!(format!("found {q}")))
    }

    fn deduplicates(&self, _: &tenx_artifact::Tool) -> bool {
        true
    }
}

pub(super) fn results(messages: &[std::sync::Arc<Message>]) -> Vec<Value> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

/// Which store a host runs on.
pub(super) enum Kind {
    Memory,
    Sqlite,
    /// Only when `TENX_TEST_DATABASE_URL` names a database.
    Postgres,
}

pub(super) struct Host {
    pub(super) engine: Engine,
    pub(super) store: Arc<dyn Store>,
    pub(super) service: Arc<Service>,
    pub(super) models: Arc<Researchers>,
    pub(super) ids: Arc<SequentialIds>,
    _dir: Option<tempfile::TempDir>,
    _schema: Option<crate::pg_schema::Schema>,
}

/// A host over `program` on a store of `kind` (`None`: PostgreSQL is not configured, skip).
pub(super) async fn host(program: &str, kind: Kind) -> Option<Host> {
    let (store, dir, schema): (Arc<dyn Store>, _, _) = match kind {
        Kind::Memory => (Arc::new(MemoryStore::new()), None, None),
        Kind::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let store = tenx_store_sqlite::SqliteStore::open(dir.path().join("tenx.db"))
                .await
                .unwrap();
            (Arc::new(store), Some(dir), None)
        }
        Kind::Postgres => {
            let Some(base) = std::env::var("TENX_TEST_DATABASE_URL")
                .ok()
                .filter(|url| !url.trim().is_empty())
            else {
                eprintln!("skipped on PostgreSQL: TENX_TEST_DATABASE_URL is not set");
                return None;
            };
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_micros();
            let name = format!("tenx_stopped_forks_{}_{stamp}", std::process::id());
            let options = tenx_store_postgres::PostgresOptions {
                schema: name.clone(),
                ..tenx_store_postgres::PostgresOptions::default()
            };
            let store = tenx_store_postgres::PostgresStore::open(&base, options).await.unwrap();
            (Arc::new(store), None, Some(crate::pg_schema::Schema { base, name }))
        }
    };
    Some(build(program, store, dir, schema))
}

/// A host over `program` on `store` (a store a test wraps, say).
pub(super) fn host_over(program: &str, store: Arc<dyn Store>) -> Host {
    build(program, store, None, None)
}

fn build(
    program: &str,
    store: Arc<dyn Store>,
    dir: Option<tempfile::TempDir>,
    schema: Option<crate::pg_schema::Schema>,
) -> Host {
    let artifact = compile(program);
    let service = Arc::new(Service {
        hold_q: Mutex::new(None),
        hold: AtomicBool::new(true),
        keys: Mutex::new(Vec::new()),
        arrived: Notify::new(),
        holding: AtomicUsize::new(0),
    });
    let models = Arc::new(Researchers::default());
    let ids = Arc::new(SequentialIds::new());
    let mut clients: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    clients.insert("m".to_owned(), models.clone());
    let ports = Ports {
        store: store.clone(),
        models: clients,
        tools: service.clone(),
        clock: Arc::new(ManualClock::new(T0)),
        ids: ids.clone(),
    };
    Host {
        engine: Engine::new(artifact, ports, EngineOptions::default()).unwrap(),
        store,
        service,
        models,
        ids,
        _dir: dir,
        _schema: schema,
    }
}

pub(super) fn say(text: &str, on_busy: OnBusy) -> RunRequest {
    RunRequest {
        thread_id: Some("t".to_owned()),
        messages: vec![user(text)],
        on_busy,
        ..RunRequest::default()
    }
}

pub(super) fn say_to(graph: &str, text: &str) -> RunRequest {
    RunRequest {
        graph: Some(graph.to_owned()),
        ..say(text, OnBusy::Wait)
    }
}

pub(super) type Running = tokio::task::JoinHandle<Result<RunOutput, RunError>>;

impl Host {
    pub(super) async fn load(&self) -> ThreadRecord {
        self.store.load("t").await.unwrap().unwrap()
    }

    /// Starts "Research." and returns its run once `held` is held and `done` branches of the
    /// fork are stored as done.
    pub(super) async fn held_with(&self, held: &Notify, done: usize) -> Running {
        self.held_in(say("Research.", OnBusy::Wait), held, done).await
    }

    /// [`Self::held_with`] for `request`.
    pub(super) async fn held_in(&self, request: RunRequest, held: &Notify, done: usize) -> Running {
        let engine = self.engine.clone();
        let running = tokio::spawn(async move { engine.run(request, &mut NullEvents).await });
        tokio::time::timeout(Duration::from_secs(20), held.notified())
            .await
            .expect("the held call began");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let thread = self.load().await;
            let ended = thread.run.as_ref().and_then(|run| run.fork.as_ref()).map_or(0, |fork| {
                fork.branches
                    .iter()
                    .filter(|branch| branch.status == BranchStatus::Done)
                    .count()
            });
            if ended >= done {
                return running;
            }
            assert!(std::time::Instant::now() < deadline, "the other branches did not end");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The outcomes recorded for calls of `q`'s key(s), in order.
    pub(super) async fn outcomes(&self, keys: &[String]) -> Vec<String> {
        self.store
            .records("t")
            .await
            .unwrap()
            .into_iter()
            .filter(|record| record.kind == "tool_call")
            .filter(|record| {
                record.fields["idempotency_key"]
                    .as_str()
                    .is_some_and(|key| keys.iter().any(|k| k == key))
            })
            .map(|record| record.fields["outcome"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

pub(super) async fn stopped(running: Running) -> RunOutput {
    let output = tokio::time::timeout(Duration::from_secs(20), running)
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

/// The stop leaves the run as a crash would, yet nothing goes on with it by itself: no run in
/// progress, and recovery leaves the thread alone.
pub(super) async fn kept_not_running(host: &Host) {
    let thread = host.load().await;
    assert!(thread.run.is_none(), "no run in progress");
    assert!(thread.stopped_run.is_some(), "the stopped run is kept");
    let sent = host.service.keys.lock().unwrap().len();
    let report = host.engine.recover(&mut NullEvents).await.unwrap();
    assert!(
        matches!(
            report.outcome("t"),
            None | Some(RecoveryOutcome::Skipped(SkipReason::NotRunning))
        ),
        "{report:?}"
    );
    assert_eq!(host.service.keys.lock().unwrap().len(), sent, "recovery sent nothing");
    assert!(host.load().await.stopped_run.is_some(), "recovery did not take it");
}

impl Host {
    /// An engine over the host's store, tools and models, under another artifact: `program` with
    /// its writer's prompt changed.
    pub(super) fn under_another_artifact(&self, program: &str) -> Engine {
        let changed = crate::harness::compile_patched(program, |artifact| {
            artifact.agents.get_mut("writer").unwrap().prompt.push_str(" Briefly.");
        });
        let mut clients: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
        clients.insert("m".to_owned(), self.models.clone());
        let ports = Ports {
            store: self.store.clone(),
            models: clients,
            tools: self.service.clone(),
            clock: Arc::new(ManualClock::new(T0)),
            ids: self.ids.clone(),
        };
        let other = Engine::new(changed, ports, EngineOptions::default()).unwrap();
        assert_ne!(other.artifact_id(), self.engine.artifact_id());
        other
    }

    /// Waits until the service holds `calls` calls at once.
    pub(super) async fn holding(&self, calls: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while self.service.holding.load(Ordering::SeqCst) < calls {
            assert!(std::time::Instant::now() < deadline, "the calls were not all held");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The `tool_call` records of the thread whose outcome is `outcome`, in order.
    pub(super) async fn records_with(&self, outcome: &str) -> Vec<Value> {
        self.store
            .records("t")
            .await
            .unwrap()
            .into_iter()
            .filter(|record| record.kind == "tool_call" && record.fields["outcome"] == outcome)
            .map(|record| record.fields)
            .collect()
    }
}
