//! A question beside a stop: one branch waits at a question while a stop cuts another's call
//! short, at the thread's fork and in a fork nested in a branch. The stop wins, as a crash at
//! that moment would leave it: the run is stopped and kept with the question still in its branch
//! (not open: the fork never settled on it), and the next run finishes the call under its key
//! before the fork settles and pauses on the question.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tenx_engine::ports::{NullEvents, ReceiptState};
use tenx_engine::thread::{ForkProgress, Pending};
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{ResumeAnswer, RunRequest};

use super::host::{Host, Kind, host, kept_not_running, say_to, stopped};

/// `research`: `web` beside `desk`, which forks into `news` and `check` (an interrupt node).
/// `flat`: `news` beside `check` at the thread's own fork.
const QUESTION: &str = r#"import std.approval.yes_no

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
agent gather {
  model  = m
  prompt = "Gather the findings as the writer."
}
agent writer {
  model  = m
  prompt = "Write the report."
}

interrupt check {
  message   = "Go on?"
  response  = yes_no
  on_reject = "Not gone on."
}

graph research {
  entry = planner
  nodes = [planner, web, desk, news, check, gather, writer]

  parallel planner {
    branches = [web, desk]
    join     = writer
  }
  parallel desk {
    branches = [news, check]
    join     = gather
  }
  web    -> writer
  news   -> gather
  check  -> gather
  gather -> writer
  writer -> END
}

graph flat {
  entry = planner
  nodes = [planner, news, check, writer]

  parallel planner {
    branches = [news, check]
    join     = writer
  }
  news   -> writer
  check  -> writer
  writer -> END
}
"#;

/// The question a branch of `fork` waits at, at any depth.
fn waiting(fork: &ForkProgress) -> Option<&Pending> {
    fork.branches.iter().find_map(|branch| {
        branch
            .pending
            .as_deref()
            .or_else(|| branch.inner.as_ref().and_then(|inner| waiting(&inner.fork)))
    })
}

/// `graph` stopped while `check` waits at its question and `news`'s call is held; then gone on
/// with and answered. `path` is where the question is asked: the thread's branch, then the
/// paths below it.
async fn a_question_beside_a_stop_is_kept_until_the_call_is_finished(graph: &str, path: (&str, &[&str])) {
    let host: Host = host(QUESTION, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let engine = host.engine.clone();
    let request = say_to(graph, "Research.");
    let running = tokio::spawn(async move { engine.run(request, &mut NullEvents).await });
    host.holding(1).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let thread = host.load().await;
        if thread
            .run
            .as_ref()
            .and_then(|run| run.fork.as_ref())
            .is_some_and(|fork| waiting(fork).is_some())
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "check asked its question");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let news_key = host.service.keys_of("news");
    assert!(host.engine.stop("t"));
    let output = stopped(running).await;
    assert!(output.thread.pending.is_none(), "no question is open");
    assert!(
        host.store.open_questions().await.unwrap().is_empty(),
        "nobody is asked yet"
    );
    kept_not_running(&host).await;
    assert!(matches!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::InFlight { .. }
    ));
    assert_eq!(host.outcomes(&news_key).await, ["interrupted"]);
    let kept = host.load().await.stopped_run.unwrap();
    let asked = waiting(kept.fork.as_ref().unwrap())
        .expect("the question is kept in its branch")
        .interrupt
        .clone()
        .unwrap()
        .id;

    // The kept question is not open: an answer to it is refused and changes nothing.
    let before = host.load().await;
    let records_before = host.store.records("t").await.unwrap();
    let early = RunRequest {
        resume: Some(ResumeAnswer {
            value: json!({"approved": true}),
            interrupt_id: Some(asked.clone()),
            note: None,
        }),
        messages: Vec::new(),
        ..say_to(graph, "")
    };
    let refused = host.engine.run(early, &mut NullEvents).await.unwrap_err();
    assert_eq!(refused.code, tenx_engine::ErrorCode::NothingToResume, "{refused:?}");
    assert_eq!(
        host.load().await,
        before,
        "the refused answer leaves the thread as it was"
    );
    assert_eq!(
        host.store.records("t").await.unwrap(),
        records_before,
        "and records nothing"
    );
    assert_eq!(host.service.keys_of("news").len(), 1, "nothing is sent for it");

    // The next run finishes the call first, then pauses on the question it kept.
    host.service.hold.store(false, Ordering::SeqCst);
    let paused = host.engine.run(say_to(graph, "Go on."), &mut NullEvents).await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let pending = paused.thread.pending.unwrap();
    assert_eq!(
        pending.interrupt.unwrap().id,
        asked,
        "the question asked before the stop"
    );
    assert_eq!(pending.branch.as_deref(), Some(path.0));
    assert_eq!(pending.within, path.1);
    assert_eq!(
        host.service.keys_of("news"),
        [news_key[0].clone(), news_key[0].clone()],
        "once more, under the same key"
    );
    assert_eq!(host.outcomes(&news_key).await, ["interrupted", "resent", "completed"]);
    assert!(host.store.in_flight("t").await.unwrap().is_empty());

    let answer = RunRequest {
        resume: Some(ResumeAnswer {
            value: json!({"approved": true}),
            interrupt_id: Some(asked),
            note: None,
        }),
        messages: Vec::new(),
        ..say_to(graph, "")
    };
    let done = host.engine.run(answer, &mut NullEvents).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.service.keys_of("news").len(), 2, "not sent a third time");
    let thread = host.load().await;
    assert!(thread.run.is_none() && thread.stopped_run.is_none(), "at rest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_beside_a_stop_at_the_threads_fork_waits_until_the_stopped_call_is_finished() {
    a_question_beside_a_stop_is_kept_until_the_call_is_finished("flat", ("check", &[])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_beside_a_stop_in_a_nested_fork_waits_until_the_stopped_call_is_finished() {
    a_question_beside_a_stop_is_kept_until_the_call_is_finished("research", ("desk", &["check"])).await;
}
