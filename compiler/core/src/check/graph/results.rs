//! Where a tool node's result goes. The result of a tool node is always added to the
//! conversation (the runtime appends the call and a `tool` message with the result, so later
//! agents see what ran); `results = { send: url }` also writes it into a state field. Each key
//! names a node of the graph (`TENX0302`) that is a tool node (`TENX0328`), listed once
//! (`TENX0332`); each value is a declared state field (`TENX0329`); the tool declares its
//! result type (`-> TYPE`, `TENX0330`), and the field can hold it (`TENX0331`, by the same
//! kind comparison as a tool node's arguments, `TENX0322`).

use super::GraphCheck;
use super::routes::type_of;
use super::tool_nodes::never_fits;
use crate::ast::ResultWrite;
use crate::resolve::DeclKind;
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
            .help("a tool node writes its result to one state field: keep one entry");
            c.report(d);
            continue;
        }
        seen.insert(&write.node.name, write.node.span);
        if let Some(d) = check_write(c, write) {
            c.report(d);
        }
    }
}

/// The first problem with one `node: field` entry, if any.
fn check_write(c: &mut GraphCheck<'_, '_>, write: &ResultWrite) -> Option<Diagnostic> {
    let graph = c.g().name.name.clone();
    let (node_name, field_name) = (&write.node.name, &write.field.name);
    if !c.check_node_ref(&write.node, "`results`") {
        return None;
    }
    let node = c.topology.index.get(node_name).and_then(|&n| c.topology.nodes.get(n))?;
    let Some(tool) = node.decl.tool().and_then(|t| c.facts.program.tools.get(t)) else {
        let kind = match node.kind() {
            DeclKind::Agent => "an agent",
            _ => "an interrupt",
        };
        return Some(
            Diagnostic::new(
                Code::TENX0328,
                format!("`results` names `{node_name}`, which is {kind} node, not a tool node"),
                c.file,
                write.node.span,
            )
            .label("not a tool node")
            .secondary(c.file, node.span, format!("`{node_name}` is {kind} node here"))
            .help(format!("remove `{node_name}` from `results`"))
            .note("only a tool node has a result to write; an agent's answer goes to the conversation"),
        );
    };
    let Some(field) = c.state_field(field_name) else {
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
    let (held, wanted) = (type_of(c, result, 0), type_of(c, &field.ty, 0));
    if never_fits(&held, &wanted) {
        return Some(
            Diagnostic::new(
                Code::TENX0331,
                format!(
                    "tool `{tool_name}` returns {}, but the state field `{field_name}` holds {}",
                    held.describe(),
                    wanted.describe()
                ),
                c.file,
                write.field.span,
            )
            .label("the result never fits this field")
            .secondary(
                tool.file,
                result.span(),
                format!("`{tool_name}` returns {}", held.describe()),
            )
            .secondary(
                c.file,
                field.ty.span(),
                format!("`{field_name}` holds {}", wanted.describe()),
            )
            .help(format!("give the state field `{field_name}` the tool's result type")),
        );
    }
    None
}
