//! A stop during a fork is a crash at the same moment: the run is kept as the crash keeps it,
//! and the thread's next run goes on with it (recovery never does, and nothing goes on by
//! itself). A branch whose call the stop cut short after it was sent finishes that call first,
//! under the same key and with the same arguments, before its model is asked anything; the
//! branches that had ended do not run again; the join merges them all. Over the memory store,
//! SQLite, and PostgreSQL when `TENX_TEST_DATABASE_URL` names one. Forks inside branches, agents
//! called as tools, tool nodes and another artifact: [`lanes`]; calls no run will finish (the
//! state cleared, another artifact): [`ended`]; failures beside a stop: [`failures`]; a question
//! beside a stop: [`questions`].

mod ended;
mod failing;
mod failures;
mod host;
mod lanes;
mod questions;

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tenx_engine::OnBusy;
use tenx_engine::ports::{NullEvents, ReceiptState};
use tenx_engine::thread::BranchStatus;
use tenx_engine::wire::ExecutionStatus;

use host::{Kind, host, kept_not_running, results, say, stopped};

/// Two researchers at once, then a writer. Every model is [`Researchers`].
const PARALLEL: &str = r#"
model m {
  provider = scripted
  fallback = { text: "unused" }
}

schema findings = {
  "type": "object",
  "properties": { "notes": { "type": "array", "items": { "type": "string" } } },
  "required": ["notes"]
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
  output = findings
}
agent news {
  model  = m
  prompt = "Research topic news."
  tools  = [fetch]
  output = findings
}
agent writer {
  model  = m
  prompt = "Write the report from {notes}."
}

graph research {
  entry  = planner
  nodes  = [planner, web, news, writer]
  reduce = { notes: append }

  state {
    notes: list<string> = [] "What the branches found"
  }

  parallel planner {
    branches = [web, news]
    join     = writer
  }
  web    -> writer
  news   -> writer
  writer -> END
}
"#;

/// One branch per item of `items`, then the writer.
const MAP: &str = r#"
model m {
  provider = scripted
  fallback = { text: "unused" }
}

