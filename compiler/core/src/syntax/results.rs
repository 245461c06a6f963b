//! A graph's `results = { source: field.path }`: which tool nodes, and which tools that agent
//! nodes call, also write their result into state. Only the shape is read here (a map of names
//! to dotted paths); the graph checks prove each key and path, and that the result fits.

use super::Lower;
use super::blocks::expected;
use crate::ast::{Expr, ExprKind, Ident, ResultWrite};

impl Lower<'_> {
    /// The entries of a `results` map; an entry whose value is not a name, or a value that is
    /// not a map, is reported (`TENX0108`).
    pub(super) fn result_writes(&mut self, value: &Expr) -> Vec<ResultWrite> {
        let ExprKind::Map(entries) = &value.kind else {
            expected(
                self,
                "results",
                "a map of tool nodes to state fields, such as `{ send: url }`",
                value,
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            let path = match &entry.value.kind {
                ExprKind::Path(path) => path.split_first(),
                _ => None,
            };
            match path {
                Some((field, path)) => out.push(ResultWrite {
                    node: Ident {
                        name: entry.key.clone(),
                        span: entry.key_span,
                    },
                    field: field.clone(),
                    path: path.to_vec(),
                }),
                None => expected(
                    self,
                    "results",
                    "a map of tool nodes or tools to state fields (`field` or `field.property`)",
                    &entry.value,
                ),
            }
        }
        out
    }
}
