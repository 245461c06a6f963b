//! Starting a fork: its branches recorded in the run's progress, each at its first node with
//! its own state (a `parallel`'s branches, one per item of a `map`), or the one branch of a
//! subgraph node (the inner graph from its entry) or of the call of an agent used as a tool (the
//! agent alone, on the call's input). Nothing runs yet: the step loop finds the fork and runs it
//! ([`super::run`]). A fork may start inside a branch: then it is that branch's own.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tenx_artifact::{END, Fork, ForkKind, MAX_WIDTH};

use crate::thread::{Branch, BranchRun, ForkProgress};
use crate::wire::Message;
use crate::{ErrorCode, RunError};

use super::{AgentCall, FORK};
use crate::run::Working;
use crate::run::working::damaged;

/// Splits the run at `node`'s fork: the fork's branches, each at its first node with the
/// thread's state (a map's item set in its own, the one field its `BranchRun::state` holds), are
/// recorded in the progress. Nothing runs yet: the step loop finds the fork and runs it
/// ([`run`]).
pub(crate) fn start(working: &mut Working<'_>, node: &str) -> Result<(), RunError> {
    let depth = working.lane.as_ref().map_or(0, |lane| lane.depth);
    if depth >= super::MAX_NESTING {
        return Err(RunError::new(
            ErrorCode::ForkDepth,
            format!(
                "node `{node}` would start a fork {} deep; forks, subgraphs and agents called as tools nest at most {} deep",
                depth.saturating_add(1),
                super::MAX_NESTING
            ),
        )
        .with_details(json!({"node": node, "depth": depth.saturating_add(1)})));
    }
    if let Some(call) = working.agent_call.take() {
        return start_agent_call(working, node, call);
    }
    let graph = working.graph;
    if graph.subgraph_of(node).is_some() {
        return start_subgraph(working, node);
    }
    let Some(fork) = graph.fork_of(node) else {
        return Err(crate::run::drive::unknown_target(&working.graph_name, node, FORK));
    };
    let starts = branch_starts(working, fork)?;
    let width = fork.max_concurrency.unwrap_or(MAX_WIDTH).clamp(1, MAX_WIDTH);
    let mut branches = Vec::with_capacity(starts.len());
    let mut progress = BTreeMap::new();
    for (path, first, state) in starts {
        let mut branch = Branch {
            node: first.clone(),
            ..Branch::default()
        };
        if graph.visit_limits.iter().any(|limit| limit.node == first) {
            branch.visits.insert(first.clone(), 1);
        }
        progress.insert(path.clone(), branch);
        branches.push(BranchRun::starting(
            path,
            state,
            Vec::new(),
            working.record.model_cursors.clone(),
        ));
    }
    let run = working.progress_mut()?;
    run.branches.extend(progress);
    run.fork = Some(ForkProgress {
        from: node.to_owned(),
        join: fork.join.clone(),
        width,
        branches,
        subgraph: None,
        agent_call: None,
    });
    Ok(())
}

/// Starts the call of an agent used as a tool by the agent node `node`: one branch that runs the
/// agent alone, on a conversation of its input, with the thread's state for its prompt.
fn start_agent_call(working: &mut Working<'_>, node: &str, call: AgentCall) -> Result<(), RunError> {
    let path = format!("{}@{}", call.agent, call.call_id);
    let message = Message::text(
        working.message_id(),
        crate::wire::Role::User,
        call.input,
        working.now_seconds(),
    );
    let branch = Branch {
        node: call.agent.clone(),
        ..Branch::default()
    };
    // The agent sees the thread's state as the call found it: its branch adds nothing yet.
    let state = serde_json::Map::new();
    let cursors = working.record.model_cursors.clone();
    let run = working.progress_mut()?;
    run.branches.insert(path.clone(), branch);
    run.fork = Some(ForkProgress {
        from: node.to_owned(),
        join: END.to_owned(),
        width: 1,
        branches: vec![BranchRun::starting(path, state, vec![Arc::new(message)], cursors)],
        subgraph: None,
        agent_call: Some(crate::thread::AgentCallProgress {
            call_id: call.call_id,
            tool_name: call.tool_name,
            arguments: call.arguments,
            agent: call.agent,
        }),
    });
    Ok(())
}

