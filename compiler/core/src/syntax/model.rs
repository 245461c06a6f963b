//! Lowering of `model` declarations.

use super::blocks::Fields;
use super::{Lower, child};
use crate::ast::{Ident, ModelDecl};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn model(&mut self, pair: Pair<'_, Rule>) -> ModelDecl {
        let span = self.span(&pair);
        let name = decl_name(self, &pair);
        let block = child(&pair, Rule::block).map(|b| self.block(b));
        let mut fields = Fields::new(
            block.unwrap_or_else(|| empty_block(span)),
            format!("model `{}`", name.name),
        );
        let provider = fields.ident(self, "provider");
        let model_name = fields.string(self, "name");
        let base_url = fields.string(self, "base_url");
        let api_key = fields.value(self, "api_key");
        let params = fields.value(self, "params");
        let turns = fields.value(self, "turns");
        let rules = fields.value(self, "rules");
        let fallback = fields.value(self, "fallback");
        fields.require(self, &provider, "provider", "provider = openai");
        fields.finish(self);
        ModelDecl {
            name,
            provider,
            model_name,
            base_url,
            api_key,
            params,
            turns,
            span,
            rules,
            fallback,
        }
    }
}

/// The declared name of an item (its first `ident` child).
pub(super) fn decl_name(lower: &Lower<'_>, pair: &Pair<'_, Rule>) -> Ident {
    child(pair, Rule::ident)
        .map(|i| lower.ident(&i))
        .unwrap_or_else(|| Ident {
            name: String::new(),
            span: lower.span(pair),
        })
}

/// A block with no fields, for an item whose block is missing.
pub(super) fn empty_block(span: tenx_diagnostics::Span) -> super::blocks::BlockData {
    super::blocks::BlockData::new(span)
}
