//! Lowering of `validator` declarations.

use super::blocks::{Fields, expected};
use super::model::{decl_name, empty_block};
use super::{Lower, child};
use crate::ast::{ExprKind, ValidatorDecl};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn validator(&mut self, pair: Pair<'_, Rule>) -> ValidatorDecl {
        let span = self.span(&pair);
        let name = decl_name(self, &pair);
        let params = child(&pair, Rule::param_list).map(|p| self.param_list(p));
        let block = child(&pair, Rule::block).map(|b| self.block(b));
        let mut fields = Fields::new(
            block.unwrap_or_else(|| empty_block(span)),
            format!("validator `{}`", name.name),
        );
        let description = fields.string(self, "description");
        let builtin = fields.value(self, "run").and_then(|v| match &v.kind {
            ExprKind::Call { callee, args }
                if callee.len() == 1 && callee.first().is_some_and(|c| c.name == "builtin") && args.len() == 1 =>
            {
                args.first().and_then(|a| a.value.as_ident()).cloned()
            }
            _ => {
                expected(self, "run", "`builtin(name)`", &v);
                None
            }
        });
        let deny_patterns = fields.list(self, "deny_patterns");
        let deny_keywords = fields.list(self, "deny_keywords");
        let max_length = fields.value(self, "max_length");
        for v in deny_patterns.iter().chain(&deny_keywords) {
            if v.as_str().is_none() {
                expected(self, "deny_patterns", "a list of strings", v);
            }
        }
        fields.finish(self);
        ValidatorDecl {
            name,
            params,
            description,
            builtin,
            deny_patterns,
            deny_keywords,
            max_length,
            span,
        }
    }
}
