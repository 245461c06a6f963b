//! Forks nest, end to end in process: a `map` runs a subgraph once per item, a branch runs a
//! subgraph that forks again, and an agent inside a branch calls an agent as a tool. The branches
//! at every depth run at the same time (tools that answer only once all their calls are in
//! progress prove it), each step of each is checkpointed inside its parent's branch, a question
//! asked three levels down pauses the thread with its own interrupt id and the whole path to it,
//! a refused answer records nothing, and a crash inside a nested fork re-sends only the call of
//! the unfinished inner branch, under its key.

use std::sync::Arc;

use serde_json::{Value, json};
use tenx_engine::ErrorCode;
use tenx_engine::ports::{Event, Store};
use tenx_engine::testing::FakeTools;
use tenx_engine::thread::BranchStatus;
use tenx_engine::wire::{ExecutionStatus, Role};

use crate::harness::{Gate, Host, Models, assistant_texts, compile, crash_mid_fan_out, dev, gated_engine};

/// A digest: `splitter` cuts the report into sections, a `map` runs the subgraph `section_team`
/// once per section (its `drafter` fetches the section's sources, the section bound from state,
/// and summarises them), and `combine` writes the digest from the summaries, appended in item
/// order.
const DIGEST: &str = r#"
model split_model {
  provider = scripted
  turns    = [{ text: "\{\"sections\": [\"tides\", \"waves\", \"storms\"]\}" }]
}
model draft_model {
  provider = scripted
  turns    = [{ tool: "fetch", arguments: {} }, { text: "\{\"summaries\": [\"{result}\"]\}" }]
}
model combine_model {
  provider = scripted
  turns    = [{ text: "The digest." }]
}

schema sections = {
  "type": "object",
  "properties": { "sections": { "type": "array", "items": { "type": "string" } } },
  "required": ["sections"]
}
schema summaries = {
  "type": "object",
  "properties": { "summaries": { "type": "array", "items": { "type": "string" } } },
  "required": ["summaries"]
}

tool fetch(section: string "The section whose sources to fetch") -> string {
  description = "Fetch the sources of a section."
  risk = low
  bind = { section: state.section }
  run  = http(POST, "${SEARCH_URL}/fetch", timeout: 5s)
}

agent splitter {
  model  = split_model
  prompt = "Cut {report} into sections."
  output = sections
}
agent drafter {
  model  = draft_model
  prompt = "Summarise the sources of {section}."
  tools  = [fetch]
  output = summaries
}
agent combine {
  model  = combine_model
  prompt = "Write the digest from {summaries}."
}

graph section_team {
  entry = drafter
  nodes = [drafter]

  state {
    section: string "The section this team summarises"
    summaries: list<string> = [] "Its summary"
  }

  drafter -> END
}

graph digest {
  entry     = splitter
  nodes     = [splitter, section_team, combine]
  reduce    = { summaries: append }
  subgraphs = { section_team: { input: { section: section }, output: { summaries: summaries } } }

  state {
    report: string = "the sea" "What to digest"
    sections: list<string> = [] "The report's sections"
    section?: string "The section one branch summarises"
    summaries: list<string> = [] "One summary per section"
  }

  map splitter {
    over = sections
    item = section
    node = section_team
    join = combine
  }
  section_team -> combine
  combine      -> END
}
"#;

