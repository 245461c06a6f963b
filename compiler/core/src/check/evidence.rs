//! Evidence: what an approval shows beside its question. In a tool's `approval` a bare name is
//! the tool's parameter of that name, and otherwise a state field that **every graph in which
//! the tool can run** declares (a graph with an agent node whose agent sees the tool, itself or
//! through agents it calls as tools at any depth, or a tool node running it); on an `interrupt` a name is a state field of every graph that uses the
//! interrupt as a node. A string is literal text. A name found nowhere, or missing from one of
//! the graphs, is `TENX0606`; an item that is neither a name nor a string is `TENX0607`.
//!
//! Lowering reads the same meaning through [`lower_item`], so the artifact's
//! `{"param"}`/`{"state"}`/`{"literal"}` is exactly what was checked here.

use super::Facts;
use crate::ast::{Expr, ExprKind, ToolDecl};
use crate::resolve::{GraphId, InterruptId, ToolId};
use tenx_artifact::Evidence;
use tenx_diagnostics::{Code, Diagnostic, FileId};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for (t, tool) in program.tools.iter_enumerated() {
        let Some(approval) = &tool.decl.approval else { continue };
        if approval.evidence.is_empty() {
            continue;
        }
        let step = Step {
            kind: "tool",
            name: &tool.decl.name.name,
            tool: Some(t),
            params: tool_params(facts.program, &tool.decl),
            graphs: graphs_running_tool(facts, t),
        };
        for item in &approval.evidence {
            check_item(facts, tool.file, item, &step, diagnostics);
        }
    }
    for (i, interrupt) in program.interrupts.iter_enumerated() {
        if interrupt.decl.evidence.is_empty() {
            continue;
        }
        let step = Step {
            kind: "interrupt",
            name: &interrupt.decl.name.name,
            tool: None,
            params: Vec::new(),
            graphs: graphs_using_interrupt(facts, i),
        };
        for item in &interrupt.decl.evidence {
            check_item(facts, interrupt.file, item, &step, diagnostics);
        }
    }
}

/// The parameter names of a tool (the names its templates may use): see
/// [`super::templates::tool_params`].
pub(crate) fn tool_params<'a>(program: &'a crate::resolve::Program, tool: &'a ToolDecl) -> Vec<&'a str> {
    super::templates::tool_params(program, tool)
}

/// What an evidence item means, as checked: a string is literal text, a name in `params` is the
/// argument, any other name a state field. `None` for an item check refuses.
pub(crate) fn lower_item(params: &[&str], item: &Expr) -> Option<Evidence> {
    match &item.kind {
        ExprKind::Str(text) | ExprKind::Text(text) => Some(Evidence::Literal(text.clone())),
        _ => {
            let name = item.as_ident()?.name.as_str();
            Some(if params.contains(&name) {
                Evidence::Param(name.to_string())
            } else {
                Evidence::State(name.to_string())
            })
        }
    }
}

/// The approval's step: a tool with its parameters, or an interrupt; and the graphs it runs in.
struct Step<'a> {
    kind: &'static str,
    name: &'a str,
    /// The tool, for a tool's approval.
    tool: Option<ToolId>,
    params: Vec<&'a str>,
    graphs: Vec<GraphId>,
}

/// The graphs in which tool `t` can run: a tool node, or an agent node whose agent sees it or
/// reaches an agent that sees it through agent tools, at any depth (a called agent runs over
/// the calling graph's state, so its tools read that state).
pub(crate) fn graphs_running_tool(facts: &Facts<'_>, t: ToolId) -> Vec<GraphId> {
    let reaching = facts.agent_calls.reaching(facts, t);
    facts
        .topologies
        .iter_enumerated()
        .filter(|(_, topology)| {
            topology
                .nodes
                .iter()
                .any(|node| node.decl.tool() == Some(t) || node.decl.agent().is_some_and(|a| reaching.contains(&a)))
        })
        .map(|(g, _)| g)
        .collect()
}

/// "tool `t` can run in this graph", and how when only agents called as tools run it there.
pub(crate) fn runs_in_graph(facts: &Facts<'_>, g: GraphId, t: ToolId) -> String {
    let name = facts
        .program
        .tools
        .get(t)
        .map_or("", |tool| tool.decl.name.name.as_str());
    match super::agent_tools::tool_caller_in_graph(facts, g, t) {
        Some((node, chain)) => format!(
            "tool `{name}` can run in this graph: agent node `{node}` calls it through {}",
            super::agent_tools::chain_names(&chain)
        ),
        None => format!("tool `{name}` can run in this graph"),
    }
}

/// The graphs that use interrupt `i` as a node.
fn graphs_using_interrupt(facts: &Facts<'_>, i: InterruptId) -> Vec<GraphId> {
    facts
        .topologies
        .iter_enumerated()
        .filter(|(_, topology)| topology.nodes.iter().any(|node| node.decl.interrupt() == Some(i)))
        .map(|(g, _)| g)
        .collect()
}

