//! Who writes each state field of a graph, collected in one place, and the rules built on it
//! (types of writers against fields, `TENX0341`, in `writers/types.rs`; route labels no writer
//! gives, `TENX0342`, in `writers/labels.rs`): a
//! field that something reads must be something a run can have set (`TENX0340`). A field is
//! written by the run's input when it is required at the start or has a default, by the final
//! answer of an agent node whose `output` declares a property of its name, by the payload of a
//! handoff an agent node takes when the payload declares a parameter of its name, by a tool
//! result the graph's `results` names, by an interrupt answer its `answers` names, by the
//! `output` of a subgraph node's mapping in `subgraphs`, and (in each branch of a `map`) by the
//! map's item in its `item` field (never by a tool result of a call made inside an agent called
//! as a tool: only the called agent's answer comes back). It is read by a subgraph node's `input`, by a route
//! (`by` and conditions), by the prompt and template `input` of an agent node and of every agent
//! it calls as a tool at any depth, by the message, target, value and
//! evidence of an interrupt node, by a tool node's required parameter of its name, and by a
//! required bound parameter (`bind = { p: state.field }`) and the state evidence of the approval
//! of every tool that can run in the graph (a tool node's, or one an agent node can call, itself
//! or through agents it calls as tools), since the call fails without the one and the approver
//! would be shown the other unset. A field
//! that is read, not an input, and written by nothing is unset on every run: a route on it always
//! takes `else`, and a placeholder always renders empty.

use super::Facts;
use crate::ast::{ArmKind, Condition, Expr, ExprKind, GraphDecl};
use crate::resolve::{DeclKind, Located};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

mod labels;
pub(crate) mod types;

/// One place that writes a state field.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Writer {
    /// The run's input: the field is required at the start, or has a default.
    Input,
    /// The final answer of this agent node (its `output` declares the field).
    AgentOutput(String),
    /// A tool result named in `results` (a tool node or a tool an agent node calls).
    ToolResult(String),
    /// An interrupt node's answer named in `answers`.
    Answer(String),
    /// The payload of a handoff this agent node takes (a payload parameter of the field's name).
    Payload(String),
    /// The `output` of this subgraph node's mapping in `subgraphs`.
    Subgraph(String),
    /// The item of a `map` out of this node, in each of its branches (the map's `item`).
    MapItem(String),
}

/// Every writer of every top-level state field of `graph`, by field name.
pub fn writers(facts: &Facts<'_>, graph: &Located<GraphDecl>) -> BTreeMap<String, BTreeSet<Writer>> {
    let decl = &graph.decl;
    let program = facts.program;
    let mut out: BTreeMap<String, BTreeSet<Writer>> = BTreeMap::new();
    for field in &decl.state {
        if !field.optional || field.default.is_some() {
            out.entry(field.name.name.clone()).or_default().insert(Writer::Input);
        }
    }
    for node in decl.nodes.iter() {
        let Some(agent) = program
            .lookup(&node.name)
            .and_then(|s| s.decl.agent())
            .and_then(|a| program.agents.get(a))
        else {
            continue;
        };
        for payload in &agent.decl.payloads {
            for param in &payload.params {
                out.entry(param.name.name.clone())
                    .or_default()
                    .insert(Writer::Payload(node.name.clone()));
            }
        }
        let Some(output) = &agent.decl.output else { continue };
        let lowered = crate::schema::lower_schema_ref(program, agent.file, output, &mut Vec::new());
        let properties = lowered
            .as_ref()
            .and_then(|l| l.value.get("properties"))
            .and_then(Value::as_object);
        for property in properties.into_iter().flat_map(|p| p.keys()) {
            out.entry(property.clone())
                .or_default()
                .insert(Writer::AgentOutput(node.name.clone()));
        }
    }
    for write in &decl.results {
        out.entry(write.field.name.clone())
            .or_default()
            .insert(Writer::ToolResult(write.node.name.clone()));
    }
    for write in &decl.answers {
        out.entry(write.field.name.clone())
            .or_default()
            .insert(Writer::Answer(write.node.name.clone()));
    }
    for map in &decl.subgraphs {
        for pair in &map.output {
            out.entry(pair.to.name.clone())
                .or_default()
                .insert(Writer::Subgraph(map.node.name.clone()));
        }
    }
    for fork in &decl.forks {
        if let Some(item) = &fork.item {
            out.entry(item.name.clone())
                .or_default()
                .insert(Writer::MapItem(fork.from.name.clone()));
        }
    }
    out
}

