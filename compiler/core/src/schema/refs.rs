//! Types inside inline JSON Schemas: in a *schema position* of an inline map (the map itself, a
//! property's schema, `items`, each `prefixItems`/`anyOf`/`oneOf`/`allOf` entry,
//! `additionalProperties`, `not`, `if`/`then`/`else`, each `$defs` entry, …) a schema name
//! (`address`), a built-in type (`string`) or a typed field without a type parameter
//! (`string(max_length: 3)`, `enum("a", "b")`) may stand for a schema. It is lowered like the
//! same type outside a map and inlined, so the artifact holds plain JSON Schema.
//!
//! A name there that is no schema and no built-in type is `TENX0420`. A schema name where JSON
//! data belongs (in `enum`, `const`, `default`, `examples`, `required`, a keyword's value) is
//! `TENX0421`, reported by [`super::json`] as it converts the data. Cycles through references
//! are `TENX0408`'s ([`super::cycles`]), which sees them through [`map_uses`].

use super::json::{self, Context};
use super::keywords::{ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS};
use super::lower::{Lowerer, origin};
use super::types::BUILTIN_TYPES;
use super::{Lowered, pointer};
use crate::ast::{Expr, ExprKind, Ident, TypeExpr};
use crate::resolve::{DeclKind, Program};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// What a place of an inline schema holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// A schema: a map of keywords, or a type.
    Schema,
    /// A map whose values are schemas (`properties`, `$defs`, …).
    SchemaMap,
    /// A list whose items are schemas (`anyOf`, `prefixItems`, …).
    SchemaList,
}

/// What the value of `key`, written in a schema's map, holds; `None` for JSON data.
fn position_of(key: &str) -> Option<Position> {
    if ONE_SCHEMA.contains(&key) {
        Some(Position::Schema)
    } else if SCHEMA_MAPS.contains(&key) {
        Some(Position::SchemaMap)
    } else if SCHEMA_LISTS.contains(&key) {
        Some(Position::SchemaList)
    } else {
        None
    }
}

/// The places of `expr`, an inline schema, that hold schemas, with what each holds. Iterative.
fn schema_places(expr: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut stack = vec![(expr, Position::Schema)];
    while let Some((expr, position)) = stack.pop() {
        match (position, &expr.kind) {
            (Position::Schema, ExprKind::Map(entries)) => {
                out.push(expr);
                for entry in entries.iter().rev() {
                    if let Some(inner) = position_of(&entry.key) {
                        stack.push((&entry.value, inner));
                    }
                }
            }
            (Position::Schema, _) => out.push(expr),
            (Position::SchemaMap, ExprKind::Map(entries)) => {
                stack.extend(entries.iter().rev().map(|e| (&e.value, Position::Schema)));
            }
            (Position::SchemaList, ExprKind::List(items)) => {
                stack.extend(items.iter().rev().map(|i| (i, Position::Schema)));
            }
            _ => {}
        }
    }
    out
}

/// The type a name or call in a schema position stands for, when it is one:
/// `address`, `string`, `string(max_length: 3)`.
fn as_type(expr: &Expr) -> Option<TypeExpr> {
    let (callee, args) = match &expr.kind {
        ExprKind::Path(path) => (path, Vec::new()),
        ExprKind::Call { callee, args } => (callee, args.clone()),
        _ => return None,
    };
    let [name] = callee.as_slice() else { return None };
    Some(TypeExpr::Named {
        name: name.clone(),
        generic: None,
        args,
        span: expr.span,
    })
}

/// The names (not built-in types) that the schema positions of the inline schema `expr` use, in
/// source order: named schemas, or unknown names.
pub(super) fn map_uses(expr: &Expr) -> Vec<&Ident> {
    schema_places(expr)
        .into_iter()
        .filter_map(|place| match &place.kind {
            ExprKind::Path(path) => path.first().filter(|_| path.len() == 1),
            ExprKind::Call { callee, .. } => callee.first().filter(|_| callee.len() == 1),
            _ => None,
        })
        .filter(|name| !BUILTIN_TYPES.contains(&name.name.as_str()))
        .collect()
}

