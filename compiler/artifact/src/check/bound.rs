//! Self-checks of bound arguments: every bound name is a top-level property of the tool's
//! `parameters`, a claim name is well formed,
//! a state source names a field that every graph able to run the tool declares (an agent node
//! whose agent may call it, itself or through agents it calls as tools at any depth, or a tool
//! node running it), and a tool with bindings is never
//! offered with a bound name left in what the model sees (by construction: the runtime derives
//! that schema with [`crate::bound::model_parameters`]).

use super::Problems;
use crate::model::bound::is_claim_name;
use crate::model::{Artifact, BoundSource, NodeKind};

pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    for (name, tool) in &artifact.tools {
        if tool.bindings.is_empty() {
            continue;
        }
        let params = tool.parameters.to_value();
        let properties = params.get("properties").and_then(|p| p.as_object());
        for (param, source) in &tool.bindings {
            if !properties.is_some_and(|p| p.contains_key(param)) {
                problems.push(format!("tool `{name}`: binds `{param}`, which is not a parameter"));
            }
            match source {
                BoundSource::Claim(claim) if !is_claim_name(claim) => problems.push(format!(
                    "tool `{name}`: `{param}` is bound to claim `{claim}`, which must be 1 to 128 of \
                     `A-Z a-z 0-9 _ . : / -`"
                )),
                BoundSource::State(field) => check_state(artifact, name, param, field, problems),
                BoundSource::Claim(_) | BoundSource::Caller(_) => {}
            }
        }
    }
}

/// A state source must be a field of every graph that can run the tool.
fn check_state(artifact: &Artifact, tool: &str, param: &str, field: &str, problems: &mut Problems) {
    let allows = |agent: &str| {
        artifact
            .agents
            .get(agent)
            .is_some_and(|agent| agent.allowed_tools.iter().any(|t| t == tool))
    };
    for (graph_name, graph) in &artifact.graphs {
        // A called agent runs over the calling graph's state: its tools read that state too.
        let runs = graph.nodes.values().any(|node| match node.kind {
            NodeKind::Tool => node.reference == tool,
            NodeKind::Agent => {
                allows(&node.reference)
                    || super::agent_tools::reached(artifact, &node.reference)
                        .iter()
                        .any(|called| allows(called.agent))
            }
            NodeKind::Interrupt | NodeKind::Graph => false,
        });
        if !runs {
            continue;
        }
        let state = graph.state_schema.to_value();
        let declared = state
            .get("properties")
            .and_then(|p| p.as_object())
            .is_some_and(|p| p.contains_key(field));
        if !declared {
            problems.push(format!(
                "tool `{tool}`: `{param}` is bound to state field `{field}`, which graph `{graph_name}` \
                 (where the tool can run) does not declare"
            ));
        }
    }
}
