//! Runs one `test` block on the real engine (`tenx-engine`): the sealed artifact loaded as a
//! host loads it, an in-memory store, a manual clock, counting ids, the engine's own
//! [`ScriptedModel`] playing the test's turns, and [`FakeTools`] answering with the mocks. What
//! the run did ([`Observed`]) is then compared with the test's `expect` ([`compare`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tenx_artifact::{LoadedArtifact, Model, Provider, Script};
use tenx_compiler::ast::{TestAnswer, TestDecl};
use tenx_engine::ports::{
    DeltaSink, Event, EventSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, Ports, Store,
};
use tenx_engine::testing::{FakeTools, ManualClock, SequentialIds};
use tenx_engine::thread::{PendingKind, ThreadRecord};
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{Engine, EngineOptions, MemoryStore, ResumeAnswer, RunRequest, ScriptedModel};
use tokio_util::sync::CancellationToken;

/// The clock every test starts at: 2026-12-01T00:00:00Z.
pub const START_MS: u64 = 1_796_083_200_000;

/// At most this many requests per test (a run that keeps asking is cut off).
const MAX_REQUESTS: usize = 50;

/// What a test's run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    pub route: Vec<String>,
    pub calls: Vec<(String, Value)>,
    pub approvals: Vec<Map<String, Value>>,
    pub state: Map<String, Value>,
    pub message: Option<String>,
    pub status: String,
    pub error: Option<String>,
    /// The message of that error.
    pub error_message: Option<String>,
}

/// One field whose expectation was not met.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub field: &'static str,
    pub expected: Value,
    pub actual: Value,
}

/// A model the test scripts: the engine's scripted model, playing the test's turns.
struct TestTurns {
    model: Model,
    inner: ScriptedModel,
}

#[async_trait]
impl ModelClient for TestTurns {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        deltas: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let request = ModelRequest {
            model: &self.model,
            ..request
        };
        self.inner.complete(request, deltas, cancel).await
    }

    fn substitution(&self) -> Option<String> {
        Some("the turns of a `tenxc test` block".to_owned())
    }
}

/// A declared provider the test gave no turns: the test fails rather than call it.
struct Unscripted(String);

#[async_trait]
impl ModelClient for Unscripted {
    async fn complete(
        &self,
        _: ModelRequest<'_>,
        _: &mut dyn DeltaSink,
        _: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        Err(ModelError {
            kind: ModelErrorKind::ScriptExhausted,
            message: format!(
                "model `{}` is not scripted and the test gives it no turns in `models`",
                self.0
            ),
        })
    }
}

/// The events a run emits, kept for the route.
#[derive(Default)]
struct Route(Vec<String>);

impl EventSink for Route {
    fn emit(&mut self, event: Event) {
        if let Event::NodeStarted { node, .. } = event
            && self.0.last() != Some(&node)
        {
            self.0.push(node);
        }
    }
}

/// Runs `test` against `artifact` and reports what happened (`Err`: the test could not run).
pub fn run(artifact: &LoadedArtifact, test: &TestDecl) -> Result<Observed, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the runtime: {error}"))?;
    runtime.block_on(run_async(artifact.clone(), test))
}

