//! A host for tests: one engine over one compiled program, with ports the test can inspect.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_artifact::{LoadedArtifact, Provider, TrustPolicy, load};
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest, ModelToolCall, Ports, Store};
use tenx_engine::testing::{FakeTools, ManualClock, RecordingEvents, SequentialIds};
use tenx_engine::wire::{ContentBlock, Message, Role};
use tenx_engine::{
    Engine, EngineOptions, Identity, MemoryStore, ResumeAnswer, RunError, RunOutput, RunRequest, ScriptedModel,
};
use tokio_util::sync::CancellationToken;

/// The start of every test's clock: 2026-12-01T00:00:00Z.
pub const T0: u64 = 1_796_083_200_000;

/// Compiles a program (errors fail the test), seals and loads it.
pub fn compile(text: &str) -> LoadedArtifact {
    compile_named("tests/engine.tenx", text)
}

/// Compiles a program as the file `name` (relative to the repository root; imports are read
/// beside it), seals and loads it.
pub fn compile_named(name: &str, text: &str) -> LoadedArtifact {
    load(
        &tenx_tests::sealed_bytes(name, text),
        &TrustPolicy::signature_optional(),
    )
    .unwrap()
}

/// Compiles a program, lets `edit` change the artifact (for what the language cannot say yet,
/// or to tamper with it), then seals and loads the result.
pub fn compile_patched(text: &str, edit: impl FnOnce(&mut tenx_artifact::Artifact)) -> LoadedArtifact {
    let mut artifact = compile(text).artifact;
    edit(&mut artifact);
    let sealed = tenx_artifact::seal(artifact).unwrap();
    load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap()
}

/// Reads an example's `main.tenx`.
pub fn example(name: &str) -> String {
    std::fs::read_to_string(tenx_tests::repo_root().join("examples").join(name).join("main.tenx")).unwrap()
}

/// Compiles an example (its imports included).
pub fn example_artifact(name: &str) -> LoadedArtifact {
    compile_named(&format!("examples/{name}/main.tenx"), &example(name))
}

/// A model that answers from a queue the test fills: a steered model, free to call anything.
#[derive(Default, Clone)]
pub struct Steered {
    replies: Arc<Mutex<VecDeque<ModelReply>>>,
    pub seen_tools: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Steered {
    pub fn push_text(&self, text: &str) {
        self.replies.lock().unwrap().push_back(ModelReply {
            text: text.to_owned(),
            ..ModelReply::default()
        });
    }

    pub fn push_calls(&self, calls: &[(&str, &str, Value)]) {
        let tool_calls = calls
            .iter()
            .map(|(id, name, args)| ModelToolCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                arguments: args.to_string(),
            })
            .collect();
        self.replies.lock().unwrap().push_back(ModelReply {
            tool_calls,
            ..ModelReply::default()
        });
    }

    pub fn push_raw_call(&self, id: &str, name: &str, arguments: &str) {
        let call = ModelToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        };
        self.replies.lock().unwrap().push_back(ModelReply {
            tool_calls: vec![call],
            ..ModelReply::default()
        });
    }
}

#[async_trait]
impl ModelClient for Steered {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _: &mut dyn DeltaSink,
        _: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        self.seen_tools
            .lock()
            .unwrap()
            .push(request.tools.iter().map(|tool| tool.name.clone()).collect());
        self.replies.lock().unwrap().pop_front().ok_or_else(|| ModelError {
            kind: tenx_engine::ports::ModelErrorKind::ScriptExhausted,
            message: "the steered model has no reply left".to_owned(),
        })
    }
}

/// One engine and what the test can look at.
pub struct Host {
    pub engine: Engine,
    pub store: Arc<MemoryStore>,
    pub clock: Arc<ManualClock>,
    pub tools: Arc<FakeTools>,
    pub events: RecordingEvents,
}

/// Which models the host runs.
pub enum Models {
    /// Every model plays its own script.
    Scripted,
    /// Every model is this steered model.
    Steered(Steered),
    /// Every model is this client (a provider's, against a local fake server).
    Given(Arc<dyn ModelClient>),
    /// Each model its own client, by model name.
    Each(BTreeMap<String, Arc<dyn ModelClient>>),
}

impl Host {
    pub fn new(text: &str, tools: FakeTools, models: Models, options: EngineOptions) -> Self {
        let artifact = compile(text);
        Self::from_artifact(artifact, tools, models, options)
    }

