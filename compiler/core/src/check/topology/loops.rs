//! The ways a run can take besides edges and route arms: a node's `on_error` handler (the run
//! goes there when the node fails, so a way from the node), and a visit limit's exit. A way into
//! a node whose visits are used up leads to the limit's exit instead of the node, so for every
//! way `p -> x` into a limited node `x` there is a way `p -> exit` (and on through the exit's own
//! limit when the exit is limited too). The reachability, path-to-`END`, cycle and approval
//! proofs all count these ways. An exit or handler that is the node itself is reported
//! (`TENX0350`, `TENX0352`) and adds no way.

use super::{END, NodeId, PerNode, Target, Via};
use crate::ast::{GraphDecl, Ident};
use std::collections::BTreeMap;

/// Adds the `on_error` ways and the visit-limit exits of `graph` to `successors`.
pub(super) fn add(graph: &GraphDecl, index: &BTreeMap<String, NodeId>, successors: &mut PerNode<Vec<(Target, Via)>>) {
    let target = |i: &Ident| -> Option<Target> {
        if i.name == END {
            Some(Target::End)
        } else {
            index.get(&i.name).map(|&n| Target::Node(n))
        }
    };
    for exit in &graph.on_error {
        if let (Some(&from), Some(to)) = (index.get(&exit.node.name), target(&exit.target))
            && to != Target::Node(from)
            && let Some(list) = successors.get_mut(from)
        {
            list.push((to, Via::OnError(exit.target.span)));
        }
    }
    // The first limit of each node (a repeat is reported by the graph checks).
    let mut limits: BTreeMap<NodeId, (Target, Via)> = BTreeMap::new();
    for limit in &graph.visits {
        if let (Some(&node), Some(to)) = (index.get(&limit.node.name), target(&limit.exit))
            && to != Target::Node(node)
        {
            limits.entry(node).or_insert((to, Via::VisitExit(limit.exit.span)));
        }
    }
    if limits.is_empty() {
        return;
    }
    let mut added: Vec<(NodeId, (Target, Via))> = Vec::new();
    for (from, ways) in successors.iter_enumerated() {
        for (to, _) in ways {
            let Target::Node(mut limited) = *to else { continue };
            // Follow the chain of exhausted limits; each node once, so the walk ends.
            let mut seen = vec![limited];
            while let Some(&(exit, via)) = limits.get(&limited) {
                added.push((from, (exit, via)));
                match exit {
                    Target::Node(next) if !seen.contains(&next) => {
                        seen.push(next);
                        limited = next;
                    }
                    _ => break,
                }
            }
        }
    }
    for (from, way) in added {
        if let Some(list) = successors.get_mut(from)
            && !list.contains(&way)
        {
            list.push(way);
        }
    }
}
