//! The step loop: run the node the branch is at, then follow its way out (an edge, a route, a
//! handoff), through visit limits, until the run ends, pauses or fails. A node's failure goes to
//! its `on_error` handler when it has one (recorded in the run); otherwise the run fails.

use serde_json::{Value, json};
use tenx_artifact::{END, EdgeKind, NodeKind};

use crate::ports::Event;
use crate::{ErrorCode, RunError};

use super::{Flow, StepError, Working};

/// Runs the branch from the node it is at until the run finishes, pauses or fails.
pub(crate) async fn drive(working: &mut Working<'_>) -> Result<(), RunError> {
    loop {
        if working.stop_requested() && !settles_first(working)? {
            return super::finish::stopped(working).await;
        }
        if working.progress()?.fork.is_some() {
            match super::fork::run(working).await {
                Ok(super::fork::ForkFlow::Joined) => continue,
                Ok(super::fork::ForkFlow::Paused) => return Ok(()),
                Ok(super::fork::ForkFlow::Stopped) => return super::finish::stopped(working).await,
                Err(error) => return super::finish::failed(working, error).await,
            }
        }
        let node = working.branch()?.node.clone();
        if node == END || working.lane_ends_at(&node) {
            return super::finish::completed(working, None).await;
        }
        working.record.execution.current_node.clone_from(&node);
        let step = working.branch()?.steps;
        working.emit_with(|| Event::NodeStarted {
            node: node.clone(),
            step,
            branch: None,
        });
        let flow = step_node(working, &node).await;
        match flow {
            Ok(Flow::Go(target)) => {
                let step = working.branch()?.steps;
                working.emit_with(|| Event::NodeFinished {
                    node: node.clone(),
                    step,
                    branch: None,
                });
                let ends = target == END;
                if ends {
                    working.branch_mut()?.last_node = Some(node.clone());
                }
                // A lane's branch ends where it would enter its join: that end commits next.
                let finishes = ends || working.lane_ends_at(&target);
                // A way that cannot be taken (a fork that cannot start, a target the graph does
                // not have) fails the run as a failed step does: in a fork's branch, the branch
                // (so a stop beside it still keeps the fork, see `fork::settle`).
                if let Err(error) = enter(working, target) {
                    return super::finish::failed(working, error).await;
                }
                // The run's (or the lane's) end commits right after (completed, or stopped): one
                // commit, not two.
                if !finishes {
                    working.commit().await?;
                }
            }
            Ok(Flow::Stay) => working.commit().await?,
            Ok(Flow::Paused) => return Ok(()),
            Ok(Flow::Stopped) => return super::finish::stopped(working).await,
            Ok(Flow::End(text)) => return super::finish::completed(working, Some(text)).await,
            Err(StepError::Run(error)) => return super::finish::failed(working, error).await,
            Err(StepError::Node(failure)) => {
                let handler = working
                    .graph
                    .on_error
                    .iter()
                    .find(|exit| exit.node == node)
                    .map(|exit| exit.target.clone());
                let message = format!("Error in node '{node}': {}", failure.message);
                let Some(handler) = handler else {
                    let error = RunError::new(ErrorCode::NodeFailed, message).with_details(json!({"node": node}));
                    return super::finish::failed(working, error).await;
                };
                let errors = working
                    .record
                    .execution
                    .internal_data
                    .entry("errors")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(errors) = errors {
                    errors.push(json!({"code": ErrorCode::NodeFailed.as_str(), "node": node, "message": message}));
                }
                working.emit(Event::Error {
                    code: ErrorCode::NodeFailed.as_str().to_owned(),
                    message,
                });
                if let Err(error) = enter(working, handler) {
                    return super::finish::failed(working, error).await;
                }
                working.commit().await?;
            }
        }
    }
}

/// Whether a stop waits for the branch's node to settle its round of calls before the run
/// stops: a call in flight (a crash left it; the node finishes it under its key, or, cut short
/// by the stop, keeps it as a stop keeps a call) and an agent's calls not sent yet (answered
/// "not run"), so a stopped run leaves neither a call in flight without its place in the
/// conversation nor a round half answered. Only outside a fork: a stopped branch keeps its call
/// in flight, and a run split into branches is kept whole (see [`super::stopped_fork`]).
fn settles_first(working: &Working<'_>) -> Result<bool, RunError> {
    if working.lane.is_some() || working.progress()?.fork.is_some() {
        return Ok(false);
    }
    let branch = working.branch()?;
    if branch.in_flight.is_some() {
        return Ok(true);
    }
    let node = branch.node.as_str();
    let agent = working
        .graph
        .nodes
        .get(node)
        .is_some_and(|declared| declared.kind == NodeKind::Agent);
    Ok(agent && !super::agent::unanswered_calls(&working.record.context, node).is_empty())
}

