//! Where a tool's result goes. A tool's result always goes into the conversation (the runtime
//! appends the call and a `tool` message with the result, so later agents see what ran);
//! `results = { send: url }` also writes it into state. Each key names a tool node of the graph
//! (`TENX0302`, `TENX0328`) or a tool that an agent node of the graph can call itself, whose
//! every successful call is written (`TENX0333`; a tool the agent node reaches only through an
//! agent it calls as a tool is refused too: the runtime writes no result of a call made inside
//! an agent call, whose only result is the called agent's answer), listed once (`TENX0332`); each value is a declared
//! state field (`TENX0329`), or a path into one (`order.status`) whose every step is a property
//! its schema declares (`TENX0334`); the tool declares its result type (`-> TYPE`, `TENX0330`),
//! and the place written can hold it (`TENX0331`, by the same kind comparison as a tool node's
//! arguments, `TENX0322`).

use super::GraphCheck;
use super::routes::{FieldType, json_type, type_of};
use super::tool_nodes::never_fits;
use crate::ast::{Param, ResultWrite, ToolDecl};
use crate::resolve::{DeclKind, Located};
use serde_json::Value;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let results = c.g().results.clone();
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for write in &results {
        if let Some(first) = seen.get(write.node.name.as_str()) {
            let d = Diagnostic::new(
                Code::TENX0332,
                format!("`{}` is listed twice in `results`", write.node.name),
                c.file,
                write.node.span,
            )
            .label("listed again here")
            .secondary(c.file, *first, "first listed here")
            .help("a tool's result goes to one place in state: keep one entry");
            c.report(d);
            continue;
        }
        seen.insert(&write.node.name, write.node.span);
        if let Some(d) = check_write(c, write) {
            c.report(d);
        }
    }
}

/// The tool whose result `write` names: a tool node's, or a tool's that an agent node calls.
fn source<'a>(
    c: &mut GraphCheck<'a, '_>,
    write: &ResultWrite,
) -> Result<&'a Located<ToolDecl>, Option<Box<Diagnostic>>> {
    let name = &write.node.name;
    let program = c.facts.program;
    if let Some(node) = c.topology.index.get(name).and_then(|&n| c.topology.nodes.get(n)) {
        if let Some(tool) = node.decl.tool().and_then(|t| program.tools.get(t)) {
            return Ok(tool);
        }
        let kind = match node.kind() {
            DeclKind::Agent => "an agent",
            DeclKind::Graph => "a subgraph",
            _ => "an interrupt",
        };
        return Err(Some(Box::new(
            Diagnostic::new(
                Code::TENX0328,
                format!("`results` names `{name}`, which is {kind} node, not a tool node"),
                c.file,
                write.node.span,
            )
            .label("not a tool node")
            .secondary(c.file, node.span, format!("`{name}` is {kind} node here"))
            .help(format!("remove `{name}` from `results`"))
            .note("only a tool has a result to write; an agent's answer goes to the conversation"),
        )));
    }
    let tool_id = program.lookup(name).and_then(|s| s.decl.tool());
    let Some((id, tool)) = tool_id.and_then(|t| program.tools.get(t).map(|tool| (t, tool))) else {
        c.check_node_ref(&write.node, "`results`");
        return Err(None);
    };
    let callable = c.topology.nodes.iter().any(|n| {
        n.decl
            .agent()
            .and_then(|a| c.facts.visible_tools.get(a))
            .is_some_and(|tools| tools.contains(&id))
    });
    if callable {
        return Ok(tool);
    }
    let graph = &c.g().name.name;
    // Called only inside an agent tool: the call's result goes to the called agent, never into
    // the graph's state (the runtime applies no `results` write made inside an agent call).
    if let Some((node, chain)) = super::super::agent_tools::tool_caller(c.facts, &c.graph.decl, c.topology, id) {
        let chain = super::super::agent_tools::chain_names(&chain);
        return Err(Some(Box::new(
            Diagnostic::new(
                Code::TENX0333,
                format!(
                    "`results` names tool `{name}`, which graph `{graph}` runs only inside an agent called as a tool"
                ),
                c.file,
                write.node.span,
            )
            .label("this result is never written into the graph's state")
            .secondary(tool.file, tool.decl.name.span, format!("tool `{name}` is declared here"))
            .note(format!(
                "agent node `{node}` calls `{name}` through {chain}: a called agent's tool results go to that agent, and only its answer comes back, as the result of the call"
            ))
            .help(format!(
                "give `{name}` to the `tools` of agent node `{node}` or run it as a tool node, or have the called agent answer with the value (its `output`) and remove the entry"
            )),
        )));
    }
    Err(Some(Box::new(
        Diagnostic::new(
            Code::TENX0333,
            format!("`results` names tool `{name}`, which is not a node of graph `{graph}` and no agent node of it can call"),
            c.file,
            write.node.span,
        )
        .label("nothing in this graph produces this result")
        .secondary(tool.file, tool.decl.name.span, format!("tool `{name}` is declared here"))
        .help(format!(
            "add `{name}` to the `tools` of an agent node of graph `{graph}`, or run it as a tool node, or remove the entry"
        )),
    )))
}

