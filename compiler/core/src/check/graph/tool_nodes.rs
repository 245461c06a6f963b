//! Tool nodes: a tool used as a node runs without a model, with the state fields of the same
//! names as its arguments. A required parameter that no state field can fill, because the graph
//! declares no such field or declares it with a type the parameter never accepts, means the node
//! can never run (`TENX0322`). An optional parameter (`?` or a default) without a state field is
//! fine: the call leaves it out. A bound parameter (`bind`) needs no field of its name: the
//! runtime fills it from its source.

use super::GraphCheck;
use super::routes::{FieldType, field_type};
use crate::ast::{ExprKind, Param, ToolDecl};
use crate::resolve::Located;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let mut found = Vec::new();
    for node in &c.topology.nodes {
        let Some(tool) = node.decl.tool().and_then(|t| c.facts.program.tools.get(t)) else {
            continue;
        };
        for (name, span, param) in required_parameters(&tool.decl) {
            let Some(field) = c.state_field(name) else {
                found.push(missing(c, tool, node.span, name, span));
                continue;
            };
            let Some(param) = param else { continue };
            let (wanted, held) = (field_type(c, param), field_type(c, field));
            if never_fits(&held, &wanted) {
                found.push(mismatch(c, tool, node.span, param, field, &held, &wanted));
            }
        }
    }
    for d in found {
        c.report(d);
    }
}

/// The parameters a call must pass: (name, where it is declared, the parameter when written in
/// a parameter list). For a `parameters = { … }` schema, the names in its `required`.
fn required_parameters(tool: &ToolDecl) -> Vec<(&str, Span, Option<&Param>)> {
    // A bound parameter is filled from its binding, checked in `check/bound_args`.
    let bound = crate::check::bound_args::bound_names(tool);
    if let Some(params) = &tool.params {
        return params
            .iter()
            .filter(|p| !p.optional && p.default.is_none() && !bound.contains(&p.name.name.as_str()))
            .map(|p| (p.name.name.as_str(), p.name.span, Some(p)))
            .collect();
    }
    let Some(ExprKind::Map(entries)) = tool.parameters_schema.as_ref().map(|e| &e.kind) else {
        return Vec::new();
    };
    let Some(ExprKind::List(required)) = entries.iter().find(|e| e.key == "required").map(|e| &e.value.kind) else {
        return Vec::new();
    };
    required
        .iter()
        .filter_map(|r| r.as_str().map(|name| (name, r.span, None)))
        .filter(|(name, _, _)| !bound.contains(name))
        .collect()
}

/// Whether a value of type `held` (a state field, or a tool's result) can never be a valid value
/// of type `wanted` (a parameter, or the state field a result is written to): their
/// kinds are disjoint (a string is never a number). An enum of strings is a string; `int` and
/// `number` are both numbers; anything unknown fits.
pub(super) fn never_fits(held: &FieldType, wanted: &FieldType) -> bool {
    fn kind(t: &FieldType) -> Option<&'static str> {
        match t {
            FieldType::String => Some("string"),
            FieldType::Enum(values) if values.iter().all(serde_json::Value::is_string) => Some("string"),
            FieldType::Number => Some("number"),
            FieldType::Bool => Some("bool"),
            FieldType::List => Some("list"),
            FieldType::Object => Some("object"),
            FieldType::Enum(_) | FieldType::Any => None,
        }
    }
    matches!((kind(held), kind(wanted)), (Some(a), Some(b)) if a != b)
}

fn missing(c: &GraphCheck<'_, '_>, tool: &Located<ToolDecl>, node: Span, name: &str, span: Span) -> Diagnostic {
    let graph = &c.g().name.name;
    let tool_name = &tool.decl.name.name;
    Diagnostic::new(
        Code::TENX0322,
        format!("tool node `{tool_name}` needs the argument `{name}`, but graph `{graph}` has no state field `{name}`"),
        c.file,
        node,
    )
    .label("this node can never run")
    .secondary(tool.file, span, format!("`{name}` is a required parameter of `{tool_name}`"))
    .help(format!(
        "declare `{name}` in the `state` of graph `{graph}` (with the parameter's type), or give the parameter a default or mark it optional with `?`"
    ))
    .note("a tool node runs without a model: its arguments are the state fields with the names of its parameters")
}

fn mismatch(
    c: &GraphCheck<'_, '_>,
    tool: &Located<ToolDecl>,
    node: Span,
    param: &Param,
    field: &Param,
    held: &FieldType,
    wanted: &FieldType,
) -> Diagnostic {
    let graph = &c.g().name.name;
    let tool_name = &tool.decl.name.name;
    let name = &param.name.name;
    Diagnostic::new(
        Code::TENX0322,
        format!(
            "tool node `{tool_name}` needs `{name}` as {}, but the state field `{name}` of graph `{graph}` holds {}",
            wanted.describe(),
            held.describe()
        ),
        c.file,
        node,
    )
    .label("this node can never run")
    .secondary(
        tool.file,
        param.ty.span(),
        format!("`{name}` takes {}", wanted.describe()),
    )
    .secondary(
        c.file,
        field.ty.span(),
        format!("the state field holds {}", held.describe()),
    )
    .help(format!("give the state field `{name}` the parameter's type"))
    .note("a tool node runs without a model: its arguments are the state fields with the names of its parameters")
}
