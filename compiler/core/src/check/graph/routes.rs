//! Conditional routes: a fallback on every route, and last; labels that their `by` field can
//! hold and that have arms; conditions over declared state fields with matching types.

use super::{GraphCheck, is_else};
use crate::ast::{ArmKind, CompareOp, Condition, Expr, ExprKind, Param, Route, TypeExpr};
use serde_json::Value;
use tenx_diagnostics::{Code, Diagnostic, Span};

/// The type of a state field, as far as routes care.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldType {
    String,
    Number,
    Bool,
    Enum(Vec<Value>),
    List,
    Object,
    Any,
}

impl FieldType {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            FieldType::String => "a string",
            FieldType::Number => "a number",
            FieldType::Bool => "a boolean",
            FieldType::Enum(_) => "an enum",
            FieldType::List => "a list",
            FieldType::Object => "an object",
            FieldType::Any => "any value",
        }
    }
}

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let routes = c.g().routes.clone();
    for route in &routes {
        check_route(c, route);
    }
}

fn check_route(c: &mut GraphCheck<'_, '_>, route: &Route) {
    let file = c.file;
    if route.from.name == super::END {
        let d = Diagnostic::new(Code::TENX0314, "a route cannot leave `END`", file, route.from.span)
            .label("nothing runs after `END`")
            .help("start the route at the node whose result decides where to go");
        c.report(d);
    } else {
        c.check_node_ref(&route.from, &format!("the route from `{}`", route.from.name));
    }
    for arm in &route.arms {
        if arm.target.name != super::END {
            c.check_node_ref(&arm.target, &format!("an arm of the route from `{}`", route.from.name));
        }
    }
    let elses: Vec<Span> = route.arms.iter().filter(|a| is_else(&a.kind)).map(|a| a.span).collect();
    match elses.as_slice() {
        [] => {
            let d = Diagnostic::new(
                Code::TENX0307,
                format!("the route from `{}` has no `else` arm", route.from.name),
                file,
                route.span,
            )
            .label("no fallback")
            .help("add `else -> <node>` as the last arm; it runs when no other arm matches")
            .note("without a fallback, a value no arm expects would leave the run with nowhere to go");
            c.report(d);
        }
        [_] => {}
        [first, rest @ ..] => {
            for extra in rest {
                let d = Diagnostic::new(
                    Code::TENX0324,
                    format!("the route from `{}` has two `else` arms", route.from.name),
                    file,
                    *extra,
                )
                .label("second `else`")
                .secondary(file, *first, "first `else`")
                .help("keep one `else` arm, last");
                c.report(d);
            }
        }
    }

    if let Some(first_else) = route.arms.iter().position(|a| is_else(&a.kind)) {
        let else_span = route.arms.get(first_else).map_or(route.span, |a| a.span);
        for arm in route.arms.iter().skip(first_else + 1).filter(|a| !is_else(&a.kind)) {
            let d = Diagnostic::new(
                Code::TENX0317,
                format!(
                    "this arm of the route from `{}` comes after `else` and can never be taken",
                    route.from.name
                ),
                file,
                arm.span,
            )
            .label("never taken")
            .secondary(file, else_span, "`else` matches every state first")
            .help("move this arm above `else`; arms are tried in order and `else` must be last");
            c.report(d);
        }
    }

    let labels = labels_of(c, route);
    let mut handled: Vec<(String, Span)> = Vec::new();
    // Labels suggested for a label that is never produced: their missing arm is the typo's, and
    // is not reported again as `TENX0309`.
    let mut suggested: Vec<String> = Vec::new();
    for arm in &route.arms {
        match &arm.kind {
            ArmKind::Label(label, span) => {
                if let Some((_, first)) = handled.iter().find(|(l, _)| l == label) {
                    let d = Diagnostic::new(Code::TENX0324, format!("the label `{label}` has two arms"), file, *span)
                        .label("handled again here")
                        .secondary(file, *first, "first handled here")
                        .help("only the first matching arm runs; remove one");
                    c.report(d);
                    continue;
                }
                handled.push((label.clone(), *span));
                match (&route.by, &labels) {
                    (None, _) => {
                        let d = Diagnostic::new(
                            Code::TENX0308,
                            format!("nothing produces the label `{label}`"),
                            file,
                            *span,
                        )
                        .label("this route has no `by` field")
                        .help(format!(
                            "add `by FIELD` after `route {}`, naming an enum state field",
                            route.from.name
                        ));
                        c.report(d);
                    }
                    (Some(by), Some(values)) if !values.iter().any(|v| v.as_str() == Some(label)) => {
                        let names: Vec<String> = values.iter().filter_map(|v| v.as_str().map(str::to_string)).collect();
                        let suggestion = crate::did_you_mean(label, names.iter()).map(str::to_string);
                        let help = match &suggestion {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => format!("`{}` holds {}", by.name, quoted(&names)),
                        };
                        suggested.extend(suggestion);
                        let d = Diagnostic::new(
                            Code::TENX0308,
                            format!("`{}` never holds the label `{label}`", by.name),
                            file,
                            *span,
                        )
                        .label("never produced")
                        .maybe_help(Some(help));
                        c.report(d);
                    }
                    _ => {}
                }
            }
            ArmKind::When(condition) => check_condition(c, condition),
            ArmKind::Else => {}
        }
    }
    if let (Some(by), Some(values)) = (&route.by, &labels) {
        let has_label_arms = !handled.is_empty();
        let missing: Vec<String> = values
            .iter()
            .filter_map(Value::as_str)
            .filter(|v| !handled.iter().any(|(l, _)| l == v) && !suggested.iter().any(|s| s == v))
            .map(str::to_string)
            .collect();
        if has_label_arms && !missing.is_empty() && !else_loops_back(c, route) {
            let (it, goes) = if missing.len() == 1 {
                ("it", "goes")
            } else {
                ("them", "go")
            };
            let d = Diagnostic::new(
                Code::TENX0309,
                format!(
                    "`{}` can hold {}, but the route from `{}` has no arm for {it}",
                    by.name,
                    quoted(&missing),
                    route.from.name
                ),
                file,
                by.span,
            )
            .label(format!("{} {goes} to the `else` arm", quoted_with(&missing, " and ")))
            .help(format!(
                "add an arm for each label, e.g. `\"{}\" -> <node>`",
                missing.first().map_or("", String::as_str)
            ));
            c.report(d);
        }
    }
}

