//! The ways a run can take besides edges and route arms, for the policy proof: a node's
//! `on_error` handler (a way from the failed node), and a visit limit's exit: a way `p -> x` into
//! a limited node `x` may lead to its exit instead, so `p -> exit` is a way too (and on through
//! the exit's own limit when the exit is limited). An edited artifact that routes a failure or a
//! used-up loop to an approval-gated tool around its approval is refused like an edge would be.

use std::collections::BTreeMap;

use crate::model::Graph;

/// Adds the `on_error` ways and the visit-limit exits to `ways`; `index` finds a node by name
/// (`None` for `END` and unknown names, which lead nowhere here).
pub(super) fn add_ways(graph: &Graph, index: impl Fn(&str) -> Option<usize>, ways: &mut Vec<(usize, usize)>) {
    for exit in &graph.on_error {
        if let (Some(from), Some(to)) = (index(&exit.node), index(&exit.target)) {
            ways.push((from, to));
        }
    }
    // The first limit of each node; an exit to `END` leads to no node.
    let mut limits: BTreeMap<usize, Option<usize>> = BTreeMap::new();
    for limit in &graph.visit_limits {
        if let Some(node) = index(&limit.node) {
            limits.entry(node).or_insert_with(|| index(&limit.exit));
        }
    }
    if limits.is_empty() {
        return;
    }
    let mut added = Vec::new();
    for &(from, to) in ways.iter() {
        let mut limited = to;
        let mut seen = vec![limited];
        while let Some(&exit) = limits.get(&limited) {
            let Some(next) = exit else { break };
            added.push((from, next));
            if seen.contains(&next) {
                break;
            }
            seen.push(next);
            limited = next;
        }
    }
    ways.extend(added);
}
