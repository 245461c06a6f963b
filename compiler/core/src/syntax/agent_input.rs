//! An agent's `input = …`: `conversation`, `none`, `last(N)` with a whole number, or a template
//! string. Anything else is `TENX0210`; the range of `N` is checked with the other limits
//! (`TENX0702`, in `check/validators`), a template's placeholders with the prompt's
//! (`check/templates`).

use super::Lower;
use crate::ast::{AgentInput, Expr, ExprKind};
use tenx_diagnostics::Code;

/// What `input` may be, for help texts.
const FORMS: &str = "`conversation`, `none`, `last(N)` or a template string such as `\"Section {section}\"`";

impl Lower<'_> {
    /// Reads the value of `input`; a value of no known form is reported (`TENX0210`).
    pub(super) fn agent_input(&mut self, agent: &str, value: Expr) -> Option<AgentInput> {
        match &value.kind {
            ExprKind::Str(_) | ExprKind::Text(_) => return Some(AgentInput::Template(value)),
            ExprKind::Path(path) if path.len() == 1 => match path.first().map(|i| i.name.as_str()) {
                Some("conversation") => return Some(AgentInput::Conversation(value.span)),
                Some("none") => return Some(AgentInput::None(value.span)),
                Some("last") => {
                    let d = self
                        .diag(
                            Code::TENX0210,
                            format!("`last` in the `input` of agent `{agent}` has no count"),
                            value.span,
                        )
                        .label("how many messages?")
                        .help("write `last(N)` with a whole number, such as `last(2)` for the last 2 messages");
                    self.report(d);
                    return None;
                }
                Some(other) => {
                    let other = other.to_owned();
                    let mut d = self
                        .diag(
                            Code::TENX0210,
                            format!("unknown kind of input `{other}` in agent `{agent}`"),
                            value.span,
                        )
                        .label("not a kind of input");
                    d = match crate::suggest::did_you_mean(&other, ["conversation", "none", "last"].iter()) {
                        Some(close) => d.help(format!("did you mean `{close}`? `input` is {FORMS}")),
                        None => d.help(format!("`input` is {FORMS}; a template is written in quotes")),
                    };
                    self.report(d);
                    return None;
                }
                None => {}
            },
            ExprKind::Call { callee, args }
                if callee.len() == 1 && callee.first().is_some_and(|c| c.name == "last") =>
            {
                let count = match args.as_slice() {
                    [only] if only.name.is_none() => only.value.as_i64().map(|n| (n, only.value.span)),
                    _ => None,
                };
                if let Some((count, span)) = count {
                    return Some(AgentInput::Last { count, span });
                }
                let found = match args.as_slice() {
                    [only] => only.value.span,
                    _ => value.span,
                };
                let d = self
                    .diag(
                        Code::TENX0210,
                        format!("`last` in the `input` of agent `{agent}` takes one whole number"),
                        found,
                    )
                    .label("expected a whole number of messages")
                    .help("write `last(N)`, such as `last(2)` for the last 2 messages of the conversation");
                self.report(d);
                return None;
            }
            _ => {}
        }
        let d = self
            .diag(
                Code::TENX0210,
                format!("the `input` of agent `{agent}` must be {FORMS}"),
                value.span,
            )
            .label(format!("found {}", value.describe()))
            .help("`input` says what the model sees of the conversation; leave it out for all of it");
        self.report(d);
        None
    }
}