/// Whether the route's `else` arm leads back to the route's own node: the loop of
/// `"pass" -> END` + `else -> writer`, the port of `if score == "pass": break`. Its unhandled
/// labels go round the loop on purpose, so `TENX0309` stays quiet.
fn else_loops_back(c: &GraphCheck<'_, '_>, route: &Route) -> bool {
    let t = c.topology;
    let Some(from) = t.index.get(&route.from.name).copied() else {
        return false;
    };
    let Some(target) = route
        .arms
        .iter()
        .find(|a| matches!(a.kind, ArmKind::Else))
        .and_then(|a| t.index.get(&a.target.name).copied())
    else {
        return false;
    };
    t.reach(&[target], |_| false).get(from).is_some_and(Option::is_some)
}

fn quoted(names: &[String]) -> String {
    quoted_with(names, " or ")
}

/// `a`, `b` and `c` (or `or`): names in backticks, the last joined by `last`.
fn quoted_with(names: &[String], last: &str) -> String {
    let v: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match v.split_last() {
        None => String::new(),
        Some((one, [])) => one.clone(),
        Some((tail, init)) => format!("{}{last}{tail}", init.join(", ")),
    }
}

/// The labels the route's `by` field can hold; `None` when there is no usable `by` field
/// (already reported).
fn labels_of(c: &mut GraphCheck<'_, '_>, route: &Route) -> Option<Vec<Value>> {
    let by = route.by.clone()?;
    let Some(param) = c.state_field(&by.name).cloned() else {
        unknown_field(c, &by.name, by.span);
        return None;
    };
    match field_type(c, &param) {
        FieldType::Enum(values) => Some(values),
        other => {
            let d = Diagnostic::new(
                Code::TENX0315,
                format!(
                    "the route is decided by `{}`, which is {}, not an enum",
                    by.name,
                    other.describe()
                ),
                c.file,
                by.span,
            )
            .label("labels need an enum field")
            .secondary(
                c.file,
                param.name.span,
                format!("`{}` is declared here as {}", by.name, other.describe()),
            )
            .help(format!(
                "declare it as `{}: enum({})`, or use `when` arms",
                by.name,
                arm_labels(route)
            ));
            c.report(d);
            None
        }
    }
}

