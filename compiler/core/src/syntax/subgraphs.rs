//! A graph's `subgraphs = { research: { input: { topic: subject }, output: { summary: notes } } }`:
//! how each subgraph node maps state into the graph it runs and back. Only the shape is read
//! here; `check/subgraphs` proves each node and field and that the types fit.

use super::Lower;
use super::blocks::expected;
use crate::ast::{Expr, ExprKind, FieldMap, Ident, MapEntry, SubgraphMap};

impl Lower<'_> {
    /// The entries of a `subgraphs` map; a value of the wrong shape is reported (`TENX0108`).
    pub(super) fn subgraph_maps(&mut self, value: &Expr) -> Vec<SubgraphMap> {
        const SHAPE: &str = "a map of subgraph nodes to `{ input: { … }, output: { … } }`";
        let ExprKind::Map(entries) = &value.kind else {
            expected(self, "subgraphs", SHAPE, value);
            return Vec::new();
        };
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            let ExprKind::Map(parts) = &entry.value.kind else {
                expected(self, "subgraphs", SHAPE, &entry.value);
                continue;
            };
            let mut map = SubgraphMap {
                node: key_ident(entry),
                input: Vec::new(),
                output: Vec::new(),
                span: entry.key_span.to(entry.value.span),
            };
            for part in parts {
                let pairs = match part.key.as_str() {
                    "input" => self.field_maps("input", &part.value),
                    "output" => self.field_maps("output", &part.value),
                    _ => {
                        let d = self
                            .diag(
                                tenx_diagnostics::Code::TENX0108,
                                format!("a subgraph mapping has no `{}`", part.key),
                                part.key_span,
                            )
                            .label("not `input` or `output`")
                            .help("write `input: { inner_field: outer_field }` and `output: { outer_field: inner_field }`");
                        self.report(d);
                        continue;
                    }
                };
                if part.key == "input" {
                    map.input.extend(pairs);
                } else {
                    map.output.extend(pairs);
                }
            }
            out.push(map);
        }
        out
    }

    /// `{ to: from, … }`: field names mapped to field names.
    fn field_maps(&mut self, name: &str, value: &Expr) -> Vec<FieldMap> {
        let what = if name == "input" {
            "a map of the inner graph's state fields to this graph's (`{ topic: subject }`)"
        } else {
            "a map of this graph's state fields to the inner graph's (`{ notes: summary }`)"
        };
        let ExprKind::Map(entries) = &value.kind else {
            expected(self, name, what, value);
            return Vec::new();
        };
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            match entry.value.as_ident() {
                Some(from) => out.push(FieldMap {
                    to: key_ident(entry),
                    from: from.clone(),
                }),
                None => expected(self, name, what, &entry.value),
            }
        }
        out
    }
}

fn key_ident(entry: &MapEntry) -> Ident {
    Ident {
        name: entry.key.clone(),
        span: entry.key_span,
    }
}
