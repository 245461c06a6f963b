//! Approvals over the refund example: the run pauses before the refund, the package binds the
//! action, only a valid answer from someone allowed is recorded, the refund runs once.

use serde_json::{Value, json};
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{ErrorCode, Identity};

use tenx_engine::{ResumeAnswer, RunRequest};

use crate::harness::{
    Host, Models, assistant_texts, auth, compile_patched, dev, example, example_artifact, person, tool_outputs, user,
};

const ASK: &str = "Refund order 1042, 59.00";

fn refunds(options: tenx_engine::EngineOptions) -> Host {
    let tools = FakeTools::new().returns("issue_refund", json!("Refunded 5900 cents on order 1042."));
    Host::from_artifact(example_artifact("refund_approval"), tools, Models::Scripted, options)
}

#[tokio::test]
async fn a_refund_waits_for_its_approval_and_then_runs_once() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    let paused = host.say("t1", ASK, &anyone).await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    assert_eq!(host.tools.total_calls(), 0, "nothing runs before the approval");
    let interrupt = paused.thread.pending.as_ref().unwrap().interrupt.clone().unwrap();
    assert!(
        interrupt.id.starts_with("int_") && interrupt.id.len() == 36,
        "{}",
        interrupt.id
    );
    assert_eq!(interrupt.message, "Approve a refund of 5900 cents for order 1042?");
    assert_eq!(interrupt.reason, "tool_approval");
    let package = &interrupt.value;
    assert_eq!(package["action"], "issue_refund");
    assert_eq!(
        package["normalized_arguments"],
        json!({"order_id": "1042", "amount_cents": 5900})
    );
    assert_eq!(package["target"], "order 1042");
    assert_eq!(package["risk"], "high");
    assert_eq!(package["on_reject"], "Refund declined.");
    assert_eq!(
        package["evidence"],
        json!([{"param": "order_id", "value": "1042"}, {"literal": "refund-policy-7"}])
    );
    assert!(package["approval_fingerprint"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(package["policy_revision"], host.engine.artifact_id());

    let done = host
        .answer("t1", json!({"approved": true}), Some(&interrupt.id), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
    assert_eq!(
        assistant_texts(&done.messages),
        vec!["Refunded 5900 cents on order 1042.".to_owned()]
    );

    let again = host
        .answer("t1", json!({"approved": true}), None, &anyone)
        .await
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::NothingToResume);
    assert_eq!(
        again.message,
        "Nothing to resume: this thread is not paused at an interrupt"
    );
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
}

#[tokio::test]
async fn a_rejection_returns_on_reject_to_the_model_and_runs_nothing() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    host.say("t1", ASK, &anyone).await.unwrap();
    let done = host
        .answer("t1", json!({"approved": false}), None, &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.total_calls(), 0);
    assert_eq!(tool_outputs(&done.messages), vec![json!("Refund declined.")]);
    assert_eq!(assistant_texts(&done.messages), vec!["Refund declined.".to_owned()]);
    let records = host.records("t1").await;
    assert!(
        records.iter().any(|record| record["kind"] == "approval"
            && record["fields"]["decision"] == "reject"
            && record["fields"]["outcome"] == "rejected"),
        "{records:#?}"
    );
}

#[tokio::test]
async fn refused_answers_record_nothing() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    host.say("t1", ASK, &anyone).await.unwrap();
    let open = host.open_interrupt("t1").await;
    let before = host.snapshot("t1").await;

    let wrong = host
        .answer(
            "t1",
            json!({"approved": true}),
            Some("int_00000000000000000000000000000000"),
            &anyone,
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InterruptMismatch);
    assert_eq!(
        wrong.message,
        format!("interrupt_id 'int_00000000000000000000000000000000' does not match the open interrupt '{open}'")
    );

    let invalid = host
        .answer("t1", json!({"approved": "yes"}), Some(&open), &anyone)
        .await
        .unwrap_err();
    assert_eq!(invalid.code, ErrorCode::InterruptAnswerInvalid);
    assert_eq!(
        invalid.message,
        format!(
            "Resume value does not match the response schema of interrupt '{open}': $.approved: expected boolean, got str"
        )
    );

    let message = host.say("t1", "hello?", &anyone).await.unwrap_err();
    assert_eq!(message.code, ErrorCode::ThreadPaused);
    assert_eq!(
        message.message,
        format!("Thread is paused at interrupt '{open}' in node 'support'. Resume it with {{'resume': value}}.")
    );

    assert_eq!(host.snapshot("t1").await, before, "a refused request changes nothing");
    assert_eq!(host.tools.total_calls(), 0);
}

