//! Lowering of `agent` declarations and their tool selections.

use super::blocks::{Fields, expected};
use super::model::{decl_name, empty_block};
use super::{Lower, child};
use crate::ast::{AgentDecl, Expr, ExprKind, ToolSelector};
use tenx_grammar::Rule;
use tenx_grammar::pest::iterators::Pair;

impl Lower<'_> {
    pub(super) fn agent(&mut self, pair: Pair<'_, Rule>) -> AgentDecl {
        let span = self.span(&pair);
        let name = decl_name(self, &pair);
        let block = child(&pair, Rule::block).map(|b| self.block(b));
        let mut fields = Fields::new(
            block.unwrap_or_else(|| empty_block(span)),
            format!("agent `{}`", name.name),
        );
        let model = fields.ident(self, "model");
        let prompt = fields.string(self, "prompt");
        let tools = fields
            .value(self, "tools")
            .map(|v| self.tool_selection(&v))
            .unwrap_or_default();
        let (handoffs, payloads) = fields.handoffs(self);
        let output = fields
            .value(self, "output")
            .filter(|v| !self.typed_output(&name.name, v))
            .and_then(|v| self.schema_ref("output", v));
        let guard = fields
            .value(self, "guard")
            .map(|v| self.validator_uses("guard", &v))
            .unwrap_or_default();
        let retries = fields.count(self, "retries");
        let input = fields
            .value(self, "input")
            .and_then(|v| self.agent_input(&name.name, v));
        let agent_tools = fields.agent_tools(self);
        let description = fields.string(self, "description");
        fields.require(self, &model, "model", "model = my_model");
        fields.require(self, &prompt, "prompt", "prompt = \"You are …\"");
        fields.finish(self);
        AgentDecl {
            name,
            model,
            prompt,
            tools,
            handoffs,
            output,
            span,
            guard,
            retries,
            payloads,
            input,
            agent_tools,
            description,
        }
    }

    /// `tagged(a) + [x, y]`, `[x, tagged(b)]` or a single name.
    fn tool_selection(&mut self, v: &Expr) -> Vec<ToolSelector> {
        let mut out = Vec::new();
        self.collect_selection(v, &mut out);
        out
    }

    fn collect_selection(&mut self, v: &Expr, out: &mut Vec<ToolSelector>) {
        match &v.kind {
            ExprKind::Join(terms) | ExprKind::List(terms) => {
                for t in terms {
                    self.collect_selection(t, out);
                }
            }
            ExprKind::Path(p) if p.len() == 1 => out.extend(p.first().cloned().map(ToolSelector::Named)),
            ExprKind::Call { callee, args }
                if callee.len() == 1 && callee.first().is_some_and(|c| c.name == "tagged") =>
            {
                let mut tags = Vec::new();
                for arg in args {
                    match arg.value.as_ident() {
                        Some(tag) if arg.name.is_none() => tags.push(tag.clone()),
                        _ => expected(self, "tagged", "tag names", &arg.value),
                    }
                }
                out.push(ToolSelector::Tagged { tags, span: v.span });
            }
            _ => expected(
                self,
                "tools",
                "tool names, `tagged(…)`, or lists of them joined with `+`",
                v,
            ),
        }
    }
}
