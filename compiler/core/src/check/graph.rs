//! Graph structure: every graph has an entry; every edge, route and entry names a real node;
//! every node is reachable from an entry (`entry` or one of `entries`) and can reach `END`; no cycle is a trap; every
//! conditional route has a fallback and its labels are produced and handled; handoffs stay
//! inside the graph along declared edges; each node has one way to continue.

use super::Facts;
use super::topology::{END, NodeId, PerNode, Target, Topology};
use crate::ast::{ArmKind, GraphDecl, Ident, Param};
use crate::resolve::{DeclKind, Located};
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, FileId, Label, Span};

mod answers;
mod entries;
pub(crate) mod forks;
mod handoff_edges;
mod loops;
mod reducers;
mod results;
mod resume;
mod retries;
pub(crate) mod routes;
mod tool_nodes;
// Subgraph nodes and their state mappings.
mod subgraphs;

/// How many nodes and transitions of a cycle a diagnostic names; a bigger cycle is summarised.
const SHOWN: usize = 8;
/// LangGraph's name for where a graph begins, which `.tenx` has no node for.
const START: &str = "START";

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    handoff_edges::self_handoffs(facts, diagnostics);
    for (graph, topology) in facts.program.graphs.iter().zip(&facts.topologies) {
        GraphCheck {
            facts,
            graph,
            topology,
            file: graph.file,
            diagnostics: &mut *diagnostics,
            unknown: BTreeMap::new(),
        }
        .run();
    }
}

struct GraphCheck<'a, 'd> {
    facts: &'a Facts<'a>,
    graph: &'a Located<GraphDecl>,
    topology: &'a Topology,
    file: FileId,
    diagnostics: &'d mut Vec<Diagnostic>,
    /// Names already reported as not being nodes of this graph (`TENX0302`), with the index
    /// of that diagnostic: later uses become secondary labels of the same diagnostic.
    unknown: BTreeMap<String, usize>,
}

impl GraphCheck<'_, '_> {
    fn g(&self) -> &GraphDecl {
        &self.graph.decl
    }

