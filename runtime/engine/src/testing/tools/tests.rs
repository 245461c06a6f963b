use serde_json::json;

use super::*;
use crate::Identity;

fn tool(name: &str) -> tenx_artifact::Tool {
    serde_json::from_value(json!({
        "name": name,
        "description": "Refund an order.",
        "parameters": {"type": "object", "properties": {}},
        "result": null,
        "risk": "low",
        "tags": [],
        "approval": null,
        "approved_by": [],
        "idempotency_key": null,
        "run": {"kind": "native", "name": "payments.refund"},
        "bindings": {},
        "risk_rules": null,
        "retry": null
    }))
    .unwrap()
}

async fn call(tools: &FakeTools, name: &str, thread_id: &str, key: &str, arguments: Value) -> Result<Value, ToolError> {
    let declaration = tool(name);
    let identity = Identity::user("ann");
    let invocation = ToolInvocation {
        tool_name: name,
        tool: &declaration,
        arguments: &arguments,
        idempotency_key: key,
        identity: &identity,
        thread_id,
        call_id: "call_demo_1",
    };
    tools.call(invocation, &CancellationToken::new()).await
}

#[tokio::test]
async fn scripted_answers_and_a_log_of_every_call() {
    let tools = FakeTools::new()
        .returns("issue_refund", json!("refunded"))
        .fails("flaky", ToolErrorKind::Server, "HTTP 503")
        .responds("echo", |invocation| Ok(invocation.arguments.clone()));
    assert_eq!(
        call(&tools, "issue_refund", "t1", "k1", json!({"n": 1})).await,
        Ok(json!("refunded"))
    );
    assert_eq!(
        call(&tools, "flaky", "t1", "k2", json!({})).await,
        Err(ToolError {
            kind: ToolErrorKind::Server,
            message: "HTTP 503".into()
        })
    );
    assert_eq!(
        call(&tools, "echo", "t1", "k3", json!({"a": [1]})).await,
        Ok(json!({"a": [1]}))
    );
    let error = call(&tools, "nobody", "t1", "k4", json!({})).await.unwrap_err();
    assert_eq!(
        error,
        ToolError {
            kind: ToolErrorKind::Failed,
            message: "no answer is scripted for tool `nobody`".into()
        }
    );

    assert_eq!(tools.total_calls(), 4);
    assert_eq!(tools.calls_of("issue_refund"), 1);
    let first = tools.calls().into_iter().next().unwrap();
    assert_eq!(
        first,
        FakeCall {
            tool: "issue_refund".into(),
            thread_id: "t1".into(),
            call_id: "call_demo_1".into(),
            idempotency_key: "k1".into(),
            arguments: json!({"n": 1}),
            user_id: Some("ann".into()),
        }
    );
}

#[tokio::test]
async fn calls_are_counted_per_thread_and_key() {
    let tools = FakeTools::new().returns("issue_refund", json!("ok"));
    for (thread, key) in [("t1", "k"), ("t1", "k"), ("t2", "k"), ("t1", "other")] {
        call(&tools, "issue_refund", thread, key, json!({})).await.unwrap();
    }
    assert_eq!(tools.calls_for_key("t1", "k"), 2);
    assert_eq!(tools.calls_for_key("t2", "k"), 1);
    assert_eq!(tools.calls_for_key("t3", "k"), 0);
    assert_eq!(tools.duplicate_keys(), vec![("t1".to_string(), "k".to_string())]);
}

#[tokio::test]
async fn a_sequence_plays_in_order_then_repeats_its_last_answer() {
    let timeout = ToolError {
        kind: ToolErrorKind::Timeout,
        message: "no answer in 10s".into(),
    };
    let tools = FakeTools::new()
        .sequence("t", vec![Err(timeout.clone()), Ok(json!(1)), Ok(json!(2))])
        .sequence("empty", Vec::new());
    assert_eq!(call(&tools, "t", "a", "1", json!({})).await, Err(timeout));
    assert_eq!(call(&tools, "t", "a", "2", json!({})).await, Ok(json!(1)));
    assert_eq!(call(&tools, "t", "a", "3", json!({})).await, Ok(json!(2)));
    assert_eq!(call(&tools, "t", "a", "4", json!({})).await, Ok(json!(2)));
    assert_eq!(
        call(&tools, "empty", "a", "5", json!({})).await.unwrap_err().kind,
        ToolErrorKind::Failed
    );
}

#[tokio::test]
async fn a_cancelled_call_is_not_sent() {
    let tools = FakeTools::new().returns("t", json!(1));
    let declaration = tool("t");
    let identity = Identity::anonymous();
    let arguments = json!({});
    let invocation = ToolInvocation {
        tool_name: "t",
        tool: &declaration,
        arguments: &arguments,
        idempotency_key: "k",
        identity: &identity,
        thread_id: "t1",
        call_id: "c",
    };
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        tools.call(invocation, &cancel).await.unwrap_err().kind,
        ToolErrorKind::Failed
    );
    assert_eq!(tools.total_calls(), 0);
}

#[test]
fn deduplication_is_on_unless_turned_off_by_model_facing_name() {
    let tools = FakeTools::new().not_deduplicating("send_email");
    assert!(tools.deduplicates(&tool("issue_refund")));
    assert!(!tools.deduplicates(&tool("send_email")));
    assert!(format!("{tools:?}").contains("send_email"));
}