    pub fn from_artifact(artifact: LoadedArtifact, tools: FakeTools, models: Models, options: EngineOptions) -> Self {
        Self::with_ids(artifact, tools, models, options, Arc::new(SequentialIds::new()))
    }

    /// As [`Self::from_artifact`], with the given id source.
    pub fn with_ids(
        artifact: LoadedArtifact,
        tools: FakeTools,
        models: Models,
        options: EngineOptions,
        ids: Arc<dyn tenx_engine::ports::Ids>,
    ) -> Self {
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(ManualClock::new(T0));
        let tools = Arc::new(tools);
        let mut clients: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
        for (name, model) in &artifact.artifact.models {
            let client: Arc<dyn ModelClient> = match &models {
                Models::Steered(steered) => Arc::new(steered.clone()),
                Models::Given(client) => Arc::clone(client),
                Models::Each(clients) => Arc::clone(&clients[name]),
                Models::Scripted => {
                    assert_eq!(model.provider, Provider::Scripted, "model `{name}` is not scripted");
                    Arc::new(ScriptedModel::new())
                }
            };
            clients.insert(name.clone(), client);
        }
        let ports = Ports {
            store: store.clone(),
            models: clients,
            tools: tools.clone(),
            clock: clock.clone(),
            ids,
        };
        let engine = Engine::new(artifact, ports, options).unwrap();
        Self {
            engine,
            store,
            clock,
            tools,
            events: RecordingEvents::new(),
        }
    }

    pub async fn run(&self, request: RunRequest) -> Result<RunOutput, RunError> {
        let mut events = self.events.clone();
        self.engine.run(request, &mut events).await
    }

    /// A user message on a thread.
    pub async fn say(&self, thread: &str, text: &str, who: &Identity) -> Result<RunOutput, RunError> {
        self.run(RunRequest {
            thread_id: Some(thread.to_owned()),
            messages: vec![user(text)],
            identity: who.clone(),
            ..RunRequest::default()
        })
        .await
    }

    /// An answer to the open question.
    pub async fn answer(
        &self,
        thread: &str,
        value: Value,
        interrupt_id: Option<&str>,
        who: &Identity,
    ) -> Result<RunOutput, RunError> {
        self.run(RunRequest {
            thread_id: Some(thread.to_owned()),
            resume: Some(ResumeAnswer {
                value,
                interrupt_id: interrupt_id.map(str::to_owned),
                note: None,
            }),
            identity: who.clone(),
            ..RunRequest::default()
        })
        .await
    }

    /// A user message on `thread` of the graph `graph` (an artifact that serves several graphs
    /// needs the name).
    pub async fn say_to(&self, graph: &str, thread: &str, text: &str) -> Result<RunOutput, RunError> {
        self.run(RunRequest {
            graph: Some(graph.to_owned()),
            thread_id: Some(thread.to_owned()),
            messages: vec![user(text)],
            identity: Identity::anonymous(),
            ..RunRequest::default()
        })
        .await
    }

    /// An approval's answer `{"approved": approved}` to the question `id` on `thread` of `graph`.
    pub async fn approve_on(&self, graph: &str, thread: &str, id: &str, approved: bool) -> Result<RunOutput, RunError> {
        self.run(RunRequest {
            graph: Some(graph.to_owned()),
            thread_id: Some(thread.to_owned()),
            resume: Some(ResumeAnswer {
                value: json!({ "approved": approved }),
                interrupt_id: Some(id.to_owned()),
                note: None,
            }),
            identity: Identity::anonymous(),
            ..RunRequest::default()
        })
        .await
    }

    /// The stored thread, serialised: "records nothing" compares these byte for byte.
    pub async fn snapshot(&self, thread: &str) -> String {
        serde_json::to_string(&self.store.load(thread).await.unwrap()).unwrap()
    }

    /// The open question's id.
    pub async fn open_interrupt(&self, thread: &str) -> String {
        let record = self.store.load(thread).await.unwrap().unwrap();
        record.pending.unwrap().interrupt.unwrap().id
    }

    pub async fn records(&self, thread: &str) -> Vec<Value> {
        self.store
            .records(thread)
            .await
            .unwrap()
            .into_iter()
            .map(|record| json!({"kind": record.kind, "fields": record.fields}))
            .collect()
    }
}

/// A user message.
pub fn user(text: &str) -> Message {
    Message::text(String::new(), Role::User, text, 0.0)
}

