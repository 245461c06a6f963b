//! JSON Schema: lowering of types, parameter lists and inline schema maps to JSON Schema draft
//! 2020-12, with a span map from every JSON pointer of the result to the source text that wrote
//! it, and the checks of a lowered schema (`TENX0401`–`TENX0408`).
//!
//! [`Lowerer`] does the lowering and caches named schemas, so a `schema` used by a thousand tools
//! is lowered once; the free functions ([`lower_type`], [`lower_params`], …) are one-shot
//! shortcuts. A named schema is inlined where it is used: the pointers inside it keep the spans
//! of its declaration (in the declaring file) and are marked with its name, so the checks report
//! a problem inside a named schema once, at its declaration, never again at each use. Inside an
//! inline map, a schema name or a typed field in a schema position is inlined the same way
//! (`refs`: `TENX0420`, `TENX0421`).
//!
//! [`check_lowered`] reports what is wrong with one lowered schema; [`check_response_object`]
//! adds the rule for approval and interrupt responses; [`check_cycles`] finds named schemas that
//! contain themselves.

mod cycles;
mod json;
mod keywords;
mod lower;
mod meta;
mod pointer;
mod refs;
mod rules;
mod types;

#[cfg(test)]
mod refs_tests;
#[cfg(test)]
mod tests;

pub use cycles::check_cycles;
pub use keywords::{KEYWORDS, TYPE_NAMES};
pub use lower::{Lowerer, MAX_SCHEMA_DEPTH, nesting_depth};
pub use pointer::{escape_token, fragment};
pub use rules::{SchemaSite, check_lowered, check_response_object};

use crate::ast::{Expr, Param, SchemaRef, ToolDecl, TypeExpr};
use crate::resolve::{Located, Program};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Diagnostic, FileId, Span};

/// The text that wrote one JSON pointer of a lowered schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file holding the text.
    pub file: FileId,
    /// The value's text: `"strng"` in `"type": "strng"`, `1` in `min: 1`, a whole type.
    pub span: Span,
    /// The key's text, when a map entry or a named argument wrote the value: `"type"`, `min`.
    pub key: Option<Span>,
    /// The named schema this text belongs to, when that schema is inlined here. Problems there
    /// are reported at the schema's declaration, not at this use.
    pub schema: Option<String>,
}

/// A lowered JSON Schema with its span map.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    /// The schema.
    pub value: Value,
    /// The file of the place that uses the schema (a tool, an agent, a `schema` declaration).
    pub file: FileId,
    /// JSON pointer (`""`, `/properties/amount/minimum`) → the text that wrote it. The root is
    /// always present.
    pub spans: BTreeMap<String, Origin>,
    /// Pointers whose text is not JSON data (a name or a call inside a map). They were already
    /// reported while lowering; the checks say nothing more about them.
    pub invalid: BTreeSet<String>,
}

impl Lowered {
    /// An empty schema `{}` written at `span`.
    pub fn new(file: FileId, span: Span) -> Self {
        let mut spans = BTreeMap::new();
        spans.insert(
            String::new(),
            Origin {
                file,
                span,
                key: None,
                schema: None,
            },
        );
        Lowered {
            value: Value::Object(serde_json::Map::new()),
            file,
            spans,
            invalid: BTreeSet::new(),
        }
    }

    /// The span that wrote `pointer`, or the nearest ancestor that has one. The span may be in
    /// another file when the pointer is inside an inlined named schema: see [`Lowered::origin_of`].
    pub fn span_of(&self, pointer: &str) -> Span {
        self.origin_of(pointer).span
    }

    /// The origin of `pointer`, or of its nearest ancestor that has one.
    pub fn origin_of(&self, pointer: &str) -> &Origin {
        let mut at = pointer;
        loop {
            if let Some(origin) = self.spans.get(at) {
                return origin;
            }
            match pointer::parent(at) {
                Some(up) => at = up,
                None => break,
            }
        }
        self.root()
    }

