//! Lowering of decisions: how the runtime reads an answer as approve, edit, respond or reject
//! ([`crate::decision::decision_of`], shared with the check stage).

use super::Lowerer;
use crate::ast::{Expr, SchemaRef};
use tenx_artifact::Decision;

impl Lowerer<'_, '_> {
    /// The decision of an approval or interrupt with this `response` and `decision`.
    pub(super) fn decision(&self, response: Option<&SchemaRef>, decision: Option<&Expr>) -> Decision {
        crate::decision::decision_of(self.program, response, decision)
    }
}
