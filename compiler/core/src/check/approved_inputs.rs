//! What an interrupt's approval is bound to, written by its own answer.
//!
//! An interrupt that `approves` a tool node shows the package of the call that node would make
//! and binds the approval to that package's fingerprint. The tool node computes the package
//! again from the state when the run reaches it, and runs the call only when the fingerprint is
//! the one approved; otherwise the run goes back to the interrupt and asks again. That recheck
//! reads the state: each argument the tool node takes from the state field of its name, each
//! argument bound to `state.FIELD`, the interrupt's `target` (a template over the state) and its
//! state `evidence`. The graph's `answers` write the answer into state before the run moves on,
//! so an answer written into one of those fields changes what the approval is bound to, and the
//! question is asked again instead of the call running (`TENX0343`).
//!
//! Only this approval has a recheck that can see an answer in the state. A tool's own `approval`
//! is asked where the call is made, after every earlier answer was written; its answer goes into
//! no state field (`answers` names interrupt nodes only, `TENX0335`), and the thread's state
//! cannot be written while the question is open. A tool node whose tool has an `approval` of its
//! own asks with it, whatever an interrupt before it answered, so it is left out here; an agent's
//! call cannot use an interrupt's approval at all (`TENX0604`).

use super::Facts;
use super::topology::{Target, Via};
use crate::ast::{AnswerWrite, InterruptDecl, ToolDecl};
use crate::resolve::{DeclKind, Located};
use std::collections::BTreeSet;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// Something the recheck at the tool node reads from one state field.
struct Read {
    /// The state field.
    field: String,
    file: FileId,
    span: Span,
    /// What reads it, for the secondary label.
    what: String,
}

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for (g, topology) in facts.topologies.iter_enumerated() {
        let Some(graph) = program.graphs.get(g) else { continue };
        for (from, node) in topology.nodes.iter_enumerated() {
            let Some(interrupt) = node.decl.interrupt().and_then(|i| program.interrupts.get(i)) else {
                continue;
            };
            if interrupt.decl.approves.is_empty() {
                continue;
            }
            // As lowering keeps them: one write per field, the first (a second is `TENX0339`).
            let mut fields = BTreeSet::new();
            let writes: Vec<&AnswerWrite> = graph
                .decl
                .answers
                .iter()
                .filter(|write| write.node.name == node.name && fields.insert(write.field.name.as_str()))
                .collect();
            if writes.is_empty() {
                continue;
            }
            let mut seen = BTreeSet::new();
            for (target, via) in topology.successors.get(from).into_iter().flatten() {
                // The ways an approving answer takes; the others are `TENX0627` and `TENX0629`.
                let (Target::Node(to), Via::Edge(_) | Via::Route(_)) = (*target, via) else {
                    continue;
                };
                let Some(tool_node) = topology.nodes.get(to).filter(|n| n.kind() == DeclKind::Tool) else {
                    continue;
                };
                let Some(t) = tool_node.decl.tool() else { continue };
                let Some(tool) = program.tools.get(t) else { continue };
                if tool.decl.approval.is_some() || !seen.insert(to) || !approves(facts, &interrupt.decl, t) {
                    continue;
                }
                let reads = reads(facts, tool, interrupt);
                for write in &writes {
                    let field = &write.field.name;
                    let readers: Vec<&Read> = reads.iter().filter(|read| read.field == *field).collect();
                    if readers.is_empty() {
                        continue;
                    }
                    diagnostics.push(report(graph.file, write, &node.name, &tool_node.name, &readers));
                }
            }
        }
    }
}

/// Whether the interrupt's `approves` names the tool `t`.
fn approves(facts: &Facts<'_>, interrupt: &InterruptDecl, t: crate::resolve::ToolId) -> bool {
    interrupt.approves.iter().any(|name| {
        facts
            .program
            .lookup_as(&name.name, &[DeclKind::Tool])
            .and_then(|symbol| symbol.decl.tool())
            == Some(t)
    })
}

/// Every state field the recheck at a node of `tool`, approved by `interrupt`, reads.
fn reads(facts: &Facts<'_>, tool: &Located<ToolDecl>, interrupt: &Located<InterruptDecl>) -> Vec<Read> {
    let decl = &tool.decl;
    let tool_name = &decl.name.name;
    let mut out = Vec::new();
    let bound = super::bound_args::bound_names(decl);
    for (name, file, span) in super::templates::tool_param_sites(facts.program, tool) {
        if bound.contains(&name) {
            continue;
        }
        out.push(Read {
            field: name.to_string(),
            file,
            span,
            what: format!("tool node `{tool_name}` takes its argument `{name}` from the state field `{name}`"),
        });
    }
    for (name, field, span) in super::bound_args::state_bindings(facts.program, decl) {
        out.push(Read {
            what: format!("`{name}` of `{tool_name}` is bound to `state.{field}`"),
            field,
            file: tool.file,
            span,
        });
    }
    let interrupt_name = &interrupt.decl.name.name;
    if let Some(target) = &interrupt.decl.target {
        for (root, span) in super::templates::placeholder_roots(facts, interrupt.file, target) {
            out.push(Read {
                what: format!("the `target` of `{interrupt_name}` reads `{root}`"),
                field: root.to_string(),
                file: interrupt.file,
                span,
            });
        }
    }
    for item in &interrupt.decl.evidence {
        let Some(name) = item.as_ident() else { continue };
        out.push(Read {
            field: name.name.clone(),
            file: interrupt.file,
            span: item.span,
            what: format!("the `evidence` of `{interrupt_name}` binds `{}`", name.name),
        });
    }
    out
}

fn report(file: FileId, write: &AnswerWrite, node: &str, tool_node: &str, readers: &[&Read]) -> Diagnostic {
    let field = &write.field.name;
    let what = match &write.property {
        Some(property) => format!("`{}` of the answer to `{node}`", property.name),
        None => format!("the answer to `{node}`"),
    };
    let mut d = Diagnostic::new(
        Code::TENX0343,
        format!("`answers` writes {what} into `{field}`, which the call that `{node}` approves reads"),
        file,
        write.field.span,
    )
    .label(format!("written into `{field}` before `{tool_node}` runs"));
    for read in readers {
        d = d.secondary(read.file, read.span, read.what.clone());
    }
    d.help(format!(
        "write it into another state field, or keep `{field}` out of what the approval is bound to; to let the person change the call, give the tool its own `approval` with `std.approval.approve_edit_reject`"
    ))
    .note(format!(
        "`{tool_node}` runs only when the call it would make now is the one approved; an answer that changes `{field}` makes another call, so the run goes back to `{node}` and asks again instead of running it"
    ))
}
