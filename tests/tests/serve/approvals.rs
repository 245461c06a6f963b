//! The approval walk-through of seed 003 over HTTP, and every row of its error table, exactly as
//! written there (status and message); each refusal records nothing.

use serde_json::json;
use tenx_engine::ports::Store;

use super::harness::{Server, user};

const REFUND: &str = "Refund order 1042, 59.00";

/// Starts a refund on `thread` and returns the open interrupt's id.
async fn pause(server: &Server, thread: &str) -> String {
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user(REFUND)], "config": {"thread_id": thread}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(meta["status"], "interrupted_before", "{meta}");
    let interrupt = &meta["interrupt_data"]["interrupt"];
    assert_eq!(interrupt["reason"], "tool_approval");
    assert_eq!(
        interrupt["value"]["normalized_arguments"],
        json!({"amount_cents": 5900, "order_id": "1042"})
    );
    let id = interrupt["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("int_") && id.len() == 36, "{id}");
    id
}

#[tokio::test]
async fn a_refund_pauses_and_the_answer_bound_to_its_id_runs_it_once() {
    let server = Server::refunds().await;
    let id = pause(&server, "r1").await;
    assert_eq!(
        server.tools.calls_of("issue_refund"),
        0,
        "nothing runs before the answer"
    );
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": true}, "interrupt_id": id, "config": {"thread_id": "r1"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.tools.calls_of("issue_refund"), 1);
    let last = body["data"]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["content"][0]["text"], "Refunded 5900 cents for order 1042");
}

#[tokio::test]
async fn every_row_of_the_seed_error_table_comes_back_exactly_and_records_nothing() {
    let server = Server::refunds().await;
    let id = pause(&server, "r2").await;
    let before = server.snapshot("r2").await;

    // `interrupt_id` is not the open interrupt → 409.
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": true}, "interrupt_id": "int_nope", "config": {"thread_id": "r2"}}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "INTERRUPT_001");
    assert_eq!(
        body["error"]["message"],
        format!("interrupt_id 'int_nope' does not match the open interrupt '{id}'")
    );
    assert_eq!(server.snapshot("r2").await, before);

    // The answer breaks the schema → 422.
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": "yes"}, "config": {"thread_id": "r2"}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["code"], "INTERRUPT_002");
    assert_eq!(
        body["error"]["message"],
        format!(
            "Resume value does not match the response schema of interrupt '{id}': $.approved: expected boolean, got str"
        )
    );
    assert_eq!(server.snapshot("r2").await, before);

    // A new message to the paused thread → 422.
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello?")], "config": {"thread_id": "r2"}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["code"], "INTERRUPT_004");
    assert_eq!(
        body["error"]["message"],
        format!("Thread is paused at interrupt '{id}' in node 'support'. Resume it with {{'resume': value}}.")
    );
    assert_eq!(server.snapshot("r2").await, before);

    // Another run holds the thread for longer than the wait → 409 `thread is busy`.
    let lease = server.store.lock("r2").await.unwrap();
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": true}, "config": {"thread_id": "r2"}}),
        )
        .await;
    drop(lease);
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "THREAD_BUSY");
    assert_eq!(body["error"]["message"], "thread is busy");
    assert_eq!(server.snapshot("r2").await, before);
    assert_eq!(server.tools.calls_of("issue_refund"), 0);

    // The corrected answer still works, once; a repeated resume is 409.
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": false}, "interrupt_id": id, "config": {"thread_id": "r2"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        server.tools.calls_of("issue_refund"),
        0,
        "rejected: the tool never runs"
    );
    let after = server.snapshot("r2").await;
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": {"approved": true}, "interrupt_id": id, "config": {"thread_id": "r2"}}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "INTERRUPT_003");
    assert_eq!(
        body["error"]["message"],
        "Nothing to resume: this thread is not paused at an interrupt"
    );
    assert_eq!(server.snapshot("r2").await, after);
}

#[tokio::test]
async fn a_resume_on_a_thread_that_never_existed_is_nothing_to_resume() {
    let server = Server::refunds().await;
    let (status, body) = server.post("/v1/graph/invoke", json!({"resume": 1})).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "INTERRUPT_003");
    let (status, _) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": 1, "config": {"thread_id": "ghost"}}),
        )
        .await;
    assert_eq!(status, 409);
    assert!(server.store.load("ghost").await.unwrap().is_none());
}

#[tokio::test]
async fn a_cancel_is_never_checked_against_the_schema_and_runs_nothing() {
    let server = Server::refunds().await;
    pause(&server, "r3").await;
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"resume": null, "config": {"thread_id": "r3"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.tools.calls_of("issue_refund"), 0);
    let text = body["data"]["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"].clone();
    assert!(text.as_str().is_some(), "{body}");
}

#[tokio::test]
async fn fifty_concurrent_resumes_over_http_apply_exactly_once() {
    let server = Server::refunds().await;
    let id = pause(&server, "r4").await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let server = server.as_user("");
        let id = id.clone();
        tasks.push(tokio::spawn(async move {
            server
                .post(
                    "/v1/graph/invoke",
                    json!({"resume": {"approved": true}, "interrupt_id": id, "config": {"thread_id": "r4"}}),
                )
                .await
                .0
        }));
    }
    let mut statuses = Vec::new();
    for task in tasks {
        statuses.push(task.await.unwrap());
    }
    assert_eq!(
        statuses.iter().filter(|status| **status == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|status| matches!(status, 200 | 409)),
        "{statuses:?}"
    );
    assert_eq!(server.tools.calls_of("issue_refund"), 1);
}
