//! Lowering of a tool's `risk_rules { high = "amount_cents > 10000" }`: each entry is a risk
//! level and a condition string, read with the route-condition grammar. The entries keep their
//! order (the runtime tries them in order). A rule may not give `prohibited`: a tool that may be
//! prohibited must be split. The conditions are typed against the parameters in
//! `check/risk_rules`.

use super::Lower;
use super::blocks::{BlockData, FieldBody};
use crate::ast::{ExprKind, Risk, RiskRule};
use tenx_diagnostics::{Code, Span};
use tenx_grammar::pest::Parser;
use tenx_grammar::{Rule, TenxParser};

impl Lower<'_> {
    pub(super) fn risk_rules(&mut self, block: BlockData) -> Vec<RiskRule> {
        let mut rules = Vec::new();
        for field in block.fields {
            let risk = match field.key.name.as_str() {
                "low" => Risk::Low,
                "medium" => Risk::Medium,
                "high" => Risk::High,
                "prohibited" => {
                    let d = self
                        .diag(Code::TENX0624, "a risk rule cannot make a call `prohibited`", field.key.span)
                        .label("a prohibited tool is never offered, so no call can reach this rule")
                        .help("split the tool: a separate `prohibited` tool, or one whose parameters cannot express the forbidden call");
                    self.report(d);
                    continue;
                }
                other => {
                    let help = crate::suggest::did_you_mean(other, &["low", "medium", "high"])
                        .map(|s| format!("did you mean `{s}`?"));
                    let d = self
                        .diag(Code::TENX0623, format!("`{other}` is not a risk level"), field.key.span)
                        .label("a risk rule starts with `low`, `medium` or `high`")
                        .maybe_help(help.or_else(|| Some("write `high = \"amount_cents > 10000\"`".to_string())));
                    self.report(d);
                    continue;
                }
            };
            let (FieldBody::Value(value) | FieldBody::Handoffs(value, _)) = field.body else {
                let d = self
                    .diag(Code::TENX0622, "a risk rule's condition must be a string", field.span)
                    .label("found a block")
                    .help(format!("write `{} = \"amount_cents > 10000\"`", risk.as_str()));
                self.report(d);
                continue;
            };
            let ExprKind::Str(text) = &value.kind else {
                let d = self
                    .diag(Code::TENX0622, "a risk rule's condition must be a string", value.span)
                    .label(format!("found {}", value.describe()))
                    .help(format!(
                        "write the condition in quotes: `{} = \"amount_cents > 10000\"`",
                        risk.as_str()
                    ));
                self.report(d);
                continue;
            };
            if let Some(condition) = self.condition_text(text, value.span) {
                rules.push(RiskRule {
                    risk,
                    risk_span: field.key.span,
                    condition,
                    span: value.span,
                });
            }
        }
        rules
    }

    /// A `prohibited` tool with risk rules: no call of it may run, so the rules say nothing
    /// (and the artifact refuses a prohibited base). The rules are dropped.
    pub(super) fn prohibited_with_rules(&mut self, risk: Option<(Risk, Span)>, rules: &mut Vec<RiskRule>) {
        if let (Some((Risk::Prohibited, span)), Some(first)) = (risk, rules.first()) {
            let d = self
                .diag(Code::TENX0624, "a `prohibited` tool cannot have risk rules", span)
                .label("no call of a prohibited tool ever runs")
                .secondary(self.file, first.risk_span, "so this rule could never apply")
                .help("remove `risk_rules`, or split the tool: the calls that may run in a tool of their own");
            self.report(d);
            rules.clear();
        }
    }

    /// Reads `text`, the contents of the string at `span`, as a route condition.
    fn condition_text(&mut self, text: &str, span: Span) -> Option<crate::ast::Condition> {
        let leading = text.len() - text.trim_start().len();
        let trimmed = text.trim();
        // The condition's offsets in the file: after the opening quote (exact unless the string
        // holds escapes).
        let base = span.start as usize + 1 + leading;
        let parsed = TenxParser::parse(Rule::condition, trimmed)
            .ok()
            .and_then(|mut pairs| pairs.next())
            .filter(|pair| pair.as_span().end() == trimmed.len());
        let Some(pair) = parsed else {
            let d = self
                .diag(Code::TENX0622, "this risk rule's condition cannot be read", span)
                .label("not a condition over the parameters")
                .help("write a comparison like `amount_cents > 10000` or `country in [\"US\", \"CA\"]`, joined with `and`, `or`, `not`")
                .note("the condition grammar is the one of a route's `when` arm");
            self.report(d);
            return None;
        };
        let mut inner = Lower {
            file: self.file,
            base,
            text: trimmed,
            diagnostics: &mut *self.diagnostics,
            broken: &mut *self.broken,
            truncated: false,
            repairs: &mut *self.repairs,
        };
        Some(inner.condition(pair))
    }
}
