//! The child process: this test binary re-run with [`STORE`] set, which builds the engine the
//! way a host does (`tenx_runtime::HostBuilder`, the SQLite store file, the real tool runner)
//! and performs one action: start a run, answer its question, or recover. It prints one JSON
//! line per thing the parent waits for, and with [`WAIT`] stays alive after its action until it
//! is killed. Hooks let the parent kill it at exact points: [`HOLD_BEFORE_SEND`] holds every
//! tool call after its in-flight marker is stored and before anything is sent; [`HOLD_NATIVE`]
//! holds the native handler after its effect.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_engine::ports::{EventSink, NullEvents, ToolError, ToolInvocation, ToolRunner};
use tenx_engine::wire::{Message, Role};
use tenx_engine::{RecoveryOutcome, ResumeAnswer, RunRequest};
use tenx_runtime::{HostBuilder, TrustPolicy};
use tenx_store_sqlite::{SqliteOptions, SqliteStore};
use tenx_tools::{NativeCall, NativeHandler, NativeHandlers};
use tokio_util::sync::CancellationToken;

/// The store file (its presence makes the process a child).
pub const STORE: &str = "TENX_CRASH_STORE";
/// The sealed artifact file.
pub const ARTIFACT: &str = "TENX_CRASH_ARTIFACT";
/// `start`, `resume` or `recover`.
pub const ACTION: &str = "TENX_CRASH_ACTION";
/// The thread (start, resume).
pub const THREAD: &str = "TENX_CRASH_THREAD";
/// The user message (start).
pub const MESSAGE: &str = "TENX_CRASH_MESSAGE";
/// The run's `initial_state`, a JSON object (start; optional).
pub const STATE: &str = "TENX_CRASH_STATE";
/// The graph to run, when the artifact has several (start; optional).
pub const GRAPH: &str = "TENX_CRASH_GRAPH";
/// The open interrupt's id (resume).
pub const INTERRUPT: &str = "TENX_CRASH_INTERRUPT";
/// The answer, JSON (resume).
pub const ANSWER: &str = "TENX_CRASH_ANSWER";
/// Stay alive after the action.
pub const WAIT: &str = "TENX_CRASH_WAIT";
/// Hold every tool call after its in-flight marker, before it is sent.
pub const HOLD_BEFORE_SEND: &str = "TENX_CRASH_HOLD_BEFORE_SEND";
/// Hold the tool call with this idempotency key after its in-flight marker, before it is sent
/// (the others go on).
pub const HOLD_KEY: &str = "TENX_CRASH_HOLD_KEY";
/// Hold the native handler after its effect, before it returns.
pub const HOLD_NATIVE: &str = "TENX_CRASH_HOLD_NATIVE";
/// The file the native handler appends one line per effect to.
pub const EFFECTS: &str = "TENX_CRASH_EFFECTS";

/// How long a dead child's lease lasts: short, so recovery takes it over quickly.
pub const LEASE_TTL: Duration = Duration::from_millis(1500);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

fn say(line: &Value) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// Announces each call (its in-flight marker is stored by now) and holds it when asked.
struct Announcing {
    inner: Arc<dyn ToolRunner>,
}

#[async_trait]
impl ToolRunner for Announcing {
    async fn call(&self, invocation: ToolInvocation<'_>, cancel: &CancellationToken) -> Result<Value, ToolError> {
        say(&json!({"event": "sending", "tool": invocation.tool_name, "key": invocation.idempotency_key}));
        if std::env::var_os(HOLD_BEFORE_SEND).is_some() || env(HOLD_KEY) == invocation.idempotency_key {
            std::future::pending::<()>().await;
        }
        self.inner.call(invocation, cancel).await
    }

    fn deduplicates(&self, tool: &tenx_artifact::Tool) -> bool {
        self.inner.deduplicates(tool)
    }
}

/// The carrier: every call is an effect (a line in the effects file); no idempotency key
/// reaches it, so it does not deduplicate.
struct Carrier;

