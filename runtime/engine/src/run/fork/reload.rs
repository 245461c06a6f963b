//! Whether a fork in progress is still the program's after a reload (`tenxc dev`): before the
//! questions waiting inside a fork are asked again under another artifact, every fork on the way
//! down to them, at every depth, must still be there as it was. A parallel or map out of the same
//! node with the same branches (or item node), join and fields; a subgraph node that still runs
//! the same graph; an agent that still calls the same agent under the same tool name. Otherwise
//! the branches' paths would mean something else, so nothing is asked again (deny by default).

use tenx_artifact::{Artifact, ForkKind, Graph, NodeKind};

use crate::thread::{ForkProgress, RunProgress};

/// `Ok` when every fork in `run`, at every depth, is still the program's in `graph` of
/// `artifact`; else why not.
pub(crate) fn still_forks(artifact: &Artifact, graph: &Graph, run: &RunProgress) -> Result<(), String> {
    let mut todo: Vec<(&Graph, &ForkProgress)> = run.fork.iter().map(|fork| (graph, fork)).collect();
    while let Some((graph, fork)) = todo.pop() {
        let inside = same_fork(artifact, graph, fork)?;
        for branch in &fork.branches {
            if let Some(inner) = branch.inner.as_deref() {
                todo.push((inside, &inner.fork));
            }
        }
    }
    Ok(())
}

/// The graph the branches of `fork` run in, when `fork` is still the program's.
fn same_fork<'a>(artifact: &'a Artifact, graph: &'a Graph, fork: &ForkProgress) -> Result<&'a Graph, String> {
    let from = fork.from.as_str();
    if let Some(inner) = &fork.subgraph {
        let runs = graph
            .nodes
            .get(from)
            .is_some_and(|node| node.kind == NodeKind::Graph && node.reference == *inner);
        return match artifact.graphs.get(inner) {
            Some(runs_now) if runs && graph.subgraph_of(from).is_some() => Ok(runs_now),
            _ => Err(format!("the subgraph node `{from}` no longer runs the graph `{inner}`")),
        };
    }
    if let Some(call) = &fork.agent_call {
        // The calling agent: the agent node's, or, inside an agent's own call, that agent.
        let caller = graph
            .nodes
            .get(from)
            .filter(|node| node.kind == NodeKind::Agent)
            .map_or(from, |node| node.reference.as_str());
        let calls = artifact.agents.get(caller).is_some_and(|agent| {
            agent
                .agent_tools
                .iter()
                .any(|used| used.tool_name == call.tool_name && used.agent == call.agent)
        });
        return if calls && artifact.agents.contains_key(&call.agent) {
            Ok(graph)
        } else {
            Err(format!(
                "the agent `{caller}` no longer calls the agent `{}` as its tool `{}`",
                call.agent, call.tool_name
            ))
        };
    }
    let changed = || format!("the fork out of `{from}` changed");
    let declared = graph.fork_of(from).ok_or_else(changed)?;
    if declared.join != fork.join {
        return Err(changed());
    }
    let paths_fit = fork.branches.iter().all(|branch| match declared.kind {
        ForkKind::Parallel => declared.branches.contains(&branch.path),
        ForkKind::Map => declared.branches.first().is_some_and(|first| {
            branch
                .path
                .strip_prefix(first.as_str())
                .is_some_and(|rest| rest.starts_with('['))
        }),
    });
    if paths_fit { Ok(graph) } else { Err(changed()) }
}
