//! Route label arms against every writer of the route's `by` field (`TENX0342`): an arm for a
//! label that no writer can ever give is never taken. Each writer gives:
//!
//! - the run's input (the field is required or has a default): any label the field holds;
//! - an agent node's `output` property of the field's name, or a parameter of that name of the
//!   payload of a handoff it takes: the labels of its `enum`, or any label when it fixes none;
//! - an interrupt answer named in `answers`: for one property of the answer, the labels of that
//!   property's `enum` in the response schema, any label when it is a string without one, and
//!   none when it holds no strings; the whole answer is an object and gives no label;
//! - a tool result named in `results`: the labels of the `enum` of the tool's result schema (the
//!   runtime checks each result against it), any label when the result is a string without one
//!   (or its type is unknown), and none when it is another kind of value. A result written at a
//!   path inside the field is counted as giving any label.
//!
//! A writer whose schema cannot be read (an unknown tool, an interrupt without a `response`)
//! counts as giving any label, so the rule never refuses an arm it cannot prove dead.

use super::super::Facts;
use super::Writer;
use super::types::{Given, labels};
use crate::ast::{ArmKind, GraphDecl, Param};
use crate::resolve::Located;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, Span};

/// What one writer can give a field.
enum Gives {
    /// Exactly these labels.
    Labels(Vec<String>),
    /// Any label the field holds.
    Any,
}

/// What a value of `schema` gives as a label: its `enum`'s strings; any label for a string
/// (or unknown kind) without one; nothing for another kind of value.
fn gives_of(schema: &Value) -> Gives {
    if let Some(values) = labels(schema) {
        return Gives::Labels(values.iter().filter_map(Value::as_str).map(str::to_owned).collect());
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer" | "number" | "boolean" | "array" | "object" | "null") => Gives::Labels(Vec::new()),
        _ => Gives::Any,
    }
}

/// What the writer `writer` of the field `field` of `graph` can give.
fn gives(
    facts: &Facts<'_>,
    graph: &Located<GraphDecl>,
    field: &str,
    writer: &Writer,
    outputs: &BTreeMap<String, Vec<Given>>,
) -> Gives {
    let program = facts.program;
    match writer {
        // A subgraph's output gives whatever its inner field holds, and a map's item whatever the
        // list holds: not a fixed set of labels.
        Writer::Input | Writer::Subgraph(_) | Writer::MapItem(_) => Gives::Any,
        Writer::AgentOutput(agent) | Writer::Payload(agent) => {
            // An output property, or the payload parameter of each handoff of the node.
            let payload = matches!(writer, Writer::Payload(_));
            let schemas: Vec<&Value> = outputs
                .get(field)
                .into_iter()
                .flatten()
                .filter(|g| &g.node == agent && g.handoff.is_some() == payload)
                .map(|g| &g.schema)
                .collect();
            if schemas.is_empty() {
                return Gives::Any;
            }
            let mut found = Vec::new();
            for schema in schemas {
                match labels(schema) {
                    Some(values) => found.extend(values.iter().filter_map(Value::as_str).map(str::to_owned)),
                    None => return Gives::Any,
                }
            }
            Gives::Labels(found)
        }
        Writer::ToolResult(node) => {
            let whole = graph
                .decl
                .results
                .iter()
                .any(|w| w.node.name == *node && w.field.name == field && w.path.is_empty());
            let Some(result) = program.tool(node).and_then(|t| Some((t.file, t.decl.result.as_ref()?))) else {
                return Gives::Any;
            };
            if !whole {
                return Gives::Any;
            }
            match crate::schema::lower_type(program, result.0, result.1, &mut Vec::new()) {
                Some(lowered) => gives_of(&lowered.value),
                None => Gives::Any,
            }
        }
        Writer::Answer(node) => {
            let Some(interrupt) = program
                .lookup(node)
                .and_then(|s| s.decl.interrupt())
                .and_then(|i| program.interrupts.get(i))
            else {
                return Gives::Any;
            };
            let writes = graph
                .decl
                .answers
                .iter()
                .filter(|w| w.node.name == *node && w.field.name == field);
            let mut found = Vec::new();
            for write in writes {
                let Some(property) = &write.property else {
                    continue; // the whole answer is an object: no label
                };
                let response = interrupt
                    .decl
                    .response
                    .as_ref()
                    .and_then(|r| crate::schema::lower_schema_ref(program, interrupt.file, r, &mut Vec::new()));
                let schema = response
                    .as_ref()
                    .and_then(|r| r.value.get("properties"))
                    .and_then(|p| p.get(&property.name));
                match schema.map(gives_of) {
                    Some(Gives::Labels(values)) => found.extend(values),
                    Some(Gives::Any) | None => return Gives::Any,
                }
            }
            Gives::Labels(found)
        }
    }
}

/// Reports each label arm of `graph`'s routes that no writer of its `by` field can give.
pub(super) fn check(
    facts: &Facts<'_>,
    graph: &Located<GraphDecl>,
    written: &BTreeMap<String, BTreeSet<Writer>>,
    outputs: &BTreeMap<String, Vec<Given>>,
    fields: &BTreeMap<&str, (&Param, Value)>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for route in &graph.decl.routes {
        let Some(by) = &route.by else { continue };
        let Some(writers) = written.get(&by.name) else { continue };
        let mut producible: BTreeSet<String> = BTreeSet::new();
        let mut open = false;
        for writer in writers {
            match gives(facts, graph, &by.name, writer, outputs) {
                Gives::Labels(values) => producible.extend(values),
                Gives::Any => open = true,
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
            diagnostics.push(unproduced(graph, &by.name, label, *span, &producible, writers));
        }
    }
}

fn describe(writer: &Writer) -> String {
    match writer {
        Writer::Input => "the run's input".to_string(),
        Writer::AgentOutput(agent) => format!("the `output` of `{agent}`"),
        Writer::Payload(agent) => format!("a handoff payload of `{agent}`"),
        Writer::ToolResult(tool) => format!("the result of `{tool}`"),
        Writer::Answer(interrupt) => format!("the answer to `{interrupt}`"),
        Writer::Subgraph(node) => format!("the `output` of subgraph node `{node}`"),
        Writer::MapItem(node) => format!("the items of the map out of `{node}`"),
    }
}

fn unproduced(
    graph: &Located<GraphDecl>,
    field: &str,
    label: &str,
    span: Span,
    producible: &BTreeSet<String>,
    writers: &BTreeSet<Writer>,
) -> Diagnostic {
    let list = producible
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let gives = if producible.is_empty() {
        "give no label".to_string()
    } else {
        format!("give {list}")
    };
    let who = match writers.iter().map(describe).collect::<Vec<_>>().as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    Diagnostic::new(
        Code::TENX0342,
        format!("no writer of `{field}` ever gives \"{label}\", so this arm is never taken"),
        graph.file,
        span,
    )
    .label("never produced")
    .help(format!(
        "the writers of `{field}` {gives}: let one of them give \"{label}\" (an `enum` label of its schema), or remove the arm"
    ))
    .note(format!(
        "`{field}` is written only by {who}, whose schemas fix the labels they can give"
    ))
}
