//! Dotted paths into state fields (`budget.amount` in a route condition, `{customer.tier}` in a
//! template): every segment after the field must be a property its schema defines
//! (`TENX0372`, with "did you mean"). The field itself is checked by the route and template
//! checks (`TENX0313`, `TENX0501`); this module owns only the segments after it.
//!
//! The schema of a field is its type: an inline JSON Schema, or a named schema (followed, also
//! when it is inline JSON). A segment is refused when the schema it steps into is a scalar or a
//! list, or an object whose `properties` do not name it and that allows no other property
//! (neither `additionalProperties` nor `patternProperties` other than `false`). Where the schema
//! cannot be read that simply (`$ref`, `allOf`, `anyOf`, `oneOf`, an `object` without
//! `properties`), the rest of the path is accepted: nothing proves it wrong.

use crate::ast::{Param, TypeExpr};
use crate::resolve::Program;
use serde_json::{Value, json};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// How many named schemas are followed before giving up (a cycle is `TENX0408`).
const MAX_NAMED: usize = 32;

/// The first segment of `rest` (the path after the field `root`, with each segment's span)
/// that the field's schema does not define, as a diagnostic at `file`; `None` when the path is
/// fine or cannot be judged. `root_file` declares the field (the graph's file).
pub(crate) fn unknown_segment(
    program: &Program,
    (root, root_file): (&Param, FileId),
    rest: &[(&str, Span)],
    file: FileId,
) -> Option<Diagnostic> {
    let mut schema = type_schema(program, &root.ty)?;
    let mut walked = root.name.name.clone();
    for &(segment, span) in rest {
        if ["$ref", "allOf", "anyOf", "oneOf"]
            .iter()
            .any(|k| schema.get(k).is_some())
        {
            return None;
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(next) = properties.and_then(|p| p.get(segment)) {
            schema = next.clone();
            walked = format!("{walked}.{segment}");
            continue;
        }
        let kind = schema.get("type").and_then(Value::as_str);
        let scalar = matches!(
            kind,
            Some("string" | "integer" | "number" | "boolean" | "array" | "null")
        ) || schema.get("enum").is_some();
        let open = ["additionalProperties", "patternProperties"]
            .iter()
            .any(|k| schema.get(k).is_some_and(|v| *v != Value::Bool(false)));
        if !scalar && (properties.is_none() || open) {
            return None;
        }
        let d = Diagnostic::new(
            Code::TENX0372,
            format!("`{walked}` has no field `{segment}`"),
            file,
            span,
        )
        .label("not a property of its schema")
        .secondary(
            root_file,
            root.name.span,
            format!("`{}` is declared here", root.name.name),
        );
        let names: Vec<&str> = properties
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let help = if scalar {
            format!(
                "`{walked}` is {}, which has no fields",
                kind.map_or("an enum".to_owned(), |k| format!("a JSON `{k}`"))
            )
        } else if let Some(close) = crate::suggest::did_you_mean(segment, names.iter()) {
            format!("did you mean `{walked}.{close}`?")
        } else {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("the fields of `{walked}` are {}", list.join(", "))
        };
        return Some(d.help(help));
    }
    None
}

/// The JSON Schema a type stands for, as far as paths need it: inline maps as written, named
/// schemas followed, the built-in types as their JSON `type`.
fn type_schema(program: &Program, ty: &TypeExpr) -> Option<Value> {
    let mut ty = ty;
    for _ in 0..MAX_NAMED {
        match ty {
            TypeExpr::Schema(map) => return crate::schema::inline_json(program, map),
            TypeExpr::Named { name, .. } => {
                let builtin = match name.name.as_str() {
                    "string" => "string",
                    "int" => "integer",
                    "number" => "number",
                    "bool" => "boolean",
                    "list" => "array",
                    "enum" => return Some(json!({"enum": []})),
                    "object" => return None,
                    other => {
                        ty = &program.schema(other)?.decl.ty;
                        continue;
                    }
                };
                return Some(json!({ "type": builtin }));
            }
        }
    }
    None
}
