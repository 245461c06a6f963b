//! Prints what the MCP client costs against the reference "everything" server over stdio:
//! attach (spawn, handshake, `tools/list`, schema check) and the median of 200 `echo` calls
//! through the tool runner. Needs the server in `target/mcp-servers` (see `docs/runtime.md`).
//!
//! `cargo run --release -p tenx-mcp --example latency`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::print_stdout,
    reason = "a measuring program: a panic is a failed measurement"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tenx_artifact::{Artifact, Risk, Run, Schema, Tool};
use tenx_engine::Identity;
use tenx_engine::ports::{ToolInvocation, ToolRunner};
use tenx_engine::testing::ManualClock;
use tenx_mcp::{McpClient, McpConfig};
use tenx_tools::Tools;
use tokio_util::sync::CancellationToken;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
        .expect("node on the PATH");
    let mut artifact = Artifact::new("latency");
    artifact.tools.insert(
        "echo".into(),
        Tool {
            name: "echo".into(),
            description: "Echo.".into(),
            parameters: Schema::from_value(&json!({"type": "object", "additionalProperties": false,
                "properties": {"message": {"type": "string"}}, "required": ["message"]})),
            result: Some(Schema::from_value(&json!({"type": "string"}))),
            risk: Risk::Low,
            tags: Vec::new(),
            approval: None,
            approved_by: Vec::new(),
            idempotency_key: None,
            run: Run::Mcp {
                server: "everything".into(),
                tool: "echo".into(),
            },
            bindings: BTreeMap::new(),
            risk_rules: None,
            retry: None,
        },
    );
    let config: McpConfig = serde_json::from_value(json!({"servers": {"everything": {
        "transport": "stdio", "command": node, "args": [server, "stdio"]}}}))
    .unwrap();
    let resolved = config.resolve(|_| None).unwrap();

    let mut attaches = Vec::new();
    let mut client = None;
    for _ in 0..5 {
        let started = Instant::now();
        client = Some(McpClient::attach(&artifact, &resolved).await.unwrap());
        attaches.push(started.elapsed());
    }
    let tools = Tools::builder(Arc::new(ManualClock::new(0)))
        .mcp(Arc::new(client.unwrap()))
        .build(&artifact, &BTreeMap::<String, String>::new())
        .unwrap();
    let arguments = json!({"message": "hello"});
    let identity = Identity::anonymous();
    let cancel = CancellationToken::new();
    let mut calls = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let invocation = ToolInvocation {
            tool_name: "echo",
            tool: &artifact.tools["echo"],
            arguments: &arguments,
            idempotency_key: "k",
            identity: &identity,
            thread_id: "t",
            call_id: "c",
        };
        tools.call(invocation, &cancel).await.unwrap();
        calls.push(started.elapsed());
    }
    println!(
        "attach (spawn node, handshake, tools/list, check): median of 5 = {:?}",
        median(attaches)
    );
    println!(
        "echo call through the runner over stdio: median of 200 = {:?}",
        median(calls)
    );
}
