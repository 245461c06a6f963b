//! Handoffs that cannot be what they say: an agent that hands off to itself (`TENX0320`), and a
//! handoff edge written twice in one graph (`TENX0321`), which would otherwise be merged
//! silently.

use super::GraphCheck;
use crate::ast::Ident;
use crate::check::Facts;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

/// `TENX0320`: an agent whose `handoffs` names itself. Reported once per agent, whatever the
/// graphs that use it.
pub(super) fn self_handoffs(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for agent in &facts.program.agents {
        let name = &agent.decl.name;
        for target in agent.decl.handoffs.iter().filter(|t| t.name == name.name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0320,
                    format!("agent `{}` hands off to itself", name.name),
                    agent.file,
                    target.span,
                )
                .label("a handoff to the agent that is running")
                .secondary(agent.file, name.span, format!("agent `{}` is declared here", name.name))
                .help(format!(
                    "remove `{0}` from `handoffs`; to run `{0}` again, write an edge `{0} -> {0}` or a route arm back to `{0}`",
                    name.name
                ))
                .note("a handoff passes the conversation to another agent; a loop back to the same agent is an edge or a route, not a handoff"),
            );
        }
    }
}

/// `TENX0321`: the same handoff edge (`a -> b`, where `b` is one of `a`'s handoffs) declared
/// twice in one graph.
pub(super) fn duplicate_edges(c: &mut GraphCheck<'_, '_>) {
    let mut first: BTreeMap<(&str, &str), Span> = BTreeMap::new();
    let mut found = Vec::new();
    for edge in &c.graph.decl.edges {
        if !is_handoff_edge(c, &edge.from, &edge.to) {
            continue;
        }
        let key = (edge.from.name.as_str(), edge.to.name.as_str());
        let Some(earlier) = first.get(&key) else {
            first.insert(key, edge.span);
            continue;
        };
        found.push(
            Diagnostic::new(
                Code::TENX0321,
                format!(
                    "the handoff edge `{} -> {}` is declared twice",
                    edge.from.name, edge.to.name
                ),
                c.file,
                edge.span,
            )
            .label("declared again here")
            .secondary(c.file, *earlier, "first declared here")
            .help("remove one of them: a handoff has one edge"),
        );
    }
    for d in found {
        c.report(d);
    }
}

/// Whether `from -> to` is a handoff edge: `from` is an agent node of the graph whose
/// `handoffs` names `to`.
fn is_handoff_edge(c: &GraphCheck<'_, '_>, from: &Ident, to: &Ident) -> bool {
    c.topology
        .index
        .get(&from.name)
        .and_then(|&i| c.topology.nodes.get(i))
        .and_then(|node| node.decl.agent())
        .and_then(|agent| c.facts.program.agents.get(agent))
        .is_some_and(|agent| agent.decl.handoffs.iter().any(|h| h.name == to.name))
}
