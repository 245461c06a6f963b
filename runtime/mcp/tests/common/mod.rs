//! Shared by the MCP tests: the real MCP server they run (the reference "everything" server
//! from npm, installed by `.ci/run` into `target/mcp-servers`), programs compiled into
//! artifacts, and calls through the tool runner exactly as the engine makes them.
//!
//! When the server is not installed the tests skip with a message, except under `CI=true`,
//! where a missing server fails them.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tenx_artifact::Artifact;
use tenx_engine::Identity;
use tenx_engine::ports::{ToolError, ToolInvocation, ToolRunner};
use tenx_engine::testing::ManualClock;
use tenx_mcp::{McpClient, McpConfig, ResolvedConfig};
use tenx_tools::Tools;
use tokio_util::sync::CancellationToken;

/// The version `.ci/run` installs.
pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// The server's entry point, or `None` (after saying why) when it is not installed locally.
pub fn everything() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = node();
    if path.is_file() && node.is_some() {
        return Some(path);
    }
    let message = format!(
        "the MCP server {EVERYTHING} (or node) is not installed: run `npm install --prefix target/mcp-servers {EVERYTHING}`"
    );
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{message} (CI installs it in .ci/run)");
    }
    eprintln!("skipped: {message}");
    None
}

/// `node` from the `PATH`, as an absolute path (the child's environment is cleared).
pub fn node() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
}

/// The artifact of a program (which must compile without a diagnostic).
pub fn compile(source: &str) -> Artifact {
    let mut sources = tenx_diagnostics::SourceSet::new();
    sources.add("main.tenx", source.to_string());
    let root = sources.find("main.tenx").unwrap();
    let compiled = tenx_compiler::compile(&mut sources, root, &tenx_compiler::LintLevels::default());
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
    compiled.artifact.unwrap()
}

/// A program whose agent can call `tools` (declarations, written out) on the server `server`.
pub fn program(tools: &str, names: &[&str]) -> String {
    format!(
        r#"
model m {{
  provider = scripted
  turns    = [{{ text: "Done." }}]
}}

{tools}

agent desk {{
  model  = m
  prompt = "Answer."
  tools  = [{names}]
}}

graph support {{
  entry = desk
  nodes = [desk]
  desk -> END
}}
"#,
        names = names.join(", ")
    )
}

/// A configuration from JSON, resolved against `pairs` as the environment.
pub fn config(json: Value, pairs: &[(&str, &str)]) -> ResolvedConfig {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    serde_json::from_value::<McpConfig>(json)
        .unwrap()
        .resolve(move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        .unwrap()
}

/// The stdio configuration of the everything server, with extra settings merged in.
pub fn stdio(server: &std::path::Path, extra: Value) -> Value {
    let mut settings = serde_json::json!({
        "transport": "stdio",
        "command": node().unwrap(),
        "args": [server, "stdio"],
    });
    if let (Value::Object(settings), Value::Object(extra)) = (&mut settings, extra) {
        settings.extend(extra);
    }
    serde_json::json!({"servers": {"everything": settings}})
}

/// The tool runner of `artifact` with `mcp` attached, built as a host builds it.
pub fn runner(artifact: &Artifact, mcp: Arc<McpClient>) -> Tools {
    Tools::builder(Arc::new(ManualClock::new(0)))
        .mcp(mcp)
        .build(artifact, &std::collections::BTreeMap::new())
        .unwrap()
}

/// Calls the declared tool `name` through `tools`.
pub async fn call(tools: &Tools, artifact: &Artifact, name: &str, arguments: Value) -> Result<Value, ToolError> {
    call_with(tools, artifact, name, arguments, &CancellationToken::new()).await
}

/// Calls the declared tool `name` through `tools`, under `cancel`.
pub async fn call_with(
    tools: &Tools,
    artifact: &Artifact,
    name: &str,
    arguments: Value,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    tools
        .call(
            ToolInvocation {
                tool_name: name,
                tool: &artifact.tools[name],
                arguments: &arguments,
                idempotency_key: "key-1",
                identity: &Identity::user("u1"),
                thread_id: "t1",
                call_id: "c1",
            },
            cancel,
        )
        .await
}

/// Waits until `ready` holds, checking every 50 ms, for at most `limit` (then fails).
pub async fn eventually(limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !ready() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the condition did not hold within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The Python interpreter of the venv `.ci/run` makes (with the pinned official `mcp` SDK) and
/// the server script, or `None` (after saying why) when the venv is not there. Under `CI=true`
/// a missing venv fails the test.
pub fn python_server() -> Option<(PathBuf, PathBuf)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("../../target/mcp-servers/venv/bin/python");
    let script = root.join("tests/servers/changing.py");
    let installed = python.is_file()
        && std::process::Command::new(&python)
            .args(["-c", "import mcp.server.mcpserver"])
            .status()
            .is_ok_and(|status| status.success());
    if installed {
        return Some((python, script));
    }
    let message = "the Python MCP SDK is not installed: run `python3 -m venv target/mcp-servers/venv && \
                   target/mcp-servers/venv/bin/pip install --no-deps -r runtime/mcp/tests/servers/requirements.txt`";
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{message} (CI installs it in .ci/run)");
    }
    eprintln!("skipped: {message}");
    None
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process listening on a loopback port; killed when dropped.
pub struct Listening {
    pub child: tokio::process::Child,
    pub port: u16,
}

impl Listening {
    /// Starts `command` and waits until `port` accepts connections.
    pub async fn start(mut command: tokio::process::Command, port: u16) -> Self {
        let child = command
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        eventually(Duration::from_secs(30), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        })
        .await;
        Self { child, port }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    /// Kills it and returns its port.
    pub async fn kill(mut self) -> u16 {
        self.child.kill().await.unwrap();
        self.port
    }
}

/// Calls `remote` on `server` under the declared tool `name`'s declaration with its `run`
/// forged to point there: what a model would do if it could name a tool it was never offered.
pub async fn forged_call(
    tools: &Tools,
    artifact: &Artifact,
    name: &str,
    server: &str,
    remote: &str,
    arguments: Value,
) -> Result<Value, ToolError> {
    let mut forged = artifact.tools[name].clone();
    forged.run = tenx_artifact::Run::Mcp {
        server: server.into(),
        tool: remote.into(),
    };
    tools
        .call(
            ToolInvocation {
                tool_name: remote,
                tool: &forged,
                arguments: &arguments,
                idempotency_key: "k",
                identity: &Identity::anonymous(),
                thread_id: "t",
                call_id: "c",
            },
            &CancellationToken::new(),
        )
        .await
}