/// One read of a state field: the file and text that read it, and what it is.
struct Read {
    file: FileId,
    span: Span,
    what: &'static str,
}

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let mut bound = bound_reads(facts);
    for (g, graph) in facts.program.graphs.iter_enumerated() {
        let written = writers(facts, graph);
        types::check(facts, graph, &written, diagnostics);
        let mut reads: BTreeMap<String, Vec<Read>> = BTreeMap::new();
        collect_reads(facts, graph, &mut reads);
        for (field, read) in bound.remove(&g).into_iter().flatten() {
            reads.entry(field).or_default().push(read);
        }
        for field in &graph.decl.state {
            let name = &field.name.name;
            if written.contains_key(name) {
                continue;
            }
            let Some(found) = reads.get(name) else { continue };
            let graph_name = &graph.decl.name.name;
            let mut d = Diagnostic::new(
                Code::TENX0340,
                format!("state field `{name}` of graph `{graph_name}` is read, but nothing ever writes it"),
                graph.file,
                field.name.span,
            )
            .label("never set: optional, no default, and no writer");
            for read in found.iter().take(8) {
                d = d.secondary(read.file, read.span, format!("read by {}", read.what));
            }
            d = d
                .help(format!(
                    "write `{name}`: give it a default, make it required at the start, or name it in `results`, `answers`, an agent's `output`, a handoff's payload or a subgraph's `output`"
                ))
                .note("a field nothing writes is unset on every run: a route on it always takes `else`, a placeholder always renders empty");
            diagnostics.push(d);
        }
    }
}

