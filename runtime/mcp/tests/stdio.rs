//! The MCP client against a real MCP server nobody here wrote (the reference "everything"
//! server from npm), over stdio: list, call, errors, what fails closed at attach, a server that
//! announces more tools later, a server that dies mid-call, timeouts and cancellation.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test code may panic: a panic is a failed test"
)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tenx_engine::ports::{ToolErrorKind, ToolRunner};
use tenx_mcp::{AttachProblem, McpClient};
use tenx_tools::{LoadProblem, Tools};
use tokio_util::sync::CancellationToken;

const ECHO: &str = r#"
tool echo(message: string "What to echo") -> string {
  description = "Echo a message."
  run = mcp(server: "everything")
}"#;

const SUM: &str = r#"
tool add(a: int(min: 0) "First", b: number "Second") -> string {
  description = "Add two numbers."
  run = mcp(server: "everything", tool: "get-sum")
}"#;

const WEATHER: &str = r#"
tool weather(location: enum("New York", "Chicago") "A city") -> object {
  description = "The weather."
  run = mcp(server: "everything", tool: "get-structured-content")
}"#;

const REFERENCE: &str = r#"
tool reference(resourceId: number "Which resource") -> string {
  description = "A resource reference."
  run = mcp(server: "everything", tool: "get-resource-reference")
}"#;

const SLOW: &str = r#"
tool slow(duration: number "Seconds", steps: number "Steps") -> string {
  description = "Takes its time."
  run = mcp(server: "everything", tool: "trigger-long-running-operation")
}"#;

