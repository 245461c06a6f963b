//! Structural self-checks: the rules a runtime relies on without checking them again.
//!
//! The compiler proves far more (reachability, templates, schemas); these are the cheap local
//! facts that keep the runtime from ever looking up a name that is not there or choosing between
//! two ways on. The risk policy (approvals, prohibited tools) is [`crate::policy`]'s, and runs
//! only on an artifact that passes these. [`crate::seal`] refuses an artifact that breaks one,
//! and [`crate::load`] refuses a sealed file that breaks one.

pub(crate) mod agent_tools;
mod answer_fields;
pub(crate) mod approvals;
mod bindings;
mod bound;
mod risk_rules;
mod script;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

mod entries;
mod forks;
mod loops;
mod output_guards;
mod payloads;
mod retries;
mod subgraphs;
mod writes;

use crate::model::{
    Agent, Arm, Artifact, BUILTIN_TOOLS, BUILTIN_VALIDATORS, END, EdgeKind, Graph, NodeKind, Schema, Validator,
};

/// Checks `artifact`; the error names the first problem and how many more there are.
pub(crate) fn check(artifact: &Artifact) -> Result<(), String> {
    let mut problems = Problems::default();
    check_models(artifact, &mut problems);
    check_tools(artifact, &mut problems);
    bindings::check(artifact, &mut problems);
    bound::check(artifact, &mut problems);
    risk_rules::check(artifact, &mut problems);
    retries::check(artifact, &mut problems);
    check_interrupts(artifact, &mut problems);
    crate::decision_check::check(artifact, &mut problems.found);
    approvals::check(artifact, &mut problems);
    answer_fields::check(artifact, &mut problems);
    check_validators(artifact, &mut problems);
    for (name, agent) in &artifact.agents {
        check_agent(artifact, name, agent, &mut problems);
    }
    agent_tools::check(artifact, &mut problems);
    for (name, graph) in &artifact.graphs {
        check_graph(artifact, name, graph, &mut problems);
    }
    problems.into_result()
}

/// Problems found, in a deterministic order; lists out of order are reported after everything
/// else, since an edit usually breaks both and the other problem says more.
#[derive(Default)]
struct Problems {
    found: Vec<String>,
    unsorted: Vec<String>,
}

impl Problems {
    fn push(&mut self, problem: String) {
        self.found.push(problem);
    }

    fn into_result(self) -> Result<(), String> {
        let mut all = self.found.into_iter().chain(self.unsorted);
        let Some(first) = all.next() else {
            return Ok(());
        };
        Err(match all.count() {
            0 => first,
            1 => format!("{first} (and 1 more problem)"),
            more => format!("{first} (and {more} more problems)"),
        })
    }
}

fn check_models(artifact: &Artifact, problems: &mut Problems) {
    for (name, model) in &artifact.models {
        if let Some(variable) = &model.api_key_env
            && !is_env_name(variable)
        {
            problems.push(format!(
                "model `{name}`: `api_key_env` must name an environment variable, not hold a value"
            ));
        }
        if !model.params.is_object() {
            problems.push(format!("model `{name}`: `params` must be an object"));
        }
        script::check(name, model, problems);
    }
}

fn check_tools(artifact: &Artifact, problems: &mut Problems) {
    for (name, tool) in &artifact.tools {
        if !is_function_name(&tool.name) {
            problems.push(format!(
                "tool `{name}`: model-facing name `{}` must be 1 to 64 of `A-Z a-z 0-9 _ -`",
                tool.name
            ));
        }
        if !tool.parameters.is_object() {
            problems.push(format!("tool `{name}`: `parameters` must be a schema object"));
        }
        check_schema(tool.result.as_ref(), || format!("tool `{name}`: `result`"), problems);
        if let Some(approval) = &tool.approval {
            let what = || format!("tool `{name}`: approval `response_schema`");
            check_schema(Some(&approval.response_schema), what, problems);
        }
        check_sorted(&tool.tags, || format!("tool `{name}`: `tags`"), problems);
        check_sorted(&tool.approved_by, || format!("tool `{name}`: `approved_by`"), problems);
        for interrupt in &tool.approved_by {
            match artifact.interrupts.get(interrupt) {
                None => problems.push(format!("tool `{name}` is approved by unknown interrupt `{interrupt}`")),
                Some(step) if !step.approves.contains(name) => problems.push(format!(
                    "tool `{name}` lists interrupt `{interrupt}` in `approved_by`, but the \
                     interrupt does not list the tool in `approves`"
                )),
                Some(_) => {}
            }
        }
        if let crate::Run::Builtin { name: handler } = &tool.run
            && !BUILTIN_TOOLS.contains(&handler.as_str())
        {
            problems.push(format!("tool `{name}` runs unknown builtin `{handler}`"));
        }
        if let crate::Run::Http { timeout_ms: 0, .. } = tool.run {
            problems.push(format!("tool `{name}`: `timeout_ms` must be at least 1"));
        }
    }
}

