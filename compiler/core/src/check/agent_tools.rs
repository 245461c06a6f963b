//! Agents as tools: an agent's `agents = [spanish(text: string "…")]` offers other agents to its
//! model, each under the agent's own name. An agent called as a tool may call agents as tools
//! itself (orchestrator → specialist → sub-specialist), but no agent reaches itself through agent
//! tools, directly or through others (`TENX0213`, one diagnostic per circle, and an agent that
//! lists itself); an agent called as a tool has no `handoffs` (`TENX0211`: a handoff inside a call
//! has nowhere to go); the name does not clash with one of the calling agent's tools or handoff
//! tools, and no agent is listed twice (`TENX0212`). Unknown names are resolve's (`TENX0101`,
//! `TENX0102`).
//!
//! The tools an agent reaches through its agent tools, at any depth, count as its own for every
//! proof about what an agent node can run ([`AgentCalls`], [`called_tools`], [`via_agent_tool`]):
//! the risk policy, the state its bound arguments and evidence read, and the graphs whose state
//! its prompt is rendered over (a called agent runs over the calling graph's state). Their
//! results are not written into state: `results` counts only the tools an agent node calls
//! itself (`check/graph/results`).

use super::Facts;
use super::topology::Topology;
use crate::ast::{GraphDecl, Ident};
use crate::ids::IdVec;
use crate::lower::HANDOFF_PREFIX;
use crate::resolve::{AgentId, DeclKind, GraphId, Program, ToolId};
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// One agent reached through agent tools from some agents (the roots, usually the agent nodes of
/// a graph).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link<'p> {
    /// The agent reached.
    pub(crate) agent: AgentId,
    /// The agent whose `agents` lists it.
    pub(crate) caller: AgentId,
    /// Its name as written in that `agents`.
    pub(crate) name: &'p Ident,
    /// The file of the caller (where `name` is written).
    pub(crate) file: FileId,
    /// Where the caller was reached, in the same list; `None` when the caller is a root.
    from: Option<usize>,
}

/// The calls between agents: for each agent, the agents its `agents` lists (resolved, each once),
/// and the agents that list it. Nothing is closed over up front, since what a chain of 10,000
/// agents reaches is 50 million pairs: each question walks the calls it needs, iteratively.
#[derive(Debug, Default)]
pub(crate) struct AgentCalls<'p> {
    callees: IdVec<AgentId, Vec<(AgentId, &'p Ident)>>,
    callers: IdVec<AgentId, Vec<AgentId>>,
    files: IdVec<AgentId, FileId>,
}

impl<'p> AgentCalls<'p> {
    pub(crate) fn new(program: &'p Program) -> Self {
        let callees = program.agents.ids().map(|a| callees(program, a)).collect::<Vec<_>>();
        let mut callers = IdVec::filled(Vec::new(), program.agents.len());
        let mut by_agent = IdVec::new();
        for (a, calls) in program.agents.ids().zip(callees) {
            for &(called, _) in &calls {
                if let Some(list) = callers.get_mut(called)
                    && called != a
                {
                    list.push(a);
                }
            }
            by_agent.push(calls);
        }
        AgentCalls {
            callees: by_agent,
            callers,
            files: program.agents.map(|a| a.file),
        }
    }

    /// The agents `agent` lists in `agents`, resolved, each once, with the name as written.
    pub(crate) fn callees(&self, agent: AgentId) -> &[(AgentId, &'p Ident)] {
        self.callees.get(agent).map_or(&[], Vec::as_slice)
    }

    /// The agents `roots` reach through agent tools at any depth, nearest first, each once, by a
    /// shortest chain of calls ([`AgentCalls::chain`]); no root is in the list.
    pub(crate) fn reached_from(&self, roots: impl IntoIterator<Item = AgentId>) -> Vec<Link<'p>> {
        let mut seen: BTreeSet<AgentId> = BTreeSet::new();
        let roots: Vec<AgentId> = roots.into_iter().filter(|&root| seen.insert(root)).collect();
        let mut links: Vec<Link<'p>> = Vec::new();
        // The calls of the roots, then of each agent reached, in the order found (breadth first).
        let mut next = 0;
        loop {
            let (caller, from) = match roots.get(next) {
                Some(&root) => (root, None),
                None => {
                    let index = next - roots.len();
                    match links.get(index) {
                        Some(link) => (link.agent, Some(index)),
                        None => break,
                    }
                }
            };
            next += 1;
            let Some(file) = self.files.get(caller).copied() else {
                continue;
            };
            for &(agent, name) in self.callees.get(caller).into_iter().flatten() {
                if seen.insert(agent) {
                    links.push(Link {
                        agent,
                        caller,
                        name,
                        file,
                        from,
                    });
                }
            }
        }
        links
    }

