//! What an approval's answer means: which `response` an approval or interrupt uses (none, one
//! of the standard library's two, a program's own schema that takes a standard name, or a custom
//! one) and the `decision` rule written for a custom one. Shared by the check stage
//! (`check/decisions.rs`, which reports what is wrong) and lowering (`lower/decision.rs`, which
//! writes [`tenx_artifact::Decision`]); this module reports nothing.

use crate::ast::{Expr, ExprKind, SchemaRef};
use crate::resolve::{Located, Program};
use serde_json::Value;

/// The names of the standard library's approval schemas (`std.approval`).
pub const STANDARD_RESPONSES: [&str; 2] = ["yes_no", "approve_edit_reject"];

/// The keys a `decision` map may have.
pub const DECISION_KEYS: [&str; 4] = ["field", "approve", "edit", "respond"];

/// What a `response` resolves to.
#[derive(Debug, Clone, Copy)]
pub enum Response<'p> {
    /// No `response`: a plain yes or no.
    Default,
    /// `std.approval.yes_no` or `std.approval.approve_edit_reject`, recognised by its
    /// declaration in the standard library: the name it has there.
    Standard(&'static str),
    /// A program's own `schema yes_no` or `schema approve_edit_reject`.
    Shadowing(&'p Located<crate::ast::SchemaDecl>),
    /// An inline schema or another declared schema: read by its `decision`.
    Custom,
    /// A name that resolves to no schema (reported by name resolution).
    Unresolved,
}

impl<'p> Response<'p> {
    /// Resolves the `response` of an approval or interrupt.
    pub fn of(program: &'p Program, response: Option<&SchemaRef>) -> Self {
        let name = match response {
            None => return Self::Default,
            Some(SchemaRef::Inline(_)) => return Self::Custom,
            Some(SchemaRef::Named(name)) => name,
        };
        let Some(decl) = program.schema(&name.name) else {
            return Self::Unresolved;
        };
        let declared = decl.decl.name.name.as_str();
        match STANDARD_RESPONSES.iter().find(|standard| **standard == declared) {
            Some(standard) if decl.stdlib => Self::Standard(standard),
            Some(_) => Self::Shadowing(decl),
            None => Self::Custom,
        }
    }
}

/// A `decision` map as written, entry by entry, with where each is.
pub struct Written<'e> {
    /// `field: "verdict"`.
    pub field: Option<&'e Expr>,
    /// `approve: "ship"`.
    pub approve: Option<&'e Expr>,
    /// `edit: "amend"`.
    pub edit: Option<&'e Expr>,
    /// `respond: "answer"`.
    pub respond: Option<&'e Expr>,
    /// Entries with another key: the key and where it is.
    pub unknown: Vec<(&'e str, tenx_diagnostics::Span)>,
}

impl<'e> Written<'e> {
    /// The entries of a `decision` map; `None` when it is not a map.
    pub fn of(expr: &'e Expr) -> Option<Self> {
        let ExprKind::Map(entries) = &expr.kind else {
            return None;
        };
        let mut written = Written {
            field: None,
            approve: None,
            edit: None,
            respond: None,
            unknown: Vec::new(),
        };
        for entry in entries {
            let slot = match entry.key.as_str() {
                "field" => &mut written.field,
                "approve" => &mut written.approve,
                "edit" => &mut written.edit,
                "respond" => &mut written.respond,
                other => {
                    written.unknown.push((other, entry.key_span));
                    continue;
                }
            };
            if slot.is_none() {
                *slot = Some(&entry.value);
            }
        }
        Some(written)
    }

    /// The decision, when the map is well formed: only known keys, a non-empty `field`, an
    /// `approve` and an optional `edit` and `respond` that are strings or booleans, and differ.
    pub fn decision(&self) -> Option<tenx_artifact::Decision> {
        if !self.unknown.is_empty() {
            return None;
        }
        let field = self.field?.as_str().filter(|f| !f.is_empty())?.to_string();
        let approve = answer_value(self.approve?)?;
        let edit = match self.edit {
            None => None,
            Some(edit) => Some(answer_value(edit).filter(|edit| *edit != approve)?),
        };
        let respond = match self.respond {
            None => None,
            Some(respond) => {
                Some(answer_value(respond).filter(|respond| *respond != approve && edit.as_ref() != Some(respond))?)
            }
        };
        Some(tenx_artifact::Decision {
            field,
            approve,
            edit,
            respond,
        })
    }
}

/// The decision of an approval or interrupt with this `response` and `decision`: no `response`
/// and `std.approval.yes_no` read `{"approved": true}` as approve;
/// `std.approval.approve_edit_reject` reads `"approve"` and `"edit"` from `decision`; a custom
/// response is read by its own `decision` rule (checked by `check/decisions.rs`).
pub fn decision_of(
    program: &Program,
    response: Option<&SchemaRef>,
    decision: Option<&Expr>,
) -> tenx_artifact::Decision {
    match Response::of(program, response) {
        Response::Standard("approve_edit_reject") => tenx_artifact::Decision::approve_edit_reject(),
        Response::Custom => decision
            .and_then(Written::of)
            .and_then(|written| written.decision())
            .unwrap_or_else(tenx_artifact::Decision::yes_no),
        // A program that checked has no other kind of response (`TENX0613` and name
        // resolution refuse the others).
        _ => tenx_artifact::Decision::yes_no(),
    }
}

/// A value a decision field is compared with: a string or a boolean.
pub fn answer_value(expr: &Expr) -> Option<Value> {
    match &expr.kind {
        ExprKind::Str(s) | ExprKind::Text(s) => Some(Value::String(s.clone())),
        ExprKind::Bool(b) => Some(Value::Bool(*b)),
        _ => None,
    }
}

/// Whether a lowered `parameters` schema has at least one property: what an answer's `edit`
/// needs (the artifact's self-check uses the same rule).
pub fn has_parameters(parameters: &Value) -> bool {
    parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty())
}
