//! Risk policy: `high` tools need an approval, `prohibited` tools are never offered, `medium`
//! tools without an approval of their own get the default confirmation (a warning says so), and — the central proof — no path through any graph reaches the
//! execution of an approval-gated tool without passing its approval.
//!
//! The dominance check works on the lowered graph: an agent node that can see a tool has a
//! call step for it, and a tool's own `approval` block becomes an approval step placed
//! immediately before each of its executions, so it holds by construction. Approvals modelled
//! as explicit `interrupt` nodes (`approves = [tool]`) are checked: the set of those interrupt
//! nodes must dominate every execution of the tool, i.e. the execution must be unreachable from
//! every entry (`entry`, the extra `entries` and, with `resume = last_agent`, every reachable
//! agent node with a way to `END`, where a run may start too) once those nodes are
//! removed, and also unreachable from the tool's own previous
//! execution (each run of the tool needs a fresh approval). An agent calling such a tool
//! directly, or through agents it calls as tools at any depth, is always a bypass, because an
//! interrupt earlier in the graph is not bound to the call a model makes later. A tool with an
//! `approval` block of its own that an interrupt also approves keeps the tool-node rules (its
//! own block is asked only for calls its risk rules rate above `low`), but agents may call it.
//! Every violation is reported with the offending path (and the chain of agent tools).

use super::Facts;
use super::topology::{NodeId, Parents, Topology};
use crate::ast::{GraphDecl, Risk, ToolDecl, ToolSelector};
use crate::ids::IdVec;
use crate::resolve::{AgentId, DeclKind, GraphId, InterruptId, Located, ToolId};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    let approvers = approving_interrupts(facts);
    for (t, tool) in program.tools.iter_enumerated() {
        let none = Vec::new();
        risk_rules(facts, t, tool, approvers.get(t).unwrap_or(&none), diagnostics);
    }
    for (g, topology) in facts.topologies.iter_enumerated() {
        dominance(facts, g, topology, &approvers, diagnostics);
    }
}

/// For each tool, the interrupts whose `approves` names it.
fn approving_interrupts(facts: &Facts<'_>) -> IdVec<ToolId, Vec<InterruptId>> {
    let mut out = IdVec::filled(Vec::new(), facts.program.tools.len());
    for (i, interrupt) in facts.program.interrupts.iter_enumerated() {
        for tool in &interrupt.decl.approves {
            let Some(tool) = facts
                .program
                .lookup_as(&tool.name, &[DeclKind::Tool])
                .and_then(|s| s.decl.tool())
            else {
                continue;
            };
            if let Some(list) = out.get_mut(tool)
                && !list.contains(&i)
            {
                list.push(i);
            }
        }
    }
    out
}

/// Where an agent's `tools` makes a tool visible: the name, or the `tagged(…)` that matches it.
fn selection_span(facts: &Facts<'_>, agent: AgentId, tool: &ToolDecl) -> Option<(FileId, Span)> {
    let agent = facts.program.agents.get(agent)?;
    agent.decl.tools.iter().find_map(|s| match s {
        ToolSelector::Named(name) if name.name == tool.name.name => Some((agent.file, name.span)),
        ToolSelector::Tagged { tags, span } if tags.iter().any(|t| tool.tags.iter().any(|g| g.name == t.name)) => {
            Some((agent.file, *span))
        }
        _ => None,
    })
}

