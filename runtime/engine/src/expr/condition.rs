//! Conditions: evaluating a [`Condition`] of the artifact (a route's `when` arm, a tool's risk
//! rule) over a JSON object (the run state, or a call's arguments).
//!
//! - A field is a path ([`super::path`]); it is *unset* when a step is missing, crosses a
//!   non-object, or holds `null`.
//! - **Every comparison that reads an unset field is false**, `!=` included (so `x == null` and
//!   `x != null` are both false when `x` is unset; `x != null` is true when `x` is set), and
//!   `not` of such a comparison is true.
//! - `==` compares kind and value, numbers by value (`1 == 1.0`), arrays and objects
//!   structurally; `!=` on a set field is its exact negation (a number `!= "a"` is true).
//! - `<`, `<=`, `>`, `>=` hold only between two numbers (exactly, by value) or two strings
//!   (Unicode code-point order, no normalisation, case-sensitive); any other pair is false.
//! - `in` holds when the field equals an element of the constant array (false when the constant
//!   is not an array); `contains` holds when the field is a string holding the constant string,
//!   or an array with an element equal to the constant.
//! - A bare field (`truthy`) holds unless it is unset, `false`, a zero, `""`, `[]` or `{}`.
//! - `and` of nothing is true, `or` of nothing false; both stop at the first deciding operand.

use serde_json::{Map, Value};
use tenx_artifact::{CompareOp, Condition};

use super::compare::{equal, order, truthy};
use super::path::read_set;

/// Whether `condition` holds on `scope` (the run state, or a call's arguments).
pub fn evaluate(condition: &Condition, scope: &Map<String, Value>) -> bool {
    match condition {
        Condition::Or { conditions } => conditions.iter().any(|c| evaluate(c, scope)),
        Condition::And { conditions } => conditions.iter().all(|c| evaluate(c, scope)),
        Condition::Not { condition } => !evaluate(condition, scope),
        Condition::Truthy { field } => read_set(scope, field).is_some_and(truthy),
        Condition::Compare { field, op, value } => {
            read_set(scope, field).is_some_and(|found| compare(found, *op, value))
        }
    }
}

