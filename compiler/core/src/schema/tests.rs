//! Unit tests: the lowering of each type, the span map (pointer → source text), named schemas
//! inlined with their own spans, cycles, and the checks of a lowered schema.

use super::*;
use crate::resolve::Program;
use serde_json::json;
use tenx_diagnostics::{Code, Diagnostic, FileId, SourceSet, Span};

fn program(text: &str) -> (Program, FileId, Vec<Diagnostic>) {
    let mut sources = SourceSet::new();
    let root = sources.add("test.tenx", text);
    let mut diagnostics = Vec::new();
    let program = crate::resolve::resolve(&mut sources, root, &mut diagnostics);
    (program, root, diagnostics)
}

fn text(source: &str, span: Span) -> &str {
    source.get(span.range()).unwrap_or("<bad span>")
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<Code> {
    diagnostics.iter().map(|d| d.code).collect()
}

/// The parameters of the first tool of `source`, lowered, with the lowering's diagnostics.
fn tool_params(source: &str) -> (Lowered, Vec<Diagnostic>) {
    let (program, _, resolve) = program(source);
    assert!(resolve.is_empty(), "resolve: {resolve:?}");
    let mut diagnostics = Vec::new();
    let tool = program.tools.first().unwrap();
    let lowered = lower_tool_parameters(&program, tool, &mut diagnostics);
    (lowered, diagnostics)
}

/// The type of the schema named `name`, lowered.
fn schema_type(source: &str, name: &str) -> (Option<Lowered>, Vec<Diagnostic>) {
    let (program, _, _) = program(source);
    let decl = program.schema(name).unwrap();
    let mut diagnostics = Vec::new();
    let lowered = lower_type(&program, decl.file, &decl.decl.ty, &mut diagnostics);
    (lowered, diagnostics)
}

#[test]
fn typed_fields() {
    let cases = [
        ("string", json!({"type": "string"})),
        (
            "string(min_length: 1, max_length: 5, pattern: \"^a\", format: \"email\")",
            json!({"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a", "format": "email"}),
        ),
        (
            "int(min: -1, max: 10)",
            json!({"type": "integer", "minimum": -1, "maximum": 10}),
        ),
        ("number(min: 0.5)", json!({"type": "number", "minimum": 0.5})),
        ("bool", json!({"type": "boolean"})),
        ("enum(\"a\", \"b\")", json!({"type": "string", "enum": ["a", "b"]})),
        ("enum(1, 2)", json!({"type": "integer", "enum": [1, 2]})),
        ("enum(1, 2.5)", json!({"type": "number", "enum": [1, 2.5]})),
        ("enum(\"a\", 1)", json!({"enum": ["a", 1]})),
        (
            "list<int>(min_items: 1, max_items: 3)",
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3}),
        ),
        (
            "list<list<bool>>",
            json!({"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}}),
        ),
        ("object", json!({"type": "object"})),
        ("any", json!({})),
        (
            "{ \"type\": \"string\", \"enum\": [\"x\"] }",
            json!({"type": "string", "enum": ["x"]}),
        ),
        ("other", json!({"type": "integer", "minimum": 1})),
        (
            "list<other>",
            json!({"type": "array", "items": {"type": "integer", "minimum": 1}}),
        ),
    ];
    for (ty, expected) in cases {
        let source = format!("schema other = int(min: 1)\nschema s = {ty}\n");
        let (lowered, diagnostics) = schema_type(&source, "s");
        assert!(diagnostics.is_empty(), "{ty}: {diagnostics:?}");
        assert_eq!(lowered.unwrap().value, expected, "{ty}");
    }
}

#[test]
fn parameter_list() {
    let (lowered, diagnostics) = tool_params(
        "tool t(a: string \"A\", b?: int, c: bool = true \"C\") -> string {\n  description = \"d\"\n  run = remote\n}\n",
    );
    assert!(diagnostics.is_empty());
    assert_eq!(
        lowered.value,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "A"},
                "b": {"type": "integer"},
                "c": {"type": "boolean", "description": "C", "default": true}
            },
            "required": ["a"],
            "additionalProperties": false
        })
    );
}

