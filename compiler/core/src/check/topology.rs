//! The shape of each graph as indexes: its nodes (agents, tool nodes, interrupt steps), the
//! nodes a run may start at (`entry` and `entries`), its successor lists from edges, route
//! arms, forks (into each branch and to the join), `on_error` handlers and visit-limit exits,
//! and `END`. Built once and shared by the graph structure checks and the approval
//! dominance check. Names that do not resolve to nodes are left out here; the graph checks
//! report them.

mod loops;

use crate::ast::{GraphDecl, Ident};
use crate::ids::{IdVec, Idx};
use crate::resolve::{DeclKind, DeclRef, Program};
use std::collections::BTreeMap;
use tenx_diagnostics::{FileId, Span};

/// A node of one graph's [`Topology`], by its position in [`Topology::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(usize);

impl Idx for NodeId {
    fn from_index(index: usize) -> Self {
        NodeId(index)
    }

    fn index(self) -> usize {
        self.0
    }
}

/// A value per node of a graph.
pub type PerNode<V> = IdVec<NodeId, V>;

/// For each node, the node it was first entered from (`Some(None)` for a start, `None` when
/// unreachable): the result of [`Topology::reach`].
pub type Parents = PerNode<Option<Option<NodeId>>>;

/// The name of the terminal node.
pub const END: &str = "END";

/// `resume = last_agent`: a thread's next run starts at the agent node that ended its last run.
pub const RESUME_LAST_AGENT: &str = "last_agent";

/// `resume = entry`: every run starts at an entry (the default).
pub const RESUME_ENTRY: &str = "entry";

/// One node of a graph.
#[derive(Debug, Clone)]
pub struct Node {
    /// The node's name (the declaration's name).
    pub name: String,
    /// The declaration: an agent, tool, interrupt or graph (a subgraph node).
    pub decl: DeclRef,
    /// Where `nodes` lists it.
    pub span: Span,
}

impl Node {
    /// Agent, tool or interrupt.
    pub fn kind(&self) -> DeclKind {
        self.decl.kind()
    }
}

/// Where a transition comes from in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Via {
    /// `a -> b`, with the edge's span.
    Edge(Span),
    /// An arm of `route a { … }`, with the arm's span.
    Route(Span),
    /// `on_error = { a: b }`, with the span of `b`.
    OnError(Span),
    /// A way into a node whose `visits` are used up, which leads to the limit's exit instead,
    /// with the span of the exit in `visits`.
    VisitExit(Span),
    /// The way out of a `parallel` or `map` node into one of its branches or to its join, with
    /// the span of the branch's (or join's) name in the block.
    Fork(Span),
}

impl Via {
    /// The span of the edge or arm.
    pub fn span(self) -> Span {
        match self {
            Via::Edge(s) | Via::Route(s) | Via::OnError(s) | Via::VisitExit(s) | Via::Fork(s) => s,
        }
    }
}

/// A transition target: a node index or `END`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// A node of the graph.
    Node(NodeId),
    /// The end of the run.
    End,
}

/// A graph as indexes.
#[derive(Debug, Clone)]
pub struct Topology {
    /// The file that declares the graph.
    pub file: FileId,
    /// The nodes, in `nodes` order (first listing wins).
    pub nodes: PerNode<Node>,
    /// Name → node.
    pub index: BTreeMap<String, NodeId>,
    /// For each node, its transitions, in source order.
    pub successors: PerNode<Vec<(Target, Via)>>,
    /// The entry node, when it is a node.
    pub entry: Option<NodeId>,
    /// The nodes a run may start at: the entry, then the extra `entries` that are nodes (each
    /// once). Reachability and the approval dominance proof search from all of them.
    pub starts: Vec<NodeId>,
    /// With `resume = last_agent`: the agent nodes a thread's next run may start at, those with
    /// an edge or route arm to `END` that a run can reach from [`Topology::starts`] (and that
    /// are not starts already). Empty otherwise. The approval dominance proof searches from
    /// them too.
    pub resumes: Vec<NodeId>,
}

