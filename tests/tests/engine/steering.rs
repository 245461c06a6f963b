//! Answers that steer: a route out of an interrupt runs after every valid answer; a reviewer's
//! note reaches the model or ends the run beside `on_reject`; a person can answer a call in the
//! tool's place (`respond`), typed by the tool's result.

use serde_json::{Map, json};
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{ErrorCode, Identity, RunRequest};

use crate::harness::{Host, Models, Steered, assistant_texts, dev, tool_outputs, user};

fn fixture(path: &str) -> String {
    let text = std::fs::read_to_string(tenx_tests::repo_root().join("tests/fixtures").join(path)).unwrap();
    text.lines()
        .skip_while(|line| line.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn blog(steered: &Steered) -> Host {
    let tools = FakeTools::new().returns("publish_post", json!("https://blog.test/spring"));
    Host::new(
        &fixture("policy/answer_steers_the_run.tenx"),
        tools,
        Models::Steered(steered.clone()),
        dev(),
    )
}

fn start() -> RunRequest {
    let mut state = Map::new();
    state.insert("title".into(), json!("Spring"));
    RunRequest {
        thread_id: Some("t1".into()),
        messages: vec![user("write it")],
        initial_state: state,
        ..RunRequest::default()
    }
}

#[tokio::test]
async fn a_rejecting_answer_steers_back_to_the_writer_with_the_note_and_never_publishes() {
    let steered = Steered::default();
    steered.push_text(r#"{"draft": "v1"}"#);
    steered.push_text(r#"{"draft": "v2"}"#);
    let host = blog(&steered);
    let anyone = Identity::anonymous();
    host.run(start()).await.unwrap();
    let revised = host
        .answer("t1", json!({"verdict": "revise", "note": "shorter"}), None, &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("publish_post"), 0);
    assert_eq!(revised.thread.state["note"], "shorter");
    assert_eq!(revised.thread.state["draft"], "v2");
    assert_eq!(
        revised
            .thread
            .pending
            .as_ref()
            .unwrap()
            .interrupt
            .as_ref()
            .unwrap()
            .node,
        "review",
        "asked again"
    );
    let done = host
        .answer("t1", json!({"verdict": "publish"}), None, &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let calls = host.tools.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, json!({"title": "Spring", "draft": "v2"}));
}

#[tokio::test]
async fn a_drop_answer_ends_the_run_through_the_route() {
    let steered = Steered::default();
    steered.push_text(r#"{"draft": "v1"}"#);
    let host = blog(&steered);
    host.run(start()).await.unwrap();
    let done = host
        .answer("t1", json!({"verdict": "drop"}), None, &Identity::anonymous())
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.total_calls(), 0);
}

fn orders(steered: &Steered) -> Host {
    let tools = FakeTools::new()
        .returns("ship_order", json!("shipped"))
        .returns("close_ticket", json!("closed"));
    Host::new(
        &fixture("decisions/respond_and_feedback.tenx"),
        tools,
        Models::Steered(steered.clone()),
        dev(),
    )
}

fn ticket() -> RunRequest {
    let mut state = Map::new();
    state.insert("ticket".into(), json!("T-9"));
    RunRequest {
        thread_id: Some("t1".into()),
        messages: vec![user("ship 42")],
        initial_state: state,
        ..RunRequest::default()
    }
}

#[tokio::test]
async fn a_person_can_answer_in_the_tools_place_typed_by_its_result() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "ship_order", json!({"order_id": "42", "carrier": "dhl"}))]);
    steered.push_text("Done.");
    let host = orders(&steered);
    let anyone = Identity::anonymous();
    host.run(ticket()).await.unwrap();
    let before = host.snapshot("t1").await;
    let wrong = host
        .answer("t1", json!({"verdict": "answer", "tool_result": 7}), None, &anyone)
        .await
        .unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InterruptAnswerInvalid);
    assert_eq!(host.snapshot("t1").await, before);
    let out = host
        .answer(
            "t1",
            json!({"verdict": "answer", "tool_result": "already shipped by hand"}),
            None,
            &anyone,
        )
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("ship_order"), 0, "the tool did not run");
    assert_eq!(tool_outputs(&out.messages)[0], json!("already shipped by hand"));
    let records = host.records("t1").await;
    assert!(
        records.iter().any(|record| record["fields"]["outcome"] == "responded"),
        "{records:#?}"
    );
}

#[tokio::test]
async fn a_rejection_carries_the_reviewers_note_to_the_model_and_to_the_runs_end() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "ship_order", json!({"order_id": "42", "carrier": "ups"}))]);
    steered.push_text("I will not ship it.");
    let host = orders(&steered);
    let anyone = Identity::anonymous();
    host.run(ticket()).await.unwrap();
    let out = host
        .answer("t1", json!({"verdict": "hold", "note": "use dhl"}), None, &anyone)
        .await
        .unwrap();
    assert_eq!(
        tool_outputs(&out.messages)[0],
        json!("The order was not shipped.\n\nReviewer's note: use dhl")
    );
    // The run went on to the interrupt node; its rejection ends the run with the comment.
    let done = host
        .answer(
            "t1",
            json!({"close": false, "comment": "customer still waiting"}),
            None,
            &anyone,
        )
        .await
        .unwrap();
    assert_eq!(
        assistant_texts(&done.messages).last().unwrap(),
        "The action was not approved.\n\nReviewer's note: customer still waiting"
    );
    assert_eq!(host.tools.total_calls(), 0);
}
