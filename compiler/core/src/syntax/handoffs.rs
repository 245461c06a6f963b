//! Lowering of an agent's `handoffs = [billing, escalation(reason: string "Why")]`: the targets
//! as a list of names, and the typed payload of each target written with a parameter list.
//!
//! The grammar reads a bracketed `handoffs` list with `handoffs_entry`; any other form
//! (`handoffs = billing`, a `+` join, a dotted name) is an ordinary entry, and the agent reads it
//! as a list of names, as before payloads existed.

use super::Lower;
use super::blocks::{Field, FieldBody, Fields, ident_list, value_of};
use crate::ast::{Expr, ExprKind, HandoffPayload, Ident};
use tenx_diagnostics::Code;
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    /// A `handoffs_entry` (or `agents_entry`) pair, as the field `handoffs` (`agents`): the list
    /// of names as its value, and the parameter lists beside it.
    pub(super) fn handoffs_entry(&mut self, pair: Pair<'_, Rule>) -> Option<Field> {
        let span = self.span(&pair);
        let mut key = None;
        let mut items = Vec::new();
        let mut payloads = Vec::new();
        let mut list_span = span;
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::kw_handoffs | Rule::kw_agents => key = Some(self.ident(&part)),
                Rule::handoff_list => {
                    list_span = self.span(&part);
                    for item in part.into_inner().filter(|p| p.as_rule() == Rule::handoff_item) {
                        let mut inner = item.into_inner();
                        let Some(target) = inner.next().map(|i| self.ident(&i)) else {
                            continue;
                        };
                        if let Some(list) = inner.next().filter(|p| p.as_rule() == Rule::param_list) {
                            let params = self.param_list(list);
                            payloads.push(HandoffPayload {
                                target: target.clone(),
                                params,
                            });
                        }
                        items.push(Expr {
                            span: target.span,
                            kind: ExprKind::Path(vec![target]),
                        });
                    }
                }
                _ => {}
            }
        }
        let value = Expr {
            kind: ExprKind::List(items),
            span: list_span,
        };
        Some(Field {
            key: key?,
            body: FieldBody::Handoffs(value, payloads),
            span,
        })
    }
}

impl Fields {
    /// Takes `handoffs`: the target names (a single name is accepted too) and the payloads
    /// written with them.
    pub fn handoffs(&mut self, lower: &mut Lower<'_>) -> (Vec<Ident>, Vec<HandoffPayload>) {
        let Some(field) = self.take(lower, "handoffs") else {
            return (Vec::new(), Vec::new());
        };
        let payloads = match &field.body {
            FieldBody::Handoffs(_, payloads) => payloads.clone(),
            FieldBody::Value(_) | FieldBody::Block(_) => Vec::new(),
        };
        let Some(value) = value_of(lower, "handoffs", field) else {
            return (Vec::new(), Vec::new());
        };
        // `handoffs = escalation(reason: string)`: a payload outside the brackets, which only
        // the bracketed list can hold (or a payload that does not read as parameters).
        if let ExprKind::Call { callee, .. } = &value.kind
            && let [target] = callee.as_slice()
        {
            let d = lower
                .diag(Code::TENX0108, "`handoffs` must be a list of names", value.span)
                .label("found a call")
                .help(format!(
                    "write a handoff with a payload inside the list, its parameters like a tool's: `handoffs = [{}(reason: string \"Why\")]`",
                    target.name
                ));
            lower.report(d);
            // The target is still a handoff, so its edge is not reported as well.
            return (vec![target.clone()], Vec::new());
        }
        (ident_list(lower, "handoffs", &value), payloads)
    }
}
