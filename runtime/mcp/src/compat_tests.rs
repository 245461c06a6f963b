//! The compatibility check, case by case: what it proves and what it refuses.

use serde_json::json;

use super::problems;

fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

#[test]
fn the_same_schema_fits() {
    let schema = object(json!({"message": {"type": "string"}}), &["message"]);
    assert_eq!(problems(&schema, &schema), Vec::<String>::new());
}

#[test]
fn a_zod_style_server_schema_fits_a_narrower_declaration() {
    let server = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"type": "number", "description": "First"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    });
    let declared = object(
        json!({"a": {"type": "integer", "minimum": 0}, "b": {"type": "number"}}),
        &["a", "b"],
    );
    assert_eq!(problems(&declared, &server), Vec::<String>::new());
}

#[test]
fn type_mismatches_are_named_with_their_path() {
    let server = object(json!({"message": {"type": "string"}}), &["message"]);
    let declared = object(json!({"message": {"type": "integer"}}), &["message"]);
    assert_eq!(
        problems(&declared, &server),
        vec!["`message`: declared as integer, the server accepts string"]
    );
}

#[test]
fn the_server_must_not_require_what_the_declaration_may_leave_out() {
    let server = object(json!({"a": {"type": "string"}, "b": {"type": "string"}}), &["a", "b"]);
    let declared = object(json!({"a": {"type": "string"}}), &["a"]);
    assert_eq!(
        problems(&declared, &server),
        vec!["`b`: the server requires `b`, which the declaration does not have"]
    );
    let optional = object(json!({"a": {"type": "string"}, "b": {"type": "string"}}), &["a"]);
    assert_eq!(
        problems(&optional, &server),
        vec!["`b`: the server requires `b`, which the declaration leaves optional"]
    );
    // A default is filled in by the engine, so the parameter is always sent.
    let defaulted = object(
        json!({"a": {"type": "string"}, "b": {"type": "string", "default": "x"}}),
        &["a"],
    );
    assert_eq!(problems(&defaulted, &server), Vec::<String>::new());
}

#[test]
fn a_parameter_the_server_does_not_accept_is_refused() {
    let server = object(json!({"a": {"type": "string"}}), &[]);
    let declared = object(json!({"a": {"type": "string"}, "extra": {"type": "string"}}), &[]);
    assert_eq!(
        problems(&declared, &server),
        vec!["`extra`: the server does not accept this parameter"]
    );
    // Without `additionalProperties: false` the server accepts it.
    let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert_eq!(problems(&declared, &open), Vec::<String>::new());
}

#[test]
fn a_declaration_open_to_extra_properties_needs_a_server_that_is_too() {
    let server = object(json!({"a": {"type": "string"}}), &[]);
    let declared = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert_eq!(
        problems(&declared, &server),
        vec!["the arguments: the declaration allows properties it does not list, the server refuses them"]
    );
}

#[test]
fn bounds_must_be_kept() {
    let server = object(json!({"n": {"type": "integer", "minimum": 1, "maximum": 10}}), &["n"]);
    let loose = object(json!({"n": {"type": "integer", "minimum": 0}}), &["n"]);
    assert_eq!(
        problems(&loose, &server),
        vec![
            "`n`: the server's `maximum`/`exclusiveMaximum` is not kept by the declaration",
            "`n`: the server's `minimum`/`exclusiveMinimum` is not kept by the declaration",
        ]
    );
    let tight = object(
        json!({"n": {"type": "integer", "exclusiveMinimum": 1, "maximum": 5}}),
        &["n"],
    );
    assert_eq!(problems(&tight, &server), Vec::<String>::new());
    let text = object(json!({"s": {"type": "string", "maxLength": 5}}), &["s"]);
    let longer = object(json!({"s": {"type": "string", "maxLength": 50}}), &["s"]);
    assert_eq!(
        problems(&longer, &text),
        vec!["`s`: the server's `maxLength` is not kept by the declaration"]
    );
}

#[test]
fn listed_values_are_checked_one_by_one() {
    let server = object(
        json!({"kind": {"type": "string", "enum": ["error", "success", "debug"]}}),
        &["kind"],
    );
    let fits = object(
        json!({"kind": {"type": "string", "enum": ["error", "debug"]}}),
        &["kind"],
    );
    assert_eq!(problems(&fits, &server), Vec::<String>::new());
    let wider = object(
        json!({"kind": {"type": "string", "enum": ["error", "fatal"]}}),
        &["kind"],
    );
    assert_eq!(
        problems(&wider, &server),
        vec!["`kind`: the server refuses the declared value(s) \"fatal\""]
    );
    let free = object(json!({"kind": {"type": "string"}}), &["kind"]);
    assert_eq!(
        problems(&free, &server),
        vec!["`kind`: the server accepts only listed values, the declaration lists none"]
    );
}

#[test]
fn unions_and_references() {
    let server = json!({
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/n"}]}},
        "$defs": {"n": {"type": "number"}},
    });
    let declared = object(json!({"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}), &[]);
    assert_eq!(problems(&declared, &server), Vec::<String>::new());
    let boolean = object(json!({"v": {"type": "boolean"}}), &[]);
    assert_eq!(
        problems(&boolean, &server),
        vec!["`v`: fits none of the server's `anyOf` alternatives"]
    );
    let nullable = object(json!({"v": {"type": ["string", "null"]}}), &[]);
    assert_eq!(
        problems(
            &nullable,
            &json!({"type": "object", "properties": {"v": {"type": "string"}}})
        ),
        vec!["`v`: declared as null, the server accepts string"]
    );
}

#[test]
fn what_cannot_be_proved_is_refused() {
    let declared = object(json!({"v": {"type": "string"}}), &[]);
    let not = json!({"type": "object", "properties": {"v": {"not": {"const": "x"}}}});
    assert_eq!(
        problems(&declared, &not),
        vec!["`v`: the server's schema uses `not`, which this check cannot prove"]
    );
    let remote = json!({"type": "object", "properties": {"v": {"$ref": "https://example.com/s"}}});
    assert_eq!(
        problems(&declared, &remote),
        vec!["`v`: the server's schema refers to `https://example.com/s`, outside the schema"]
    );
    let cycle =
        json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}});
    assert_eq!(
        problems(&declared, &cycle),
        vec!["`v`: the server's schema follows more than 16 `$ref`s in a row"]
    );
}

#[test]
fn nested_objects_and_arrays() {
    let server = json!({"type": "object", "properties": {"items": {"type": "array", "items": {
        "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}}});
    let declared = object(
        json!({"items": {"type": "array", "items": object(json!({"id": {"type": "integer"}}), &["id"])}}),
        &[],
    );
    assert_eq!(
        problems(&declared, &server),
        vec!["`items[].id`: declared as integer, the server accepts string"]
    );
}

#[test]
fn deep_schemas_stop_at_the_limit() {
    let mut declared = json!({"type": "array"});
    let mut server = json!({"type": "array"});
    for _ in 0..40 {
        declared = json!({"type": "array", "items": declared});
        server = json!({"type": "array", "items": server});
    }
    let found = problems(&declared, &server);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("nested deeper than 32 levels"), "{found:?}");
}
