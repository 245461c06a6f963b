//! One graph of the artifact as indexes, for the policy proof: its nodes (in name order), the
//! nodes a run may start at (`entry`, the extra `entries` and, with `resume = last_agent`, the
//! reachable resume nodes), and every way from one node to the next, whatever its kind. A plain
//! edge, a handoff edge, a route arm, a fork (into each branch and to its join), an `on_error` handler and a visit limit's exit are all ways
//! a run can take, so all are successors here ([`super::loops`]); `END` is not a node. Searches
//! are iterative breadth-first searches.

use std::collections::VecDeque;

use crate::model::{Graph, Node};

/// A graph's nodes and the ways between them, as a compressed successor list.
pub(super) struct Topology<'a> {
    /// Node names, sorted (the order of [`Graph::nodes`]); a node's index is its position.
    names: Vec<&'a str>,
    /// The nodes, at the same indexes.
    nodes: Vec<&'a Node>,
    /// The nodes a run may start at: the entry, then the extra entries (those that are nodes),
    /// then the reachable resume nodes.
    starts: Vec<usize>,
    /// The successors of node `n` are `targets[offsets[n]..offsets[n + 1]]`.
    offsets: Vec<usize>,
    targets: Vec<usize>,
}

impl<'a> Topology<'a> {
    /// Indexes `graph`. Names that are not nodes (`END`, or a reference the structural checks
    /// reported) lead nowhere.
    pub(super) fn build(graph: &'a Graph) -> Self {
        let (names, nodes): (Vec<&str>, Vec<&Node>) =
            graph.nodes.iter().map(|(name, node)| (name.as_str(), node)).unzip();
        let index = |name: &str| names.binary_search(&name).ok();
        let arms: usize = graph.routes.iter().map(|route| route.arms.len()).sum();
        let mut ways: Vec<(usize, usize)> = Vec::with_capacity(graph.edges.len() + arms);
        for edge in &graph.edges {
            if let (Some(from), Some(to)) = (index(&edge.from), index(&edge.to)) {
                ways.push((from, to));
            }
        }
        for route in &graph.routes {
            let Some(from) = index(&route.from) else { continue };
            ways.extend(route.arms.iter().filter_map(|arm| Some((from, index(arm.target())?))));
        }
        // A fork leads from its node into each branch, and (once they all finish) to its join.
        for fork in &graph.forks {
            let Some(from) = index(&fork.from) else { continue };
            for to in fork
                .branches
                .iter()
                .chain(std::iter::once(&fork.join))
                .filter_map(|name| index(name))
            {
                ways.push((from, to));
            }
        }
        super::loops::add_ways(graph, index, &mut ways);
        // A counting sort by `from` into one list.
        let mut offsets = vec![0; names.len() + 1];
        for &(from, _) in &ways {
            if let Some(count) = offsets.get_mut(from + 1) {
                *count += 1;
            }
        }
        for at in 1..offsets.len() {
            let before = offsets.get(at - 1).copied().unwrap_or(0);
            if let Some(offset) = offsets.get_mut(at) {
                *offset += before;
            }
        }
        let mut next = offsets.clone();
        let mut targets = vec![0; ways.len()];
        for (from, to) in ways {
            if let Some(at) = next.get_mut(from)
                && let Some(slot) = targets.get_mut(*at)
            {
                *slot = to;
                *at += 1;
            }
        }
        let starts = std::iter::once(&graph.entry)
            .chain(&graph.entries)
            .filter_map(|name| index(name))
            .collect();
        let resumes: Vec<usize> = graph.resume_nodes().into_iter().filter_map(index).collect();
        let mut topology = Self {
            names,
            nodes,
            starts,
            offsets,
            targets,
        };
        // Resume nodes (`resume = last_agent`) that a run can reach are starts too: a thread's
        // next run may begin there. Unreachable ones never end a run.
        if !resumes.is_empty() {
            let reachable = topology.reach(&topology.starts, |_| false);
            for node in resumes {
                if reachable.contains(node) && !topology.starts.contains(&node) {
                    topology.starts.push(node);
                }
            }
        }
        topology
    }

    /// The number of nodes.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes a run may start at: the entry first, then the extra entries.
    pub(super) fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// The node at `index`.
    pub(super) fn node(&self, index: usize) -> Option<&'a Node> {
        self.nodes.get(index).copied()
    }

    /// The index of the node called `name`, if it is a node.
    pub(super) fn index(&self, name: &str) -> Option<usize> {
        self.names.binary_search(&name).ok()
    }

    /// The name of the node at `index`.
    pub(super) fn name(&self, index: usize) -> &'a str {
        self.names.get(index).copied().unwrap_or_default()
    }

    /// The nodes one step after `index`, by any edge or route arm (repeats possible).
    pub(super) fn successors(&self, index: usize) -> &[usize] {
        let start = self.offsets.get(index).copied().unwrap_or(0);
        let end = self.offsets.get(index + 1).copied().unwrap_or(start);
        self.targets.get(start..end).unwrap_or_default()
    }

    /// The nodes a run can reach from `starts` without entering a node for which `blocked`
    /// holds (a blocked start is not entered either), with a shortest way to each.
    pub(super) fn reach(&self, starts: &[usize], blocked: impl Fn(usize) -> bool) -> Reach {
        let mut parents = vec![Parent::Unseen; self.len()];
        let mut queue = VecDeque::new();
        for &start in starts {
            if let Some(slot) = parents.get_mut(start)
                && *slot == Parent::Unseen
                && !blocked(start)
            {
                *slot = Parent::Start;
                queue.push_back(start);
            }
        }
        while let Some(node) = queue.pop_front() {
            for &next in self.successors(node) {
                if let Some(slot) = parents.get_mut(next)
                    && *slot == Parent::Unseen
                    && !blocked(next)
                {
                    *slot = Parent::From(node);
                    queue.push_back(next);
                }
            }
        }
        Reach { parents }
    }

    /// The names of the nodes at `path`.
    pub(super) fn names_of(&self, path: &[usize]) -> Vec<String> {
        path.iter().map(|&index| self.name(index).to_owned()).collect()
    }
}

/// How a search first entered a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parent {
    /// Not reached.
    Unseen,
    /// One of the starts.
    Start,
    /// From this node.
    From(usize),
}

/// What a search of [`Topology::reach`] reached.
pub(super) struct Reach {
    parents: Vec<Parent>,
}

impl Reach {
    /// Whether the search reached `node`.
    pub(super) fn contains(&self, node: usize) -> bool {
        self.parents.get(node).is_some_and(|parent| *parent != Parent::Unseen)
    }

    /// A shortest way from a start to `node` (which must be reached), start first.
    pub(super) fn path_to(&self, node: usize) -> Vec<usize> {
        let mut path = vec![node];
        let mut current = node;
        // Parents form a tree, so the walk ends at a start; the bound only guards the loop.
        while path.len() <= self.parents.len() {
            match self.parents.get(current) {
                Some(Parent::From(previous)) => {
                    current = *previous;
                    path.push(current);
                }
                _ => break,
            }
        }
        path.reverse();
        path
    }
}
