//! The MCP client against the reference "everything" server over streamable HTTP: list, call,
//! fail closed, an unreachable server, and a server that dies mid-call and comes back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test code may panic: a panic is a failed test"
)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tenx_engine::ports::ToolErrorKind;
use tenx_mcp::{AttachProblem, McpClient};

/// The everything server listening on a loopback port (`port`, or a free one); killed when
/// dropped.
async fn start(server: &Path, port: Option<u16>) -> Listening {
    let port = port.unwrap_or_else(free_port);
    let mut command = tokio::process::Command::new(node().unwrap());
    command
        .arg(server)
        .arg("streamableHttp")
        .env_clear()
        .env("PORT", port.to_string());
    Listening::start(command, port).await
}

fn http(url: &str) -> serde_json::Value {
    json!({"servers": {"everything": {
        "transport": "http",
        "url": url,
        "headers": {"Authorization": "Bearer ${EVERYTHING_TOKEN}"},
        "timeout_ms": 10000,
    }}})
}

const TOKEN: (&str, &str) = ("EVERYTHING_TOKEN", "s3cret-token");

const TOOLS: &str = r#"
tool echo(message: string "What to echo") -> string {
  description = "Echo a message."
  run = mcp(server: "everything")
}
tool slow(duration: number "Seconds", steps: number "Steps") -> string {
  description = "Takes its time."
  run = mcp(server: "everything", tool: "trigger-long-running-operation")
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_tools_are_checked_and_called_over_http() {
    let Some(server) = everything() else { return };
    let running = start(&server, None).await;
    let artifact = compile(&program(TOOLS, &["echo", "slow"]));
    let mcp = Arc::new(
        McpClient::attach(&artifact, &config(http(&running.url()), &[TOKEN]))
            .await
            .unwrap(),
    );
    let tools = runner(&artifact, Arc::clone(&mcp));
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "over http"})).await,
        Ok(json!("Echo: over http"))
    );
    assert_eq!(
        call(&tools, &artifact, "slow", json!({"duration": 0.2, "steps": 2})).await,
        Ok(json!(
            "Long running operation completed. Duration: 0.2 seconds, Steps: 2."
        ))
    );
    assert!(
        mcp.status("everything")
            .unwrap()
            .listed
            .contains(&"get-sum".to_string())
    );
    assert_eq!(mcp.tools().keys().collect::<Vec<_>>(), ["echo", "slow"]);

    let mismatch = compile(&program(
        r#"
tool shout(loud: bool "Where echo wants a message") -> string {
  description = "Wrong shape."
  run = mcp(server: "everything", tool: "echo")
}"#,
        &["shout"],
    ));
    let error = McpClient::attach(&mismatch, &config(http(&running.url()), &[TOKEN]))
        .await
        .unwrap_err();
    let AttachProblem::Incompatible { tool, reasons, .. } = &error.problems[0] else {
        panic!("{error:?}");
    };
    assert_eq!(tool, "shout");
    assert_eq!(
        reasons,
        &["`message`: the server requires `message`, which the declaration does not have"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_fails_closed_without_naming_its_address_or_credentials() {
    if everything().is_none() {
        return;
    }
    let port = free_port();
    let artifact = compile(&program(TOOLS, &["echo", "slow"]));
    let error = McpClient::attach(
        &artifact,
        &config(http(&format!("http://127.0.0.1:{port}/mcp")), &[TOKEN]),
    )
    .await
    .unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(&error.problems[..], [AttachProblem::Unreachable { server, .. }] if server == "everything"),
        "{text}"
    );
    assert!(!text.contains(&port.to_string()) && !text.contains("s3cret"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_fails_that_call_and_is_reached_again_when_back() {
    let Some(server) = everything() else { return };
    let running = start(&server, None).await;
    let artifact = compile(&program(TOOLS, &["echo", "slow"]));
    let mcp = Arc::new(
        McpClient::attach(&artifact, &config(http(&running.url()), &[TOKEN]))
            .await
            .unwrap(),
    );
    let tools = Arc::new(runner(&artifact, Arc::clone(&mcp)));

    let in_flight = {
        let (tools, artifact) = (Arc::clone(&tools), artifact.clone());
        tokio::spawn(async move { call(&tools, &artifact, "slow", json!({"duration": 30, "steps": 1})).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let port = running.kill().await;
    let error = in_flight.await.unwrap().unwrap_err();
    assert!(
        matches!(error.kind, ToolErrorKind::Connection),
        "a call in flight when the server dies fails as a broken connection: {error:?}"
    );

    let back = start(&server, Some(port)).await;
    // The broken call gave its connection up: the next call connects again, checks, and runs.
    assert_eq!(
        call(&tools, &artifact, "echo", json!({"message": "again"})).await,
        Ok(json!("Echo: again"))
    );
    assert!(mcp.status("everything").unwrap().listings >= 2);
    drop(back);
}
