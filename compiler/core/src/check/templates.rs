//! Template placeholders: every `{name}` in a tool's approval message and target and its
//! idempotency key names a parameter of the tool, and every `{name}` in an agent's prompt and
//! template `input` or an interrupt's message, target and value names a state field of each graph that uses it
//! (`TENX0501`; an agent is used by a graph whose agent node calls it as a tool, at any depth,
//! since it runs over that graph's state); no placeholder is malformed (`TENX0502`). The scanner is [`crate::template`].
//! Evidence is no template (a string is shown as written): `check/evidence` checks its names.

use super::Facts;
use crate::ast::{Expr, ExprKind, Param, ToolDecl, TypeExpr};
use crate::resolve::{DeclKind, GraphId, Located, Program};
use crate::template::{self, PlaceholderKind};
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    // node name → the graphs that list it
    let mut graphs_of: BTreeMap<&str, Vec<GraphId>> = BTreeMap::new();
    for (g, graph) in program.graphs.iter_enumerated() {
        for node in &graph.decl.nodes {
            let list = graphs_of.entry(node.name.as_str()).or_default();
            if !list.contains(&g) {
                list.push(g);
            }
        }
        // An agent an agent node calls as a tool, at any depth, runs over this graph's state too.
        let roots = facts
            .topologies
            .get(g)
            .into_iter()
            .flat_map(super::agent_tools::node_agents);
        for link in facts.agent_calls.reached_from(roots) {
            let Some(called) = program.agents.get(link.agent) else {
                continue;
            };
            let list = graphs_of.entry(called.decl.name.name.as_str()).or_default();
            if !list.contains(&g) {
                list.push(g);
            }
        }
    }
    for tool in &program.tools {
        check_tool(facts, tool, diagnostics);
    }
    for agent in &program.agents {
        let input = agent.decl.input.as_ref().and_then(crate::ast::AgentInput::template);
        if agent.decl.prompt.is_none() && input.is_none() {
            continue;
        }
        let scopes = state_scopes(facts, graphs_of.get(agent.decl.name.name.as_str()));
        let owner = Owner::Node {
            kind: "agent",
            name: &agent.decl.name.name,
        };
        for template in agent.decl.prompt.iter().chain(input) {
            check_template(facts, agent.file, template, &owner, &scopes, diagnostics);
        }
    }
    for interrupt in &program.interrupts {
        let decl = &interrupt.decl;
        let scopes = state_scopes(facts, graphs_of.get(decl.name.name.as_str()));
        let owner = Owner::Node {
            kind: "interrupt",
            name: &decl.name.name,
        };
        let mut templates: Vec<&Expr> = decl.message.iter().chain(&decl.target).collect();
        // The string values of `value`, at any depth.
        let mut stack: Vec<&Expr> = decl.value.iter().collect();
        while let Some(expr) = stack.pop() {
            match &expr.kind {
                ExprKind::Str(_) | ExprKind::Text(_) => templates.push(expr),
                ExprKind::List(items) => stack.extend(items.iter().rev()),
                ExprKind::Map(entries) => stack.extend(entries.iter().rev().map(|e| &e.value)),
                _ => {}
            }
        }
        for expr in templates {
            check_template(facts, interrupt.file, expr, &owner, &scopes, diagnostics);
        }
    }
}

/// The names a template may use, and where they come from.
struct Scope<'a> {
    /// The allowed names.
    names: Vec<&'a str>,
    /// The graph, for state scopes: its name, file and name span.
    graph: Option<(&'a str, FileId, Span)>,
    /// The graph's state fields, for state scopes: dotted placeholders are checked against them.
    state: &'a [Param],
}

/// Whose template it is.
enum Owner<'a> {
    /// A tool: placeholders name its parameters.
    Tool(&'a str),
    /// An agent or interrupt: placeholders name state fields.
    Node { kind: &'static str, name: &'a str },
}

