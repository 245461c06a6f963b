//! The MCP client against a second real MCP server nobody here wrote: one built on the official
//! Python SDK (`mcp` from PyPI, pinned in `tests/servers/requirements.txt`, installed by
//! `.ci/run`), whose tools change while it runs (`tests/servers/changing.py`: only the script is
//! ours, the protocol is the SDK's). Every case runs over stdio and over streamable HTTP: calls
//! (text, structured content, a tool error), a tool the server announces later (never
//! advertised to a model, never callable), a declared tool removed or changed after attach
//! (fails closed, naming server and tool), and a server that dies in the middle of a call.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code may panic: a panic is a failed test"
)]

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use serde_json::{Value, json};
use tenx_artifact::{Artifact, TrustPolicy};
use tenx_engine::ports::ToolRunner;
use tenx_engine::ports::{
    DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall, ToolErrorKind,
};
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{Identity, RunRequest};
use tenx_mcp::McpClient;
use tokio_util::sync::CancellationToken;

/// How the server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Over {
    Stdio,
    Http,
}

/// The server, running (over HTTP it is a process the test holds; over stdio the client starts it).
struct Changing {
    python: PathBuf,
    script: PathBuf,
    over: Over,
    http: Option<Listening>,
    /// Where a stdio server writes its process id (each start overwrites it).
    pid_file: tempfile::NamedTempFile,
}

impl Changing {
    async fn start(over: Over) -> Option<Self> {
        let (python, script) = python_server()?;
        let mut changing = Self {
            python,
            script,
            over,
            http: None,
            pid_file: tempfile::NamedTempFile::new().unwrap(),
        };
        if over == Over::Http {
            changing.http = Some(changing.listen(free_port()).await);
        }
        Some(changing)
    }

    async fn listen(&self, port: u16) -> Listening {
        let mut command = tokio::process::Command::new(&self.python);
        command.arg(&self.script).arg("http").arg(port.to_string()).env_clear();
        Listening::start(command, port).await
    }

    /// The host's configuration of server `changing`.
    fn config(&self) -> tenx_mcp::ResolvedConfig {
        let settings = match (&self.http, self.over) {
            (Some(listening), Over::Http) => json!({
                "transport": "http",
                "url": listening.url(),
                "headers": {"Authorization": "Bearer ${CHANGING_TOKEN}"},
                "timeout_ms": 10000,
            }),
            _ => {
                let script = format!(
                    "echo $$ > '{}'; exec '{}' '{}' stdio",
                    self.pid_file.path().display(),
                    self.python.display(),
                    self.script.display()
                );
                json!({"transport": "stdio", "command": "/bin/sh", "args": ["-c", script], "timeout_ms": 10000})
            }
        };
        config(
            json!({"servers": {"changing": settings}}),
            &[("CHANGING_TOKEN", "host-token")],
        )
    }

    /// The stdio server's process id, as it wrote it.
    fn pid(&self) -> String {
        std::fs::read_to_string(self.pid_file.path())
            .unwrap()
            .trim()
            .to_string()
    }
}

const TOOLS: &str = r#"
tool echo(message: string "What to echo") -> string {
  description = "Echo a message."
  run = mcp(server: "changing")
}
tool weather(city: string "A city") -> object {
  description = "The weather."
  run = mcp(server: "changing")
}
tool whoami() -> object {
  description = "What the server received."
  run = mcp(server: "changing")
}
tool fail() -> string {
  description = "Always fails."
  run = mcp(server: "changing")
}
tool grow() -> string {
  description = "Makes the server announce one more tool."
  run = mcp(server: "changing")
}
tool shrink() -> string {
  description = "Makes the server drop `echo`."
  run = mcp(server: "changing")
}
tool reshape() -> string {
  description = "Makes the server change `echo`'s parameters."
  run = mcp(server: "changing")
}
tool die() -> string {
  description = "Makes the server exit in the middle of the call."
  run = mcp(server: "changing")
}"#;

