//! Seed 000, "A resume answers one specific question", and the rest of the answer contract over
//! HTTP: a stale `interrupt_id` after a new pause (D1), a repeated resume after success (D2),
//! schema messages in the seed's short type names (D3), a cancel recorded as `cancelled` (the
//! clarification), fingerprints `sha256:<64 hex>`, a late answer after `expires`
//! (`INTERRUPT_EXPIRED`, the thread showing `expired`), and a resume under another artifact
//! (D16, `GRAPH_VERSION_MISMATCH`). Every refusal records nothing.

use std::sync::Arc;

use serde_json::{Value, json};
use tenx_engine::ports::Store;
use tenx_engine::testing::ManualClock;

use super::super::harness::{Server, Setup, compile_named, refund_example, refund_tools, user};
use super::{interrupt, refused};

const REFUND: &str = "Refund order 1042, 59.00";

/// Starts a refund on `thread`; returns the open interrupt.
async fn pause(server: &Server, thread: &str) -> Value {
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user(REFUND)], "config": {"thread_id": thread}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    interrupt(&body)
}

/// Answers the open question of `thread` with `value`, bound to `id` when given.
async fn answer(server: &Server, thread: &str, value: Value, id: Option<&Value>) -> (u16, Value) {
    let mut body = json!({"resume": value, "config": {"thread_id": thread}, "response_granularity": "full"});
    if let Some(id) = id {
        body["interrupt_id"] = id.clone();
    }
    server.post("/v1/graph/invoke", body).await
}

#[tokio::test]
async fn an_old_interrupt_id_after_a_new_pause_and_a_repeat_after_success_are_409() {
    let server = Server::refunds().await;
    let first = pause(&server, "q1").await;
    let (status, body) = answer(&server, "q1", json!({"approved": true}), Some(&first["id"])).await;
    assert_eq!(status, 200, "{body}");
    let done = server.snapshot("q1").await;
    // Retried after the first was consumed (a second tab, a client retry): nothing to resume.
    refused(
        &answer(&server, "q1", json!({"approved": true}), Some(&first["id"])).await,
        409,
        "INTERRUPT_003",
        Some("Nothing to resume: this thread is not paused at an interrupt"),
    );
    refused(
        &answer(&server, "q1", json!({"approved": true}), None).await,
        409,
        "INTERRUPT_003",
        None,
    );
    assert_eq!(server.snapshot("q1").await, done);

    // A new request pauses the thread again: the old id answers a question no longer open.
    let second = pause(&server, "q1").await;
    assert_ne!(second["id"], first["id"]);
    let before = server.snapshot("q1").await;
    let message = format!(
        "interrupt_id '{}' does not match the open interrupt '{}'",
        first["id"].as_str().unwrap(),
        second["id"].as_str().unwrap()
    );
    refused(
        &answer(&server, "q1", json!({"approved": true}), Some(&first["id"])).await,
        409,
        "INTERRUPT_001",
        Some(&message),
    );
    assert_eq!(server.snapshot("q1").await, before, "a late yes approves nothing");
    let (status, body) = answer(&server, "q1", json!({"approved": false}), Some(&second["id"])).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn schema_messages_name_the_path_the_type_and_the_seeds_short_type_names() {
    let server = Server::refunds().await;
    let open = pause(&server, "q2").await;
    let id = open["id"].as_str().unwrap();
    let before = server.snapshot("q2").await;
    let cases = [
        (json!({"approved": "yes"}), "$.approved: expected boolean, got str"),
        (json!({"approved": 1}), "$.approved: expected boolean, got int"),
        (json!({"approved": 1.5}), "$.approved: expected boolean, got float"),
        (json!({"approved": [true]}), "$.approved: expected boolean, got list"),
        (json!({"approved": {}}), "$.approved: expected boolean, got dict"),
        (json!({"approved": null}), "$.approved: expected boolean, got null"),
        (json!("yes"), "$: expected object, got str"),
    ];
    for (value, what) in cases {
        let message = format!("Resume value does not match the response schema of interrupt '{id}': {what}");
        refused(
            &answer(&server, "q2", value.clone(), None).await,
            422,
            "INTERRUPT_002",
            Some(&message),
        );
        assert_eq!(server.snapshot("q2").await, before, "{value}");
    }
    let fingerprint = open["value"]["approval_fingerprint"].as_str().unwrap();
    let hex = fingerprint.strip_prefix("sha256:").unwrap();
    assert!(
        hex.len() == 64 && hex.chars().all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
        "{fingerprint}"
    );
    assert_eq!(open["value"]["policy_revision"], server.engine.artifact_id());
}

#[tokio::test]
async fn a_cancel_runs_nothing_returns_on_reject_and_is_recorded_as_cancelled() {
    let server = Server::refunds().await;
    let open = pause(&server, "q3").await;
    let (status, body) = answer(&server, "q3", Value::Null, Some(&open["id"])).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.tools.calls_of("issue_refund"), 0);
    assert_eq!(
        super::tool_outputs(&body["data"]["messages"]),
        [json!("Refund declined.")]
    );
    let outcomes: Vec<(Value, Value)> = server
        .store
        .records("q3")
        .await
        .unwrap()
        .into_iter()
        .filter(|record| record.kind == "approval")
        .map(|record| (record.fields["decision"].clone(), record.fields["outcome"].clone()))
        .collect();
    assert_eq!(outcomes, [(json!("cancel"), json!("cancelled"))]);
}