/// The state fields tools read, per graph in which the tool can run (a tool node, or an agent
/// node that can call it, itself or through agents it calls as tools): a required bound
/// parameter's (the call fails when the field is unset) and the state evidence of its approval
/// (the approver would be shown an unset field).
fn bound_reads(facts: &Facts<'_>) -> BTreeMap<crate::resolve::GraphId, Vec<(String, Read)>> {
    let mut found: BTreeMap<crate::resolve::GraphId, Vec<(String, Read)>> = BTreeMap::new();
    for (t, tool) in facts.program.tools.iter_enumerated() {
        let params = super::evidence::tool_params(facts.program, &tool.decl);
        let evidence = tool
            .decl
            .approval
            .iter()
            .flat_map(|approval| &approval.evidence)
            .filter_map(|item| match super::evidence::lower_item(&params, item)? {
                tenx_artifact::Evidence::State(field) => Some((field, item.span, "an approval's evidence")),
                _ => None,
            });
        let mut reads: Vec<(String, Span, &'static str)> = evidence.collect();
        if let Some(ExprKind::Map(entries)) = tool.decl.bind.as_ref().map(|bind| &bind.kind) {
            let required = |name: &str| {
                tool.decl
                    .params
                    .iter()
                    .flatten()
                    .any(|p| p.name.name == name && !p.optional && p.default.is_none())
            };
            let sources = super::bound_args::lower(facts.program, &tool.decl);
            reads.extend(entries.iter().filter(|entry| required(&entry.key)).filter_map(|entry| {
                match sources.get(entry.key.as_str()) {
                    Some(tenx_artifact::BoundSource::State(field)) => {
                        Some((field.clone(), entry.value.span, "a bound argument"))
                    }
                    _ => None,
                }
            }));
        }
        if reads.is_empty() {
            continue;
        }
        for g in super::evidence::graphs_running_tool(facts, t) {
            for (field, span, what) in &reads {
                let read = Read {
                    file: tool.file,
                    span: *span,
                    what,
                };
                found.entry(g).or_default().push((field.clone(), read));
            }
        }
    }
    found
}

fn collect_reads(facts: &Facts<'_>, graph: &Located<GraphDecl>, reads: &mut BTreeMap<String, Vec<Read>>) {
    let program = facts.program;
    let file = graph.file;
    let mut add = |name: &str, file: FileId, span: Span, what: &'static str| {
        reads
            .entry(name.to_owned())
            .or_default()
            .push(Read { file, span, what });
    };
    for route in &graph.decl.routes {
        if let Some(by) = &route.by {
            add(&by.name, file, by.span, "a route");
        }
        let mut stack: Vec<&Condition> = route
            .arms
            .iter()
            .filter_map(|arm| match &arm.kind {
                ArmKind::When(c) => Some(c),
                _ => None,
            })
            .collect();
        while let Some(cond) = stack.pop() {
            match cond {
                Condition::Or(parts) | Condition::And(parts) => stack.extend(parts.iter()),
                Condition::Not(inner) => stack.push(inner),
                Condition::Compare { field, span, .. } => {
                    if let Some(first) = field.first() {
                        add(&first.name, file, *span, "a route condition");
                    }
                }
            }
        }
    }
    for map in &graph.decl.subgraphs {
        for pair in &map.input {
            add(&pair.from.name, file, pair.from.span, "a subgraph node's `input`");
        }
    }
    for node in &graph.decl.nodes {
        let Some(symbol) = program.lookup(&node.name) else {
            continue;
        };
        if let Some(agent) = symbol.decl.agent().and_then(|a| program.agents.get(a)) {
            for (root, span) in template_roots(facts, agent.file, agent.decl.prompt.as_ref()) {
                add(root, agent.file, span, "a prompt");
            }
            let input = agent.decl.input.as_ref().and_then(crate::ast::AgentInput::template);
            for (root, span) in template_roots(facts, agent.file, input) {
                add(root, agent.file, span, "an agent's input");
            }
        } else if let Some(interrupt) = symbol.decl.interrupt().and_then(|i| program.interrupts.get(i)) {
            let d = &interrupt.decl;
            let mut exprs: Vec<&Expr> = [&d.message, &d.target, &d.value].into_iter().flatten().collect();
            while let Some(expr) = exprs.pop() {
                match &expr.kind {
                    ExprKind::List(items) => exprs.extend(items.iter()),
                    ExprKind::Map(entries) => exprs.extend(entries.iter().map(|e| &e.value)),
                    _ => {
                        for (root, span) in template_roots(facts, interrupt.file, Some(expr)) {
                            add(root, interrupt.file, span, "an interrupt");
                        }
                    }
                }
            }
            for item in &d.evidence {
                if let Some(ident) = item.as_ident() {
                    add(&ident.name, interrupt.file, ident.span, "an interrupt's evidence");
                }
            }
        } else if let Some(tool) = symbol.decl.tool().and_then(|t| program.tools.get(t)) {
            for param in tool
                .decl
                .params
                .iter()
                .flatten()
                .filter(|p| !p.optional && p.default.is_none())
            {
                add(&param.name.name, file, node.span, "a tool node's argument");
            }
        }
    }
    // The agents its agent nodes call as tools, at any depth, render their prompts over this
    // state too.
    let roots = graph
        .decl
        .nodes
        .iter()
        .filter_map(|node| program.lookup_as(&node.name, &[DeclKind::Agent])?.decl.agent());
    for link in facts.agent_calls.reached_from(roots) {
        let Some(called) = program.agents.get(link.agent) else {
            continue;
        };
        for (root, span) in template_roots(facts, called.file, called.decl.prompt.as_ref()) {
            add(root, called.file, span, "the prompt of an agent called as a tool");
        }
        let input = called.decl.input.as_ref().and_then(crate::ast::AgentInput::template);
        for (root, span) in template_roots(facts, called.file, input) {
            add(root, called.file, span, "the input of an agent called as a tool");
        }
    }
}

/// The root of every well-formed placeholder of a string or text block, with its span.
fn template_roots<'f>(facts: &'f Facts<'_>, file: FileId, expr: Option<&Expr>) -> Vec<(&'f str, Span)> {
    expr.map(|expr| super::templates::placeholder_roots(facts, file, expr))
        .unwrap_or_default()
}
