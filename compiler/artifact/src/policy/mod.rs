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
//! - So has a `medium` risk tool: the compiler writes the default confirmation (an `approval`)
//!   for one that declares neither, so an artifact without one was edited to drop it.
//! - No agent allows a `prohibited` tool, and no node runs one.
//! - A tool's own `approval` is asked before each of its executions by the runtime, so it holds
//!   by construction. A tool approved only by interrupts (an *interrupt-approved* tool, whatever
//!   its risk) is approved by graph steps, so in every graph:
//!   - no node reachable from an entry runs an agent allowed to call it, itself or through
//!     agents it calls as tools at any depth: an interrupt earlier in the graph is not bound to
//!     the call a model makes later;
//!   - every node that runs it is unreachable from every entry once its approving interrupt nodes
//!     are removed (they dominate it), and unreachable from its own previous run without passing
//!     one of them again (each run needs a fresh approval);
//!   - nothing runs between the approval and the tool: every reachable node with a way into the
//!     tool's node is an approving interrupt node;
//!   - a rejecting answer is not an approval: an approving interrupt node leads into the tool's
//!     node only by *approving* ways, those a run takes only after an approving answer (a plain
//!     edge, since a rejection ends the run there, or a route arm that tests the written
//!     decision for the approve value, see [`crate::answer_ways`]); its other route arms, its
//!     `on_error` handler and the visit-limit exits of its ways are *rejecting* ways.
//! - A tool with an `approval` of its own that interrupts also approve keeps the node rules
//!   above (its nodes run only straight after an approving answer, never across a fork), but not
//!   the agent rule: an agent's call of it asks its own approval. Without the node rules, a "no"
//!   at such an interrupt could detour to the tool node, where a call the tool's risk rules rate
//!   `low` runs without asking.
//!
//! An *entry* is the graph's `entry`, one of its extra `entries`, or (with `resume =
//! last_agent`) a reachable resume node, an agent node with a way to `END` where a thread's
//! next run may begin: a run may start at any of them, so every rule holds from each
//! (reachability and dominance are computed from all).
//! A way is any plain edge, handoff edge, route arm, fork (from its node into each branch and to
//! its join; a branch's first node and a join never run an interrupt-approved tool), `on_error` handler (from the failed node)
//! or visit-limit exit (from every node with a way into the limited node, see [`loops`]): the
//! search does not guess which arm a route takes or whether a node fails. The graph rules of interrupt-approved tools ignore nodes that no run can reach
//! from an entry, as the compiler does (it refuses such nodes with `TENX0303` anyway); a node
//! that runs a prohibited tool is refused wherever it is.
//!
//! Cost: the three graph rules together are equivalent to one local fact per tool node, checked
//! in a single pass over each graph's ways: the node is not an entry, and every reachable node
//! with a way into it is one of its tool's approving interrupt nodes, by an approving way. (A way from an entry, or
//! back from the tool, that avoids the approvers must end with a step from a reachable
//! non-approver into the node.) So there is no search per tool: a graph costs one
//! breadth-first search and one look at each way, and only if it has a node of an
//! interrupt-approved tool or an agent node that may call one; names are looked up in a sorted
//! list of the few prohibited and interrupt-approved tools, not in all of `tools`. The whole
//! artifact costs time linear in its size, plus one breadth-first search over `agent_tools` for
//! each agent that calls agents as tools (what it reaches). Only the first violation found is explained with a
//! path, which takes up to three more searches of its graph; the others are counted.

mod answers;
mod loops;
#[cfg(test)]
mod tests;
mod topology;
mod violation;

use std::collections::BTreeMap;

