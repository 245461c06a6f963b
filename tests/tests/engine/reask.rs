//! `tenxc dev`'s re-ask (`EngineOptions::reask_after_reload`, the contract's "Artifact
//! changes"): a thread paused at an approval under an earlier build gets its question asked
//! again under the new one (new id, the new policy revision in the fingerprint, a fresh expiry),
//! the old id is refused, and only an answer to the new question runs the tool, once. A
//! question the new program cannot ask as it was is withdrawn and nothing runs. Without the
//! option the answer stays refused (`approvals.rs`).

use std::sync::Arc;

use serde_json::json;
use tenx_engine::ports::{Commit, Ids, NullEvents, Store};
use tenx_engine::testing::{FakeTools, SequentialIds};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{EngineOptions, ErrorCode, Identity, ReaskOutcome};

use crate::harness::{Host, Models, dev, example, example_artifact};

const ASK: &str = "Refund order 1042, 59.00";
const HOUR: u64 = 3_600_000;

fn tools() -> FakeTools {
    FakeTools::new().returns("issue_refund", json!("Refunded 5900 cents on order 1042."))
}

fn reasking() -> EngineOptions {
    EngineOptions {
        reask_after_reload: true,
        ..dev()
    }
}

/// Ids that start past those the first build drew.
fn ids_past_the_first_build() -> SequentialIds {
    let ids = SequentialIds::new();
    for _ in 0..10 {
        ids.interrupt_id();
        ids.run_id();
        ids.message_id();
    }
    ids
}

/// `host` with `record` in its store (one store across the reload, as `tenxc dev` keeps it).
async fn holding(host: Host, record: ThreadRecord) -> Host {
    host.store
        .commit(Commit {
            thread: Some(record),
            expected_version: None,
            receipts: Vec::new(),
            records: Vec::new(),
        })
        .await
        .unwrap();
    host
}

/// A thread paused at the refund's approval under the example as it is: the stored record.
async fn paused_under_the_first_build() -> ThreadRecord {
    let first = Host::from_artifact(example_artifact("refund_approval"), tools(), Models::Scripted, dev());
    first.say("t1", ASK, &Identity::anonymous()).await.unwrap();
    first.store.load("t1").await.unwrap().unwrap()
}

/// The example with `from` replaced by `to`, served with `options`, holding `record` (one
/// store across the reload, as `tenxc dev` keeps it). Its ids start past the first build's.
async fn reloaded(from: &str, to: &str, options: EngineOptions, record: ThreadRecord) -> Host {
    let changed = example("refund_approval").replace(from, to);
    assert_ne!(changed, example("refund_approval"), "`{from}` is in the example");
    let ids = ids_past_the_first_build();
    let artifact = crate::harness::compile_named("refund_approval", &changed);
    let host = Host::with_ids(artifact, tools(), Models::Scripted, options, Arc::new(ids));
    holding(host, record).await
}