fn check_interrupts(artifact: &Artifact, problems: &mut Problems) {
    for (name, interrupt) in &artifact.interrupts {
        let what = || format!("interrupt `{name}`: `response_schema`");
        check_schema(Some(&interrupt.response_schema), what, problems);
        check_sorted(
            &interrupt.approves,
            || format!("interrupt `{name}`: `approves`"),
            problems,
        );
        for tool in &interrupt.approves {
            match artifact.tools.get(tool) {
                None => problems.push(format!("interrupt `{name}` approves unknown tool `{tool}`")),
                Some(found) if !found.approved_by.contains(name) => problems.push(format!(
                    "interrupt `{name}` approves tool `{tool}`, but the tool does not list the \
                     interrupt in `approved_by`"
                )),
                Some(_) => {}
            }
        }
    }
}

fn check_validators(artifact: &Artifact, problems: &mut Problems) {
    for (name, validator) in &artifact.validators {
        if let Validator::Builtin { name: handler, args } = validator {
            if !BUILTIN_VALIDATORS.contains(&handler.as_str()) {
                problems.push(format!("validator `{name}` runs unknown builtin `{handler}`"));
            }
            if !args.is_object() {
                problems.push(format!("validator `{name}`: `args` must be an object"));
            }
        }
    }
}

fn check_agent<'a>(artifact: &'a Artifact, name: &str, agent: &'a Agent, problems: &mut Problems) {
    if !artifact.models.contains_key(&agent.model) {
        problems.push(format!("agent `{name}` uses unknown model `{}`", agent.model));
    }
    output_guards::check(artifact, name, agent, problems);
    if let Some(problem) = agent.input.problem() {
        problems.push(format!("agent `{name}`: {problem}"));
    }
    payloads::check(name, agent, problems);
    check_schema(
        agent.output_schema.as_ref(),
        || format!("agent `{name}`: `output_schema`"),
        problems,
    );
    check_sorted(
        &agent.allowed_tools,
        || format!("agent `{name}`: `allowed_tools`"),
        problems,
    );
    check_sorted(&agent.handoffs, || format!("agent `{name}`: `handoffs`"), problems);
    // Model-facing name -> what claims it, so that a call can never be ambiguous.
    let mut claimed: BTreeMap<&str, Claimant<'_>> = BTreeMap::new();
    let mut claim = |model_name: &'a str, owner: Claimant<'a>, problems: &mut Problems| {
        if let Some(first) = claimed.get(model_name) {
            problems.push(format!(
                "agent `{name}`: tool name `{model_name}` is claimed by both {first} and {owner}"
            ));
        } else {
            claimed.insert(model_name, owner);
        }
    };
    for tool_name in &agent.allowed_tools {
        match artifact.tools.get(tool_name) {
            None => problems.push(format!("agent `{name}` allows unknown tool `{tool_name}`")),
            Some(tool) => claim(&tool.name, Claimant::Tool(tool_name), problems),
        }
    }
    for handoff in &agent.handoffs {
        if !artifact.agents.contains_key(&handoff.target) {
            problems.push(format!(
                "agent `{name}` hands off to unknown agent `{}`",
                handoff.target
            ));
        }
        if !is_function_name(&handoff.tool_name) {
            problems.push(format!(
                "agent `{name}`: handoff tool name `{}` must be 1 to 64 of `A-Z a-z 0-9 _ -`",
                handoff.tool_name
            ));
        }
        claim(&handoff.tool_name, Claimant::Handoff(&handoff.target), problems);
    }
    check_sorted(
        &agent.agent_tools,
        || format!("agent `{name}`: `agent_tools`"),
        problems,
    );
    for used in &agent.agent_tools {
        // That it hands off to no one, and that no agent reaches itself, is `agent_tools`'s.
        if !artifact.agents.contains_key(&used.agent) {
            problems.push(format!("agent `{name}` calls unknown agent `{}` as a tool", used.agent));
        }
        if !is_function_name(&used.tool_name) {
            problems.push(format!(
                "agent `{name}`: the tool name `{}` of agent `{}` must be 1 to 64 of `A-Z a-z 0-9 _ -`",
                used.tool_name, used.agent
            ));
        }
        if !used.parameters.is_object() {
            problems.push(format!(
                "agent `{name}`: the parameters of agent tool `{}` must be an object schema",
                used.tool_name
            ));
        }
        claim(&used.tool_name, Claimant::Agent(&used.agent), problems);
    }
}

