//! Stops deeper down: inside an agent called as a tool (at the thread's level, and inside a
//! branch), at a tool node of a branch, and a kept run met by another artifact.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tenx_engine::ports::{ModelClient, NullEvents, Ports, ReceiptState};
use tenx_engine::testing::ManualClock;
use tenx_engine::thread::BranchStatus;
use tenx_engine::wire::{ExecutionStatus, Role};
use tenx_engine::{Engine, EngineOptions, OnBusy};

use super::PARALLEL;
use super::host::{Kind, host, kept_not_running, say, say_to, stopped};
use crate::harness::{T0, user};

/// `boss` calls `researcher` as a tool; `researcher` fetches. At the thread's level
/// (`desk`), or inside a branch of a parallel fork beside `web` (`research`).
const AGENT_TOOL: &str = r#"
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
agent boss {
  model  = m
  prompt = "Answer with your researcher."
  agents = [researcher]
}
agent researcher {
  model       = m
  prompt      = "Research topic news."
  description = "Researches the news"
  tools       = [fetch]
}
agent writer {
  model  = m
  prompt = "Write the report."
}

graph desk {
  entry = boss
  nodes = [boss]

  boss -> END
}

graph research {
  entry = planner
  nodes = [planner, web, boss, writer]

  parallel planner {
    branches = [web, boss]
    join     = writer
  }
  web    -> writer
  boss   -> writer
  writer -> END
}
"#;

/// `web` beside `grab`, a tool node that fetches the state's `q`.
const TOOL_NODE: &str = r#"
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
agent writer {
  model  = m
  prompt = "Write the report."
}

graph research {
  entry = planner
  nodes = [planner, web, fetch, writer]

  state {
    q: string = "grab" "What the tool node fetches"
  }

  parallel planner {
    branches = [web, fetch]
    join     = writer
  }
  web    -> writer
  fetch  -> writer
  writer -> END
}
"#;

/// An agent called as a tool whose own call a stop cuts short: the calling agent's turn stays
/// open until the next run finishes the call, answers the agent's call with what the agent
/// then says, and only then asks the calling agent's model. A message posted or sent meanwhile
/// goes before the open turn, so the turn and its results stay together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_inside_an_agent_called_as_a_tool_keeps_the_call_and_the_next_run_answers_it() {
    let host = host(AGENT_TOOL, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let running = host
        .held_in(say_to("desk", "Research."), &host.service.arrived, 0)
        .await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    kept_not_running(&host).await;
    let news_key = host.service.keys_of("news");
    let options = tenx_engine::WriteOptions::default();
    host.engine
        .post_messages("t", vec![user("Also this.")], &options)
        .await
        .unwrap();

    host.service.hold.store(false, Ordering::SeqCst);
    let done = host
        .engine
        .run(say_to("desk", "Go on."), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.service.keys_of("news"), [news_key[0].clone(), news_key[0].clone()]);
    assert_eq!(host.outcomes(&news_key).await, ["interrupted", "resent", "completed"]);
    assert_eq!((host.models.asks("boss"), host.models.asks("news")), (2, 2));
    let texts: Vec<(Role, String)> = done
        .thread
        .context
        .iter()
        .map(|message| (message.role, message.text_content()))
        .collect();
    let roles: Vec<Role> = texts.iter().map(|(role, _)| *role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::User,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant
        ],
        "the messages sent while the turn was open went before it: {texts:#?}"
    );
    assert_eq!(texts[1].1, "Also this.");
    assert_eq!(texts[2].1, "Go on.");
    assert!(texts[5].1.starts_with("Boss: "), "{texts:#?}");
    assert!(texts[5].1.contains("news: found news"), "{texts:#?}");
    assert!(!host.models.all_shown().contains("interrupted"));
}