    /// The chain of calls in `links` (from [`AgentCalls::reached_from`]) that reaches its
    /// `index`-th agent: first the name in a root's own `agents`, last the one that names it.
    pub(crate) fn chain(links: &[Link<'p>], index: usize) -> Vec<Link<'p>> {
        let mut chain = Vec::new();
        let mut at = Some(index);
        while let Some(link) = at.and_then(|i| links.get(i)) {
            chain.push(*link);
            at = link.from;
            if chain.len() > links.len() {
                break;
            }
        }
        chain.reverse();
        chain
    }

    /// The agents whose model can have `tool` run: those that see it, and every agent that
    /// reaches one of them through agent tools (a breadth-first search over the callers).
    pub(crate) fn reaching(&self, facts: &Facts<'_>, tool: ToolId) -> BTreeSet<AgentId> {
        let mut out: BTreeSet<AgentId> = facts.seen_by.get(tool).into_iter().flatten().copied().collect();
        let mut work: Vec<AgentId> = out.iter().copied().collect();
        while let Some(agent) = work.pop() {
            for &caller in self.callers.get(agent).into_iter().flatten() {
                if out.insert(caller) {
                    work.push(caller);
                }
            }
        }
        out
    }
}

/// The agents `agent` lists in `agents`, resolved, each once (a repeat is `TENX0212`), with the
/// name as written; itself included.
fn callees(program: &Program, agent: AgentId) -> Vec<(AgentId, &Ident)> {
    let Some(located) = program.agents.get(agent) else {
        return Vec::new();
    };
    let mut out: Vec<(AgentId, &Ident)> = Vec::new();
    for used in &located.decl.agent_tools {
        let Some(id) = program
            .lookup_as(&used.agent.name, &[DeclKind::Agent])
            .and_then(|s| s.decl.agent())
        else {
            continue;
        };
        if !out.iter().any(|(seen, _)| *seen == id) {
            out.push((id, &used.agent));
        }
    }
    out
}

/// The agents of the agent nodes of a graph, in node order.
pub(crate) fn node_agents(topology: &Topology) -> impl Iterator<Item = AgentId> + '_ {
    topology.nodes.iter().filter_map(|node| node.decl.agent())
}

/// A chain of calls as the diagnostics show it: "`specialist` → `refunder`".
pub(crate) fn chain_names(chain: &[Link<'_>]) -> String {
    shorten(chain.iter().map(|link| format!("`{}`", link.name.name)).collect())
}

/// Names joined by arrows: in full when few, else the first and last few around a count.
fn shorten(names: Vec<String>) -> String {
    const ENDS: usize = 4;
    if names.len() <= 3 * ENDS {
        return names.join(" → ");
    }
    let head = names.iter().take(ENDS).cloned().collect::<Vec<_>>().join(" → ");
    let tail = names
        .iter()
        .skip(names.len() - ENDS)
        .cloned()
        .collect::<Vec<_>>()
        .join(" → ");
    format!("{head} → … {} more … → {tail}", names.len() - 2 * ENDS)
}

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
                continue; // a circle of one (`TENX0213`, below)
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
            if let Some(first) = inner.decl.handoffs.first() {
                let d = Diagnostic::new(
                    Code::TENX0211,
                    format!(
                        "agent `{}`, called as a tool by `{name}`, has `handoffs` of its own",
                        called.name
                    ),
                    file,
                    called.span,
                )
                .label("called as a tool here")
                .secondary(inner.file, first.span, format!("`{}` hands off here", called.name))
                .help(format!(
                    "remove `handoffs` from `{}`, or run it as a node of the graph, where it can hand off, instead of calling it as a tool",
                    called.name
                ))
                .note("a call ends with the called agent's answer, so a handoff inside it has nowhere to go");
                diagnostics.push(d);
            }
        }
    }
    cycles(facts, diagnostics);
}

