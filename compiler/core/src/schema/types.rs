//! Typed fields → JSON Schema: `string(…)`, `int(…)`, `number(…)`, `bool`, `enum(…)`,
//! `list<T>(…)`, `object`, `any`, a schema name, or an inline map. Checks each constraint
//! argument (`TENX0406`: unknown, given twice, mistyped, out of range, contradictory) and leaves
//! a bad one out of the schema, so it is reported once.

use super::lower::{Lowerer, origin};
use super::{Lowered, Origin, pointer};
use crate::ast::{Arg, Expr, ExprKind, Ident, TypeExpr};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// The built-in type names.
pub(crate) const BUILTIN_TYPES: &[&str] = &["string", "int", "number", "bool", "enum", "list", "object", "any"];

/// The `format` values draft 2020-12 defines.
pub(crate) const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// What a constraint argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A whole number ≥ 0 (`min_length`).
    Count,
    /// A whole number (`int(min:)`).
    Whole,
    /// Any number.
    Number,
    /// A string (`pattern`).
    Text,
    /// One of [`FORMATS`].
    Format,
}

/// (argument, JSON Schema keyword, kind) for each type that takes constraints.
fn constraints(ty: &str) -> &'static [(&'static str, &'static str, Kind)] {
    match ty {
        "string" => &[
            ("min_length", "minLength", Kind::Count),
            ("max_length", "maxLength", Kind::Count),
            ("pattern", "pattern", Kind::Text),
            ("format", "format", Kind::Format),
        ],
        "int" => &[("min", "minimum", Kind::Whole), ("max", "maximum", Kind::Whole)],
        "number" => &[("min", "minimum", Kind::Number), ("max", "maximum", Kind::Number)],
        "list" => &[
            ("min_items", "minItems", Kind::Count),
            ("max_items", "maxItems", Kind::Count),
        ],
        _ => &[],
    }
}

/// Lower and upper bounds that must not cross.
const BOUNDS: &[(&str, &str)] = &[("min", "max"), ("min_length", "max_length"), ("min_items", "max_items")];

impl Lowerer<'_> {
    /// Lowers `ty`, written in `file`, to the value placed at `at` in `out`, recording spans.
    /// `None` when the type names nothing lowerable (an unknown name, already reported).
    pub(super) fn ty(
        &mut self,
        file: FileId,
        ty: &TypeExpr,
        at: &str,
        out: &mut Lowered,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Value> {
        let (name, generic, args, span) = match ty {
            TypeExpr::Schema(expr) => {
                return Some(self.inline_schema(expr, file, at, None, out, diagnostics));
            }
            TypeExpr::Named {
                name,
                generic,
                args,
                span,
            } => (name, generic, args, *span),
        };
        let type_name = name.name.as_str();
        if type_name.is_empty() {
            return None;
        }
        if !BUILTIN_TYPES.contains(&type_name) {
            self.program.schema(type_name)?;
            if let (Some(first), Some(last)) = (args.first(), args.last()) {
                let args_span = arg_span(first).to(arg_span(last));
                diagnostics.push(
                    invalid(file, args_span, format!("schema `{type_name}` takes no arguments"))
                        .label("not allowed on a schema name")
                        .help("constraints belong to typed fields such as `int(min: 1)`; put them in the schema's declaration"),
                );
            }
            if let Some(inner) = generic {
                diagnostics.push(
                    invalid(
                        file,
                        inner.span(),
                        format!("schema `{type_name}` takes no type parameter"),
                    )
                    .label("not allowed on a schema name")
                    .help("only `list<…>` takes a type parameter"),
                );
            }
            return Some(self.inline_named(type_name, file, name.span, at, out));
        }
        out.set(at.to_string(), origin(file, span));
        let mut schema = Map::new();
        let json_type = match type_name {
            "string" => Some("string"),
            "int" => Some("integer"),
            "number" => Some("number"),
            "bool" => Some("boolean"),
            "list" => Some("array"),
            "object" => Some("object"),
            _ => None,
        };
        if let Some(json_type) = json_type {
            schema.insert("type".into(), Value::String(json_type.into()));
            out.set(pointer::child(at, "type"), origin(file, name.span));
        }
        match (type_name, generic) {
            ("list", Some(inner)) => {
                let here = pointer::child(at, "items");
                let items = self.ty(file, inner, &here, out, diagnostics).unwrap_or_else(|| {
                    out.set(here.clone(), origin(file, inner.span()));
                    Value::Object(Map::new())
                });
                schema.insert("items".into(), items);
            }
            ("list", None) => diagnostics.push(
                invalid(file, name.span, "`list` needs an element type")
                    .label("a list of what?")
                    .help("write the element type in angle brackets: `list<string>`, `list<object>`"),
            ),
            (_, Some(inner)) => diagnostics.push(
                invalid(file, inner.span(), format!("`{type_name}` takes no type parameter"))
                    .label("not allowed here")
                    .help("only `list<…>` takes a type parameter"),
            ),
            (_, None) => {}
        }
        if type_name == "enum" {
            enum_values(file, name, args, span, at, &mut schema, out, diagnostics);
        } else {
            constraint_args(file, name, args, at, &mut schema, out, diagnostics);
        }
        Some(Value::Object(schema))
    }
}