    fn report(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn run(&mut self) {
        self.duplicate_nodes();
        self.entry();
        entries::check(self);
        resume::check(self);
        self.edges();
        routes::check(self);
        self.handoffs();
        handoff_edges::duplicate_edges(self);
        tool_nodes::check(self);
        results::check(self);
        answers::check(self);
        loops::check(self);
        retries::check(self);
        subgraphs::check(self);
        forks::check(self);
        reducers::check(self);
        self.successors();
        self.reachability();
    }

    fn duplicate_nodes(&mut self) {
        let mut seen: std::collections::BTreeMap<String, Span> = Default::default();
        let nodes = self.g().nodes.clone();
        for node in &nodes {
            if let Some(first) = seen.get(&node.name) {
                let d = Diagnostic::new(
                    Code::TENX0323,
                    format!("`{}` is listed twice in `nodes`", node.name),
                    self.file,
                    node.span,
                )
                .label("listed again here")
                .secondary(self.file, *first, "first listed here")
                .help("list each node once");
                self.report(d);
            } else {
                seen.insert(node.name.clone(), node.span);
            }
            if node.name == END {
                let d = Diagnostic::new(Code::TENX0325, "`END` cannot be listed as a node", self.file, node.span)
                    .label("`END` is built in")
                    .help("remove it from `nodes`; edges can lead to `END` without declaring it");
                self.report(d);
            }
        }
    }

    fn entry(&mut self) {
        let name = self.g().name.clone();
        match self.g().entry.clone() {
            None => {
                let mut d = Diagnostic::new(
                    Code::TENX0301,
                    format!("graph `{}` has no entry node", name.name),
                    self.file,
                    name.span,
                )
                .label("no `entry` in this graph");
                d = match self.topology.nodes.first() {
                    Some(first) => d.help(format!("add `entry = {}`", first.name)),
                    None => d.help("add `nodes = [...]` and `entry = <node>`"),
                };
                self.report(d);
            }
            Some(entry) if entry.name == END => {
                let d = Diagnostic::new(Code::TENX0302, "the entry cannot be `END`", self.file, entry.span)
                    .label("a run must start at a node")
                    .help("set `entry` to an agent, tool or interrupt node");
                self.report(d);
            }
            Some(entry) => {
                self.check_node_ref(&entry, "the entry");
            }
        }
    }

    /// Reports a reference to something that is not a node of this graph, once per name: a
    /// later use of the same name is added to the first report. A name listed in `nodes` that
    /// is not a node was already reported by resolve (unknown name or wrong kind). Returns
    /// whether it is a node.
    fn check_node_ref(&mut self, ident: &Ident, context: &str) -> bool {
        if self.topology.index.contains_key(&ident.name) {
            return true;
        }
        if self.g().nodes.iter().any(|n| n.name == ident.name) {
            return false;
        }
        if let Some(d) = self.unknown.get(&ident.name).and_then(|&i| self.diagnostics.get_mut(i)) {
            d.secondary.push(Label::new(self.file, ident.span, "also used here"));
            return false;
        }
        self.unknown.insert(ident.name.clone(), self.diagnostics.len());
        let graph = self.g().name.name.clone();
        let mut d = Diagnostic::new(
            Code::TENX0302,
            format!(
                "{context} names `{}`, which is not a node of graph `{graph}`",
                ident.name
            ),
            self.file,
            ident.span,
        )
        .label("not a node of this graph");
        let declared = self.facts.program.lookup(&ident.name).copied();
        d = match declared {
            Some(s) if matches!(s.kind(), DeclKind::Agent | DeclKind::Tool | DeclKind::Interrupt) => d
                .secondary(
                    s.file,
                    s.span,
                    format!("{} `{}` is declared here", s.kind().as_str(), ident.name),
                )
                .help(format!("add `{}` to the `nodes` of graph `{graph}`", ident.name)),
            // LangGraph's first node: a port that fans out at once writes `parallel START`.
            _ if ident.name == START => d
                .help("begin at a node that takes the request and fork out of it: `entry = intake` and `parallel intake { … }`")
                .note("there is no `START` node: a run begins at the graph's `entry`, and a fork always leaves a node that has run (LangGraph's edges out of `START` become a first node whose way on is the fork)"),
            _ => {
                let mut names: Vec<&str> = self.topology.nodes.iter().map(|n| n.name.as_str()).collect();
                names.push(END);
                d.maybe_help(crate::did_you_mean(&ident.name, names.iter()).map(|s| format!("did you mean `{s}`?")))
            }
        };
        self.report(d);
        false
    }

    fn edges(&mut self) {
        let edges = self.g().edges.clone();
        for edge in &edges {
            if edge.from.name == END {
                let d = Diagnostic::new(
                    Code::TENX0314,
                    format!("the edge `END -> {}` leaves `END`", edge.to.name),
                    self.file,
                    edge.from.span,
                )
                .label("nothing runs after `END`")
                .help(format!(
                    "remove the edge; if the run should end after `{0}`, write `{0} -> END`",
                    edge.to.name
                ));
                self.report(d);
            } else {
                self.check_node_ref(
                    &edge.from,
                    &format!("the edge `{} -> {}`", edge.from.name, edge.to.name),
                );
            }
            if edge.to.name != END {
                self.check_node_ref(&edge.to, &format!("the edge `{} -> {}`", edge.from.name, edge.to.name));
            }
        }
    }

    /// Handoffs go to agent nodes of the same graph, along declared edges.
    fn handoffs(&mut self) {
        for node in self.topology.nodes.clone() {
            if node.kind() != DeclKind::Agent {
                continue;
            }
            let Some(agent) = node.decl.agent().and_then(|a| self.facts.program.agents.get(a)) else {
                continue;
            };
            // A handoff to the agent itself is reported once, for the agent (`TENX0320`).
            for target in agent.decl.handoffs.iter().filter(|t| t.name != node.name) {
                let target_node = self
                    .topology
                    .index
                    .get(&target.name)
                    .and_then(|&n| self.topology.nodes.get(n));
                let Some(target_node) = target_node.filter(|t| t.kind() == DeclKind::Agent) else {
                    // An unknown name or one of the wrong kind is reported by resolve (TENX0101,
                    // TENX0102); here only agents that are not nodes of this graph.
                    if self
                        .facts
                        .program
                        .lookup(&target.name)
                        .is_none_or(|s| s.kind() != DeclKind::Agent)
                    {
                        continue;
                    }
                    let graph = &self.g().name.name;
                    let d = Diagnostic::new(
                        Code::TENX0310,
                        format!(
                            "agent `{}` hands off to agent `{}`, which is not a node of graph `{graph}`",
                            node.name, target.name
                        ),
                        agent.file,
                        target.span,
                    )
                    .label("not an agent node of this graph")
                    .secondary(
                        self.file,
                        node.span,
                        format!("`{}` is a node of graph `{graph}` here", node.name),
                    )
                    .help(format!(
                        "add `{1}` to the `nodes` of graph `{graph}` with an edge `{0} -> {1}`, or remove the handoff",
                        node.name, target.name
                    ))
                    .note("a handoff moves the run along an edge of its own graph, never into another graph");
                    self.report(d);
                    continue;
                };
                // Only a declared edge `a -> b` is a handoff edge. A route arm that leads to the
                // target is a way on after the agent answers, not the move its handoff tool
                // makes, and lowering writes handoff edges from declared edges alone.
                let has_edge = self
                    .g()
                    .edges
                    .iter()
                    .any(|e| e.from.name == node.name && e.to.name == target_node.name);
                if !has_edge {
                    let arm = self
                        .g()
                        .routes
                        .iter()
                        .filter(|r| r.from.name == node.name)
                        .flat_map(|r| r.arms.iter())
                        .find(|arm| arm.target.name == target_node.name)
                        .map(|arm| arm.target.span);
                    let mut d = Diagnostic::new(
                        Code::TENX0311,
                        format!(
                            "agent `{}` hands off to `{}`, but no edge leads there",
                            node.name, target.name
                        ),
                        agent.file,
                        target.span,
                    )
                    .label("handoff without an edge")
                    .secondary(
                        self.file,
                        self.g().name.span,
                        format!(
                            "graph `{}` has no edge `{} -> {}`",
                            self.g().name.name,
                            node.name,
                            target.name
                        ),
                    )
                    .help(format!(
                        "add `{} -> {}` to graph `{}`",
                        node.name,
                        target.name,
                        self.g().name.name
                    ))
                    .note("a handoff is a choice among declared edges; the model cannot move the run anywhere else");
                    if let Some(span) = arm {
                        d = d
                            .secondary(self.file, span, "a route arm leads here, but it is not a handoff edge")
                            .note(format!(
                                "the route decides where `{}` goes when it answers without handing off; the handoff needs its own edge",
                                node.name
                            ));
                    }
                    self.report(d);
                }
            }
        }
    }

    /// Each node continues one way: one plain edge, or one route, plus its handoff edges.
    fn successors(&mut self) {
        let file = self.file;
        // Edges and routes by source node, built once (graphs can have 10,000 nodes).
        let mut edges_from: std::collections::BTreeMap<&str, Vec<&crate::ast::Edge>> = Default::default();
        let mut routes_from: std::collections::BTreeMap<&str, Vec<Span>> = Default::default();
        let graph = &self.graph.decl;
        for edge in &graph.edges {
            edges_from.entry(edge.from.name.as_str()).or_default().push(edge);
        }
        for route in &graph.routes {
            routes_from
                .entry(route.from.name.as_str())
                .or_default()
                .push(route.span);
        }
        // A fork is a way on too: a node with a fork and an edge or a route has two.
        for fork in &graph.forks {
            routes_from.entry(fork.from.name.as_str()).or_default().push(fork.span);
        }
        let mut found = Vec::new();
        for node in &self.topology.nodes {
            let handoff_targets: BTreeSet<String> = node
                .decl
                .agent()
                .and_then(|a| self.facts.program.agents.get(a))
                .map(|a| a.decl.handoffs.iter().map(|h| h.name.clone()).collect())
                .unwrap_or_default();
            let out_edges = edges_from.get(node.name.as_str()).map_or(&[][..], Vec::as_slice);
            let plain = out_edges
                .iter()
                .filter(|e| !handoff_targets.contains(&e.to.name))
                .map(|e| e.span);
            let routes = routes_from.get(node.name.as_str()).into_iter().flatten().copied();
            let ways: Vec<Span> = plain.chain(routes).collect();
            let hands_off = out_edges.iter().any(|e| handoff_targets.contains(&e.to.name));
            if ways.is_empty() && hands_off {
                let d = Diagnostic::new(
                    Code::TENX0316,
                    format!("agent `{}` has no edge for when it does not hand off", node.name),
                    file,
                    node.span,
                )
                .label("only handoff edges leave this node")
                .help(format!(
                    "add `{} -> END` (or an edge to the node that runs next)",
                    node.name
                ))
                .note("a handoff is the model's choice; when it answers without one, the run needs somewhere to go");
                found.push(d);
            }
            if ways.len() > 1 {
                let mut d = Diagnostic::new(
                    Code::TENX0312,
                    format!(
                        "node `{}` has {} ways to continue and nothing to choose between them",
                        node.name,
                        ways.len()
                    ),
                    file,
                    ways.get(1).copied().unwrap_or(node.span),
                )
                .label("another way to continue");
                if let Some(first) = ways.first() {
                    d = d.secondary(file, *first, "first way to continue");
                }
                let targets: Vec<&str> = out_edges
                    .iter()
                    .filter(|e| !handoff_targets.contains(&e.to.name) && e.to.name != END)
                    .map(|e| e.to.name.as_str())
                    .collect();
                let one = "keep one edge, or decide with one `route` (arms are tried in order, `else` last)";
                d = match targets.as_slice() {
                    [first, second, ..] if first != second => d.help(format!(
                        "{one}; to run `{first}` and `{second}` at the same time, write `parallel {} {{ branches = [{first}, {second}]  join = ... }}`",
                        node.name
                    )),
                    _ => d.help(one),
                };
                if !handoff_targets.is_empty() {
                    d = d.note("edges to an agent's `handoffs` targets are handoff choices and do not count");
                }
                found.push(d);
            }
        }
        self.diagnostics.extend(found);
    }

    /// Reachability, dead ends and traps. Where an edge or arm names something that is not a
    /// node (`TENX0302`), the graph's shape is unknown: its source counts as reaching `END`, and
    /// no node is called unreachable. A handoff target counts as reached through its handoff
    /// even when the edge is missing (`TENX0311`). Only the causes are reported: a dead end
    /// (a node with no edge or route at all) and a cycle that no transition leaves; the nodes
    /// that merely lead into them are fixed with them.
    fn reachability(&mut self) {
        let t = self.topology;
        if t.entry.is_none() {
            return;
        }
        let graph = self.g().name.name.clone();
        let open = self.open_nodes();
        let reached = self.reached_with_handoffs(&t.starts);
        let from = if t.starts.len() > 1 { "any entry" } else { "the entry" };
        let can_end = t.reaches_end(&open);
        let is = |v: &PerNode<bool>, n: NodeId| v.get(n).copied().unwrap_or(false);
        let shape_known = !t.nodes.ids().any(|n| is(&open, n) && is(&reached, n));
        for (n, node) in t.nodes.iter_enumerated() {
            if shape_known && !is(&reached, n) {
                let d = Diagnostic::new(
                    Code::TENX0303,
                    format!("node `{}` cannot be reached from {from}", node.name),
                    self.file,
                    node.span,
                )
                .label("unreachable")
                .help(format!(
                    "add an edge or route arm that leads to `{}`, or remove it from graph `{graph}`",
                    node.name
                ));
                self.report(d);
            }
        }
        let cycles = t.cycles();
        let mut component = PerNode::filled(usize::MAX, t.nodes.len());
        for (c, cycle) in cycles.iter().enumerate() {
            for &n in cycle {
                if let Some(slot) = component.get_mut(n) {
                    *slot = c;
                }
            }
        }
        for (c, cycle) in cycles.iter().enumerate() {
            let outside = |target: &Target| match target {
                Target::End => true,
                Target::Node(m) => component.get(*m) != Some(&c),
            };
            let leaves = cycle.iter().any(|&n| {
                is(&open, n)
                    || t.successors
                        .get(n)
                        .into_iter()
                        .flatten()
                        .any(|(target, _)| outside(target))
            });
            if leaves || !cycle.iter().any(|&n| is(&reached, n)) {
                continue;
            }
            let mut names: Vec<String> = cycle
                .iter()
                .take(SHOWN)
                .filter_map(|&n| t.nodes.get(n))
                .map(|n| format!("`{}`", n.name))
                .collect();
            if cycle.len() > SHOWN {
                names.push(format!("{} more nodes", cycle.len() - SHOWN));
            }
            // The transitions inside the cycle, in source order: the first is the primary label.
            let mut inside: Vec<Span> = cycle
                .iter()
                .flat_map(|&n| t.successors.get(n).into_iter().flatten())
                .map(|(_, via)| via.span())
                .collect();
            inside.sort();
            inside.dedup();
            let Some(&primary) = inside.first() else { continue };
            let (code, message) = match self.g().recursion_limit {
                Some((limit, _)) => (
                    Code::TENX0306,
                    format!(
                        "the cycle through {} ends only when the recursion limit of {limit} stops the run",
                        names.join(", ")
                    ),
                ),
                None => (
                    Code::TENX0305,
                    format!("the cycle through {} has no way out", names.join(", ")),
                ),
            };
            let mut d =
                Diagnostic::new(code, message, self.file, primary).label("no edge or route arm leaves this cycle");
            for span in inside.iter().skip(1).take(SHOWN) {
                d = d.secondary(self.file, *span, "part of the cycle");
            }
            d = d.help("add a route arm from one of these nodes to `END`, or to a node that reaches it");
            if let Some((_, span)) = self.g().recursion_limit {
                d = d.secondary(self.file, span, "a run caught in the cycle stops here, with an error");
            }
            self.report(d);
        }
        let declared_ways: BTreeSet<&str> = self
            .g()
            .edges
            .iter()
            .map(|e| e.from.name.as_str())
            .chain(self.g().routes.iter().map(|r| r.from.name.as_str()))
            .chain(self.g().forks.iter().map(|f| f.from.name.as_str()))
            .collect();
        let mut found = Vec::new();
        for (n, node) in t.nodes.iter_enumerated() {
            if !is(&reached, n) || declared_ways.contains(node.name.as_str()) {
                continue;
            }
            // Its `on_error` handler is a way out only when it fails: when it succeeds, the run
            // would have nowhere to go.
            let (message, label) = if is(&can_end, n) {
                (
                    format!("node `{}` has no way on when it succeeds", node.name),
                    "only its `on_error` handler leaves this node",
                )
            } else {
                (
                    format!("node `{}` has no path to `END`", node.name),
                    "no edge or route leaves this node",
                )
            };
            let d = Diagnostic::new(Code::TENX0304, message, self.file, node.span)
                .label(label)
                .help(format!(
                    "add `{} -> END`, or an edge to the node that should run next",
                    node.name
                ));
            found.push(d);
        }
        self.diagnostics.extend(found);
    }

    /// For each node, whether an edge or route arm leaving it names something that is not a
    /// node of the graph (reported as `TENX0302`).
    fn open_nodes(&self) -> PerNode<bool> {
        let t = self.topology;
        let mut open = PerNode::filled(false, t.nodes.len());
        let known = |name: &str| name == END || t.index.contains_key(name);
        let targets = self.g().edges.iter().map(|e| (&e.from.name, &e.to.name)).chain(
            self.g()
                .routes
                .iter()
                .flat_map(|r| r.arms.iter().map(move |a| (&r.from.name, &a.target.name))),
        );
        let forks = self
            .g()
            .forks
            .iter()
            .flat_map(|f| f.branches.iter().chain(&f.join).map(move |to| (&f.from.name, &to.name)));
        for (from, to) in targets.chain(forks) {
            if !known(to)
                && let Some(slot) = t.index.get(from).and_then(|&n| open.get_mut(n))
            {
                *slot = true;
            }
        }
        open
    }

    /// The nodes reachable from `starts` along transitions and handoffs (iterative).
    fn reached_with_handoffs(&self, starts: &[NodeId]) -> PerNode<bool> {
        let t = self.topology;
        let mut reached = PerNode::filled(false, t.nodes.len());
        let mut stack = starts.to_vec();
        for &start in starts {
            if let Some(slot) = reached.get_mut(start) {
                *slot = true;
            }
        }
        while let Some(n) = stack.pop() {
            let steps = t
                .successors
                .get(n)
                .into_iter()
                .flatten()
                .filter_map(|(target, _)| match target {
                    Target::Node(m) => Some(*m),
                    Target::End => None,
                });
            let handoffs = t
                .nodes
                .get(n)
                .and_then(|node| node.decl.agent())
                .and_then(|a| self.facts.program.agents.get(a))
                .into_iter()
                .flat_map(|agent| agent.decl.handoffs.iter())
                .filter_map(|h| t.index.get(&h.name).copied())
                .filter(|&m| t.nodes.get(m).is_some_and(|node| node.kind() == DeclKind::Agent));
            for m in steps.chain(handoffs).collect::<Vec<_>>() {
                if let Some(slot) = reached.get_mut(m)
                    && !*slot
                {
                    *slot = true;
                    stack.push(m);
                }
            }
        }
        reached
    }

    /// The state field named `name`.
    fn state_field(&self, name: &str) -> Option<&Param> {
        self.g().state.iter().find(|p| p.name.name == name)
    }
}

/// Whether an arm is the fallback.
fn is_else(kind: &ArmKind) -> bool {
    matches!(kind, ArmKind::Else)
}
