//! Steps and visits are counted once across a pause and across a crash: an answered approval
//! and a call finished by recovery go on inside the agent node (no new visit), and the round
//! of calls a model turn started is one step however often it is interrupted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tenx_engine::ports::{ModelClient, Ports};
use tenx_engine::testing::{FakeTools, ManualClock, RecordingEvents, SequentialIds};
use tenx_engine::wire::{ExecutionStatus, Role};
use tenx_engine::{Engine, EngineOptions, Identity, MemoryStore, RecoveryOutcome, RunRequest};

use crate::harness::{Host, Models, Steered, T0, assistant_texts, compile, dev, user};
use crate::recovery::Holding;

/// A clerk whose model (steered by the test) makes two calls in one turn; `limits` adds graph
/// settings (a recursion limit, visit limits).
pub(crate) fn program(limits: &str) -> String {
    format!(
        r#"
import std.approval.yes_no

tag orders "Reads orders"
tag billing "Moves money"

model clerk_model {{
  provider = scripted
  fallback = {{ text: "unused" }}
}}

tool lookup_order(order_id: string(min_length: 1, max_length: 32) "The order") -> string {{
  description = "Look an order up."
  tags = [orders]
  risk = low
  run = native("orders.lookup")
}}

tool issue_refund(
  order_id: string(min_length: 1, max_length: 32) "The order",
  amount_cents: int(min: 1, max: 50000) "The amount, in cents",
) -> string {{
  description = "Refund an order. A person approves every refund."
  tags = [billing]
  risk = high
  approval {{
    message   = "Refund {{amount_cents}} cents on order {{order_id}}?"
    reason    = "tool_approval"
    response  = yes_no
    on_reject = "Refund declined."
    separate_duties = false
  }}
  run = native("payments.refund")
}}

agent clerk {{
  model  = clerk_model
  prompt = "You are a clerk."
  tools  = tagged(orders, billing)
}}

graph desk {{
  entry = clerk
  nodes = [clerk]
  {limits}

  clerk -> END
}}
"#
    )
}

/// The turn: a refund that needs approval, then a lookup; then the final answer.
fn refund_then_lookup(steered: &Steered) {
    steered.push_calls(&[
        ("c1", "issue_refund", json!({"order_id": "1042", "amount_cents": 5900})),
        ("c2", "lookup_order", json!({"order_id": "1042"})),
    ]);
    steered.push_text("Done.");
}

fn tools() -> FakeTools {
    FakeTools::new()
        .returns("issue_refund", json!("Refunded."))
        .returns("lookup_order", json!("Order 1042: paid."))
}

