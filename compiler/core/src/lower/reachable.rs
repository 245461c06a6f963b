//! Which declarations go into the artifact: everything some graph can run.
//!
//! Starting from every graph, the closure takes in its nodes (agents, tool nodes, interrupts) and
//! its input validators; for an agent, its model, the tools it sees and the agents it hands off
//! to or calls as tools; for an interrupt, the tools it approves; for a tool, the interrupts that approve it (so
//! that `approves` and `approved_by` mirror each other in the artifact). Declarations nothing
//! reaches, such as the unused parts of an `import std.tools.*`, are left out.

use crate::check::Facts;
use crate::resolve::{AgentId, DeclRef, InterruptId, ModelId, ToolId, ValidatorId};
use std::collections::{BTreeMap, BTreeSet};

/// The declarations that go into the artifact, by id.
#[derive(Debug, Default)]
pub struct Reachable {
    /// Agents.
    pub agents: BTreeSet<AgentId>,
    /// Tools.
    pub tools: BTreeSet<ToolId>,
    /// Models.
    pub models: BTreeSet<ModelId>,
    /// Validators.
    pub validators: BTreeSet<ValidatorId>,
    /// Interrupts.
    pub interrupts: BTreeSet<InterruptId>,
    /// For each tool name, the interrupts (all of the program's) whose `approves` names it.
    pub approvers: BTreeMap<String, Vec<InterruptId>>,
}

impl Reachable {
    /// The closure from every graph of the program (iterative).
    pub fn compute(facts: &Facts<'_>) -> Reachable {
        let program = facts.program;
        let mut reachable = Reachable::default();
        for (i, interrupt) in program.interrupts.iter_enumerated() {
            for tool in &interrupt.decl.approves {
                reachable.approvers.entry(tool.name.clone()).or_default().push(i);
            }
        }
        let mut work: Vec<DeclRef> = Vec::new();
        for (g, graph) in program.graphs.iter_enumerated() {
            for used in &graph.decl.validate {
                if let Some(symbol) = program.lookup(&used.name.name) {
                    work.push(symbol.decl);
                }
            }
            for node in facts.topologies.get(g).into_iter().flat_map(|t| &t.nodes) {
                work.push(node.decl);
            }
        }
        while let Some(decl) = work.pop() {
            let new = match decl {
                DeclRef::Agent(id) => reachable.agents.insert(id),
                DeclRef::Tool(id) => reachable.tools.insert(id),
                DeclRef::Model(id) => reachable.models.insert(id),
                DeclRef::Validator(id) => reachable.validators.insert(id),
                DeclRef::Interrupt(id) => reachable.interrupts.insert(id),
                DeclRef::Tag(_) | DeclRef::Schema(_) | DeclRef::Graph(_) => continue,
            };
            if !new {
                continue;
            }
            match decl {
                DeclRef::Agent(index) => {
                    let Some(agent) = program.agents.get(index) else {
                        continue;
                    };
                    let model = agent.decl.model.as_ref().and_then(|m| program.lookup(&m.name));
                    work.extend(model.map(|s| s.decl));
                    for &tool in facts.visible_tools.get(index).into_iter().flatten() {
                        work.push(DeclRef::Tool(tool));
                    }
                    for target in &agent.decl.handoffs {
                        work.extend(program.lookup(&target.name).map(|s| s.decl));
                    }
                    for used in &agent.decl.agent_tools {
                        work.extend(program.lookup(&used.agent.name).map(|s| s.decl));
                    }
                    for used in &agent.decl.guard {
                        work.extend(program.lookup(&used.name.name).map(|s| s.decl));
                    }
                }
                DeclRef::Tool(index) => {
                    let Some(tool) = program.tools.get(index) else { continue };
                    let approvers = reachable.approvers.get(&tool.decl.name.name).into_iter().flatten();
                    work.extend(approvers.map(|&i| DeclRef::Interrupt(i)));
                }
                DeclRef::Interrupt(index) => {
                    let Some(interrupt) = program.interrupts.get(index) else {
                        continue;
                    };
                    for tool in &interrupt.decl.approves {
                        work.extend(program.lookup(&tool.name).map(|s| s.decl));
                    }
                }
                _ => {}
            }
        }
        reachable
    }
}
