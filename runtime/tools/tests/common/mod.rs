//! Helpers shared by the integration tests: tool declarations, artifacts and invocations.

#![allow(
    dead_code,
    clippy::indexing_slicing,
    reason = "each test file uses a different part of the helpers; a panic is a failed test"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tenx_artifact::{Artifact, HttpMethod, Risk, Run, Schema, Tool};
use tenx_engine::Identity;
use tenx_engine::ports::{Clock, ToolError, ToolInvocation, ToolRunner};
use tenx_engine::testing::ManualClock;
use tenx_tools::{LoadError, NativeHandlers, Tools};
use tokio_util::sync::CancellationToken;

/// A low-risk tool with `run`, an object parameter schema and the given result schema.
pub fn tool(name: &str, run: Run, result: Option<Value>) -> Tool {
    Tool {
        name: name.into(),
        description: format!("The {name} tool."),
        parameters: Schema::from_value(&json!({"type": "object"})),
        result: result.map(|schema| Schema::from_value(&schema)),
        risk: Risk::Low,
        tags: Vec::new(),
        approval: None,
        approved_by: Vec::new(),
        idempotency_key: None,
        run,
        bindings: BTreeMap::new(),
        risk_rules: None,
        retry: None,
    }
}

/// An `http` binding.
pub fn http(method: HttpMethod, url: &str, timeout_ms: u64, headers: &[(&str, &str)]) -> Run {
    Run::Http {
        method,
        url: url.into(),
        timeout_ms,
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

/// An artifact with these tools (declared name = model-facing name) and the native handlers
/// they name.
pub fn artifact(tools: Vec<Tool>) -> Artifact {
    let mut artifact = Artifact::new("tenxc test");
    for tool in tools {
        if let Run::Native { name } = &tool.run {
            artifact.native_handlers.push(name.clone());
        }
        artifact.tools.insert(tool.name.clone(), tool);
    }
    artifact.normalize();
    artifact
}

/// Variables from pairs.
pub fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The clock every test uses: 2026-03-29T01:30:00Z.
pub const NOW: u64 = 1_774_747_800_000;

/// Tools for `artifact` with `variables`, natives and the fixed clock.
pub fn load(
    artifact: &Artifact,
    variables: &BTreeMap<String, String>,
    natives: NativeHandlers,
) -> Result<Tools, LoadError> {
    let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(NOW));
    Tools::builder(clock).natives(natives).build(artifact, variables)
}

/// Calls `name` with `arguments`, key `key` and `identity`.
pub async fn call(
    tools: &Tools,
    artifact: &Artifact,
    name: &str,
    arguments: Value,
    key: &str,
    identity: &Identity,
) -> Result<Value, ToolError> {
    let tool = &artifact.tools[name];
    tools
        .call(
            ToolInvocation {
                tool_name: name,
                tool,
                arguments: &arguments,
                idempotency_key: key,
                identity,
                thread_id: "thread-1",
                call_id: "call-1",
            },
            &CancellationToken::new(),
        )
        .await
}

/// A verified user with roles and scopes.
pub fn user() -> Identity {
    Identity {
        user_id: Some("u-42".into()),
        roles: vec!["support".into()],
        scopes: vec!["orders:read".into(), "refunds:write".into()],
        claims: serde_json::Map::from_iter([("tenant".to_string(), json!("acme"))]),
    }
}
