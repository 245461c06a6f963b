//! Seed 000, "Tools hidden by tools_tags cannot be called" and "Handoffs only go where a handoff
//! tool says" (D10, D11): a steered model's call to a tool its agent was not shown, or a
//! `transfer_to_X` for an agent it declares no handoff to, gets `Tool 'x' not found.`, runs
//! nothing, and is recorded as a refused call (`not_found`); a declared handoff is honoured.

use serde_json::{Value, json};
use tenx_engine::ports::Store;

use super::super::harness::user;
use super::super::steered::Steered;
use super::{send, shop, tool_outputs};

/// The `not_found` tool-call records of `thread`.
async fn not_found(server: &super::super::harness::Server, thread: &str) -> Vec<Value> {
    server
        .store
        .records(thread)
        .await
        .unwrap()
        .into_iter()
        .filter(|record| record.kind == "tool_call" && record.fields["outcome"] == "not_found")
        .map(|record| record.fields["tool"].clone())
        .collect()
}

#[tokio::test]
async fn a_call_to_a_tool_the_agent_was_not_shown_is_not_found_and_never_runs() {
    let steered = Steered::default();
    steered.calls(&[
        ("c1", "delete_shop", json!({"confirm": true})),
        ("c2", "no_such_tool", json!({})),
    ]);
    steered.text("done");
    let server = shop(&steered).await;
    let (status, body) = send(&server, "v1", json!([user("hi")])).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.tools.total_calls(), 0, "nothing ran");
    let messages = &body["data"]["messages"];
    assert_eq!(
        tool_outputs(messages),
        [
            json!("Tool 'delete_shop' not found."),
            json!("Tool 'no_such_tool' not found.")
        ]
    );
    let refusals: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    for refusal in &refusals {
        assert_eq!(refusal["content"][0]["type"], "error", "{refusal}");
        assert_eq!(refusal["content"][1]["is_error"], true, "{refusal}");
    }
    let shown = vec!["lookup_order", "refund", "transfer_to_billing", "user_location"];
    let mut seen = steered.seen_tools.lock().unwrap()[0].clone();
    seen.sort();
    assert_eq!(seen, shown, "the model is shown the agent's own tools only");
    let assistant = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap();
    let mut allowed: Vec<&str> = assistant["metadata"]["allowed_tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    allowed.sort_unstable();
    assert_eq!(allowed, shown, "the message records what it was shown");
    assert_eq!(
        not_found(&server, "v1").await,
        [json!("delete_shop"), json!("no_such_tool")]
    );
}

#[tokio::test]
async fn a_transfer_to_an_agent_without_a_declared_handoff_is_not_found_and_stays() {
    let steered = Steered::default();
    steered.calls(&[("c1", "transfer_to_admin_desk", json!({}))]);
    steered.calls(&[("c2", "transfer_to_billing", json!({}))]);
    steered.text("Billing here.");
    let server = shop(&steered).await;
    let (status, body) = send(&server, "v2", json!([user("hand me over")])).await;
    assert_eq!(status, 200, "{body}");
    let messages = &body["data"]["messages"];
    assert_eq!(
        tool_outputs(messages),
        [
            json!("Tool 'transfer_to_admin_desk' not found."),
            json!("Transferred to billing.")
        ]
    );
    let visited: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .map(|message| message["metadata"]["node"].as_str().unwrap())
        .collect();
    assert_eq!(visited, ["desk", "desk", "billing"], "admin_desk never ran: {messages}");
    assert_eq!(not_found(&server, "v2").await, [json!("transfer_to_admin_desk")]);
    assert_eq!(server.tools.total_calls(), 0);
}