impl Topology {
    /// Builds the topology of one graph.
    pub fn build(program: &Program, file: FileId, graph: &GraphDecl) -> Topology {
        let mut nodes = PerNode::new();
        let mut index = BTreeMap::new();
        for ident in &graph.nodes {
            // A name also claimed by a declaration of another kind (a reported duplicate) still
            // names its node here, so one duplicate costs one error.
            let Some(symbol) = program.lookup_as(
                &ident.name,
                &[DeclKind::Agent, DeclKind::Tool, DeclKind::Interrupt, DeclKind::Graph],
            ) else {
                continue;
            };
            if index.contains_key(&ident.name) {
                continue;
            }
            let id = nodes.push(Node {
                name: ident.name.clone(),
                decl: symbol.decl,
                span: ident.span,
            });
            index.insert(ident.name.clone(), id);
        }
        let mut successors = PerNode::filled(Vec::new(), nodes.len());
        let target = |i: &Ident| -> Option<Target> {
            if i.name == END {
                Some(Target::End)
            } else {
                index.get(&i.name).map(|&n| Target::Node(n))
            }
        };
        for edge in &graph.edges {
            if let (Some(&from), Some(to)) = (index.get(&edge.from.name), target(&edge.to))
                && let Some(list) = successors.get_mut(from)
            {
                list.push((to, Via::Edge(edge.span)));
            }
        }
        for route in &graph.routes {
            let Some(&from) = index.get(&route.from.name) else {
                continue;
            };
            for arm in &route.arms {
                if let Some(to) = target(&arm.target)
                    && let Some(list) = successors.get_mut(from)
                {
                    list.push((to, Via::Route(arm.span)));
                }
            }
        }
        // A fork leads from its node into each branch and, once they have all ended, to its
        // join (the artifact's policy topology counts the same ways).
        for fork in &graph.forks {
            let Some(&from) = index.get(&fork.from.name) else {
                continue;
            };
            for to in fork.branches.iter().chain(&fork.join) {
                if let Some(target) = target(to)
                    && let Some(list) = successors.get_mut(from)
                {
                    list.push((target, Via::Fork(to.span)));
                }
            }
        }
        loops::add(graph, &index, &mut successors);
        let entry = graph.entry.as_ref().and_then(|e| index.get(&e.name).copied());
        let mut starts: Vec<NodeId> = Vec::with_capacity(1 + graph.entries.len());
        for id in entry
            .into_iter()
            .chain(graph.entries.iter().filter_map(|e| index.get(&e.name).copied()))
        {
            if !starts.contains(&id) {
                starts.push(id);
            }
        }
        let mut topology = Topology {
            file,
            nodes,
            index,
            successors,
            entry,
            starts,
            resumes: Vec::new(),
        };
        if graph.resume.as_ref().is_some_and(|r| r.name == RESUME_LAST_AGENT) {
            let reached = topology.reach(&topology.starts, |_| false);
            topology.resumes = topology
                .agents_ending_runs()
                .into_iter()
                .filter(|&n| reached.get(n).is_some_and(Option::is_some) && !topology.starts.contains(&n))
                .collect();
        }
        topology
    }

    /// The agent nodes with an edge or a route arm to `END`: where a run can end straight after
    /// an agent answered (a fork that joins at `END` does not count, as in the artifact's
    /// `Graph::resume_nodes`).
    pub fn agents_ending_runs(&self) -> Vec<NodeId> {
        self.nodes
            .iter_enumerated()
            .filter(|(n, node)| {
                node.kind() == DeclKind::Agent
                    && self.successors.get(*n).is_some_and(|s| {
                        s.iter()
                            .any(|(t, via)| *t == Target::End && matches!(via, Via::Edge(_) | Via::Route(_)))
                    })
            })
            .map(|(n, _)| n)
            .collect()
    }

    /// Every node the approval proof searches from: the starts, then the resume nodes.
    pub fn proof_starts(&self) -> Vec<NodeId> {
        self.starts.iter().chain(&self.resumes).copied().collect()
    }

    /// The node indexes reachable from `starts`, never entering a node for which `blocked`
    /// holds. Returns, for each node, the predecessor on a shortest path (`Some(None)` for a
    /// start, `None` when unreachable). Iterative breadth-first search.
    pub fn reach(&self, starts: &[NodeId], blocked: impl Fn(NodeId) -> bool) -> Parents {
        let mut parent: Parents = PerNode::filled(None, self.nodes.len());
        let mut queue = std::collections::VecDeque::new();
        for &s in starts {
            if let Some(slot) = parent.get_mut(s)
                && slot.is_none()
                && !blocked(s)
            {
                *slot = Some(None);
                queue.push_back(s);
            }
        }
        while let Some(n) = queue.pop_front() {
            for (target, _) in self.successors.get(n).into_iter().flatten() {
                let Target::Node(m) = *target else { continue };
                if blocked(m) {
                    continue;
                }
                if let Some(slot) = parent.get_mut(m)
                    && slot.is_none()
                {
                    *slot = Some(Some(n));
                    queue.push_back(m);
                }
            }
        }
        parent
    }