async fn run_async(artifact: LoadedArtifact, test: &TestDecl) -> Result<Observed, String> {
    let scripted: BTreeMap<&str, &Vec<tenx_artifact::Turn>> =
        test.models.iter().map(|m| (m.model.name.as_str(), &m.turns)).collect();
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for (name, model) in &artifact.artifact.models {
        let client: Arc<dyn ModelClient> = match scripted.get(name.as_str()) {
            Some(turns) => Arc::new(TestTurns {
                model: Model {
                    provider: Provider::Scripted,
                    script: Some(Script {
                        turns: (*turns).clone(),
                        rules: Vec::new(),
                        fallback: None,
                    }),
                    ..model.clone()
                },
                inner: ScriptedModel::new(),
            }),
            None if model.provider == Provider::Scripted => Arc::new(ScriptedModel::new()),
            None => Arc::new(Unscripted(name.clone())),
        };
        models.insert(name.clone(), client);
    }
    let mut fake = FakeTools::new();
    for mock in &test.mocks {
        fake = fake.sequence(&mock.tool.name, mock.results.iter().cloned().map(Ok).collect());
    }
    let tools = Arc::new(fake);
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualClock::new(START_MS));
    let ports = Ports {
        store: store.clone(),
        models,
        tools: tools.clone(),
        clock: clock.clone(),
        ids: Arc::new(SequentialIds::new()),
    };
    let engine = Engine::new(artifact.clone(), ports, EngineOptions::default())
        .map_err(|error| format!("cannot load the program into the engine: {error}"))?;

    let mut observed = Observed::default();
    let mut remote: BTreeMap<String, std::vec::IntoIter<Value>> = test
        .mocks
        .iter()
        .map(|m| (m.tool.name.clone(), m.results.clone().into_iter()))
        .collect();
    let mut last_remote: BTreeMap<String, Value> = BTreeMap::new();
    let mut answers = test.answers.iter();
    let mut route = Route::default();
    let mut seen_calls = 0;
    let mut thread_id: Option<String> = None;
    let mut request = RunRequest {
        graph: test.graph.as_ref().map(|g| g.name.clone()),
        messages: vec![Message::text(
            String::new(),
            Role::User,
            test.input.clone().unwrap_or_default(),
            0.0,
        )],
        initial_state: test
            .state
            .iter()
            .map(|e| (e.key.name.clone(), e.value.clone()))
            .collect(),
        ..RunRequest::default()
    };
    let mut thread: Option<ThreadRecord> = None;
    for _ in 0..MAX_REQUESTS {
        let outcome = engine.run(request, &mut route).await;
        for call in tools.calls().iter().skip(seen_calls) {
            observed.calls.push((call.tool.clone(), call.arguments.clone()));
        }
        seen_calls = tools.calls().len();
        match outcome {
            Ok(output) => {
                thread_id = Some(output.thread_id.clone());
                thread = Some(output.thread);
            }
            Err(error) => {
                observed.error = Some(error.code.as_str().to_owned());
                observed.error_message = Some(error.message.clone());
                if let Some(id) = &thread_id {
                    thread = store
                        .load(id)
                        .await
                        .map_err(|e| format!("cannot read the thread back: {e}"))?;
                }
                break;
            }
        }
        let Some(current) = &thread else { break };
        let Some(pending) = &current.pending else { break };
        let next = match &pending.kind {
            PendingKind::RemoteTool { tool, call_id, .. } => {
                let result = remote
                    .get_mut(tool)
                    .and_then(Iterator::next)
                    .or_else(|| last_remote.get(tool).cloned());
                let Some(result) = result else { break };
                last_remote.insert(tool.clone(), result.clone());
                let arguments = current
                    .context
                    .iter()
                    .flat_map(|m| m.content.iter())
                    .find_map(|block| match block {
                        ContentBlock::ToolCall { id, args, .. } | ContentBlock::RemoteToolCall { id, args, .. }
                            if id == call_id =>
                        {
                            Some(args.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or(Value::Null);
                observed.calls.push((tool.clone(), arguments));
                let mut message = Message::text(String::new(), Role::Tool, "", 0.0);
                message.content = vec![ContentBlock::ToolResult {
                    call_id: call_id.clone(),
                    output: result,
                    is_error: false,
                    status: None,
                }];
                RunRequest {
                    messages: vec![message],
                    ..RunRequest::default()
                }
            }
            PendingKind::ToolApproval { .. } | PendingKind::InterruptNode { .. } => {
                if let Some(interrupt) = &pending.interrupt {
                    observed.approvals.push(question_fields(interrupt));
                }
                let Some(answer) = answers.next() else { break };
                if matches!(answer, TestAnswer::Expire) {
                    let Some(expires_at) = pending.expires_at else {
                        return Err("`expire` answers a question that never expires".to_owned());
                    };
                    clock.set(expires_at + 1);
                }
                RunRequest {
                    resume: Some(ResumeAnswer {
                        value: answer_value(&artifact, &pending.kind, answer),
                        interrupt_id: pending.interrupt.as_ref().map(|i| i.id.clone()),
                        note: None,
                    }),
                    ..RunRequest::default()
                }
            }
        };
        request = RunRequest {
            graph: test.graph.as_ref().map(|g| g.name.clone()),
            thread_id: thread_id.clone(),
            ..next
        };
    }
    observed.route = route.0;
    if let Some(thread) = &thread {
        observed.state = thread.state.clone();
        observed.message = thread
            .context
            .iter()
            .rev()
            .filter(|m| m.role == Role::Assistant)
            .map(|message| message.text_content())
            .find(|text| !text.is_empty());
        observed.status = match thread.execution.status {
            ExecutionStatus::Completed => "completed",
            ExecutionStatus::InterruptedBefore | ExecutionStatus::InterruptedAfter => "interrupted",
            ExecutionStatus::Error => "error",
            ExecutionStatus::Running => "running",
        }
        .to_owned();
        if thread.execution.status == ExecutionStatus::Completed {
            observed.route.push("END".to_owned());
        }
    } else {
        observed.status = "error".to_owned();
    }
    Ok(observed)
}

/// The fields of a question a test can expect: the interrupt object's, then its package's.
fn question_fields(interrupt: &tenx_engine::wire::InterruptObject) -> Map<String, Value> {
    let mut fields = match serde_json::to_value(interrupt) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    if let Some(Value::Object(package)) = fields.get("value").cloned() {
        for (key, value) in package {
            fields.entry(key).or_insert(value);
        }
    }
    fields
}

/// The answer value a scripted answer stands for, in the question's response.
fn answer_value(artifact: &LoadedArtifact, kind: &PendingKind, answer: &TestAnswer) -> Value {
    let approval = match kind {
        PendingKind::ToolApproval { tool, .. } => artifact.artifact.tools.get(tool).and_then(|t| t.approval.as_ref()),
        _ => None,
    };
    let (field, approve, edit) = match approval {
        Some(approval) => (
            approval.decision.field.clone(),
            approval.decision.approve.clone(),
            approval.decision.edit.clone(),
        ),
        None => ("approved".to_owned(), Value::Bool(true), None),
    };
    let reject = match &approve {
        Value::Bool(yes) => Value::Bool(!yes),
        _ => Value::String("reject".to_owned()),
    };
    let mut value = Map::new();
    match answer {
        TestAnswer::Approve | TestAnswer::Expire => {
            value.insert(field, approve);
        }
        TestAnswer::Reject(reason) => {
            value.insert(field, reject);
            let takes_comment =
                approval.is_some_and(|a| a.response_schema.to_value().pointer("/properties/comment").is_some());
            if let (Some(reason), true) = (reason, takes_comment) {
                value.insert("comment".to_owned(), json!(reason));
            }
        }
        TestAnswer::Edit(arguments) => {
            value.insert(field, edit.unwrap_or(Value::Null));
            value.insert("edited_arguments".to_owned(), Value::Object(arguments.clone()));
        }
        TestAnswer::Value(raw) => return raw.clone(),
    }
    Value::Object(value)
}

/// The expectations `observed` does not meet.
pub fn compare(test: &TestDecl, observed: &Observed) -> Vec<Mismatch> {
    let expect = &test.expect;
    let mut mismatches = Vec::new();
    let mut check = |field: &'static str, expected: Value, actual: Value| {
        if expected != actual {
            mismatches.push(Mismatch {
                field,
                expected,
                actual,
            });
        }
    };
    if let Some(route) = &expect.route {
        check(
            "route",
            json!(route.iter().map(|n| n.name.clone()).collect::<Vec<_>>()),
            json!(observed.route),
        );
    }
    if let Some(calls) = &expect.calls {
        // Each expected call is compared on the arguments it writes; a bare name on none.
        let expected: Vec<Value> = calls
            .iter()
            .map(|c| match &c.arguments {
                Some(arguments) => json!({ c.tool.name.clone(): arguments }),
                None => json!(c.tool.name),
            })
            .collect();
        let actual: Vec<Value> = observed
            .calls
            .iter()
            .enumerate()
            .map(
                |(i, (tool, arguments))| match calls.get(i).and_then(|c| c.arguments.as_ref()) {
                    Some(written) if calls.get(i).is_some_and(|c| &c.tool.name == tool) => {
                        json!({ tool.clone(): restrict(arguments, written.keys()) })
                    }
                    Some(_) => json!({ tool.clone(): arguments }),
                    None => json!(tool),
                },
            )
            .collect();
        check("calls", json!(expected), json!(actual));
    }
    if let Some(approvals) = &expect.approvals {
        let actual: Vec<Value> = observed
            .approvals
            .iter()
            .enumerate()
            .map(|(i, asked)| match approvals.get(i) {
                Some(written) => restrict(&Value::Object(asked.clone()), written.keys()),
                None => json!(asked.get("message")),
            })
            .collect();
        check("approvals", json!(approvals), json!(actual));
    }
    if let Some(state) = &expect.state {
        let expected: Map<String, Value> = state.iter().map(|e| (e.key.name.clone(), e.value.clone())).collect();
        let actual = restrict(&Value::Object(observed.state.clone()), expected.keys());
        check("state", Value::Object(expected), actual);
    }
    if let Some(message) = &expect.message {
        check("message", json!(message), json!(observed.message));
    }
    if let Some(status) = &expect.status {
        check("status", json!(status.name), json!(observed.status));
    }
    // A refusal the test does not expect fails it, with the engine's message.
    match (&expect.error, &observed.error) {
        (Some(error), actual) => check("error", json!(error), json!(actual)),
        (None, Some(actual)) => check(
            "error",
            Value::Null,
            json!({ "code": actual, "message": observed.error_message }),
        ),
        (None, None) => {}
    }
    mismatches
}

/// The fields of `value` named by `keys` (a missing one as `null`).
fn restrict<'k>(value: &Value, keys: impl Iterator<Item = &'k String>) -> Value {
    Value::Object(
        keys.map(|key| (key.clone(), value.get(key).cloned().unwrap_or(Value::Null)))
            .collect(),
    )
}
