//! A graph's `visits = { node: { max: 3, then: exit } }` and `on_error = { node: handler }`:
//! bounded loops that leave through a declared exit, and where a failed node's run goes. Only
//! the shape is read here; the graph checks prove that the names are nodes (or `END`), that an
//! exit is not the node itself, and that each node is listed once.

use super::Lower;
use super::blocks::expected;
use crate::ast::{ErrorExit, Expr, ExprKind, Ident, MapEntry, VisitLimit};

/// How `visits` is written, for messages.
const VISITS_SHAPE: &str = "a map of nodes to `{ max: N, then: node }`, such as `{ writer: { max: 3, then: END } }`";

impl Lower<'_> {
    /// The entries of a `visits` map; anything else is reported (`TENX0108`).
    pub(super) fn visit_limits(&mut self, value: &Expr) -> Vec<VisitLimit> {
        let ExprKind::Map(entries) = &value.kind else {
            expected(self, "visits", VISITS_SHAPE, value);
            return Vec::new();
        };
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            if let Some(limit) = self.visit_limit(entry) {
                out.push(limit);
            }
        }
        out
    }

    fn visit_limit(&mut self, entry: &MapEntry) -> Option<VisitLimit> {
        let ExprKind::Map(fields) = &entry.value.kind else {
            expected(self, "visits", VISITS_SHAPE, &entry.value);
            return None;
        };
        let mut max = None;
        let mut exit = None;
        for field in fields {
            match field.key.as_str() {
                "max" => match field.value.as_i64().and_then(|n| u64::try_from(n).ok()) {
                    Some(n) => max = Some((n, field.value.span)),
                    None => expected(self, "max", "a whole number", &field.value),
                },
                "then" => match field.value.as_ident() {
                    Some(target) => exit = Some(target.clone()),
                    None => expected(self, "then", "a node name or `END`", &field.value),
                },
                _ => expected(self, "visits", VISITS_SHAPE, &entry.value),
            }
        }
        match (max, exit) {
            (Some(max), Some(exit)) => Some(VisitLimit {
                node: key(entry),
                max,
                exit,
            }),
            _ => {
                expected(self, "visits", VISITS_SHAPE, &entry.value);
                None
            }
        }
    }

    /// The entries of an `on_error` map; anything else is reported (`TENX0108`).
    pub(super) fn error_exits(&mut self, value: &Expr) -> Vec<ErrorExit> {
        let ExprKind::Map(entries) = &value.kind else {
            expected(
                self,
                "on_error",
                "a map of nodes to the node that runs when they fail, such as `{ charge: apologise }`",
                value,
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            match entry.value.as_ident() {
                Some(target) => out.push(ErrorExit {
                    node: key(entry),
                    target: target.clone(),
                }),
                None => expected(self, "on_error", "a map of nodes to node names or `END`", &entry.value),
            }
        }
        out
    }
}

fn key(entry: &MapEntry) -> Ident {
    Ident {
        name: entry.key.clone(),
        span: entry.key_span,
    }
}
