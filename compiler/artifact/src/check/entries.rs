//! A graph's extra entries: each is a node other than `entry` (sorted, without repeats).

use super::{Problems, check_sorted};
use crate::model::Graph;

/// Checks `entries` of the graph `name`.
pub(super) fn check(name: &str, graph: &Graph, problems: &mut Problems) {
    check_sorted(&graph.entries, || format!("graph `{name}`: `entries`"), problems);
    for entry in &graph.entries {
        if !graph.nodes.contains_key(entry) {
            problems.push(format!("graph `{name}`: extra entry `{entry}` is not a node"));
        }
        if *entry == graph.entry {
            problems.push(format!(
                "graph `{name}`: extra entry `{entry}` is the graph's `entry`; list it once, as `entry`"
            ));
        }
    }
}
