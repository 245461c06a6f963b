//! Checks that every name used refers to a declaration of the right kind: models, tools, tags,
//! agents, schemas, validators, interrupts, and the named types of parameters and state.

use super::{DeclKind, Program};
use crate::ast::{Param, SchemaRef, ToolSelector, TypeExpr};
use tenx_diagnostics::{Code, Diagnostic, FileId};

/// The built-in type names of parameters and state fields.
pub const BUILTIN_TYPES: &[&str] = &["string", "int", "number", "bool", "enum", "list", "object", "any"];

pub(crate) fn check(program: &Program, diagnostics: &mut Vec<Diagnostic>) {
    for schema in &program.schemas {
        check_type(program, schema.file, &schema.decl.ty, diagnostics);
    }
    for tool in &program.tools {
        let (file, t) = (tool.file, &tool.decl);
        for tag in &t.tags {
            program.expect(tag, file, &[DeclKind::Tag], diagnostics);
        }
        check_params(program, file, "parameter", t.params.iter().flatten(), diagnostics);
        if let Some(result) = &t.result {
            check_type(program, file, result, diagnostics);
        }
        if let Some(SchemaRef::Named(name)) = t.approval.as_ref().and_then(|a| a.response.as_ref()) {
            program.expect(name, file, &[DeclKind::Schema], diagnostics);
        }
    }
    for agent in &program.agents {
        let (file, a) = (agent.file, &agent.decl);
        if let Some(model) = &a.model {
            program.expect(model, file, &[DeclKind::Model], diagnostics);
        }
        for selector in &a.tools {
            match selector {
                ToolSelector::Named(tool) => {
                    program.expect(tool, file, &[DeclKind::Tool], diagnostics);
                }
                ToolSelector::Tagged { tags, .. } => {
                    for tag in tags {
                        program.expect(tag, file, &[DeclKind::Tag], diagnostics);
                    }
                }
            }
        }
        for target in &a.handoffs {
            program.expect(target, file, &[DeclKind::Agent], diagnostics);
        }
        for used in &a.agent_tools {
            program.expect(&used.agent, file, &[DeclKind::Agent], diagnostics);
            check_params(program, file, "parameter", used.params.iter().flatten(), diagnostics);
        }
        for payload in &a.payloads {
            check_params(program, file, "payload parameter", payload.params.iter(), diagnostics);
        }
        if let Some(SchemaRef::Named(name)) = &a.output {
            program.expect(name, file, &[DeclKind::Schema], diagnostics);
        }
        for use_ in &a.guard {
            program.expect(&use_.name, file, &[DeclKind::Validator], diagnostics);
        }
    }
    for validator in &program.validators {
        check_params(
            program,
            validator.file,
            "parameter",
            validator.decl.params.iter().flatten(),
            diagnostics,
        );
    }
    for interrupt in &program.interrupts {
        let (file, i) = (interrupt.file, &interrupt.decl);
        if let Some(SchemaRef::Named(name)) = &i.response {
            program.expect(name, file, &[DeclKind::Schema], diagnostics);
        }
        for tool in &i.approves {
            program.expect(tool, file, &[DeclKind::Tool], diagnostics);
        }
    }
    for graph in &program.graphs {
        let (file, g) = (graph.file, &graph.decl);
        for node in &g.nodes {
            // `END` in `nodes` is the graph check's to report (`TENX0325`), once.
            if node.name == crate::check::topology::END {
                continue;
            }
            program.expect(
                node,
                file,
                &[DeclKind::Agent, DeclKind::Tool, DeclKind::Interrupt, DeclKind::Graph],
                diagnostics,
            );
        }
        for use_ in &g.validate {
            program.expect(&use_.name, file, &[DeclKind::Validator], diagnostics);
        }
        check_params(program, file, "state field", g.state.iter(), diagnostics);
    }
}

fn check_params<'a>(
    program: &Program,
    file: FileId,
    what: &str,
    params: impl Iterator<Item = &'a Param>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut seen: Vec<&Param> = Vec::new();
    for param in params {
        if let Some(first) = seen.iter().find(|p| p.name.name == param.name.name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0111,
                    format!("the {what} `{}` is declared twice", param.name.name),
                    file,
                    param.name.span,
                )
                .label("declared again here")
                .secondary(file, first.name.span, "first declared here")
                .help("rename or remove one of them"),
            );
        } else {
            seen.push(param);
        }
        check_type(program, file, &param.ty, diagnostics);
    }
}

/// Checks the names inside a type: built-in types, or declared schemas.
pub(crate) fn check_type(program: &Program, file: FileId, ty: &TypeExpr, diagnostics: &mut Vec<Diagnostic>) {
    let TypeExpr::Named { name, generic, .. } = ty else {
        return;
    };
    if let Some(inner) = generic {
        check_type(program, file, inner, diagnostics);
    }
    if BUILTIN_TYPES.contains(&name.name.as_str()) {
        return;
    }
    match program.lookup(&name.name) {
        Some(symbol) if symbol.kind() == DeclKind::Schema => {}
        Some(_) => {
            program.expect(name, file, &[DeclKind::Schema], diagnostics);
        }
        None if program.is_broken(&name.name) => {}
        None => {
            let candidates = BUILTIN_TYPES.iter().copied().chain(program.names_of(DeclKind::Schema));
            let help = type_alias(&name.name)
                .map(|t| format!("did you mean `{t}`?"))
                .or_else(|| super::program::unknown_name_help(&name.name, &[DeclKind::Schema], candidates))
                .unwrap_or_else(|| "types are `string`, `int`, `number`, `bool`, `enum(…)`, `list<…>`, `object`, `any`, or a `schema` name".to_string());
            diagnostics.push(
                Diagnostic::new(Code::TENX0110, format!("unknown type `{}`", name.name), file, name.span)
                    .label("not a type")
                    .help(help),
            );
        }
    }
}

/// The tenx type for a type name other languages use (`integer` → `int`).
fn type_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "integer" | "i32" | "i64" | "u32" | "u64" | "usize" | "long" => "int",
        "float" | "double" | "f32" | "f64" | "decimal" | "num" => "number",
        "boolean" | "Boolean" => "bool",
        "str" | "String" | "text" => "string",
        "array" | "Vec" | "vec" => "list<…>",
        "dict" | "map" | "Map" | "json" | "record" => "object",
        _ => return None,
    })
}
