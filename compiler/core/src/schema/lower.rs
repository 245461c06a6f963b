//! [`Lowerer`]: lowers parameter lists, schema references and tool parameters, and keeps the
//! lowered value of every named schema it met, so each is lowered once.
//!
//! A named schema is lowered (with its diagnostics discarded: they belong to the check of its
//! declaration) after the named schemas it uses, in an iterative depth-first order, so a long
//! chain of schemas does not recurse. A schema that contains itself meets itself while it is
//! still being lowered; that use becomes `{}` and [`super::check_cycles`] reports it.

use super::json::{self, Context};
use super::types::BUILTIN_TYPES;
use super::{Lowered, Origin, keywords, pointer};
use crate::ast::{ExprKind, Param, SchemaRef, ToolDecl, TypeExpr};
use crate::resolve::{Located, Program};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Diagnostic, FileId, Span};

/// Lowers types and schemas of one program to JSON Schema, caching named schemas.
#[derive(Debug)]
pub struct Lowerer<'p> {
    pub(super) program: &'p Program,
    /// Named schemas already lowered, each with spans in its declaring file.
    named: BTreeMap<String, Lowered>,
    /// Named schemas being lowered (a use of one of these is a cycle).
    in_progress: BTreeSet<String>,
    /// Named schemas whose inlined value would nest deeper than [`MAX_SCHEMA_DEPTH`]: each is
    /// replaced by `{}` and reported once by the schema check.
    pub too_deep: BTreeSet<String>,
}

/// The deepest a lowered schema may nest (JSON objects and arrays). Named schemas are inlined
/// where they are used, so a chain of thousands of them would build a value deep enough to
/// exhaust the stack of anything that walks it; the chain is cut here instead. The number is
/// the artifact's: a schema is sealed and loaded as its own JSON text, which `serde_json` reads
/// at most 128 levels deep, so a schema nesting 128 levels or more could be checked but never
/// sealed. The check stage holds every schema the artifact gets (a named one here, a use that
/// wraps one in parameters or lists at the use) to this depth.
pub const MAX_SCHEMA_DEPTH: usize = 127;

/// How deeply a JSON value nests, computed without recursion.
pub fn nesting_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    deepest
}

impl<'p> Lowerer<'p> {
    /// A lowerer with an empty cache.
    pub fn new(program: &'p Program) -> Self {
        Lowerer {
            program,
            named: BTreeMap::new(),
            in_progress: BTreeSet::new(),
            too_deep: BTreeSet::new(),
        }
    }

