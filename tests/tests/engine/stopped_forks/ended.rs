//! A stop's calls in flight that no run will finish: their run ended under another artifact.
//! Each becomes `outcome_unknown`, named by its own call, and no receipt is left in flight.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tenx_engine::ports::NullEvents;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{OnBusy, RecoveryOutcome};

use super::PARALLEL;
use super::host::{Host, Kind, host, say, stopped};

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
