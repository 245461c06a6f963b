//! Lowering of decisions: how the runtime reads an answer as approve, edit or reject. No
//! `response` and `std.approval.yes_no` read `{"approved": true}` as approve;
//! `std.approval.approve_edit_reject` reads `"approve"` and `"edit"` from `decision`; a custom
//! response is read by its own `decision` rule (checked by `check/decisions.rs`).

use super::Lowerer;
use crate::ast::{Expr, SchemaRef};
use crate::decision::{Response, Written};
use tenx_artifact::Decision;

impl Lowerer<'_, '_> {
    /// The decision of an approval or interrupt with this `response` and `decision`.
    pub(super) fn decision(&self, response: Option<&SchemaRef>, decision: Option<&Expr>) -> Decision {
        match Response::of(self.program, response) {
            Response::Standard("approve_edit_reject") => Decision::approve_edit_reject(),
            Response::Custom => decision
                .and_then(Written::of)
                .and_then(|written| written.decision())
                .unwrap_or_else(Decision::yes_no),
            // A program that checked has no other kind of response (`TENX0613` and name
            // resolution refuse the others).
            _ => Decision::yes_no(),
        }
    }
}
