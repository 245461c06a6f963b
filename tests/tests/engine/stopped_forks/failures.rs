//! A branch that fails beside a stopped one, where the failure is a way its step cannot take (a
//! `map` that cannot start: too many items), at the thread's fork and in a fork nested in a
//! branch. The stop wins, as beside any failed branch: the run is stopped and kept, and the next
//! run finishes the stopped branch's call under its key, then fails with the failure. A failure
//! a branch cannot record in itself fails the run at once: its calls in flight become
//! `outcome_unknown`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tenx_engine::ports::{NullEvents, ReceiptState};
use tenx_engine::{ErrorCode, OnBusy, RunRequest};

use super::PARALLEL;
use super::host::{Kind, host, kept_not_running, say, say_to, stopped};

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
