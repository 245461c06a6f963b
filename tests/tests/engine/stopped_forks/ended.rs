//! A stop's calls in flight that no run will finish: the thread's state cleared under them, or
//! their run ended under another artifact. Each becomes `outcome_unknown`, named by its own call,
//! and no receipt is left in flight.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tenx_engine::ports::{NullEvents, ReceiptState};
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{OnBusy, RecoveryOutcome, WriteOptions};

use super::PARALLEL;
use super::host::{Host, Kind, host, kept_not_running, say, stopped};

/// One researcher, no fork: a stop during its call leaves a placeholder in the conversation.
const SOLO: &str = r#"
model m {
  provider = scripted
  fallback = { text: "unused" }
}

tool fetch(q: string "What to fetch") -> string {
  description = "Fetch one source."
  risk = low
  run = http(POST, "http://127.0.0.1:9/fetch", timeout: 30s)
}

agent news {
  model  = m
  prompt = "Research topic news."
  tools  = [fetch]
}

graph solo {
  entry = news
  nodes = [news]

  news -> END
}
"#;

/// The call each `outcome_unknown` record names, by the key it names.
async fn unknown_calls(host: &Host) -> Vec<(String, Value)> {
    host.records_with("outcome_unknown")
        .await
        .into_iter()
        .map(|fields| {
            (
                fields["idempotency_key"].as_str().unwrap().to_owned(),
                fields["call_id"].clone(),
            )
        })
        .collect()
}

/// `named` in key order.
fn by_key(mut named: Vec<(String, Value)>) -> Vec<(String, Value)> {
    named.sort_by(|a, b| a.0.cmp(&b.0));
    named
}

/// No receipt of the thread is left in flight, and nothing lists it as unfinished.
async fn nothing_in_flight(host: &Host) {
    assert!(
        host.store.in_flight("t").await.unwrap().is_empty(),
        "no receipt in flight"
    );
    assert!(
        !host
            .store
            .unfinished()
            .await
            .unwrap()
            .iter()
            .any(|thread| thread == "t"),
        "the thread is not listed as unfinished"
    );
}

/// Clearing the state of a thread that keeps a stopped fork drops the run, so nothing would ever
/// finish its call in flight: the call becomes `outcome_unknown` (receipt and record, naming the
/// call), never sent again, and the next message starts a new run from the start node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clearing_a_thread_that_keeps_a_stopped_fork_settles_its_call_in_flight_as_outcome_unknown() {
    let host = host(PARALLEL, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let running = host.held_with(&host.service.arrived, 1).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    kept_not_running(&host).await;
    let news_key = host.service.keys_of("news");

    let cleared = host.engine.clear_state("t", &WriteOptions::default()).await.unwrap();
    assert!(cleared.stopped_run.is_none() && cleared.context.is_empty());
    assert_eq!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::OutcomeUnknown
    );
    nothing_in_flight(&host).await;
    assert_eq!(host.outcomes(&news_key).await, ["interrupted", "outcome_unknown"]);
    assert_eq!(unknown_calls(&host).await, [(news_key[0].clone(), json!("news-1"))]);
    let reason = host.records_with("outcome_unknown").await[0]["reason"].clone();
    assert!(reason.as_str().unwrap().contains("cleared"), "{reason}");

    host.service.hold.store(false, Ordering::SeqCst);
    let done = host
        .engine
        .run(say("Again.", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.models.asks("planner"), 2, "a new run, from the start node");
    let news = host.service.keys_of("news");
    assert_eq!(news.len(), 2);
    assert_ne!(news[1], news_key[0], "the settled call is never sent again");
    assert_eq!(host.outcomes(&news_key).await, ["interrupted", "outcome_unknown"]);
}

/// The same for a call cut short outside a fork: clearing drops its placeholder with the
/// conversation, so it is settled too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clearing_a_thread_with_a_call_cut_short_outside_a_fork_settles_it_as_outcome_unknown() {
    let host = host(SOLO, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let running = host.held_with(&host.service.arrived, 0).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    let news_key = host.service.keys_of("news");
    assert!(matches!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::InFlight { .. }
    ));

    host.engine.clear_state("t", &WriteOptions::default()).await.unwrap();
    assert_eq!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::OutcomeUnknown
    );
    nothing_in_flight(&host).await;
    assert_eq!(unknown_calls(&host).await, [(news_key[0].clone(), json!("news-1"))]);
}

/// Starts "Research." with every `fetch` held, and returns the run once both branches' calls are
/// held, with their keys (`web`'s, then `news`'s).
async fn both_held(host: &Host) -> (super::host::Running, String, String) {
    *host.service.hold_q.lock().unwrap() = Some("*".to_owned());
    let engine = host.engine.clone();
    let running = tokio::spawn(async move { engine.run(say("Research.", OnBusy::Wait), &mut NullEvents).await });
    host.holding(2).await;
    let (web, news) = (host.service.keys_of("web"), host.service.keys_of("news"));
    assert_eq!((web.len(), news.len()), (1, 1));
    (running, web[0].clone(), news[0].clone())
}

/// Two branches stopped with calls of one tool in flight, then the program changes: each call
/// becomes `outcome_unknown` under its own key, and each record names that call, not the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_another_artifact_each_kept_call_is_named_by_its_own_key_when_two_share_a_tool() {
    let host = host(PARALLEL, Kind::Memory).await.unwrap();
    let (running, web_key, news_key) = both_held(&host).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;

    let other = host.under_another_artifact(PARALLEL);
    host.service.hold.store(false, Ordering::SeqCst);
    let done = other.run(say("Go on.", OnBusy::Wait), &mut NullEvents).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        by_key(unknown_calls(&host).await),
        by_key(vec![(web_key, json!("web-1")), (news_key, json!("news-1"))])
    );
    nothing_in_flight(&host).await;
}

/// The same when a crash left the run and recovery under another artifact ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_under_another_artifact_names_each_call_in_flight_by_its_own_key() {
    let host = host(PARALLEL, Kind::Memory).await.unwrap();
    let (running, web_key, news_key) = both_held(&host).await;
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());

    let other = host.under_another_artifact(PARALLEL);
    let report = other.recover(&mut NullEvents).await.unwrap();
    assert!(
        matches!(report.outcome("t"), Some(RecoveryOutcome::Ended(_))),
        "{report:?}"
    );
    assert_eq!(
        by_key(unknown_calls(&host).await),
        by_key(vec![(web_key, json!("web-1")), (news_key, json!("news-1"))])
    );
    nothing_in_flight(&host).await;
}
