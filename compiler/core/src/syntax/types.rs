//! Lowering of parameter lists, state fields and type expressions.

use super::{Lower, child};
use crate::ast::{Param, TypeExpr};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    /// A `param_list` pair.
    pub fn param_list(&mut self, pair: Pair<'_, Rule>) -> Vec<Param> {
        pair.into_inner()
            .filter(|p| p.as_rule() == Rule::param)
            .filter_map(|p| self.param(p))
            .collect()
    }

    /// A `param` pair: `name?: type = default "description"`.
    pub fn param(&mut self, pair: Pair<'_, Rule>) -> Option<Param> {
        let span = self.span(&pair);
        let mut name = None;
        let mut optional = false;
        let mut ty = None;
        let mut default = None;
        let mut description = None;
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::ident => name = Some(self.ident(&part)),
                Rule::optional_mark => optional = true,
                Rule::type_expr => ty = Some(self.type_expr(part)),
                Rule::param_default => default = part.into_inner().next().map(|v| self.value(v)),
                Rule::string => description = Some(self.string(&part)),
                _ => {}
            }
        }
        Some(Param {
            name: name?,
            optional,
            ty: ty?,
            default,
            description,
            span,
        })
    }

    /// A `type_expr` pair.
    pub fn type_expr(&mut self, pair: Pair<'_, Rule>) -> TypeExpr {
        let span = self.span(&pair);
        let inner = pair.into_inner().next();
        match inner {
            Some(map) if map.as_rule() == Rule::map => TypeExpr::Schema(self.value(map)),
            Some(named) => {
                let name = child(&named, Rule::ident).map(|i| self.ident(&i));
                let generic = child(&named, Rule::type_generic)
                    .and_then(|g| g.into_inner().next())
                    .map(|t| Box::new(self.type_expr(t)));
                let args = child(&named, Rule::call_args)
                    .map(|a| self.call_args(a))
                    .unwrap_or_default();
                TypeExpr::Named {
                    name: name.unwrap_or_else(|| crate::ast::Ident {
                        name: String::new(),
                        span,
                    }),
                    generic,
                    args,
                    span,
                }
            }
            None => TypeExpr::Named {
                name: crate::ast::Ident {
                    name: String::new(),
                    span,
                },
                generic: None,
                args: Vec::new(),
                span,
            },
        }
    }
}