use crate::model::{Artifact, Graph, Interrupt, NodeKind, Risk, Tool};
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
    // The only tools the graph rules look at: prohibited ones and those interrupts approve, in
    // name order. Usually few, so looking a name up here is cheaper than in `artifact.tools`.
    let mut guarded: Vec<(&str, &Tool)> = Vec::new();
    for (name, tool) in &artifact.tools {
        if tool.risk == Risk::High && tool.approval.is_none() && tool.approved_by.is_empty() {
            found.add(|| PolicyViolation::HighRiskWithoutApproval { tool: name.clone() });
        }
        if tool.risk == Risk::Medium && tool.approval.is_none() && tool.approved_by.is_empty() {
            found.add(|| PolicyViolation::MediumRiskWithoutConfirmation { tool: name.clone() });
        }
        if tool.risk == Risk::Prohibited || !tool.approved_by.is_empty() {
            guarded.push((name, tool));
        }
    }
    if guarded.is_empty() {
        return found.into_result();
    }
    let guarded = Guarded(guarded);
    // For each agent allowed to call an interrupt-approved tool, itself or through agents it
    // calls as tools, those tools, each with the agents called on the way (none when direct).
    let mut calls: BTreeMap<&str, Vec<Call<'_>>> = BTreeMap::new();
    for (agent, spec) in &artifact.agents {
        for (name, tool) in spec.allowed_tools.iter().filter_map(|name| guarded.get(name)) {
            if tool.risk == Risk::Prohibited {
                found.add(|| PolicyViolation::ProhibitedToolOffered {
                    agent: agent.clone(),
                    tool: name.to_owned(),
                });
            }
            if interrupt_approved(tool) {
                calls.entry(agent).or_default().push(Call {
                    name,
                    tool,
                    through: Vec::new(),
                });
            }
        }
        // An agent that calls another agent as a tool calls, through it, every tool that agent
        // may call, and so on at any depth: an interrupt in the graph approves none of them.
        if spec.agent_tools.is_empty() {
            continue;
        }
        let reached = crate::check::agent_tools::reached(artifact, agent);
        for (index, called) in reached.iter().enumerate() {
            let inner = artifact
                .agents
                .get(called.agent)
                .map(|inner| inner.allowed_tools.as_slice())
                .unwrap_or_default();
            for (name, tool) in inner.iter().filter_map(|name| guarded.get(name)) {
                let list = calls.entry(agent).or_default();
                if interrupt_approved(tool) && !list.iter().any(|call| call.name == name) {
                    let through = crate::check::agent_tools::chain(&reached, index);
                    list.push(Call { name, tool, through });
                }
            }
        }
    }
    for (name, graph) in &artifact.graphs {
        check_graph(&guarded, name, graph, &calls, &artifact.interrupts, &mut found);
    }
    found.into_result()
}

/// An interrupt-approved tool an agent's model can have run: by name, with the agents called as
/// tools on the way (empty when the agent may call it itself).
struct Call<'a> {
    name: &'a str,
    tool: &'a Tool,
    through: Vec<&'a str>,
}

/// The prohibited and interrupt-approved tools, sorted by name.
struct Guarded<'a>(Vec<(&'a str, &'a Tool)>);

impl<'a> Guarded<'a> {
    /// The tool of this name, if it is one of them.
    fn get(&self, name: &str) -> Option<(&'a str, &'a Tool)> {
        let at = self.0.binary_search_by(|(key, _)| (*key).cmp(name)).ok()?;
        self.0.get(at).copied()
    }
}

/// Violations found: the first, explained, and a count of all.
#[derive(Default)]
struct Found {
    first: Option<PolicyViolation>,
    count: usize,
}

