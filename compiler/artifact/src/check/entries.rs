//! A graph's extra entries and its tool nodes' result fields: each extra entry is a node other
//! than `entry` (sorted, without repeats); only a tool node writes its result to a state field,
//! and that field is a property of the graph's `state_schema`.

use super::{Problems, check_sorted};
use crate::model::{Graph, NodeKind};

/// Checks `entries` and every node's `result_field` of the graph `name`.
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
    // Parsed only when a node writes its result to a field (rare).
    let mut state: Option<serde_json::Value> = None;
    for (node, spec) in &graph.nodes {
        let Some(field) = &spec.result_field else { continue };
        let properties = state
            .get_or_insert_with(|| graph.state_schema.to_value())
            .get("properties")
            .and_then(serde_json::Value::as_object);
        if spec.kind != NodeKind::Tool {
            problems.push(format!(
                "graph `{name}`: node `{node}` has a `result_field` but is not a tool node"
            ));
        }
        if !properties.is_some_and(|p| p.contains_key(field)) {
            problems.push(format!(
                "graph `{name}`: node `{node}` writes its result to `{field}`, which is not a property of `state_schema`"
            ));
        }
    }
}
