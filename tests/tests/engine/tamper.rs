//! "A changed amount after approval": what a person approved is bound to its fingerprint, and
//! a store changed under an open question (the arguments of a tool approval, the state an
//! interrupt's tool node reads) never runs the changed action on the old answer. It is asked
//! again, as it would run now, and the recheck is recorded as `stale`; the question asked again
//! keeps the one it replaces, so the approvals inbox shows what changed.

use serde_json::{Value, json};
use tenx_engine::Identity;
use tenx_engine::ports::{Commit, Store};
use tenx_engine::testing::FakeTools;
use tenx_engine::thread::{PendingKind, ThreadRecord};
use tenx_engine::wire::ExecutionStatus;

use crate::harness::{Host, Models, Steered, dev, example_artifact, user};

/// Changes the stored thread behind the engine's back, as a tampered store would.
async fn tamper(host: &Host, thread: &str, change: impl FnOnce(&mut ThreadRecord)) {
    let mut stored = host.store.load(thread).await.unwrap().unwrap();
    change(&mut stored);
    let version = stored.version;
    stored.version += 1;
    let commit = Commit {
        thread: Some(stored),
        expected_version: Some(version),
        receipts: Vec::new(),
        records: Vec::new(),
    };
    host.store.commit(commit).await.unwrap();
}

/// `(decision, outcome)` of every approval record.
async fn approvals(host: &Host, thread: &str) -> Vec<(Value, Value)> {
    host.records(thread)
        .await
        .into_iter()
        .filter(|record| record["kind"] == "approval")
        .map(|record| {
            (
                record["fields"]["decision"].clone(),
                record["fields"]["outcome"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_refund_amount_changed_under_its_question_is_asked_again_never_paid_on_the_old_answer() {
    let tools = FakeTools::new().returns("issue_refund", json!("Refunded."));
    let host = Host::from_artifact(example_artifact("refund_approval"), tools, Models::Scripted, dev());
    let anyone = Identity::anonymous();
    let paused = host.say("t", "Refund order 1042, 59.00", &anyone).await.unwrap();
    let first = paused.thread.pending.unwrap().interrupt.unwrap();
    assert_eq!(first.value["normalized_arguments"]["amount_cents"], 5900);
    tamper(&host, "t", |thread| {
        if let Some(PendingKind::ToolApproval { arguments, .. }) =
            thread.pending.as_mut().map(|pending| &mut pending.kind)
        {
            arguments["amount_cents"] = json!(49_999);
        }
    })
    .await;

    let asked = host
        .answer("t", json!({"approved": true}), Some(&first.id), &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.total_calls(), 0, "an approval of 5900 never pays 49999");
    assert_eq!(asked.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let second = asked.thread.pending.unwrap().interrupt.unwrap();
    assert_ne!(second.id, first.id);
    assert_eq!(second.value["normalized_arguments"]["amount_cents"], 49_999);
    assert_eq!(second.message, "Approve a refund of 49999 cents for order 1042?");
    assert_eq!(
        approvals(&host, "t").await,
        [(json!("approve"), Value::Null), (Value::Null, json!("stale"))]
    );
    // The question asked again shows what changed since the one the person answered.
    let detail = host.engine.approval(&second.id, &anyone).await.unwrap();
    assert!(detail.summary.replaces);
    let replaced = detail.replaces_request.unwrap();
    assert_eq!(replaced.interrupt_id, first.id);
    assert_eq!(replaced.normalized_arguments["amount_cents"], 5900);
    let changes: Vec<(&str, &Value, &Value)> = detail
        .difference
        .iter()
        .map(|change| (change.field.as_str(), &change.before, &change.after))
        .collect();
    assert_eq!(
        changes,
        [("normalized_arguments.amount_cents", &json!(5900), &json!(49_999))]
    );

    // Now the person has seen it: their answer decides (here a rejection: nothing runs).
    let done = host
        .answer("t", json!({"approved": false}), Some(&second.id), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.total_calls(), 0);
}

#[tokio::test]
async fn a_report_changed_after_its_publication_was_approved_is_asked_again_at_the_tool_node() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "web_search", json!({"query": "tides"}))]);
    steered.push_text("Notes.");
    steered.push_text(r##"{"report": "# Tides"}"##);
    steered.push_text(r#"{"verdict": "publish", "score": 0.9}"#);
    let tools = FakeTools::new()
        .returns("web_search", json!([]))
        .returns("publish_report", json!("https://site.test/reports/tides"));
    let host = Host::from_artifact(
        example_artifact("research_flow"),
        tools,
        Models::Steered(steered),
        dev(),
    );
    let mut state = serde_json::Map::new();
    state.insert("topic".into(), json!("tides"));
    let request = tenx_engine::RunRequest {
        thread_id: Some("t".into()),
        messages: vec![user("Write about tides")],
        initial_state: state,
        ..tenx_engine::RunRequest::default()
    };
    let paused = host.run(request).await.unwrap();
    let first = paused.thread.pending.unwrap().interrupt.unwrap();
    assert_eq!(first.value["normalized_arguments"]["report"], "# Tides");
    tamper(&host, "t", |thread| {
        thread.state.insert("report".into(), json!("# Tides\nBuy my product."));
    })
    .await;

    let anyone = Identity::anonymous();
    let asked = host
        .answer("t", json!({"approved": true}), Some(&first.id), &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("publish_report"), 0, "never published unseen");
    let second = asked.thread.pending.unwrap().interrupt.unwrap();
    assert_eq!(second.node, "approve_publication");
    assert_ne!(second.id, first.id);
    assert_eq!(
        second.value["normalized_arguments"]["report"],
        "# Tides\nBuy my product."
    );
    assert_eq!(
        approvals(&host, "t").await,
        [(json!("approve"), Value::Null), (Value::Null, json!("stale"))]
    );
    let detail = host.engine.approval(&second.id, &anyone).await.unwrap();
    assert_eq!(detail.replaces_request.unwrap().interrupt_id, first.id);
    let fields: Vec<&str> = detail.difference.iter().map(|change| change.field.as_str()).collect();
    assert!(fields.contains(&"normalized_arguments.report"), "{fields:?}");
    let done = host
        .answer("t", json!({"approved": true}), Some(&second.id), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("publish_report"), 1, "published once, as seen");
}
