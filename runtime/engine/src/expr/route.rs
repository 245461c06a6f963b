//! Routes: which arm of a [`Route`] the run takes, from the state.
//!
//! Arms are tried in the order written and the first that matches wins: a label arm when the
//! route's `by` field holds a string equal to its label (exactly: case-sensitive, no
//! normalisation; an unset field, a number, or any other kind matches no label); a `when` arm
//! when its condition [`evaluate`]s true; `else` always. A route whose `by` is `null` has no
//! field to read, so its label arms never match. `None` when no arm matches (a route the
//! compiler sealed always ends with `else`): the run loop turns that into an error, as it does a
//! target the graph does not have (`GRAPH_007`).

use serde_json::{Map, Value};
use tenx_artifact::{Arm, Route};

use super::condition::evaluate;
use super::path::read_set;

/// The target of the first arm of `route` that matches `state`, or `None` when none does.
pub fn choose<'r>(route: &'r Route, state: &Map<String, Value>) -> Option<&'r str> {
    let label = route
        .by
        .as_ref()
        .and_then(|by| read_set(state, std::slice::from_ref(by)))
        .and_then(Value::as_str);
    route
        .arms
        .iter()
        .find(|arm| match arm {
            Arm::Label { label: wanted, .. } => label == Some(wanted.as_str()),
            Arm::When { condition, .. } => evaluate(condition, state),
            Arm::Else { .. } => true,
        })
        .map(Arm::target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    /// The route of docs/language.md "Routes", in the artifact's JSON shape.
    fn reviewer_route() -> Route {
        serde_json::from_value(json!({
            "from": "reviewer",
            "by": "verdict",
            "arms": [
                { "kind": "label", "label": "publish", "target": "approve_post" },
                { "kind": "when",
                  "condition": { "kind": "compare", "field": ["score"], "op": "lt", "value": 0.2 },
                  "target": "END" },
                { "kind": "label", "label": "revise", "target": "writer" },
                { "kind": "else", "target": "fallback" }
            ]
        }))
        .unwrap()
    }

    #[test]
    fn arms_in_order_first_match_wins() {
        let route = reviewer_route();
        let cases = [
            (json!({ "verdict": "publish", "score": 0.1 }), "approve_post"),
            (json!({ "verdict": "revise", "score": 0.1 }), "END"),
            (json!({ "verdict": "revise", "score": 0.5 }), "writer"),
            (json!({ "verdict": "revise" }), "writer"),
            (json!({ "verdict": "other", "score": 0.9 }), "fallback"),
            (json!({}), "fallback"),
            (json!({ "verdict": null, "score": 0.1 }), "END"),
            (json!({ "verdict": "Publish" }), "fallback"),
            (json!({ "verdict": ["publish"] }), "fallback"),
            (json!({ "verdict": 1, "score": "0.1" }), "fallback"),
        ];
        for (s, expected) in cases {
            assert_eq!(choose(&route, &state(s.clone())), Some(expected), "{s}");
        }
    }

    #[test]
    fn no_matching_arm_is_none() {
        let mut route = reviewer_route();
        route.arms.pop();
        assert_eq!(choose(&route, &state(json!({ "verdict": "x" }))), None);
        route.arms.clear();
        assert_eq!(choose(&route, &state(json!({ "verdict": "publish" }))), None);
    }

    #[test]
    fn without_a_by_field_labels_never_match() {
        let mut route = reviewer_route();
        route.by = None;
        assert_eq!(
            choose(&route, &state(json!({ "verdict": "publish" }))),
            Some("fallback")
        );
        assert_eq!(choose(&route, &state(json!({ "score": 0.0 }))), Some("END"));
    }

    #[test]
    fn unicode_labels_match_exactly() {
        let route: Route = serde_json::from_value(json!({
            "from": "a",
            "by": "mood",
            "arms": [
                { "kind": "label", "label": "café ☕", "target": "cafe" },
                { "kind": "else", "target": "END" }
            ]
        }))
        .unwrap();
        assert_eq!(choose(&route, &state(json!({ "mood": "café ☕" }))), Some("cafe"));
        // The decomposed spelling is another string.
        assert_eq!(choose(&route, &state(json!({ "mood": "cafe\u{301} ☕" }))), Some("END"));
    }
}
