//! Schema messages as seed 003 writes them (`$.approved: expected boolean, got str`), for the
//! seed's example and every keyword the engine reports, pinned in one snapshot.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

use serde_json::{Value, json};
use tenx_engine::approval::check_answer;
use tenx_engine::schema::CompiledSchema;

fn violations(schema: &Value, value: &Value) -> Vec<String> {
    CompiledSchema::compile(schema)
        .unwrap()
        .violations(value)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_seed_003_resume_error() {
    let yes_no = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"approved": {"type": "boolean"}},
        "required": ["approved"]
    }))
    .unwrap();
    let error = check_answer(
        &yes_no,
        "int_710c73f7a4a1479881718d9ad18a3c55",
        &json!({"approved": "yes"}),
    )
    .unwrap_err();
    assert_eq!(error.code.as_str(), "INTERRUPT_002");
    assert_eq!(error.code.status(), 422);
    assert_eq!(
        error.message,
        "Resume value does not match the response schema of interrupt 'int_710c73f7a4a1479881718d9ad18a3c55': \
         $.approved: expected boolean, got str"
    );
    assert_eq!(
        error.details,
        json!({"path": "$.approved", "message": "expected boolean, got str"})
    );
    // A cancel is never checked; a valid answer passes.
    assert!(check_answer(&yes_no, "int_x", &Value::Null).is_ok());
    assert!(check_answer(&yes_no, "int_x", &json!({"approved": false})).is_ok());
    // Each short type name, as the seed writes them.
    let got: Vec<String> = [json!(1), json!(1.5), json!(null), json!([]), json!({}), json!("yes")]
        .into_iter()
        .map(|value| yes_no.check(&json!({"approved": value})).unwrap_err().to_string())
        .collect();
    assert_eq!(
        got,
        [
            "$.approved: expected boolean, got int",
            "$.approved: expected boolean, got float",
            "$.approved: expected boolean, got null",
            "$.approved: expected boolean, got list",
            "$.approved: expected boolean, got dict",
            "$.approved: expected boolean, got str",
        ]
    );
    assert_eq!(
        yes_no.check(&json!({})).unwrap_err().to_string(),
        "$: missing required property 'approved'"
    );
    assert_eq!(
        yes_no.check(&json!("yes")).unwrap_err().to_string(),
        "$: expected object, got str"
    );
}

#[test]
fn every_keyword_has_a_message() {
    let cases: Vec<(&str, Value, Value)> = vec![
        ("type", json!({"type": "integer"}), json!(1.5)),
        ("type list", json!({"type": ["string", "null"]}), json!(3)),
        (
            "required",
            json!({"required": ["order_id", "amount_cents"]}),
            json!({"amount_cents": 1}),
        ),
        ("enum", json!({"enum": ["dhl", "ups"]}), json!("fedex")),
        ("const", json!({"const": "approve"}), json!("reject")),
        ("minimum", json!({"minimum": 1}), json!(0)),
        ("maximum", json!({"maximum": 10000}), json!(10001)),
        ("exclusiveMinimum", json!({"exclusiveMinimum": 0}), json!(0)),
        ("exclusiveMaximum", json!({"exclusiveMaximum": 1.5}), json!(2)),
        ("multipleOf", json!({"multipleOf": 5}), json!(7)),
        ("minLength", json!({"minLength": 3}), json!("ab")),
        ("maxLength", json!({"maxLength": 1}), json!("secret text")),
        ("pattern", json!({"pattern": "^[0-9]+$"}), json!("10a2")),
        (
            "additionalProperties",
            json!({"properties": {"a": {}}, "additionalProperties": false}),
            json!({"a": 1, "b": 2}),
        ),
        (
            "additionalProperties, two",
            json!({"additionalProperties": false}),
            json!({"x": 1, "y": 2}),
        ),
        (
            "unevaluatedProperties",
            json!({"properties": {"a": {}}, "unevaluatedProperties": false}),
            json!({"z": 1}),
        ),
        ("minItems", json!({"minItems": 1}), json!([])),
        ("maxItems", json!({"maxItems": 2}), json!([1, 2, 3])),
        ("uniqueItems", json!({"uniqueItems": true}), json!([1, 1])),
        ("contains", json!({"contains": {"type": "string"}}), json!([1])),
        ("minProperties", json!({"minProperties": 1}), json!({})),
        ("maxProperties", json!({"maxProperties": 1}), json!({"a": 1, "b": 2})),
        (
            "anyOf of types",
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!(true),
        ),
        ("anyOf", json!({"anyOf": [{"minimum": 5}, {"maximum": 1}]}), json!(3)),
        (
            "oneOf none",
            json!({"oneOf": [{"minimum": 5}, {"maximum": 1}]}),
            json!(3),
        ),
        (
            "oneOf many",
            json!({"oneOf": [{"minimum": 1}, {"maximum": 5}]}),
            json!(3),
        ),
        ("not", json!({"not": {"type": "string"}}), json!("x")),
        (
            "false schema",
            json!({"properties": {"never": false}}),
            json!({"never": 1}),
        ),
        (
            "propertyNames",
            json!({"propertyNames": {"pattern": "^[a-z]+$"}}),
            json!({"Bad": 1}),
        ),
        (
            "format is an annotation",
            json!({"format": "email"}),
            json!("not an email"),
        ),
        (
            "nested paths",
            json!({"properties": {"lines": {"items": {"properties": {"qty": {"type": "integer"}}}}}}),
            json!({"lines": [{"qty": 1}, {"qty": "2"}]}),
        ),
        (
            "odd names",
            json!({"properties": {"order id": {"type": "string"}}}),
            json!({"order id": 5}),
        ),
        (
            "several at once, sorted",
            json!({
                "type": "object",
                "properties": {"b": {"type": "string"}, "a": {"items": {"type": "integer"}}},
                "required": ["c"]
            }),
            json!({"b": 1, "a": [1, "x", 2, 3, 4, 5, 6, 7, 8, 9, "y"]}),
        ),
    ];
    let mut out = String::new();
    for (name, schema, value) in &cases {
        out.push_str(&format!("{name}: {value}\n"));
        let found = violations(schema, value);
        if found.is_empty() {
            out.push_str("  valid\n");
        }
        for violation in found {
            out.push_str(&format!("  {violation}\n"));
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn messages_never_repeat_the_value() {
    let secret = "sk-live-0123456789";
    for schema in [
        json!({"maxLength": 3}),
        json!({"pattern": "^[0-9]+$"}),
        json!({"enum": ["a"]}),
        json!({"type": "integer"}),
        json!({"not": {"type": "string"}}),
    ] {
        for violation in violations(&schema, &json!(secret)) {
            assert!(!violation.contains(secret), "{violation}");
        }
    }
}
