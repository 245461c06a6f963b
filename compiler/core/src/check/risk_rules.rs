//! Risk rules typed against the tool's parameters, as route conditions are against the state: a
//! condition reads a parameter the tool has (`TENX0625`) and compares it with a value its type
//! can hold (`TENX0626`). Lowering of the rules into the artifact's `Tool.risk_rules` is here too.

use super::Facts;
use super::graph::routes::{FieldType, equality_problem, json_type, type_in};
use crate::ast::{self, CompareOp, Condition, ExprKind, ToolDecl};
use crate::resolve::Program;
use serde_json::Value;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for tool in facts.program.tools.iter() {
        if tool.decl.risk_rules.is_empty() {
            continue;
        }
        let Some(params) = parameter_types(facts.program, &tool.decl) else {
            continue;
        };
        let mut check = RuleCheck {
            tool: &tool.decl,
            file: tool.file,
            params: &params,
            diagnostics: &mut *diagnostics,
        };
        for rule in &tool.decl.risk_rules {
            check.condition(&rule.condition);
        }
    }
}

/// The tool's top-level parameters and their types (with where each is declared, for a
/// parameter list); `None` when they cannot be known (a named schema that is no inline map).
fn parameter_types(program: &Program, decl: &ToolDecl) -> Option<BTreeMap<String, (FieldType, Option<Span>)>> {
    if let Some(params) = &decl.params {
        return Some(
            params
                .iter()
                .map(|p| (p.name.name.clone(), (type_in(program, &p.ty, 0), Some(p.name.span))))
                .collect(),
        );
    }
    let schema = match &decl.parameters_schema.as_ref()?.kind {
        ExprKind::Map(_) => crate::schema::inline_json(program, decl.parameters_schema.as_ref()?)?,
        ExprKind::Path(path) => match &program.schema(&path.last()?.name)?.decl.ty {
            ast::TypeExpr::Schema(map) => crate::schema::inline_json(program, map)?,
            ast::TypeExpr::Named { .. } => return None,
        },
        _ => return None,
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    Some(
        properties
            .into_iter()
            .flatten()
            .map(|(name, schema)| (name.clone(), (json_type(schema), None)))
            .collect(),
    )
}

struct RuleCheck<'a> {
    tool: &'a ToolDecl,
    file: FileId,
    params: &'a BTreeMap<String, (FieldType, Option<Span>)>,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl RuleCheck<'_> {
    fn condition(&mut self, condition: &Condition) {
        // Iterative walk: conditions can be deeply nested.
        let mut stack = vec![condition];
        while let Some(cond) = stack.pop() {
            match cond {
                Condition::Or(parts) | Condition::And(parts) => stack.extend(parts.iter()),
                Condition::Not(inner) => stack.push(inner),
                Condition::Compare { field, op, span } => {
                    let Some(first) = field.first() else { continue };
                    let Some((ty, declared)) = self.params.get(&first.name).cloned() else {
                        self.unknown(&first.name, first.span);
                        continue;
                    };
                    let ty = if field.len() > 1 { FieldType::Any } else { ty };
                    let problem = match op {
                        None if !matches!(ty, FieldType::Bool | FieldType::Any) => {
                            Some((format!("`{}` is {}, not a boolean", first.name, ty.describe()), *span))
                        }
                        None => None,
                        Some((op, op_span, value)) => comparison(&first.name, &ty, *op, *op_span, value),
                    };
                    if let Some((message, at)) = problem {
                        let mut d = Diagnostic::new(Code::TENX0626, message, self.file, at)
                            .label("this rule can never match a call");
                        if let Some(declared) = declared {
                            d = d.secondary(
                                self.file,
                                declared,
                                format!("`{}` is declared here as {}", first.name, ty.describe()),
                            );
                        }
                        self.diagnostics.push(d);
                    }
                }
            }
        }
    }

    fn unknown(&mut self, name: &str, span: Span) {
        let names: Vec<&String> = self.params.keys().collect();
        let help = crate::did_you_mean(name, names.iter().map(|n| n.as_str()))
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| {
                if names.is_empty() {
                    format!("tool `{}` has no parameters", self.tool.name.name)
                } else {
                    let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                    format!("tool `{}` has the parameters {}", self.tool.name.name, list.join(", "))
                }
            });
        let d = Diagnostic::new(
            Code::TENX0625,
            format!("tool `{}` has no parameter `{name}`", self.tool.name.name),
            self.file,
            span,
        )
        .label("a risk rule reads the call's arguments")
        .help(help);
        self.diagnostics.push(d);
    }
}

/// Why `field op value` can never hold, with where to point.
fn comparison(field: &str, ty: &FieldType, op: CompareOp, op_span: Span, value: &ast::Expr) -> Option<(String, Span)> {
    match op {
        CompareOp::In => {
            let ExprKind::List(items) = &value.kind else {
                return Some((format!("`in` needs a list, found {}", value.describe()), value.span));
            };
            items
                .iter()
                .find_map(|item| equality_problem(field, ty, item).map(|p| (p.message, item.span)))
        }
        CompareOp::Eq | CompareOp::Ne => equality_problem(field, ty, value).map(|p| (p.message, value.span)),
        CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge => {
            if !matches!(ty, FieldType::Number | FieldType::Any) {
                Some((
                    format!("`{}` orders numbers, but `{field}` is {}", op.as_str(), ty.describe()),
                    op_span,
                ))
            } else if !matches!(value.kind, ExprKind::Number(_)) {
                Some((
                    format!("`{field}` is compared with {}, not a number", value.describe()),
                    value.span,
                ))
            } else {
                None
            }
        }
    }
}