fn risk_rules(
    facts: &Facts<'_>,
    t: ToolId,
    tool: &Located<ToolDecl>,
    approvers: &[InterruptId],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let decl = &tool.decl;
    let risk_span = decl.risk_span().unwrap_or(decl.name.span);
    let gated = decl.approval.is_some() || !approvers.is_empty();
    match decl.risk_level() {
        Risk::High if !gated => diagnostics.push(
            Diagnostic::new(Code::TENX0601, format!("`high` risk tool `{}` has no approval", decl.name.name), tool.file, decl.name.span)
                .label("runs without a person approving it")
                .secondary(tool.file, risk_span, "declared `high` risk here")
                .help(format!(
                    "add `approval {{ message = \"…\"  response = yes_no }}` to the tool, or an `interrupt` node with `approves = [{}]` before it",
                    decl.name.name
                ))
                .note("approval before execution is the default for payments, deletions, permission changes and external sends"),
        ),
        Risk::Medium if !gated => diagnostics.push(
            Diagnostic::new(
                Code::TENX0603,
                format!("`medium` risk tool `{}` has no approval of its own: a default confirmation is asked before each call", decl.name.name),
                tool.file,
                decl.name.span,
            )
            .label("confirmed with the default yes-or-no question")
            .secondary(tool.file, risk_span, "declared `medium` risk here")
            .note(format!("before each call the user is asked whether to run `{}` with the call's arguments; it runs only on yes", decl.name.name))
            .help("write your own `approval { message = \"…\"  response = yes_no }` block to word the question, or lower the risk if the tool is harmless"),
        ),
        Risk::Prohibited => {
            for &agent in facts.seen_by.get(t).into_iter().flatten() {
                let Some(agent_decl) = facts.program.agents.get(agent) else { continue };
                let (file, span) = selection_span(facts, agent, decl).unwrap_or((agent_decl.file, agent_decl.decl.name.span));
                let by_name = agent_decl.decl.tools.iter().any(|s| matches!(s, ToolSelector::Named(n) if n.name == decl.name.name));
                let help = if by_name {
                    format!("remove `{}` from the agent's `tools`; a prohibited action is never offered to a model", decl.name.name)
                } else {
                    format!(
                        "take the tag off `{}`, or select the agent's tools by name; a prohibited action is never offered to a model",
                        decl.name.name
                    )
                };
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0602,
                        format!("`prohibited` tool `{}` is visible to agent `{}`", decl.name.name, agent_decl.decl.name.name),
                        file,
                        span,
                    )
                    .label("this offers the tool to the model")
                    .secondary(tool.file, risk_span, "declared `prohibited` here")
                    .help(help),
                );
            }
            for graph in &facts.program.graphs {
                for node in graph.decl.nodes.iter().filter(|n| n.name == decl.name.name) {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::TENX0602,
                            format!("`prohibited` tool `{}` is a node of graph `{}`", decl.name.name, graph.decl.name.name),
                            graph.file,
                            node.span,
                        )
                        .label("this runs the tool")
                        .secondary(tool.file, risk_span, "declared `prohibited` here")
                        .help(format!(
                            "remove `{}` and its edges from the graph; a prohibited action never runs, even after an approval",
                            decl.name.name
                        )),
                    );
                }
            }
        }
        _ => {}
    }
}

/// A step of a reported path.
fn step_names(topology: &Topology, parents: &Parents, end: NodeId) -> Vec<String> {
    let mut path = Vec::new();
    let mut current = Some(end);
    let mut guard = 0;
    while let Some(n) = current {
        path.push(
            topology
                .nodes
                .get(n)
                .map_or_else(String::new, |node| format!("`{}`", node.name)),
        );
        current = parents.get(n).copied().flatten().flatten();
        guard += 1;
        if guard > topology.nodes.len() {
            break;
        }
    }
    path.reverse();
    path
}