#[tokio::test]
async fn an_expired_question_is_never_consent() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    host.say("t1", ASK, &anyone).await.unwrap();
    host.clock.advance(24 * 3600 * 1000);
    let late = host
        .answer("t1", json!({"approved": true}), None, &anyone)
        .await
        .unwrap_err();
    assert_eq!(late.code, ErrorCode::InterruptExpired);
    assert_eq!(host.tools.total_calls(), 0);
    let thread = host.engine.thread("t1", &anyone).await.unwrap();
    assert!(thread.pending.is_none());
    assert_eq!(thread.execution.internal_data["outcome"], "expired");
    assert_eq!(tool_outputs(&thread.context), vec![json!("Refund declined.")]);
    let records = host.records("t1").await;
    assert!(
        records.iter().any(|record| record["fields"]["outcome"] == "expired"),
        "{records:#?}"
    );
}

#[tokio::test]
async fn reading_a_thread_shows_an_expired_question_as_expired() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    host.say("t1", ASK, &anyone).await.unwrap();
    host.clock.advance(24 * 3600 * 1000 + 1);
    let thread = host.engine.thread("t1", &anyone).await.unwrap();
    assert!(thread.pending.is_none());
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    let late = host
        .answer("t1", json!({"approved": true}), None, &anyone)
        .await
        .unwrap_err();
    assert_eq!(late.code, ErrorCode::NothingToResume);
    assert_eq!(host.tools.total_calls(), 0);
}