/// The route's labels as enum arguments, for a suggested declaration: `"a", "b"`.
fn arm_labels(route: &Route) -> String {
    let labels: Vec<String> = route
        .arms
        .iter()
        .filter_map(|a| match &a.kind {
            ArmKind::Label(label, _) => Some(Value::String(label.clone()).to_string()),
            _ => None,
        })
        .collect();
    if labels.is_empty() {
        "\"a\", \"b\"".to_string()
    } else {
        labels.join(", ")
    }
}

fn unknown_field(c: &mut GraphCheck<'_, '_>, name: &str, span: Span) {
    let fields: Vec<&str> = c.g().state.iter().map(|p| p.name.name.as_str()).collect();
    let help = crate::did_you_mean(name, fields.iter())
        .map(|s| format!("did you mean `{s}`?"))
        .unwrap_or_else(|| {
            if fields.is_empty() {
                format!("declare it: `state {{ {name}: string }}`")
            } else {
                format!(
                    "graph `{}` has the state fields {}",
                    c.g().name.name,
                    quoted(&fields.iter().map(|f| (*f).to_string()).collect::<Vec<_>>())
                )
            }
        });
    let d = Diagnostic::new(
        Code::TENX0313,
        format!("graph `{}` has no state field `{name}`", c.g().name.name),
        c.file,
        span,
    )
    .label("unknown state field")
    .help(help);
    c.report(d);
}

pub(super) fn field_type(c: &GraphCheck<'_, '_>, param: &Param) -> FieldType {
    type_of(c, &param.ty, 0)
}

pub(super) fn type_of(c: &GraphCheck<'_, '_>, ty: &TypeExpr, depth: usize) -> FieldType {
    type_in(c.facts.program, ty, depth)
}

/// The type of a declared field or parameter, looking named schemas up in `program`.
pub(crate) fn type_in(program: &crate::resolve::Program, ty: &TypeExpr, depth: usize) -> FieldType {
    match ty {
        TypeExpr::Schema(map) => crate::schema::inline_json(program, map).map_or(FieldType::Any, |v| json_type(&v)),
        TypeExpr::Named { name, args, .. } => match name.name.as_str() {
            "string" => FieldType::String,
            "int" | "number" => FieldType::Number,
            "bool" => FieldType::Bool,
            "enum" => FieldType::Enum(args.iter().filter_map(|a| a.value.to_json()).collect()),
            "list" => FieldType::List,
            "object" => FieldType::Object,
            other => match program.schema(other) {
                Some(schema) if depth < 32 => type_in(program, &schema.decl.ty, depth + 1),
                _ => FieldType::Any,
            },
        },
    }
}

pub(crate) fn json_type(schema: &Value) -> FieldType {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return FieldType::Enum(values.clone());
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => FieldType::String,
        Some("integer" | "number") => FieldType::Number,
        Some("boolean") => FieldType::Bool,
        Some("array") => FieldType::List,
        Some("object") => FieldType::Object,
        _ => FieldType::Any,
    }
}

fn check_condition(c: &mut GraphCheck<'_, '_>, condition: &Condition) {
    // Iterative walk: conditions can be deeply nested.
    let mut stack = vec![condition];
    while let Some(cond) = stack.pop() {
        match cond {
            Condition::Or(parts) | Condition::And(parts) => stack.extend(parts.iter()),
            Condition::Not(inner) => stack.push(inner),
            Condition::Compare { field, op, span } => {
                let Some(first) = field.first() else { continue };
                let Some(param) = c.state_field(&first.name).cloned() else {
                    unknown_field(c, &first.name, first.span);
                    continue;
                };
                let rest: Vec<(&str, Span)> = field.iter().skip(1).map(|i| (i.name.as_str(), i.span)).collect();
                if let Some(d) = crate::check::paths::unknown_segment(c.facts.program, (&param, c.file), &rest, c.file)
                {
                    c.report(d);
                    continue;
                }
                let ty = if field.len() > 1 {
                    FieldType::Any
                } else {
                    field_type(c, &param)
                };
                match op {
                    None => {
                        if !matches!(ty, FieldType::Bool | FieldType::Any) {
                            let d = Diagnostic::new(
                                Code::TENX0315,
                                format!("`{}` is {}, not a boolean", first.name, ty.describe()),
                                c.file,
                                *span,
                            )
                            .label("used as a condition on its own")
                            .secondary(
                                c.file,
                                param.name.span,
                                format!("`{}` is declared here as {}", first.name, ty.describe()),
                            )
                            .help(format!("compare it, e.g. `{} == …`", first.name));
                            c.report(d);
                        }
                    }
                    Some((op, op_span, value)) => check_comparison(c, &first.name, &ty, *op, *op_span, value, &param),
                }
            }
        }
    }
}

