//! Values written in the source (inline schema maps, defaults) as JSON, recording the span of
//! every JSON pointer. A name or call inside a map is not JSON: it is reported and marked
//! invalid; a key written twice in one map is reported too.

use super::{Lowered, Origin, pointer};
use crate::ast::{Expr, ExprKind};
use crate::resolve::Program;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// What a value is, for the wording and code of its diagnostics.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Context<'p> {
    /// An inline JSON Schema (`TENX0401`), with the program whose schema names it may not use
    /// as data (`TENX0421`).
    Schema(Option<&'p Program>),
    /// A parameter's default (`TENX0403`).
    Default,
}

/// Converts `expr`, written in `file`, to JSON placed at `at` in `out`, recording spans.
/// `key` is the span of the map key or argument name that wrote it.
pub(crate) fn to_json(
    expr: &Expr,
    file: FileId,
    at: &str,
    key: Option<Span>,
    context: Context<'_>,
    out: &mut Lowered,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    out.set(
        at.to_string(),
        Origin {
            file,
            span: expr.span,
            key,
            schema: None,
        },
    );
    match &expr.kind {
        ExprKind::Str(s) | ExprKind::Text(s) => Value::String(s.clone()),
        ExprKind::Number(n) => Value::Number(n.clone()),
        ExprKind::Duration(ms) => Value::from(*ms),
        ExprKind::Bool(b) => Value::Bool(*b),
        ExprKind::Null => Value::Null,
        ExprKind::List(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_json(item, file, &pointer::index(at, i), None, context, out, diagnostics))
                .collect(),
        ),
        ExprKind::Map(entries) => {
            let mut map = Map::new();
            let mut first: BTreeMap<&str, Span> = BTreeMap::new();
            for entry in entries {
                if let Some(earlier) = first.get(entry.key.as_str()) {
                    duplicate_key(&entry.key, file, entry.key_span, *earlier, context, diagnostics);
                    continue;
                }
                first.insert(&entry.key, entry.key_span);
                let here = pointer::child(at, &entry.key);
                let value = to_json(
                    &entry.value,
                    file,
                    &here,
                    Some(entry.key_span),
                    context,
                    out,
                    diagnostics,
                );
                map.insert(entry.key.clone(), value);
            }
            Value::Object(map)
        }
        ExprKind::Path(_) | ExprKind::Call { .. } | ExprKind::Join(_) => {
            match schema_as_data(expr, context) {
                Some(decl) => diagnostics.push(data_not_schema(expr, decl, file, at)),
                None => not_data(expr, file, context, diagnostics),
            }
            out.invalid.insert(at.to_string());
            match expr.as_ident() {
                Some(name) => Value::String(name.name.clone()),
                None => Value::Null,
            }
        }
    }
}

fn code(context: Context<'_>) -> Code {
    match context {
        Context::Schema(_) => Code::TENX0401,
        Context::Default => Code::TENX0403,
    }
}

pub(super) fn duplicate_key(
    key: &str,
    file: FileId,
    span: Span,
    first: Span,
    context: Context<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    diagnostics.push(
        Diagnostic::new(
            code(context),
            format!("the key `{key}` is written twice in one map"),
            file,
            span,
        )
        .label("written again here")
        .secondary(file, first, "first written here")
        .help("JSON object keys must be unique; keep one of them"),
    );
}

fn not_data(expr: &Expr, file: FileId, context: Context<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let place = match context {
        Context::Schema(_) => "an inline JSON Schema",
        Context::Default => "a default",
    };
    let (message, label, help) = match &expr.kind {
        ExprKind::Path(path) => {
            let text = path.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".");
            (
                format!("`{text}` is a name, not a JSON value"),
                "not JSON".to_string(),
                format!("{place} holds JSON values only; write the string `\"{text}\"`"),
            )
        }
        ExprKind::Call { callee, .. } => {
            let text = callee.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".");
            let help = match context {
                Context::Schema(_) => "a typed field stands for a schema only where a schema goes (a property, `items`, `anyOf`, …); here write JSON".to_string(),
                Context::Default => "write a string, number, boolean, `null`, list or map".to_string(),
            };
            (
                format!("the call `{text}(…)` is not a JSON value"),
                "not JSON".to_string(),
                help,
            )
        }
        _ => (
            "a `+` join is not a JSON value".to_string(),
            "not JSON".to_string(),
            format!("{place} holds strings, numbers, booleans, `null`, lists and maps"),
        ),
    };
    diagnostics.push(
        Diagnostic::new(code(context), message, file, expr.span)
            .label(label)
            .help(help),
    );
}

/// The schema a name or call written where an inline schema holds JSON data names, when it
/// names one (`TENX0421`).
fn schema_as_data<'p>(
    expr: &Expr,
    context: Context<'p>,
) -> Option<&'p crate::resolve::Located<crate::ast::SchemaDecl>> {
    let Context::Schema(Some(program)) = context else {
        return None;
    };
    let name = match &expr.kind {
        ExprKind::Path(path) => path.as_slice(),
        ExprKind::Call { callee, .. } => callee.as_slice(),
        _ => return None,
    };
    let [name] = name else { return None };
    program.schema(&name.name)
}

/// `TENX0421`: a schema name where an inline schema holds JSON data (at `at`).
fn data_not_schema(
    expr: &Expr,
    decl: &crate::resolve::Located<crate::ast::SchemaDecl>,
    file: FileId,
    at: &str,
) -> Diagnostic {
    let name = &decl.decl.name.name;
    // The keyword whose value holds the data: `enum` for `/enum/0`.
    let mut here = at;
    let keyword = loop {
        match pointer::last(here) {
            Some(token) if token.parse::<usize>().is_err() => break Some(token),
            Some(_) => match pointer::parent(here) {
                Some(up) => here = up,
                None => break None,
            },
            None => break None,
        }
    };
    let place = keyword.map_or_else(|| "this value".to_string(), |k| format!("`{k}`"));
    Diagnostic::new(
        Code::TENX0421,
        format!("the schema `{name}` is used where the inline schema holds JSON data"),
        file,
        expr.span,
    )
    .label(format!("{place} holds JSON data, not a schema"))
    .secondary(decl.file, decl.decl.name.span, format!("`{name}` is declared here"))
    .help(format!(
        "a schema name stands for a schema only where a schema goes (a property, `items`, `anyOf`, …); here write the JSON value itself, such as the string `\"{name}\"`"
    ))
}
