//! Lowering of a graph's `results` and `answers` to the artifact's `writes`: one [`Write`] per
//! source (the first entry for it), from a tool node (`node`), from a tool an agent node calls
//! (`tool`) or from an interrupt node's answer, whole or one property (`interrupt`), to a path
//! whose every step is a property of the lowered `state_schema`. Check proves each entry is such
//! (`TENX0302`, `TENX0328`, `TENX0329`, `TENX0332`–`TENX0339`); lowering keeps only those, so
//! the artifact's own check holds by construction.

use crate::ast::GraphDecl;
use crate::check::Facts;
use crate::check::topology::Topology;
use serde_json::Value;
use std::collections::BTreeSet;
use tenx_artifact::{Write, WriteSource};

/// The state writes of the graph `decl`, whose lowered state schema is `state`.
pub(super) fn writes(facts: &Facts<'_>, decl: &GraphDecl, topology: &Topology, state: &Value) -> Vec<Write> {
    let program = facts.program;
    let mut seen = BTreeSet::new();
    let mut answer_targets = BTreeSet::new();
    let mut out = Vec::new();
    for write in &decl.results {
        let name = &write.node.name;
        let from = match topology.index.get(name).and_then(|&n| topology.nodes.get(n)) {
            Some(node) if node.decl.tool().is_some() => WriteSource::Node(name.clone()),
            Some(_) => continue,
            None => {
                let Some(id) = program.lookup(name).and_then(|s| s.decl.tool()) else {
                    continue;
                };
                let callable = topology.nodes.iter().any(|n| {
                    n.decl
                        .agent()
                        .and_then(|a| facts.visible_tools.get(a))
                        .is_some_and(|tools| tools.contains(&id))
                });
                if !callable {
                    continue;
                }
                WriteSource::Tool(name.clone())
            }
        };
        let to: Vec<String> = std::iter::once(&write.field)
            .chain(&write.path)
            .map(|i| i.name.clone())
            .collect();
        if !declared(state, &to) || !seen.insert(from.clone()) {
            continue;
        }
        out.push(Write { from, to });
    }
    for write in &decl.answers {
        let Some(node) = topology
            .index
            .get(&write.node.name)
            .and_then(|&n| topology.nodes.get(n))
        else {
            continue;
        };
        let Some(interrupt) = node.decl.interrupt().and_then(|i| program.interrupts.get(i)) else {
            continue;
        };
        let property = write.property.as_ref().map(|p| p.name.clone());
        if let Some(property) = &property {
            let response = interrupt
                .decl
                .response
                .as_ref()
                .and_then(|r| crate::schema::lower_schema_ref(program, interrupt.file, r, &mut Vec::new()));
            // Declared by the response or by a part every answer matches, as `TENX0336` reads it.
            if response.is_none_or(|r| tenx_artifact::answer_ways::places(&r.value, property).is_empty()) {
                continue;
            }
        }
        let from = WriteSource::Interrupt {
            node: write.node.name.clone(),
            field: property,
        };
        let to = vec![write.field.name.clone()];
        // One write of each interrupt's answer per field, the first (`TENX0339`).
        let target = (write.node.name.clone(), write.field.name.clone());
        if !declared(state, &to) || answer_targets.contains(&target) || !seen.insert(from.clone()) {
            continue;
        }
        answer_targets.insert(target);
        out.push(Write { from, to });
    }
    out
}

/// Whether every step of `path` is a property the schema before it declares.
fn declared(state: &Value, path: &[String]) -> bool {
    let mut here = state;
    for step in path {
        match here.get("properties").and_then(|p| p.get(step)) {
            Some(next) => here = next,
            None => return false,
        }
    }
    !path.is_empty()
}
