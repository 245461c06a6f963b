//! Tool names the model sees: two tools visible to one agent claiming the same name
//! (`TENX0201`), tools named `transfer_to_…` (`TENX0202`), handoff tool names that collide with
//! another name (`TENX0203`), and `tagged(…)` selections whose tag no tool carries (`TENX0605`).

use super::Facts;
use crate::ast::{AgentDecl, Ident, ToolDecl, ToolSelector};
use crate::ids::IdVec;
use crate::resolve::{AgentId, Located, ToolId};
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// The prefix of every generated handoff tool.
const HANDOFF_PREFIX: &str = "transfer_to_";

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    // Each tool's model-facing name as a small number, so that the per-agent check is linear.
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    let name_ids: IdVec<ToolId, usize> = program.tools.map(|t| {
        let next = ids.len();
        *ids.entry(t.decl.model_name()).or_insert(next)
    });
    let mut holders = NameHolders {
        name_ids,
        first: vec![None; ids.len()],
    };
    for (a, agent) in program.agents.iter_enumerated() {
        let visible = facts.visible_tools.get(a).map_or(&[][..], Vec::as_slice);
        tool_collisions(facts, a, agent, visible, &mut holders, diagnostics);
    }
    let handoff_tools = handoff_collisions(facts, diagnostics);
    for (t, tool) in program.tools.iter_enumerated() {
        if !handoff_tools.contains(&t) {
            reserved_name(tool, diagnostics);
        }
    }
    tags_matching_nothing(facts, diagnostics);
}

/// The span of a tool's model-facing name: `name = "…"` when written, else the declared name.
fn model_name_span(tool: &ToolDecl) -> Span {
    tool.exposed_name.as_ref().map_or(tool.name.span, |(_, span)| *span)
}

/// A tool's run source: `http`, `remote`, `builtin`, `mcp`.
fn source(tool: &ToolDecl) -> &'static str {
    tool.run.as_ref().map_or("unbound", |(run, _)| run.source())
}

/// How a tool is described in a label: "`lookup` (http)", or "`lookup_order` (http, exposed as
/// `lookup`)".
fn describe(tool: &ToolDecl) -> String {
    match &tool.exposed_name {
        Some((exposed, _)) if *exposed != tool.name.name => {
            format!("`{}` ({}, exposed as `{exposed}`)", tool.name.name, source(tool))
        }
        _ => format!("`{}` ({})", tool.name.name, source(tool)),
    }
}

/// The span of the agent's `tools` selection that makes `tool` visible.
fn selection_span(agent: &AgentDecl, tool: &ToolDecl) -> Option<Span> {
    agent.tools.iter().find_map(|selector| match selector {
        ToolSelector::Named(name) if name.name == tool.name.name => Some(name.span),
        ToolSelector::Tagged { tags, span } if tags.iter().any(|t| tool.tags.iter().any(|g| g.name == t.name)) => {
            Some(*span)
        }
        _ => None,
    })
}

/// For `TENX0201`: each tool's name id, and for each name id the first tool holding it among the
/// tools of the agent being checked (tagged with the agent, so the table is never cleared).
struct NameHolders {
    name_ids: IdVec<ToolId, usize>,
    first: Vec<Option<(AgentId, ToolId)>>,
}

/// `TENX0201`: two different tools visible to one agent with the same model-facing name.
fn tool_collisions(
    facts: &Facts<'_>,
    a: AgentId,
    agent: &Located<AgentDecl>,
    visible: &[ToolId],
    holders: &mut NameHolders,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let program = facts.program;
    for &t in visible {
        let Some(tool) = program.tools.get(t) else { continue };
        let name = tool.decl.model_name();
        let Some(slot) = holders.name_ids.get(t).and_then(|&id| holders.first.get_mut(id)) else {
            continue;
        };
        let f = match *slot {
            Some((holder, f)) if holder == a => f,
            _ => {
                *slot = Some((a, t));
                continue;
            }
        };
        let Some(first) = program.tools.get(f) else { continue };
        let (file, span) = match selection_span(&agent.decl, &tool.decl) {
            Some(span) => (agent.file, span),
            None => (tool.file, model_name_span(&tool.decl)),
        };
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0201,
                format!("agent `{}` sees two tools named `{name}`", agent.decl.name.name),
                file,
                span,
            )
            .label(format!(
                "this selection gives `{}` a second tool named `{name}`",
                agent.decl.name.name
            ))
            .secondary(
                first.file,
                model_name_span(&first.decl),
                format!("{} claims `{name}`", describe(&first.decl)),
            )
            .secondary(
                tool.file,
                model_name_span(&tool.decl),
                format!("{} claims `{name}` too", describe(&tool.decl)),
            )
            .help(format!(
                "rename one of them: give one tool `name = \"…\"` so that every tool `{}` sees has its own name",
                agent.decl.name.name
            )),
        );
    }
}