const NAMES: [&str; 8] = ["echo", "weather", "whoami", "fail", "grow", "shrink", "reshape", "die"];

async fn attached(changing: &Changing) -> (Artifact, Arc<McpClient>, tenx_tools::Tools) {
    let artifact = compile(&program(TOOLS, &NAMES));
    let mcp = Arc::new(McpClient::attach(&artifact, &changing.config()).await.unwrap());
    let tools = runner(&artifact, Arc::clone(&mcp));
    (artifact, mcp, tools)
}

async fn calls_map_text_structured_content_and_errors(over: Over) {
    let Some(changing) = Changing::start(over).await else {
        return;
    };
    let (artifact, mcp, tools) = attached(&changing).await;
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "hi"})).await,
        Ok(json!("echo: hi")),
        "a string result is the text, not the SDK's `{{\"result\": …}}` wrapper"
    );
    assert_eq!(
        call(&tools, &artifact, "weather", json!({"city": "Oslo"})).await,
        Ok(json!({"city": "Oslo", "temperature": 21}))
    );
    let failed = call(&tools, &artifact, "fail", json!({})).await.unwrap_err();
    assert_eq!(failed.kind, ToolErrorKind::Failed, "{failed:?}");
    assert!(
        failed.message.starts_with("MCP tool `fail` reported an error: ")
            && failed.message.contains("the failing tool failed"),
        "{failed:?}"
    );
    let status = mcp.status("changing").unwrap();
    assert_eq!(status.declared.values().flatten().count(), 0, "{status:?}");
    assert!(!status.listed.contains(&"extra".to_string()), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_map_text_structured_content_and_errors_over_stdio() {
    calls_map_text_structured_content_and_errors(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_map_text_structured_content_and_errors_over_http() {
    calls_map_text_structured_content_and_errors(Over::Http).await;
}

/// A model that calls what the test queued, whatever it is offered, and records the tool names
/// it was offered on every call.
#[derive(Default, Clone)]
struct Recording {
    replies: Arc<Mutex<Vec<ModelReply>>>,
    offered: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Recording {
    fn calls(self, names: &[&str]) -> Self {
        let mut replies: Vec<ModelReply> = names
            .iter()
            .enumerate()
            .map(|(index, name)| ModelReply {
                tool_calls: vec![ModelToolCall {
                    id: format!("call_{index}"),
                    name: (*name).to_string(),
                    arguments: if *name == "grow" { "{}" } else { r#"{"message": "x"}"# }.to_string(),
                }],
                ..ModelReply::default()
            })
            .collect();
        replies.push(ModelReply {
            text: "Done.".into(),
            ..ModelReply::default()
        });
        replies.reverse();
        *self.replies.lock().unwrap() = replies;
        self
    }
}

#[async_trait]
impl ModelClient for Recording {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _: &mut dyn DeltaSink,
        _: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        self.offered
            .lock()
            .unwrap()
            .push(request.tools.iter().map(|tool| tool.name.clone()).collect());
        self.replies.lock().unwrap().pop().ok_or(ModelError {
            kind: ModelErrorKind::ScriptExhausted,
            message: "no reply left".into(),
        })
    }
}

/// The tool names of the tool results in `messages`, with their outputs.
fn tool_results(messages: &[std::sync::Arc<Message>]) -> Vec<(bool, Value)> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { output, is_error, .. } => Some((*is_error, output.clone())),
            _ => None,
        })
        .collect()
}

async fn a_tool_announced_later_is_never_advertised_or_callable(over: Over) {
    let Some(changing) = Changing::start(over).await else {
        return;
    };
    let artifact = compile(&program(TOOLS, &NAMES));
    let mcp = Arc::new(McpClient::attach(&artifact, &changing.config()).await.unwrap());

    // A run through the engine: the model calls `grow` (the server adds `extra` and announces
    // it), then `extra` (which it was never offered), then answers.
    let model = Recording::default().calls(&["grow", "extra"]);
    let sealed = tenx_artifact::seal(artifact.clone()).unwrap().to_bytes();
    let loaded = tenx_artifact::load(&sealed, &TrustPolicy::signature_optional()).unwrap();
    let engine = tenx_runtime::HostBuilder::new(loaded)
        .model("m", Arc::new(model.clone()))
        .mcp(Arc::clone(&mcp) as Arc<dyn tenx_tools::McpTools>)
        .build(|_| None)
        .unwrap();
    let output = engine
        .run(
            RunRequest {
                thread_id: Some("t1".into()),
                messages: vec![Message::text(String::new(), Role::User, "go", 0.0)],
                identity: Identity::anonymous(),
                ..RunRequest::default()
            },
            &mut tenx_engine::testing::RecordingEvents::new(),
        )
        .await
        .unwrap();
    assert_eq!(output.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        tool_results(&output.messages),
        vec![(false, json!("grown")), (true, json!("Tool 'extra' not found.")),]
    );
    // The server did announce it, and it was listed again: the client saw `extra` on the server.
    eventually(Duration::from_secs(20), || {
        mcp.status("changing")
            .is_some_and(|status| status.announcements >= 1 && status.listed.contains(&"extra".to_string()))
    })
    .await;
    // Every model call was offered the declared tools only, before and after the announcement.
    let declared: Vec<String> = NAMES.iter().map(ToString::to_string).collect();
    let offered = model.offered.lock().unwrap().clone();
    assert_eq!(offered.len(), 3, "{offered:?}");
    for tools in &offered {
        let mut tools = tools.clone();
        tools.sort();
        let mut expected = declared.clone();
        expected.sort();
        assert_eq!(tools, expected);
    }
    assert_eq!(mcp.tools().len(), NAMES.len());
    assert!(!mcp.tools().contains_key("extra"));

    // And below the engine: the runner refuses a forged call of the announced tool.
    let tools = runner(&artifact, Arc::clone(&mcp));
    let refused = forged_call(&tools, &artifact, "echo", "changing", "extra", json!({"message": "x"}))
        .await
        .unwrap_err();
    assert_eq!(refused.message, "no tool `extra` is declared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_announced_later_is_never_advertised_or_callable_over_stdio() {
    a_tool_announced_later_is_never_advertised_or_callable(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_announced_later_is_never_advertised_or_callable_over_http() {
    a_tool_announced_later_is_never_advertised_or_callable(Over::Http).await;
}

/// Makes the server change `echo` with `trigger`, waits for the announcement, and returns the
/// error of the next call of `echo`.
async fn echo_after(over: Over, trigger: &str) -> (tenx_engine::ports::ToolError, tenx_mcp::ServerStatus) {
    let changing = Changing::start(over).await.unwrap();
    let (artifact, mcp, tools) = attached(&changing).await;
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "before"})).await,
        Ok(json!("echo: before"))
    );
    assert!(call(&tools, &artifact, trigger, json!({})).await.is_ok());
    eventually(Duration::from_secs(20), || {
        mcp.status("changing").is_some_and(|status| status.announcements >= 1)
    })
    .await;
    // No wait for the listing: an announcement makes every declared tool unchecked at once, so
    // the next call lists again before it runs anything.
    let error = call(&tools, &artifact, "echo", json!({"message": "after"}))
        .await
        .unwrap_err();
    // It stays refused, call after call.
    let again = call(&tools, &artifact, "echo", json!({"message": "again"}))
        .await
        .unwrap_err();
    assert_eq!(again, error);
    (error, mcp.status("changing").unwrap())
}

