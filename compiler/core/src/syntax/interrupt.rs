//! Lowering of `interrupt` declarations (explicit human steps).

use super::blocks::Fields;
use super::model::{decl_name, empty_block};
use super::{Lower, child};
use crate::ast::InterruptDecl;
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn interrupt(&mut self, pair: Pair<'_, Rule>) -> InterruptDecl {
        let span = self.span(&pair);
        let name = decl_name(self, &pair);
        let block = child(&pair, Rule::block).map(|b| self.block(b));
        let mut fields = Fields::new(
            block.unwrap_or_else(|| empty_block(span)),
            format!("interrupt `{}`", name.name),
        );
        let message = fields.string(self, "message");
        let reason = fields.string(self, "reason");
        let value = fields.value(self, "value");
        let response = fields
            .value(self, "response")
            .and_then(|v| self.schema_ref("response", v));
        let expires = fields.duration(self, "expires");
        let approves = fields.ident_list(self, "approves");
        let on_reject = fields.string(self, "on_reject");
        let evidence = fields.list(self, "evidence");
        let inputs = self.approval_inputs(&mut fields);
        let decision = fields.value(self, "decision");
        let feedback = fields.string(self, "feedback");
        fields.require(self, &message, "message", "message = \"Approve …?\"");
        fields.require(self, &response, "response", "response = yes_no");
        fields.finish(self);
        InterruptDecl {
            name,
            message,
            reason,
            value,
            response,
            expires,
            approves,
            on_reject,
            span,
            target: inputs.target,
            evidence,
            approvers: inputs.approvers,
            separate_duties: inputs.separate_duties,
            decision,
            feedback,
        }
    }
}