/// One scope per graph that uses the node; no scope when no graph does.
fn state_scopes<'a>(facts: &Facts<'a>, graphs: Option<&Vec<GraphId>>) -> Vec<Scope<'a>> {
    graphs
        .into_iter()
        .flatten()
        .filter_map(|&g| facts.program.graphs.get(g))
        .map(|graph| Scope {
            names: graph.decl.state.iter().map(|p| p.name.name.as_str()).collect(),
            graph: Some((graph.decl.name.name.as_str(), graph.file, graph.decl.name.span)),
            state: &graph.decl.state,
        })
        .collect()
}

/// The parameter names of a tool: its parameter list, the top-level `properties` of its inline
/// `parameters` schema, or those of the named schema its `parameters` uses.
pub(crate) fn tool_params<'a>(program: &'a Program, tool: &'a ToolDecl) -> Vec<&'a str> {
    param_names(program, tool)
        .into_iter()
        .map(|(name, _, _)| name)
        .collect()
}

/// [`tool_params`] with where each name is written: in the tool's file, or in its named schema's.
pub(crate) fn tool_param_sites<'a>(program: &'a Program, tool: &'a Located<ToolDecl>) -> Vec<(&'a str, FileId, Span)> {
    param_names(program, &tool.decl)
        .into_iter()
        .map(|(name, file, span)| (name, file.unwrap_or(tool.file), span))
        .collect()
}

