//! The standalone `GET` stream of streamable HTTP (the "listen" stream), against the server on
//! the official Python SDK (`tests/servers/changing.py`): an announcement the server makes on
//! its own, with no call in flight, reaches the client on it (and still adds no tool); the
//! stream is opened again when it drops, with the host's credential only; and a server that
//! answers `GET` with `405 Method Not Allowed` works as before, asked once per connection.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code may panic: a panic is a failed test"
)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use serde_json::{Value, json};
use tenx_artifact::{Artifact, TrustPolicy};
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall};
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{Identity, RunRequest};
use tenx_mcp::McpClient;
use tokio_util::sync::CancellationToken;

const TOOLS: &str = r#"
tool echo(message: string "What to echo") -> string {
  description = "Echo a message."
  run = mcp(server: "changing")
}
tool later(seconds: number "How long after the call") -> string {
  description = "Makes the server announce a tool on its own, after the call."
  run = mcp(server: "changing")
}
tool grow() -> string {
  description = "Makes the server announce one more tool during the call."
  run = mcp(server: "changing")
}
tool listens() -> object {
  description = "The GET requests the server saw."
  run = mcp(server: "changing")
}
tool hangup() -> string {
  description = "Makes the server end the open GET stream."
  run = mcp(server: "changing")
}"#;

const NAMES: [&str; 5] = ["echo", "later", "grow", "listens", "hangup"];

/// The Python server over HTTP (`mode` is `http` or `http-no-listen`), attached, with the
/// artifact and the tool runner; `None` (after saying why) without the venv.
async fn attached(mode: &str) -> Option<(Listening, Artifact, Arc<McpClient>, tenx_tools::Tools)> {
    let (python, script) = python_server()?;
    let port = free_port();
    let mut command = tokio::process::Command::new(&python);
    command.arg(&script).arg(mode).arg(port.to_string()).env_clear();
    let listening = Listening::start(command, port).await;
    let settings = json!({"servers": {"changing": {
        "transport": "http",
        "url": listening.url(),
        "headers": {"Authorization": "Bearer ${CHANGING_TOKEN}"},
        "timeout_ms": 10000,
    }}});
    let artifact = compile(&program(TOOLS, &NAMES));
    let mcp = Arc::new(
        McpClient::attach(&artifact, &config(settings, &[("CHANGING_TOKEN", "host-token")]))
            .await
            .unwrap(),
    );
    let tools = runner(&artifact, Arc::clone(&mcp));
    Some((listening, artifact, mcp, tools))
}

/// What `listens` answers: how many `GET`s, their `Authorization` headers, and whether one is open.
async fn listens(tools: &tenx_tools::Tools, artifact: &Artifact) -> (u64, Vec<Value>, bool) {
    let answer = call(tools, artifact, "listens", json!({})).await.unwrap();
    (
        answer["count"].as_u64().unwrap(),
        answer["authorization"].as_array().unwrap().clone(),
        answer["open"].as_bool().unwrap(),
    )
}

