//! Graph structure: every graph has an entry; every edge, route and entry names a real node;
//! every node is reachable from the entry and can reach `END`; no cycle is a trap; every
//! conditional route has a fallback and its labels are produced and handled; handoffs stay
//! inside the graph along declared edges; each node has one way to continue.

use super::Facts;
use super::topology::{END, Target, Topology};
use crate::ast::{ArmKind, GraphDecl, Ident, Param};
use crate::resolve::{DeclKind, Located};
use std::collections::BTreeSet;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

mod routes;

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for (graph, topology) in facts.program.graphs.iter().zip(&facts.topologies) {
        GraphCheck { facts, graph, topology, file: graph.file, diagnostics: &mut *diagnostics }.run();
    }
}

struct GraphCheck<'a, 'd> {
    facts: &'a Facts<'a>,
    graph: &'a Located<GraphDecl>,
    topology: &'a Topology,
    file: FileId,
    diagnostics: &'d mut Vec<Diagnostic>,
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
        self.edges();
        routes::check(self);
        self.handoffs();
        self.successors();
        self.reachability();
    }

    fn duplicate_nodes(&mut self) {
        let mut seen: std::collections::BTreeMap<String, Span> = Default::default();
        let nodes = self.g().nodes.clone();
        for node in &nodes {
            if let Some(first) = seen.get(&node.name) {
                let d = Diagnostic::new(Code::TENX0107, format!("`{}` is listed twice in `nodes`", node.name), self.file, node.span)
                    .label("listed again here")
                    .secondary(self.file, *first, "first listed here");
                self.report(d);
            } else {
                seen.insert(node.name.clone(), node.span);
            }
            if node.name == END {
                let d = Diagnostic::new(Code::TENX0108, "`END` cannot be listed as a node", self.file, node.span)
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
                let mut d = Diagnostic::new(Code::TENX0301, format!("graph `{}` has no entry node", name.name), self.file, name.span)
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

    /// Reports a reference to something that is not a node of this graph. Returns whether it is
    /// a node (or `END` when `end_ok`).
    fn check_node_ref(&mut self, ident: &Ident, context: &str) -> bool {
        if self.topology.index.contains_key(&ident.name) {
            return true;
        }
        let graph = self.g().name.name.clone();
        let mut d = Diagnostic::new(
            Code::TENX0302,
            format!("{context} names `{}`, which is not a node of graph `{graph}`", ident.name),
            self.file,
            ident.span,
        )
        .label("not a node of this graph");
        let declared = self.facts.program.lookup(&ident.name).copied();
        d = match declared {
            Some(s) if matches!(s.kind, DeclKind::Agent | DeclKind::Tool | DeclKind::Interrupt) => d
                .secondary(s.file, s.span, format!("{} `{}` is declared here", s.kind.as_str(), ident.name))
                .help(format!("add `{}` to the graph's `nodes`", ident.name)),
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
                let d = Diagnostic::new(Code::TENX0314, format!("the edge `END -> {}` leaves `END`", edge.to.name), self.file, edge.from.span)
                    .label("nothing runs after `END`")
                    .help("remove the edge, or start it at the node that should run next");
                self.report(d);
            } else {
                self.check_node_ref(&edge.from, &format!("the edge `{} -> {}`", edge.from.name, edge.to.name));
            }
            if edge.to.name != END {
                self.check_node_ref(&edge.to, &format!("the edge `{} -> {}`", edge.from.name, edge.to.name));
            }
        }
    }

    /// Handoffs go to agent nodes of the same graph, along declared edges.
    fn handoffs(&mut self) {
        for node in self.topology.nodes.clone() {
            if node.kind != DeclKind::Agent {
                continue;
            }
            let Some(agent) = self.facts.program.agents.get(node.decl) else { continue };
            for target in &agent.decl.handoffs {
                let target_node = self.topology.index.get(&target.name).and_then(|&i| self.topology.nodes.get(i));
                let Some(target_node) = target_node.filter(|t| t.kind == DeclKind::Agent) else {
                    let what = match self.facts.program.lookup(&target.name) {
                        Some(s) if s.kind != DeclKind::Agent => format!("{} `{}`", s.kind.as_str(), target.name),
                        Some(_) => format!("agent `{}`, which is not a node of graph `{}`", target.name, self.g().name.name),
                        None => continue, // an unknown name: reported by resolve
                    };
                    let d = Diagnostic::new(
                        Code::TENX0310,
                        format!("agent `{}` hands off to {what}", agent.decl.name.name),
                        agent.file,
                        target.span,
                    )
                    .label("not an agent node of this graph")
                    .secondary(self.file, node.span, format!("`{}` is a node of graph `{}` here", node.name, self.g().name.name))
                    .help(format!("a handoff must name an agent listed in the `nodes` of graph `{}`", self.g().name.name));
                    self.report(d);
                    continue;
                };
                let from = self.topology.index.get(&node.name).copied();
                let to = self.topology.index.get(&target_node.name).copied();
                let has_edge = from
                    .and_then(|f| self.topology.successors.get(f))
                    .is_some_and(|list| list.iter().any(|(t, _)| Some(*t) == to.map(Target::Node)));
                if !has_edge {
                    let d = Diagnostic::new(
                        Code::TENX0311,
                        format!("agent `{}` hands off to `{}`, but no edge leads there", node.name, target.name),
                        agent.file,
                        target.span,
                    )
                    .label("handoff without an edge")
                    .secondary(self.file, self.g().name.span, format!("graph `{}` has no edge `{} -> {}`", self.g().name.name, node.name, target.name))
                    .help(format!("add `{} -> {}` to graph `{}`", node.name, target.name, self.g().name.name))
                    .note("a handoff is a choice among declared edges; the model cannot move the run anywhere else");
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
            routes_from.entry(route.from.name.as_str()).or_default().push(route.span);
        }
        let mut found = Vec::new();
        for node in &self.topology.nodes {
            let handoff_targets: BTreeSet<String> = if node.kind == DeclKind::Agent {
                self.facts.program.agents.get(node.decl).map(|a| a.decl.handoffs.iter().map(|h| h.name.clone()).collect()).unwrap_or_default()
            } else {
                BTreeSet::new()
            };
            let out_edges = edges_from.get(node.name.as_str()).map_or(&[][..], Vec::as_slice);
            let plain = out_edges.iter().filter(|e| !handoff_targets.contains(&e.to.name)).map(|e| e.span);
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
                .help(format!("add `{} -> END` (or an edge to the node that runs next)", node.name))
                .note("a handoff is the model's choice; when it answers without one, the run needs somewhere to go");
                found.push(d);
            }
            if ways.len() > 1 {
                let mut d = Diagnostic::new(
                    Code::TENX0312,
                    format!("node `{}` has {} ways to continue and nothing to choose between them", node.name, ways.len()),
                    file,
                    ways.get(1).copied().unwrap_or(node.span),
                )
                .label("another way to continue");
                if let Some(first) = ways.first() {
                    d = d.secondary(file, *first, "first way to continue");
                }
                d = d.help("keep one edge, or decide with one `route` (arms are tried in order, `else` last)");
                if node.kind == DeclKind::Agent {
                    d = d.note("edges to an agent's `handoffs` targets are handoff choices and do not count");
                }
                found.push(d);
            }
        }
        self.diagnostics.extend(found);
    }

    fn reachability(&mut self) {
        let t = self.topology;
        let Some(entry) = t.entry else { return };
        let reached = t.reach(&[entry], |_| false);
        let can_end = t.reaches_end();
        let graph = self.g().name.name.clone();
        for (n, node) in t.nodes.iter().enumerate() {
            if reached.get(n).is_some_and(Option::is_none) {
                let d = Diagnostic::new(Code::TENX0303, format!("node `{}` cannot be reached from the entry", node.name), self.file, node.span)
                    .label("unreachable")
                    .help(format!("add an edge or route arm that leads to `{}`, or remove it from graph `{graph}`", node.name));
                self.report(d);
            }
        }
        let cycles = t.cycles();
        let mut in_trap = vec![false; t.nodes.len()];
        for cycle in &cycles {
            let trapped = cycle.iter().all(|&n| !can_end.get(n).copied().unwrap_or(false));
            let reachable = cycle.iter().any(|&n| reached.get(n).is_some_and(Option::is_some));
            if !trapped || !reachable {
                continue;
            }
            for &n in cycle {
                if let Some(slot) = in_trap.get_mut(n) {
                    *slot = true;
                }
            }
            let names: Vec<String> = cycle.iter().filter_map(|&n| t.nodes.get(n)).map(|n| format!("`{}`", n.name)).collect();
            // The transitions inside the cycle, in source order: the first is the primary label.
            let mut inside: Vec<tenx_diagnostics::Span> = cycle
                .iter()
                .flat_map(|&n| t.successors.get(n).into_iter().flatten())
                .filter(|(target, _)| matches!(target, Target::Node(m) if cycle.contains(m)))
                .map(|(_, via)| via.span())
                .collect();
            inside.sort();
            inside.dedup();
            let Some(&primary) = inside.first() else { continue };
            let (code, message) = match self.g().recursion_limit {
                Some((limit, _)) => (
                    Code::TENX0306,
                    format!("the cycle through {} ends only when the recursion limit of {limit} stops the run", names.join(", ")),
                ),
                None => (Code::TENX0305, format!("the cycle through {} has no way out", names.join(", "))),
            };
            let mut d = Diagnostic::new(code, message, self.file, primary).label("this cycle has no edge to `END`");
            for span in inside.iter().skip(1) {
                d = d.secondary(self.file, *span, "part of the cycle");
            }
            d = d.help("add an edge or route arm from one of these nodes to `END` or to a node that reaches it");
            if let Some((_, span)) = self.g().recursion_limit {
                d = d.secondary(self.file, span, "the run is stopped here, as an error");
            }
            self.report(d);
        }
        for (n, node) in t.nodes.iter().enumerate() {
            let reachable = reached.get(n).is_some_and(Option::is_some);
            let ends = can_end.get(n).copied().unwrap_or(false);
            if reachable && !ends && !in_trap.get(n).copied().unwrap_or(false) {
                let d = Diagnostic::new(Code::TENX0304, format!("node `{}` has no path to `END`", node.name), self.file, node.span)
                    .label("a run that gets here never finishes")
                    .help(format!("add `{} -> END`, or an edge to a node that reaches `END`", node.name));
                self.report(d);
            }
        }
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