/// The text of every assistant message, in order.
pub fn assistant_texts(messages: &[std::sync::Arc<Message>]) -> Vec<String> {
    messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .map(|message| message.text_content())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The outputs of every tool result, in order.
pub fn tool_outputs(messages: &[std::sync::Arc<Message>]) -> Vec<Value> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

/// Development mode: no auth.
pub fn dev() -> EngineOptions {
    EngineOptions::default()
}

/// Auth on.
pub fn auth() -> EngineOptions {
    EngineOptions {
        auth: true,
        ..EngineOptions::default()
    }
}

/// A verified user with roles.
pub fn person(id: &str, roles: &[&str]) -> Identity {
    Identity {
        user_id: Some(id.to_owned()),
        roles: roles.iter().map(|role| (*role).to_owned()).collect(),
        ..Identity::default()
    }
}

/// A tool runner for crash tests: it holds forever the call whose argument `field` is `hold`
/// (the process "dies" during it, see [`Gate::arrived`]) and answers every other at once with
/// `"{answer} {value}"`, logging each call's `(value, idempotency key)`. It deduplicates, so
/// recovery re-sends a call in flight under its key.
pub struct Gate {
    field: &'static str,
    hold: Option<&'static str>,
    answer: &'static str,
    /// Notified when the held call arrives.
    pub arrived: tokio::sync::Notify,
    /// Each call's value of `field` and idempotency key, in arrival order.
    pub calls: std::sync::Mutex<Vec<(String, String)>>,
}

impl Gate {
    /// A gate on argument `field` that holds the call with `hold` (none: it holds nothing).
    pub fn new(field: &'static str, hold: Option<&'static str>, answer: &'static str) -> Arc<Self> {
        Arc::new(Self {
            field,
            hold,
            answer,
            arrived: tokio::sync::Notify::new(),
            calls: std::sync::Mutex::new(Vec::new()),
        })
    }
}

#[async_trait::async_trait]
impl tenx_engine::ports::ToolRunner for Gate {
    async fn call(
        &self,
        invocation: tenx_engine::ports::ToolInvocation<'_>,
        _: &tokio_util::sync::CancellationToken,
    ) -> Result<Value, tenx_engine::ports::ToolError> {
        let value = invocation.arguments[self.field].as_str().unwrap_or_default().to_owned();
        self.calls
            .lock()
            .unwrap()
            .push((value.clone(), invocation.idempotency_key.to_owned()));
        if self.hold == Some(value.as_str()) {
            self.arrived.notify_one();
            std::future::pending::<()>().await;
        }
        Ok(json!(format!("{} {value}", self.answer)))
    }

    fn deduplicates(&self, _: &tenx_artifact::Tool) -> bool {
        true
    }
}

/// An engine over `artifact` with scripted models, `store`, `gate` as its tools, a manual clock
/// and counting ids: a process the crash tests start, "kill" and start again over one store.
pub fn gated_engine(artifact: LoadedArtifact, store: Arc<MemoryStore>, gate: Arc<Gate>) -> Engine {
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let ports = Ports {
        store,
        models,
        tools: gate,
        clock: Arc::new(ManualClock::new(T0)),
        ids: Arc::new(SequentialIds::new()),
    };
    Engine::new(artifact, ports, dev()).unwrap()
}

/// Runs `request` on `engine` in a task until `gate` holds its call and `done` branches of the
/// thread's fork are checkpointed as done, then "kills" it (aborts the task): what a process
/// that dies during a fan-out leaves in `store`.
pub async fn crash_mid_fan_out(engine: Engine, gate: &Gate, store: &MemoryStore, request: RunRequest, done: usize) {
    let thread = request.thread_id.clone().unwrap_or_default();
    let running = tokio::spawn(async move {
        let mut events = RecordingEvents::new();
        engine.run(request, &mut events).await
    });
    tokio::time::timeout(std::time::Duration::from_secs(30), gate.arrived.notified())
        .await
        .expect("the held call was sent");
    let finished = |record: &tenx_engine::thread::ThreadRecord| {
        record.run.as_ref().and_then(|run| run.fork.as_ref()).map_or(0, |fork| {
            fork.branches
                .iter()
                .filter(|branch| branch.status == tenx_engine::thread::BranchStatus::Done)
                .count()
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while finished(&store.load(&thread).await.unwrap().unwrap()) < done {
        assert!(
            std::time::Instant::now() < deadline,
            "the other branches did not finish"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
}