#[tokio::test]
async fn a_pending_approval_is_asked_again_under_the_new_build_and_only_its_answer_runs_the_tool() {
    let record = paused_under_the_first_build().await;
    let old = record.pending.clone().unwrap();
    let old_id = old.interrupt.clone().unwrap().id;
    let second = reloaded(
        "message   = \"Approve a refund of {amount_cents} cents for order {order_id}?\"",
        "message   = \"Refund {amount_cents} cents on order {order_id}? (second build)\"",
        reasking(),
        record.clone(),
    )
    .await;
    assert_ne!(record.artifact_id, second.engine.artifact_id());
    second.clock.advance(HOUR);

    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Reasked { previous, interrupt_id }) = report.outcome("t1").cloned() else {
        panic!("asked again: {report:?}");
    };
    assert_eq!(previous, old_id);
    assert_ne!(interrupt_id, old_id, "a new interrupt id");
    let thread = second.store.load("t1").await.unwrap().unwrap();
    assert_eq!(
        thread.artifact_id,
        second.engine.artifact_id(),
        "the thread is stamped with the new build"
    );
    assert_eq!(thread.execution.status, ExecutionStatus::InterruptedBefore);
    let pending = thread.pending.clone().unwrap();
    let interrupt = pending.interrupt.clone().unwrap();
    assert_eq!(interrupt.id, interrupt_id);
    assert_eq!(interrupt.message, "Refund 5900 cents on order 1042? (second build)");
    assert_eq!(
        interrupt.value["policy_revision"],
        second.engine.artifact_id(),
        "{}",
        interrupt.value
    );
    assert_ne!(
        pending.fingerprint, old.fingerprint,
        "the fingerprint has the new policy revision"
    );
    assert_eq!(
        pending.expires_at,
        old.expires_at.map(|at| at + HOUR),
        "a fresh expiry, from the time it was asked again"
    );
    let records = second.records("t1").await;
    assert!(
        records.iter().any(|record| record["kind"] == "approval"
            && record["fields"]["outcome"] == "reasked"
            && record["fields"]["interrupt_id"] == old_id.as_str()),
        "{records:?}"
    );
    let again = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    assert!(again.threads.is_empty(), "asked once: {again:?}");

    let before = second.snapshot("t1").await;
    let refused = second
        .answer("t1", json!({"approved": true}), Some(&old_id), &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptMismatch, "{refused}");
    assert_eq!(second.snapshot("t1").await, before, "the refusal records nothing");
    assert_eq!(second.tools.total_calls(), 0);

    let done = second
        .answer(
            "t1",
            json!({"approved": true}),
            Some(&interrupt_id),
            &Identity::anonymous(),
        )
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(second.tools.calls_of("issue_refund"), 1, "the tool ran once");
}

#[tokio::test]
async fn the_first_request_after_a_reload_asks_again_before_it_meets_the_question() {
    let record = paused_under_the_first_build().await;
    let old_id = record.pending.clone().unwrap().interrupt.unwrap().id;
    let second = reloaded(
        "Refund orders when asked.",
        "Refund orders on request.",
        reasking(),
        record,
    )
    .await;
    // No sweep: the answer itself finds the old question. It was written for that question,
    // so it is refused, and the thread now shows the new one.
    let refused = second
        .answer("t1", json!({"approved": true}), None, &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::GraphVersionMismatch, "{refused}");
    let new_id = second.open_interrupt("t1").await;
    assert_ne!(new_id, old_id);
    assert!(refused.message.contains(&new_id), "{}", refused.message);
    assert_eq!(second.tools.total_calls(), 0);
    let refused = second
        .answer("t1", json!({"approved": true}), Some(&old_id), &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptMismatch);
    second
        .answer("t1", json!({"approved": true}), Some(&new_id), &Identity::anonymous())
        .await
        .unwrap();
    assert_eq!(second.tools.calls_of("issue_refund"), 1);
}

#[tokio::test]
async fn a_question_the_new_build_cannot_ask_is_withdrawn_and_nothing_runs() {
    let record = paused_under_the_first_build().await;
    let old_id = record.pending.clone().unwrap().interrupt.unwrap().id;
    // The pending call refunds 5900 cents; the new build allows at most 1000.
    let second = reloaded(
        "amount_cents: int(min: 1, max: 50000)",
        "amount_cents: int(min: 1, max: 1000)",
        reasking(),
        record,
    )
    .await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Superseded { previous, reason }) = report.outcome("t1").cloned() else {
        panic!("withdrawn: {report:?}");
    };
    assert_eq!(previous, old_id);
    assert!(reason.contains("no longer accept the pending arguments"), "{reason}");
    let thread = second.store.load("t1").await.unwrap().unwrap();
    assert!(thread.pending.is_none() && thread.run.is_none());
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
    assert_eq!(thread.execution.internal_data["outcome"], "superseded");
    assert_eq!(thread.execution.internal_data["error_code"], "GRAPH_VERSION_MISMATCH");
    let last = thread.context.last().unwrap();
    assert!(
        serde_json::to_string(last)
            .unwrap()
            .contains("Not run: the program changed"),
        "the open call is answered: {last:?}"
    );
    let records = second.records("t1").await;
    assert!(
        records
            .iter()
            .any(|record| record["fields"]["outcome"] == "superseded"
                && record["fields"]["interrupt_id"] == old_id.as_str()),
        "{records:?}"
    );
    let refused = second
        .answer("t1", json!({"approved": true}), Some(&old_id), &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::NothingToResume);
    assert_eq!(second.tools.total_calls(), 0, "nothing ran");
    let next = second.say("t1", "hello", &Identity::anonymous()).await.unwrap();
    assert_eq!(
        next.thread.execution.status,
        ExecutionStatus::Completed,
        "a new message starts a new run"
    );
}