/// The parameters' names and spans; a file only when the name is written in another file than
/// the tool's (a named schema's).
fn param_names<'a>(program: &'a Program, tool: &'a ToolDecl) -> Vec<(&'a str, Option<FileId>, Span)> {
    if let Some(params) = &tool.params {
        return params
            .iter()
            .map(|p: &Param| (p.name.name.as_str(), None, p.name.span))
            .collect();
    }
    let Some((schema, file)) = parameters_schema(program, tool) else {
        return Vec::new();
    };
    let ExprKind::Map(entries) = &schema.kind else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.key == "properties")
        .flat_map(|e| match &e.value.kind {
            ExprKind::Map(props) => props.iter().map(|p| (p.key.as_str(), file, p.key_span)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The JSON Schema map a tool's `parameters` gives, written inline or as a named schema (then
/// with that schema's file). `None` for a tool with a parameter list or no parameters.
pub(crate) fn parameters_schema<'a>(program: &'a Program, tool: &'a ToolDecl) -> Option<(&'a Expr, Option<FileId>)> {
    let schema = tool.parameters_schema.as_ref()?;
    match &schema.kind {
        ExprKind::Map(_) => Some((schema, None)),
        ExprKind::Path(path) => {
            let named = program.schema(&path.last()?.name)?;
            match &named.decl.ty {
                TypeExpr::Schema(map) => Some((map, Some(named.file))),
                TypeExpr::Named { .. } => None,
            }
        }
        _ => None,
    }
}

/// The first segments of the well-formed placeholders of a template string (`order` for
/// `{order.id}`), each with the span of its placeholder.
pub(super) fn placeholder_roots<'s>(facts: &Facts<'s>, file: FileId, expr: &Expr) -> Vec<(&'s str, Span)> {
    if expr.as_str().is_none() {
        return Vec::new();
    }
    let raw = facts.sources.get(file).map_or("", |s| s.slice(expr.span));
    let Some((offset, body)) = template::literal_body(raw) else {
        return Vec::new();
    };
    let base = expr.span.start as usize + offset;
    let found = if offset == 3 {
        template::text_block_placeholders(body)
    } else {
        template::placeholders(body)
    };
    found
        .iter()
        .filter_map(|placeholder| {
            let root = placeholder.root()?;
            Some((root, Span::new(base + placeholder.start, base + placeholder.end)))
        })
        .collect()
}

fn check_tool(facts: &Facts<'_>, tool: &Located<ToolDecl>, diagnostics: &mut Vec<Diagnostic>) {
    let decl = &tool.decl;
    let scopes = [Scope {
        names: tool_params(facts.program, decl),
        graph: None,
        state: &[],
    }];
    let owner = Owner::Tool(&decl.name.name);
    let mut templates: Vec<&Expr> = Vec::new();
    if let Some(approval) = &decl.approval {
        templates.extend(&approval.message);
        templates.extend(&approval.target);
    }
    templates.extend(&decl.idempotency_key);
    for expr in templates {
        check_template(facts, tool.file, expr, &owner, &scopes, diagnostics);
    }
}

/// Checks one template string: malformed placeholders, then each placeholder against every
/// scope (an empty list of scopes: a node that no graph uses, so no name is known).
fn check_template(
    facts: &Facts<'_>,
    file: FileId,
    expr: &Expr,
    owner: &Owner<'_>,
    scopes: &[Scope<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) {
    if expr.as_str().is_none() {
        return;
    }
    let raw = facts.sources.get(file).map_or("", |s| s.slice(expr.span));
    let Some((offset, body)) = template::literal_body(raw) else {
        return;
    };
    let base = expr.span.start as usize + offset;
    // `literal_body` gives the body of a `"""` text block at offset 3: raw text, no `\u{…}`.
    let found = if offset == 3 {
        template::text_block_placeholders(body)
    } else {
        template::placeholders(body)
    };
    for placeholder in found {
        let span = Span::new(base + placeholder.start, base + placeholder.end);
        let name = match placeholder.kind {
            PlaceholderKind::Name(path) => path,
            other => {
                let after = body.get(placeholder.start + 1..).unwrap_or("");
                diagnostics.push(malformed(other, file, span, after));
                continue;
            }
        };
        let Some(root) = placeholder.root() else { continue };
        if scopes.is_empty() {
            if let Owner::Node { kind, name: node } = owner {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0501,
                        format!("`{{{name}}}` names no state field: {kind} `{node}` is not a node of any graph"),
                        file,
                        span,
                    )
                    .label("no state to read this from")
                    .help(format!(
                        "add `{node}` to the `nodes` of a graph whose `state` declares `{root}`, or remove the placeholder"
                    )),
                );
            }
            continue;
        }
        for scope in scopes {
            if scope.names.contains(&root) {
                // `{customer.tier}`: the segments after the field, against its schema.
                let field = scope.state.iter().find(|p| p.name.name == root);
                if let (Some(field), Some((_, graph_file, _))) = (field, scope.graph) {
                    let mut at = span.start as usize + 1 + root.len();
                    let mut rest = Vec::new();
                    for segment in name.split('.').skip(1) {
                        rest.push((segment, Span::new(at + 1, at + 1 + segment.len())));
                        at += 1 + segment.len();
                    }
                    if let Some(d) = super::paths::unknown_segment(facts.program, (field, graph_file), &rest, file) {
                        diagnostics.push(d);
                    }
                }
                continue;
            }
            let (message, label) = match (owner, scope.graph) {
                (Owner::Tool(tool), _) => (
                    format!("`{{{name}}}` names no parameter of tool `{tool}`"),
                    "not a parameter".to_string(),
                ),
                (Owner::Node { .. }, Some((graph, _, _))) => (
                    format!("`{{{name}}}` names no state field of graph `{graph}`"),
                    format!("not a state field of `{graph}`"),
                ),
                (Owner::Node { .. }, None) => continue,
            };
            let mut d = Diagnostic::new(Code::TENX0501, message, file, span)
                .label(label)
                .help(unknown_help(root, &scope.names, owner, scope.graph));
            if let (Owner::Node { kind, name: node }, Some((graph, graph_file, graph_span))) = (owner, scope.graph) {
                let listed = facts
                    .program
                    .graphs
                    .iter()
                    .any(|g| g.decl.name.name == graph && g.decl.nodes.iter().any(|n| n.name == *node));
                let called = || {
                    let (g, _) = facts
                        .program
                        .graphs
                        .iter_enumerated()
                        .find(|(_, g)| g.decl.name.name == graph)?;
                    let agent = facts.program.lookup_as(node, &[DeclKind::Agent])?.decl.agent()?;
                    super::agent_tools::caller_in_graph(facts, g, agent)
                };
                let text = if listed {
                    format!("this graph uses {kind} `{node}` as a node")
                } else if let Some((caller, chain)) = called() {
                    super::agent_tools::describe_call(caller, &chain)
                } else {
                    format!("an agent node of this graph calls agent `{node}` as a tool")
                };
                d = d.secondary(graph_file, graph_span, text);
            }
            diagnostics.push(d);
        }
    }
}

