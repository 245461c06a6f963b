//! Unit tests of types inside inline schemas: every schema position filled in, spans kept,
//! names where data belongs, unknown names, and the readers' view through [`inline_json`].

use super::*;
use crate::resolve::Program;
use serde_json::json;
use tenx_diagnostics::{Code, Diagnostic, FileId, SourceSet};

const NAMED: &str = r#"
schema addr = {
  "type": "object",
  "properties": { "city": { "type": "string" } },
  "required": ["city"]
}
schema tag = enum("a", "b")
"#;

fn program(text: &str) -> (Program, FileId) {
    let mut sources = SourceSet::new();
    let root = sources.add("test.tenx", text);
    let mut diagnostics = Vec::new();
    let program = crate::resolve::resolve(&mut sources, root, &mut diagnostics);
    assert!(diagnostics.is_empty(), "resolve: {diagnostics:?}");
    (program, root)
}

/// The schema `probe` declared after [`NAMED`] as `schema probe = <map>`, lowered.
fn probe(map: &str) -> (Lowered, Vec<Diagnostic>, String) {
    let source = format!("{NAMED}\nschema probe = {map}\n");
    let (program, _) = program(&source);
    let decl = program.schema("probe").unwrap();
    let mut diagnostics = Vec::new();
    let lowered = lower_type(&program, decl.file, &decl.decl.ty, &mut diagnostics).unwrap();
    (lowered, diagnostics, source)
}

fn addr() -> serde_json::Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

fn tag() -> serde_json::Value {
    json!({"type": "string", "enum": ["a", "b"]})
}

#[test]
fn every_schema_position_is_filled_in() {
    let (lowered, diagnostics, _) = probe(
        r#"{
      "type": "object",
      "properties": { "home": addr, "tags": { "type": "array", "items": tag } },
      "patternProperties": { "^x": string },
      "additionalProperties": int(min: 1),
      "prefixItems": [tag, bool],
      "anyOf": [addr, { "type": "null" }],
      "oneOf": [tag],
      "allOf": [addr],
      "not": number(max: 0),
      "if": addr, "then": tag, "else": string(max_length: 3),
      "$defs": { "d": addr },
      "dependentSchemas": { "home": addr },
      "contains": tag,
      "propertyNames": string(pattern: "^[a-z]+$")
    }"#,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let expected = json!({
        "type": "object",
        "properties": { "home": addr(), "tags": { "type": "array", "items": tag() } },
        "patternProperties": { "^x": { "type": "string" } },
        "additionalProperties": { "type": "integer", "minimum": 1 },
        "prefixItems": [tag(), { "type": "boolean" }],
        "anyOf": [addr(), { "type": "null" }],
        "oneOf": [tag()],
        "allOf": [addr()],
        "not": { "type": "number", "maximum": 0 },
        "if": addr(), "then": tag(), "else": { "type": "string", "maxLength": 3 },
        "$defs": { "d": addr() },
        "dependentSchemas": { "home": addr() },
        "contains": tag(),
        "propertyNames": { "type": "string", "pattern": "^[a-z]+$" }
    });
    assert_eq!(lowered.value, expected);
    let mut found = Vec::new();
    check_lowered(&lowered, SchemaSite::Schema, &mut found);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn spans_point_at_the_name_and_inside_it_at_the_declaration() {
    let (lowered, _, source) = probe(r#"{ "properties": { "home": addr } }"#);
    let at = lowered.spans.get("/properties/home").unwrap();
    assert_eq!(source.get(at.span.range()), Some("addr"));
    assert_eq!(at.key.and_then(|k| source.get(k.range())), Some("\"home\""));
    assert!(!lowered.is_foreign("/properties/home"));
    let inner = lowered.origin_of("/properties/home/properties/city/type");
    assert_eq!(inner.schema.as_deref(), Some("addr"));
    assert_eq!(source.get(inner.span.range()), Some("\"string\""));
    assert!(lowered.is_foreign("/properties/home/required/0"));
}

#[test]
fn a_problem_inside_a_named_schema_is_not_reported_at_its_use() {
    let source = r#"
schema loose = { "type": "object", "required": ["nope"], "properties": {} }
schema probe = { "type": "object", "properties": { "a": loose } }
"#;
    let (program, _) = program(source);
    let decl = program.schema("probe").unwrap();
    let mut diagnostics = Vec::new();
    let lowered = lower_type(&program, decl.file, &decl.decl.ty, &mut diagnostics).unwrap();
    check_lowered(&lowered, SchemaSite::Schema, &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

#[test]
fn local_refs_of_a_named_schema_are_rebased_where_it_is_inlined() {
    let source = r##"
schema tree = {
  "$defs": { "node": { "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
  "$ref": "#/$defs/node"
}
schema probe = { "type": "object", "properties": { "root": tree } }
"##;
    let (program, _) = program(source);
    let decl = program.schema("probe").unwrap();
    let mut diagnostics = Vec::new();
    let lowered = lower_type(&program, decl.file, &decl.decl.ty, &mut diagnostics).unwrap();
    assert_eq!(
        lowered.value.pointer("/properties/root/$ref"),
        Some(&json!("#/properties/root/$defs/node"))
    );
    check_lowered(&lowered, SchemaSite::Schema, &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

#[test]
fn a_schema_name_where_data_belongs_is_refused() {
    for data in [
        r#"{ "enum": [addr] }"#,
        r#"{ "const": tag }"#,
        r#"{ "type": "string", "default": tag }"#,
        r#"{ "examples": [addr] }"#,
        r#"{ "properties": { "a": {} }, "required": [addr] }"#,
        r#"{ "type": addr }"#,
        r#"{ "x-note": addr }"#,
        r#"{ "properties": addr }"#,
        r#"{ "anyOf": tag }"#,
    ] {
        let (lowered, diagnostics, _) = probe(data);
        let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::TENX0421], "{data}: {diagnostics:?}");
        assert!(!lowered.invalid.is_empty(), "{data}: marked invalid");
    }
    // Another name there is no JSON value either, as before.
    let (_, diagnostics, _) = probe(r#"{ "type": string }"#);
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::TENX0401]);
}

#[test]
fn an_unknown_name_in_a_schema_position_is_refused_with_a_suggestion() {
    let (lowered, diagnostics, source) = probe(r#"{ "properties": { "home": adr } }"#);
    let [d] = diagnostics.as_slice() else {
        panic!("{diagnostics:?}")
    };
    assert_eq!(d.code, Code::TENX0420);
    assert_eq!(source.get(d.primary.span.range()), Some("adr"));
    assert_eq!(d.help.as_deref(), Some("did you mean `addr`?"));
    assert!(lowered.is_invalid("/properties/home"));
    let mut found = Vec::new();
    check_lowered(&lowered, SchemaSite::Schema, &mut found);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn inline_json_sees_through_names() {
    let source = format!("{NAMED}\nschema probe = {{ \"type\": \"object\", \"properties\": {{ \"home\": addr }} }}\n");
    let (program, _) = program(&source);
    let crate::ast::TypeExpr::Schema(map) = &program.schema("probe").unwrap().decl.ty else {
        panic!("an inline map")
    };
    assert_eq!(
        inline_json(&program, map),
        Some(json!({"type": "object", "properties": {"home": addr()}}))
    );
    let plain = crate::ast::Expr {
        kind: crate::ast::ExprKind::Path(vec![crate::ast::Ident {
            name: "nothing".into(),
            span: tenx_diagnostics::Span::default(),
        }]),
        span: tenx_diagnostics::Span::default(),
    };
    assert_eq!(inline_json(&program, &plain), None);
}