    /// The program whose schemas this lowers.
    pub fn program(&self) -> &'p Program {
        self.program
    }

    /// See [`super::lower_type`].
    pub fn lower_type(&mut self, file: FileId, ty: &TypeExpr, diagnostics: &mut Vec<Diagnostic>) -> Option<Lowered> {
        let mut out = Lowered::new(file, ty.span());
        out.value = self.ty(file, ty, "", &mut out, diagnostics)?;
        Some(out)
    }

    /// See [`super::lower_params`].
    pub fn lower_params(&mut self, file: FileId, params: &[Param], diagnostics: &mut Vec<Diagnostic>) -> Lowered {
        let span = match (params.first(), params.last()) {
            (Some(first), Some(last)) => first.span.to(last.span),
            _ => Span::default(),
        };
        let mut out = Lowered::new(file, span);
        let mut properties = Map::new();
        let mut required = Vec::new();
        for param in params {
            let name = &param.name.name;
            if properties.contains_key(name) {
                continue; // a duplicate, reported by the resolver
            }
            let at = pointer::child("/properties", name);
            let mut value = self.ty(file, &param.ty, &at, &mut out, diagnostics).unwrap_or_else(|| {
                out.set(at.clone(), origin(file, param.ty.span()));
                Value::Object(Map::new())
            });
            if let Value::Object(map) = &mut value {
                if let Some(description) = &param.description {
                    let here = pointer::child(&at, "description");
                    out.forget_under(&here);
                    out.set(here, origin(file, param.span));
                    map.insert("description".into(), Value::String(description.clone()));
                }
                if let Some(default) = &param.default {
                    let here = pointer::child(&at, "default");
                    out.forget_under(&here);
                    let json = json::to_json(default, file, &here, None, Context::Default, &mut out, diagnostics);
                    map.insert("default".into(), json);
                }
            }
            if !param.optional && param.default.is_none() {
                out.set(
                    pointer::index("/required", required.len()),
                    origin(file, param.name.span),
                );
                required.push(Value::String(name.clone()));
            }
            properties.insert(name.clone(), value);
        }
        out.set("/properties".into(), origin(file, span));
        let mut root = Map::new();
        root.insert("type".into(), Value::String("object".into()));
        root.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            root.insert("required".into(), Value::Array(required));
        }
        root.insert("additionalProperties".into(), Value::Bool(false));
        out.value = Value::Object(root);
        out
    }

    /// See [`super::lower_schema_ref`].
    pub fn lower_schema_ref(
        &mut self,
        file: FileId,
        schema: &SchemaRef,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Lowered> {
        match schema {
            SchemaRef::Named(name) => {
                self.program.schema(&name.name)?;
                let mut out = Lowered::new(file, name.span);
                out.value = self.inline_named(&name.name, file, name.span, "", &mut out);
                Some(out)
            }
            SchemaRef::Inline(expr) => {
                let mut out = Lowered::new(file, expr.span);
                out.value = self.inline_schema(expr, file, "", None, &mut out, diagnostics);
                Some(out)
            }
        }
    }

    /// See [`super::lower_tool_parameters`].
    pub fn lower_tool_parameters(&mut self, tool: &Located<ToolDecl>, diagnostics: &mut Vec<Diagnostic>) -> Lowered {
        let (file, decl) = (tool.file, &tool.decl);
        if let Some(params) = &decl.params {
            let mut out = self.lower_params(file, params, diagnostics);
            if params.is_empty() {
                out.set(String::new(), origin(file, decl.name.span));
                out.set("/properties".into(), origin(file, decl.name.span));
            }
            return out;
        }
        if let Some(expr) = &decl.parameters_schema {
            if let ExprKind::Path(path) = &expr.kind
                && let [name] = path.as_slice()
                && let Some(out) = self.lower_schema_ref(file, &SchemaRef::Named(name.clone()), diagnostics)
            {
                return out;
            }
            let mut out = Lowered::new(file, expr.span);
            out.value = match &expr.kind {
                ExprKind::Map(_) => self.inline_schema(expr, file, "", None, &mut out, diagnostics),
                _ => json::to_json(expr, file, "", None, Context::Schema(None), &mut out, diagnostics),
            };
            return out;
        }
        let mut out = self.lower_params(file, &[], diagnostics);
        out.set(String::new(), origin(file, decl.name.span));
        out.set("/properties".into(), origin(file, decl.name.span));
        out
    }

    /// The lowered value of the named schema `name`, with spans in its declaring file, or
    /// `None` when no schema has this name or it is being lowered (a cycle).
    pub fn named(&mut self, name: &str) -> Option<&Lowered> {
        self.ensure_named(name);
        self.named.get(name)
    }

    /// Inlines the named schema `name`, used at `span` in `file`, at pointer `at` of `out`.
    pub(super) fn inline_named(&mut self, name: &str, file: FileId, span: Span, at: &str, out: &mut Lowered) -> Value {
        self.ensure_named(name);
        let mut value = Value::Object(Map::new());
        if let Some(cached) = self.named.get(name) {
            for (ptr, from) in &cached.spans {
                if ptr.is_empty() {
                    continue;
                }
                let mut from = from.clone();
                from.schema.get_or_insert_with(|| name.to_string());
                out.set(format!("{at}{ptr}"), from);
            }
            out.invalid.extend(cached.invalid.iter().map(|p| format!("{at}{p}")));
            value = cached.value.clone();
            if !at.is_empty() && value.get("$id").is_none() {
                rebase_refs(&mut value, at);
            }
        }
        out.set(at.to_string(), origin(file, span));
        value
    }

    fn ensure_named(&mut self, name: &str) {
        if self.named.contains_key(name) || self.in_progress.contains(name) {
            return;
        }
        let program = self.program;
        let mut stack = vec![(name.to_string(), false)];
        while let Some((current, exit)) = stack.pop() {
            let Some(decl) = program.schema(&current) else { continue };
            if exit {
                let mut discarded = Vec::new();
                let lowered = self.lower_type(decl.file, &decl.decl.ty, &mut discarded);
                let mut lowered = lowered.unwrap_or_else(|| Lowered::new(decl.file, decl.decl.ty.span()));
                if nesting_depth(&lowered.value) > MAX_SCHEMA_DEPTH {
                    lowered = Lowered::new(decl.file, decl.decl.ty.span());
                    self.too_deep.insert(current.clone());
                }
                self.in_progress.remove(&current);
                self.named.insert(current, lowered);
                continue;
            }
            if self.named.contains_key(&current) || self.in_progress.contains(&current) {
                continue;
            }
            self.in_progress.insert(current.clone());
            let deps = schema_uses(&decl.decl.ty);
            stack.push((current, true));
            for dep in deps.into_iter().rev() {
                if !self.named.contains_key(&dep.name) && !self.in_progress.contains(&dep.name) {
                    stack.push((dep.name.clone(), false));
                }
            }
        }
    }
}

/// The names of a type that are not built-in types (named schemas, or unknown names), in
/// source order: those of typed fields, and those in the schema positions of inline maps.
pub(super) fn schema_uses(ty: &TypeExpr) -> Vec<&crate::ast::Ident> {
    let mut out = Vec::new();
    let mut stack = vec![ty];
    while let Some(ty) = stack.pop() {
        match ty {
            TypeExpr::Named { name, generic, .. } => {
                if !name.name.is_empty() && !BUILTIN_TYPES.contains(&name.name.as_str()) {
                    out.push(name);
                }
                if let Some(inner) = generic {
                    stack.push(inner);
                }
            }
            TypeExpr::Schema(map) => out.extend(super::refs::map_uses(map)),
        }
    }
    out
}

/// Rewrites the local `$ref`s of a schema moved to `at`: `#/$defs/x` → `#/properties/a/$defs/x`.
fn rebase_refs(value: &mut Value, at: &str) {
    let prefix = pointer::fragment(at);
    let refs: Vec<String> = keywords::schema_objects(value)
        .into_iter()
        .filter(|(_, map)| {
            map.get("$ref")
                .and_then(Value::as_str)
                .is_some_and(|r| r == "#" || r.starts_with("#/"))
        })
        .map(|(ptr, _)| pointer::child(&ptr, "$ref"))
        .collect();
    for ptr in refs {
        if let Some(Value::String(r)) = value.pointer_mut(&ptr) {
            *r = format!("{prefix}{}", r.get(1..).unwrap_or(""));
        }
    }
}

pub(super) fn origin(file: FileId, span: Span) -> Origin {
    Origin {
        file,
        span,
        key: None,
        schema: None,
    }
}
