//! A graph's state writes (`Graph.writes`): sorted, one entry per source; a `node` source is a
//! tool node of the graph; a `tool` source is a tool some agent node of the graph may call; an
//! `interrupt` source is an interrupt node, and its `field` a property its response declares
//! (itself or in a part every answer matches, [`crate::answer_ways::places`]); and
//! every target path is a state field of `state_schema` followed by properties declared inside
//! it, each level an object schema with `properties`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Problems, check_sorted};
use crate::model::{Artifact, Graph, NodeKind, WriteSource};

/// Checks `writes` of the graph `name`.
pub(super) fn check(artifact: &Artifact, name: &str, graph: &Graph, problems: &mut Problems) {
    if graph.writes.is_empty() {
        return;
    }
    check_sorted(&graph.writes, || format!("graph `{name}`: `writes`"), problems);
    let state = graph.state_schema.to_value();
    let mut sources = BTreeSet::new();
    for write in &graph.writes {
        if !sources.insert(&write.from) {
            problems.push(format!(
                "graph `{name}`: {} is written twice in `writes`",
                describe(&write.from)
            ));
        }
        match &write.from {
            WriteSource::Node(node) => {
                if graph.nodes.get(node).is_none_or(|n| n.kind != NodeKind::Tool) {
                    problems.push(format!(
                        "graph `{name}`: `writes` names node `{node}`, which is not a tool node"
                    ));
                }
            }
            WriteSource::Tool(tool) => {
                let callable = graph.nodes.values().any(|n| {
                    n.kind == NodeKind::Agent
                        && artifact
                            .agents
                            .get(&n.reference)
                            .is_some_and(|a| a.allowed_tools.iter().any(|t| t == tool))
                });
                if !callable {
                    problems.push(format!(
                        "graph `{name}`: `writes` names tool `{tool}`, which no agent node of the graph may call"
                    ));
                }
            }
            WriteSource::Interrupt { node, field } => {
                let interrupt = graph
                    .nodes
                    .get(node)
                    .filter(|n| n.kind == NodeKind::Interrupt)
                    .and_then(|n| artifact.interrupts.get(&n.reference));
                match (interrupt, field) {
                    (None, _) => problems.push(format!(
                        "graph `{name}`: `writes` names node `{node}`, which is not an interrupt node"
                    )),
                    (Some(interrupt), Some(field)) => {
                        // Declared by the response or by a part every answer matches.
                        let response = interrupt.response_schema.to_value();
                        if crate::answer_ways::places(&response, field).is_empty() {
                            problems.push(format!(
                                "graph `{name}`: `writes` names `{field}` of the answer to `{node}`, which its response schema does not declare"
                            ));
                        }
                    }
                    (Some(_), None) => {}
                }
            }
        }
        if let Err(problem) = schema_at(&state, &write.to) {
            problems.push(format!(
                "graph `{name}`: {} is written to `{}`, {problem}",
                describe(&write.from),
                write.to.join(".")
            ));
        }
    }
}

fn describe(source: &WriteSource) -> String {
    match source {
        WriteSource::Node(node) => format!("the result of node `{node}`"),
        WriteSource::Tool(tool) => format!("the result of tool `{tool}`"),
        WriteSource::Interrupt { node, field: None } => format!("the answer to `{node}`"),
        WriteSource::Interrupt {
            node,
            field: Some(field),
        } => format!("`{field}` of the answer to `{node}`"),
    }
}

/// The schema at `path` inside the state schema: each segment a key of the `properties` of the
/// schema before it. Iterative, as every walk of an artifact's schemas is.
pub(crate) fn schema_at<'v>(state: &'v Value, path: &[String]) -> Result<&'v Value, String> {
    if path.is_empty() {
        return Err("an empty path".to_owned());
    }
    let mut here = state;
    for (depth, segment) in path.iter().enumerate() {
        let property = here
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.get(segment));
        here = match property {
            Some(p) => p,
            None if depth == 0 => return Err(format!("and `{segment}` is not a property of `state_schema`")),
            None => return Err(format!("and `{segment}` is not a declared property at that path")),
        };
    }
    Ok(here)
}