fn skip_without_python() -> bool {
    python_server().is_none()
}

async fn a_declared_tool_removed_after_attach_fails_closed(over: Over) {
    if skip_without_python() {
        return;
    }
    let (error, status) = echo_after(over, "shrink").await;
    assert_eq!(error.kind, ToolErrorKind::Failed);
    assert_eq!(
        error.message,
        "MCP server `changing` no longer has tool `echo` (declared as `echo`), so it is not called"
    );
    assert_eq!(status.declared["echo"].as_deref(), Some("the server does not list it"));
    assert!(!status.listed.contains(&"echo".to_string()), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_tool_removed_after_attach_fails_closed_over_stdio() {
    a_declared_tool_removed_after_attach_fails_closed(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_tool_removed_after_attach_fails_closed_over_http() {
    a_declared_tool_removed_after_attach_fails_closed(Over::Http).await;
}

async fn a_declared_tool_changed_after_attach_fails_closed(over: Over) {
    if skip_without_python() {
        return;
    }
    let (error, status) = echo_after(over, "reshape").await;
    assert_eq!(error.kind, ToolErrorKind::Failed);
    assert_eq!(
        error.message,
        "MCP tool `echo` on server `changing` no longer matches the declaration of `echo`, so it is not called: \
         `message`: declared as string, the server accepts integer"
    );
    assert_eq!(
        status.declared["echo"].as_deref(),
        Some("`message`: declared as string, the server accepts integer")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_tool_changed_after_attach_fails_closed_over_stdio() {
    a_declared_tool_changed_after_attach_fails_closed(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_tool_changed_after_attach_fails_closed_over_http() {
    a_declared_tool_changed_after_attach_fails_closed(Over::Http).await;
}

async fn a_server_that_dies_mid_call(over: Over) {
    let Some(mut changing) = Changing::start(over).await else {
        return;
    };
    let (artifact, mcp, tools) = attached(&changing).await;
    let first_pid = (over == Over::Stdio).then(|| changing.pid());
    let error = call(&tools, &artifact, "die", json!({})).await.unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Connection, "{error:?}");
    assert_eq!(
        error.message,
        "the connection to MCP server `changing` broke during the call of `die`: it may or may not have run"
    );
    if over == Over::Http {
        // The process is gone; the host brings it back on the same address.
        let mut gone = changing.http.take().unwrap();
        eventually(Duration::from_secs(10), || gone.exited()).await;
        changing.http = Some(changing.listen(gone.port).await);
    }
    // The next call connects again (a new process over stdio), lists and checks, and runs.
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "back"})).await,
        Ok(json!("echo: back"))
    );
    if let Some(first_pid) = first_pid {
        assert_ne!(first_pid, changing.pid(), "a new server process");
    }
    assert!(mcp.status("changing").unwrap().listings >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_over_stdio() {
    a_server_that_dies_mid_call(Over::Stdio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_over_http() {
    a_server_that_dies_mid_call(Over::Http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callers_identity_and_token_never_reach_the_server_only_the_hosts_credential() {
    let Some(changing) = Changing::start(Over::Http).await else {
        return;
    };
    let (artifact, _mcp, tools) = attached(&changing).await;
    // The caller: a user with a verified token (its claims; the engine never holds the raw token).
    let mut caller = Identity::user("user-7");
    caller.roles = vec!["lead".into()];
    caller.claims.insert("email".into(), json!("lead@example.test"));
    let arguments = json!({});
    let answer = tools
        .call(
            tenx_engine::ports::ToolInvocation {
                tool_name: "whoami",
                tool: &artifact.tools["whoami"],
                arguments: &arguments,
                idempotency_key: "refund-1042-key",
                identity: &caller,
                thread_id: "t1",
                call_id: "c1",
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let headers = answer["headers"].as_object().unwrap();
    assert_eq!(
        headers["authorization"],
        json!("Bearer host-token"),
        "the host's own credential"
    );
    let seen = serde_json::to_string(&answer).unwrap();
    for leaked in ["user-7", "lead@example.test", "refund-1042-key"] {
        assert!(!seen.contains(leaked), "`{leaked}` reached the server: {seen}");
    }
    assert!(
        !headers.contains_key("idempotency-key") && !headers.contains_key("x-user-id"),
        "{headers:?}"
    );
}
