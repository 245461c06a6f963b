//! Which declarations go into the artifact: everything some graph can run.
//!
//! Starting from every graph, the closure takes in its nodes (agents, tool nodes, interrupts) and
//! its input validators; for an agent, its model, the tools it sees and the agents it hands off
//! to; for an interrupt, the tools it approves; for a tool, the interrupts that approve it (so
//! that `approves` and `approved_by` mirror each other in the artifact). Declarations nothing
//! reaches, such as the unused parts of an `import std.tools.*`, are left out.

use crate::check::Facts;
use crate::resolve::DeclKind;
use std::collections::{BTreeMap, BTreeSet};

/// The declarations that go into the artifact, as indexes into the program's vectors.
#[derive(Debug, Default)]
pub struct Reachable {
    /// Agents.
    pub agents: BTreeSet<usize>,
    /// Tools.
    pub tools: BTreeSet<usize>,
    /// Models.
    pub models: BTreeSet<usize>,
    /// Validators.
    pub validators: BTreeSet<usize>,
    /// Interrupts.
    pub interrupts: BTreeSet<usize>,
    /// For each tool name, the interrupts (all of the program's) whose `approves` names it.
    pub approvers: BTreeMap<String, Vec<usize>>,
}

impl Reachable {
    /// The closure from every graph of the program (iterative).
    pub fn compute(facts: &Facts<'_>) -> Reachable {
        let program = facts.program;
        let mut reachable = Reachable::default();
        for (i, interrupt) in program.interrupts.iter().enumerate() {
            for tool in &interrupt.decl.approves {
                reachable.approvers.entry(tool.name.clone()).or_default().push(i);
            }
        }
        let mut work: Vec<(DeclKind, usize)> = Vec::new();
        for (g, graph) in program.graphs.iter().enumerate() {
            for used in &graph.decl.validate {
                if let Some(symbol) = program.lookup(&used.name.name) {
                    work.push((symbol.kind, symbol.index));
                }
            }
            for node in facts.topologies.get(g).map(|t| t.nodes.as_slice()).unwrap_or_default() {
                work.push((node.kind, node.decl));
            }
        }
        while let Some((kind, index)) = work.pop() {
            let set = match kind {
                DeclKind::Agent => &mut reachable.agents,
                DeclKind::Tool => &mut reachable.tools,
                DeclKind::Model => &mut reachable.models,
                DeclKind::Validator => &mut reachable.validators,
                DeclKind::Interrupt => &mut reachable.interrupts,
                DeclKind::Tag | DeclKind::Schema | DeclKind::Graph => continue,
            };
            if !set.insert(index) {
                continue;
            }
            match kind {
                DeclKind::Agent => {
                    let Some(agent) = program.agents.get(index) else {
                        continue;
                    };
                    let model = agent.decl.model.as_ref().and_then(|m| program.lookup(&m.name));
                    work.extend(model.map(|s| (s.kind, s.index)));
                    for &tool in facts.visible_tools.get(index).into_iter().flatten() {
                        work.push((DeclKind::Tool, tool));
                    }
                    for target in &agent.decl.handoffs {
                        work.extend(program.lookup(&target.name).map(|s| (s.kind, s.index)));
                    }
                }
                DeclKind::Tool => {
                    let Some(tool) = program.tools.get(index) else { continue };
                    let approvers = reachable.approvers.get(&tool.decl.name.name).into_iter().flatten();
                    work.extend(approvers.map(|&i| (DeclKind::Interrupt, i)));
                }
                DeclKind::Interrupt => {
                    let Some(interrupt) = program.interrupts.get(index) else {
                        continue;
                    };
                    for tool in &interrupt.decl.approves {
                        work.extend(program.lookup(&tool.name).map(|s| (s.kind, s.index)));
                    }
                }
                _ => {}
            }
        }
        reachable
    }
}
