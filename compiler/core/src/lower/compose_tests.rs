//! Unit tests of the lowering of composition: subgraph nodes with their `subgraphs` entries, and
//! agents called as tools, each on a small clean program that seals.

use super::tests::lower_allowing;
use serde_json::json;
use tenx_artifact::NodeKind;

const TEAM: &str = r#"
model m {
  provider = scripted
  turns    = [{ text: "Done." }]
}

agent searcher {
  model  = m
  prompt = "Research {topic}."
}

agent checker {
  model  = m
  prompt = "Check the work."
}

agent lead {
  model  = m
  prompt = "Lead on {subject}: {summary}"
}

graph research {
  entry = searcher
  nodes = [searcher]
  state {
    topic: string = "tides" "What to research"
    summary?: string "What was found"
  }
  searcher -> END
}

graph review {
  entry = checker
  nodes = [checker]
  checker -> END
}

graph team {
  entry = review
  nodes = [review, research, lead]
  subgraphs = { research: { input: { topic: subject }, output: { summary: summary } } }
  state {
    subject: string "What the team works on"
    summary?: string "What the research found"
  }
  review -> research
  research -> lead
  lead -> END
}
"#;

#[test]
fn subgraph_nodes_lower_to_graph_nodes_with_one_mapping_each_sorted_by_node() {
    let artifact = lower_allowing(TEAM, &[]);
    let team = &artifact.graphs["team"];
    assert_eq!(team.nodes["research"].kind, NodeKind::Graph);
    assert_eq!(team.nodes["research"].reference, "research");
    assert_eq!(team.nodes["review"].kind, NodeKind::Graph);
    let nodes: Vec<&str> = team.subgraphs.iter().map(|s| s.node.as_str()).collect();
    assert_eq!(
        nodes,
        ["research", "review"],
        "every subgraph node, sorted, mapped or not"
    );
    let research = &team.subgraphs[0];
    assert_eq!(research.input, [("topic".to_owned(), "subject".to_owned())].into());
    assert_eq!(research.output, [("summary".to_owned(), "summary".to_owned())].into());
    assert!(team.subgraphs[1].input.is_empty() && team.subgraphs[1].output.is_empty());
    assert!(artifact.source_map.contains_key("graph.team.node.research"));
}

const AGENTS: &str = r#"
model m {
  provider = scripted
  turns    = [{ text: "Hola." }]
}

agent spanish {
  model       = m
  prompt      = "Translate the user's message to Spanish."
  description = "Translates a text to Spanish"
}

agent critic {
  model  = m
  prompt = "Criticise."
}

agent orchestrator {
  model  = m
  prompt = "Use your tools."
  agents = [spanish(text: string "The text to translate"), critic]
}

graph translate {
  entry = orchestrator
  nodes = [orchestrator]
  orchestrator -> END
}
"#;

#[test]
fn agents_as_tools_lower_with_their_parameters_and_descriptions() {
    let artifact = lower_allowing(AGENTS, &[]);
    let tools = &artifact.agents["orchestrator"].agent_tools;
    let names: Vec<&str> = tools.iter().map(|t| t.tool_name.as_str()).collect();
    assert_eq!(names, ["critic", "spanish"], "sorted by tool name");
    let critic = &tools[0];
    assert_eq!(critic.agent, "critic");
    assert_eq!(critic.description, "Ask the agent `critic`.");
    assert_eq!(
        critic.parameters.to_value(),
        json!({
            "type": "object",
            "properties": { "input": { "type": "string", "description": "What to ask the agent `critic`" } },
            "required": ["input"],
            "additionalProperties": false
        })
    );
    let spanish = &tools[1];
    assert_eq!(spanish.description, "Translates a text to Spanish");
    assert_eq!(
        spanish.parameters.to_value(),
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "The text to translate" } },
            "required": ["text"],
            "additionalProperties": false
        })
    );
    // The called agents are lowered although no graph lists them.
    assert!(artifact.agents.contains_key("spanish") && artifact.agents.contains_key("critic"));
}