/// The nodes the stream said started, in order.
fn started(host: &Host) -> Vec<String> {
    host.events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            Event::NodeStarted { node, .. } => Some(node),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_map_runs_a_subgraph_once_per_item_at_the_same_time() {
    // `fetch` answers only once all three sections' calls are in progress together.
    let tools = FakeTools::new().gathers("fetch", 3).responds("fetch", |call| {
        Ok(json!(format!(
            "sources on {}",
            call.arguments["section"].as_str().unwrap_or("?")
        )))
    });
    let host = Host::from_artifact(compile(DIGEST), tools, Models::Scripted, dev());
    let done = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        host.say_to("digest", "d1", "Digest the sea."),
    )
    .await
    .expect("the sections' subgraphs did not run at the same time")
    .unwrap();
    assert_eq!(
        done.thread.execution.status,
        ExecutionStatus::Completed,
        "{:#?}",
        done.thread.execution
    );
    // Each item's subgraph read its own section, bound from the state the map gave it.
    let mut sections: Vec<String> = host
        .tools
        .calls()
        .iter()
        .map(|call| call.arguments["section"].as_str().unwrap_or_default().to_owned())
        .collect();
    sections.sort();
    assert_eq!(sections, ["storms", "tides", "waves"]);
    assert_eq!(host.tools.duplicate_keys(), Vec::<(String, String)>::new());
    let keys: std::collections::BTreeSet<String> = host
        .tools
        .calls()
        .iter()
        .map(|call| call.idempotency_key.clone())
        .collect();
    assert_eq!(keys.len(), 3, "one key per item's call: {keys:?}");
    // The subgraphs' outputs came back and were appended in item order, not finishing order.
    assert_eq!(
        done.thread.state["summaries"],
        json!(["sources on tides", "sources on waves", "sources on storms"])
    );
    assert!(
        done.thread.state.get("section").is_none(),
        "the map's item is not merged"
    );
    // The stream names each inner node by the subgraph node it runs in.
    let nodes = started(&host);
    assert_eq!(nodes.first().map(String::as_str), Some("splitter"));
    assert_eq!(nodes.last().map(String::as_str), Some("combine"));
    assert_eq!(
        nodes.iter().filter(|node| *node == "section_team/drafter").count(),
        3,
        "{nodes:?}"
    );
    // And each event of an item's branch names the branch, item index included, at every depth.
    let mut branches: Vec<(String, Option<String>)> = host
        .events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            Event::NodeStarted { node, branch, .. } => Some((node, branch)),
            Event::ToolCall { tool, branch, .. } => Some((format!("call {tool}"), branch)),
            _ => None,
        })
        .collect();
    branches.sort();
    let on = |path: &str| Some(path.to_owned());
    assert_eq!(
        branches,
        [
            ("call fetch".to_owned(), on("section_team[0]/section_team")),
            ("call fetch".to_owned(), on("section_team[1]/section_team")),
            ("call fetch".to_owned(), on("section_team[2]/section_team")),
            ("combine".to_owned(), None),
            ("section_team".to_owned(), on("section_team[0]")),
            ("section_team".to_owned(), on("section_team[1]")),
            ("section_team".to_owned(), on("section_team[2]")),
            ("section_team/drafter".to_owned(), on("section_team[0]/section_team")),
            ("section_team/drafter".to_owned(), on("section_team[1]/section_team")),
            ("section_team/drafter".to_owned(), on("section_team[2]/section_team")),
            ("splitter".to_owned(), None),
        ]
    );
    // The messages each item's subgraph added name its branch too.
    let mut added_in: Vec<Option<String>> = host
        .events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Message { message, branch } if message.role == Role::Tool => Some(branch),
            _ => None,
        })
        .collect();
    added_in.sort();
    assert_eq!(
        added_in,
        [
            on("section_team[0]/section_team"),
            on("section_team[1]/section_team"),
            on("section_team[2]/section_team"),
        ]
    );
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(texts.last().map(String::as_str), Some("The digest."));
    let record = host.store.load("d1").await.unwrap().unwrap();
    assert!(record.run.is_none(), "the run finished");
}

/// A desk whose `intake` forks into `research` (a subgraph node that forks again) and `legal`;
/// `web`, inside the subgraph, publishes behind an approval.
const DESK: &str = include_str!("../common/nested_desk.tenx");

fn desk() -> tenx_artifact::LoadedArtifact {
    compile(DESK)
}

