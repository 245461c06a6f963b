//! Parallel branches, end to end in process: a fork runs its branches at the same time (a tool
//! that only answers once all three calls are in progress proves it), each with its own state
//! and conversation, merges them at the join in branch order whatever order they finished in,
//! asks the approvals inside branches one at a time with their own interrupt ids, and maps a
//! node over a list with a cap on width.

use serde_json::{Value, json};
use tenx_artifact::{Fork, ForkKind, Reduce, Reducer};
use tenx_engine::ports::Store;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ExecutionStatus, Role};
use tenx_engine::{ErrorCode, Identity};

use crate::harness::{Gate, Host, Models, assistant_texts, compile_patched, crash_mid_fan_out, dev, gated_engine};

/// Three researchers; the route out of `planner` only makes every node reachable for the
/// compiler and is replaced by the fork.
const RESEARCH: &str = r#"
model plan_model {
  provider = scripted
  turns    = [{ text: "Three angles: web, papers, news." }]
}
model web_model {
  provider = scripted
  turns    = [{ tool: "search", arguments: { q: "web" } }, { text: "\{\"notes\": [\"web: {result}\"]\}" }]
}
model papers_model {
  provider = scripted
  turns    = [{ tool: "search", arguments: { q: "papers" } }, { text: "\{\"notes\": [\"papers: {result}\"]\}" }]
}
model news_model {
  provider = scripted
  turns    = [{ tool: "search", arguments: { q: "news" } }, { text: "\{\"notes\": [\"news: {result}\"]\}" }]
}
model writer_model {
  provider = scripted
  turns    = [{ text: "The report." }]
}

schema findings = {
  "type": "object",
  "properties": { "notes": { "type": "array", "items": { "type": "string" } } },
  "required": ["notes"]
}

tool search(q: string "What to look for") -> string {
  description = "Search one kind of source."
  risk = low
  run  = http(POST, "${SEARCH_URL}/search", timeout: 5s)
}

agent planner {
  model  = plan_model
  prompt = "Plan the research on {topic}."
}
agent web {
  model  = web_model
  prompt = "Search the web about {topic}."
  tools  = [search]
  output = findings
}
agent papers {
  model  = papers_model
  prompt = "Search papers about {topic}."
  tools  = [search]
  output = findings
}
agent news {
  model  = news_model
  prompt = "Search the news about {topic}."
  tools  = [search]
  output = findings
}
agent writer {
  model  = writer_model
  prompt = "Write the report on {topic} from {notes}."
}

graph research {
  entry = planner
  nodes = [planner, web, papers, news, writer]

  state {
    topic: string = "tides" "What to research"
    pick: string = "web" "Only here so that every branch is reachable before the fork replaces the route"
    notes: list<string> = ["seed"] "What the branches found"
  }

  route planner {
    when pick == "web"    -> web
    when pick == "papers" -> papers
    else                  -> news
  }
  web    -> writer
  papers -> writer
  news   -> writer
  writer -> END
}
"#;

/// The research program with `planner`'s way on a parallel fork into the three researchers,
/// and `notes` merged by `append`.
fn research() -> tenx_artifact::LoadedArtifact {
    compile_patched(RESEARCH, |artifact| fork_research(artifact, None))
}

/// Makes `planner`'s way on the fork into the three researchers, at most `width` at once, with
/// `notes` merged by `append`.
fn fork_research(artifact: &mut tenx_artifact::Artifact, width: Option<u64>) {
    let graph = artifact.graphs.get_mut("research").unwrap();
    graph.routes.retain(|route| route.from != "planner");
    graph.forks = vec![Fork {
        from: "planner".into(),
        kind: ForkKind::Parallel,
        branches: vec!["web".into(), "papers".into(), "news".into()],
        over: None,
        item: None,
        max_concurrency: width,
        join: "writer".into(),
    }];
    graph.reducers = vec![Reducer {
        field: "notes".into(),
        reduce: Reduce::Append,
        order: Vec::new(),
    }];
}

