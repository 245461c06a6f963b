//! Remote tools (the contract's run-time semantics): while a remote call waits, a new message is
//! 422 `REMOTE_TOOL_PENDING` naming the call and a resume has nothing to resume; only its result
//! continues the run, once, valid against the tool's `result` schema. A wrong call id is
//! `TOOL_RESULT_UNEXPECTED`, two results for one call `TOOL_RESULT_DUPLICATE`, whether they come
//! in one request or after the first was accepted. The server never runs the tool itself.

use serde_json::json;

use super::super::harness::user;
use super::super::steered::Steered;
use super::{refused, results, send, shop, tool_outputs};

#[tokio::test]
async fn a_waiting_remote_call_takes_only_its_own_valid_result_once() {
    let steered = Steered::default();
    steered.calls(&[("loc1", "user_location", json!({}))]);
    steered.text("You are in Paris.");
    let server = shop(&steered).await;
    let (status, body) = send(&server, "r1", json!([user("Where am I?")])).await;
    assert_eq!(status, 200, "{body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(meta["status"], "interrupted_after", "{meta}");
    assert_eq!(meta["interrupt_reason"], "remote_tool_call");
    let placeholder = body["data"]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(placeholder["content"][0]["type"], "remote_tool_call", "{placeholder}");
    assert_eq!(placeholder["content"][0]["id"], "loc1");
    let before = server.snapshot("r1").await;

    let cases = [
        (
            json!([user("hello?")]),
            "REMOTE_TOOL_PENDING",
            "remote tool call 'loc1' is waiting for its result; send a tool message with a tool_result for it",
        ),
        (
            results(&[("loc2", json!({"latitude": 1, "longitude": 2}))]),
            "TOOL_RESULT_UNEXPECTED",
            "No remote tool call 'loc2' is waiting for a result",
        ),
        (
            results(&[
                ("loc1", json!({"latitude": 1, "longitude": 2})),
                ("loc1", json!({"latitude": 3, "longitude": 4})),
            ]),
            "TOOL_RESULT_DUPLICATE",
            "Each tool call can be answered only once",
        ),
        (
            results(&[("loc1", json!({"latitude": 500, "longitude": 2}))]),
            "TOOL_RESULT_UNEXPECTED",
            "the result for remote tool call 'loc1' does not match the result type of `user_location`: $.latitude: expected a number <= 90",
        ),
    ];
    for (messages, code, message) in cases {
        let answer = send(&server, "r1", messages.clone()).await;
        refused(&answer, 422, code, Some(message));
        assert_eq!(server.snapshot("r1").await, before, "{messages}: records nothing");
    }
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"latitude": 1}, "config": {"thread_id": "r1"}}),
        )
        .await;
    refused(&(status, body), 409, "INTERRUPT_003", None);
    assert_eq!(server.snapshot("r1").await, before);

    let answer = results(&[("loc1", json!({"latitude": 48.8, "longitude": 2.3}))]);
    let (status, body) = send(&server, "r1", answer.clone()).await;
    assert_eq!(status, 200, "{body}");
    let texts: Vec<&str> = body["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .filter_map(|message| message["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts.last(), Some(&"You are in Paris."), "{body}");
    assert_eq!(
        tool_outputs(&body["data"]["state"]["context"]),
        [json!({"latitude": 48.8, "longitude": 2.3})]
    );
    assert_eq!(server.tools.total_calls(), 0, "the server never ran the remote tool");

    // The same result again: a second answer to a call already answered.
    let after = server.snapshot("r1").await;
    refused(
        &send(&server, "r1", answer).await,
        422,
        "TOOL_RESULT_DUPLICATE",
        Some("Each tool call can be answered only once"),
    );
    assert_eq!(server.snapshot("r1").await, after);
}
