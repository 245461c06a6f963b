//! Risk rules: the risk of one call of a tool, from its arguments.
//!
//! With `risk_rules`, the rules are tried in order on the call's validated, normalised
//! arguments (bound arguments filled in) exactly as route conditions are on the state
//! ([`evaluate`]): the first that holds gives the call's risk and its index; `base` applies, with
//! no index, when none does. Without rules the call's risk is the tool's `risk`. Arguments that
//! are not an object (never the case after validation) read as an object with nothing set.

use serde_json::{Map, Value};
use tenx_artifact::{Risk, Tool};

use super::condition::evaluate;

/// The risk of a call of `tool` with `arguments`, and the index of the rule that gave it
/// (`None` for the base and for a tool without rules): the package's `risk` and `risk_rule`.
pub fn call_risk(tool: &Tool, arguments: &Value) -> (Risk, Option<usize>) {
    let Some(rules) = &tool.risk_rules else {
        return (tool.risk, None);
    };
    let empty = Map::new();
    let scope = arguments.as_object().unwrap_or(&empty);
    rules
        .rules
        .iter()
        .enumerate()
        .find(|(_, rule)| evaluate(&rule.condition, scope))
        .map_or((rules.base, None), |(index, rule)| (rule.risk, Some(index)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The `issue_refund` tool of docs/language.md "Risk", with a second rule, as the artifact
    /// writes it.
    fn refund_tool(risk_rules: Value) -> Tool {
        serde_json::from_value(json!({
            "name": "issue_refund",
            "description": "Refund part or all of an order.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": { "type": "string" },
                    "amount_cents": { "type": "integer", "minimum": 1 },
                    "express": { "type": "boolean" }
                },
                "required": ["order_id", "amount_cents"]
            },
            "result": null,
            "risk": "high",
            "tags": [],
            "approval": null,
            "approved_by": [],
            "idempotency_key": "refund-{order_id}-{amount_cents}",
            "run": { "kind": "remote" },
            "bindings": {},
            "risk_rules": risk_rules,
            "retry": null
        }))
        .unwrap()
    }

    fn rules() -> Value {
        json!({
            "base": "low",
            "rules": [
                { "risk": "high",
                  "condition": { "kind": "compare", "field": ["amount_cents"], "op": "gt", "value": 1000 } },
                { "risk": "medium",
                  "condition": { "kind": "or", "conditions": [
                      { "kind": "truthy", "field": ["express"] },
                      { "kind": "compare", "field": ["amount_cents"], "op": "ge", "value": 500 }
                  ] } }
            ]
        })
    }

    #[test]
    fn the_first_matching_rule_else_the_base() {
        let tool = refund_tool(rules());
        let cases = [
            (json!({ "order_id": "1", "amount_cents": 10 }), (Risk::Low, None)),
            (
                json!({ "order_id": "1", "amount_cents": 1000 }),
                (Risk::Medium, Some(1)),
            ),
            (json!({ "order_id": "1", "amount_cents": 1001 }), (Risk::High, Some(0))),
            (
                json!({ "order_id": "1", "amount_cents": 1000.5 }),
                (Risk::High, Some(0)),
            ),
            (
                json!({ "order_id": "1", "amount_cents": 5, "express": true }),
                (Risk::Medium, Some(1)),
            ),
            (
                json!({ "order_id": "1", "amount_cents": 5000, "express": true }),
                (Risk::High, Some(0)),
            ),
            (
                json!({ "order_id": "1", "amount_cents": u64::MAX }),
                (Risk::High, Some(0)),
            ),
            // An unset argument makes each comparison false: the base applies.
            (json!({ "order_id": "1" }), (Risk::Low, None)),
            (json!({ "order_id": "1", "amount_cents": null }), (Risk::Low, None)),
            (json!({ "order_id": "1", "amount_cents": "5000" }), (Risk::Low, None)),
            (json!("not an object"), (Risk::Low, None)),
            (json!(null), (Risk::Low, None)),
        ];
        for (arguments, expected) in cases {
            assert_eq!(call_risk(&tool, &arguments), expected, "{arguments}");
        }
    }

    #[test]
    fn without_rules_the_tool_s_risk() {
        let tool = refund_tool(Value::Null);
        assert_eq!(call_risk(&tool, &json!({ "amount_cents": 99_999 })), (Risk::High, None));
        let mut tool = tool;
        tool.risk = Risk::Medium;
        assert_eq!(call_risk(&tool, &json!({})), (Risk::Medium, None));
    }

    #[test]
    fn rules_see_nested_arguments() {
        let tool = refund_tool(json!({
            "base": "medium",
            "rules": [
                { "risk": "low",
                  "condition": { "kind": "compare", "field": ["customer", "tier"], "op": "in", "value": ["gold", "platinum"] } }
            ]
        }));
        assert_eq!(
            call_risk(&tool, &json!({ "customer": { "tier": "gold" } })),
            (Risk::Low, Some(0))
        );
        assert_eq!(call_risk(&tool, &json!({ "customer": "gold" })), (Risk::Medium, None));
    }
}