fn invalid(file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::TENX0406, message, file, span)
}

fn arg_span(arg: &Arg) -> Span {
    arg.name.as_ref().map_or(arg.value.span, |n| n.span.to(arg.value.span))
}

fn list_names(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site; the arguments are the lowering state"
)]
fn constraint_args(
    file: FileId,
    name: &Ident,
    args: &[Arg],
    at: &str,
    schema: &mut Map<String, Value>,
    out: &mut Lowered,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let ty = name.name.as_str();
    let allowed = constraints(ty);
    let allowed_names: Vec<&str> = allowed.iter().map(|(n, _, _)| *n).collect();
    let mut seen: BTreeMap<&str, (Span, Option<f64>, Span)> = BTreeMap::new();
    for arg in args {
        let Some(arg_name) = &arg.name else {
            let help = if allowed.is_empty() {
                format!("`{ty}` takes no arguments")
            } else {
                format!(
                    "name the constraint: `{ty}({}: …)`",
                    allowed_names.first().copied().unwrap_or("min")
                )
            };
            diagnostics.push(
                invalid(
                    file,
                    arg.value.span,
                    format!("`{ty}` takes named constraints, not values"),
                )
                .label("a value without a constraint name")
                .help(help),
            );
            continue;
        };
        let span = arg_span(arg);
        let Some(&(_, keyword, kind)) = allowed.iter().find(|(n, _, _)| *n == arg_name.name) else {
            diagnostics.push(unknown_constraint(file, ty, arg_name, &allowed_names, allowed));
            continue;
        };
        if let Some((first, _, _)) = seen.get(arg_name.name.as_str()) {
            diagnostics.push(
                invalid(file, span, format!("`{}` is given twice", arg_name.name))
                    .label("given again here")
                    .secondary(file, *first, "first given here")
                    .help("keep one of them"),
            );
            continue;
        }
        let Some(value) = constraint_value(file, ty, &arg_name.name, kind, &arg.value, diagnostics) else {
            seen.insert(&arg_name.name, (span, None, arg.value.span));
            continue;
        };
        seen.insert(&arg_name.name, (span, value.as_f64(), arg.value.span));
        out.set(
            pointer::child(at, keyword),
            Origin {
                file,
                span: arg.value.span,
                key: Some(arg_name.span),
                schema: None,
            },
        );
        schema.insert(keyword.into(), value);
    }
    for (low, high) in BOUNDS {
        let (Some((low_span, Some(lo), _)), Some((high_span, Some(hi), _))) = (seen.get(low), seen.get(high)) else {
            continue;
        };
        if lo > hi {
            diagnostics.push(
                invalid(file, *low_span, format!("`{low}` is greater than `{high}`"))
                    .label(format!("`{low}` is {lo}"))
                    .secondary(file, *high_span, format!("`{high}` is {hi}"))
                    .help(format!("no value can satisfy both; `{low}` must be at most `{high}`")),
            );
        }
    }
}

fn unknown_constraint(
    file: FileId,
    ty: &str,
    arg_name: &Ident,
    allowed_names: &[&str],
    allowed: &[(&str, &str, Kind)],
) -> Diagnostic {
    let d = invalid(
        file,
        arg_name.span,
        format!("`{ty}` has no constraint `{}`", arg_name.name),
    )
    .label(format!("not a constraint of `{ty}`"));
    if allowed.is_empty() {
        return d.help(format!("`{ty}` takes no constraints"));
    }
    let by_keyword = allowed.iter().find(|(_, k, _)| *k == arg_name.name).map(|(n, _, _)| *n);
    let suggestion = by_keyword.or_else(|| crate::did_you_mean(&arg_name.name, allowed_names.iter()));
    match suggestion {
        Some(s) => d.help(format!("did you mean `{s}`?")),
        None => d.help(format!("`{ty}` takes {}", list_names(allowed_names))),
    }
}