/// `TENX0203`: a handoff's generated tool name equals a visible tool's name, a declared name, or
/// the name generated by another handoff of the same agent. Returns the tools reported, which
/// `TENX0202` then leaves alone.
fn handoff_collisions(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) -> BTreeSet<ToolId> {
    let program = facts.program;
    let mut reported_tools = BTreeSet::new();
    for (a, agent) in program.agents.iter_enumerated() {
        let visible = facts.visible_tools.get(a).map_or(&[][..], Vec::as_slice);
        let mut seen: Vec<&Ident> = Vec::new();
        for target in &agent.decl.handoffs {
            let generated = format!("{HANDOFF_PREFIX}{}", target.name);
            if let Some(first) = seen.iter().find(|s| s.name == target.name) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0203,
                        format!("agent `{}` hands off to `{}` twice", agent.decl.name.name, target.name),
                        agent.file,
                        target.span,
                    )
                    .label(format!("generates `{generated}` a second time"))
                    .secondary(agent.file, first.span, format!("`{generated}` is first generated here"))
                    .help("remove the duplicate handoff"),
                );
                continue;
            }
            seen.push(target);
            let visible_tool = visible.iter().copied().find(|&t| {
                program
                    .tools
                    .get(t)
                    .is_some_and(|tool| tool.decl.model_name() == generated)
            });
            if let Some(t) = visible_tool {
                let Some(tool) = program.tools.get(t) else { continue };
                reported_tools.insert(t);
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0203,
                        format!(
                            "the handoff to `{}` generates the tool `{generated}`, which agent `{}` already sees",
                            target.name, agent.decl.name.name
                        ),
                        agent.file,
                        target.span,
                    )
                    .label(format!("generates `{generated}`"))
                    .secondary(
                        tool.file,
                        model_name_span(&tool.decl),
                        format!("tool {} claims `{generated}`", describe(&tool.decl)),
                    )
                    .help(format!(
                        "rename the tool: `{HANDOFF_PREFIX}…` names belong to the tools the compiler generates for handoffs"
                    )),
                );
                continue;
            }
            if let Some(symbol) = program.lookup(&generated) {
                if let Some(tool) = symbol.decl.tool() {
                    reported_tools.insert(tool);
                }
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0203,
                        format!(
                            "the handoff to `{}` generates the tool `{generated}`, a name already declared",
                            target.name
                        ),
                        agent.file,
                        target.span,
                    )
                    .label(format!("generates `{generated}`"))
                    .secondary(
                        symbol.file,
                        symbol.span,
                        format!("{} `{generated}` is declared here", symbol.kind().as_str()),
                    )
                    .help(format!(
                        "rename the {}: `{HANDOFF_PREFIX}…` names belong to the tools the compiler generates for handoffs",
                        symbol.kind().as_str()
                    )),
                );
            }
        }
    }
    reported_tools
}

/// `TENX0202`: a tool whose declared or exposed name starts with `transfer_to_`.
fn reserved_name(tool: &Located<ToolDecl>, diagnostics: &mut Vec<Diagnostic>) {
    let decl = &tool.decl;
    let (message, name, span) = match &decl.exposed_name {
        Some((exposed, span)) if exposed.starts_with(HANDOFF_PREFIX) => (
            format!(
                "tool `{}` is exposed as `{exposed}`, a name reserved for handoffs",
                decl.name.name
            ),
            exposed.as_str(),
            *span,
        ),
        _ if decl.name.name.starts_with(HANDOFF_PREFIX) => (
            format!("the tool name `{}` is reserved for handoffs", decl.name.name),
            decl.name.name.as_str(),
            decl.name.span,
        ),
        _ => return,
    };
    let target = name
        .strip_prefix(HANDOFF_PREFIX)
        .filter(|t| !t.is_empty())
        .unwrap_or("…");
    diagnostics.push(
        Diagnostic::new(Code::TENX0202, message, tool.file, span)
            .label(format!("`{HANDOFF_PREFIX}…` names belong to generated handoff tools"))
            .help(format!(
                "rename the tool; to pass the conversation to an agent `{target}`, write `handoffs = [{target}]` in the agent that hands off"
            )),
    );
}

/// `TENX0605`: a `tagged(t)` selection where `t` is a declared tag that no tool carries.
fn tags_matching_nothing(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    let carried: BTreeSet<&str> = program
        .tools
        .iter()
        .flat_map(|t| t.decl.tags.iter().map(|g| g.name.as_str()))
        .collect();
    for agent in &program.agents {
        for selector in &agent.decl.tools {
            let ToolSelector::Tagged { tags, .. } = selector else {
                continue;
            };
            for tag in tags {
                if carried.contains(tag.name.as_str()) || !program.has_tag(&tag.name) {
                    continue;
                }
                diagnostics.push(unmatched_tag(facts, agent.file, tag));
            }
        }
    }
}

fn unmatched_tag(facts: &Facts<'_>, file: FileId, tag: &Ident) -> Diagnostic {
    let mut d = Diagnostic::new(
        Code::TENX0605,
        format!("`tagged({})` matches no tool", tag.name),
        file,
        tag.span,
    )
    .label(format!("no tool has the tag `{}`", tag.name))
    .help(format!(
        "add `tags = [{}]` to the tools this agent should see, or remove the tag from the selection",
        tag.name
    ));
    if let Some(symbol) = facts.program.lookup(&tag.name) {
        d = d.secondary(symbol.file, symbol.span, "the tag is declared here");
    }
    d
}