const ENV: &str = r#"
tool env() -> string {
  description = "The server's environment."
  run = mcp(server: "everything", tool: "get-env")
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_tools_are_listed_checked_and_called() {
    let Some(server) = everything() else { return };
    let artifact = compile(&program(&format!("{ECHO}{SUM}{WEATHER}"), &["echo", "add", "weather"]));
    let mcp = Arc::new(
        McpClient::attach(&artifact, &config(stdio(&server, json!({})), &[]))
            .await
            .unwrap(),
    );
    let tools = runner(&artifact, Arc::clone(&mcp));

    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "hi"})).await,
        Ok(json!("Echo: hi"))
    );
    assert_eq!(
        call(&tools, &artifact, "add", json!({"a": 2, "b": 0.5})).await,
        Ok(json!("The sum of 2 and 0.5 is 2.5."))
    );
    let weather = call(&tools, &artifact, "weather", json!({"location": "New York"}))
        .await
        .unwrap();
    assert!(weather.get("temperature").is_some(), "structured content: {weather}");

    let status = mcp.status("everything").unwrap();
    assert!(
        status.listed.contains(&"echo".to_string()) && status.listed.len() > 3,
        "{status:?}"
    );
    assert_eq!(status.declared.values().flatten().count(), 0, "{status:?}");
    assert!(
        !tools.deduplicates(&artifact.tools["echo"]),
        "MCP calls carry no idempotency key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_error_is_an_error_the_model_sees() {
    let Some(server) = everything() else { return };
    let artifact = compile(&program(REFERENCE, &["reference"]));
    let mcp = Arc::new(
        McpClient::attach(&artifact, &config(stdio(&server, json!({})), &[]))
            .await
            .unwrap(),
    );
    let tools = runner(&artifact, mcp);
    let error = call(&tools, &artifact, "reference", json!({"resourceId": -1}))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Failed, "{error:?}");
    assert!(
        error.message.starts_with("MCP tool `reference` reported an error: ") && error.message.contains("resourceId"),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_tool_a_schema_mismatch_and_an_unconfigured_server_fail_closed_together() {
    let Some(server) = everything() else { return };
    let declarations = r#"
tool wipe(path: string "What to wipe") -> string {
  description = "Not on the server."
  run = mcp(server: "everything", tool: "delete-everything")
}
tool shout(message: int "A number where the server wants text") -> string {
  description = "Wrong type."
  run = mcp(server: "everything", tool: "echo")
}
tool sum_one(a: number "Only one of the two numbers the server requires") -> string {
  description = "Missing a required parameter."
  run = mcp(server: "everything", tool: "get-sum")
}
tool files(path: string "A path") -> string {
  description = "On a server the host does not configure."
  run = mcp(server: "files", tool: "read_text_file")
}"#;
    let artifact = compile(&program(declarations, &["wipe", "shout", "sum_one", "files"]));
    let error = McpClient::attach(&artifact, &config(stdio(&server, json!({})), &[]))
        .await
        .unwrap_err();
    assert_eq!(
        error.problems,
        vec![
            AttachProblem::Incompatible {
                server: "everything".into(),
                tool: "shout".into(),
                remote: "echo".into(),
                reasons: vec!["`message`: declared as integer, the server accepts string".into()],
            },
            AttachProblem::Incompatible {
                server: "everything".into(),
                tool: "sum_one".into(),
                remote: "get-sum".into(),
                reasons: vec!["`b`: the server requires `b`, which the declaration does not have".into()],
            },
            AttachProblem::MissingTool {
                server: "everything".into(),
                tool: "wipe".into(),
                remote: "delete-everything".into(),
            },
            AttachProblem::NotConfigured {
                server: "files".into(),
                tools: vec!["files".into()],
            },
        ]
    );
    let text = error.to_string();
    assert!(
        text.contains("MCP server `files` is not configured by the host (needed by `files`)"),
        "{text}"
    );

    // A host that attaches nothing cannot build the runner: the server is named.
    let refused = Tools::builder(Arc::new(tenx_engine::testing::ManualClock::new(0)))
        .build(&artifact, &std::collections::BTreeMap::new())
        .unwrap_err();
    assert!(refused.problems.contains(&LoadProblem::McpServerNotAttached {
        tool: "files".into(),
        server: "files".into()
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_the_server_announces_later_are_never_reachable() {
    let Some(server) = everything() else { return };
    let artifact = compile(&program(ECHO, &["echo"]));
    let mcp = Arc::new(
        McpClient::attach(&artifact, &config(stdio(&server, json!({})), &[]))
            .await
            .unwrap(),
    );
    // The server registers more tools once initialised and announces them.
    eventually(Duration::from_secs(20), || {
        mcp.status("everything")
            .is_some_and(|status| status.announcements >= 1 && status.listings >= 2)
    })
    .await;
    let status = mcp.status("everything").unwrap();
    assert!(
        status.listed.contains(&"simulate-research-query".to_string()),
        "{status:?}"
    );
    assert_eq!(status.declared.keys().collect::<Vec<_>>(), ["echo"]);
    assert_eq!(mcp.tools().keys().collect::<Vec<_>>(), ["echo"]);

    let tools = runner(&artifact, Arc::clone(&mcp));
    let refused = forged_call(
        &tools,
        &artifact,
        "echo",
        "everything",
        "simulate-research-query",
        json!({"topic": "x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.message, "no tool `simulate-research-query` is declared");
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "still"})).await,
        Ok(json!("Echo: still"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_fails_that_call_and_is_restarted_for_the_next() {
    let Some(server) = everything() else { return };
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    let script = format!(
        "echo $$ > '{}'; exec '{}' '{}' stdio",
        pid_file.path().display(),
        node().unwrap().display(),
        server.display()
    );
    let settings =
        json!({"servers": {"everything": {"transport": "stdio", "command": "/bin/sh", "args": ["-c", script]}}});
    let artifact = compile(&program(&format!("{ECHO}{SLOW}"), &["echo", "slow"]));
    let mcp = Arc::new(McpClient::attach(&artifact, &config(settings, &[])).await.unwrap());
    let tools = Arc::new(runner(&artifact, Arc::clone(&mcp)));
    let first_pid = std::fs::read_to_string(pid_file.path()).unwrap().trim().to_string();

    let in_flight = {
        let (tools, artifact) = (Arc::clone(&tools), artifact.clone());
        tokio::spawn(async move { call(&tools, &artifact, "slow", json!({"duration": 30, "steps": 1})).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &first_pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let error = in_flight.await.unwrap().unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Connection, "{error:?}");
    assert_eq!(
        error.message,
        "the connection to MCP server `everything` broke during the call of `slow`: it may or may not have run"
    );

    // The next call starts the server again, checks the tools again, and runs.
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "back"})).await,
        Ok(json!("Echo: back"))
    );
    let second_pid = std::fs::read_to_string(pid_file.path()).unwrap().trim().to_string();
    assert_ne!(first_pid, second_pid);
    assert!(mcp.status("everything").unwrap().listings >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_be_restarted_backs_off() {
    let Some(server) = everything() else { return };
    // The server starts once; the second start finds its marker and fails.
    let marker = tempfile::TempDir::new().unwrap();
    let flag = marker.path().join("started");
    let pid_file = marker.path().join("pid");
    let script = format!(
        "[ -e '{flag}' ] && exit 3; touch '{flag}'; echo $$ > '{pid}'; exec '{node}' '{server}' stdio",
        flag = flag.display(),
        pid = pid_file.display(),
        node = node().unwrap().display(),
        server = server.display()
    );
    let settings = json!({"servers": {"everything": {"transport": "stdio", "command": "/bin/sh", "args": ["-c", script], "timeout_ms": 5000}}});
    let artifact = compile(&program(ECHO, &["echo"]));
    let mcp = Arc::new(McpClient::attach(&artifact, &config(settings, &[])).await.unwrap());
    let tools = runner(&artifact, mcp);
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap()
            .success()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;

    let first = call(&tools, &artifact, "echo", json!({"message": "x"}))
        .await
        .unwrap_err();
    assert_eq!(first.kind, ToolErrorKind::Connection);
    assert!(
        first
            .message
            .starts_with("could not reconnect to MCP server `everything`: "),
        "{first:?}"
    );
    let second = call(&tools, &artifact, "echo", json!({"message": "x"}))
        .await
        .unwrap_err();
    assert!(
        second
            .message
            .starts_with("MCP server `everything` is down; the next attempt to reconnect is in "),
        "{second:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_cancellation() {
    let Some(server) = everything() else { return };
    let artifact = compile(&program(&format!("{ECHO}{SLOW}"), &["echo", "slow"]));
    let settings = stdio(&server, json!({"timeout_ms": 3000}));
    let mcp = Arc::new(McpClient::attach(&artifact, &config(settings, &[])).await.unwrap());
    let tools = runner(&artifact, mcp);
    let error = call(&tools, &artifact, "slow", json!({"duration": 20, "steps": 1}))
        .await
        .unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (
            ToolErrorKind::Timeout,
            "MCP server `everything` did not answer within 3000 ms"
        )
    );
    let cancel = CancellationToken::new();
    let cancelling = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };
    let error = call_with(&tools, &artifact, "slow", json!({"duration": 20, "steps": 1}), &cancel)
        .await
        .unwrap_err();
    cancelling.await.unwrap();
    assert_eq!(error.message, "the call was cancelled");
    // The connection survives both.
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "ok"})).await,
        Ok(json!("Echo: ok"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_receives_only_the_variables_its_configuration_names() {
    let Some(server) = everything() else { return };
    let artifact = compile(&program(ENV, &["env"]));
    let settings = stdio(&server, json!({"env": ["TENX_MCP_GIVEN"]}));
    let mcp = Arc::new(
        McpClient::attach(
            &artifact,
            &config(settings, &[("TENX_MCP_GIVEN", "yes"), ("TENX_SECRET", "no")]),
        )
        .await
        .unwrap(),
    );
    let tools = runner(&artifact, mcp);
    let text = call(&tools, &artifact, "env", json!({})).await.unwrap();
    let environment: serde_json::Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    let names: Vec<&String> = environment.as_object().unwrap().keys().collect();
    assert_eq!(names, ["TENX_MCP_GIVEN"], "{environment}");
}
