//! A branch that fails beside a stopped one, where the failure is a way its step cannot take (a
//! `map` that cannot start: too many items), at the thread's fork and in a fork nested in a
//! branch. The stop wins, as beside any failed branch: the run is stopped and kept, and the next
//! run finishes the stopped branch's call under its key, then fails with the failure. A failure
//! a branch cannot record in itself (a store error) fails its fork at once: at the thread's fork
//! the run, whose calls in flight become `outcome_unknown`; in a fork nested in a branch, that
//! branch, whose own calls in flight become `outcome_unknown` as the run's would, while a stop
//! beside it still keeps the run.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tenx_engine::ports::{NullEvents, Receipt, ReceiptState};
use tenx_engine::thread::BranchStatus;
use tenx_engine::{ErrorCode, OnBusy, RunRequest};

use super::PARALLEL;
use super::failing::FailOnce;
use super::host::{Host, Kind, Running, host, host_over, kept_not_running, say, say_to, stopped};

/// `research`: `web` beside `desk`, which forks into `news` and `lister`; `lister` maps over
/// `items`. `flat`: `news` beside `lister` at the thread's own fork. With more items than a map
/// runs, `lister`'s map cannot start.
const NESTED: &str = r#"
model m {
  provider = scripted
  fallback = { text: "unused" }
}

tool fetch(q: string "What to fetch") -> string {
  description = "Fetch one source."
  risk = low
  run = http(POST, "http://127.0.0.1:9/fetch", timeout: 30s)
}

agent planner {
  model  = m
  prompt = "Plan the research."
}
agent web {
  model  = m
  prompt = "Research topic web."
  tools  = [fetch]
}
agent desk {
  model  = m
  prompt = "Split the work as the planner."
}
agent news {
  model  = m
  prompt = "Research topic news."
  tools  = [fetch]
}
agent lister {
  model  = m
  prompt = "List the items as the writer."
}
agent summarise {
  model  = m
  prompt = "Research topic {item}."
  tools  = [fetch]
}
agent tally {
  model  = m
  prompt = "Count the findings as the writer."
}
agent gather {
  model  = m
  prompt = "Gather the findings as the writer."
}
agent writer {
  model  = m
  prompt = "Write the report."
}

graph research {
  entry = planner
  nodes = [planner, web, desk, news, lister, summarise, tally, gather, writer]

  state {
    items: list<string> = [] "What to research one at a time"
    item?: string "The item one branch researches"
  }

  parallel planner {
    branches = [web, desk]
    join     = writer
  }
  parallel desk {
    branches = [news, lister]
    join     = gather
  }
  map lister {
    over = items
    item = item
    node = summarise
    join = tally
  }
  web       -> writer
  news      -> gather
  summarise -> tally
  tally     -> gather
  gather    -> writer
  writer    -> END
}

graph flat {
  entry = planner
  nodes = [planner, news, lister, summarise, tally, writer]

  state {
    items: list<string> = [] "What to research one at a time"
    item?: string "The item one branch researches"
  }

  parallel planner {
    branches = [news, lister]
    join     = writer
  }
  map lister {
    over = items
    item = item
    node = summarise
    join = tally
  }
  news      -> writer
  summarise -> tally
  tally     -> writer
  writer    -> END
}
"#;

