//! A graph's `retry = { node: { attempts: 2, backoff: 5s } }`: retry policies by node. Only the
//! outer map is read here (`TENX0108` when it is not one); each policy is read by
//! [`crate::retry`], and `check/retries` and the graph checks judge the policies and the nodes.

use super::Lower;
use super::blocks::expected;
use crate::ast::{Expr, ExprKind, Ident, NodeRetry};

impl Lower<'_> {
    /// The entries of a graph's `retry` map; anything else is reported (`TENX0108`).
    pub(super) fn node_retries(&mut self, value: &Expr) -> Vec<NodeRetry> {
        let ExprKind::Map(entries) = &value.kind else {
            expected(
                self,
                "retry",
                "a map of nodes to retry policies, such as `{ publish_post: { attempts: 3, backoff: 1s } }`",
                value,
            );
            return Vec::new();
        };
        entries
            .iter()
            .map(|entry| NodeRetry {
                node: Ident {
                    name: entry.key.clone(),
                    span: entry.key_span,
                },
                policy: entry.value.clone(),
            })
            .collect()
    }
}