#[tokio::test]
async fn only_a_listed_approver_other_than_the_requester_may_answer() {
    let host = refunds(auth());
    let alice = person("alice", &["support_lead"]);
    host.say("t1", ASK, &alice).await.unwrap();
    let before = host.snapshot("t1").await;

    let own = host
        .answer("t1", json!({"approved": true}), None, &alice)
        .await
        .unwrap_err();
    assert_eq!(
        (own.code, own.details["rule"].clone()),
        (ErrorCode::ApproverRefused, json!("separate_duties"))
    );
    let stranger = host
        .answer("t1", json!({"approved": true}), None, &person("mallory", &["intern"]))
        .await
        .unwrap_err();
    assert_eq!(
        (stranger.code, stranger.details["rule"].clone()),
        (ErrorCode::ApproverRefused, json!("approvers"))
    );
    let nobody = host
        .answer("t1", json!({"approved": true}), None, &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(nobody.code, ErrorCode::ApproverRefused);
    assert_eq!(host.snapshot("t1").await, before);

    let lead = person("bob", &["support_lead"]);
    host.answer("t1", json!({"approved": true}), None, &lead).await.unwrap();
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
    let records = host.records("t1").await;
    let decision = records.iter().find(|record| record["kind"] == "approval").unwrap();
    assert_eq!(decision["fields"]["requested_by"], "alice");
    assert_eq!(decision["fields"]["answered_by"], "bob");

    // Another user's thread: nobody else may start runs on it or read it.
    let eve = person("eve", &[]);
    let run = host.say("t1", "hi", &eve).await.unwrap_err();
    assert_eq!(
        (run.code, run.message.as_str()),
        (ErrorCode::NotAuthorized, "Not authorized to invoke graph")
    );
    assert_eq!(
        host.engine.thread("t1", &eve).await.unwrap_err().code,
        ErrorCode::ThreadNotFound
    );
}

/// A host that serves the refund graph twice, as `refunds` and `refunds_again`.
fn two_graph_refunds() -> Host {
    let tools = FakeTools::new().returns("issue_refund", json!("Refunded 5900 cents on order 1042."));
    let artifact = compile_patched(&example("refund_approval"), |artifact| {
        let graph = artifact.graphs.get("refunds").unwrap().clone();
        artifact.graphs.insert("refunds_again".into(), graph);
    });
    Host::from_artifact(artifact, tools, Models::Scripted, auth())
}

#[tokio::test]
async fn a_stranger_naming_another_graph_learns_nothing_of_the_thread() {
    let host = two_graph_refunds();
    let alice = person("alice", &[]);
    let asked = host
        .run(RunRequest {
            graph: Some("refunds_again".into()),
            thread_id: Some("t1".into()),
            messages: vec![user(ASK)],
            identity: alice.clone(),
            ..RunRequest::default()
        })
        .await
        .unwrap();
    let id = asked.thread.pending.unwrap().interrupt.unwrap().id;
    let before = host.snapshot("t1").await;
    let resume = |graph: &str, who: &Identity| RunRequest {
        graph: Some(graph.to_owned()),
        thread_id: Some("t1".into()),
        resume: Some(ResumeAnswer {
            value: json!({"approved": true}),
            interrupt_id: Some(id.clone()),
            note: None,
        }),
        identity: who.clone(),
        ..RunRequest::default()
    };
    // The owner naming the wrong graph is told which one the thread runs.
    let wrong = host.run(resume("refunds", &alice)).await.unwrap_err();
    assert_eq!(
        (wrong.code, wrong.message.as_str()),
        (
            ErrorCode::InvalidRequest,
            "thread 't1' runs graph 'refunds_again', not 'refunds'"
        )
    );
    // A stranger (no approver role) naming either is refused as one first: the refusal an
    // answer would get, never the thread's graph.
    for graph in ["refunds", "refunds_again"] {
        let refused = host.run(resume(graph, &person("eve", &[]))).await.unwrap_err();
        assert_eq!(
            (refused.code, refused.details["rule"].clone()),
            (ErrorCode::ApproverRefused, json!("approvers")),
            "{graph}"
        );
        assert!(!format!("{refused:?}").contains("refunds_again"), "{refused:?}");
    }
    assert_eq!(host.snapshot("t1").await, before);
    assert_eq!(host.tools.total_calls(), 0);
}

#[tokio::test]
async fn the_same_refund_asked_again_in_a_new_run_never_runs_twice() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    host.say("t1", ASK, &anyone).await.unwrap();
    host.answer("t1", json!({"approved": true}), None, &anyone)
        .await
        .unwrap();
    host.say("t1", ASK, &anyone).await.unwrap();
    let second = host
        .answer("t1", json!({"approved": true}), None, &anyone)
        .await
        .unwrap();
    assert_eq!(
        host.tools.calls_of("issue_refund"),
        1,
        "the idempotency key refund-1042-5900 ran once"
    );
    assert_eq!(
        assistant_texts(&second.messages),
        vec!["Refunded 5900 cents on order 1042.".to_owned()]
    );
    let _: Value = json!(null);
}

#[tokio::test]
async fn an_answer_under_another_artifact_is_refused_and_records_nothing() {
    use tenx_engine::ports::{Commit, Store};
    let first = refunds(dev());
    let anyone = Identity::anonymous();
    first.say("t1", ASK, &anyone).await.unwrap();
    let record = first.store.load("t1").await.unwrap().unwrap();
    // The same program with one word changed is another artifact; the thread moves to its store.
    let changed =
        crate::harness::example("refund_approval").replace("Refund orders when asked.", "Refund orders on request.");
    let tools = FakeTools::new().returns("issue_refund", json!("refunded"));
    let second = Host::new(&changed, tools, Models::Scripted, dev());
    assert_ne!(first.engine.artifact_id(), second.engine.artifact_id());
    second
        .store
        .commit(Commit {
            thread: Some(record),
            expected_version: None,
            receipts: Vec::new(),
            records: Vec::new(),
        })
        .await
        .unwrap();
    let before = second.snapshot("t1").await;
    let refused = second
        .answer("t1", json!({"approved": true}), None, &anyone)
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::GraphVersionMismatch);
    assert_eq!(second.snapshot("t1").await, before);
    assert_eq!(second.tools.total_calls(), 0);
}

