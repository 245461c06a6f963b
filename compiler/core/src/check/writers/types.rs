//! Writers against the fields they write, by type: the final answer of an agent node whose
//! `output` declares a property of a state field's name must fit that field: the same kind of
//! value (a string, a number, a boolean, a list, an object), and for an enum field only labels it
//! holds (`TENX0341`). And a route's label arm must be a label something can write: when every
//! writer of the `by` field is an agent's `output` or an interrupt answer with fixed labels, a
//! label none of them gives is never taken (`TENX0342`).

use super::super::Facts;
use super::Writer;
use crate::ast::{ArmKind, GraphDecl, Param};
use crate::resolve::Located;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, Span};

/// The kind of a JSON Schema's values, when it says one: an enum of strings is a string.
fn kind(schema: &Value) -> Option<&'static str> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().all(Value::is_string).then_some("a string");
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => Some("a string"),
        Some("integer" | "number") => Some("a number"),
        Some("boolean") => Some("a boolean"),
        Some("array") => Some("a list"),
        Some("object") => Some("an object"),
        _ => None,
    }
}

fn labels(schema: &Value) -> Option<&Vec<Value>> {
    schema.get("enum").and_then(Value::as_array)
}

/// The output property schemas of each agent node of `graph`, by property name.
fn outputs(facts: &Facts<'_>, graph: &Located<GraphDecl>) -> BTreeMap<String, Vec<(String, Value)>> {
    let program = facts.program;
    let mut out: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for node in &graph.decl.nodes {
        let Some(agent) = program
            .lookup(&node.name)
            .and_then(|s| s.decl.agent())
            .and_then(|a| program.agents.get(a))
        else {
            continue;
        };
        let Some(output) = &agent.decl.output else { continue };
        let Some(lowered) = crate::schema::lower_schema_ref(program, agent.file, output, &mut Vec::new()) else {
            continue;
        };
        let Some(properties) = lowered.value.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, schema) in properties {
            out.entry(name.clone())
                .or_default()
                .push((node.name.clone(), schema.clone()));
        }
    }
    out
}

pub(super) fn check(
    facts: &Facts<'_>,
    graph: &Located<GraphDecl>,
    written: &BTreeMap<String, BTreeSet<Writer>>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let outputs = outputs(facts, graph);
    let graph_name = &graph.decl.name.name;
    let mut fields: BTreeMap<&str, (&Param, Value)> = BTreeMap::new();
    for field in &graph.decl.state {
        let Some(lowered) = crate::schema::lower_type(facts.program, graph.file, &field.ty, &mut Vec::new()) else {
            continue;
        };
        fields.insert(field.name.name.as_str(), (field, lowered.value));
    }
    for (name, (field, schema)) in &fields {
        for (agent, property) in outputs.get(*name).into_iter().flatten() {
            let problem = match (kind(property), kind(schema)) {
                (Some(given), Some(held)) if given != held => Some(format!("gives {given}")),
                _ => match (labels(property), labels(schema)) {
                    (Some(given), Some(held)) => given
                        .iter()
                        .find(|v| !held.contains(v))
                        .map(|v| format!("can give {v}")),
                    _ => None,
                },
            };
            let Some(problem) = problem else { continue };
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0341,
                    format!("the `output` of agent node `{agent}` writes `{name}`, and {problem}, which the state field `{name}` of graph `{graph_name}` cannot hold"),
                    graph.file,
                    field.ty.span(),
                )
                .label("the answer does not always fit this field")
                .help(format!("give `{name}` the type of the agent's `{name}` property, with every label it can give, or rename one of them"))
                .note("each property of an agent's answer is written into the state field of its name"),
            );
        }
    }
    for route in &graph.decl.routes {
        let Some(by) = &route.by else { continue };
        let Some(writers) = written.get(&by.name) else { continue };
        let mut producible: BTreeSet<String> = BTreeSet::new();
        let mut open = false;
        for writer in writers {
            let schema = match writer {
                Writer::AgentOutput(agent) => outputs
                    .get(&by.name)
                    .and_then(|o| o.iter().find(|(a, _)| a == agent))
                    .map(|(_, s)| s.clone()),
                Writer::Input | Writer::ToolResult(_) | Writer::Answer(_) => None,
            };
            match schema.as_ref().and_then(labels) {
                Some(values) => producible.extend(values.iter().filter_map(Value::as_str).map(str::to_owned)),
                None => open = true,
            }
        }
        if open {
            continue;
        }
        for arm in &route.arms {
            let ArmKind::Label(label, span) = &arm.kind else {
                continue;
            };
            // A label the field itself cannot hold is `TENX0308`'s.
            let held = fields.get(by.name.as_str()).and_then(|(_, s)| labels(s));
            if producible.contains(label) || !held.is_some_and(|h| h.iter().any(|v| v.as_str() == Some(label.as_str())))
            {
                continue;
            }
            diagnostics.push(unproduced(graph, &by.name, label, *span, &producible));
        }
    }
}

fn unproduced(
    graph: &Located<GraphDecl>,
    field: &str,
    label: &str,
    span: Span,
    producible: &BTreeSet<String>,
) -> Diagnostic {
    let list = producible
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect::<Vec<_>>()
        .join(", ");
    Diagnostic::new(
        Code::TENX0342,
        format!("no writer of `{field}` ever gives \"{label}\", so this arm is never taken"),
        graph.file,
        span,
    )
    .label("never produced")
    .help(format!(
        "the agents that write `{field}` give {list}: add \"{label}\" to their `output`, or remove the arm"
    ))
    .note(format!(
        "`{field}` is written only by agents' answers, whose schemas fix the labels they can give"
    ))
}