#[tokio::test]
async fn a_question_three_forks_down_pauses_the_thread_and_its_answer_finishes_every_level() {
    // The three searches (web and papers inside the lab, legal beside it) are in progress
    // together before any answers.
    let tools = FakeTools::new()
        .gathers("search", 3)
        .responds("search", |call| {
            Ok(json!(format!("found {}", call.arguments["q"].as_str().unwrap_or("?"))))
        })
        .returns("publish", json!("published"));
    let host = Host::from_artifact(desk(), tools, Models::Scripted, dev());
    let paused = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        host.say_to("desk", "k1", "Work on tides."),
    )
    .await
    .expect("the searches at every depth did not run at the same time")
    .unwrap();
    assert_eq!(
        paused.thread.execution.status,
        ExecutionStatus::InterruptedBefore,
        "{:#?}",
        paused.thread.execution
    );
    let pending = paused.thread.pending.as_ref().unwrap();
    assert_eq!(pending.branch.as_deref(), Some("research"));
    assert_eq!(
        pending.within,
        ["research", "web"],
        "the subgraph's branch, then the lab's"
    );
    assert_eq!(host.tools.calls_of("search"), 3);
    assert_eq!(host.tools.calls_of("publish"), 0);
    // Everything that could go on did: `legal` ended, and so did `papers` inside the lab.
    let stored = host.store.load("k1").await.unwrap().unwrap();
    let fork = stored.run.as_ref().unwrap().fork.as_ref().unwrap();
    let statuses: Vec<(&str, &BranchStatus)> = fork.branches.iter().map(|b| (b.path.as_str(), &b.status)).collect();
    assert_eq!(
        statuses,
        [("research", &BranchStatus::Running), ("legal", &BranchStatus::Done)]
    );
    let subgraph = &fork.branches[0].inner.as_ref().unwrap().fork;
    assert_eq!(subgraph.subgraph.as_deref(), Some("research"));
    let lab = &subgraph.branches[0].inner.as_ref().unwrap().fork;
    let lab_statuses: Vec<(&str, &BranchStatus)> = lab.branches.iter().map(|b| (b.path.as_str(), &b.status)).collect();
    assert_eq!(
        lab_statuses,
        [("web", &BranchStatus::Running), ("papers", &BranchStatus::Done)]
    );
    // A wrong id is refused and records nothing.
    let before = host.snapshot("k1").await;
    let wrong = host.approve_on("desk", "k1", "int_nope", true).await.unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InterruptMismatch);
    assert_eq!(host.snapshot("k1").await, before, "a refused answer records nothing");
    let id = host.open_interrupt("k1").await;
    let done = host.approve_on("desk", "k1", &id, true).await.unwrap();
    assert_eq!(
        done.thread.execution.status,
        ExecutionStatus::Completed,
        "{:#?}",
        done.thread.execution
    );
    assert_eq!(host.tools.calls_of("publish"), 1);
    assert_eq!(done.thread.state["report"], json!("written"));
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(texts.first().map(String::as_str), Some("Splitting the work."));
    assert_eq!(texts.last().map(String::as_str), Some("Wrapped up."));
    assert!(
        texts.iter().any(|text| text == "Legal: found legal."),
        "the legal branch's messages joined: {texts:#?}"
    );
    // The approval was recorded once, as asked three forks down.
    let approvals: Vec<Value> = host
        .records("k1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "approval")
        .collect();
    assert_eq!(approvals.len(), 1, "{approvals:#?}");
    let nodes = started(&host);
    for inner in ["research/lead", "research/web", "research/papers", "research/writeup"] {
        assert!(nodes.iter().any(|node| node == inner), "{inner} in {nodes:?}");
    }
    assert_eq!(host.tools.duplicate_keys(), Vec::<(String, String)>::new());
}

/// An orchestrator inside a parallel branch calls `refunder` as a tool; the refund inside it
/// asks for an approval, which pauses the thread from inside the branch and the call.
const ORCHESTRA: &str = r#"
import std.approval.yes_no

model intake_model {
  provider = scripted
  turns    = [{ text: "Two desks." }]
}
model orchestrator_model {
  provider = scripted
  turns    = [{ tool: "refunder", arguments: { input: "order 1042" } }, { text: "Done: {result}" }]
}
model refunder_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "1042" } }, { text: "Refunded 1042." }]
}
model notes_model {
  provider = scripted
  turns    = [{ text: "Noted." }]
}