/// "did you mean" among the allowed names, else the list of them.
fn unknown_help(word: &str, names: &[&str], owner: &Owner<'_>, graph: Option<(&str, FileId, Span)>) -> String {
    if let Some(close) = crate::suggest::did_you_mean(word, names.iter()).or_else(|| by_prefix(word, names)) {
        return format!("did you mean `{close}`?");
    }
    let list = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    match (owner, graph) {
        (Owner::Tool(tool), _) if names.is_empty() => format!("tool `{tool}` has no parameters"),
        (Owner::Tool(tool), _) => format!("the parameters of `{tool}` are {list}"),
        (Owner::Node { .. }, Some((graph, _, _))) if names.is_empty() => {
            format!("graph `{graph}` declares no state; add `state {{ {word}: string }}` to it")
        }
        (Owner::Node { .. }, Some((graph, _, _))) => format!("the state fields of `{graph}` are {list}"),
        (Owner::Node { .. }, None) => format!("the allowed names are {list}"),
    }
}

/// The one allowed name that extends `word` or that `word` extends (`amount` for
/// `amount_cents`), when there is exactly one.
fn by_prefix<'a>(word: &str, names: &[&'a str]) -> Option<&'a str> {
    let mut matching = names
        .iter()
        .copied()
        .filter(|n| n.len() > 1 && word.len() > 1 && (n.starts_with(word) || word.starts_with(n)));
    let first = matching.next()?;
    matching.next().is_none().then_some(first)
}

/// `TENX0502` for a malformed placeholder.
/// `after` is the template's text after the `{`: a `{` followed by a quote starts a JSON
/// example, and the help says how to write one.
fn malformed(kind: PlaceholderKind<'_>, file: FileId, span: Span, after: &str) -> Diagnostic {
    const LITERAL: &str = "for a literal brace, write `\\{` or `\\}`";
    const JSON: &str = "this looks like a JSON example: write the text as a raw text block, `raw\"\"\"…\"\"\"`, where every `{` and `}` is literal, or escape each brace as `\\{` and `\\}`";
    let json = after.trim_start().starts_with('"') || after.trim_start().starts_with("\\\"");
    let (message, label, help) = match kind {
        PlaceholderKind::Unclosed => (
            "unclosed `{` in a template".to_string(),
            "this `{` is never closed".to_string(),
            if json {
                JSON.to_string()
            } else {
                format!("close the placeholder on the same line, like `{{name}}`; {LITERAL}")
            },
        ),
        PlaceholderKind::Empty => (
            "empty placeholder `{}` in a template".to_string(),
            "names nothing".to_string(),
            format!("write a name between the braces, like `{{name}}`; {LITERAL}"),
        ),
        PlaceholderKind::NotAName(content) => {
            let trimmed = content.trim();
            let help = if json {
                JSON.to_string()
            } else if template::is_path(trimmed) {
                format!("remove the spaces: `{{{trimmed}}}`")
            } else {
                format!("a placeholder holds one name, like `{{name}}` or `{{order.id}}`; {LITERAL}")
            };
            (
                "malformed placeholder in a template".to_string(),
                "not a name".to_string(),
                help,
            )
        }
        PlaceholderKind::Name(_) => (String::new(), String::new(), String::new()),
    };
    Diagnostic::new(Code::TENX0502, message, file, span)
        .label(label)
        .help(help)
}