/// `graph` with `news`'s call held and `lister`'s map over 257 items (one more than a map runs):
/// stopped once `lister` has failed beside the call, then gone on with.
async fn a_failure_beside_a_stopped_call_keeps_the_call(graph: &str, outer_done: usize) {
    let host = host(NESTED, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let items: Vec<Value> = (0..257).map(|n| json!(format!("i{n}"))).collect();
    let request = RunRequest {
        initial_state: [("items".to_owned(), Value::Array(items))].into_iter().collect(),
        ..say_to(graph, "Research.")
    };
    let running = host.held_in(request, &host.service.arrived, outer_done).await;
    // `lister` (its model is the writer's) answered, so its map failed to start.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while host.models.asks("writer") == 0 {
        assert!(std::time::Instant::now() < deadline, "lister answered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let news_key = host.service.keys_of("news");
    assert!(host.engine.stop("t"));
    stopped(running).await;
    kept_not_running(&host).await;
    assert!(matches!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::InFlight { .. }
    ));
    assert_eq!(host.outcomes(&news_key).await, ["interrupted"]);

    host.service.hold.store(false, Ordering::SeqCst);
    let failed = host
        .engine
        .run(say_to(graph, "Go on."), &mut NullEvents)
        .await
        .unwrap_err();
    assert_eq!(failed.code, ErrorCode::ForkItems, "{failed:?}");
    assert!(failed.message.contains("branch `lister`"), "{failed:?}");
    assert!(failed.message.contains("257 items"), "{failed:?}");
    assert_eq!(
        host.service.keys_of("news"),
        [news_key[0].clone(), news_key[0].clone()],
        "once more, under the same key"
    );
    assert_eq!(host.outcomes(&news_key).await, ["interrupted", "resent", "completed"]);
    assert!(matches!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::Done { .. }
    ));
    assert!(host.store.in_flight("t").await.unwrap().is_empty());
    assert_eq!(host.models.asks("writer"), 1, "the failed branch did not run again");
    let thread = host.load().await;
    assert!(thread.run.is_none() && thread.stopped_run.is_none(), "at rest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_failing_while_a_fork_inside_it_has_a_stopped_call_keeps_that_call() {
    a_failure_beside_a_stopped_call_keeps_the_call("research", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_map_that_cannot_start_beside_a_stopped_call_keeps_that_call() {
    a_failure_beside_a_stopped_call_keeps_the_call("flat", 0).await;
}

/// A failure a branch cannot record in itself (here a damaged checkpoint: a branch's progress is
/// missing when the kept run goes on) fails the fork at once, with no stop to win: the run fails
/// and is dropped, and so its calls in flight become `outcome_unknown` in the failure's commit,
/// each named by its key where the run still names it. None is left in flight, none sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fails_with_calls_in_flight_in_its_fork_leaves_none_in_flight() {
    let host = host(PARALLEL, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("*".to_owned());
    let engine = host.engine.clone();
    let running = tokio::spawn(async move { engine.run(say("Research.", OnBusy::Wait), &mut NullEvents).await });
    host.holding(2).await;
    let (web_key, news_key) = (host.service.keys_of("web"), host.service.keys_of("news"));
    assert!(host.engine.stop("t"));
    stopped(running).await;
    let mut damaged = host.load().await;
    damaged.stopped_run.as_mut().unwrap().branches.remove("web");
    let expected = damaged.version;
    damaged.version += 1;
    host.store
        .commit(tenx_engine::ports::Commit {
            thread: Some(damaged),
            expected_version: Some(expected),
            receipts: Vec::new(),
            records: Vec::new(),
        })
        .await
        .unwrap();

    host.service.hold.store(false, Ordering::SeqCst);
    let sent = host.service.keys.lock().unwrap().len();
    host.engine
        .run(say("Go on.", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap_err();
    assert_eq!(host.service.keys.lock().unwrap().len(), sent, "nothing sent again");
    for key in [&web_key[0], &news_key[0]] {
        assert_eq!(
            host.store.receipt("t", key).await.unwrap().unwrap().state,
            ReceiptState::OutcomeUnknown
        );
    }
    assert!(host.store.in_flight("t").await.unwrap().is_empty());
    let named: Vec<(Value, Value)> = host
        .records_with("outcome_unknown")
        .await
        .into_iter()
        .map(|fields| (fields["idempotency_key"].clone(), fields["call_id"].clone()))
        .collect();
    assert_eq!(named.len(), 2, "{named:?}");
    assert!(named.contains(&(json!(news_key[0]), json!("news-1"))), "{named:?}");
    assert!(
        named.contains(&(json!(web_key[0]), Value::Null)),
        "the run no longer names web's call: {named:?}"
    );
    let thread = host.load().await;
    assert!(thread.run.is_none() && thread.stopped_run.is_none(), "at rest");
}

/// `research`: `web` beside `desk`, which forks into `news` and `notes` (no tool). `flat`: `web`
/// beside `news` at the thread's own fork.
const STORE_FAILS: &str = r#"
model m {
  provider = scripted
  fallback = { text: "unused" }
}

tool fetch(q: string "What to fetch") -> string {
  description = "Fetch one source."
  risk = low
  run = http(POST, "http://127.0.0.1:9/fetch", timeout: 30s)
}

agent planner {
  model  = m
  prompt = "Plan the research."
}
agent web {
  model  = m
  prompt = "Research topic web."
  tools  = [fetch]
}
agent desk {
  model  = m
  prompt = "Split the work as the planner."
}
agent news {
  model  = m
  prompt = "Research topic news."
  tools  = [fetch]
}
agent notes {
  model  = m
  prompt = "Take notes as the writer."
}
agent gather {
  model  = m
  prompt = "Gather the findings as the writer."
}
agent writer {
  model  = m
  prompt = "Write the report."
}

graph research {
  entry = planner
  nodes = [planner, web, desk, news, notes, gather, writer]

  parallel planner {
    branches = [web, desk]
    join     = writer
  }
  parallel desk {
    branches = [news, notes]
    join     = gather
  }
  web    -> writer
  news   -> gather
  notes  -> gather
  gather -> writer
  writer -> END
}

graph flat {
  entry = planner
  nodes = [planner, web, news, writer]

  parallel planner {
    branches = [web, news]
    join     = writer
  }
  web    -> writer
  news   -> writer
  writer -> END
}
"#;

/// Whether `receipts` store `news`'s result, and no call's in-flight marker (a commit of that
/// result alone: one that also sends a call would fail that call's branch too).
fn news_result_alone(receipts: &[Receipt]) -> bool {
    receipts
        .iter()
        .any(|receipt| receipt.key.ends_with(":news-1") && matches!(receipt.state, ReceiptState::Done { .. }))
        && !receipts
            .iter()
            .any(|receipt| matches!(receipt.state, ReceiptState::InFlight { .. }))
}

/// `graph` on a store that refuses the commit of `news`'s result once, with `web`'s call held
/// until the run is stopped: the run, once `web`'s call is held and the commit refused.
async fn news_result_refused(graph: &str) -> (Host, Arc<FailOnce>, Running) {
    let store = Arc::new(FailOnce::new(news_result_alone));
    let host = host_over(STORE_FAILS, store.clone());
    *host.service.hold_q.lock().unwrap() = Some("web".to_owned());
    let engine = host.engine.clone();
    let request = say_to(graph, "Research.");
    let running = tokio::spawn(async move { engine.run(request, &mut NullEvents).await });
    host.holding(1).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !store.failed() {
        assert!(std::time::Instant::now() < deadline, "news's result was committed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (host, store, running)
}

/// The commit of `news`'s result is refused (a store error): `news`'s step fails, and its branch
/// records the failure (`failed`: `news` at the thread's fork, or `desk`, whose nested fork that
/// failure fails at once). A stop then reaches `web`'s call, so the run is stopped and kept, not
/// failed. Nothing would ever finish `news`'s call in flight (its branch failed, and a nested
/// fork goes with its failed branch), so it becomes `outcome_unknown` in the failure's commit,
/// as a run's failure settles the run's calls, instead of staying in flight until the run ends.
/// `web`'s call, the stopped branch's, stays in flight; the next run sends it again under its
/// key, never `news`'s, and fails with the failure.
async fn a_store_error_beside_a_stopped_call(graph: &str, failed: &str) {
    let (host, _store, running) = news_result_refused(graph).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let thread = host.load().await;
        let recorded = thread
            .run
            .as_ref()
            .and_then(|run| run.fork.as_ref())
            .is_some_and(|fork| {
                fork.branches
                    .iter()
                    .any(|branch| branch.path == failed && matches!(branch.status, BranchStatus::Failed { .. }))
            });
        if recorded {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{failed} recorded its failure");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (web_key, news_key) = (host.service.keys_of("web"), host.service.keys_of("news"));
    assert_eq!((web_key.len(), news_key.len()), (1, 1));
    assert!(host.engine.stop("t"));
    stopped(running).await;
    kept_not_running(&host).await;
    assert_eq!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::OutcomeUnknown,
        "the failed branch's call is settled, not left in flight"
    );
    let in_flight: Vec<String> = host
        .store
        .in_flight("t")
        .await
        .unwrap()
        .into_iter()
        .map(|receipt| receipt.key)
        .collect();
    assert_eq!(in_flight, web_key, "only the stopped branch's call stays in flight");
    let unknown = host.records_with("outcome_unknown").await;
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0]["idempotency_key"], json!(news_key[0]));
    let reason = unknown[0]["reason"].as_str().unwrap();
    assert!(reason.contains("branch failed"), "{reason}");

    host.service.hold.store(false, Ordering::SeqCst);
    let error = host
        .engine
        .run(say_to(graph, "Go on."), &mut NullEvents)
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Storage, "{error:?}");
    assert!(error.message.contains(&format!("branch `{failed}`")), "{error:?}");
    assert_eq!(
        host.service.keys_of("web"),
        [web_key[0].clone(), web_key[0].clone()],
        "once more, under the same key"
    );
    assert_eq!(host.service.keys_of("news"), news_key, "never sent again");
    assert_eq!(host.outcomes(&news_key).await, ["outcome_unknown"]);
    assert!(host.store.in_flight("t").await.unwrap().is_empty());
    let thread = host.load().await;
    assert!(thread.run.is_none() && thread.stopped_run.is_none(), "at rest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_failing_with_a_store_error_in_its_inner_fork_leaves_none_of_its_calls_in_flight() {
    a_store_error_beside_a_stopped_call("research", "desk").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_failing_with_a_store_error_beside_a_stop_leaves_none_of_its_calls_in_flight() {
    a_store_error_beside_a_stopped_call("flat", "news").await;
}
