//! Self-checks of agents called as tools, across agents: an agent called as a tool hands off to
//! no one (a call ends with its answer, so a handoff has nowhere to go), and no agent reaches
//! itself through `agent_tools`, directly or through others (a called agent runs inside its
//! caller's turn, so calls around a circle could nest without end). An agent called as a tool may
//! call agents itself otherwise. [`reached`] is what every other rule about what an agent's model
//! can have run reads: the risk policy and the state that bound arguments read.

use std::collections::BTreeMap;

use super::Problems;
use crate::model::Artifact;

pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    for (name, agent) in &artifact.agents {
        for used in &agent.agent_tools {
            if artifact
                .agents
                .get(&used.agent)
                .is_some_and(|inner| !inner.handoffs.is_empty())
            {
                problems.push(format!(
                    "agent `{name}` calls agent `{}` as a tool, which hands off; an agent called as a tool has no handoffs",
                    used.agent
                ));
            }
        }
    }
    cycles(artifact, problems);
}

/// One problem per circle: a depth-first search (iterative) over the calls, in name order,
/// reports each call back to an agent still on its path.
fn cycles(artifact: &Artifact, problems: &mut Problems) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        OnPath(usize),
        Done,
    }
    let mut marks: BTreeMap<&str, Mark> = BTreeMap::new();
    let callees = |agent: &str| -> Vec<&str> {
        artifact
            .agents
            .get(agent)
            .map(|a| a.agent_tools.iter().map(|used| used.agent.as_str()).collect())
            .unwrap_or_default()
    };
    for root in artifact.agents.keys() {
        if marks.contains_key(root.as_str()) {
            continue;
        }
        let mut path: Vec<(&str, Vec<&str>, usize)> = vec![(root, callees(root), 0)];
        marks.insert(root, Mark::OnPath(0));
        while let Some((agent, calls, followed)) = path.last_mut() {
            let agent = *agent;
            let Some(&next) = calls.get(*followed) else {
                marks.insert(agent, Mark::Done);
                path.pop();
                continue;
            };
            *followed += 1;
            match marks.get(next).copied() {
                None if artifact.agents.contains_key(next) => {
                    marks.insert(next, Mark::OnPath(path.len()));
                    path.push((next, callees(next), 0));
                }
                Some(Mark::OnPath(depth)) => {
                    let mut circle: Vec<&str> = path.iter().skip(depth).map(|(a, _, _)| *a).collect();
                    circle.push(next);
                    let shown = circle.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(" → ");
                    problems.push(format!("agents call each other as tools in a circle: {shown}"));
                }
                None | Some(Mark::Done) => {}
            }
        }
    }
}

/// One agent reached through `agent_tools` from another (the root).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reached<'a> {
    /// The agent reached (a key of `agents`).
    pub(crate) agent: &'a str,
    /// Where the agent that calls it was reached, in the root's list; `None` for the root.
    from: Option<usize>,
}

/// The agents `root` reaches through `agent_tools` at any depth, nearest first, each once and
/// never `root` itself (a breadth-first search, iterative).
pub(crate) fn reached<'a>(artifact: &'a Artifact, root: &str) -> Vec<Reached<'a>> {
    let mut out: Vec<Reached<'a>> = Vec::new();
    let mut seen = std::collections::BTreeSet::from([root]);
    let mut caller = artifact.agents.get(root).map(|agent| (agent, None));
    let mut next = 0;
    while let Some((agent, from)) = caller {
        for used in &agent.agent_tools {
            if artifact.agents.contains_key(&used.agent) && seen.insert(used.agent.as_str()) {
                out.push(Reached {
                    agent: &used.agent,
                    from,
                });
            }
        }
        caller = out
            .get(next)
            .and_then(|link| artifact.agents.get(link.agent).map(|agent| (agent, Some(next))));
        next += 1;
    }
    out
}

/// The agents called from the root down to its `index`-th reached agent, in order.
pub(crate) fn chain<'a>(reached: &[Reached<'a>], index: usize) -> Vec<&'a str> {
    let mut chain = Vec::new();
    let mut at = Some(index);
    while let Some(link) = at.and_then(|i| reached.get(i)) {
        chain.push(link.agent);
        at = link.from;
        if chain.len() > reached.len() {
            break;
        }
    }
    chain.reverse();
    chain
}
