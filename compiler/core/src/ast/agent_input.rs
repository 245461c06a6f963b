//! An agent's `input = …`: what its model is shown of the conversation before its own turn.

use super::{Expr, Shift};
use tenx_diagnostics::Span;

/// `input = conversation | none | last(N) | "template"`, as written.
#[derive(Debug, Clone)]
pub enum AgentInput {
    /// `conversation`: the whole conversation (the default), at this span.
    Conversation(Span),
    /// `none`: no earlier message, at this span.
    None(Span),
    /// `last(N)`: the last `count` messages; `span` is the number's. The range is checked later.
    Last {
        /// `N` as written.
        count: i64,
        /// Where `N` is written.
        span: Span,
    },
    /// `"…"`: one user message rendered from this template over the state.
    Template(Expr),
}

impl AgentInput {
    /// The template of a template input.
    pub fn template(&self) -> Option<&Expr> {
        match self {
            Self::Template(expr) => Some(expr),
            _ => None,
        }
    }
}

impl Shift for AgentInput {
    fn shift(&mut self, by: i64) {
        match self {
            Self::Conversation(span) | Self::None(span) | Self::Last { span, .. } => span.shift(by),
            Self::Template(expr) => expr.shift(by),
        }
    }
}