    /// The nodes that can reach `END`, by reverse breadth-first search. Nodes marked in
    /// `assume` count as reaching it (the graph checks mark nodes whose transitions name
    /// something that is not a node, already reported, so nothing is reported twice).
    pub fn reaches_end(&self, assume: &PerNode<bool>) -> PerNode<bool> {
        let mut predecessors = PerNode::filled(Vec::new(), self.nodes.len());
        let mut can = PerNode::filled(false, self.nodes.len());
        let mut queue = std::collections::VecDeque::new();
        for (n, slot) in can.iter_enumerated_mut() {
            if assume.get(n).copied().unwrap_or(false) {
                *slot = true;
                queue.push_back(n);
            }
        }
        for (n, list) in self.successors.iter_enumerated() {
            for (target, _) in list {
                match target {
                    Target::Node(m) => {
                        if let Some(p) = predecessors.get_mut(*m) {
                            p.push(n);
                        }
                    }
                    Target::End => {
                        if let Some(slot) = can.get_mut(n)
                            && !*slot
                        {
                            *slot = true;
                            queue.push_back(n);
                        }
                    }
                }
            }
        }
        while let Some(n) = queue.pop_front() {
            for &p in predecessors.get(n).into_iter().flatten() {
                if let Some(slot) = can.get_mut(p)
                    && !*slot
                {
                    *slot = true;
                    queue.push_back(p);
                }
            }
        }
        can
    }

    /// Strongly connected components with more than one node or a self-loop (the cycles), by
    /// an iterative Tarjan's algorithm. Each component's nodes are sorted.
    pub fn cycles(&self) -> Vec<Vec<NodeId>> {
        let n = self.nodes.len();
        let mut index = PerNode::filled(usize::MAX, n);
        let mut low = PerNode::filled(0usize, n);
        let mut on_stack = PerNode::filled(false, n);
        let mut stack = Vec::new();
        let mut out = Vec::new();
        let mut counter = 0usize;
        let succ = |v: NodeId| -> Vec<NodeId> {
            self.successors
                .get(v)
                .into_iter()
                .flatten()
                .filter_map(|(t, _)| match t {
                    Target::Node(m) => Some(*m),
                    Target::End => None,
                })
                .collect()
        };
        for root in self.nodes.ids() {
            if index.get(root).is_some_and(|&i| i != usize::MAX) {
                continue;
            }
            // (node, its successors, position in them)
            let mut work: Vec<(NodeId, Vec<NodeId>, usize)> = vec![(root, succ(root), 0)];
            set(&mut index, root, counter);
            set(&mut low, root, counter);
            counter += 1;
            stack.push(root);
            set(&mut on_stack, root, true);
            while let Some((v, children, pos)) = work.last_mut() {
                let v = *v;
                if let Some(&w) = children.get(*pos) {
                    *pos += 1;
                    if get(&index, w) == usize::MAX {
                        set(&mut index, w, counter);
                        set(&mut low, w, counter);
                        counter += 1;
                        stack.push(w);
                        set(&mut on_stack, w, true);
                        work.push((w, succ(w), 0));
                    } else if get(&on_stack, w) {
                        let l = get(&low, v).min(get(&index, w));
                        set(&mut low, v, l);
                    }
                    continue;
                }
                work.pop();
                if let Some((parent, _, _)) = work.last() {
                    let l = get(&low, *parent).min(get(&low, v));
                    set(&mut low, *parent, l);
                }
                if get(&low, v) == get(&index, v) {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        set(&mut on_stack, w, false);
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let self_loop = component.len() == 1 && succ(v).contains(&v);
                    if component.len() > 1 || self_loop {
                        component.sort_unstable();
                        out.push(component);
                    }
                }
            }
        }
        out.sort();
        out
    }
}

fn get<T: Copy + Default>(v: &PerNode<T>, i: NodeId) -> T {
    v.get(i).copied().unwrap_or_default()
}

fn set<T>(v: &mut PerNode<T>, i: NodeId, value: T) {
    if let Some(slot) = v.get_mut(i) {
        *slot = value;
    }
}