tool refund(order_id: string "The order") -> string {
  description = "Refund an order."
  risk = high
  idempotency_key = "refund-{order_id}"
  approval {
    message   = "Refund order {order_id}?"
    response  = yes_no
    on_reject = "Refund declined."
    separate_duties = false
  }
  run = http(POST, "${PAYMENTS_URL}/refunds", timeout: 5s)
}

agent intake {
  model  = intake_model
  prompt = "Split the work."
}
agent orchestrator {
  model  = orchestrator_model
  prompt = "Use your agents."
  agents = [refunder]
}
agent refunder {
  model  = refunder_model
  prompt = "Refund the order you are given."
  tools  = [refund]
}
agent notes {
  model  = notes_model
  prompt = "Take notes."
}

graph desk {
  entry = intake
  nodes = [intake, orchestrator, notes]

  parallel intake {
    branches = [orchestrator, notes]
    join     = END
  }
  orchestrator -> END
  notes        -> END
}
"#;

#[tokio::test]
async fn an_agent_called_as_a_tool_inside_a_branch_asks_its_question_and_answers_the_call() {
    let tools = FakeTools::new().returns("refund", json!("refund ok"));
    let host = Host::from_artifact(compile(ORCHESTRA), tools, Models::Scripted, dev());
    let paused = host.say_to("desk", "o1", "Refund 1042.").await.unwrap();
    assert_eq!(
        paused.thread.execution.status,
        ExecutionStatus::InterruptedBefore,
        "{:#?}",
        paused.thread.execution
    );
    let pending = paused.thread.pending.as_ref().unwrap();
    assert_eq!(pending.branch.as_deref(), Some("orchestrator"));
    assert_eq!(pending.within.len(), 1);
    assert!(pending.within[0].starts_with("refunder@"), "{:?}", pending.within);
    assert_eq!(host.tools.calls_of("refund"), 0);
    let id = host.open_interrupt("o1").await;
    let done = host.approve_on("desk", "o1", &id, true).await.unwrap();
    assert_eq!(
        done.thread.execution.status,
        ExecutionStatus::Completed,
        "{:#?}",
        done.thread.execution
    );
    assert_eq!(host.tools.calls_of("refund"), 1);
    assert_eq!(host.tools.calls_for_key("o1", "refund-1042"), 1);
    let texts = assistant_texts(&done.thread.context);
    assert!(
        texts.iter().any(|text| text == "Done: Refunded 1042."),
        "the call's answer reached the orchestrator: {texts:#?}"
    );
    assert!(texts.iter().any(|text| text == "Noted."));
    // The called agent's conversation is kept in its record, not in the thread's.
    assert!(!texts.iter().any(|text| text == "Refunded 1042."), "{texts:#?}");
    let calls: Vec<Value> = host
        .records("o1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "agent_call")
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["fields"]["outcome"], json!("completed"));
}