impl Lowerer<'_> {
    /// Lowers the inline schema `expr`, written in `file`, to the value at `at` of `out`:
    /// JSON as written, with each type in a schema position lowered and inlined. `key` is the
    /// span of the map key that wrote it.
    pub(super) fn inline_schema(
        &mut self,
        expr: &Expr,
        file: FileId,
        at: &str,
        key: Option<Span>,
        out: &mut Lowered,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Value {
        let context = Context::Schema(Some(self.program));
        let ExprKind::Map(entries) = &expr.kind else {
            if let Some(ty) = as_type(expr) {
                return self.type_in_map(expr, &ty, file, at, key, out, diagnostics);
            }
            return json::to_json(expr, file, at, key, context, out, diagnostics);
        };
        out.set(
            at.to_string(),
            super::Origin {
                key,
                ..origin(file, expr.span)
            },
        );
        let mut map = Map::new();
        let mut first: BTreeMap<&str, Span> = BTreeMap::new();
        for entry in entries {
            if let Some(earlier) = first.get(entry.key.as_str()) {
                json::duplicate_key(&entry.key, file, entry.key_span, *earlier, context, diagnostics);
                continue;
            }
            first.insert(&entry.key, entry.key_span);
            let here = pointer::child(at, &entry.key);
            let key = Some(entry.key_span);
            let value = match (position_of(&entry.key), &entry.value.kind) {
                (Some(Position::Schema), _) => self.inline_schema(&entry.value, file, &here, key, out, diagnostics),
                (Some(Position::SchemaMap), ExprKind::Map(inner)) => {
                    out.set(
                        here.clone(),
                        super::Origin {
                            key,
                            ..origin(file, entry.value.span)
                        },
                    );
                    let mut schemas = Map::new();
                    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
                    for sub in inner {
                        if let Some(earlier) = seen.get(sub.key.as_str()) {
                            json::duplicate_key(&sub.key, file, sub.key_span, *earlier, context, diagnostics);
                            continue;
                        }
                        seen.insert(&sub.key, sub.key_span);
                        let at = pointer::child(&here, &sub.key);
                        let value = self.inline_schema(&sub.value, file, &at, Some(sub.key_span), out, diagnostics);
                        schemas.insert(sub.key.clone(), value);
                    }
                    Value::Object(schemas)
                }
                (Some(Position::SchemaList), ExprKind::List(items)) => {
                    out.set(
                        here.clone(),
                        super::Origin {
                            key,
                            ..origin(file, entry.value.span)
                        },
                    );
                    let items = items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            self.inline_schema(item, file, &pointer::index(&here, i), None, out, diagnostics)
                        })
                        .collect();
                    Value::Array(items)
                }
                _ => json::to_json(&entry.value, file, &here, key, context, out, diagnostics),
            };
            map.insert(entry.key.clone(), value);
        }
        Value::Object(map)
    }

    /// A type written in a schema position: lowered and inlined, or `TENX0420` when its name is
    /// no schema and no built-in type.
    #[allow(clippy::too_many_arguments, reason = "the arguments are the lowering state")]
    fn type_in_map(
        &mut self,
        expr: &Expr,
        ty: &TypeExpr,
        file: FileId,
        at: &str,
        key: Option<Span>,
        out: &mut Lowered,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Value {
        let TypeExpr::Named { name, .. } = ty else {
            return Value::Object(Map::new());
        };
        let is_type = BUILTIN_TYPES.contains(&name.name.as_str()) || self.program.schema(&name.name).is_some();
        let lowered = if is_type {
            out.forget_under(at);
            self.ty(file, ty, at, out, diagnostics)
        } else {
            if !self.program.is_broken(&name.name) {
                diagnostics.push(unknown(self.program, name, file));
            }
            None
        };
        let Some(value) = lowered else {
            out.set(
                at.to_string(),
                super::Origin {
                    key,
                    ..origin(file, expr.span)
                },
            );
            out.invalid.insert(at.to_string());
            return Value::Object(Map::new());
        };
        if let Some(written) = out.spans.get_mut(at) {
            written.key = key;
        }
        value
    }
}

/// `TENX0420`: `name`, in a schema position, is no schema and no built-in type.
fn unknown(program: &Program, name: &Ident, file: FileId) -> Diagnostic {
    let text = &name.name;
    let d = match program.lookup(text) {
        Some(symbol) => Diagnostic::new(
            Code::TENX0420,
            format!("`{text}` is {}, not a schema", symbol.kind().with_article()),
            file,
            name.span,
        )
        .label("expected a schema here")
        .secondary(symbol.file, symbol.span, format!("`{text}` is declared here")),
        None => Diagnostic::new(
            Code::TENX0420,
            format!("unknown schema `{text}` in an inline JSON Schema"),
            file,
            name.span,
        )
        .label("no schema or type has this name"),
    };
    let candidates = BUILTIN_TYPES.iter().copied().chain(program.names_of(DeclKind::Schema));
    let help = crate::resolve::unknown_name_help(text, &[DeclKind::Schema], candidates).unwrap_or_else(|| {
        "name a `schema` or a type (`string`, `int(min: 1)`, …) here, or write the JSON Schema itself".to_string()
    });
    d.help(help)
}
