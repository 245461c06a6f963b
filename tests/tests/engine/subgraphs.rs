//! Subgraphs, end to end in process: a node that runs another graph of the artifact with the
//! state its mapping gives it, over the conversation as it found it, names its inner nodes
//! `outer/inner` in events, copies the mapped fields back when the inner graph ends, and pauses
//! the thread on an approval inside it (answered with its own interrupt id). The programs write
//! the subgraph node in the language: a graph listed in `nodes`, mapped by `subgraphs`.

use serde_json::json;
use tenx_engine::ErrorCode;
use tenx_engine::ports::Event;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::ExecutionStatus;

use crate::harness::{Host, Models, assistant_texts, compile, dev};

const TEAM: &str = r#"
import std.approval.yes_no

model lead_model {
  provider = scripted
  turns    = [{ text: "Sending this to the research team." }, { text: "Edited." }]
}
model publisher_model {
  provider = scripted
  turns    = [{ tool: "publish", arguments: { summary: "tides" } }, { text: "Published inside." }]
}
model summariser_model {
  provider = scripted
  turns    = [{ text: "\{\"summary\": \"tides are caused by the moon\"\}" }]
}

tool search(topic: string "What to look for") -> string {
  description = "Search."
  risk = low
  run  = http(POST, "${SEARCH_URL}/search", timeout: 5s)
}

tool publish(summary: string "What to publish") -> string {
  description = "Publish the summary."
  risk = high
  approval {
    message   = "Publish {summary}?"
    response  = yes_no
    on_reject = "Not published."
    separate_duties = false
  }
  run = http(POST, "${BLOG_URL}/posts", timeout: 5s)
}

agent lead {
  model  = lead_model
  prompt = "Lead the team."
}
agent editor {
  model  = lead_model
  prompt = "Edit {summary}."
  tools  = [publish]
}
agent publisher {
  model  = publisher_model
  prompt = "Publish what the team found about {topic}."
  tools  = [publish]
}
agent summariser {
  model  = summariser_model
  prompt = "Summarise what was found about {topic}."
  output = { "type": "object", "properties": { "summary": { "type": "string" } }, "required": ["summary"] }
}

graph research {
  entry = search
  nodes = [search, summariser]

  state {
    topic: string "What to research"
    summary?: string "What the team found"
  }

  search     -> summariser
  summariser -> END
}

graph publishing_team {
  entry = publisher
  nodes = [publisher]

  state {
    topic: string "What was researched"
  }

  publisher -> END
}

graph team {
  entry     = lead
  nodes     = [lead, research, editor]
  subgraphs = { research: { input: { topic: subject }, output: { summary: summary } } }

  state {
    subject: string = "tides" "What the team works on"
    summary: string = "" "What the research team found"
  }

  lead     -> research
  research -> editor
  editor   -> END
}
"#;

/// `team`, whose `research` node is a subgraph node running the graph `research`.
fn team() -> tenx_artifact::LoadedArtifact {
    compile(TEAM)
}

/// `TEAM` with the publishing team as the graph `research` (and the research team renamed out of
/// the way): the subgraph node `research` runs the publishing team, with only `input` mapped.
fn team_publishing() -> String {
    TEAM.replace("graph research {", "graph research_team {")
        .replace("graph publishing_team {", "graph research {")
        .replace(
            "subgraphs = { research: { input: { topic: subject }, output: { summary: summary } } }",
            "subgraphs = { research: { input: { topic: subject } } }",
        )
}

#[tokio::test]
async fn a_subgraph_runs_with_its_mapped_state_and_gives_back_its_output() {
    let tools = FakeTools::new()
        .responds("search", |call| {
            Ok(json!(format!(
                "results for {}",
                call.arguments["q"].as_str().unwrap_or("?")
            )))
        })
        .returns("publish", json!("published"));
    let host = Host::from_artifact(team(), tools, Models::Scripted, dev());
    let done = host.say_to("team", "t1", "Research tides and publish.").await.unwrap();
    // The inner graph read `topic` from the outer `subject`.
    assert_eq!(host.tools.calls()[0].arguments, json!({"topic": "tides"}));
    // Its output came back into the outer state before `editor` ran.
    assert_eq!(done.thread.state["summary"], json!("tides are caused by the moon"));
    assert!(done.thread.state.get("topic").is_none(), "inner fields stay inside");
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(
        texts,
        [
            "Sending this to the research team.",
            "{\"summary\": \"tides are caused by the moon\"}",
            "Edited."
        ]
    );
    // The stream names the inner nodes by their path.
    let started: Vec<String> = host
        .events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            Event::NodeStarted { node, .. } => Some(node),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        ["lead", "research", "research/search", "research/summariser", "editor"]
    );
    assert_eq!(host.tools.calls_of("publish"), 0);
}

/// A subgraph with a publish step of its own, behind an approval: the question asked inside the
/// subgraph pauses the thread.
#[tokio::test]
async fn an_approval_inside_a_subgraph_pauses_the_thread_and_its_answer_continues_it() {
    let artifact = compile(&team_publishing());
    assert_eq!(artifact.artifact.graphs["team"].subgraphs[0].output.len(), 0);
    let tools = FakeTools::new()
        .returns("search", json!("found"))
        .returns("publish", json!("ok"));
    let host = Host::from_artifact(artifact, tools, Models::Scripted, dev());
    let paused = host.say_to("team", "t1", "Research and publish.").await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let pending = paused.thread.pending.as_ref().unwrap();
    assert_eq!(pending.branch.as_deref(), Some("research"));
    assert_eq!(host.tools.calls_of("publish"), 0);
    let id = host.open_interrupt("t1").await;
    let wrong = host.approve_on("team", "t1", "nope", true).await.unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InterruptMismatch);
    let done = host.approve_on("team", "t1", &id, true).await.unwrap();
    assert_eq!(
        done.thread.execution.status,
        ExecutionStatus::Completed,
        "{:#?}",
        done.thread.execution
    );
    assert_eq!(host.tools.calls_of("publish"), 1);
    let texts = assistant_texts(&done.thread.context);
    assert_eq!(
        texts,
        ["Sending this to the research team.", "Published inside.", "Edited."],
        "the inner graph's messages, then the outer editor's"
    );
}