#[test]
fn tool_without_parameters_is_an_empty_object() {
    let (lowered, _) = tool_params("tool t -> string {\n  description = \"d\"\n  run = remote\n}\n");
    assert_eq!(
        lowered.value,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[test]
fn span_map_of_typed_fields() {
    let source = "tool t(amount: int(min: 1) = 5 \"How much\", tags: list<string(max_length: 9)>) -> string {\n  description = \"d\"\n  run = remote\n}\n";
    let (lowered, _) = tool_params(source);
    assert_eq!(text(source, lowered.span_of("/properties/amount/minimum")), "1");
    assert_eq!(text(source, lowered.key_of("/properties/amount/minimum").1), "min");
    assert_eq!(text(source, lowered.span_of("/properties/amount/type")), "int");
    assert_eq!(text(source, lowered.span_of("/properties/amount")), "int(min: 1)");
    assert_eq!(text(source, lowered.span_of("/properties/amount/default")), "5");
    assert_eq!(text(source, lowered.span_of("/properties/tags/items/maxLength")), "9");
    // `amount` has a default, so only `tags` is required.
    assert_eq!(text(source, lowered.span_of("/required/0")), "tags");
    assert_eq!(lowered.value.get("required"), Some(&json!(["tags"])));
    // A pointer without its own span falls back to the nearest ancestor.
    assert_eq!(text(source, lowered.span_of("/properties/amount/minimum/deeper")), "1");
    assert_eq!(
        text(source, lowered.span_of("/properties/tags/items/nothing")),
        "string(max_length: 9)"
    );
}

#[test]
fn span_map_of_inline_maps() {
    let source = "tool t -> string {\n  description = \"d\"\n  parameters = { \"type\": \"object\", \"properties\": { \"x\": { \"type\": \"strng\" } }, \"required\": [\"x\"] }\n  run = remote\n}\n";
    let (lowered, _) = tool_params(source);
    assert_eq!(text(source, lowered.span_of("/properties/x/type")), "\"strng\"");
    assert_eq!(text(source, lowered.key_of("/properties/x/type").1), "\"type\"");
    assert_eq!(text(source, lowered.span_of("/required/0")), "\"x\"");
    assert!(text(source, lowered.span_of("")).starts_with("{ \"type\""));
}

#[test]
fn named_schemas_keep_their_own_spans() {
    let source = "schema addr = { \"type\": \"object\", \"properties\": { \"city\": { \"type\": \"string\" } } }\ntool t(to: addr = { city: \"x\" }) -> string {\n  description = \"d\"\n  run = remote\n}\n";
    let (lowered, _) = tool_params(source);
    let inner = lowered.origin_of("/properties/to/properties/city/type");
    assert_eq!(inner.schema.as_deref(), Some("addr"));
    assert_eq!(text(source, inner.span), "\"string\"");
    let use_site = lowered.origin_of("/properties/to");
    assert_eq!(use_site.schema, None);
    assert_eq!(text(source, use_site.span), "addr");
    assert!(lowered.is_foreign("/properties/to/properties"));
    assert!(!lowered.is_foreign("/properties/to/default/city"));
    assert_eq!(text(source, lowered.span_of("/properties/to/default/city")), "\"x\"");
}

#[test]
fn inlined_named_schemas_rebase_local_refs() {
    let source = "schema node = { \"$defs\": { \"leaf\": { \"type\": \"string\" } }, \"$ref\": \"#/$defs/leaf\" }\ntool t(n: node) -> string {\n  description = \"d\"\n  run = remote\n}\n";
    let (lowered, _) = tool_params(source);
    assert_eq!(
        lowered.value.pointer("/properties/n/$ref"),
        Some(&json!("#/properties/n/$defs/leaf"))
    );
    let mut diagnostics = Vec::new();
    check_lowered(&lowered, SchemaSite::Parameters, &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}

#[test]
fn constraint_errors() {
    let cases = [
        ("int(minimum: 1)", "`int` has no constraint `minimum`", "minimum"),
        ("int(min: \"x\")", "`min` must be a whole number, not a string", "\"x\""),
        ("int(min: 1.5)", "`min` of `int` must be a whole number", "1.5"),
        ("string(max_length: -1)", "`max_length` must not be negative", "-1"),
        ("int(min: 5, max: 1)", "`min` is greater than `max`", "min: 5"),
        (
            "string(min_length: 2, max_length: 1)",
            "`min_length` is greater than `max_length`",
            "min_length: 2",
        ),
        ("int<string>", "`int` takes no type parameter", "string"),
        ("list", "`list` needs an element type", "list"),
        ("enum()", "`enum` needs at least one value", "enum()"),
        ("enum(\"a\", \"a\")", "`\"a\"` is listed twice in `enum`", "\"a\""),
        (
            "enum(true)",
            "`enum` values must be strings or numbers, not a boolean",
            "true",
        ),
        ("string(format: \"emial\")", "unknown format `emial`", "\"emial\""),
        ("bool(min: 1)", "`bool` has no constraint `min`", "min"),
        ("int(1)", "`int` takes named constraints, not values", "1"),
        ("int(min: 1, min: 2)", "`min` is given twice", "min: 2"),
    ];
    for (ty, message, at) in cases {
        let source = format!("schema s = {ty}\n");
        let (_, diagnostics) = schema_type(&source, "s");
        assert_eq!(codes(&diagnostics), vec![Code::TENX0406], "{ty}: {diagnostics:?}");
        let d = diagnostics.first().unwrap();
        assert_eq!(d.message, message, "{ty}");
        assert_eq!(text(&source, d.primary.span), at, "{ty}");
    }
    let (_, diagnostics) = schema_type("schema s = int(minimum: 1)\n", "s");
    assert_eq!(
        diagnostics.first().unwrap().help.as_deref(),
        Some("did you mean `min`?")
    );
}

#[test]
fn cycles_terminate_and_are_reported_once() {
    let source = "schema a = list<b>\nschema b = a\nschema c = list<c>\nschema d = list<a>\n";
    let (program, _, _) = program(source);
    let mut lowerer = Lowerer::new(&program);
    for name in ["a", "b", "c", "d"] {
        assert!(lowerer.named(name).is_some(), "{name}");
    }
    let mut diagnostics = Vec::new();
    check_cycles(&program, &mut diagnostics);
    assert_eq!(codes(&diagnostics), vec![Code::TENX0408, Code::TENX0408]);
    let spans: Vec<&str> = diagnostics.iter().map(|d| text(source, d.primary.span)).collect();
    assert_eq!(spans, vec!["a", "c"]);
}

#[test]
fn long_chains_of_schemas_do_not_recurse() {
    let mut source = String::new();
    for i in 0..5000 {
        source.push_str(&format!("schema s{i} = s{}\n", i + 1));
    }
    source.push_str("schema s5000 = int\n");
    let (program, _, _) = program(&source);
    let mut lowerer = Lowerer::new(&program);
    assert_eq!(
        lowerer.named("s0").map(|l| l.value.clone()),
        Some(json!({"type": "integer"}))
    );
}

#[test]
fn checks_report_every_problem_at_its_text() {
    let source = "schema s = {\n  \"type\": \"object\",\n  \"properties\": { \"x\": { \"type\": \"strng\", \"minLength\": -1 }, \"n\": { \"type\": \"integer\", \"maximum\": 3, \"default\": 4 } },\n  \"required\": [\"x\", \"y\"],\n  \"requried\": []\n}\n";
    let (lowered, mut diagnostics) = schema_type(source, "s");
    check_lowered(&lowered.unwrap(), SchemaSite::Schema, &mut diagnostics);
    let found: Vec<(Code, &str)> = diagnostics
        .iter()
        .map(|d| (d.code, text(source, d.primary.span)))
        .collect();
    assert_eq!(
        found,
        vec![
            (Code::TENX0401, "-1"),
            (Code::TENX0401, "\"strng\""),
            (Code::TENX0402, "\"y\""),
            (Code::TENX0405, "\"requried\""),
            (Code::TENX0403, "4"),
        ]
    );
}

#[test]
fn response_must_be_an_object() {
    let source = "schema s = enum(\"yes\", \"no\")\n";
    let (program, file, _) = program(source);
    let response = crate::ast::SchemaRef::Named(crate::ast::Ident {
        name: "s".into(),
        span: Span::new(7, 8),
    });
    let mut diagnostics = Vec::new();
    let lowered = lower_schema_ref(&program, file, &response, &mut diagnostics).unwrap();
    check_response_object(&program, &lowered, &response, "approval response", &mut diagnostics);
    assert_eq!(codes(&diagnostics), vec![Code::TENX0404]);
}

#[test]
fn named_schemas_from_another_file_keep_that_file() {
    let source = "import std.approval.yes_no\n";
    let (program, file, _) = program(source);
    let response = crate::ast::SchemaRef::Named(crate::ast::Ident {
        name: "yes_no".into(),
        span: Span::new(20, 26),
    });
    let mut diagnostics = Vec::new();
    let lowered = lower_schema_ref(&program, file, &response, &mut diagnostics).unwrap();
    assert_eq!(lowered.origin_of("").file, file);
    let inner = lowered.origin_of("/properties/approved/type");
    assert_ne!(inner.file, file);
    assert_eq!(inner.schema.as_deref(), Some("yes_no"));
    check_lowered(&lowered, SchemaSite::Schema, &mut diagnostics);
    check_response_object(&program, &lowered, &response, "approval response", &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
}