fn dominance(
    facts: &Facts<'_>,
    g: GraphId,
    topology: &Topology,
    approvers: &IdVec<ToolId, Vec<InterruptId>>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let program = facts.program;
    let Some(graph) = program.graphs.get(g) else { return };
    if topology.entry.is_none() {
        return;
    }
    // The entries, then the resume nodes (`resume = last_agent`): a run may begin at any.
    let all_starts = topology.proof_starts();
    let starts = all_starts.as_slice();
    let entry_label = |d: Diagnostic, parents: &Parents, n: NodeId| extra_entry_label(graph, topology, parents, n, d);
    let graph_name = &graph.decl.name.name;
    // The tools this graph can execute: its tool nodes and the tools its agents can call.
    // Through agent tools too, at any depth.
    let mut candidates: Vec<ToolId> = super::agent_tools::graph_tools(facts, topology);
    candidates.extend(topology.nodes.iter().filter_map(|node| node.decl.tool()));
    candidates.sort_unstable();
    candidates.dedup();
    let mut anywhere_cache = None;
    for t in candidates {
        let Some(tool) = program.tools.get(t) else { continue };
        let decl = &tool.decl;
        let Some(approvers) = approvers.get(t).filter(|a| !a.is_empty()) else {
            continue; // its own approval asks at every call, or nothing gates it (TENX0601)
        };
        // A tool with an `approval` block of its own asks it when an agent calls it, so agents
        // may call it; an interrupt that also `approves` it still promises that its tool nodes
        // run only right after an approving answer (else a "no" there could detour to the tool,
        // where a call its risk rules rate `low` runs without asking).
        let asks_itself = decl.approval.is_some();
        let is_approver = |n: NodeId| {
            topology
                .nodes
                .get(n)
                .and_then(|node| node.decl.interrupt())
                .is_some_and(|i| approvers.contains(&i))
        };
        let approver_span = approvers
            .iter()
            .filter_map(|&i| program.interrupts.get(i))
            .find_map(|i| {
                i.decl
                    .approves
                    .iter()
                    .find(|a| a.name == decl.name.name)
                    .map(|a| (i.file, a.span))
            });
        let approver_names: Vec<String> = approvers
            .iter()
            .filter_map(|&i| program.interrupts.get(i))
            .map(|i| format!("`{}`", i.decl.name.name))
            .collect();
        let approver_names = {
            let refs: Vec<&str> = approver_names.iter().map(String::as_str).collect();
            crate::syntax::errors::join_or(&refs)
        };
        let with_approval_note = |d: Diagnostic| match approver_span {
            Some((file, span)) => d.secondary(file, span, "the approval is declared here"),
            None => d,
        };
        let reaching = facts.agent_calls.reaching(facts, t);
        let around = topology.reach(starts, is_approver);
        let anywhere: &Parents = anywhere_cache.get_or_insert_with(|| topology.reach(starts, |_| false));

        // Agents that call the tool directly, or through agents they call as tools.
        for (n, node) in topology.nodes.iter_enumerated() {
            let Some(agent) = node.decl.agent() else { continue };
            if asks_itself || !reaching.contains(&agent) {
                continue;
            }
            let parents = if around.get(n).is_some_and(Option::is_some) {
                &around
            } else {
                anywhere
            };
            if parents.get(n).is_none_or(Option::is_none) {
                continue; // unreachable agent: reported by the graph checks
            }
            // Unless it calls the tool itself, the chain of agent tools to an agent that does:
            // that call runs on this path too, however deep.
            let via = super::agent_tools::via_agent_tool(facts, agent, t);
            let mut path = step_names(topology, parents, n);
            mark_entry(&mut path);
            let mut links = Vec::new();
            let (located, label, help) = match via.as_deref() {
                Some(chain @ [first, ..]) => {
                    let asks: Vec<String> = chain.iter().map(|link| format!("`{}`", link.name.name)).collect();
                    path.push(format!(
                        "`{}` asks {}, which calls `{}`",
                        node.name,
                        asks.join(", which asks "),
                        decl.name.name
                    ));
                    // Each deeper call of the chain, where its caller lists it.
                    for link in chain.iter().skip(1) {
                        let caller = facts
                            .program
                            .agents
                            .get(link.caller)
                            .map_or("", |a| a.decl.name.name.as_str());
                        links.push((
                            link.file,
                            link.name.span,
                            format!("`{caller}` calls `{}` as a tool", link.name.name),
                        ));
                    }
                    (
                        Some((first.file, first.name.span)),
                        format!(
                            "this lets the model call the tool through {}",
                            super::agent_tools::chain_names(chain)
                        ),
                        format!(
                            "remove `{}` from the agent's `agents` and run `{}` as a tool node behind its approval, or give the tool its own `approval {{ … }}` block",
                            first.name.name, decl.name.name
                        ),
                    )
                }
                _ => {
                    path.push(format!("`{}` calls `{}`", node.name, decl.name.name));
                    (
                        selection_span(facts, agent, decl),
                        "this lets the model call the tool directly".to_owned(),
                        format!(
                            "remove `{}` from the agent's tools and run it as a tool node behind its approval, or give the tool its own `approval {{ … }}` block",
                            decl.name.name
                        ),
                    )
                }
            };
            let Some((file, span)) = located else {
                continue;
            };
            let d = Diagnostic::new(
                Code::TENX0604,
                format!(
                    "agent `{}` can call `{}` without passing its approval",
                    node.name, decl.name.name
                ),
                file,
                span,
            )
            .label(label)
            .note(format!("path in graph `{graph_name}`: {}", shorten(&path)))
            .help(help);
            let d = links
                .into_iter()
                .fold(d, |d, (file, span, label)| d.secondary(file, span, label));
            let d = entry_label(d, parents, n);
            diagnostics.push(with_approval_note(d));
        }

        // The tool as a node: every execution must be dominated by an approving interrupt.
        let Some(tool_node) = topology.index.get(&decl.name.name).copied() else {
            continue;
        };
        // Where `nodes` lists the tool: a place in the graph's own file.
        let tool_span = topology.nodes.get(tool_node).map_or(graph.decl.name.span, |n| n.span);
        // A branch's first node and a join are entered from the fork, never straight from an
        // approval: the artifact refuses them whatever the paths (`ApprovalAcrossFork`).
        if let Some(d) = across_fork(graph, topology, anywhere, tool_node, &decl.name.name, &approver_names) {
            diagnostics.push(with_approval_note(d));
            continue;
        }
        if around.get(tool_node).is_some_and(Option::is_some) {
            let mut path = step_names(topology, &around, tool_node);
            mark_entry(&mut path);
            if let Some(last) = path.last_mut() {
                *last = format!("{last} runs");
            }
            // The transition that completes the path, or the `entry` when the run starts at the tool.
            let last = last_transition(topology, &around, tool_node, None);
            let (span, label) = match last {
                Some(span) => (span, "this path skips the approval"),
                None => (
                    start_span(graph, &decl.name.name).unwrap_or(tool_span),
                    "the run starts at the tool, before any approval",
                ),
            };
            let d = Diagnostic::new(
                Code::TENX0604,
                format!(
                    "graph `{graph_name}` reaches `{}` without passing its approval",
                    decl.name.name
                ),
                graph.file,
                span,
            )
            .label(label)
            .note(format!("path: {}", shorten(&path)))
            .help(format!(
                "make every path to `{}` pass through {approver_names} first",
                decl.name.name
            ));
            // A run that starts at the tool is labelled at its entry already.
            let d = if last.is_some() {
                entry_label(d, &around, tool_node)
            } else {
                d
            };
            diagnostics.push(with_approval_note(d));
            continue;
        }
        // Again after running once, without a fresh approval?
        let after: Vec<NodeId> = topology
            .successors
            .get(tool_node)
            .into_iter()
            .flatten()
            .filter_map(|(target, _)| match target {
                super::topology::Target::Node(m) => Some(*m),
                super::topology::Target::End => None,
            })
            .collect();
        let again = topology.reach(&after, is_approver);
        if again.get(tool_node).is_some_and(Option::is_some) {
            let mut path = step_names(topology, &again, tool_node);
            path.insert(0, format!("`{}` runs", decl.name.name));
            if let Some(last) = path.last_mut() {
                *last = format!("{last} runs again");
            }
            let span = last_transition(topology, &again, tool_node, Some(tool_node)).unwrap_or(tool_span);
            let d = Diagnostic::new(
                Code::TENX0604,
                format!("graph `{graph_name}` can run `{}` again without a new approval", decl.name.name),
                graph.file,
                span,
            )
            .label("this path returns to the tool without passing its approval")
            .note(format!("path: {}", shorten(&path)))
            .help(format!(
                "each run of an approval-gated tool needs its own approval: route the way back to `{}` through {approver_names}",
                decl.name.name
            ));
            diagnostics.push(with_approval_note(d));
            continue;
        }
        // The approval binds what a person saw: nothing may run between it and the tool, or the
        // state the tool reads could change after the approval.
        let anywhere: &Parents = anywhere_cache.get_or_insert_with(|| topology.reach(starts, |_| false));
        for (x, transitions) in topology.successors.iter_enumerated() {
            if x == tool_node || is_approver(x) || anywhere.get(x).is_none_or(Option::is_none) {
                continue;
            }
            for (_, via) in transitions
                .iter()
                .filter(|(t, _)| *t == super::topology::Target::Node(tool_node))
            {
                let Some(between) = topology.nodes.get(x) else { continue };
                let d = Diagnostic::new(
                    Code::TENX0604,
                    format!(
                        "`{}` runs between the approval of `{}` and the tool itself",
                        between.name, decl.name.name
                    ),
                    graph.file,
                    via.span(),
                )
                .label("the approval is not immediately before the tool")
                .note("an approval binds the action a person saw; a node in between could change the state the tool reads")
                .help(format!(
                    "lead every edge into `{}` from {approver_names}, placed directly before it",
                    decl.name.name
                ));
                diagnostics.push(with_approval_note(d));
            }
        }
    }
}