/// Waits until the server reports `count` `GET`s and one open; fails after 20 s.
async fn wait_for_listen(tools: &tenx_tools::Tools, artifact: &Artifact, count: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (seen, _, open) = listens(tools, artifact).await;
        if seen == count && open {
            return;
        }
        assert!(
            seen <= count && tokio::time::Instant::now() < deadline,
            "expected {count} GET requests and one open, the server saw {seen} (open: {open})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A model that makes the calls the test queued and records the tool names it was offered.
#[derive(Default, Clone)]
struct Recording {
    replies: Arc<Mutex<Vec<ModelReply>>>,
    offered: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Recording {
    fn calls(calls: &[(&str, &str)]) -> Self {
        let mut replies: Vec<ModelReply> = calls
            .iter()
            .enumerate()
            .map(|(index, (name, arguments))| ModelReply {
                tool_calls: vec![ModelToolCall {
                    id: format!("call_{index}"),
                    name: (*name).to_string(),
                    arguments: (*arguments).to_string(),
                }],
                ..ModelReply::default()
            })
            .collect();
        replies.push(ModelReply {
            text: "Done.".into(),
            ..ModelReply::default()
        });
        replies.reverse();
        Self {
            replies: Arc::new(Mutex::new(replies)),
            offered: Arc::default(),
        }
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

/// Runs `artifact` once with `model` and `mcp`: the tool results (is_error, output).
async fn run(artifact: &Artifact, mcp: &Arc<McpClient>, model: &Recording) -> Vec<(bool, Value)> {
    let sealed = tenx_artifact::seal(artifact.clone()).unwrap().to_bytes();
    let loaded = tenx_artifact::load(&sealed, &TrustPolicy::signature_optional()).unwrap();
    let engine = tenx_runtime::HostBuilder::new(loaded)
        .model("m", Arc::new(model.clone()))
        .mcp(Arc::clone(mcp) as Arc<dyn tenx_tools::McpTools>)
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
    output
        .messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { output, is_error, .. } => Some((*is_error, output.clone())),
            _ => None,
        })
        .collect()
}

fn sorted(names: &[String]) -> Vec<String> {
    let mut names = names.to_vec();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announcement_with_no_call_in_flight_is_heard_and_adds_no_tool() {
    let Some((_server, artifact, mcp, tools)) = attached("http").await else {
        return;
    };
    // The client opened the listen stream after the handshake, with the host's credential. The
    // session is one of the `initialize` era (rmcp's `serve` handshakes; a `2026-07-28` session,
    // with `subscriptions/listen` in place of this stream, is never made).
    wait_for_listen(&tools, &artifact, 1).await;
    let protocol = call(&tools, &artifact, "listens", json!({})).await.unwrap()["protocol"].clone();
    assert_eq!(protocol, json!("2025-11-25"));
    assert_eq!(
        call(&tools, &artifact, "later", json!({"seconds": 1.0})).await,
        Ok(json!("later"))
    );
    let right_after = mcp.status("changing").unwrap();
    assert_eq!(
        right_after.announcements, 0,
        "the call is over, the change not made yet"
    );
    assert!(!right_after.listed.contains(&"late".to_string()));
    // A second later the server adds `late` and announces it: nothing is in flight, so only
    // the listen stream can carry it. The client hears it and lists again.
    eventually(Duration::from_secs(20), || {
        mcp.status("changing")
            .is_some_and(|status| status.announcements == 1 && status.listed.contains(&"late".to_string()))
    })
    .await;
    let status = mcp.status("changing").unwrap();
    assert_eq!(status.declared.values().flatten().count(), 0, "{status:?}");
    assert!(status.listings >= 2, "{status:?}");

    // The model is offered the declared tools only, and its call of `late` reaches nothing.
    let model = Recording::calls(&[("late", r#"{"message": "x"}"#), ("echo", r#"{"message": "x"}"#)]);
    assert_eq!(
        run(&artifact, &mcp, &model).await,
        vec![(true, json!("Tool 'late' not found.")), (false, json!("echo: x"))]
    );
    let declared: Vec<String> = NAMES.iter().map(ToString::to_string).collect();
    let offered = model.offered.lock().unwrap().clone();
    assert_eq!(offered.len(), 3, "{offered:?}");
    for tools in &offered {
        assert_eq!(sorted(tools), sorted(&declared));
    }
    assert!(!mcp.tools().contains_key("late"));
    let refused = forged_call(&tools, &artifact, "echo", "changing", "late", json!({"message": "x"}))
        .await
        .unwrap_err();
    assert_eq!(refused.message, "no tool `late` is declared");

    let (count, authorization, _) = listens(&tools, &artifact).await;
    assert_eq!(count, 1, "one listen stream, kept open");
    assert_eq!(authorization, vec![json!("Bearer host-token")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listen_stream_is_opened_again_when_it_drops() {
    let Some((_server, artifact, mcp, tools)) = attached("http").await else {
        return;
    };
    wait_for_listen(&tools, &artifact, 1).await;
    // The server ends the stream (a restart of a proxy would too): the client opens another.
    assert_eq!(call(&tools, &artifact, "hangup", json!({})).await, Ok(json!("hung up")));
    wait_for_listen(&tools, &artifact, 2).await;
    // And hears on it what the server announces on its own.
    assert_eq!(
        call(&tools, &artifact, "later", json!({"seconds": 0.2})).await,
        Ok(json!("later"))
    );
    eventually(Duration::from_secs(20), || {
        mcp.status("changing")
            .is_some_and(|status| status.announcements == 1 && status.listed.contains(&"late".to_string()))
    })
    .await;
    // Once open again it stays open: no further attempts, every one with the host's credential.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (count, authorization, open) = listens(&tools, &artifact).await;
    assert_eq!((count, open), (2, true));
    assert_eq!(authorization, vec![json!("Bearer host-token"); 2]);
    assert!(!mcp.tools().contains_key("late"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_405_to_get_works_as_before() {
    let Some((_server, artifact, mcp, tools)) = attached("http-no-listen").await else {
        return;
    };
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "hi"})).await,
        Ok(json!("echo: hi"))
    );
    assert_eq!(call(&tools, &artifact, "grow", json!({})).await, Ok(json!("grown")));
    assert_eq!(
        call(&tools, &artifact, "later", json!({"seconds": 0.2})).await,
        Ok(json!("later"))
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The client asked for the stream once, took the 405 as "not offered" and did not ask again;
    // with nowhere to send them, the server's announcements never arrive.
    let (count, authorization, open) = listens(&tools, &artifact).await;
    assert_eq!((count, open), (1, false));
    assert_eq!(authorization, vec![json!("Bearer host-token")]);
    let status = mcp.status("changing").unwrap();
    assert_eq!((status.announcements, status.listings), (0, 1), "{status:?}");
    // Calls still run, and only the declared tools.
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "still"})).await,
        Ok(json!("echo: still"))
    );
    assert!(!mcp.tools().contains_key("late") && !mcp.tools().contains_key("extra"));
}
