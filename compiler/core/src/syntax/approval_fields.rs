//! The fields an approval and an approving interrupt share about what an approval binds and who
//! may give it: `target`, `approvers` and `separate_duties`. `approvers` is kept as written; the
//! check stage (`check/approvers`) reads its items.

use super::Lower;
use super::blocks::{Fields, expected};
use crate::ast::{Expr, ExprKind};
use tenx_diagnostics::Span;

/// `target`, `approvers` and `separate_duties` of one block.
pub(super) struct ApprovalInputs {
    /// `target = "…"`.
    pub target: Option<Expr>,
    /// `approvers = [...]`, as written.
    pub approvers: Option<Expr>,
    /// `separate_duties = true|false`.
    pub separate_duties: Option<(bool, Span)>,
}

impl Lower<'_> {
    /// Reads `target`, `approvers` and `separate_duties` from `fields`.
    pub(super) fn approval_inputs(&mut self, fields: &mut Fields) -> ApprovalInputs {
        let target = fields.string(self, "target");
        let approvers = fields.value(self, "approvers");
        let separate_duties = fields.value(self, "separate_duties").and_then(|v| match v.kind {
            ExprKind::Bool(b) => Some((b, v.span)),
            _ => {
                expected(self, "separate_duties", "`true` or `false`", &v);
                None
            }
        });
        ApprovalInputs {
            target,
            approvers,
            separate_duties,
        }
    }
}