#[tokio::test]
async fn three_branches_run_at_once_and_merge_in_branch_order() {
    // `search` answers only once three calls are in progress together: run one after another,
    // the branches would never get past the first call.
    let tools = FakeTools::new().gathers("search", 3).responds("search", |call| {
        Ok(json!(format!("found {}", call.arguments["q"].as_str().unwrap_or("?"))))
    });
    let host = Host::from_artifact(research(), tools, Models::Scripted, dev());
    let done = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        host.say("t1", "Research tides.", &Identity::anonymous()),
    )
    .await
    .expect("the branches did not run at the same time")
    .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("search"), 3);
    assert_eq!(
        done.thread.state["notes"],
        json!(["seed", "web: found web", "papers: found papers", "news: found news"]),
        "append keeps the list, then each branch's items in branch order"
    );
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(
        texts.first().map(String::as_str),
        Some("Three angles: web, papers, news.")
    );
    assert_eq!(texts.last().map(String::as_str), Some("The report."));
    // Each branch's messages come together, in branch order, after the planner's.
    let nodes: Vec<String> = done
        .thread
        .context
        .iter()
        .filter(|message| message.role != Role::User)
        .filter_map(|message| message.metadata.get("node").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let mut runs: Vec<String> = Vec::new();
    for node in nodes {
        if runs.last() != Some(&node) {
            runs.push(node);
        }
    }
    assert_eq!(
        runs,
        ["planner", "web", "papers", "news", "writer"],
        "{:#?}",
        done.thread.context
    );
    // A branch saw only the conversation as the fork found it, plus its own messages.
    let record = host.store.load("t1").await.unwrap().unwrap();
    assert!(record.run.is_none(), "the run finished");
    assert_eq!(host.tools.duplicate_keys(), Vec::<(String, String)>::new());
}

#[tokio::test]
async fn a_branch_that_fails_fails_the_run_once_the_others_have_ended() {
    // `papers` answers text where its `output` needs an object: its node fails (NODE_001).
    let artifact = compile_patched(RESEARCH, |artifact| {
        fork_research(artifact, None);
        let script = artifact
            .models
            .get_mut("papers_model")
            .unwrap()
            .script
            .as_mut()
            .unwrap();
        script.turns = vec![
            tenx_artifact::Turn::Text {
                text: "not an object".into(),
            },
            tenx_artifact::Turn::Text {
                text: "still not".into(),
            },
            tenx_artifact::Turn::Text { text: "never".into() },
        ];
    });
    let tools = FakeTools::new().returns("search", json!("ok"));
    let host = Host::from_artifact(artifact, tools, Models::Scripted, dev());
    let failed = host
        .say("t1", "Research tides.", &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(failed.code, ErrorCode::NodeFailed);
    assert!(failed.message.starts_with("branch `papers`: "), "{}", failed.message);
    assert_eq!(host.tools.calls_of("search"), 2, "web and news ran to their end");
    let record = host.store.load("t1").await.unwrap().unwrap();
    assert_eq!(record.execution.status, ExecutionStatus::Error);
    assert!(record.run.is_none());
}

#[tokio::test]
async fn a_failed_tool_call_inside_a_branch_goes_back_to_its_agent_and_stays_there() {
    let tools = FakeTools::new().responds("search", |call| match call.arguments["q"].as_str() {
        Some("papers") => Err(tenx_engine::ports::ToolError {
            kind: tenx_engine::ports::ToolErrorKind::Failed,
            message: "the papers index is down".into(),
        }),
        _ => Ok(json!("ok")),
    });
    let host = Host::from_artifact(research(), tools, Models::Scripted, dev());
    let outcome = host.say("t1", "Research tides.", &Identity::anonymous()).await;
    // A failed tool call goes back to the model as an error result; the branch's agent then
    // answers, so the run still completes: the failure stays inside its branch.
    let done = outcome.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("search"), 3);
}

/// Each branch asks to refund one order; the refund needs an approval.
const REFUNDS: &str = r#"
import std.approval.yes_no

