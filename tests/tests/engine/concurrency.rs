//! One run per thread: many answers to one question at once apply exactly once.

use std::sync::Arc;

use serde_json::json;
use tenx_engine::testing::FakeTools;
use tenx_engine::{EngineOptions, ErrorCode, Identity, ResumeAnswer, RunRequest};

use crate::harness::{Host, Models, example_artifact};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_answers_to_one_question_apply_exactly_once() {
    let tools = FakeTools::new().returns("issue_refund", json!("refunded"));
    let options = EngineOptions {
        busy_wait: std::time::Duration::from_secs(30),
        ..EngineOptions::default()
    };
    let host = Arc::new(Host::from_artifact(
        example_artifact("refund_approval"),
        tools,
        Models::Scripted,
        options,
    ));
    host.say("t1", "Refund order 1042, 59.00", &Identity::anonymous())
        .await
        .unwrap();
    let open = host.open_interrupt("t1").await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let host = host.clone();
        let open = open.clone();
        tasks.push(tokio::spawn(async move {
            host.run(RunRequest {
                thread_id: Some("t1".into()),
                resume: Some(ResumeAnswer {
                    value: json!({"approved": true}),
                    interrupt_id: Some(open),
                    note: None,
                }),
                ..RunRequest::default()
            })
            .await
        }));
    }
    let mut applied = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => applied += 1,
            Err(error) => assert!(
                matches!(error.code, ErrorCode::NothingToResume | ErrorCode::ThreadBusy),
                "unexpected refusal {error:?}"
            ),
        }
    }
    assert_eq!(applied, 1, "exactly one answer applies");
    assert_eq!(host.tools.calls_of("issue_refund"), 1, "the refund ran once");
    let approvals = host
        .records("t1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "approval")
        .count();
    assert_eq!(approvals, 1, "one decision recorded");
}

#[tokio::test]
async fn a_request_that_waits_too_long_for_a_busy_thread_is_refused() {
    use tenx_engine::ports::Store;
    let options = EngineOptions {
        busy_wait: std::time::Duration::from_millis(50),
        ..EngineOptions::default()
    };
    let host = Host::from_artifact(
        example_artifact("refund_approval"),
        FakeTools::new(),
        Models::Scripted,
        options,
    );
    let held = host.store.lock("t1").await.unwrap();
    let refused = host.say("t1", "hello", &Identity::anonymous()).await.unwrap_err();
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (ErrorCode::ThreadBusy, "thread is busy")
    );
    assert!(host.store.load("t1").await.unwrap().is_none(), "nothing was recorded");
    drop(held);
    host.say("t1", "hello", &Identity::anonymous()).await.unwrap();
}