#[tokio::test]
async fn a_crash_inside_a_subgraph_run_by_a_map_resends_only_the_unfinished_call() {
    let store = Arc::new(tenx_engine::MemoryStore::new());
    let gate = Gate::new("section", Some("storms"), "sources on");
    let first = gated_engine(compile(DIGEST), store.clone(), gate.clone());
    let request = tenx_engine::RunRequest {
        thread_id: Some("d".into()),
        graph: Some("digest".into()),
        messages: vec![crate::harness::user("Digest the sea.")],
        ..tenx_engine::RunRequest::default()
    };
    // Once the other two have finished and are checkpointed, "kill" it.
    crash_mid_fan_out(first, &gate, &store, request, 2).await;

    // The held call is in flight inside the subgraph that the storms item runs.
    let stored = store.load("d").await.unwrap().unwrap();
    let run = stored.run.as_ref().unwrap();
    let map = run.fork.as_ref().unwrap();
    let storms = map.branches.iter().find(|b| b.path == "section_team[2]").unwrap();
    assert_eq!(storms.status, BranchStatus::Running);
    let inner = storms
        .inner
        .as_ref()
        .expect("the item's subgraph is checkpointed in its branch");
    assert_eq!(inner.fork.subgraph.as_deref(), Some("section_team"));
    assert!(
        inner.branches["section_team"].in_flight.is_some(),
        "the storms fetch is in flight inside the subgraph"
    );
    assert_eq!(run.all_branches().iter().filter(|b| b.in_flight.is_some()).count(), 1);
    let before: Vec<(String, String)> = gate.calls.lock().unwrap().clone();
    assert_eq!(before.len(), 3);

    let again = Gate::new("section", None, "sources on");
    let second = gated_engine(compile(DIGEST), store.clone(), again.clone());
    let report = second
        .recover(&mut tenx_engine::testing::RecordingEvents::new())
        .await
        .unwrap();
    assert_eq!(report.outcome("d"), Some(&tenx_engine::RecoveryOutcome::Finished));
    let resent: Vec<(String, String)> = again.calls.lock().unwrap().clone();
    let storms_key = before
        .iter()
        .find(|(section, _)| section == "storms")
        .unwrap()
        .1
        .clone();
    assert_eq!(
        resent,
        [("storms".to_owned(), storms_key)],
        "only the unfinished item's call, under the same key; no finished item ran again"
    );
    let thread = store.load("d").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        thread.state["summaries"],
        json!(["sources on tides", "sources on waves", "sources on storms"])
    );
}

/// Two branches that each ask the client for something (`run = remote`): the thread pauses on
/// one remote call at a time, the client's result goes to the branch that made it, and the
/// branches meet once both have their results.
const DEVICES: &str = include_str!("../common/parallel_devices.tenx");

/// The remote call a run's answer asks the client to make: its id and arguments.
fn remote_call_in(messages: &[std::sync::Arc<tenx_engine::wire::Message>]) -> Option<(String, Value)> {
    messages.iter().rev().find_map(|message| {
        message.content.iter().find_map(|block| match block {
            tenx_engine::wire::ContentBlock::RemoteToolCall { id, args, .. } => Some((id.clone(), args.clone())),
            _ => None,
        })
    })
}

/// A tool message with the client's result for `call`.
fn result_for(thread: &str, call: &str, output: Value) -> tenx_engine::RunRequest {
    let mut message = tenx_engine::wire::Message::text("r1", tenx_engine::wire::Role::Tool, "", 0.0);
    message.content = vec![tenx_engine::wire::ContentBlock::ToolResult {
        call_id: call.into(),
        output,
        is_error: false,
        status: None,
    }];
    tenx_engine::RunRequest {
        thread_id: Some(thread.into()),
        messages: vec![message],
        ..tenx_engine::RunRequest::default()
    }
}

