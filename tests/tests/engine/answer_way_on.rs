//! Where an answer leads: an approved answer whose way on cannot be taken (a `map` over more
//! items than it allows) fails the run, recorded with the answer, as a way out of any other step
//! does (docs/runtime.md, "Parallel branches"); the thread is not left at the question, where
//! every later answer would meet the same error and every new message `INTERRUPT_004`. Inside a
//! fork's branch the branch fails, and the fork fails the run with it.

use serde_json::{Value, json};
use tenx_artifact::{Fork, ForkKind};
use tenx_engine::ports::Store;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{ErrorCode, Identity, RunRequest};

use crate::harness::{Host, Models, compile_patched, dev, user};

/// An approval, then a tool over each order; the edge out of `check` only makes every node
/// reachable for the compiler and is replaced by a map.
const ASK_THEN_MAP: &str = r#"import std.approval.yes_no

model m {
  provider = scripted
  turns    = [{ text: "Priced." }]
}

tool price(order: string "The order") -> int {
  description = "The price of one order, in cents."
  risk = low
  run  = http(POST, "http://127.0.0.1:9/price", timeout: 5s)
}

agent done {
  model  = m
  prompt = "Report."
}

interrupt check {
  message   = "Go on?"
  response  = yes_no
  on_reject = "Not gone on."
}

graph totals {
  entry = check
  nodes = [check, price, done]

  state {
    orders: list<string> = [] "The orders to price"
    order: string = "" "The order one branch prices"
  }

  check -> price
  price -> done
  done  -> END
}
"#;

#[tokio::test]
async fn an_approval_whose_way_on_is_a_map_that_cannot_start_fails_the_run() {
    let artifact = compile_patched(ASK_THEN_MAP, |artifact| {
        let graph = artifact.graphs.get_mut("totals").unwrap();
        graph.edges.retain(|edge| edge.from != "check");
        graph.forks = vec![Fork {
            from: "check".into(),
            kind: ForkKind::Map,
            branches: vec!["price".into()],
            over: Some("orders".into()),
            item: Some("order".into()),
            max_concurrency: None,
            join: "done".into(),
        }];
    });
    let host = Host::from_artifact(
        artifact,
        FakeTools::new().returns("price", json!(1)),
        Models::Scripted,
        dev(),
    );
    let (id, failed) = approve_over_257_orders(&host).await;
    assert_eq!(failed.code, ErrorCode::ForkItems, "{failed:?}");
    assert!(failed.message.contains("257 items"), "{}", failed.message);
    assert_eq!(host.tools.total_calls(), 0);

    // Recorded as any failed run is, the answer with it; no question is left open.
    ended_with_the_answer_recorded(&host).await;

    // The thread takes a new message (not `INTERRUPT_004`): its run asks again.
    let again = host.say("t1", "Go again.", &Identity::anonymous()).await.unwrap();
    assert_eq!(again.thread.execution.status, ExecutionStatus::InterruptedBefore);
    assert_ne!(host.open_interrupt("t1").await, id, "a new question");
}

/// The same question inside a branch of a `parallel` fork: its way on is a map nested in the
/// branch.
const BRANCH_ASKS_THEN_MAPS: &str = r#"import std.approval.yes_no

model m {
  provider = scripted
  turns    = [{ text: "Noted." }]
}

tool price(order: string "The order") -> int {
  description = "The price of one order, in cents."
  risk = low
  run  = http(POST, "http://127.0.0.1:9/price", timeout: 5s)
}

agent intake {
  model  = m
  prompt = "Take the request."
}

agent side {
  model  = m
  prompt = "Note the request."
}

agent tally {
  model  = m
  prompt = "Add the prices up."
}

agent report {
  model  = m
  prompt = "Report."
}

interrupt check {
  message   = "Price them?"
  response  = yes_no
  on_reject = "Not priced."
}

graph totals {
  entry = intake
  nodes = [intake, check, price, tally, side, report]

  state {
    orders: list<string> = [] "The orders to price"
    order?: string "The order one branch prices"
  }

  parallel intake {
    branches = [check, side]
    join     = report
  }
  map check {
    over = orders
    item = order
    node = price
    join = tally
  }
  price  -> tally
  tally  -> report
  side   -> report
  report -> END
}
"#;

#[tokio::test]
async fn an_approval_in_a_branch_whose_way_on_is_a_map_that_cannot_start_fails_the_branch_and_the_run() {
    let host = Host::new(
        BRANCH_ASKS_THEN_MAPS,
        FakeTools::new().returns("price", json!(1)),
        Models::Scripted,
        dev(),
    );
    let (_, failed) = approve_over_257_orders(&host).await;
    // The branch records the failure; the fork then fails the run with it, named by its branch.
    assert_eq!(failed.code, ErrorCode::ForkItems, "{failed:?}");
    assert!(failed.message.contains("check"), "{}", failed.message);
    assert_eq!(host.tools.total_calls(), 0);
    ended_with_the_answer_recorded(&host).await;
}

/// Starts thread `t1` with 257 orders, which pauses at the question, and approves it: the
/// question's interrupt id and the answer's error.
async fn approve_over_257_orders(host: &Host) -> (String, tenx_engine::RunError) {
    let orders: Vec<Value> = (0..257).map(|n| json!(format!("o{n}"))).collect();
    let paused = host
        .run(RunRequest {
            thread_id: Some("t1".into()),
            messages: vec![user("Go.")],
            initial_state: [("orders".to_owned(), Value::Array(orders))].into_iter().collect(),
            ..RunRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let id = host.open_interrupt("t1").await;
    let failed = host
        .answer("t1", json!({"approved": true}), Some(&id), &Identity::anonymous())
        .await
        .unwrap_err();
    (id, failed)
}

/// Thread `t1` failed with `FORK_001`, its run ended, no question open, the answer recorded.
async fn ended_with_the_answer_recorded(host: &Host) {
    let thread = host.store.load("t1").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
    assert_eq!(thread.execution.internal_data["error_code"], json!("FORK_001"));
    assert!(thread.pending.is_none(), "no question is left open");
    assert!(thread.run.is_none(), "the run ended");
    let records = host.store.records("t1").await.unwrap();
    assert!(
        records.iter().any(|record| record.kind == "approval"),
        "the answer is recorded: {records:?}"
    );
}