fn check_graph(artifact: &Artifact, name: &str, graph: &Graph, problems: &mut Problems) {
    let report = |problems: &mut Problems, message: String| problems.push(format!("graph `{name}`: {message}"));
    let is_node = |node: &str| graph.nodes.contains_key(node);
    let is_target = |node: &str| node == END || graph.nodes.contains_key(node);
    if !is_node(&graph.entry) {
        report(problems, format!("entry `{}` is not a node", graph.entry));
    }
    entries::check(name, graph, problems);
    writes::check(artifact, name, graph, problems);
    loops::check(name, graph, problems);
    forks::check(name, graph, problems);
    subgraphs::check(artifact, name, graph, problems);
    if graph.recursion_limit == 0 {
        report(problems, "`recursion_limit` must be at least 1".to_owned());
    }
    if !graph.state_schema.is_schema() {
        report(problems, "`state_schema` must be a schema object".to_owned());
    }
    for used in &graph.input_validators {
        if !artifact.validators.contains_key(&used.validator) {
            report(problems, format!("input validator `{}` does not exist", used.validator));
        }
        if !used.args.is_object() {
            report(
                problems,
                format!("arguments of input validator `{}` must be an object", used.validator),
            );
        }
    }
    for (node, spec) in &graph.nodes {
        let exists = match spec.kind {
            NodeKind::Agent => artifact.agents.contains_key(&spec.reference),
            NodeKind::Tool => artifact.tools.contains_key(&spec.reference),
            NodeKind::Interrupt => artifact.interrupts.contains_key(&spec.reference),
            NodeKind::Graph => artifact.graphs.contains_key(&spec.reference),
        };
        if node == END {
            report(problems, format!("`{END}` is reserved and cannot be a node name"));
        }
        if !exists {
            let kind = match spec.kind {
                NodeKind::Agent => "agent",
                NodeKind::Tool => "tool",
                NodeKind::Interrupt => "interrupt",
                NodeKind::Graph => "graph",
            };
            report(
                problems,
                format!("node `{node}` runs unknown {kind} `{}`", spec.reference),
            );
        }
    }
    check_sorted(&graph.edges, || format!("graph `{name}`: `edges`"), problems);
    let sorted_routes = graph.routes.windows(2).all(|pair| match pair {
        [a, b] => a.from < b.from,
        _ => true,
    });
    if !sorted_routes {
        problems
            .unsorted
            .push(format!("graph `{name}`: routes must be sorted by `from`, one per node"));
    }
    // The agent each agent node runs, for handoff checks.
    let agent_of = |node: &str| {
        graph
            .nodes
            .get(node)
            .filter(|spec| spec.kind == NodeKind::Agent)
            .map(|spec| spec.reference.as_str())
    };
    let mut plain_out: BTreeMap<&str, usize> = BTreeMap::new();
    let mut handoff_edges: BTreeSet<(&str, &str)> = BTreeSet::new();
    for edge in &graph.edges {
        if !is_node(&edge.from) {
            report(problems, format!("edge from unknown node `{}`", edge.from));
        }
        if !is_target(&edge.to) {
            report(
                problems,
                format!("edge from `{}` leads to unknown node `{}`", edge.from, edge.to),
            );
        }
        match edge.kind {
            EdgeKind::Plain => *plain_out.entry(edge.from.as_str()).or_default() += 1,
            EdgeKind::Handoff => {
                let from_agent = agent_of(&edge.from);
                let to_agent = agent_of(&edge.to);
                let declared = from_agent
                    .and_then(|agent| artifact.agents.get(agent))
                    .is_some_and(|agent| agent.handoffs.iter().any(|h| Some(h.target.as_str()) == to_agent));
                if !declared {
                    report(
                        problems,
                        format!(
                            "handoff edge from `{}` to `{}` does not match a declared handoff \
                         between agent nodes",
                            edge.from, edge.to
                        ),
                    );
                }
                handoff_edges.insert((edge.from.as_str(), edge.to.as_str()));
            }
        }
    }
    for (node, count) in &plain_out {
        if *count > 1 {
            report(
                problems,
                format!("node `{node}` has {count} plain edges; at most one is allowed"),
            );
        }
    }
    for (node, spec) in &graph.nodes {
        let Some(agent) = artifact
            .agents
            .get(&spec.reference)
            .filter(|_| spec.kind == NodeKind::Agent)
        else {
            continue;
        };
        for handoff in &agent.handoffs {
            let edges = handoff_edges
                .iter()
                .filter(|(from, to)| from == node && agent_of(to) == Some(handoff.target.as_str()))
                .count();
            if edges != 1 {
                report(
                    problems,
                    format!(
                        "node `{node}` must have exactly one handoff edge to a node of agent `{}`, \
                     found {edges}",
                        handoff.target
                    ),
                );
            }
        }
    }
    let mut routed = BTreeSet::new();
    for route in &graph.routes {
        let from = route.from.as_str();
        routed.insert(from);
        if !is_node(from) {
            report(problems, format!("route from unknown node `{from}`"));
        }
        if plain_out.contains_key(from) {
            report(problems, format!("node `{from}` has both a route and a plain edge"));
        }
        if route.arms.is_empty() {
            report(problems, format!("route from `{from}` has no arms"));
        }
        let mut labels = BTreeSet::new();
        for (index, arm) in route.arms.iter().enumerate() {
            if !is_target(arm.target()) {
                report(
                    problems,
                    format!("route from `{from}` leads to unknown node `{}`", arm.target()),
                );
            }
            match arm {
                Arm::Else { .. } if index + 1 != route.arms.len() => {
                    report(
                        problems,
                        format!("route from `{from}`: the `else` arm must be the last arm"),
                    );
                }
                Arm::Label { label, .. } if !labels.insert(label.as_str()) => {
                    report(problems, format!("route from `{from}` matches label `{label}` twice"));
                }
                _ => {}
            }
        }
    }
    for node in graph.nodes.keys() {
        if !plain_out.contains_key(node.as_str()) && !routed.contains(node.as_str()) && graph.fork_of(node).is_none() {
            report(
                problems,
                format!("node `{node}` has no way on (no plain edge, no route and no fork)"),
            );
        }
    }
}

