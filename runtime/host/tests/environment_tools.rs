//! The load path a host follows: resolve the environment, then build the tool runner from it;
//! the runner sends what the environment resolved.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use tenx_artifact::{Artifact, HttpMethod, Risk, Run, Schema, Tool};
use tenx_engine::Identity;
use tenx_engine::ports::{ToolInvocation, ToolRunner};
use tenx_engine::testing::ManualClock;
use tenx_runtime::resolve;
use tenx_tools::Tools;
use tenx_tools::test_support::FakeService;
use tokio_util::sync::CancellationToken;

fn artifact() -> Artifact {
    let mut artifact = Artifact::new("tenxc test");
    artifact.tools.insert(
        "search".into(),
        Tool {
            name: "search".into(),
            description: "Search.".into(),
            parameters: Schema::from_value(&json!({"type": "object"})),
            result: None,
            risk: Risk::Low,
            tags: Vec::new(),
            approval: None,
            approved_by: Vec::new(),
            idempotency_key: None,
            run: Run::Http {
                method: HttpMethod::Get,
                url: "${DOCS_URL}/search".into(),
                timeout_ms: 5_000,
                headers: BTreeMap::from([("Authorization".to_string(), "Bearer ${DOCS_TOKEN}".to_string())]),
            },
            bindings: BTreeMap::new(),
            risk_rules: None,
            retry: None,
        },
    );
    artifact
}

#[tokio::test]
async fn the_runner_sends_what_the_environment_resolved() {
    let service = FakeService::echo().await.unwrap();
    let artifact = artifact();
    let url = service.url();
    let environment = resolve(&artifact, |name| match name {
        "DOCS_URL" => Some(url.clone()),
        "DOCS_TOKEN" => Some("t0ken".into()),
        _ => None,
    })
    .unwrap();
    let tools = Tools::builder(Arc::new(ManualClock::new(0)))
        .build(&artifact, &environment)
        .unwrap();
    let arguments = json!({"q": "refunds"});
    let result = tools
        .call(
            ToolInvocation {
                tool_name: "search",
                tool: &artifact.tools["search"],
                arguments: &arguments,
                idempotency_key: "k",
                identity: &Identity::user("u1"),
                thread_id: "t",
                call_id: "c",
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({"method": "GET", "path": "/search", "query": "q=refunds", "body": null})
    );
    assert_eq!(service.requests()[0].header("authorization"), Some("Bearer t0ken"));
}

#[test]
fn a_host_learns_every_missing_name_before_building_anything() {
    let error = resolve(&artifact(), |_| None).unwrap_err();
    assert_eq!(error.names(), vec!["DOCS_TOKEN", "DOCS_URL"]);
}
