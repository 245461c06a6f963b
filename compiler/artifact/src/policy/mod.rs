//! The risk policy, re-proved from the artifact alone: the rules the compiler proves in
//! `compiler/core/src/check/policy.rs` (`TENX0601`, `TENX0602`, `TENX0604`), checked again on the
//! lowered graph, so that an artifact edited by hand and resealed (or even signed) cannot run a
//! tool around its approval or offer a prohibited one. [`crate::seal`] runs it after the
//! structural self-checks ([`crate::check`]), so a compiler can never seal what a loader
//! refuses, and [`crate::load`] runs it last.
//!
//! The rules, as the compiler states them:
//!
//! - A `high` risk tool has an `approval` of its own or at least one approving interrupt.
//! - No agent allows a `prohibited` tool, and no node runs one.
//! - A tool's own `approval` is asked before each of its executions by the runtime, so it holds
//!   by construction. A tool approved only by interrupts (an *interrupt-approved* tool, whatever
//!   its risk) is approved by graph steps, so in every graph:
//!   - no node reachable from the entry runs an agent allowed to call it: an interrupt earlier
//!     in the graph is not bound to the call the model makes later;
//!   - every node that runs it is unreachable from the entry once its approving interrupt nodes
//!     are removed (they dominate it), and unreachable from its own previous run without passing
//!     one of them again (each run needs a fresh approval);
//!   - nothing runs between the approval and the tool: every reachable node with a way into the
//!     tool's node is an approving interrupt node.
//!
//! A way is any plain edge, handoff edge or route arm: the search does not guess which arm a
//! route takes. Nodes that no run can reach are ignored, as the compiler ignores them (it
//! refuses them with `TENX0303` anyway).
//!
//! Cost: the three graph rules together are equivalent to one local fact per tool node, checked
//! in a single pass over each graph's ways: the node is not the entry, and every reachable node
//! with a way into it is one of its tool's approving interrupt nodes. (A way from the entry, or
//! back from the tool, that avoids the approvers must end with a step from a reachable
//! non-approver into the node.) So a whole artifact costs one breadth-first search per graph
//! plus one look at each way and each allowed tool: linear in its size, however many tools
//! and graphs it has. Only the first violation found is explained with a path, which takes up to
//! three more searches of its graph; the others are counted.

#[cfg(test)]
mod tests;
mod topology;
mod violation;

use std::collections::BTreeMap;

use crate::model::{Artifact, Graph, NodeKind, Risk, Tool};
use topology::Topology;
pub use violation::PolicyViolation;
pub(crate) use violation::and_more;

/// The first violation found, and how many more there are.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) violation: PolicyViolation,
    pub(crate) more: usize,
}

/// Checks the risk policy of an artifact whose structure [`crate::check`] already accepted
/// (on any other artifact it still returns, never panics).
pub(crate) fn check(artifact: &Artifact) -> Result<(), Refusal> {
    let mut found = Found::default();
    for (name, tool) in &artifact.tools {
        if tool.risk == Risk::High && tool.approval.is_none() && tool.approved_by.is_empty() {
            found.add(|| PolicyViolation::HighRiskWithoutApproval { tool: name.clone() });
        }
    }
    // For each agent allowed to call an interrupt-approved tool, those tools.
    let mut calls: BTreeMap<&str, Vec<(&str, &Tool)>> = BTreeMap::new();
    for (agent, spec) in &artifact.agents {
        for name in &spec.allowed_tools {
            let Some(tool) = artifact.tools.get(name) else { continue };
            if tool.risk == Risk::Prohibited {
                found.add(|| PolicyViolation::ProhibitedToolOffered {
                    agent: agent.clone(),
                    tool: name.clone(),
                });
            } else if interrupt_approved(tool) {
                calls.entry(agent).or_default().push((name, tool));
            }
        }
    }
    for (name, graph) in &artifact.graphs {
        check_graph(artifact, name, graph, &calls, &mut found);
    }
    match found.first {
        None => Ok(()),
        Some(violation) => Err(Refusal {
            violation,
            more: found.count.saturating_sub(1),
        }),
    }
}

/// Violations found: the first, explained, and a count of all.
#[derive(Default)]
struct Found {
    first: Option<PolicyViolation>,
    count: usize,
}

impl Found {
    /// Counts a violation; `explain` runs only for the first.
    fn add(&mut self, explain: impl FnOnce() -> PolicyViolation) {
        if self.first.is_none() {
            self.first = Some(explain());
        }
        self.count += 1;
    }
}

/// Whether the tool's approval is a graph step rather than its own `approval` block.
fn interrupt_approved(tool: &Tool) -> bool {
    tool.approval.is_none() && !tool.approved_by.is_empty()
}

/// A node of a graph that runs an interrupt-approved tool.
#[derive(Clone, Copy)]
struct Approved<'a> {
    name: &'a str,
    tool: &'a Tool,
}