/// `TENX0213` once per circle of agents calling each other as tools: a depth-first search
/// (iterative) over the calls, in declaration order, reports each call back to an agent still
/// on its path, with that path. Taking every reported call away leaves no circle.
fn cycles(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        /// On the current path, at this depth.
        OnPath(usize),
        Done,
    }
    /// An agent on the current path, with its calls and how many of them were followed.
    struct Step<'c, 'p> {
        agent: AgentId,
        calls: &'c [(AgentId, &'p Ident)],
        followed: usize,
    }
    let program = facts.program;
    let calls = &facts.agent_calls;
    let step = |agent: AgentId| Step {
        agent,
        calls: calls.callees(agent),
        followed: 0,
    };
    let mut marks = IdVec::filled(Mark::New, program.agents.len());
    for root in program.agents.ids() {
        if marks.get(root) != Some(&Mark::New) {
            continue;
        }
        let mut path = vec![step(root)];
        if let Some(mark) = marks.get_mut(root) {
            *mark = Mark::OnPath(0);
        }
        while let Some(last) = path.last_mut() {
            let agent = last.agent;
            let Some(&(next, name)) = last.calls.get(last.followed) else {
                if let Some(mark) = marks.get_mut(agent) {
                    *mark = Mark::Done;
                }
                path.pop();
                continue;
            };
            last.followed += 1;
            match marks.get(next).copied() {
                Some(Mark::New) => {
                    if let Some(mark) = marks.get_mut(next) {
                        *mark = Mark::OnPath(path.len());
                    }
                    path.push(step(next));
                }
                Some(Mark::OnPath(depth)) => {
                    // Each agent of the circle with the call it is following.
                    let circle: Vec<(AgentId, &Ident)> = path
                        .iter()
                        .skip(depth)
                        .filter_map(|s| {
                            let (_, name) = s.calls.get(s.followed.checked_sub(1)?)?;
                            Some((s.agent, *name))
                        })
                        .collect();
                    if let Some(d) = circle_diagnostic(program, agent, name, &circle) {
                        diagnostics.push(d);
                    }
                }
                Some(Mark::Done) | None => {}
            }
        }
    }
}

/// The diagnostic for the circle `circle` (each caller with the name it calls), closed by `agent`
/// calling `name`.
fn circle_diagnostic(
    program: &Program,
    agent: AgentId,
    name: &Ident,
    circle: &[(AgentId, &Ident)],
) -> Option<Diagnostic> {
    let caller = program.agents.get(agent)?;
    let agent_name = &caller.decl.name.name;
    if circle.len() <= 1 {
        return Some(
            Diagnostic::new(
                Code::TENX0213,
                format!("agent `{agent_name}` lists itself in `agents`"),
                caller.file,
                name.span,
            )
            .label("an agent cannot call itself as a tool")
            .help(format!("remove `{agent_name}` from its own `agents`")),
        );
    }
    let mut names: Vec<String> = circle
        .iter()
        .filter_map(|(a, _)| program.agents.get(*a))
        .map(|a| format!("`{}`", a.decl.name.name))
        .collect();
    names.push(format!("`{}`", name.name));
    let mut d = Diagnostic::new(
        Code::TENX0213,
        format!("agents call each other as tools in a circle: {}", shorten(names)),
        caller.file,
        name.span,
    )
    .label(format!(
        "`{agent_name}` calls `{}` as a tool, which closes the circle",
        name.name
    ));
    // The other calls of the circle (the last one is the primary label), the first few of them.
    for (a, called) in circle.iter().take(circle.len().saturating_sub(1)).take(8) {
        if let Some(located) = program.agents.get(*a) {
            d = d.secondary(
                located.file,
                called.span,
                format!("`{}` calls `{}` as a tool", located.decl.name.name, called.name),
            );
        }
    }
    Some(
        d.help(format!(
            "remove `{}` from the `agents` of `{agent_name}`, or another call of the circle",
            name.name
        ))
        .note("a called agent runs inside its caller's turn, so calls around a circle could nest without end"),
    )
}