/// The JSON value of one constraint argument, or `None` (reported) when it is mistyped.
fn constraint_value(
    file: FileId,
    ty: &str,
    name: &str,
    kind: Kind,
    value: &Expr,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let mut report = |message: String, label: &str| {
        diagnostics.push(invalid(file, value.span, message).label(label.to_string()));
    };
    match (kind, &value.kind) {
        (Kind::Count, ExprKind::Number(n)) => match n.as_u64() {
            Some(count) => Some(Value::from(count)),
            None if n.as_f64().is_some_and(|f| f < 0.0) => {
                report(format!("`{name}` must not be negative"), "a negative count");
                None
            }
            None => {
                report(format!("`{name}` must be a whole number"), "not a whole number");
                None
            }
        },
        (Kind::Whole, ExprKind::Number(n)) => {
            if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) {
                report(format!("`{name}` of `{ty}` must be a whole number"), "has a fraction");
                None
            } else {
                Some(Value::Number(n.clone()))
            }
        }
        (Kind::Number, ExprKind::Number(n)) => Some(Value::Number(n.clone())),
        (Kind::Text, ExprKind::Str(s) | ExprKind::Text(s)) => Some(Value::String(s.clone())),
        (Kind::Format, ExprKind::Str(s) | ExprKind::Text(s)) => {
            if FORMATS.contains(&s.as_str()) {
                return Some(Value::String(s.clone()));
            }
            let help = crate::did_you_mean(s, FORMATS.iter())
                .map(|f| format!("did you mean `{f}`?"))
                .unwrap_or_else(|| format!("the formats are {}", list_names(FORMATS)));
            diagnostics.push(
                invalid(file, value.span, format!("unknown format `{s}`"))
                    .label("not a JSON Schema format")
                    .help(help),
            );
            None
        }
        (kind, _) => {
            let wanted = match kind {
                Kind::Count | Kind::Whole => "a whole number",
                Kind::Number => "a number",
                Kind::Text | Kind::Format => "a string",
            };
            report(
                format!("`{name}` must be {wanted}, not {}", value.describe()),
                &format!("expected {wanted}"),
            );
            None
        }
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site; the arguments are the lowering state"
)]
fn enum_values(
    file: FileId,
    name: &Ident,
    args: &[Arg],
    span: Span,
    at: &str,
    schema: &mut Map<String, Value>,
    out: &mut Lowered,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if args.is_empty() {
        diagnostics.push(
            invalid(file, span, "`enum` needs at least one value")
                .label("no value can match")
                .help("list the values: `enum(\"low\", \"high\")`"),
        );
    }
    let list_at = pointer::child(at, "enum");
    out.set(list_at.clone(), origin(file, span));
    let mut values: Vec<(Value, Span)> = Vec::new();
    for arg in args {
        if let Some(arg_name) = &arg.name {
            diagnostics.push(
                invalid(
                    file,
                    arg_name.span,
                    format!("`enum` takes values, not the constraint `{}`", arg_name.name),
                )
                .label("a named argument")
                .help("list the values without names: `enum(\"low\", \"high\")`"),
            );
            continue;
        }
        let value = match &arg.value.kind {
            ExprKind::Str(s) | ExprKind::Text(s) => Value::String(s.clone()),
            ExprKind::Number(n) => Value::Number(n.clone()),
            _ => {
                diagnostics.push(
                    invalid(
                        file,
                        arg.value.span,
                        format!("`enum` values must be strings or numbers, not {}", arg.value.describe()),
                    )
                    .label("not a string or number"),
                );
                continue;
            }
        };
        if let Some((_, first)) = values.iter().find(|(v, _)| same_value(v, &value)) {
            diagnostics.push(
                invalid(file, arg.value.span, format!("`{value}` is listed twice in `enum`"))
                    .label("listed again here")
                    .secondary(file, *first, "first listed here")
                    .help("remove one of them"),
            );
            continue;
        }
        out.set(pointer::index(&list_at, values.len()), origin(file, arg.value.span));
        values.push((value, arg.value.span));
    }
    let all = |f: fn(&Value) -> bool| !values.is_empty() && values.iter().all(|(v, _)| f(v));
    let json_type = if all(Value::is_string) {
        Some("string")
    } else if all(|v| v.as_number().is_some_and(is_whole)) {
        Some("integer")
    } else if all(Value::is_number) {
        Some("number")
    } else {
        None
    };
    if let Some(json_type) = json_type {
        schema.insert("type".into(), Value::String(json_type.into()));
        out.set(pointer::child(at, "type"), origin(file, name.span));
    }
    schema.insert(
        "enum".into(),
        Value::Array(values.into_iter().map(|(v, _)| v).collect()),
    );
}

fn is_whole(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Equality as JSON Schema sees it: `1` and `1.0` are the same number.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