    /// Where the key of `pointer` is written (`"requried"` in `"requried": [...]`), falling back
    /// to [`Lowered::origin_of`] when no key wrote it.
    pub fn key_of(&self, pointer: &str) -> (FileId, Span) {
        match self.spans.get(pointer) {
            Some(Origin {
                file, key: Some(key), ..
            }) => (*file, *key),
            _ => {
                let origin = self.origin_of(pointer);
                (origin.file, origin.span)
            }
        }
    }

    /// Whether `pointer` lies inside an inlined named schema (checked at its declaration).
    pub fn is_foreign(&self, pointer: &str) -> bool {
        self.origin_of(pointer).schema.is_some()
    }

    /// Whether `pointer` is at or below text that is not JSON data (already reported).
    pub fn is_invalid(&self, pointer: &str) -> bool {
        if self.invalid.is_empty() {
            return false;
        }
        let mut at = pointer;
        loop {
            if self.invalid.contains(at) {
                return true;
            }
            match pointer::parent(at) {
                Some(up) => at = up,
                None => return false,
            }
        }
    }

    fn root(&self) -> &Origin {
        static NOWHERE: std::sync::OnceLock<Origin> = std::sync::OnceLock::new();
        match self.spans.get("") {
            Some(origin) => origin,
            None => NOWHERE.get_or_init(|| Origin {
                file: FileId(0),
                span: Span::default(),
                key: None,
                schema: None,
            }),
        }
    }

    /// Records the origin of `pointer`.
    pub(crate) fn set(&mut self, pointer: String, origin: Origin) {
        self.spans.insert(pointer, origin);
    }

    /// Forgets every origin at or below `pointer` (before the value there is replaced).
    pub(crate) fn forget_under(&mut self, pointer: &str) {
        let below = format!("{pointer}/");
        self.spans.retain(|k, _| k != pointer && !k.starts_with(&below));
        self.invalid.retain(|k| k != pointer && !k.starts_with(&below));
    }
}

/// Lowers a type (a typed field, a schema name or an inline map). Reports unknown, mistyped and
/// contradictory constraints (`TENX0406`) and non-JSON values inside maps (`TENX0401`). `None`
/// when the type names nothing lowerable (an unknown name, already reported by the resolver).
pub fn lower_type(
    program: &Program,
    file: FileId,
    ty: &TypeExpr,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Lowered> {
    Lowerer::new(program).lower_type(file, ty, diagnostics)
}

/// Lowers a parameter list or state block to an object schema: `properties`, `required` (the
/// parameters without `?` and without a default), `additionalProperties: false`, with each
/// parameter's description and default.
pub fn lower_params(program: &Program, file: FileId, params: &[Param], diagnostics: &mut Vec<Diagnostic>) -> Lowered {
    Lowerer::new(program).lower_params(file, params, diagnostics)
}

/// Lowers a schema reference: a named schema (through [`Program::schema`]) or an inline map.
pub fn lower_schema_ref(
    program: &Program,
    file: FileId,
    schema: &SchemaRef,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Lowered> {
    Lowerer::new(program).lower_schema_ref(file, schema, diagnostics)
}

/// Lowers a tool's parameters: its parameter list, or its inline `parameters` schema, or an
/// empty object schema when it has neither.
pub fn lower_tool_parameters(
    program: &Program,
    tool: &Located<ToolDecl>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Lowered {
    Lowerer::new(program).lower_tool_parameters(tool, diagnostics)
}

/// The JSON Schema that an inline schema (or one schema position inside one: a property's
/// value) stands for, exactly as the artifact will hold it: the schema names and types written
/// in its schema positions filled in. `None` when it holds text that is not JSON data (already
/// reported by the schema check). Checks that read inline schemas from the source use this, so
/// they see through the names as if each schema had been written inline.
pub fn inline_json(program: &Program, expr: &Expr) -> Option<Value> {
    if let Some(plain) = expr.to_json() {
        return Some(plain);
    }
    let mut out = Lowered::new(FileId(0), expr.span);
    out.value = Lowerer::new(program).inline_schema(expr, FileId(0), "", None, &mut out, &mut Vec::new());
    out.invalid.is_empty().then_some(out.value)
}