/// `TENX0629` when the reachable tool node `tool_node` starts a branch of a fork or is its join.
fn across_fork(
    graph: &Located<GraphDecl>,
    topology: &Topology,
    anywhere: &Parents,
    tool_node: NodeId,
    tool: &str,
    approver_names: &str,
) -> Option<Diagnostic> {
    anywhere.get(tool_node).copied().flatten()?;
    let node = &topology.nodes.get(tool_node)?.name;
    let forks = super::graph::forks::lowered_forks(&graph.decl, |n| topology.index.contains_key(n));
    let (fork, at, role) = forks.iter().find_map(|fork| {
        if let Some(branch) = fork.branches.iter().find(|b| b.name == *node) {
            return Some((fork, branch.span, "starts a branch of"));
        }
        fork.join
            .as_ref()
            .filter(|j| j.name == *node)
            .map(|j| (fork, j.span, "is the join of"))
    })?;
    let from = &fork.from.name;
    let keyword = fork.kind.keyword();
    Some(
        Diagnostic::new(
            Code::TENX0629,
            format!("`{tool}` {role} the {keyword} out of `{from}`, so its approval would cross the fork"),
            graph.file,
            at,
        )
        .label("entered from the fork, not straight from its approval")
        .secondary(graph.file, fork.span, format!("the {keyword} out of `{from}`"))
        .help(format!(
            "run `{tool}` inside a branch, straight after {approver_names}: start the branch at the approval, not at the tool"
        ))
        .note("an approval asked before a fork stays behind in the branch that asked it, and one asked inside a branch does not carry over to the join"),
    )
}

