//! A graph's `results = { node: field }`: which tool nodes also write their result into a
//! state field. Only the shape is read here (a map of names to names); the graph checks prove
//! that each key is a tool node and each value a state field its result fits.

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
            match entry.value.as_ident() {
                Some(field) => out.push(ResultWrite {
                    node: Ident {
                        name: entry.key.clone(),
                        span: entry.key_span,
                    },
                    field: field.clone(),
                }),
                None => expected(
                    self,
                    "results",
                    "a map of tool nodes to state field names",
                    &entry.value,
                ),
            }
        }
        out
    }
}