model a_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "A" } }, { text: "A handled." }]
}
model b_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "B" } }, { text: "B handled." }]
}
model c_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "C" } }, { text: "C handled." }]
}
model desk_model {
  provider = scripted
  turns    = [{ text: "Three refunds to look at." }, { text: "All three looked at." }]
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

agent desk {
  model  = desk_model
  prompt = "Split the refunds."
}
agent a {
  model  = a_model
  prompt = "Refund order A."
  tools  = [refund]
}
agent b {
  model  = b_model
  prompt = "Refund order B."
  tools  = [refund]
}
agent c {
  model  = c_model
  prompt = "Refund order C."
  tools  = [refund]
}
agent summary {
  model  = desk_model
  prompt = "Say what happened."
}

graph refunds {
  entry = desk
  nodes = [desk, a, b, c, summary]

  state {
    pick: string = "a" "Only here so that every branch is reachable before the fork replaces the route"
  }

  route desk {
    when pick == "a" -> a
    when pick == "b" -> b
    else             -> c
  }
  a -> summary
  b -> summary
  c -> summary
  summary -> END
}
"#;

fn refunds() -> tenx_artifact::LoadedArtifact {
    compile_patched(REFUNDS, |artifact| {
        let graph = artifact.graphs.get_mut("refunds").unwrap();
        graph.routes.retain(|route| route.from != "desk");
        graph.forks = vec![Fork {
            from: "desk".into(),
            kind: ForkKind::Parallel,
            branches: vec!["a".into(), "b".into(), "c".into()],
            over: None,
            item: None,
            max_concurrency: None,
            join: "summary".into(),
        }];
    })
}

#[tokio::test]
async fn approvals_inside_branches_are_asked_one_at_a_time_each_with_its_own_id() {
    let tools = FakeTools::new().responds("refund", |call| {
        Ok(json!(format!(
            "refunded {}",
            call.arguments["order_id"].as_str().unwrap_or("?")
        )))
    });
    let host = Host::from_artifact(refunds(), tools, Models::Scripted, dev());
    let anyone = Identity::anonymous();
    let paused = host.say("t1", "Refund A, B and C.", &anyone).await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let first = host.open_interrupt("t1").await;
    let asked = paused.thread.pending.as_ref().unwrap();
    assert_eq!(
        asked.branch.as_deref(),
        Some("a"),
        "the first branch's question is open first"
    );
    assert!(asked.interrupt.as_ref().unwrap().message.contains("order A"));
    assert_eq!(
        host.tools.calls_of("refund"),
        0,
        "nothing is refunded before an approval"
    );

    // An answer bound to another id changes nothing.
    let before = host.snapshot("t1").await;
    let refused = host
        .answer("t1", json!({"approved": true}), Some("not-the-id"), &anyone)
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptMismatch);
    assert_eq!(host.snapshot("t1").await, before, "a refused answer records nothing");

    // Approving A runs A's refund, and the run pauses at B's question, a new id.
    let paused = host
        .answer("t1", json!({"approved": true}), Some(&first), &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("refund"), 1);
    let second = host.open_interrupt("t1").await;
    assert_ne!(second, first);
    let asked = paused.thread.pending.as_ref().unwrap();
    assert_eq!(asked.branch.as_deref(), Some("b"));
    assert!(asked.interrupt.as_ref().unwrap().message.contains("order B"));
    // The old id no longer answers anything.
    let stale = host
        .answer("t1", json!({"approved": true}), Some(&first), &anyone)
        .await
        .unwrap_err();
    assert_eq!(stale.code, ErrorCode::InterruptMismatch);

    // Rejecting B: no refund for B; then C.
    host.answer("t1", json!({"approved": false}), Some(&second), &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("refund"), 1);
    let third = host.open_interrupt("t1").await;
    assert_ne!(third, second);
    let done = host
        .answer("t1", json!({"approved": true}), Some(&third), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let refunded: Vec<Value> = host
        .tools
        .calls()
        .iter()
        .map(|call| call.arguments["order_id"].clone())
        .collect();
    assert_eq!(refunded, [json!("A"), json!("C")]);
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(
        texts,
        [
            "Three refunds to look at.",
            "A handled.",
            "B handled.",
            "C handled.",
            "All three looked at."
        ],
        "each branch's answer, in branch order, then the join's"
    );
    let approvals: Vec<Value> = host
        .records("t1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "approval")
        .map(|record| record["fields"]["interrupt_id"].clone())
        .collect();
    assert_eq!(
        approvals,
        [json!(first), json!(second), json!(third)],
        "one record per answer"
    );
}

/// A map over the orders of a list: one branch per item, at most two at a time.
const MAP: &str = r#"
model split_model {
  provider = scripted
  turns    = [{ text: "Splitting." }]
}
model sum_model {
  provider = scripted
  turns    = [{ text: "\{\"total\": {result}\}" }]
}
model done_model {
  provider = scripted
  turns    = [{ text: "Summed." }]
}

tool price(order: string "The order") -> int {
  description = "The price of one order, in cents."
  risk = low
  run  = http(POST, "${PRICES_URL}/price", timeout: 5s)
}

agent split {
  model  = split_model
  prompt = "Split the orders."
}
agent done {
  model  = done_model
  prompt = "Report the total {total}."
}

graph totals {
  entry   = split
  nodes   = [split, price, done]
  results = { price: total }

  state {
    orders: list<string> = [] "The orders to price"
    order: string = "" "The order one branch prices"
    total: int = 0 "The sum of the prices"
    go: string = "x" "Only here so that `price` is reachable before the map replaces the route"
  }

  route split {
    when go == "x" -> price
    else           -> done
  }
  price -> done
  done  -> END
}
"#;

fn totals(width: Option<u64>) -> tenx_artifact::LoadedArtifact {
    compile_patched(MAP, |artifact| {
        let graph = artifact.graphs.get_mut("totals").unwrap();
        graph.routes.retain(|route| route.from != "split");
        graph.forks = vec![Fork {
            from: "split".into(),
            kind: ForkKind::Map,
            branches: vec!["price".into()],
            over: Some("orders".into()),
            item: Some("order".into()),
            max_concurrency: width,
            join: "done".into(),
        }];
        graph.reducers = vec![Reducer {
            field: "total".into(),
            reduce: Reduce::Sum,
            order: Vec::new(),
        }];
    })
}

fn priced() -> FakeTools {
    FakeTools::new().responds("price", |call| {
        Ok(json!(match call.arguments["order"].as_str() {
            Some("o1") => 100,
            Some("o2") => 250,
            Some("o3") => 7,
            _ => 0,
        }))
    })
}

async fn start_map(host: &Host, orders: Value) -> Result<tenx_engine::RunOutput, tenx_engine::RunError> {
    let mut state = serde_json::Map::new();
    state.insert("orders".into(), orders);
    host.run(tenx_engine::RunRequest {
        thread_id: Some("t1".into()),
        messages: vec![crate::harness::user("Price them.")],
        initial_state: state,
        identity: Identity::anonymous(),
        ..tenx_engine::RunRequest::default()
    })
    .await
}

#[tokio::test]
async fn a_map_runs_one_branch_per_item_and_sums_what_they_wrote() {
    let host = Host::from_artifact(totals(Some(2)), priced(), Models::Scripted, dev());
    let done = start_map(&host, json!(["o1", "o2", "o3"])).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let priced_calls: Vec<Value> = host.tools.calls().iter().map(|call| call.arguments.clone()).collect();
    assert_eq!(
        done.thread.state["total"],
        json!(357),
        "{priced_calls:?} {:#?}",
        done.thread.context
    );
    assert_eq!(done.thread.state["order"], json!(""), "the item field is never merged");
    let priced: Vec<Value> = host
        .tools
        .calls()
        .iter()
        .map(|call| call.arguments["order"].clone())
        .collect();
    let mut sorted = priced.clone();
    sorted.sort_by_key(|value| value.to_string());
    assert_eq!(sorted, [json!("o1"), json!("o2"), json!("o3")], "each item once");
}

#[tokio::test]
async fn a_map_over_nothing_goes_straight_to_the_join_and_one_over_a_non_list_fails() {
    let host = Host::from_artifact(totals(None), priced(), Models::Scripted, dev());
    let done = start_map(&host, json!([])).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(done.thread.state["total"], json!(0));
    assert_eq!(host.tools.total_calls(), 0);
}

#[tokio::test]
async fn the_recursion_limit_counts_the_steps_of_each_branch() {
    // Every branch takes three steps (two model calls and a tool round); a limit of 3 per
    // branch lets all of them finish, where one count for the whole run would stop at 3.
    let artifact = compile_patched(RESEARCH, |artifact| {
        fork_research(artifact, Some(1));
        artifact.graphs.get_mut("research").unwrap().recursion_limit = 3;
    });
    let tools = FakeTools::new().returns("search", json!("ok"));
    let host = Host::from_artifact(artifact, tools, Models::Scripted, dev());
    let done = host.say("t1", "Research tides.", &Identity::anonymous()).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("search"), 3);
}

#[tokio::test]
async fn a_crash_during_a_fan_out_loses_nothing_and_runs_no_finished_branch_again() {
    use std::sync::Arc;
    use tenx_engine::thread::BranchStatus;

    let store = Arc::new(tenx_engine::MemoryStore::new());
    let gate = Gate::new("q", Some("news"), "found");
    let first = gated_engine(research(), store.clone(), gate.clone());
    let request = tenx_engine::RunRequest {
        thread_id: Some("t".into()),
        messages: vec![crate::harness::user("Research tides.")],
        ..tenx_engine::RunRequest::default()
    };
    // Once the other two have finished and are checkpointed, "kill" it.
    crash_mid_fan_out(first, &gate, &store, request, 2).await;

    let stored = store.load("t").await.unwrap().unwrap();
    let run = stored.run.as_ref().unwrap();
    let fork = run.fork.as_ref().unwrap();
    let statuses: Vec<(&str, &BranchStatus)> = fork.branches.iter().map(|b| (b.path.as_str(), &b.status)).collect();
    assert_eq!(
        statuses,
        [
            ("web", &BranchStatus::Done),
            ("papers", &BranchStatus::Done),
            ("news", &BranchStatus::Running)
        ]
    );
    assert!(run.branches["news"].in_flight.is_some(), "the news call is in flight");
    assert_eq!(store.unfinished().await.unwrap(), vec!["t".to_owned()]);
    let before: Vec<(String, String)> = gate.calls.lock().unwrap().clone();
    assert_eq!(before.len(), 3);

    let again = Gate::new("q", None, "found");
    let second = gated_engine(research(), store.clone(), again.clone());
    let report = second
        .recover(&mut tenx_engine::testing::RecordingEvents::new())
        .await
        .unwrap();
    assert_eq!(report.outcome("t"), Some(&tenx_engine::RecoveryOutcome::Finished));
    let resent: Vec<(String, String)> = again.calls.lock().unwrap().clone();
    let news_key = before.iter().find(|(query, _)| query == "news").unwrap().1.clone();
    assert_eq!(
        resent,
        [("news".to_owned(), news_key)],
        "only the unfinished branch's call, under the same key; no finished branch ran again"
    );
    let thread = store.load("t").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        thread.state["notes"],
        json!(["seed", "web: found web", "papers: found papers", "news: found news"])
    );
    let texts = assistant_texts(&thread.context);
    assert_eq!(
        texts.iter().filter(|text| text.contains("web: found web")).count(),
        1,
        "{texts:#?}"
    );
    assert_eq!(texts.last().map(String::as_str), Some("The report."));
}

