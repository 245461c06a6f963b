//! A graph's `answers = { interrupt: field }` or `{ interrupt: { property: field } }`: which
//! interrupt answers, whole or by property, are written into state fields. Only the shape is
//! read here; the graph checks prove each node, property and field, and that the types fit.

use super::Lower;
use super::blocks::expected;
use crate::ast::{AnswerWrite, Expr, ExprKind, Ident, MapEntry};

impl Lower<'_> {
    /// The writes of an `answers` map; a value of the wrong shape is reported (`TENX0108`).
    pub(super) fn answer_writes(&mut self, value: &Expr) -> Vec<AnswerWrite> {
        const SHAPE: &str = "a map of interrupt nodes to state fields, or to maps of answer properties to state fields";
        let ExprKind::Map(entries) = &value.kind else {
            expected(self, "answers", SHAPE, value);
            return Vec::new();
        };
        let ident = |entry: &MapEntry| Ident {
            name: entry.key.clone(),
            span: entry.key_span,
        };
        let mut out = Vec::new();
        for entry in entries {
            let node = ident(entry);
            if let Some(field) = entry.value.as_ident() {
                out.push(AnswerWrite {
                    node,
                    property: None,
                    field: field.clone(),
                });
                continue;
            }
            let ExprKind::Map(properties) = &entry.value.kind else {
                expected(self, "answers", SHAPE, &entry.value);
                continue;
            };
            for property in properties {
                match property.value.as_ident() {
                    Some(field) => out.push(AnswerWrite {
                        node: node.clone(),
                        property: Some(ident(property)),
                        field: field.clone(),
                    }),
                    None => expected(
                        self,
                        "answers",
                        "answer properties mapped to state field names",
                        &property.value,
                    ),
                }
            }
        }
        out
    }
}
