//! Agents as tools: an agent's `agents = [spanish(text: string "…")]` offers other agents to its
//! model, each under the agent's own name. An agent called as a tool has no `agents` or
//! `handoffs` of its own, and no agent lists itself (`TENX0211`); the name does not clash with
//! one of the calling agent's tools or handoff tools, and no agent is listed twice (`TENX0212`).
//! Unknown names are resolve's (`TENX0101`, `TENX0102`). The tools an agent reaches through its
//! agent tools count as its own for the risk policy ([`called_tools`], [`via_agent_tool`]).

use super::Facts;
use crate::ast::Ident;
use crate::lower::HANDOFF_PREFIX;
use crate::resolve::{AgentId, ToolId};
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for (a, agent) in program.agents.iter_enumerated() {
        let (file, decl) = (agent.file, &agent.decl);
        let name = &decl.name.name;
        // Model-facing names the agent already has: its tools' and its handoffs'.
        let mut taken: BTreeMap<String, String> = BTreeMap::new();
        for tool in facts
            .visible_tools
            .get(a)
            .into_iter()
            .flatten()
            .filter_map(|&t| program.tools.get(t))
        {
            taken
                .entry(tool.decl.model_name().to_owned())
                .or_insert_with(|| format!("the tool `{}`", tool.decl.name.name));
        }
        for target in &decl.handoffs {
            taken
                .entry(format!("{HANDOFF_PREFIX}{}", target.name))
                .or_insert_with(|| format!("the handoff to `{}`", target.name));
        }
        let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
        for used in &decl.agent_tools {
            let called = &used.agent;
            if let Some(first) = seen.get(called.name.as_str()) {
                let d = Diagnostic::new(
                    Code::TENX0212,
                    format!("agent `{}` is listed twice in the `agents` of `{name}`", called.name),
                    file,
                    called.span,
                )
                .label("listed again here")
                .secondary(file, *first, "first listed here")
                .help("list each agent once");
                diagnostics.push(d);
                continue;
            }
            seen.insert(&called.name, called.span);
            if &called.name == name {
                let d = Diagnostic::new(
                    Code::TENX0211,
                    format!("agent `{name}` lists itself in `agents`"),
                    file,
                    called.span,
                )
                .label("an agent cannot call itself as a tool")
                .help(format!("remove `{name}` from its own `agents`"));
                diagnostics.push(d);
                continue;
            }
            if let Some(what) = taken.get(&called.name) {
                let d = Diagnostic::new(
                    Code::TENX0212,
                    format!(
                        "the agent tool `{}` of agent `{name}` has the name of {what}",
                        called.name
                    ),
                    file,
                    called.span,
                )
                .label("offered to the model under a name it already has")
                .help(format!(
                    "give the tool another `name`, or call the agent `{}` something else",
                    called.name
                ))
                .note("an agent called as a tool is offered to the model under the agent's own name");
                diagnostics.push(d);
            }
            let Some(inner) = program.agent(&called.name) else {
                continue;
            };
            let nested = if !inner.decl.agent_tools.is_empty() {
                Some("`agents`")
            } else if !inner.decl.handoffs.is_empty() {
                Some("`handoffs`")
            } else {
                None
            };
            if let Some(field) = nested {
                let d = Diagnostic::new(
                    Code::TENX0211,
                    format!(
                        "agent `{}`, called as a tool by `{name}`, has {field} of its own",
                        called.name
                    ),
                    file,
                    called.span,
                )
                .label("called as a tool here")
                .secondary(inner.file, inner.decl.name.span, format!("`{}` is declared here", called.name))
                .help(format!(
                    "agents called as tools do not nest: remove {field} from `{}`, or give its tools to `{name}` directly",
                    called.name
                ));
                diagnostics.push(d);
            }
        }
    }
}

/// The tools the model of `agent` can have run: its own, and those of every agent it calls as a
/// tool (one level: agent tools do not nest, `TENX0211`).
pub(super) fn called_tools(facts: &Facts<'_>, agent: AgentId) -> Vec<ToolId> {
    let mut tools: Vec<ToolId> = facts.visible_tools.get(agent).into_iter().flatten().copied().collect();
    for inner in inner_agents(facts, agent) {
        tools.extend(facts.visible_tools.get(inner.0).into_iter().flatten().copied());
    }
    tools.sort_unstable();
    tools.dedup();
    tools
}

/// The agent tool of `agent` (as written in its `agents`) through which its model can have
/// `tool` run, if any.
pub(super) fn via_agent_tool<'f>(facts: &Facts<'f>, agent: AgentId, tool: ToolId) -> Option<&'f Ident> {
    inner_agents(facts, agent)
        .into_iter()
        .find(|(inner, _)| facts.visible_tools.get(*inner).is_some_and(|v| v.contains(&tool)))
        .map(|(_, ident)| ident)
}

/// The agents `agent` calls as tools, other than itself, with the name as written.
fn inner_agents<'f>(facts: &Facts<'f>, agent: AgentId) -> Vec<(AgentId, &'f Ident)> {
    let program = facts.program;
    let Some(located) = program.agents.get(agent) else {
        return Vec::new();
    };
    located
        .decl
        .agent_tools
        .iter()
        .filter_map(|used| {
            let id = program
                .lookup_as(&used.agent.name, &[crate::resolve::DeclKind::Agent])?
                .decl
                .agent()?;
            (id != agent).then_some((id, &used.agent))
        })
        .collect()
}