#[tokio::test]
async fn without_the_option_nothing_is_asked_again() {
    let record = paused_under_the_first_build().await;
    let second = reloaded("Refund orders when asked.", "Refund orders on request.", dev(), record).await;
    let before = second.snapshot("t1").await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    assert!(report.threads.is_empty());
    let refused = second
        .answer("t1", json!({"approved": true}), None, &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::GraphVersionMismatch);
    assert_eq!(second.snapshot("t1").await, before);
}

const NOTES: &str = r#"import std.approval.yes_no

model notes_model {
  provider = scripted
  fallback = { text: "Noted." }
}

agent desk {
  model  = notes_model
  prompt = "Take the note."
}

interrupt confirm {
  message   = "Keep the note?"
  reason    = "confirm"
  response  = yes_no
  on_reject = "The note was dropped."
}

graph notes {
  entry = desk
  nodes = [desk, confirm]

  desk    -> confirm
  confirm -> END
}
"#;

const NOTES_WITHOUT_CONFIRM: &str = r#"model notes_model {
  provider = scripted
  fallback = { text: "Noted." }
}

agent desk {
  model  = notes_model
  prompt = "Take the note."
}

graph notes {
  entry = desk
  nodes = [desk]

  desk -> END
}
"#;

/// A thread paused at `NOTES`'s interrupt node, moved into a host of `program` (reasking).
async fn notes_reloaded(program: &str) -> (Host, String) {
    let first = Host::new(NOTES, FakeTools::new(), Models::Scripted, dev());
    first.say("n1", "buy milk", &Identity::anonymous()).await.unwrap();
    let record = first.store.load("n1").await.unwrap().unwrap();
    let old_id = record.pending.clone().unwrap().interrupt.unwrap().id;
    let ids = ids_past_the_first_build();
    let second = Host::with_ids(
        crate::harness::compile(program),
        FakeTools::new(),
        Models::Scripted,
        reasking(),
        Arc::new(ids),
    );
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
    (second, old_id)
}

#[tokio::test]
async fn an_interrupt_node_is_asked_again_or_withdrawn_when_it_is_gone() {
    let (second, old_id) = notes_reloaded(&NOTES.replace("Keep the note?", "Keep this note?")).await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Reasked { interrupt_id, .. }) = report.outcome("n1").cloned() else {
        panic!("asked again: {report:?}");
    };
    let thread = second.store.load("n1").await.unwrap().unwrap();
    assert_eq!(thread.pending.unwrap().interrupt.unwrap().message, "Keep this note?");
    let refused = second
        .answer("n1", json!({"approved": true}), Some(&old_id), &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptMismatch);
    let done = second
        .answer(
            "n1",
            json!({"approved": true}),
            Some(&interrupt_id),
            &Identity::anonymous(),
        )
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);

    let (second, old_id) = notes_reloaded(NOTES_WITHOUT_CONFIRM).await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Superseded { previous, reason }) = report.outcome("n1").cloned() else {
        panic!("withdrawn: {report:?}");
    };
    assert_eq!(previous, old_id);
    assert!(reason.contains("`confirm` is no longer in the graph"), "{reason}");
    let thread = second.store.load("n1").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
    assert!(thread.pending.is_none());
    let refused = second
        .answer("n1", json!({"approved": true}), Some(&old_id), &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::NothingToResume);
}