impl Found {
    /// `Err` with the first violation, if there is one.
    fn into_result(self) -> Result<(), Refusal> {
        match self.first {
            None => Ok(()),
            Some(violation) => Err(Refusal {
                violation,
                more: self.count.saturating_sub(1),
            }),
        }
    }

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
    guarded: &Guarded<'_>,
    graph_name: &str,
    graph: &Graph,
    calls: &BTreeMap<&str, Vec<Call<'_>>>,
    interrupts: &BTreeMap<String, Interrupt>,
    found: &mut Found,
) {
    // Prohibited tool nodes need no search; a graph with no node of an interrupt-approved tool
    // and no agent node that may call one needs none at all.
    let mut needs_search = false;
    for (node_name, node) in &graph.nodes {
        match node.kind {
            NodeKind::Tool => {
                let Some((tool, spec)) = guarded.get(&node.reference) else {
                    continue;
                };
                if spec.risk == Risk::Prohibited {
                    found.add(|| PolicyViolation::ProhibitedToolRun {
                        graph: graph_name.to_owned(),
                        node: node_name.clone(),
                        tool: tool.to_owned(),
                    });
                }
                needs_search |= !spec.approved_by.is_empty();
            }
            NodeKind::Agent => needs_search |= calls.contains_key(node.reference.as_str()),
            NodeKind::Interrupt | NodeKind::Graph => {}
        }
    }
    if !needs_search {
        return;
    }
    let topology = Topology::build(graph);
    let starts = topology.starts();
    if starts.is_empty() {
        return;
    }
    let reachable = topology.reach(starts, |_| false);
    // The tool an interrupt approves that each node runs, if any (interrupt-approved or not).
    let approved: Vec<Option<Approved<'_>>> = (0..topology.len())
        .map(|index| {
            let node = topology.node(index).filter(|node| node.kind == NodeKind::Tool)?;
            let (name, tool) = guarded.get(&node.reference)?;
            (!tool.approved_by.is_empty()).then_some(Approved { name, tool })
        })
        .collect();
    // Nodes of interrupt-approved tools that a run can reach other than straight from an
    // approving interrupt node: a start (the entry or an extra entry), or after any other
    // reachable node.
    let mut unapproved = vec![false; topology.len()];
    for &start in starts {
        if let Some(Some(_)) = approved.get(start)
            && let Some(flag) = unapproved.get_mut(start)
        {
            *flag = true;
        }
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
    // An approving interrupt node may lead into the tool only by a way an approving answer
    // takes: a rejecting way (a route arm a rejection can take, a failure handler, a visit
    // limit's exit) into a tool it approves bypasses the approval.
    let rejecting = answers::rejecting_ways(graph, interrupts);
    let rejected = |from: usize| -> Vec<usize> {
        rejecting
            .get(topology.name(from))
            .into_iter()
            .flatten()
            .filter_map(|name| topology.index(name))
            .collect()
    };
    for from in (0..topology.len()).filter(|&from| reachable.contains(from)) {
        for to in rejected(from) {
            if let Some(Some(target)) = approved.get(to)
                && approves(&topology, from, target.tool)
                && let Some(flag) = unapproved.get_mut(to)
            {
                *flag = true;
            }
        }
    }
    // A branch's first node and a join are entered from the fork: an approval asked before it
    // is not carried into a branch, nor out of one.
    for fork in &graph.forks {
        for node in fork.branches.iter().chain(std::iter::once(&fork.join)) {
            let Some(index) = topology.index(node) else { continue };
            if let Some(Some(target)) = approved.get(index)
                && reachable.contains(index)
            {
                found.add(|| PolicyViolation::ApprovalAcrossFork {
                    graph: graph_name.to_owned(),
                    fork: fork.from.clone(),
                    node: node.clone(),
                    tool: target.name.to_owned(),
                    risk: target.tool.risk,
                });
                if let Some(flag) = unapproved.get_mut(index) {
                    *flag = false;
                }
            }
        }
    }
    for index in 0..topology.len() {
        if let (Some(true), Some(Some(target))) = (unapproved.get(index), approved.get(index)) {
            found.add(|| explain_unapproved(&topology, graph_name, index, *target, &rejected));
        }
        let agent = topology.node(index).filter(|node| node.kind == NodeKind::Agent);
        let Some(tools) = agent.and_then(|node| calls.get(node.reference.as_str())) else {
            continue;
        };
        if !reachable.contains(index) {
            continue;
        }
        for call in tools {
            let (name, tool) = (call.name, call.tool);
            found.add(|| {
                let around = topology.reach(starts, |node| approves(&topology, node, tool));
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
                    path: topology
                        .names_of(&path)
                        .into_iter()
                        .chain(call.through.iter().map(|&agent| agent.to_owned()))
                        .collect(),
                    through: call.through.len(),
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
/// compiler's order: reached from an entry around the approvers; reached again after its own
/// run; or entered from a node other than an approver.
fn explain_unapproved(
    topology: &Topology<'_>,
    graph: &str,
    index: usize,
    target: Approved<'_>,
    rejected: &dyn Fn(usize) -> Vec<usize>,
) -> PolicyViolation {
    let is_approver = |node: usize| approves(topology, node, target.tool);
    let (graph, tool, risk) = (graph.to_owned(), target.name.to_owned(), target.tool.risk);
    let starts = topology.starts();
    let around = topology.reach(starts, is_approver);
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
    let reachable = topology.reach(starts, |_| false);
    let before = (0..topology.len()).find(|&node| {
        node != index && !is_approver(node) && reachable.contains(node) && topology.successors(node).contains(&index)
    });
    let Some(before) = before else {
        let approver = (0..topology.len())
            .find(|&node| is_approver(node) && reachable.contains(node) && rejected(node).contains(&index));
        if let Some(approver) = approver {
            let mut path = reachable.path_to(approver);
            path.push(index);
            return PolicyViolation::RejectionReachesTool {
                graph,
                interrupt: topology.name(approver).to_owned(),
                tool,
                risk,
                path: topology.names_of(&path),
            };
        }
        // Never taken: a node is flagged because it is an entry (found by `around`), has a
        // way in from a reachable non-approver: itself (found by `again`) or another node
        // (found by `before`), or a rejecting way in from an approver (found just above).
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