fn check_comparison(
    c: &mut GraphCheck<'_, '_>,
    field: &str,
    ty: &FieldType,
    op: CompareOp,
    op_span: Span,
    value: &Expr,
    param: &Param,
) {
    let mismatch = |c: &mut GraphCheck<'_, '_>, problem: Problem, span: Span| {
        let d = Diagnostic::new(Code::TENX0315, problem.message, c.file, span)
            .label(problem.label)
            .secondary(
                c.file,
                param.name.span,
                format!("`{field}` is declared here as {}", ty.describe()),
            )
            .maybe_help(problem.help);
        c.report(d);
    };
    let type_problem = |message: String| Problem {
        message,
        label: "does not match the field's type",
        help: None,
    };
    match op {
        CompareOp::In => {
            let ExprKind::List(items) = &value.kind else {
                let example = value
                    .to_json()
                    .map_or_else(|| "\"a\", \"b\"".to_string(), |v| v.to_string());
                let d = Diagnostic::new(
                    Code::TENX0315,
                    format!("`in` needs a list, found {}", value.describe()),
                    c.file,
                    value.span,
                )
                .label("not a list")
                .help(format!("write a list, `{field} in [{example}]`, or compare with `==`"));
                c.report(d);
                return;
            };
            for item in items {
                if let Some(problem) = equality_problem(field, ty, item) {
                    mismatch(c, problem, item.span);
                }
            }
        }
        CompareOp::Eq | CompareOp::Ne => {
            if let Some(problem) = equality_problem(field, ty, value) {
                mismatch(c, problem, value.span);
            }
        }
        CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge => {
            let numeric_field = matches!(ty, FieldType::Number | FieldType::Any);
            let numeric_value = matches!(value.kind, ExprKind::Number(_));
            if !numeric_field {
                mismatch(
                    c,
                    type_problem(format!(
                        "`{}` orders numbers, but `{field}` is {}",
                        op.as_str(),
                        ty.describe()
                    )),
                    op_span,
                );
            } else if !numeric_value {
                mismatch(
                    c,
                    type_problem(format!("`{field}` is compared with {}, not a number", value.describe())),
                    value.span,
                );
            }
        }
    }
}

/// Why a comparison can never hold: the message, the primary label and an optional help.
pub(crate) struct Problem {
    pub(crate) message: String,
    pub(crate) label: &'static str,
    pub(crate) help: Option<String>,
}

/// Why `field == value` can never hold, if it cannot.
pub(crate) fn equality_problem(field: &str, ty: &FieldType, value: &Expr) -> Option<Problem> {
    let json = value.to_json();
    if matches!(json, Some(Value::Null)) {
        return None;
    }
    let fits = match (ty, &value.kind) {
        (FieldType::Any, _) => true,
        (FieldType::String, ExprKind::Str(_)) => true,
        (FieldType::Number, ExprKind::Number(_)) => true,
        (FieldType::Bool, ExprKind::Bool(_)) => true,
        (FieldType::Enum(values), _) => {
            let json = json?;
            if values.contains(&json) {
                true
            } else {
                let names: Vec<String> = values
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect();
                let help = json
                    .as_str()
                    .and_then(|s| crate::did_you_mean(s, names.iter()))
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| format!("`{field}` holds {}", quoted(&names)));
                return Some(Problem {
                    message: format!("`{field}` never equals {}", render(value)),
                    label: "not a value the field can hold",
                    help: Some(help),
                });
            }
        }
        _ => false,
    };
    if fits {
        None
    } else {
        Some(Problem {
            message: format!(
                "`{field}` is {}, but is compared with {}",
                ty.describe(),
                value.describe()
            ),
            label: "does not match the field's type",
            help: None,
        })
    }
}

fn render(value: &Expr) -> String {
    value
        .to_json()
        .map_or_else(|| value.describe().to_string(), |v| format!("`{v}`"))
}