/// `found OP constant`, for a field that is set.
fn compare(found: &Value, op: CompareOp, constant: &Value) -> bool {
    match op {
        CompareOp::Eq => equal(found, constant),
        CompareOp::Ne => !equal(found, constant),
        CompareOp::Lt => order(found, constant).is_some_and(std::cmp::Ordering::is_lt),
        CompareOp::Le => order(found, constant).is_some_and(std::cmp::Ordering::is_le),
        CompareOp::Gt => order(found, constant).is_some_and(std::cmp::Ordering::is_gt),
        CompareOp::Ge => order(found, constant).is_some_and(std::cmp::Ordering::is_ge),
        CompareOp::In => constant
            .as_array()
            .is_some_and(|items| items.iter().any(|item| equal(found, item))),
        CompareOp::Contains => match (found, constant) {
            (Value::String(text), Value::String(part)) => text.contains(part.as_str()),
            (Value::Array(items), _) => items.iter().any(|item| equal(item, constant)),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(dotted: &str) -> Vec<String> {
        dotted.split('.').map(str::to_string).collect()
    }

    fn cmp(dotted: &str, op: CompareOp, value: Value) -> Condition {
        Condition::Compare {
            field: field(dotted),
            op,
            value,
        }
    }

    fn truthy_field(dotted: &str) -> Condition {
        Condition::Truthy { field: field(dotted) }
    }

    fn not(condition: Condition) -> Condition {
        Condition::Not {
            condition: Box::new(condition),
        }
    }

    fn state() -> Map<String, Value> {
        match json!({
            "verdict": "publish",
            "score": 0.15,
            "count": 3,
            "big": 18_446_744_073_709_551_615_u64,
            "escalated": true,
            "quiet": false,
            "nothing": null,
            "name": "Zoë",
            "empty": "",
            "tags": ["vip", "eu", 7],
            "customer": { "tier": "gold", "address": { "country": "CH" }, "note": null },
            "text": "hello world"
        }) {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    use CompareOp::{Contains, Eq, Ge, Gt, In, Le, Lt, Ne};

    #[test]
    fn comparisons_table() {
        let s = state();
        let cases: Vec<(Condition, bool)> = vec![
            (cmp("verdict", Eq, json!("publish")), true),
            (cmp("verdict", Eq, json!("revise")), false),
            (cmp("verdict", Ne, json!("revise")), true),
            (cmp("verdict", Ne, json!("publish")), false),
            (cmp("count", Eq, json!(3.0)), true),
            (cmp("count", Ne, json!(3.0)), false),
            (cmp("count", Lt, json!(3.5)), true),
            (cmp("count", Le, json!(3)), true),
            (cmp("count", Gt, json!(3)), false),
            (cmp("count", Ge, json!(3.0)), true),
            (cmp("score", Lt, json!(0.2)), true),
            (cmp("score", Gt, json!(0)), true),
            (cmp("big", Gt, json!(i64::MAX)), true),
            (cmp("big", Eq, json!(1.8446744073709552e19)), false),
            (cmp("big", Lt, json!(1.8446744073709552e19)), true),
            (cmp("name", Gt, json!("Zoe")), true),
            (cmp("name", Lt, json!("a")), true),
            (cmp("name", Eq, json!("Zoë")), true),
            (cmp("empty", Eq, json!("")), true),
            (cmp("empty", Lt, json!("a")), true),
            (cmp("customer.tier", Eq, json!("gold")), true),
            (cmp("customer.address.country", In, json!(["CH", "DE"])), true),
            (cmp("customer.address.country", In, json!(["FR"])), false),
            (cmp("customer.address.country", In, json!("CH")), false),
            (cmp("count", In, json!([1, 3.0])), true),
            (cmp("tags", Contains, json!("eu")), true),
            (cmp("tags", Contains, json!(7.0)), true),
            (cmp("tags", Contains, json!("us")), false),
            (cmp("text", Contains, json!("lo wo")), true),
            (cmp("text", Contains, json!("")), true),
            (cmp("text", Contains, json!(1)), false),
            (cmp("count", Contains, json!(3)), false),
            (cmp("escalated", Eq, json!(true)), true),
            (cmp("quiet", Eq, json!(false)), true),
            (cmp("quiet", Ne, json!(true)), true),
        ];
        for (condition, expected) in cases {
            assert_eq!(evaluate(&condition, &s), expected, "{condition:?}");
        }
    }

    #[test]
    fn mismatched_kinds_are_false_but_not_equal_holds() {
        let s = state();
        for op in [Eq, Lt, Le, Gt, Ge, In, Contains] {
            assert!(!evaluate(&cmp("count", op, json!("3")), &s), "count {op:?} \"3\"");
            assert!(!evaluate(&cmp("verdict", op, json!(1)), &s), "verdict {op:?} 1");
            assert!(!evaluate(&cmp("escalated", op, json!(1)), &s), "escalated {op:?} 1");
        }
        assert!(evaluate(&cmp("count", Ne, json!("3")), &s));
        assert!(!evaluate(&cmp("escalated", Lt, json!(true)), &s));
        assert!(!evaluate(&cmp("tags", Lt, json!(["z"])), &s));
    }

    #[test]
    fn every_comparison_on_an_unset_field_is_false_and_its_negation_true() {
        let s = state();
        let unset = [
            "missing",
            "nothing",
            "customer.note",
            "customer.missing",
            "verdict.deeper",
            "tags.0",
        ];
        let constants = [json!(null), json!("publish"), json!(0), json!(["x"]), json!(true)];
        for path in unset {
            for op in [Eq, Ne, Lt, Le, Gt, Ge, In, Contains] {
                for constant in &constants {
                    let condition = cmp(path, op, constant.clone());
                    assert!(!evaluate(&condition, &s), "{path} {op:?} {constant}");
                    assert!(evaluate(&not(condition), &s), "not {path} {op:?} {constant}");
                }
            }
            assert!(!evaluate(&truthy_field(path), &s), "{path}");
            assert!(evaluate(&not(truthy_field(path)), &s), "not {path}");
        }
        // `!= null` is how a condition asks "is it set".
        assert!(evaluate(&cmp("verdict", Ne, json!(null)), &s));
        assert!(!evaluate(&cmp("verdict", Eq, json!(null)), &s));
    }

    #[test]
    fn truthy_fields() {
        let s = state();
        for (path, expected) in [
            ("escalated", true),
            ("quiet", false),
            ("count", true),
            ("empty", false),
            ("tags", true),
            ("customer", true),
            ("customer.tier", true),
            ("score", true),
        ] {
            assert_eq!(evaluate(&truthy_field(path), &s), expected, "{path}");
        }
    }

    #[test]
    fn and_or_not_combine_and_nest() {
        let s = state();
        let yes = || cmp("verdict", Eq, json!("publish"));
        let no = || cmp("verdict", Eq, json!("revise"));
        let and = |conditions| Condition::And { conditions };
        let or = |conditions| Condition::Or { conditions };
        assert!(evaluate(&and(vec![]), &s));
        assert!(!evaluate(&or(vec![]), &s));
        assert!(evaluate(&and(vec![yes(), yes()]), &s));
        assert!(!evaluate(&and(vec![yes(), no()]), &s));
        assert!(evaluate(&or(vec![no(), yes()]), &s));
        assert!(!evaluate(&or(vec![no(), no()]), &s));
        assert!(evaluate(&not(not(yes())), &s));
        // not escalated or (score < 0.2 and region in [...]) with region unset.
        let nested = or(vec![
            not(truthy_field("escalated")),
            and(vec![cmp("score", Lt, json!(0.2)), cmp("region", In, json!(["eu"]))]),
        ]);
        assert!(!evaluate(&nested, &s));
        let nested = or(vec![
            not(truthy_field("escalated")),
            and(vec![
                cmp("score", Lt, json!(0.2)),
                not(cmp("region", In, json!(["eu"]))),
            ]),
        ]);
        assert!(evaluate(&nested, &s));
    }

    #[test]
    fn a_deeply_nested_condition_from_the_artifact_evaluates() {
        // serde_json refuses nesting beyond 128 levels when the artifact is read; build one
        // near that depth by hand.
        let mut condition = cmp("count", Eq, json!(3));
        for _ in 0..120 {
            condition = not(not(condition));
        }
        assert!(evaluate(&condition, &state()));
    }

    #[test]
    fn reads_conditions_in_the_artifact_s_json_shape() {
        let condition: Condition = serde_json::from_value(json!({
            "kind": "and",
            "conditions": [
                { "kind": "compare", "field": ["customer", "tier"], "op": "eq", "value": "gold" },
                { "kind": "not", "condition": { "kind": "truthy", "field": ["quiet"] } },
                { "kind": "compare", "field": ["count"], "op": "in", "value": [1, 2, 3] }
            ]
        }))
        .unwrap();
        assert!(evaluate(&condition, &state()));
        assert!(!evaluate(&condition, &Map::new()));
    }
}
