//! Self-checks of argument-dependent risk: no rule gives `prohibited`, and `Tool.risk` is exactly
//! the worst case of the base and the rules, so an artifact edited to lower a tool's worst case
//! (and slip past the approval policy) is refused.

use super::Problems;
use crate::model::{Artifact, Condition, Risk};

pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    for (name, tool) in &artifact.tools {
        let Some(rules) = &tool.risk_rules else { continue };
        let params = tool.parameters.to_value();
        let properties = params.get("properties").and_then(|p| p.as_object());
        for (index, rule) in rules.rules.iter().enumerate() {
            for field in fields(&rule.condition) {
                if !properties.is_some_and(|p| p.contains_key(field)) {
                    problems.push(format!(
                        "tool `{name}`: risk rule {index} reads `{field}`, which is not a parameter"
                    ));
                }
            }
            if rule.risk == Risk::Prohibited {
                problems.push(format!("tool `{name}`: risk rule {index} gives `prohibited`"));
            }
            if rule.risk > tool.risk {
                problems.push(format!(
                    "tool `{name}`: risk rule {index} gives `{}`, above the tool's risk `{}`",
                    risk_name(rule.risk),
                    risk_name(tool.risk)
                ));
            }
        }
        if rules.base == Risk::Prohibited {
            problems.push(format!("tool `{name}`: risk rules with a `prohibited` base"));
        }
        let worst = rules.worst_case();
        if worst != tool.risk {
            problems.push(format!(
                "tool `{name}`: `risk` is `{}`, but its risk rules can give at most `{}`",
                risk_name(tool.risk),
                risk_name(worst)
            ));
        }
    }
}

fn risk_name(risk: Risk) -> &'static str {
    match risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
        Risk::Prohibited => "prohibited",
    }
}

/// The first element of every field path the condition reads.
fn fields(condition: &Condition) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![condition];
    while let Some(c) = stack.pop() {
        match c {
            Condition::Or { conditions } | Condition::And { conditions } => stack.extend(conditions),
            Condition::Not { condition } => stack.push(condition),
            Condition::Compare { field, .. } | Condition::Truthy { field } => {
                out.extend(field.first().map(String::as_str));
            }
        }
    }
    out
}
