//! A graph's subgraph nodes (see [`crate::model::SubgraphCall`]): each runs another graph of the
//! artifact and has exactly one state mapping, whose fields are declared where they are read and
//! written. Subgraphs nest (an inner graph may fork or run subgraphs of its own, and a subgraph
//! node may sit inside a fork's branch), but no graph runs itself, directly or through others.

use std::collections::{BTreeMap, BTreeSet};

use super::{Problems, check_sorted};
use crate::model::{Artifact, Graph, NodeKind};

/// Checks the subgraph nodes and `subgraphs` of the graph `name`.
pub(super) fn check(artifact: &Artifact, name: &str, graph: &Graph, problems: &mut Problems) {
    let report = |problems: &mut Problems, message: String| problems.push(format!("graph `{name}`: {message}"));
    check_sorted(&graph.subgraphs, || format!("graph `{name}`: `subgraphs`"), problems);
    let outer = state_fields(graph);
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
    for (node, _) in graph.nodes.iter().filter(|(_, spec)| spec.kind == NodeKind::Graph) {
        if !mapped.contains(node.as_str()) {
            report(problems, format!("subgraph node `{node}` has no entry in `subgraphs`"));
        }
    }
    if let Some(path) = runs_itself(artifact, name, graph) {
        report(
            problems,
            format!("a subgraph node leads back to the graph: `{name}` → `{path}`"),
        );
    }
}

/// The chain of graphs by which `graph` (named `name`) runs itself through subgraph nodes, if it
/// does (the graphs after it, joined with `` ` → ` ``): iterative, each graph visited once.
fn runs_itself<'a>(artifact: &'a Artifact, name: &str, graph: &'a Graph) -> Option<String> {
    let calls = |graph: &'a Graph| {
        graph
            .nodes
            .values()
            .filter(|node| node.kind == NodeKind::Graph)
            .map(|node| node.reference.as_str())
    };
    let mut parent: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let mut stack = Vec::new();
    for first in calls(graph) {
        if parent.insert(first, None).is_none() {
            stack.push(first);
        }
    }
    while let Some(at) = stack.pop() {
        if at == name {
            let mut path = vec![at];
            let mut step = parent.get(at).copied().flatten();
            while let Some(previous) = step {
                path.push(previous);
                step = parent.get(previous).copied().flatten();
            }
            path.reverse();
            return Some(path.join("` → `"));
        }
        for next in artifact.graphs.get(at).into_iter().flat_map(calls) {
            if !parent.contains_key(next) {
                parent.insert(next, Some(at));
                stack.push(next);
            }
        }
    }
    None
}

/// The top-level properties of a graph's state schema.
fn state_fields(graph: &Graph) -> BTreeSet<String> {
    match graph.state_schema.to_value().get("properties") {
        Some(serde_json::Value::Object(properties)) => properties.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}