#[tokio::test]
async fn remote_calls_inside_branches_pause_the_thread_one_at_a_time_and_their_results_go_to_their_branches() {
    let host = Host::from_artifact(compile(DEVICES), FakeTools::new(), Models::Scripted, dev());
    let paused = host.say_to("devices", "r", "Read both.").await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedAfter);
    assert_eq!(
        paused.thread.execution.interrupt_reason.as_deref(),
        Some("remote_tool_call")
    );
    assert_eq!(paused.thread.pending.as_ref().unwrap().branch.as_deref(), Some("phone"));
    // The answer asks the client to run the phone's call, once.
    let (phone_call, phone_args) = remote_call_in(&paused.messages).expect("a remote call to run");
    assert_eq!(phone_args, json!({"sensor": "phone"}));
    let announced = host
        .events
        .events()
        .into_iter()
        .filter(|event| matches!(event, Event::Message { message, .. } if remote_call_in(&[std::sync::Arc::new(message.clone())]).is_some()))
        .count();
    assert_eq!(announced, 1, "the stream shows the open call once");
    // A new message is refused while a remote call waits, and so is a result for another call.
    let blocked = host.say_to("devices", "r", "hello?").await.unwrap_err();
    assert_eq!(blocked.code, ErrorCode::RemoteToolPending);
    let before = host.snapshot("r").await;
    let wrong = host.run(result_for("r", "bogus", json!("x"))).await.unwrap_err();
    assert_eq!(wrong.code, ErrorCode::ToolResultUnexpected);
    assert_eq!(host.snapshot("r").await, before, "a refused result records nothing");

    let next = host.run(result_for("r", &phone_call, json!("42 steps"))).await.unwrap();
    // The watch's call opens now.
    assert_eq!(next.thread.pending.as_ref().unwrap().branch.as_deref(), Some("watch"));
    let (watch_call, watch_args) = remote_call_in(&next.messages).expect("the next remote call");
    assert_eq!(watch_args, json!({"sensor": "watch"}));
    assert_ne!(watch_call, phone_call);
    // The phone's call was answered: a second result for it is a duplicate.
    let again = host
        .run(result_for("r", &phone_call, json!("43 steps")))
        .await
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::ToolResultDuplicate);

    let done = host.run(result_for("r", &watch_call, json!("60 bpm"))).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let texts = assistant_texts(&done.thread.context);
    assert!(texts.iter().any(|text| text == "Phone says 42 steps."), "{texts:#?}");
    assert!(texts.iter().any(|text| text == "Watch says 60 bpm."), "{texts:#?}");
    assert_eq!(texts.last().map(String::as_str), Some("Both read."));
    assert_eq!(host.tools.total_calls(), 0, "the server never ran the remote tool");
}

/// Forks nested `depth` deep: stage `k` forks out of `f{k}` into `l{k}` and `f{k + 1}`, joining at
/// `j{k}`, which leads to `j{k - 1}` (and `j0` to `END`); the deepest fork's branches are `l{last}`
/// and `m`. Every agent answers once with its own scripted model.
fn nested(depth: usize) -> String {
    use std::fmt::Write as _;
    let mut src = String::new();
    let agent = |src: &mut String, name: &str| {
        let _ = write!(
            src,
            "model {name}_model {{\n  provider = scripted\n  turns = [{{ text: \"{name} done\" }}]\n}}\nagent {name} {{\n  model  = {name}_model\n  prompt = \"Do {name}.\"\n}}\n"
        );
    };
    let mut nodes = Vec::new();
    for k in 0..depth {
        for name in [format!("f{k}"), format!("l{k}"), format!("j{k}")] {
            agent(&mut src, &name);
            nodes.push(name);
        }
    }
    agent(&mut src, "m");
    nodes.push("m".to_owned());
    let _ = write!(src, "graph nest {{\n  entry = f0\n  nodes = [{}]\n", nodes.join(", "));
    for k in 0..depth {
        let inner = if k + 1 == depth {
            "m".to_owned()
        } else {
            format!("f{}", k + 1)
        };
        let after = if k == 0 {
            "END".to_owned()
        } else {
            format!("j{}", k - 1)
        };
        let _ = write!(
            src,
            "  parallel f{k} {{\n    branches = [l{k}, {inner}]\n    join = j{k}\n  }}\n  l{k} -> j{k}\n  j{k} -> {after}\n"
        );
    }
    let _ = writeln!(src, "  m -> j{}\n}}", depth - 1);
    src
}