#[tokio::test]
async fn a_thread_held_during_the_sweep_is_reported_busy_and_asked_again_by_its_next_request() {
    let record = paused_under_the_first_build().await;
    let options = EngineOptions {
        busy_wait: std::time::Duration::from_millis(50),
        ..reasking()
    };
    let second = reloaded(
        "Refund orders when asked.",
        "Refund orders on request.",
        options,
        record.clone(),
    )
    .await;
    let lease = second.store.lock("t1").await.unwrap();
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    assert_eq!(report.outcome("t1"), Some(&ReaskOutcome::Busy));
    drop(lease);
    assert_eq!(
        second.store.load("t1").await.unwrap().unwrap(),
        record,
        "left as it was"
    );
    let refused = second.say("t1", "hello?", &Identity::anonymous()).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::ThreadPaused, "{refused}");
    let new_id = second.open_interrupt("t1").await;
    assert!(
        refused.message.contains(&new_id),
        "the request met the new question: {refused}"
    );
    assert_ne!(new_id, record.pending.unwrap().interrupt.unwrap().id);
}

/// Two branches that each publish behind an approval: both wait, one question open at a time.
const PAIR: &str = r#"
import std.approval.yes_no

model intake_model {
  provider = scripted
  turns    = [{ text: "Two posts." }]
}
model post_model {
  provider = scripted
  turns    = [{ tool: "publish", arguments: { summary: "a post" } }, { text: "Posted: {result}" }]
}
model done_model {
  provider = scripted
  turns    = [{ text: "All posted." }]
}

tool publish(summary: string "What to publish") -> string {
  description = "Publish a post."
  risk = high
  approval {
    message   = "Publish {summary}? (first build)"
    response  = yes_no
    on_reject = "Not published."
    separate_duties = false
  }
  run = http(POST, "${BLOG_URL}/posts", timeout: 5s)
}

agent intake {
  model  = intake_model
  prompt = "Split the work."
}
agent blog {
  model  = post_model
  prompt = "Post on the blog."
  tools  = [publish]
}
agent news {
  model  = post_model
  prompt = "Post the news."
  tools  = [publish]
}
agent done {
  model  = done_model
  prompt = "Say it is done."
}

graph pair {
  entry = intake
  nodes = [intake, blog, news, done]

  parallel intake {
    branches = [blog, news]
    join     = done
  }
  blog -> done
  news -> done
  done -> END
}
"#;

/// A host serving `program`, holding `record`, with ids past the first build's.
async fn pair_reloaded(program: &str, record: ThreadRecord) -> Host {
    let ids = ids_past_the_first_build();
    let artifact = crate::harness::compile_named("pair", program);
    let tools = FakeTools::new().returns("publish", json!("ok"));
    let host = Host::with_ids(artifact, tools, Models::Scripted, reasking(), Arc::new(ids));
    holding(host, record).await
}

/// The pair paused at both branches' approvals under the first build.
async fn pair_paused() -> ThreadRecord {
    let first = Host::from_artifact(
        crate::harness::compile_named("pair", PAIR),
        FakeTools::new(),
        Models::Scripted,
        dev(),
    );
    let paused = first.say("p1", "Post twice.", &Identity::anonymous()).await.unwrap();
    assert_eq!(paused.thread.pending.as_ref().unwrap().branch.as_deref(), Some("blog"));
    first.store.load("p1").await.unwrap().unwrap()
}

