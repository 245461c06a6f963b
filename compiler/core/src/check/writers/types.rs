//! Writers against the fields they write, by type: the final answer of an agent node whose
//! `output` declares a property of a state field's name, and the payload of a handoff an agent
//! node takes that declares a parameter of its name, must fit that field: the same kind of value
//! (a string, a number, a boolean, a list, an object), and for an enum field only labels it holds
//! (`TENX0341`). And a route's label arm must be a label something can write: when every writer
//! of the `by` field is an agent's `output` or a handoff payload with fixed labels, a label none
//! of them gives is never taken (`TENX0342`).

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

/// What one agent node gives a state field: a property of its `output`, or a parameter of the
/// payload of its handoff to `handoff` (`Some(target)`).
struct Given {
    node: String,
    handoff: Option<String>,
    schema: Value,
}

/// The output property and payload parameter schemas of each agent node of `graph`, by name.
fn outputs(facts: &Facts<'_>, graph: &Located<GraphDecl>) -> BTreeMap<String, Vec<Given>> {
    let program = facts.program;
    let mut out: BTreeMap<String, Vec<Given>> = BTreeMap::new();
    for node in &graph.decl.nodes {
        let Some(agent) = program
            .lookup(&node.name)
            .and_then(|s| s.decl.agent())
            .and_then(|a| program.agents.get(a))
        else {
            continue;
        };
        for payload in &agent.decl.payloads {
            let lowered = crate::schema::lower_params(program, agent.file, &payload.params, &mut Vec::new());
            let properties = lowered.value.get("properties").and_then(Value::as_object);
            for (name, schema) in properties.into_iter().flatten() {
                out.entry(name.clone()).or_default().push(Given {
                    node: node.name.clone(),
                    handoff: Some(payload.target.name.clone()),
                    schema: schema.clone(),
                });
            }
        }
        let Some(output) = &agent.decl.output else { continue };
        let Some(lowered) = crate::schema::lower_schema_ref(program, agent.file, output, &mut Vec::new()) else {
            continue;
        };
        let Some(properties) = lowered.value.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, schema) in properties {
            out.entry(name.clone()).or_default().push(Given {
                node: node.name.clone(),
                handoff: None,
                schema: schema.clone(),
            });
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
        for given in outputs.get(*name).into_iter().flatten() {
            let property = &given.schema;
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
            let agent = &given.node;
            let d = match &given.handoff {
                None => Diagnostic::new(
                    Code::TENX0341,
                    format!("the `output` of agent node `{agent}` writes `{name}`, and {problem}, which the state field `{name}` of graph `{graph_name}` cannot hold"),
                    graph.file,
                    field.ty.span(),
                )
                .label("the answer does not always fit this field")
                .help(format!("give `{name}` the type of the agent's `{name}` property, with every label it can give, or rename one of them"))
                .note("each property of an agent's answer is written into the state field of its name"),
                Some(target) => Diagnostic::new(
                    Code::TENX0341,
                    format!("the payload of the handoff from agent node `{agent}` to `{target}` writes `{name}`, and {problem}, which the state field `{name}` of graph `{graph_name}` cannot hold"),
                    graph.file,
                    field.ty.span(),
                )
                .label("the payload does not always fit this field")
                .help(format!("give `{name}` the type of the payload parameter `{name}`, with every label it can give, or rename one of them"))
                .note("each parameter of a handoff's payload is written into the state field of its name when the handoff is taken"),
            };
            diagnostics.push(d);
        }
    }
    for route in &graph.decl.routes {
        let Some(by) = &route.by else { continue };
        let Some(writers) = written.get(&by.name) else { continue };
        let mut producible: BTreeSet<String> = BTreeSet::new();
        let mut open = false;
        for writer in writers {
            // The schemas this writer gives the field: one output property, or the payload
            // parameter of each handoff of the node that declares it.
            let schemas: Vec<&Value> = match writer {
                Writer::AgentOutput(agent) | Writer::Payload(agent) => {
                    let payload = matches!(writer, Writer::Payload(_));
                    outputs
                        .get(&by.name)
                        .into_iter()
                        .flatten()
                        .filter(|g| &g.node == agent && g.handoff.is_some() == payload)
                        .map(|g| &g.schema)
                        .collect()
                }
                Writer::Input | Writer::ToolResult(_) | Writer::Answer(_) => Vec::new(),
            };
            if schemas.is_empty() {
                open = true;
            }
            for schema in schemas {
                match labels(schema) {
                    Some(values) => producible.extend(values.iter().filter_map(Value::as_str).map(str::to_owned)),
                    None => open = true,
                }
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
        "the agents that write `{field}` give {list}: add \"{label}\" to their `output` or handoff payload, or remove the arm"
    ))
    .note(format!(
        "`{field}` is written only by agents' answers and handoff payloads, whose schemas fix the labels they can give"
    ))
}
