//! A graph's visit limits and `on_error` handlers: each names a node, at most once, and leads
//! to a node of the graph or `END` other than itself; a limit's `max` is 1 to [`MAX_VISITS`].
//! The ways they add are checked by the risk policy like edges ([`crate::policy`]).

use super::{Problems, check_sorted};
use crate::model::{END, Graph, MAX_VISITS};

/// Checks `visit_limits` and `on_error` of the graph `name`.
pub(super) fn check(name: &str, graph: &Graph, problems: &mut Problems) {
    let is_target = |node: &str| node == END || graph.nodes.contains_key(node);
    check_sorted(
        &graph.visit_limits,
        || format!("graph `{name}`: `visit_limits`"),
        problems,
    );
    check_sorted(&graph.on_error, || format!("graph `{name}`: `on_error`"), problems);
    let mut previous: Option<&str> = None;
    for limit in &graph.visit_limits {
        if previous == Some(limit.node.as_str()) {
            problems.push(format!("graph `{name}`: node `{}` has two visit limits", limit.node));
        }
        previous = Some(&limit.node);
        if !graph.nodes.contains_key(&limit.node) {
            problems.push(format!("graph `{name}`: visit limit of unknown node `{}`", limit.node));
        }
        if !is_target(&limit.exit) || limit.exit == limit.node {
            problems.push(format!(
                "graph `{name}`: the visit limit of `{}` exits to `{}`, which is not another node or `END`",
                limit.node, limit.exit
            ));
        }
        if !(1..=MAX_VISITS).contains(&limit.max) {
            problems.push(format!(
                "graph `{name}`: the visit limit of `{}` must be 1 to {MAX_VISITS}, not {}",
                limit.node, limit.max
            ));
        }
    }
    let mut previous: Option<&str> = None;
    for exit in &graph.on_error {
        if previous == Some(exit.node.as_str()) {
            problems.push(format!(
                "graph `{name}`: node `{}` has two `on_error` handlers",
                exit.node
            ));
        }
        previous = Some(&exit.node);
        if !graph.nodes.contains_key(&exit.node) {
            problems.push(format!("graph `{name}`: `on_error` of unknown node `{}`", exit.node));
        }
        if !is_target(&exit.target) || exit.target == exit.node {
            problems.push(format!(
                "graph `{name}`: the `on_error` handler of `{}` is `{}`, which is not another node or `END`",
                exit.node, exit.target
            ));
        }
    }
}