#[async_trait]
impl NativeHandler for Carrier {
    async fn call(&self, call: NativeCall<'_>) -> Result<Value, ToolError> {
        let parcel = call.arguments["parcel_id"].as_str().unwrap_or_default().to_owned();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(env(EFFECTS))
            .unwrap();
        writeln!(file, "{parcel}").unwrap();
        file.sync_all().unwrap();
        if std::env::var_os(HOLD_NATIVE).is_some() {
            say(&json!({"event": "shipped", "parcel": parcel}));
            std::future::pending::<()>().await;
        }
        Ok(json!(format!("Parcel {parcel} sent.")))
    }
}

/// The child's body; a no-op unless the parent started this binary as a child.
#[test]
#[ignore = "the crash tests' child process, started by the scenarios"]
fn crash_child() {
    let Some(store_path) = std::env::var_os(STORE) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let bytes = std::fs::read(env(ARTIFACT)).unwrap();
        let artifact = tenx_runtime::load(&bytes, &TrustPolicy::signature_optional()).unwrap();
        let options = SqliteOptions {
            lease_ttl: LEASE_TTL,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(&store_path, options).await.unwrap();
        let mut natives = NativeHandlers::new();
        natives.register("shipping.send", Arc::new(Carrier)).unwrap();
        let engine = HostBuilder::new(artifact)
            .store(Arc::new(store))
            .natives(natives)
            .wrap_tools(|inner| Arc::new(Announcing { inner }))
            .build(|name| std::env::var(name).ok())
            .unwrap();
        let mut events = NullEvents;
        let events: &mut dyn EventSink = &mut events;
        let thread_id = Some(env(THREAD));
        match env(ACTION).as_str() {
            "start" => {
                let initial_state = match std::env::var(STATE) {
                    Ok(state) => serde_json::from_str(&state).unwrap(),
                    Err(_) => serde_json::Map::new(),
                };
                let request = RunRequest {
                    thread_id,
                    graph: std::env::var(GRAPH).ok(),
                    messages: vec![Message::text(String::new(), Role::User, env(MESSAGE), 0.0)],
                    initial_state,
                    ..RunRequest::default()
                };
                report(engine.run(request, events).await);
            }
            "resume" => {
                let request = RunRequest {
                    thread_id,
                    resume: Some(ResumeAnswer {
                        value: serde_json::from_str(&env(ANSWER)).unwrap(),
                        interrupt_id: Some(env(INTERRUPT)),
                        note: None,
                    }),
                    ..RunRequest::default()
                };
                report(engine.run(request, events).await);
            }
            "recover" => {
                let recovered = engine.recover(events).await.unwrap();
                let threads: Vec<Value> = recovered
                    .threads
                    .iter()
                    .map(|thread| {
                        let outcome = match &thread.outcome {
                            RecoveryOutcome::Finished => json!("finished"),
                            RecoveryOutcome::Resumed => json!("resumed"),
                            RecoveryOutcome::Failed(error) => json!(format!("failed: {error}")),
                            RecoveryOutcome::Ended(error) => json!(format!("ended: {}", error.code)),
                            RecoveryOutcome::Skipped(reason) => json!(format!("skipped: {reason:?}")),
                        };
                        json!({"thread": thread.thread_id, "outcome": outcome})
                    })
                    .collect();
                say(&json!({"event": "recovered", "threads": threads}));
            }
            other => panic!("unknown action `{other}`"),
        }
        if std::env::var_os(WAIT).is_some() {
            std::future::pending::<()>().await;
        }
    });
}

fn report(outcome: Result<tenx_engine::RunOutput, tenx_engine::RunError>) {
    match outcome {
        Ok(output) => {
            let interrupt = output
                .thread
                .pending
                .as_ref()
                .and_then(|pending| pending.interrupt.as_ref())
                .map(|interrupt| interrupt.id.clone());
            say(&json!({"event": "ran", "status": output.thread.execution.status, "interrupt_id": interrupt}));
        }
        Err(error) => say(&json!({"event": "failed", "error": error.to_string()})),
    }
}
