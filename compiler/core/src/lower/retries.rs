//! Lowering of a graph's `retry`: one policy per agent or tool node, the first written. Check
//! proves each entry names a node (`TENX0302`) once (`TENX0363`) that is no interrupt
//! (`TENX0360`), with a valid policy (`TENX0706`–`TENX0709`), so the filters only keep lowering
//! total. Sealing sorts the list. A tool's own `retry` is lowered with the tool
//! (`lower/tool.rs`).

use crate::ast::GraphDecl;
use crate::check::topology::Topology;
use crate::resolve::DeclKind;
use tenx_artifact::NodeRetry;

/// The graph's retry policies by node.
pub(super) fn node_retries(decl: &GraphDecl, topology: &Topology) -> Vec<NodeRetry> {
    let mut out: Vec<NodeRetry> = Vec::new();
    for retry in &decl.retry {
        let Some(node) = topology
            .index
            .get(&retry.node.name)
            .and_then(|&id| topology.nodes.get(id))
        else {
            continue;
        };
        if matches!(node.kind(), DeclKind::Interrupt | DeclKind::Graph) || out.iter().any(|r| r.node == retry.node.name)
        {
            continue;
        }
        if let Some(policy) = crate::retry::lower(&retry.policy) {
            out.push(NodeRetry {
                node: retry.node.name.clone(),
                policy,
            });
        }
    }
    out
}