#[tokio::test]
async fn every_question_waiting_in_a_fork_is_asked_again_under_the_new_build() {
    let record = pair_paused().await;
    let old_id = record.pending.clone().unwrap().interrupt.unwrap().id;
    let stored_news = record.run.as_ref().unwrap().fork.as_ref().unwrap().branches[1]
        .pending
        .clone()
        .unwrap();
    let second = pair_reloaded(&PAIR.replace("(first build)", "(second build)"), record).await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Reasked { previous, interrupt_id }) = report.outcome("p1").cloned() else {
        panic!("asked again: {report:?}");
    };
    assert_eq!(previous, old_id);
    assert_ne!(interrupt_id, old_id);
    let thread = second.store.load("p1").await.unwrap().unwrap();
    assert_eq!(thread.artifact_id, second.engine.artifact_id());
    assert_eq!(thread.execution.status, ExecutionStatus::InterruptedBefore);
    let open = thread.pending.clone().unwrap();
    assert_eq!(open.branch.as_deref(), Some("blog"));
    let shown = open.interrupt.unwrap();
    assert_eq!(shown.message, "Publish a post? (second build)");
    assert_eq!(shown.value["policy_revision"], second.engine.artifact_id());
    // The question still to open, in the other branch, was asked again too.
    let news = thread.run.as_ref().unwrap().fork.as_ref().unwrap().branches[1]
        .pending
        .clone()
        .unwrap();
    let news_shown = news.interrupt.unwrap();
    assert_ne!(news_shown.id, stored_news.interrupt.unwrap().id);
    assert_eq!(news_shown.value["policy_revision"], second.engine.artifact_id());
    let reasked = second
        .records("p1")
        .await
        .into_iter()
        .filter(|record| record["fields"]["outcome"] == "reasked")
        .count();
    assert_eq!(reasked, 2, "both questions were withdrawn and asked again");

    let before = second.snapshot("p1").await;
    let refused = second
        .answer("p1", json!({"approved": true}), Some(&old_id), &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptMismatch);
    assert_eq!(second.snapshot("p1").await, before, "the refusal records nothing");
    let next = second
        .answer(
            "p1",
            json!({"approved": true}),
            Some(&interrupt_id),
            &Identity::anonymous(),
        )
        .await
        .unwrap();
    // The news branch's question opens now: the one asked under the second build.
    let second_open = next.thread.pending.clone().unwrap();
    assert_eq!(second_open.branch.as_deref(), Some("news"));
    let second_shown = second_open.interrupt.unwrap();
    assert_eq!(second_shown.id, news_shown.id);
    assert_eq!(second_shown.message, "Publish a post? (second build)");
    let done = second
        .answer(
            "p1",
            json!({"approved": true}),
            Some(&second_shown.id),
            &Identity::anonymous(),
        )
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(second.tools.calls_of("publish"), 2);
    assert_eq!(
        crate::harness::assistant_texts(&done.thread.context)
            .last()
            .map(String::as_str),
        Some("All posted.")
    );
}

#[tokio::test]
async fn questions_in_a_fork_the_new_build_changed_are_all_withdrawn_and_nothing_runs() {
    let record = pair_paused().await;
    let old_id = record.pending.clone().unwrap().interrupt.unwrap().id;
    // The second build joins the branches at `END`: the fork in progress is not the program's.
    let changed = PAIR
        .replace("join     = done", "join     = END")
        .replace("blog -> done\n  news -> done", "blog -> END\n  news -> END")
        .replace("nodes = [intake, blog, news, done]", "nodes = [intake, blog, news]")
        .replace("  done -> END\n", "");
    let second = pair_reloaded(&changed, record).await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Superseded { previous, reason }) = report.outcome("p1").cloned() else {
        panic!("withdrawn: {report:?}");
    };
    assert_eq!(previous, old_id);
    assert_eq!(reason, "the fork out of `intake` changed");
    let thread = second.store.load("p1").await.unwrap().unwrap();
    assert!(thread.pending.is_none() && thread.run.is_none());
    assert_eq!(thread.execution.internal_data["outcome"], "superseded");
    assert_eq!(second.tools.total_calls(), 0, "nothing ran");

    // A question the new build cannot ask (the tool is now low risk) withdraws them all too,
    // even after the other branch's question was asked again.
    let record = pair_paused().await;
    let second = pair_reloaded(
        &PAIR.replace("risk = high\n  approval {", "risk = low\n  approval {"),
        record,
    )
    .await;
    let report = second.engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let Some(ReaskOutcome::Superseded { reason, .. }) = report.outcome("p1").cloned() else {
        panic!("withdrawn: {report:?}");
    };
    assert!(reason.contains("no longer needs this approval"), "{reason}");
    let thread = second.store.load("p1").await.unwrap().unwrap();
    assert!(thread.pending.is_none() && thread.run.is_none());
    assert_eq!(second.tools.total_calls(), 0, "nothing ran");
}