schema findings = {
  "type": "object",
  "properties": { "notes": { "type": "array", "items": { "type": "string" } } },
  "required": ["notes"]
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
agent summarise {
  model  = m
  prompt = "Research topic {item}."
  tools  = [fetch]
  output = findings
}
agent writer {
  model  = m
  prompt = "Write the report from {notes}."
}

graph research {
  entry  = planner
  nodes  = [planner, summarise, writer]
  reduce = { notes: append }

  state {
    items: list<string> = ["a", "b", "c"] "What to research"
    item?: string "The item one branch researches"
    notes: list<string> = [] "What the branches found"
  }

  map planner {
    over = items
    item = item
    node = summarise
    join = writer
  }
  summarise -> writer
  writer    -> END
}
"#;

/// A parallel fork whose `news` call a stop cuts short after it was sent, while `web` has ended:
/// the next run (a new message after the stop, or a new message that cancels the run) sends
/// `news` once more under its key and goes on from there.
async fn a_branch_call_cut_short_is_finished_first(kind: Kind, on_busy: OnBusy) {
    let Some(host) = host(PARALLEL, kind).await else { return };
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let running = host.held_with(&host.service.arrived, 1).await;
    let (web_key, news_key) = (host.service.keys_of("web"), host.service.keys_of("news"));
    assert_eq!((web_key.len(), news_key.len()), (1, 1));
    let next = if on_busy == OnBusy::Cancel {
        host.service.hold.store(false, Ordering::SeqCst);
        let engine = host.engine.clone();
        let next = tokio::spawn(async move { engine.run(say("Go on.", OnBusy::Cancel), &mut NullEvents).await });
        stopped(running).await;
        tokio::time::timeout(Duration::from_secs(20), next)
            .await
            .unwrap()
            .unwrap()
            .unwrap()
    } else {
        assert!(host.engine.stop("t"));
        let output = stopped(running).await;
        let shown = serde_json::to_string(&output.thread.context).unwrap();
        assert!(
            !shown.contains("interrupted"),
            "no branch message joined the thread: {shown}"
        );
        assert!(matches!(
            host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
            ReceiptState::InFlight { .. }
        ));
        assert_eq!(host.outcomes(&news_key).await, ["interrupted"]);
        let kept = host.load().await.stopped_run.unwrap();
        let fork = kept.fork.as_ref().unwrap();
        let statuses: Vec<(&str, &BranchStatus)> = fork.branches.iter().map(|b| (b.path.as_str(), &b.status)).collect();
        assert_eq!(
            statuses,
            [("web", &BranchStatus::Done), ("news", &BranchStatus::Running)]
        );
        assert!(
            kept.branches["news"].in_flight.is_some(),
            "kept in flight, as a crash keeps it"
        );
        kept_not_running(&host).await;
        host.service.hold.store(false, Ordering::SeqCst);
        host.engine
            .run(say("Go on.", OnBusy::Wait), &mut NullEvents)
            .await
            .unwrap()
    };

    assert_eq!(next.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        host.service.keys_of("news"),
        [news_key[0].clone(), news_key[0].clone()],
        "once more, same key"
    );
    assert_eq!(
        host.service.keys_of("web"),
        web_key,
        "the ended branch's call is not sent again"
    );
    assert_eq!(host.outcomes(&news_key).await, ["interrupted", "resent", "completed"]);
    assert_eq!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::Done {
            result: json!("found news"),
            is_error: false
        }
    );
    let models = &host.models;
    assert_eq!(
        (
            models.asks("planner"),
            models.asks("web"),
            models.asks("news"),
            models.asks("writer")
        ),
        (1, 2, 2, 1),
        "the ended branch's model is not asked again; news is asked only once its call is done"
    );
    let news_saw = models.last_shown("news");
    assert_eq!(results(&news_saw), [json!("found news")], "the real result");
    assert!(
        news_saw.iter().any(|message| message.text_content() == "Go on."),
        "the new message joined the conversation before the branch went on"
    );
    assert!(
        !models.all_shown().contains("interrupted"),
        "no model saw a placeholder"
    );
    let thread = host.load().await;
    assert!(thread.stopped_run.is_none() && thread.run.is_none());
    assert_eq!(
        thread.state["notes"],
        json!(["web: found web", "news: found news"]),
        "merged in branch order"
    );
    assert_eq!(
        results(&thread.context),
        [json!("found web"), json!("found news")],
        "each result once"
    );
    assert_eq!(thread.context.last().unwrap().text_content(), "The report.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_during_a_branch_call_keeps_the_fork_and_the_next_run_sends_the_call_again_once() {
    a_branch_call_cut_short_is_finished_first(Kind::Memory, OnBusy::Wait).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_busy_cancel_during_a_branch_call_goes_on_with_the_fork_in_the_cancelling_run() {
    a_branch_call_cut_short_is_finished_first(Kind::Memory, OnBusy::Cancel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_fork_is_kept_and_gone_on_with_on_sqlite() {
    a_branch_call_cut_short_is_finished_first(Kind::Sqlite, OnBusy::Wait).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_fork_is_kept_and_gone_on_with_on_postgres() {
    a_branch_call_cut_short_is_finished_first(Kind::Postgres, OnBusy::Wait).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_during_a_map_items_call_sends_only_that_call_again() {
    let host = host(MAP, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("b".to_owned());
    let running = host.held_with(&host.service.arrived, 2).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    let b_key = host.service.keys_of("b");
    assert_eq!(host.outcomes(&b_key).await, ["interrupted"]);
    kept_not_running(&host).await;

    host.service.hold.store(false, Ordering::SeqCst);
    let done = host
        .engine
        .run(say("Go on.", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.service.keys_of("b"), [b_key[0].clone(), b_key[0].clone()]);
    assert_eq!(
        (host.service.keys_of("a").len(), host.service.keys_of("c").len()),
        (1, 1)
    );
    assert_eq!(host.outcomes(&b_key).await, ["interrupted", "resent", "completed"]);
    let models = &host.models;
    assert_eq!((models.asks("a"), models.asks("b"), models.asks("c")), (2, 2, 2));
    assert_eq!(results(&models.last_shown("b")), [json!("found b")]);
    assert_eq!(
        done.thread.state["notes"],
        json!(["a: found a", "b: found b", "c: found c"]),
        "merged in item order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_during_a_fork_with_no_call_in_flight_stops_and_the_next_run_goes_on_with_it() {
    let host = host(PARALLEL, Kind::Memory).await.unwrap();
    *host.models.hold_topic.lock().unwrap() = Some("news".to_owned());
    let running = host.held_with(&host.models.held, 1).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    assert!(host.store.in_flight("t").await.unwrap().is_empty(), "no call in flight");
    assert!(
        host.store.unfinished().await.unwrap().is_empty(),
        "nothing for recovery"
    );
    kept_not_running(&host).await;
    let recorded = host.outcomes(&host.service.keys_of("web")).await;
    assert_eq!(recorded, ["completed"]);

    let done = host
        .engine
        .run(say("Go on.", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        host.service.keys_of("web").len(),
        1,
        "the ended branch is not run again"
    );
    assert_eq!(host.service.keys_of("news").len(), 1);
    let models = &host.models;
    assert_eq!(
        (models.asks("web"), models.asks("news"), models.asks("writer")),
        (2, 3, 1)
    );
    assert_eq!(
        done.thread.state["notes"],
        json!(["web: found web", "news: found news"])
    );
}

/// A stop that reaches `news`'s call after `web` failed: the run is stopped, not failed, and keeps
/// the call in flight (a failed run would drop it, and the next run would send it again under a
/// new key); the next run finishes the call under its key, then fails with `web`'s failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_beside_a_failed_branch_keeps_the_call_in_flight_and_the_next_run_finishes_it() {
    let Some(host) = host(PARALLEL, Kind::Memory).await else {
        return;
    };
    *host.models.fail_topic.lock().unwrap() = Some("web".to_owned());
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let engine = host.engine.clone();
    let running = tokio::spawn(async move { engine.run(say("Research.", OnBusy::Wait), &mut NullEvents).await });
    tokio::time::timeout(Duration::from_secs(20), host.service.arrived.notified())
        .await
        .expect("news's call was sent");
    // Until `web`'s failure is stored beside the call in flight.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let thread = host.load().await;
        let failed = thread
            .run
            .as_ref()
            .and_then(|run| run.fork.as_ref())
            .is_some_and(|fork| {
                fork.branches
                    .iter()
                    .any(|branch| branch.path == "web" && matches!(branch.status, BranchStatus::Failed { .. }))
            });
        if failed {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "web failed");
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

    host.service.hold.store(false, Ordering::SeqCst);
    *host.models.fail_topic.lock().unwrap() = None;
    let next = host.engine.run(say("Go on.", OnBusy::Wait), &mut NullEvents).await;
    let error = next.unwrap_err();
    assert!(error.message.contains("branch `web`"), "{error:?}");
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
}

/// A new message that meets a run a crash left goes on with that run first; when that run then
/// fails (here `news`'s model refuses), the failure is recorded and the message is still served,
/// not refused with the old run's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_meeting_a_crashed_run_that_then_fails_is_still_served() {
    let Some(host) = host(PARALLEL, Kind::Memory).await else {
        return;
    };
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let crashed = host.held_with(&host.service.arrived, 1).await;
    crashed.abort();
    assert!(crashed.await.unwrap_err().is_cancelled());
    assert!(host.load().await.run.is_some(), "a run the crash left");
    host.service.hold.store(false, Ordering::SeqCst);
    *host.models.fail_topic.lock().unwrap() = Some("news".to_owned());
    let next = host
        .engine
        .run(say("Hello again.", OnBusy::Wait), &mut NullEvents)
        .await;
    let thread = host.load().await;
    let shown = serde_json::to_string(&thread.context).unwrap();
    assert!(
        shown.contains("Hello again."),
        "the message joined the thread: {next:?}"
    );
    assert!(thread.run.is_none(), "at rest");
    let news_key = &host.service.keys_of("news")[0];
    assert!(matches!(
        host.store.receipt("t", news_key).await.unwrap().unwrap().state,
        ReceiptState::Done { .. }
    ));
}

/// `on_busy = "cancel"` against a fork a crash left: the cancel stops the crashed run as a stop
/// stops a fork (kept whole, not dropped), so the cancelling message's own run goes on with it:
/// `news`'s call, in flight when the process died, is sent once more under its key, the ended
/// `web` branch is not run again, and the run completes with the message in the conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_busy_cancel_against_a_fork_a_crash_left_goes_on_with_it_in_the_cancelling_run() {
    let Some(host) = host(PARALLEL, Kind::Memory).await else {
        return;
    };
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let crashed = host.held_with(&host.service.arrived, 1).await;
    crashed.abort();
    assert!(crashed.await.unwrap_err().is_cancelled());
    assert!(host.load().await.run.is_some(), "a run the crash left");
    let (web_key, news_key) = (host.service.keys_of("web"), host.service.keys_of("news"));
    assert_eq!((web_key.len(), news_key.len()), (1, 1));
    host.service.hold.store(false, Ordering::SeqCst);
    let next = tokio::time::timeout(
        Duration::from_secs(20),
        host.engine.run(say("Go on.", OnBusy::Cancel), &mut NullEvents),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(next.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        host.service.keys_of("news"),
        [news_key[0].clone(), news_key[0].clone()],
        "once more, same key"
    );
    assert_eq!(
        host.service.keys_of("web"),
        web_key,
        "the ended branch is not run again"
    );
    assert_eq!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::Done {
            result: json!("found news"),
            is_error: false
        }
    );
    assert!(host.store.in_flight("t").await.unwrap().is_empty());
    let models = &host.models;
    assert_eq!(
        (
            models.asks("planner"),
            models.asks("web"),
            models.asks("news"),
            models.asks("writer")
        ),
        (1, 2, 2, 1),
        "no model is asked again for what the crashed run had done"
    );
    let thread = host.load().await;
    assert!(thread.stopped_run.is_none() && thread.run.is_none(), "at rest");
    let shown = serde_json::to_string(&thread.context).unwrap();
    assert!(shown.contains("Go on."), "the message joined the thread");
    assert_eq!(
        results(&thread.context),
        [json!("found web"), json!("found news")],
        "each result once"
    );
    assert_eq!(thread.context.last().unwrap().text_content(), "The report.");
}
