//! Declarations that nothing uses (all warnings): a tool no agent sees and no graph runs
//! (`TENX0901`; an interrupt's `approves` alone does not count), a model no agent uses
//! (`TENX0902`), a declared validator no graph's `validate` lists (`TENX0903`). Stdlib
//! declarations are never reported: importing a whole module is normal.

use super::Facts;
use crate::resolve::DeclRef;
use std::collections::BTreeSet;
use tenx_diagnostics::{Code, Diagnostic};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for (t, tool) in program.tools.iter_enumerated() {
        let seen = facts.seen_by.get(t).is_some_and(|agents| !agents.is_empty());
        if tool.stdlib || seen || facts.used_as_node.contains(&DeclRef::Tool(t)) {
            continue;
        }
        let name = &tool.decl.name.name;
        let approved_by = program
            .interrupts
            .iter()
            .find(|i| i.decl.approves.iter().any(|a| a.name == *name));
        let mut d = Diagnostic::new(
            Code::TENX0901,
            format!("tool `{name}` is never used"),
            tool.file,
            tool.decl.name.span,
        )
        .label("no agent can see it and no graph runs it")
        .help(format!(
            "give it to an agent (`tools = [{name}]`), make it a node of a graph, or remove it"
        ));
        if let Some(interrupt) = approved_by {
            d = d.secondary(
                interrupt.file,
                interrupt.decl.name.span,
                format!(
                    "interrupt `{}` approves it, but approving a tool does not run it",
                    interrupt.decl.name.name
                ),
            );
        }
        diagnostics.push(d);
    }
    let used_models: BTreeSet<&str> = program
        .agents
        .iter()
        .filter_map(|a| a.decl.model.as_ref())
        .map(|m| m.name.as_str())
        .collect();
    for model in &program.models {
        let name = &model.decl.name.name;
        if model.stdlib || used_models.contains(name.as_str()) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0902,
                format!("model `{name}` is never used"),
                model.file,
                model.decl.name.span,
            )
            .label("no agent uses this model")
            .help(format!("set `model = {name}` in an agent, or remove it")),
        );
    }
    let used_validators: BTreeSet<&str> = program
        .graphs
        .iter()
        .flat_map(|g| g.decl.validate.iter().map(|v| v.name.name.as_str()))
        .chain(
            program
                .agents
                .iter()
                .flat_map(|a| a.decl.guard.iter().map(|v| v.name.name.as_str())),
        )
        .collect();
    for validator in &program.validators {
        let name = &validator.decl.name.name;
        if validator.stdlib || used_validators.contains(name.as_str()) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0903,
                format!("validator `{name}` is never used"),
                validator.file,
                validator.decl.name.span,
            )
            .label("no graph validates its input with it")
            .help(format!("add it to a graph: `validate = [{name}]`, or remove it")),
        );
    }
}