#[tokio::test]
async fn a_late_answer_is_409_interrupt_expired_and_the_thread_shows_expired() {
    const DAY_MS: u64 = 24 * 3600 * 1000;
    let clock = Arc::new(ManualClock::new(1_796_083_200_000));
    let setup = Setup {
        clock: Some(clock.clone()),
        ..Setup::default()
    };
    let server = Server::start_with(refund_example(), refund_tools(), Default::default(), setup).await;
    let open = pause(&server, "q4").await;
    assert_eq!(
        open["value"]["expires_at"],
        json!(1_796_083_200_000u64 + DAY_MS),
        "{open}"
    );
    clock.advance(DAY_MS - 1);
    let (status, _) = server.get("/v1/threads/q4/state").await;
    assert_eq!(status, 200);
    let stored = server.store.load("q4").await.unwrap().unwrap();
    assert!(stored.pending.is_some(), "still open just before");
    clock.advance(1);
    let message = format!(
        "interrupt '{}' expired; a timeout is never consent",
        open["id"].as_str().unwrap()
    );
    refused(
        &answer(&server, "q4", json!({"approved": true}), Some(&open["id"])).await,
        409,
        "INTERRUPT_EXPIRED",
        Some(&message),
    );
    assert_eq!(server.tools.calls_of("issue_refund"), 0, "a timeout is never consent");
    let (status, body) = server.get("/v1/threads/q4/state").await;
    assert_eq!(status, 200, "{body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(meta["status"], "completed", "{meta}");
    assert_eq!(meta["internal_data"]["outcome"], "expired", "{meta}");
    assert_eq!(
        super::tool_outputs(&body["data"]["state"]["context"]),
        [json!("Refund declined.")]
    );

    // Read after the expiry, before any answer: the read shows it expired; the answer is late.
    let open = pause(&server, "q5").await;
    clock.advance(DAY_MS);
    let (_, body) = server.get("/v1/threads/q5/state").await;
    assert_eq!(
        body["data"]["state"]["execution_meta"]["internal_data"]["outcome"],
        "expired"
    );
    let late = answer(&server, "q5", json!({"approved": true}), Some(&open["id"])).await;
    assert!(matches!(late.0, 409), "{late:?}");
    assert_eq!(server.tools.calls_of("issue_refund"), 0);
}

#[tokio::test]
async fn a_thread_paused_under_one_artifact_is_not_resumed_by_another() {
    let store = Arc::new(tenx_engine::MemoryStore::new());
    let setup = || Setup {
        store: Some(store.clone()),
        ..Setup::default()
    };
    let first = Server::start_with(refund_example(), refund_tools(), Default::default(), setup()).await;
    let path = tenx_tests::repo_root().join("examples/refund_approval/main.tenx");
    let changed = std::fs::read_to_string(path)
        .unwrap()
        .replace("Refund orders when asked.", "Refund orders on request.");
    let changed = compile_named("examples/refund_approval/main.tenx", &changed);
    let second = Server::start_with(changed, refund_tools(), Default::default(), setup()).await;
    assert_ne!(first.engine.artifact_id(), second.engine.artifact_id());
    let (_, graph) = second.get("/v1/graph").await;
    assert_eq!(graph["data"]["info"]["artifact_id"], second.engine.artifact_id());

    let open = pause(&first, "q6").await;
    let before = first.snapshot("q6").await;
    let yes = json!({"approved": true});
    let body = refused(
        &answer(&second, "q6", yes.clone(), Some(&open["id"])).await,
        409,
        "GRAPH_VERSION_MISMATCH",
        None,
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(first.engine.artifact_id()),
        "{body}"
    );
    assert_eq!(second.snapshot("q6").await, before, "records nothing");
    assert_eq!(second.tools.calls_of("issue_refund"), 0);
    let (status, body) = answer(&first, "q6", yes, Some(&open["id"])).await;
    assert_eq!(status, 200, "the artifact that asked still takes the answer: {body}");
    assert_eq!(first.tools.calls_of("issue_refund"), 1);

    // A new message to the finished thread starts a new run under the current artifact. (The
    // test servers count their run ids from one, so the second server first runs a thread of
    // its own: a run id of the first server's would read as the scripted model's same run.)
    let (status, _) = second
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "own"}}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = second
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello")], "config": {"thread_id": "q6"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let stored = store.load("q6").await.unwrap().unwrap();
    assert_eq!(stored.artifact_id, second.engine.artifact_id());
}
