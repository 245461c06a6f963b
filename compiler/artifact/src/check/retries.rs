//! Retry policies: every policy's numbers are in range and its classes sorted and never empty;
//! a tool's own policy, and a graph's policy at a tool node, belong to a tool whose calls may
//! be repeated ([`retry_refusal`]); a graph's policies name agent or tool nodes, once each.
//! A hand-edited artifact cannot put a retry on a call that could act twice.

use super::{Problems, check_sorted};
use crate::model::{Artifact, Graph, NodeKind, RetryPolicy, retry_refusal};

/// Checks the tools' policies and those of every graph.
pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    for (name, tool) in &artifact.tools {
        let Some(policy) = &tool.retry else { continue };
        policy_problems(policy, || format!("tool `{name}`: `retry`"), problems);
        if let Some(why) = retry_refusal(tool) {
            problems.push(format!("tool `{name}` has a retry policy, but {why}"));
        }
    }
    for (name, graph) in &artifact.graphs {
        graph_retries(artifact, name, graph, problems);
    }
}

fn graph_retries(artifact: &Artifact, name: &str, graph: &Graph, problems: &mut Problems) {
    check_sorted(&graph.retries, || format!("graph `{name}`: `retries`"), problems);
    let mut previous: Option<&str> = None;
    for retry in &graph.retries {
        let node = retry.node.as_str();
        if previous == Some(node) {
            problems.push(format!("graph `{name}`: node `{node}` has two retry policies"));
        }
        previous = Some(node);
        policy_problems(
            &retry.policy,
            || format!("graph `{name}`: the retry policy of `{node}`"),
            problems,
        );
        let Some(spec) = graph.nodes.get(node) else {
            problems.push(format!("graph `{name}`: retry policy of unknown node `{node}`"));
            continue;
        };
        match spec.kind {
            NodeKind::Agent => {}
            NodeKind::Interrupt => problems.push(format!(
                "graph `{name}`: interrupt node `{node}` has a retry policy, but a person's answer is never retried"
            )),
            NodeKind::Graph => problems.push(format!(
                "graph `{name}`: subgraph node `{node}` has a retry policy; its own nodes have theirs"
            )),
            NodeKind::Tool => {
                if let Some(why) = artifact.tools.get(&spec.reference).and_then(retry_refusal) {
                    problems.push(format!(
                        "graph `{name}`: tool node `{node}` has a retry policy, but its tool `{}` may not be retried: {why}",
                        spec.reference
                    ));
                }
            }
        }
    }
}

fn policy_problems(policy: &RetryPolicy, what: impl Fn() -> String, problems: &mut Problems) {
    for problem in policy.problems() {
        problems.push(format!("{}: {problem}", what()));
    }
}