/// The first problem with one `source: field.path` entry, if any.
fn check_write(c: &mut GraphCheck<'_, '_>, write: &ResultWrite) -> Option<Diagnostic> {
    let graph = c.g().name.name.clone();
    let (node_name, field_name) = (&write.node.name, &write.field.name);
    let tool = match source(c, write) {
        Ok(tool) => tool,
        Err(d) => return d.map(|d| *d),
    };
    let Some(field) = c.state_field(field_name).cloned() else {
        let names: Vec<&str> = c.g().state.iter().map(|p| p.name.name.as_str()).collect();
        let help = crate::did_you_mean(field_name, names.iter())
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| {
                format!("declare `{field_name}` in the `state` of graph `{graph}`, with the tool's result type")
            });
        return Some(
            Diagnostic::new(
                Code::TENX0329,
                format!("`results` writes the result of `{node_name}` to `{field_name}`, which is not a state field of graph `{graph}`"),
                c.file,
                write.field.span,
            )
            .label("no such state field")
            .help(help),
        );
    };
    let tool_name = &tool.decl.name.name;
    let Some(result) = &tool.decl.result else {
        return Some(
            Diagnostic::new(
                Code::TENX0330,
                format!("`results` writes the result of tool `{tool_name}`, which declares no result type"),
                c.file,
                write.node.span,
            )
            .label("nothing to check the write against")
            .secondary(
                tool.file,
                tool.decl.name.span,
                format!("`{tool_name}` is declared here without `-> TYPE`"),
            )
            .help(format!(
                "declare the result type after the parameters, e.g. `tool {tool_name}(…) -> string`"
            )),
        );
    };
    let (wanted, place, span) = match write.path.last() {
        None => (
            type_of(c, &field.ty, 0),
            format!("the state field `{field_name}`"),
            field.ty.span(),
        ),
        Some(_) => match at_path(c, &field, write) {
            Ok(ty) => (ty, format!("`{field_name}.{}`", dotted(write)), field.ty.span()),
            Err(d) => return Some(*d),
        },
    };
    let held = type_of(c, result, 0);
    if never_fits(&held, &wanted) {
        return Some(
            Diagnostic::new(
                Code::TENX0331,
                format!(
                    "tool `{tool_name}` returns {}, but {place} holds {}",
                    held.describe(),
                    wanted.describe()
                ),
                c.file,
                write
                    .field
                    .span
                    .to(write.path.last().map_or(write.field.span, |p| p.span)),
            )
            .label("the result never fits here")
            .secondary(
                tool.file,
                result.span(),
                format!("`{tool_name}` returns {}", held.describe()),
            )
            .secondary(c.file, span, format!("{place} holds {}", wanted.describe()))
            .help(format!(
                "give {place} the tool's result type, or write the result somewhere that holds it"
            )),
        );
    }
    None
}

fn dotted(write: &ResultWrite) -> String {
    write.path.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(".")
}

/// The type at `write.path` inside the state field `field`: each step a property that the
/// schema before it declares (`TENX0334` otherwise).
fn at_path(c: &GraphCheck<'_, '_>, field: &Param, write: &ResultWrite) -> Result<FieldType, Box<Diagnostic>> {
    let mut scratch = Vec::new();
    let lowered = crate::schema::lower_type(c.facts.program, c.file, &field.ty, &mut scratch);
    let mut here: Option<&Value> = lowered.as_ref().map(|l| &l.value);
    let mut walked = write.field.name.clone();
    for step in &write.path {
        let next = here
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .and_then(|p| p.get(&step.name));
        let Some(next) = next else {
            let declared: Vec<&String> = here
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let help = crate::did_you_mean(&step.name, declared.iter().copied())
                .map(|s| format!("did you mean `{walked}.{s}`?"))
                .unwrap_or_else(|| {
                    format!(
                        "declare `{}` in the `properties` of `{walked}`'s schema, or write to `{walked}` itself",
                        step.name
                    )
                });
            let d = Diagnostic::new(
                Code::TENX0334,
                format!("`{walked}` declares no property `{}`, so `results` cannot write there", step.name),
                c.file,
                step.span,
            )
            .label("not a declared property")
            .secondary(c.file, field.ty.span(), format!("the type of `{}` is declared here", write.field.name))
            .help(help)
            .note("a path into state is checked against the state's schema, so a write can never land where nothing reads it");
            return Err(Box::new(d));
        };
        walked = format!("{walked}.{}", step.name);
        here = Some(next);
    }
    Ok(here.map_or(FieldType::Any, json_type))
}
