//! A graph's subgraph nodes (see [`crate::model::SubgraphCall`]): each runs another graph of the
//! artifact and has exactly one state mapping, whose fields are declared where they are read and
//! written. Subgraphs do not nest in this format: the inner graph has no subgraph node and no fork
//! (so no graph can run itself), and no subgraph node is inside a fork's branch.

use std::collections::BTreeSet;

use super::{Problems, check_sorted};
use crate::model::{Artifact, Graph, NodeKind};

/// Checks the subgraph nodes and `subgraphs` of the graph `name`.
pub(super) fn check(artifact: &Artifact, name: &str, graph: &Graph, problems: &mut Problems) {
    let report = |problems: &mut Problems, message: String| problems.push(format!("graph `{name}`: {message}"));
    check_sorted(&graph.subgraphs, || format!("graph `{name}`: `subgraphs`"), problems);
    let outer = state_fields(graph);
    let in_branches = super::forks::branch_nodes(graph);
    let mut mapped = BTreeSet::new();
    for call in &graph.subgraphs {
        if !mapped.insert(call.node.as_str()) {
            report(problems, format!("subgraph node `{}` is mapped twice", call.node));
        }
        let Some(node) = graph.nodes.get(&call.node).filter(|node| node.kind == NodeKind::Graph) else {
            report(
                problems,
                format!("`subgraphs` maps `{}`, which is not a subgraph node", call.node),
            );
            continue;
        };
        let Some(inner) = artifact.graphs.get(&node.reference) else {
            continue;
        };
        let inner_fields = state_fields(inner);
        for (to, from) in &call.input {
            if !inner_fields.contains(to) {
                report(
                    problems,
                    format!(
                        "subgraph node `{}` fills `{to}`, which is not a state field of `{}`",
                        call.node, node.reference
                    ),
                );
            }
            if !outer.contains(from) {
                report(
                    problems,
                    format!(
                        "subgraph node `{}` reads `{from}`, which is not a state field",
                        call.node
                    ),
                );
            }
        }
        for (to, from) in &call.output {
            if !outer.contains(to) {
                report(
                    problems,
                    format!(
                        "subgraph node `{}` writes `{to}`, which is not a state field",
                        call.node
                    ),
                );
            }
            if !inner_fields.contains(from) {
                report(
                    problems,
                    format!(
                        "subgraph node `{}` takes `{from}`, which is not a state field of `{}`",
                        call.node, node.reference
                    ),
                );
            }
        }
    }
    for (node, spec) in graph.nodes.iter().filter(|(_, spec)| spec.kind == NodeKind::Graph) {
        if !mapped.contains(node.as_str()) {
            report(problems, format!("subgraph node `{node}` has no entry in `subgraphs`"));
        }
        if spec.reference == name {
            report(problems, format!("subgraph node `{node}` runs its own graph"));
        }
        if in_branches.contains(node.as_str()) {
            report(
                problems,
                format!("subgraph node `{node}` is inside a fork's branch; subgraphs do not run inside branches yet"),
            );
        }
        if let Some(inner) = artifact.graphs.get(&spec.reference) {
            let nested = inner
                .nodes
                .values()
                .any(|inner_node| inner_node.kind == NodeKind::Graph);
            if nested || !inner.forks.is_empty() {
                report(
                    problems,
                    format!(
                        "subgraph node `{node}` runs `{}`, which has subgraph nodes or forks of its own; subgraphs do not nest yet",
                        spec.reference
                    ),
                );
            }
        }
    }
}

/// The top-level properties of a graph's state schema.
fn state_fields(graph: &Graph) -> BTreeSet<String> {
    match graph.state_schema.to_value().get("properties") {
        Some(serde_json::Value::Object(properties)) => properties.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}
