//! The composition ports of `tests/ports/` run end to end on their scripted models: the
//! conversation their headers describe is what the engine does.

use serde_json::{Value, json};
use tenx_engine::ports::Event;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{Identity, RunOutput, RunRequest};

use crate::harness::{Host, Models, assistant_texts, compile_named, dev, tool_outputs, user};

fn port(name: &str) -> tenx_artifact::LoadedArtifact {
    let path = format!("tests/ports/{name}.tenx");
    let text = std::fs::read_to_string(tenx_tests::repo_root().join(&path)).unwrap();
    compile_named(&path, &text)
}

async fn start(host: &Host, graph: &str, text: &str, state: serde_json::Map<String, Value>) -> RunOutput {
    host.run(RunRequest {
        graph: Some(graph.into()),
        thread_id: Some("t1".into()),
        messages: vec![user(text)],
        initial_state: state,
        identity: Identity::anonymous(),
        ..RunRequest::default()
    })
    .await
    .unwrap()
}

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
async fn openai_agents_as_tools_translates_through_its_agent_tools() {
    let host = Host::from_artifact(
        port("openai_agents_as_tools"),
        FakeTools::new(),
        Models::Scripted,
        dev(),
    );
    let done = start(
        &host,
        "translation",
        "Translate 'good morning' to Spanish and French",
        serde_json::Map::new(),
    )
    .await;
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        tool_outputs(&done.thread.context),
        [json!("buenos días"), json!("bonjour")]
    );
    assert_eq!(
        assistant_texts(&done.thread.context),
        [
            "Spanish and French translations are ready.",
            "Spanish: buenos días. French: bonjour."
        ]
    );
    let calls: Vec<Value> = host
        .records("t1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "agent_call")
        .map(|record| record["fields"]["agent"].clone())
        .collect();
    assert_eq!(calls, [json!("spanish_agent"), json!("french_agent")]);
    let nodes = started(&host);
    assert!(
        nodes.contains(&"orchestrator_agent/spanish_agent".to_owned()),
        "{nodes:?}"
    );
}

#[tokio::test]
async fn langgraph_hierarchical_teams_runs_each_team_as_a_subgraph() {
    let tools = FakeTools::new()
        .returns("tavily_search", json!("Agents: a model, tools and a loop."))
        .returns("write_document", json!("Document saved to poem.txt"));
    let host = Host::from_artifact(port("langgraph_hierarchical_teams"), tools, Models::Scripted, dev());
    let done = start(
        &host,
        "hierarchy",
        "Research AI agents and write a short poem about them",
        serde_json::Map::new(),
    )
    .await;
    assert_eq!(
        done.thread.execution.status,
        ExecutionStatus::Completed,
        "{:#?}",
        done.thread.execution
    );
    assert_eq!(host.tools.calls_of("tavily_search"), 1);
    assert_eq!(host.tools.calls_of("write_document"), 1);
    assert_eq!(
        started(&host),
        [
            "teams_supervisor",
            "research_team",
            "research_team/research_supervisor",
            "research_team/search",
            "research_team/research_supervisor",
            "teams_supervisor",
            "writing_team",
            "writing_team/writing_supervisor",
            "writing_team/doc_writer",
            "writing_team/writing_supervisor",
            "teams_supervisor"
        ]
    );
    assert_eq!(done.thread.state["next"], json!("FINISH"));
}
