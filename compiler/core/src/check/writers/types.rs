//! Writers against the fields they write, by type: the final answer of an agent node whose
//! `output` declares a property of a state field's name, and the payload of a handoff an agent
//! node takes that declares a parameter of its name, must fit that field: the same kind of value
//! (a string, a number, a boolean, a list, an object), and for an enum field only labels it holds
//! (`TENX0341`). The route label arms against every writer of the `by` field (`TENX0342`) are in
//! `labels.rs`.

use super::super::Facts;
use super::Writer;
use crate::ast::{GraphDecl, Param};
use crate::resolve::Located;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic};

/// The kind of a JSON Schema's values, when it says one: an enum of strings is a string.
pub(crate) fn kind(schema: &Value) -> Option<&'static str> {
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

/// Why a value of the schema `given` may not fit a field of the schema `held` ("gives a
/// number", "can give \"x\""): a different kind of value, or a label the field does not hold.
pub(crate) fn misfit(given: &Value, held: &Value) -> Option<String> {
    match (kind(given), kind(held)) {
        (Some(given), Some(held)) if given != held => Some(format!("gives {given}")),
        _ => match (labels(given), labels(held)) {
            (Some(given), Some(held)) => given
                .iter()
                .find(|v| !held.contains(v))
                .map(|v| format!("can give {v}")),
            _ => None,
        },
    }
}

/// The labels a schema fixes: its `enum`.
pub(super) fn labels(schema: &Value) -> Option<&Vec<Value>> {
    schema.get("enum").and_then(Value::as_array)
}

/// What one agent node gives a state field: a property of its `output`, or a parameter of the
/// payload of its handoff to `handoff` (`Some(target)`).
pub(super) struct Given {
    pub(super) node: String,
    pub(super) handoff: Option<String>,
    pub(super) schema: Value,
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
            let Some(problem) = misfit(&given.schema, schema) else {
                continue;
            };
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
    super::labels::check(facts, graph, written, &outputs, &fields, diagnostics);
}
