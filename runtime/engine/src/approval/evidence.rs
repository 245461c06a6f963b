//! Evidence resolved for the approver: each declared item with the value it names, in the order
//! declared, as the package shows it and the fingerprint binds it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tenx_artifact::Evidence;

/// One evidence item with its value: `{"param": name, "value": …}`,
/// `{"state": field, "value": …}` or `{"literal": text}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResolvedEvidence {
    /// An argument of the call.
    Param {
        /// The parameter's name.
        param: String,
        /// Its value in the normalised arguments; `null` when not set.
        value: Value,
    },
    /// A state field of the run.
    State {
        /// The field's name.
        state: String,
        /// Its current value; `null` when not set.
        value: Value,
    },
    /// Text, as written.
    Literal {
        /// The text.
        literal: String,
    },
}

/// Resolves `items` against the call's normalised `arguments` and the run's `state`. A parameter
/// or field that is not set resolves to `null` (shown, and bound, as absent).
pub fn resolve_evidence(items: &[Evidence], arguments: &Value, state: &Map<String, Value>) -> Vec<ResolvedEvidence> {
    items
        .iter()
        .map(|item| match item {
            Evidence::Param(name) => ResolvedEvidence::Param {
                param: name.clone(),
                value: arguments.get(name).cloned().unwrap_or(Value::Null),
            },
            Evidence::State(field) => ResolvedEvidence::State {
                state: field.clone(),
                value: state.get(field).cloned().unwrap_or(Value::Null),
            },
            Evidence::Literal(text) => ResolvedEvidence::Literal { literal: text.clone() },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn resolves_in_order_with_null_for_unset() {
        let items = [
            Evidence::Param("amount_cents".into()),
            Evidence::State("customer_tier".into()),
            Evidence::Literal("policy REF-7".into()),
            Evidence::Param("note".into()),
            Evidence::State("missing".into()),
        ];
        let state = json!({"customer_tier": "gold"});
        let resolved = resolve_evidence(&items, &json!({"amount_cents": 5900}), state.as_object().unwrap());
        assert_eq!(
            serde_json::to_value(&resolved).unwrap(),
            json!([
                {"param": "amount_cents", "value": 5900},
                {"state": "customer_tier", "value": "gold"},
                {"literal": "policy REF-7"},
                {"param": "note", "value": null},
                {"state": "missing", "value": null}
            ])
        );
        let read: Vec<ResolvedEvidence> = serde_json::from_value(serde_json::to_value(&resolved).unwrap()).unwrap();
        assert_eq!(read, resolved);
    }
}