/// Asks, approves, and returns the finished thread.
async fn approve_the_refund(host: &Host) -> tenx_engine::RunOutput {
    let anyone = Identity::anonymous();
    let paused = host.say("t", "Refund order 1042", &anyone).await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    assert_eq!(paused.thread.execution.step, 2, "the model call and the round");
    let interrupt = paused.thread.pending.unwrap().interrupt.unwrap().id;
    host.answer("t", json!({"approved": true}), Some(&interrupt), &anyone)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_answered_approval_goes_on_in_the_agent_node_without_a_new_visit() {
    let steered = Steered::default();
    refund_then_lookup(&steered);
    let text = program("visits = { clerk: { max: 1, then: END } }");
    let host = Host::new(&text, tools(), Models::Steered(steered), dev());
    let done = approve_the_refund(&host).await;
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    // At its limit, a new visit would have turned the run aside to END before the lookup and
    // the model's answer.
    assert_eq!(assistant_texts(&done.thread.context), ["Done."]);
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
    assert_eq!(host.tools.calls_of("lookup_order"), 1);
}

#[tokio::test]
async fn a_round_resumed_after_its_approval_is_not_counted_twice() {
    let steered = Steered::default();
    refund_then_lookup(&steered);
    // Model call, round, model call: exactly three steps.
    let host = Host::new(
        &program("recursion_limit = 3"),
        tools(),
        Models::Steered(steered),
        dev(),
    );
    let done = approve_the_refund(&host).await;
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(done.thread.execution.step, 3);
    assert_eq!(assistant_texts(&done.thread.context), ["Done."]);
}

#[tokio::test]
async fn the_recursion_limit_still_counts_every_round_after_an_approval() {
    // The same turn, but the model calls again instead of answering: a fourth step.
    let steered = Steered::default();
    steered.push_calls(&[
        ("c1", "issue_refund", json!({"order_id": "1042", "amount_cents": 5900})),
        ("c2", "lookup_order", json!({"order_id": "1042"})),
    ]);
    steered.push_calls(&[("c3", "lookup_order", json!({"order_id": "7"}))]);
    let host = Host::new(
        &program("recursion_limit = 3"),
        tools(),
        Models::Steered(steered),
        dev(),
    );
    let anyone = Identity::anonymous();
    let paused = host.say("t", "Refund order 1042", &anyone).await.unwrap();
    let interrupt = paused.thread.pending.unwrap().interrupt.unwrap().id;
    let failed = host
        .answer("t", json!({"approved": true}), Some(&interrupt), &anyone)
        .await
        .unwrap_err();
    assert_eq!(failed.code, tenx_engine::ErrorCode::RecursionLimit);
    assert_eq!(failed.details["current_step"], 4);
    assert_eq!(
        host.tools.calls_of("lookup_order"),
        1,
        "the round past the limit never ran"
    );
}

pub(crate) fn engine(text: &str, store: Arc<MemoryStore>, tools: Arc<Holding>, steered: &Steered) -> Engine {
    let artifact = compile(text);
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(steered.clone()));
    }
    let ports = Ports {
        store,
        models,
        tools,
        clock: Arc::new(ManualClock::new(T0)),
        ids: Arc::new(SequentialIds::new()),
    };
    Engine::new(artifact, ports, EngineOptions::default()).unwrap()
}

#[tokio::test]
async fn a_round_finished_by_recovery_counts_no_second_step_and_no_visit() {
    let text = program("recursion_limit = 3\n  visits = { clerk: { max: 1, then: END } }");
    let steered = Steered::default();
    steered.push_calls(&[
        ("c1", "lookup_order", json!({"order_id": "1042"})),
        ("c2", "lookup_order", json!({"order_id": "7"})),
    ]);
    steered.push_text("Done.");
    let store = Arc::new(MemoryStore::new());
    let held = Holding::new(true, true);
    let first = engine(&text, store.clone(), held.clone(), &steered);
    let running = tokio::spawn(async move {
        let request = RunRequest {
            thread_id: Some("t".to_owned()),
            messages: vec![user("Look up two orders")],
            ..RunRequest::default()
        };
        first.run(request, &mut RecordingEvents::new()).await
    });
    tokio::time::timeout(Duration::from_secs(60), held.arrived.notified())
        .await
        .expect("the first lookup was sent");
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    let killed = tenx_engine::ports::Store::load(&*store, "t").await.unwrap().unwrap();
    assert_eq!(
        killed.execution.step, 2,
        "the model call and the round, committed in flight"
    );

    let tools = Holding::new(false, true);
    let second = engine(&text, store.clone(), tools.clone(), &steered);
    let report = second.recover(&mut RecordingEvents::new()).await.unwrap();
    assert_eq!(report.outcome("t"), Some(&RecoveryOutcome::Finished));
    let thread = tenx_engine::ports::Store::load(&*store, "t").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(thread.execution.step, 3);
    assert_eq!(assistant_texts(&thread.context), ["Done."]);
    let roles: Vec<Role> = thread.context.iter().map(|message| message.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Tool, Role::Assistant]
    );
    assert_eq!(tools.keys(), ["t:clerk:c1", "t:clerk:c2"], "c1 sent again, then c2");
}