/// Where the graph names `node` as a start: its `entry`, or its place in `entries`.
fn start_span(graph: &Located<GraphDecl>, node: &str) -> Option<Span> {
    let decl = &graph.decl;
    decl.entry
        .iter()
        .chain(&decl.entries)
        .find(|e| e.name == node)
        .map(|e| e.span)
}

/// When the path that `parents` records to `n` starts at an extra entry (not at `entry`), a
/// secondary label on that entry in `entries`: the run may start there; when it starts at a
/// resume node, one on the graph's `resume`.
fn extra_entry_label(
    graph: &Located<GraphDecl>,
    topology: &Topology,
    parents: &Parents,
    n: NodeId,
    d: Diagnostic,
) -> Diagnostic {
    let mut current = n;
    for _ in 0..=topology.nodes.len() {
        match parents.get(current).copied().flatten() {
            Some(Some(previous)) => current = previous,
            _ => break,
        }
    }
    if Some(current) == topology.entry {
        return d;
    }
    let Some(node) = topology.nodes.get(current) else {
        return d;
    };
    if let Some(entry) = graph.decl.entries.iter().find(|e| e.name == node.name) {
        return d.secondary(
            graph.file,
            entry.span,
            format!("a run may start at `{}`: this path starts here", node.name),
        );
    }
    match &graph.decl.resume {
        Some(resume) if topology.resumes.contains(&current) => d.secondary(
            graph.file,
            resume.span,
            format!(
                "a thread's next run may start at `{}`, the agent that ended the last one: this path starts there",
                node.name
            ),
        ),
        _ => d,
    }
}

/// Marks the first step of a path from the entry as such.
fn mark_entry(path: &mut [String]) {
    if let Some(first) = path.first_mut() {
        *first = format!("entry {first}");
    }
}

/// A path for a note: in full when short, else its first and last steps around a count.
fn shorten(path: &[String]) -> String {
    const ENDS: usize = 4;
    if path.len() <= 3 * ENDS {
        return path.join(" → ");
    }
    let head = path.iter().take(ENDS).cloned().collect::<Vec<_>>().join(" → ");
    let tail = path
        .iter()
        .skip(path.len() - ENDS)
        .cloned()
        .collect::<Vec<_>>()
        .join(" → ");
    format!("{head} → … {} more steps … → {tail}", path.len() - 2 * ENDS)
}

/// The span of the edge or arm by which a breadth-first search first entered `node`. A start
/// of the search was entered from `origin` (the tool node, when searching from its successors).
fn last_transition(topology: &Topology, parents: &Parents, node: NodeId, origin: Option<NodeId>) -> Option<Span> {
    let parent = parents.get(node).copied().flatten()?.or(origin)?;
    topology
        .successors
        .get(parent)?
        .iter()
        .find(|(target, _)| *target == super::topology::Target::Node(node))
        .map(|(_, via)| via.span())
}