fn check_graph(
    artifact: &Artifact,
    graph_name: &str,
    graph: &Graph,
    calls: &BTreeMap<&str, Vec<(&str, &Tool)>>,
    found: &mut Found,
) {
    let topology = Topology::build(graph);
    let Some(entry) = topology.entry() else { return };
    let reachable = topology.reach(&[entry], |_| false);
    // The interrupt-approved tool each node runs, if any.
    let mut approved: Vec<Option<Approved<'_>>> = Vec::with_capacity(topology.len());
    for index in 0..topology.len() {
        let tool = topology
            .node(index)
            .filter(|node| node.kind == NodeKind::Tool)
            .and_then(|node| Some((node.reference.as_str(), artifact.tools.get(&node.reference)?)));
        approved.push(match tool {
            Some((name, tool)) if tool.risk == Risk::Prohibited => {
                found.add(|| PolicyViolation::ProhibitedToolRun {
                    graph: graph_name.to_owned(),
                    node: topology.name(index).to_owned(),
                    tool: name.to_owned(),
                });
                None
            }
            Some((name, tool)) if interrupt_approved(tool) => Some(Approved { name, tool }),
            _ => None,
        });
    }
    // Nodes of interrupt-approved tools that a run can reach other than straight from an
    // approving interrupt node: the entry, or after any other reachable node.
    let mut unapproved = vec![false; topology.len()];
    if let Some(Some(_)) = approved.get(entry)
        && let Some(flag) = unapproved.get_mut(entry)
    {
        *flag = true;
    }
    for from in (0..topology.len()).filter(|&from| reachable.contains(from)) {
        for &to in topology.successors(from) {
            if let Some(Some(target)) = approved.get(to)
                && !approves(&topology, from, target.tool)
                && let Some(flag) = unapproved.get_mut(to)
            {
                *flag = true;
            }
        }
    }
    for index in 0..topology.len() {
        if let (Some(true), Some(Some(target))) = (unapproved.get(index), approved.get(index)) {
            found.add(|| explain_unapproved(&topology, graph_name, index, *target));
        }
        let agent = topology.node(index).filter(|node| node.kind == NodeKind::Agent);
        let Some(tools) = agent.and_then(|node| calls.get(node.reference.as_str())) else {
            continue;
        };
        if !reachable.contains(index) {
            continue;
        }
        for &(name, tool) in tools {
            found.add(|| {
                let around = topology.reach(&[entry], |node| approves(&topology, node, tool));
                let path = if around.contains(index) {
                    around.path_to(index)
                } else {
                    reachable.path_to(index)
                };
                PolicyViolation::AgentCallsApprovedTool {
                    graph: graph_name.to_owned(),
                    node: topology.name(index).to_owned(),
                    tool: name.to_owned(),
                    risk: tool.risk,
                    path: topology.names_of(&path),
                }
            });
        }
    }
}

/// Whether `node` is an interrupt node that approves `tool`.
fn approves(topology: &Topology<'_>, node: usize, tool: &Tool) -> bool {
    topology
        .node(node)
        .is_some_and(|node| node.kind == NodeKind::Interrupt && tool.approved_by.binary_search(&node.reference).is_ok())
}

/// Which rule the node `index` of an interrupt-approved tool breaks, with its path, in the
/// compiler's order: reached from the entry around the approvers; reached again after its own
/// run; or entered from a node other than an approver.
fn explain_unapproved(topology: &Topology<'_>, graph: &str, index: usize, target: Approved<'_>) -> PolicyViolation {
    let is_approver = |node: usize| approves(topology, node, target.tool);
    let (graph, tool, risk) = (graph.to_owned(), target.name.to_owned(), target.tool.risk);
    let entry = topology.entry();
    let around = topology.reach(entry.as_slice(), is_approver);
    if around.contains(index) {
        let path = topology.names_of(&around.path_to(index));
        return PolicyViolation::ApprovalBypassed {
            graph,
            tool,
            risk,
            path,
        };
    }
    let again = topology.reach(topology.successors(index), is_approver);
    if again.contains(index) {
        let mut path = vec![index];
        path.extend(again.path_to(index));
        let path = topology.names_of(&path);
        return PolicyViolation::ApprovalReused {
            graph,
            tool,
            risk,
            path,
        };
    }
    let reachable = topology.reach(entry.as_slice(), |_| false);
    let before = (0..topology.len()).find(|&node| {
        node != index && !is_approver(node) && reachable.contains(node) && topology.successors(node).contains(&index)
    });
    let Some(before) = before else {
        // Not reached: a flagged node is the entry (found above) or entered from a reachable
        // non-approver, itself (found above) or another node (found here).
        return PolicyViolation::ApprovalBypassed {
            graph,
            tool,
            risk,
            path: topology.names_of(&[index]),
        };
    };
    let mut path = reachable.path_to(before);
    path.push(index);
    PolicyViolation::StepAfterApproval {
        graph,
        node: topology.name(before).to_owned(),
        tool,
        risk,
        path: topology.names_of(&path),
    }
}
