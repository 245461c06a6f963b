//! Lowering of a graph's subgraph nodes' state mappings: one [`SubgraphCall`] per subgraph node,
//! sorted by node, with empty maps when the program writes none (check proves every key and
//! field, `check/subgraphs`).

use crate::ast::GraphDecl;
use crate::check::topology::Topology;
use crate::resolve::DeclKind;
use tenx_artifact::SubgraphCall;

/// The `subgraphs` of a graph: every subgraph node, with the first mapping written for it.
pub(super) fn subgraph_calls(decl: &GraphDecl, topology: &Topology) -> Vec<SubgraphCall> {
    let mut calls: Vec<SubgraphCall> = topology
        .nodes
        .iter()
        .filter(|node| node.kind() == DeclKind::Graph)
        .map(|node| {
            let mut call = SubgraphCall {
                node: node.name.clone(),
                input: Default::default(),
                output: Default::default(),
            };
            if let Some(map) = decl.subgraphs.iter().find(|m| m.node.name == node.name) {
                for pair in &map.input {
                    call.input
                        .entry(pair.to.name.clone())
                        .or_insert_with(|| pair.from.name.clone());
                }
                for pair in &map.output {
                    call.output
                        .entry(pair.to.name.clone())
                        .or_insert_with(|| pair.from.name.clone());
                }
            }
            call
        })
        .collect();
    calls.sort();
    calls
}
