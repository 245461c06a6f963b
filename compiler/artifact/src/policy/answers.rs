//! The rejecting ways out of interrupt nodes, for the policy proof: the ways a run can take
//! after an answer that did not approve (see [`crate::answer_ways`]). A route arm that is not
//! approving, the node's `on_error` handler and every visit limit's exit that a way out of the
//! node can lead to are rejecting; a plain edge is not (a rejection ends the run there).
//! Computed for all interrupt nodes of a graph in one pass over its ways and writes.

use std::collections::BTreeMap;

use crate::answer_ways::AnswerTest;
use crate::model::{Graph, Interrupt, NodeKind, Write, WriteSource};

/// For each interrupt node of `graph` (by name), the nodes (or `END`) its rejecting ways lead to.
pub(super) fn rejecting_ways<'g>(
    graph: &'g Graph,
    interrupts: &BTreeMap<String, Interrupt>,
) -> BTreeMap<&'g str, Vec<&'g str>> {
    let mut writes: BTreeMap<&str, Vec<&Write>> = BTreeMap::new();
    for write in &graph.writes {
        if let WriteSource::Interrupt { node, .. } = &write.from {
            writes.entry(node.as_str()).or_default().push(write);
        }
    }
    let interrupt_of = |node: &str| {
        let node = graph.nodes.get(node).filter(|node| node.kind == NodeKind::Interrupt)?;
        interrupts.get(&node.reference)
    };
    // Every way out of each interrupt node, and whether it is rejecting.
    let mut ways: BTreeMap<&str, Vec<(&str, bool)>> = BTreeMap::new();
    for edge in &graph.edges {
        if interrupt_of(&edge.from).is_some() {
            ways.entry(edge.from.as_str())
                .or_default()
                .push((edge.to.as_str(), false));
        }
    }
    for route in &graph.routes {
        let Some(interrupt) = interrupt_of(&route.from) else {
            continue;
        };
        let node = route.from.as_str();
        let own = writes.get(node).map(Vec::as_slice).unwrap_or_default();
        let test = AnswerTest::with_writes(
            own.iter().copied(),
            node,
            &interrupt.decision,
            &interrupt.response_schema,
        );
        let list = ways.entry(node).or_default();
        for arm in &route.arms {
            list.push((arm.target(), !test.approves(route.by.as_deref(), arm)));
        }
    }
    for exit in &graph.on_error {
        if interrupt_of(&exit.node).is_some() {
            ways.entry(exit.node.as_str())
                .or_default()
                .push((exit.target.as_str(), true));
        }
    }
    // A way into a node whose visits are used up leads to the limit's exit (and on through the
    // exit's own limit): the first limit of each node counts, as in `super::loops`.
    let mut limits: BTreeMap<&str, &str> = BTreeMap::new();
    for limit in &graph.visit_limits {
        limits.entry(limit.node.as_str()).or_insert(limit.exit.as_str());
    }
    ways.into_iter()
        .map(|(node, list)| {
            let mut rejecting = Vec::new();
            for (target, rejects) in list {
                if rejects {
                    rejecting.push(target);
                }
                let mut seen = vec![target];
                let mut limited = target;
                while let Some(&exit) = limits.get(limited) {
                    rejecting.push(exit);
                    if seen.contains(&exit) {
                        break;
                    }
                    seen.push(exit);
                    limited = exit;
                }
            }
            (node, rejecting)
        })
        .collect()
}
