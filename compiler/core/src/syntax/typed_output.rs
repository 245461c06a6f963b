//! An agent's `output` written as a typed field (`output = string`, `output = enum("pass",
//! "fail")`, `output = int(min: 0)`), as porters write a scalar answer type. The final answer
//! of an agent with `output` is a JSON object whose properties are written into the state
//! fields of the same names, so a scalar has nowhere to go: this is refused with its own code
//! (`TENX0373`) that shows the object to write, instead of "unknown schema `string`".

use super::Lower;
use crate::ast::{Expr, ExprKind};
use tenx_diagnostics::Code;

/// The built-in type names a typed field starts with.
const TYPED: [&str; 7] = ["string", "int", "number", "bool", "enum", "list", "object"];

impl Lower<'_> {
    /// `true` (after reporting `TENX0373`) when `value`, an agent's `output`, is a typed field.
    pub(super) fn typed_output(&mut self, agent: &str, value: &Expr) -> bool {
        let name = match &value.kind {
            ExprKind::Path(p) if p.len() == 1 => p.first(),
            ExprKind::Call { callee, .. } if callee.len() == 1 => callee.first(),
            _ => None,
        };
        let Some(name) = name.filter(|n| TYPED.contains(&n.name.as_str())) else {
            return false;
        };
        let text = self
            .text_between(value.span.start as usize, value.span.end as usize)
            .to_owned();
        let property = match name.name.as_str() {
            "string" => "{ \"type\": \"string\" }".to_owned(),
            "int" => "{ \"type\": \"integer\" }".to_owned(),
            "number" => "{ \"type\": \"number\" }".to_owned(),
            "bool" => "{ \"type\": \"boolean\" }".to_owned(),
            "enum" => match &value.kind {
                ExprKind::Call { args, .. } => {
                    let labels: Vec<String> = args
                        .iter()
                        .filter_map(|a| a.value.to_json())
                        .map(|v| v.to_string())
                        .collect();
                    format!("{{ \"enum\": [{}] }}", labels.join(", "))
                }
                _ => "{ \"enum\": [\"a\", \"b\"] }".to_owned(),
            },
            "list" => "{ \"type\": \"array\" }".to_owned(),
            _ => "{ \"type\": \"object\" }".to_owned(),
        };
        let d = self
            .diag(
                Code::TENX0373,
                format!("the `output` of agent `{agent}` is a typed field, `{text}`, not a schema of an object"),
                value.span,
            )
            .label("an agent's answer is a JSON object")
            .note("each property of the answer is written into the graph's state field of the same name, which routes and prompts read; a bare value has no name to be written under")
            .help(format!(
                "name the answer: `output = {{ \"type\": \"object\", \"properties\": {{ \"answer\": {property} }}, \"required\": [\"answer\"] }}`, and declare a state field `answer` to route on it"
            ));
        self.report(d);
        true
    }
}