/// What claims a model-facing tool name in an agent.
enum Claimant<'a> {
    /// The tool of this key.
    Tool(&'a str),
    /// The handoff to this agent.
    Handoff(&'a str),
    /// This agent, called as a tool.
    Agent(&'a str),
}

impl fmt::Display for Claimant<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool(tool) => write!(formatter, "tool `{tool}`"),
            Self::Handoff(agent) => write!(formatter, "the handoff to `{agent}`"),
            Self::Agent(agent) => write!(formatter, "agent `{agent}` as a tool"),
        }
    }
}

/// `what` names the place, and is only written out when there is a problem.
fn check_schema(schema: Option<&Schema>, what: impl FnOnce() -> String, problems: &mut Problems) {
    if let Some(schema) = schema
        && !schema.is_schema()
    {
        problems.push(format!("{} must be a schema (an object or a boolean)", what()));
    }
}

fn check_sorted<T: Ord>(list: &[T], what: impl FnOnce() -> String, problems: &mut Problems) {
    let sorted = list.windows(2).all(|pair| match pair {
        [a, b] => a < b,
        _ => true,
    });
    if !sorted {
        problems
            .unsorted
            .push(format!("{} must be sorted and without repeats", what()));
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: an environment variable name.
fn is_env_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|rest| rest.is_ascii_alphanumeric() || rest == '_')
}

/// `[A-Za-z0-9_-]{1,64}`: what model providers accept as a function name.
fn is_function_name(text: &str) -> bool {
    (1..=64).contains(&text.len()) && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
