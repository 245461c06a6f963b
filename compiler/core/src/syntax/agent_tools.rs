//! Lowering of an agent's `agents = [spanish(text: string "The text"), critic]`: the agents its
//! model may call as tools, each with the parameter list of the call when one is written.
//!
//! The grammar reads a bracketed `agents` list with `agents_entry` (the same list as
//! `handoffs`, see `syntax/handoffs.rs`); any other form (`agents = critic`) is an ordinary
//! entry, read as a list of names.

use super::Lower;
use super::blocks::{FieldBody, Fields, ident_list, value_of};
use crate::ast::{AgentToolUse, ExprKind};
use tenx_diagnostics::Code;

impl Fields {
    /// Takes `agents`: the agents called as tools (a single name is accepted too), with the
    /// parameter list written with each.
    pub fn agent_tools(&mut self, lower: &mut Lower<'_>) -> Vec<AgentToolUse> {
        let Some(field) = self.take(lower, "agents") else {
            return Vec::new();
        };
        let lists = match &field.body {
            FieldBody::Handoffs(_, lists) => lists.clone(),
            FieldBody::Value(_) | FieldBody::Block(_) => Vec::new(),
        };
        let Some(value) = value_of(lower, "agents", field) else {
            return Vec::new();
        };
        // `agents = spanish(text: string)`: parameters outside the brackets, which only the
        // bracketed list can hold.
        if let ExprKind::Call { callee, .. } = &value.kind
            && let [agent] = callee.as_slice()
        {
            let d = lower
                .diag(Code::TENX0108, "`agents` must be a list of names", value.span)
                .label("found a call")
                .help(format!(
                    "write the parameters inside the list, like a tool's: `agents = [{}(text: string \"What to ask\")]`",
                    agent.name
                ));
            lower.report(d);
            return vec![AgentToolUse {
                agent: agent.clone(),
                params: None,
            }];
        }
        ident_list(lower, "agents", &value)
            .into_iter()
            .map(|agent| AgentToolUse {
                params: lists
                    .iter()
                    .find(|list| list.target.span == agent.span)
                    .map(|list| list.params.clone()),
                agent,
            })
            .collect()
    }
}