/// Starts the subgraph node `node`: one branch over the inner graph, from its entry, with the
/// state `input` maps in (then the inner graph's defaults), checked against its state schema.
fn start_subgraph(working: &mut Working<'_>, node: &str) -> Result<(), RunError> {
    let graph = working.graph;
    let artifact = working.artifact();
    let (Some(call), Some(declared)) = (graph.subgraph_of(node), graph.nodes.get(node)) else {
        return Err(damaged());
    };
    let Some(inner) = artifact.graphs.get(&declared.reference) else {
        return Err(crate::run::drive::unknown_target(
            &working.graph_name,
            node,
            &declared.reference,
        ));
    };
    let mut state = serde_json::Map::new();
    for (to, from) in &call.input {
        if let Some(value) = working.record.state.get(from) {
            state.insert(to.clone(), value.clone());
        }
    }
    let state = match crate::run::glue::with_defaults(&inner.state_schema, Value::Object(state)) {
        Value::Object(state) => state,
        _ => serde_json::Map::new(),
    };
    crate::run::glue::check_schema(&inner.state_schema, &Value::Object(state.clone())).map_err(|error| {
        RunError::new(
            ErrorCode::NodeFailed,
            format!(
                "the state subgraph node `{node}` maps into graph `{}` does not fit it: {error}",
                declared.reference
            ),
        )
        .with_details(json!({"node": node, "graph": declared.reference}))
    })?;
    let mut branch = Branch {
        node: inner.entry.clone(),
        ..Branch::default()
    };
    if inner.visit_limits.iter().any(|limit| limit.node == inner.entry) {
        branch.visits.insert(inner.entry.clone(), 1);
    }
    let cursors = working.record.model_cursors.clone();
    let run = working.progress_mut()?;
    run.branches.insert(node.to_owned(), branch);
    run.fork = Some(ForkProgress {
        from: node.to_owned(),
        join: END.to_owned(),
        width: 1,
        branches: vec![BranchRun::starting(node.to_owned(), state, Vec::new(), cursors)],
        subgraph: Some(declared.reference.clone()),
        agent_call: None,
    });
    Ok(())
}

/// One branch as a fork starts it: its path, first node and what its state holds beyond the
/// thread's (see `BranchRun::state`).
type BranchStart = (String, String, serde_json::Map<String, Value>);

/// Each branch of `fork`.
fn branch_starts(working: &Working<'_>, fork: &Fork) -> Result<Vec<BranchStart>, RunError> {
    let state = &working.record.state;
    match fork.kind {
        ForkKind::Parallel => Ok(fork
            .branches
            .iter()
            .map(|first| (first.clone(), first.clone(), serde_json::Map::new()))
            .collect()),
        ForkKind::Map => {
            let (Some(first), Some(over), Some(item)) = (fork.branches.first(), &fork.over, &fork.item) else {
                return Err(damaged());
            };
            let items = match state.get(over) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => {
                    return Err(RunError::new(
                        ErrorCode::ForkItems,
                        format!(
                            "the map out of `{}` reads `{over}`, which does not hold a list",
                            fork.from
                        ),
                    )
                    .with_details(json!({"node": fork.from, "field": over})));
                }
            };
            if u64::try_from(items.len()).unwrap_or(u64::MAX) > MAX_WIDTH {
                return Err(RunError::new(
                    ErrorCode::ForkItems,
                    format!(
                        "the map out of `{}` was given {} items in `{over}`; one map runs at most {MAX_WIDTH}",
                        fork.from,
                        items.len()
                    ),
                )
                .with_details(json!({"node": fork.from, "field": over, "items": items.len()})));
            }
            Ok(items
                .into_iter()
                .enumerate()
                .map(|(index, value)| {
                    let mut beyond = serde_json::Map::new();
                    if state.get(item) != Some(&value) {
                        beyond.insert(item.clone(), value);
                    }
                    (format!("{first}[{index}]"), first.clone(), beyond)
                })
                .collect())
        }
    }
}
