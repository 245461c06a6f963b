//! Lowering of a graph's `visits` and `on_error`: one entry per node whose names are nodes (or
//! `END` for an exit) other than the node itself; check proves that every entry is such (`TENX0302`, `TENX0351`), so the
//! filters only keep lowering total. Sealing sorts both lists.

use crate::ast::{GraphDecl, Ident};
use crate::check::topology::{END, Topology};
use tenx_artifact::{ErrorExit, VisitLimit};

/// The graph's visit limits.
pub(super) fn visit_limits(decl: &GraphDecl, topology: &Topology) -> Vec<VisitLimit> {
    let mut out: Vec<VisitLimit> = Vec::new();
    for limit in &decl.visits {
        if is_node(topology, &limit.node)
            && is_target(topology, &limit.exit)
            && limit.exit.name != limit.node.name
            && !out.iter().any(|l| l.node == limit.node.name)
        {
            out.push(VisitLimit {
                node: limit.node.name.clone(),
                max: limit.max.0,
                exit: limit.exit.name.clone(),
            });
        }
    }
    out
}

/// The graph's `on_error` handlers.
pub(super) fn error_exits(decl: &GraphDecl, topology: &Topology) -> Vec<ErrorExit> {
    let mut out: Vec<ErrorExit> = Vec::new();
    for exit in &decl.on_error {
        if is_node(topology, &exit.node)
            && is_target(topology, &exit.target)
            && exit.target.name != exit.node.name
            && !out.iter().any(|e| e.node == exit.node.name)
        {
            out.push(ErrorExit {
                node: exit.node.name.clone(),
                target: exit.target.name.clone(),
            });
        }
    }
    out
}

fn is_node(topology: &Topology, ident: &Ident) -> bool {
    topology.index.contains_key(&ident.name)
}

fn is_target(topology: &Topology, ident: &Ident) -> bool {
    ident.name == END || is_node(topology, ident)
}