/// The tools the agent nodes of a graph can have run: their own, and those of every agent they
/// reach through agent tools, at any depth.
pub(crate) fn graph_tools(facts: &Facts<'_>, topology: &Topology) -> Vec<ToolId> {
    let roots: Vec<AgentId> = node_agents(topology).collect();
    let reached = facts.agent_calls.reached_from(roots.iter().copied());
    let mut tools: Vec<ToolId> = roots
        .iter()
        .copied()
        .chain(reached.iter().map(|link| link.agent))
        .flat_map(|a| facts.visible_tools.get(a).into_iter().flatten().copied())
        .collect();
    tools.sort_unstable();
    tools.dedup();
    tools
}

/// The shortest chain of agent tools through which the model of `agent` can have `tool` run,
/// when it cannot call `tool` itself: first the name in its own `agents`, last the agent that
/// sees the tool.
pub(crate) fn via_agent_tool<'f>(facts: &Facts<'f>, agent: AgentId, tool: ToolId) -> Option<Vec<Link<'f>>> {
    if facts.visible_tools.get(agent).is_some_and(|v| v.contains(&tool)) {
        return None;
    }
    let links = facts.agent_calls.reached_from([agent]);
    let index = links
        .iter()
        .position(|link| facts.visible_tools.get(link.agent).is_some_and(|v| v.contains(&tool)))?;
    Some(AgentCalls::chain(&links, index))
}

/// The node of `agent`'s node in `graph`, as `nodes` writes it.
fn node_name<'f>(graph: &'f GraphDecl, topology: &Topology, agent: AgentId) -> Option<&'f str> {
    let node = topology.nodes.iter().find(|node| node.decl.agent() == Some(agent))?;
    graph
        .nodes
        .iter()
        .find(|n| n.name == node.name)
        .map(|n| n.name.as_str())
}

/// An agent node of graph `g` that reaches `agent` through agent tools, with a shortest chain.
pub(crate) fn caller_in_graph<'f>(facts: &Facts<'f>, g: GraphId, agent: AgentId) -> Option<(&'f str, Vec<Link<'f>>)> {
    let graph = &facts.program.graphs.get(g)?.decl;
    let topology = facts.topologies.get(g)?;
    let links = facts.agent_calls.reached_from(node_agents(topology));
    let index = links.iter().position(|l| l.agent == agent)?;
    let chain = AgentCalls::chain(&links, index);
    let root = chain.first()?.caller;
    Some((node_name(graph, topology, root)?, chain))
}

/// "agent node `desk` of this graph calls agent `billing` as a tool", or for a longer chain
/// "agent node `desk` of this graph reaches agent `refunder` through `specialist` → `refunder`".
pub(crate) fn describe_call(node: &str, chain: &[Link<'_>]) -> String {
    match chain {
        [only] => format!(
            "agent node `{node}` of this graph calls agent `{}` as a tool",
            only.name.name
        ),
        [.., last] => format!(
            "agent node `{node}` of this graph reaches agent `{}` through {}",
            last.name.name,
            chain_names(chain)
        ),
        [] => format!("agent node `{node}` of this graph"),
    }
}

/// How tool `t` runs in graph `g` when only agents called as tools can have it run (no tool node
/// runs it and no agent node sees it): the first agent node that reaches it, with the chain.
pub(crate) fn tool_caller_in_graph<'f>(facts: &Facts<'f>, g: GraphId, t: ToolId) -> Option<(&'f str, Vec<Link<'f>>)> {
    tool_caller(facts, &facts.program.graphs.get(g)?.decl, facts.topologies.get(g)?, t)
}

/// [`tool_caller_in_graph`] for the graph `graph` with its topology.
pub(crate) fn tool_caller<'f>(
    facts: &Facts<'f>,
    graph: &'f GraphDecl,
    topology: &Topology,
    t: ToolId,
) -> Option<(&'f str, Vec<Link<'f>>)> {
    let direct = topology.nodes.iter().any(|node| {
        node.decl.tool() == Some(t)
            || node
                .decl
                .agent()
                .is_some_and(|a| facts.visible_tools.get(a).is_some_and(|v| v.contains(&t)))
    });
    if direct {
        return None;
    }
    let reaching = facts.agent_calls.reaching(facts, t);
    let root = node_agents(topology).find(|a| reaching.contains(a))?;
    Some((node_name(graph, topology, root)?, via_agent_tool(facts, root, t)?))
}