/// Runs one node.
async fn step_node(working: &mut Working<'_>, node: &str) -> Result<Flow, StepError> {
    // A lane that answers an agent's call runs that agent alone; it is no node of the graph.
    if let Some(agent) = working.lane.as_ref().and_then(|lane| lane.agent.clone()) {
        return super::agent::agent_node(working, node, &agent).await;
    }
    let Some(declared) = working.graph.nodes.get(node) else {
        return Err(StepError::Run(unknown_target(
            working.graph_name.as_str(),
            "(the checkpoint)",
            node,
        )));
    };
    let reference = declared.reference.clone();
    match declared.kind {
        NodeKind::Agent => super::agent::agent_node(working, node, &reference).await,
        NodeKind::Tool => super::tool_node::tool_node(working, node, &reference).await,
        NodeKind::Interrupt => super::interrupt::interrupt_node(working, node, &reference).await,
        // A subgraph runs as a fork of one branch over its own graph (see `fork::start`).
        NodeKind::Graph => Ok(Flow::Go(super::fork::FORK.to_owned())),
    }
}

/// Moves the branch into `target`, following visit limits: a node entered `max` times already
/// in this run is not entered again; its limit's exit is, in turn.
pub(crate) fn enter(working: &mut Working<'_>, target: String) -> Result<(), RunError> {
    let graph = working.graph;
    if target == super::fork::FORK {
        working.branch_mut()?.approved = None;
        let from = working.branch()?.node.clone();
        return super::fork::start(working, &from);
    }
    // A branch ends where it would enter its join: the join's visit is the run's, not the branch's.
    if working.lane.as_ref().is_some_and(|lane| lane.join == target) {
        working.branch_mut()?.node = target;
        return Ok(());
    }
    let mut target = target;
    let mut hops = 0_usize;
    loop {
        if target != END && !graph.nodes.contains_key(&target) {
            let from = working.branch()?.node.clone();
            return Err(unknown_target(&working.graph_name, &from, &target));
        }
        let Some(limit) = graph.visit_limits.iter().find(|limit| limit.node == target) else {
            break;
        };
        let branch = working.branch_mut()?;
        let visits = branch.visits.entry(target.clone()).or_insert(0);
        if *visits < limit.max {
            *visits = visits.saturating_add(1);
            break;
        }
        hops = hops.saturating_add(1);
        if hops > graph.nodes.len() {
            return Err(RunError::new(
                ErrorCode::UnknownTarget,
                format!("visit limits of graph '{}' lead in a circle", working.graph_name),
            ));
        }
        working.emit(Event::NodeFinished {
            node: target.clone(),
            step: 0,
            branch: None,
        });
        target.clone_from(&limit.exit);
    }
    let branch = working.branch_mut()?;
    // An interrupt node's approval is for the tool node right after it: a run that goes anywhere
    // else first (another arm, a visit limit's exit, back to the interrupt) leaves it behind, so
    // no later way into the tool node finds an approval given for an earlier question.
    if branch.approved.as_ref().is_some_and(|grant| grant.tool_node != target) {
        branch.approved = None;
    }
    branch.node.clone_from(&target);
    // At END the thread keeps naming the node that ran last, as the reference does.
    if target != END {
        working.record.execution.current_node = target;
    }
    Ok(())
}

/// The way out of `node` when it finishes without a handoff: its route's first matching arm,
/// its fork ([`super::fork::FORK`]), else its plain edge.
pub(crate) fn next_after(working: &Working<'_>, node: &str) -> Result<String, RunError> {
    let graph = working.graph;
    // An agent called as a tool ends with its answer.
    if working.lane.as_ref().is_some_and(|lane| lane.agent.is_some()) {
        return Ok(END.to_owned());
    }
    if let Some(route) = graph.routes.iter().find(|route| route.from == node) {
        return match super::glue::choose(route, working.state()) {
            Some(target) => Ok(target.to_owned()),
            None => Err(RunError::new(
                ErrorCode::UnknownTarget,
                format!("no arm of the route out of '{node}' matched"),
            )
            .with_details(json!({"node": node}))),
        };
    }
    if graph.fork_of(node).is_some() {
        return Ok(super::fork::FORK.to_owned());
    }
    graph
        .edges
        .iter()
        .find(|edge| edge.from == node && edge.kind == EdgeKind::Plain)
        .map(|edge| edge.to.clone())
        .ok_or_else(|| {
            RunError::new(ErrorCode::UnknownTarget, format!("node '{node}' has no way out"))
                .with_details(json!({"node": node}))
        })
}

/// GRAPH_007: a way to a node the graph does not have (a tampered store or artifact).
pub(crate) fn unknown_target(graph: &str, from: &str, target: &str) -> RunError {
    RunError::new(
        ErrorCode::UnknownTarget,
        format!("node '{from}' of graph '{graph}' leads to '{target}', which the graph does not have"),
    )
    .with_details(json!({"node": from, "target": target}))
}