/// A tool runner that counts the calls in progress at once (each waits a moment), and the most
/// there ever were.
#[derive(Default)]
struct Counting {
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl tenx_engine::ports::ToolRunner for Counting {
    async fn call(
        &self,
        _: tenx_engine::ports::ToolInvocation<'_>,
        _: &tokio_util::sync::CancellationToken,
    ) -> Result<Value, tenx_engine::ports::ToolError> {
        use std::sync::atomic::Ordering;
        let running = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(running, Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        Ok(json!(1))
    }

    fn deduplicates(&self, _: &tenx_artifact::Tool) -> bool {
        true
    }
}

#[tokio::test]
async fn a_map_runs_its_branches_at_once_but_never_more_than_its_width() {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    for width in [1_u64, 3] {
        let artifact = totals(Some(width));
        let mut models: std::collections::BTreeMap<String, Arc<dyn tenx_engine::ports::ModelClient>> =
            std::collections::BTreeMap::new();
        for name in artifact.artifact.models.keys() {
            models.insert(name.clone(), Arc::new(tenx_engine::ScriptedModel::new()));
        }
        let counting = Arc::new(Counting::default());
        let store = Arc::new(tenx_engine::MemoryStore::new());
        let ports = tenx_engine::ports::Ports {
            store,
            models,
            tools: counting.clone(),
            clock: Arc::new(tenx_engine::testing::ManualClock::new(crate::harness::T0)),
            ids: Arc::new(tenx_engine::testing::SequentialIds::new()),
        };
        let engine = tenx_engine::Engine::new(artifact, ports, dev()).unwrap();
        let orders: Vec<Value> = (0..12).map(|n| json!(format!("o{n}"))).collect();
        let mut state = serde_json::Map::new();
        state.insert("orders".into(), Value::Array(orders));
        let request = tenx_engine::RunRequest {
            thread_id: Some("t".into()),
            messages: vec![crate::harness::user("Price them.")],
            initial_state: state,
            ..tenx_engine::RunRequest::default()
        };
        let done = engine
            .run(request, &mut tenx_engine::testing::RecordingEvents::new())
            .await
            .unwrap();
        assert_eq!(done.thread.state["total"], json!(12));
        assert_eq!(
            counting.most.load(Ordering::SeqCst),
            usize::try_from(width).unwrap(),
            "with width {width}, exactly {width} calls at once at most"
        );
    }
}

#[tokio::test]
async fn a_map_over_a_value_that_is_not_a_list_or_too_long_fails_the_run() {
    let host = Host::from_artifact(totals(None), priced(), Models::Scripted, dev());
    let too_many: Vec<Value> = (0..257).map(|n| json!(format!("o{n}"))).collect();
    let failed = start_map(&host, Value::Array(too_many)).await.unwrap_err();
    assert_eq!(failed.code, ErrorCode::ForkItems);
    assert!(failed.message.contains("257 items"), "{}", failed.message);
    assert_eq!(host.tools.total_calls(), 0);
    // Recorded as any failed run is: the new thread is stored with the error, no run in progress.
    let thread = host.store.load("t1").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
    assert_eq!(thread.execution.internal_data["error_code"], json!("FORK_001"));
    assert!(thread.run.is_none(), "the run ended");
}

#[tokio::test]
async fn a_wide_map_writes_its_branches_steps_in_shared_commits() {
    // 64 items, each branch three steps (a model call, a tool round, a model call): committed one
    // step at a time, that would be at least 192 writes of the whole thread.
    let program = std::fs::read_to_string(tenx_tests::repo_root().join("bench/programs/map_width.tenx")).unwrap();
    let host = Host::from_artifact(
        crate::harness::compile(&program),
        FakeTools::new().returns("fetch", json!("ok")),
        Models::Scripted,
        dev(),
    );
    let items: Vec<Value> = (0..64).map(|item| json!(format!("item {item}"))).collect();
    let done = host
        .run(tenx_engine::RunRequest {
            thread_id: Some("w".into()),
            messages: vec![crate::harness::user("Go.")],
            initial_state: [("items".to_owned(), Value::Array(items))].into_iter().collect(),
            ..tenx_engine::RunRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(done.thread.state["done"].as_array().unwrap().len(), 64);
    assert_eq!(host.tools.calls_of("fetch"), 64);
    assert_eq!(host.tools.duplicate_keys(), Vec::<(String, String)>::new());
    // Each commit moves the thread's version by one.
    assert!(
        done.thread.version < 64,
        "{} commits for 192 steps",
        done.thread.version
    );
}

#[tokio::test]
async fn a_maps_checkpoint_keeps_each_items_own_fields_not_a_copy_of_the_list() {
    use std::sync::Arc;

    // A map of 64 items: were each branch's whole state kept, the thread's checkpoint would hold
    // the list 65 times (64² items), and every commit would write them all.
    let program = std::fs::read_to_string(tenx_tests::repo_root().join("bench/programs/map_width.tenx")).unwrap();
    let store = Arc::new(tenx_engine::MemoryStore::new());
    let gate = Gate::new("item", Some("item 40"), "ok");
    let first = gated_engine(crate::harness::compile(&program), store.clone(), gate.clone());
    let items: Vec<Value> = (0..64).map(|item| json!(format!("item {item}"))).collect();
    let request = tenx_engine::RunRequest {
        thread_id: Some("m".into()),
        messages: vec![crate::harness::user("Go.")],
        initial_state: [("items".to_owned(), Value::Array(items))].into_iter().collect(),
        ..tenx_engine::RunRequest::default()
    };
    crash_mid_fan_out(first, &gate, &store, request, 63).await;

    let stored = store.load("m").await.unwrap().unwrap();
    assert_eq!(
        stored.state["items"].as_array().unwrap().len(),
        64,
        "the thread keeps the list once"
    );
    let fork = stored.run.as_ref().and_then(|run| run.fork.as_ref()).unwrap();
    assert_eq!(fork.branches.len(), 64);
    for (index, branch) in fork.branches.iter().enumerate() {
        let fields: Vec<&str> = branch.state.keys().map(String::as_str).collect();
        let expected: &[&str] = if index == 40 { &["item"] } else { &["done", "item"] };
        assert_eq!(fields, expected, "branch {}", branch.path);
        assert_eq!(branch.state["item"], json!(format!("item {index}")));
    }

    // A new process finishes the map from what was stored: each branch's state is the thread's
    // with its own fields over it.
    let again = Gate::new("item", None, "ok");
    let second = gated_engine(crate::harness::compile(&program), store.clone(), again.clone());
    let report = second
        .recover(&mut tenx_engine::testing::RecordingEvents::new())
        .await
        .unwrap();
    assert_eq!(report.outcome("m"), Some(&tenx_engine::RecoveryOutcome::Finished));
    assert_eq!(again.calls.lock().unwrap().len(), 1, "only item 40's call again");
    let thread = store.load("m").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    let done = thread.state["done"].as_array().unwrap();
    assert_eq!(done.len(), 64);
    assert_eq!(done[40], json!("ok item 40"));
    assert!(thread.state.get("item").is_none(), "the map's item is not merged");
}