#[tokio::test]
async fn forks_nest_as_deep_as_the_limit_and_one_more_fails_the_run_with_fork_003() {
    let deepest = tenx_engine::MAX_NESTING;
    let host = Host::from_artifact(compile(&nested(deepest)), FakeTools::new(), Models::Scripted, dev());
    let done = host.say_to("nest", "n1", "Go.").await.unwrap();
    assert_eq!(
        done.thread.execution.status,
        ExecutionStatus::Completed,
        "{:#?}",
        done.thread.execution
    );
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(texts.first().map(String::as_str), Some("f0 done"));
    assert_eq!(texts.last().map(String::as_str), Some("j0 done"));
    assert!(
        texts.iter().any(|text| text == "m done"),
        "the deepest branch ran: {texts:#?}"
    );
    assert_eq!(texts.len(), 3 * deepest + 1, "every agent once: {texts:#?}");

    let host = Host::from_artifact(compile(&nested(deepest + 1)), FakeTools::new(), Models::Scripted, dev());
    let failed = host.say_to("nest", "n2", "Go.").await.unwrap_err();
    assert_eq!(failed.code, ErrorCode::ForkDepth, "{failed}");
    assert!(
        failed.message.contains(&format!("nest at most {deepest} deep")),
        "{}",
        failed.message
    );
    let thread = host.store.load("n2").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
    assert!(thread.run.is_none(), "the run ended");
}

/// An orchestrator calls `specialist` as a tool, which calls `refunder` as a tool in turn; the
/// refund inside asks for an approval two calls down.
const CHAIN: &str = r#"
import std.approval.yes_no

model orchestrator_model {
  provider = scripted
  turns    = [{ tool: "specialist", arguments: { input: "order 1042" } }, { text: "Orchestrator: {result}" }]
}
model specialist_model {
  provider = scripted
  turns    = [{ tool: "refunder", arguments: { input: "refund 1042" } }, { text: "Specialist: {result}" }]
}
model refunder_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "1042" } }, { text: "Refunder: {result}" }]
}

tool refund(order_id: string "The order") -> string {
  description = "Refund an order."
  risk = high
  idempotency_key = "refund-{order_id}"
  approval {
    message   = "Refund order {order_id}?"
    response  = yes_no
    on_reject = "Refund declined."
    separate_duties = false
  }
  run = http(POST, "${PAYMENTS_URL}/refunds", timeout: 5s)
}

agent orchestrator {
  model  = orchestrator_model
  prompt = "Use your agents."
  agents = [specialist]
}
agent specialist {
  model       = specialist_model
  prompt      = "Handle the order, with the refunder."
  description = "Handles an order"
  agents      = [refunder]
}
agent refunder {
  model  = refunder_model
  prompt = "Refund the order you are given."
  tools  = [refund]
}

graph desk {
  entry = orchestrator
  nodes = [orchestrator]

  orchestrator -> END
}
"#;

#[tokio::test]
async fn an_approval_two_agent_calls_down_pauses_the_thread_and_each_answer_returns_up_the_calls() {
    let tools = FakeTools::new().returns("refund", json!("refund ok"));
    let host = Host::from_artifact(compile(CHAIN), tools, Models::Scripted, dev());
    let paused = host.say_to("desk", "c1", "Refund 1042.").await.unwrap();
    assert_eq!(
        paused.thread.execution.status,
        ExecutionStatus::InterruptedBefore,
        "{:#?}",
        paused.thread.execution
    );
    let pending = paused.thread.pending.as_ref().unwrap();
    assert!(
        pending
            .branch
            .as_deref()
            .is_some_and(|path| path.starts_with("specialist@")),
        "{pending:?}"
    );
    assert_eq!(pending.within.len(), 1);
    assert!(pending.within[0].starts_with("refunder@"), "{:?}", pending.within);
    assert_eq!(host.tools.calls_of("refund"), 0);
    let before = host.snapshot("c1").await;
    let refused = host.approve_on("desk", "c1", "int_nope", true).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptMismatch);
    assert_eq!(host.snapshot("c1").await, before, "a refused answer records nothing");
    let id = host.open_interrupt("c1").await;
    let done = host.approve_on("desk", "c1", &id, true).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_for_key("c1", "refund-1042"), 1);
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(
        texts.last().map(String::as_str),
        Some("Orchestrator: Specialist: Refunder: refund ok"),
        "each answer went back up its call: {texts:#?}"
    );
    let calls: Vec<String> = host
        .records("c1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "agent_call")
        .map(|record| record["fields"]["agent"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(calls, ["refunder", "specialist"], "the inner call ends first");
}