fn check_item(facts: &Facts<'_>, file: FileId, item: &Expr, step: &Step<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let name = match &item.kind {
        ExprKind::Str(_) | ExprKind::Text(_) => return,
        ExprKind::Path(path) if path.len() == 1 => match path.first() {
            Some(name) => name,
            None => return,
        },
        ExprKind::Path(path) => {
            let root = path.first().map_or("", |i| i.name.as_str());
            let written = path.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".");
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0607,
                    format!("evidence `{written}` names a part of a value"),
                    file,
                    item.span,
                )
                .label("a dotted path")
                .help(format!(
                    "evidence shows a whole parameter or state field: write `{root}`, or text in quotes"
                )),
            );
            return;
        }
        _ => {
            diagnostics.push(
                Diagnostic::new(Code::TENX0607, "evidence must be a name or a string", file, item.span)
                    .label(format!("found {}", item.describe()))
                    .help(if step.kind == "tool" {
                        "write a parameter or state field name, or text in quotes such as `\"refund-policy-7\"`"
                    } else {
                        "write a state field name, or text in quotes such as `\"refund-policy-7\"`"
                    }),
            );
            return;
        }
    };
    if step.params.contains(&name.name.as_str()) {
        return;
    }
    let program = facts.program;
    let graphs: Vec<_> = step
        .graphs
        .iter()
        .filter_map(|&g| program.graphs.get(g).map(|graph| (g, graph)))
        .collect();
    let what = if step.kind == "tool" {
        format!("no parameter of tool `{}`", step.name)
    } else {
        "no state field".to_string()
    };
    if graphs.is_empty() {
        let help = if step.kind == "tool" {
            format!(
                "{}; write `\"{}\"` to show it as literal text",
                param_list(step),
                name.name
            )
        } else {
            format!(
                "add `{}` to the `nodes` of a graph whose `state` declares `{}`, or remove it",
                step.name, name.name
            )
        };
        let why = if step.kind == "tool" {
            format!(", and no graph runs `{}` to read a state field from", step.name)
        } else {
            format!(": interrupt `{}` is not a node of any graph", step.name)
        };
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0606,
                format!("evidence `{}` names {what}{why}", name.name),
                file,
                name.span,
            )
            .label("names nothing")
            .help(help),
        );
        return;
    }
    let missing: Vec<_> = graphs
        .iter()
        .filter(|(_, graph)| !graph.decl.state.iter().any(|p| p.name.name == name.name))
        .collect();
    if missing.is_empty() {
        return;
    }
    let runs = if step.kind == "tool" { "can run" } else { "is a node" };
    // Where the step runs in a graph, and how when only agents called as tools run it there.
    let runs_here = |g: GraphId| match step.tool {
        Some(t) => runs_in_graph(facts, g, t),
        None => format!("{} `{}` {runs} in this graph", step.kind, step.name),
    };
    let where_ = if step.kind == "tool" {
        "every graph the tool can run in"
    } else {
        "every graph that uses the interrupt"
    };
    if missing.len() == graphs.len() && missing.len() > 1 {
        // Missing everywhere: one diagnostic, every graph shown.
        let message = if step.kind == "tool" {
            format!(
                "evidence `{}` names {what} and no state field of the graphs it can run in",
                name.name
            )
        } else {
            format!(
                "evidence `{}` names no state field of the graphs that use it",
                name.name
            )
        };
        let candidates: Vec<&str> = step
            .params
            .iter()
            .copied()
            .chain(
                missing
                    .iter()
                    .flat_map(|(_, g)| g.decl.state.iter().map(|p| p.name.name.as_str())),
            )
            .collect();
        let help = match crate::suggest::did_you_mean(&name.name, candidates.iter()) {
            Some(close) => format!("did you mean `{close}`?"),
            None => format!("add `{}` to the `state` of {where_}", name.name),
        };
        let mut d = Diagnostic::new(Code::TENX0606, message, file, name.span)
            .label("not a state field of these graphs")
            .help(help);
        for &&(g, graph) in &missing {
            d = d.secondary(graph.file, graph.decl.name.span, runs_here(g));
        }
        diagnostics.push(d);
        return;
    }
    let everywhere = missing.len() == graphs.len();
    for &(g, graph) in missing {
        let graph_name = graph.decl.name.name.as_str();
        let state: Vec<&str> = graph.decl.state.iter().map(|p| p.name.name.as_str()).collect();
        let message = if everywhere && step.kind == "tool" {
            format!(
                "evidence `{}` names {what} and no state field of graph `{graph_name}`",
                name.name
            )
        } else {
            format!("evidence `{}` names no state field of graph `{graph_name}`", name.name)
        };
        let candidates: Vec<&str> = step.params.iter().chain(state.iter()).copied().collect();
        let help = match crate::suggest::did_you_mean(&name.name, candidates.iter()) {
            Some(close) => format!("did you mean `{close}`?"),
            None if everywhere && step.kind == "tool" => format!(
                "{}; add `{}` to the `state` of `{graph_name}`, or write `\"{}\"` to show it as literal text",
                param_list(step),
                name.name,
                name.name
            ),
            None => format!(
                "add `{}` to the `state` of `{graph_name}`: evidence is read from {where_}",
                name.name
            ),
        };
        diagnostics.push(
            Diagnostic::new(Code::TENX0606, message, file, name.span)
                .label(format!("not a state field of `{graph_name}`"))
                .secondary(graph.file, graph.decl.name.span, runs_here(g))
                .help(help),
        );
    }
}

/// "the parameters of `t` are …" or "tool `t` has no parameters".
fn param_list(step: &Step<'_>) -> String {
    if step.params.is_empty() {
        return format!("tool `{}` has no parameters", step.name);
    }
    let list = step
        .params
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("the parameters of `{}` are {list}", step.name)
}