#[tokio::test]
async fn messages_sent_with_the_answer_to_a_tool_approval_are_refused_and_record_nothing() {
    let host = refunds(dev());
    let anyone = Identity::anonymous();
    let paused = host.say("t9", ASK, &anyone).await.unwrap();
    let id = paused.thread.pending.as_ref().unwrap().interrupt.clone().unwrap().id;
    let before = host.snapshot("t9").await;
    let refused = host
        .run(tenx_engine::RunRequest {
            thread_id: Some("t9".to_owned()),
            messages: vec![crate::harness::user("and also refund order 7")],
            resume: Some(tenx_engine::ResumeAnswer {
                value: json!({"approved": true}),
                interrupt_id: Some(id.clone()),
                note: None,
            }),
            identity: anyone.clone(),
            ..tenx_engine::RunRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidRequest);
    assert!(refused.message.contains(&id), "{}", refused.message);
    assert_eq!(host.snapshot("t9").await, before, "a refusal records nothing");
    assert_eq!(host.tools.total_calls(), 0);
    let done = host
        .answer("t9", json!({"approved": true}), Some(&id), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
}

/// A blog whose post may be published once: the second approval's way into `publish_post` meets
/// its visit limit and turns aside to `give_up`, a question the run pauses on.
const PUBLISH_ONCE: &str = r#"
import std.approval.yes_no

model writer_model {
  provider = scripted
  turns    = [{ text: "{\"draft\": \"d1\"}" }, { text: "{\"draft\": \"d2\"}" }]
}

tool publish_post(title: string "The post's title") -> string {
  description = "Publish the post on the blog."
  risk = high
  run  = http(POST, "https://blog.invalid/posts", timeout: 5s)
}

agent writer {
  model  = writer_model
  prompt = "Write a short post titled \"{title}\"."
  output = { "type": "object", "properties": { "draft": { "type": "string" } }, "required": ["draft"] }
}

interrupt review {
  message  = "Publish \"{title}\"?"
  response  = yes_no
  approves  = [publish_post]
  approvers = [role("editor")]
}

interrupt give_up {
  message  = "The post was published already. Anything else?"
  response = yes_no
}

graph blog {
  entry   = writer
  nodes   = [writer, review, publish_post, give_up]
  answers = { review: { approved: ok } }
  visits  = { publish_post: { max: 1, then: give_up } }

  state {
    title: string "The post's title"
    draft?: string "The current draft"
    ok?: bool "Whether the reviewer approved"
  }

  writer -> review
  route review {
    when ok -> publish_post
    else    -> writer
  }
  publish_post -> writer
  give_up      -> END
}
"#;

#[tokio::test]
async fn an_approval_the_run_turns_away_from_is_not_kept_for_later() {
    let tools = FakeTools::new().returns("publish_post", json!("published"));
    let host = Host::new(PUBLISH_ONCE, tools, Models::Scripted, dev());
    let anyone = Identity::anonymous();
    let mut state = serde_json::Map::new();
    state.insert("title".into(), json!("Spring"));
    let request = tenx_engine::RunRequest {
        thread_id: Some("t1".into()),
        messages: vec![crate::harness::user("Write it")],
        initial_state: state,
        ..tenx_engine::RunRequest::default()
    };
    let first = host.run(request).await.unwrap();
    let id = first
        .thread
        .pending
        .as_ref()
        .unwrap()
        .interrupt
        .as_ref()
        .unwrap()
        .id
        .clone();
    let second = host
        .answer("t1", json!({"approved": true}), Some(&id), &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("publish_post"), 1);
    // Approved again: the way into `publish_post` turns aside to `give_up`, and the approval
    // given for it stays behind instead of waiting in the checkpoint for a later way in.
    let id = second
        .thread
        .pending
        .as_ref()
        .unwrap()
        .interrupt
        .as_ref()
        .unwrap()
        .id
        .clone();
    let third = host
        .answer("t1", json!({"approved": true}), Some(&id), &anyone)
        .await
        .unwrap();
    assert_eq!(third.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let record = tenx_engine::ports::Store::load(&*host.store, "t1")
        .await
        .unwrap()
        .unwrap();
    let run = record.run.as_ref().unwrap();
    let root = run.branches.get(tenx_engine::thread::ROOT_BRANCH).unwrap();
    assert_eq!(root.node, "give_up");
    assert_eq!(root.approved, None, "{:?}", root.approved);
    assert_eq!(host.tools.calls_of("publish_post"), 1);
}
