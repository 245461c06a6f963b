//! Lowering of the small items: imports, tags and schemas.

use super::{Lower, child};
use crate::ast::{Import, ImportTarget, SchemaDecl, TagDecl};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn import(&mut self, pair: Pair<'_, Rule>) -> Option<Import> {
        let span = self.span(&pair);
        if let Some(string) = child(&pair, Rule::string) {
            let path = self.string(&string);
            return Some(Import {
                target: ImportTarget::File {
                    path,
                    span: self.span(&string),
                },
                span,
            });
        }
        let path_pair = child(&pair, Rule::import_path)?;
        let mut path = Vec::new();
        let mut star = false;
        for part in path_pair.into_inner() {
            match part.as_rule() {
                Rule::import_star => star = true,
                _ => path.push(self.ident(&part)),
            }
        }
        Some(Import {
            target: ImportTarget::Std { path, star },
            span,
        })
    }

    pub(super) fn tag(&mut self, pair: Pair<'_, Rule>) -> TagDecl {
        let span = self.span(&pair);
        let name = child(&pair, Rule::ident)
            .map(|i| self.ident(&i))
            .unwrap_or_else(|| crate::ast::Ident {
                name: String::new(),
                span,
            });
        let description = child(&pair, Rule::string).map(|s| self.string(&s));
        TagDecl {
            name,
            description,
            span,
        }
    }

    pub(super) fn schema(&mut self, pair: Pair<'_, Rule>) -> Option<SchemaDecl> {
        let span = self.span(&pair);
        let name = child(&pair, Rule::ident).map(|i| self.ident(&i))?;
        let ty = child(&pair, Rule::type_expr).map(|t| self.type_expr(t))?;
        Some(SchemaDecl { name, ty, span })
    }
}