/// The same inside a branch of a parallel fork: the fork inside the branch is kept with it, and
/// the branch that ended does not run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_two_forks_down_keeps_both_and_the_next_run_finishes_the_call_once() {
    let host = host(AGENT_TOOL, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let running = host
        .held_in(say_to("research", "Research."), &host.service.arrived, 1)
        .await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    let kept = host.load().await.stopped_run.unwrap();
    let boss = &kept.fork.as_ref().unwrap().branches[1];
    assert_eq!(boss.status, BranchStatus::Running);
    assert!(boss.inner.is_some(), "the agent's call is kept inside the branch");
    let news_key = host.service.keys_of("news");

    host.service.hold.store(false, Ordering::SeqCst);
    let done = host
        .engine
        .run(say_to("research", "Go on."), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.service.keys_of("news"), [news_key[0].clone(), news_key[0].clone()]);
    assert_eq!(host.service.keys_of("web").len(), 1);
    let models = &host.models;
    assert_eq!(
        (models.asks("web"), models.asks("boss"), models.asks("news")),
        (2, 2, 2)
    );
    assert_eq!(done.thread.context.last().unwrap().text_content(), "The report.");
}

/// Under another artifact the kept run is not gone on with (D16): its call in flight becomes
/// `outcome_unknown`, never sent again, as recovery ends a run another artifact left, and the
/// new message starts a new run from the start node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_fork_is_ended_not_gone_on_with_under_another_artifact() {
    let host = host(PARALLEL, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("news".to_owned());
    let running = host.held_with(&host.service.arrived, 1).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    let news_key = host.service.keys_of("news");

    let changed = crate::harness::compile_patched(PARALLEL, |artifact| {
        let writer = artifact.agents.get_mut("writer").unwrap();
        writer.prompt = "Write the report, briefly, from {notes}.".to_owned();
    });
    let mut clients: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    clients.insert("m".to_owned(), host.models.clone());
    let ports = Ports {
        store: host.store.clone(),
        models: clients,
        tools: host.service.clone(),
        clock: Arc::new(ManualClock::new(T0)),
        ids: host.ids.clone(),
    };
    let other = Engine::new(changed, ports, EngineOptions::default()).unwrap();
    assert_ne!(other.artifact_id(), host.engine.artifact_id());
    host.service.hold.store(false, Ordering::SeqCst);
    let done = other.run(say("Go on.", OnBusy::Wait), &mut NullEvents).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        host.store.receipt("t", &news_key[0]).await.unwrap().unwrap().state,
        ReceiptState::OutcomeUnknown
    );
    let ended: Vec<Value> = host
        .store
        .records("t")
        .await
        .unwrap()
        .into_iter()
        .filter(|record| record.kind == "tool_call" && record.fields["idempotency_key"] == json!(news_key[0]))
        .map(|record| record.fields)
        .collect();
    assert_eq!(ended[0]["outcome"], "interrupted");
    assert_eq!(ended[1]["outcome"], "outcome_unknown");
    assert_eq!(ended[1]["reason"], "GRAPH_VERSION_MISMATCH");
    assert_eq!(host.models.asks("planner"), 2, "a new run, from the start node");
    assert!(host.load().await.stopped_run.is_none());
}

/// A tool node's call cut short in a branch is kept as a crash keeps it: neither the call nor a
/// result is written yet. The next run sends it again once, writes the call and its real
/// result, and takes the node's way on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_nodes_call_cut_short_in_a_branch_is_sent_again_once_and_the_branch_goes_on() {
    let host = host(TOOL_NODE, Kind::Memory).await.unwrap();
    *host.service.hold_q.lock().unwrap() = Some("grab".to_owned());
    let running = host.held_with(&host.service.arrived, 1).await;
    assert!(host.engine.stop("t"));
    stopped(running).await;
    kept_not_running(&host).await;
    let kept = host.load().await.stopped_run.unwrap();
    let grab = &kept.fork.as_ref().unwrap().branches[1];
    assert!(
        grab.messages.is_empty(),
        "no call and no placeholder written: {:#?}",
        grab.messages
    );
    assert!(kept.branches["fetch"].in_flight.is_some());
    let key = host.service.keys_of("grab");

    host.service.hold.store(false, Ordering::SeqCst);
    let done = host
        .engine
        .run(say("Go on.", OnBusy::Wait), &mut NullEvents)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.service.keys_of("grab"), [key[0].clone(), key[0].clone()]);
    assert_eq!(host.service.keys_of("web").len(), 1);
    assert_eq!(host.outcomes(&key).await, ["interrupted", "resent", "completed"]);
    let outputs = super::host::results(&done.thread.context);
    assert_eq!(
        outputs,
        [json!("found web"), json!("found grab")],
        "each call and result once"
    );
    assert_eq!(done.thread.context.last().unwrap().text_content(), "The report.");
}
