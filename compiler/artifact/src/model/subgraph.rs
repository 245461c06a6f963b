//! Subgraphs: a node of one graph that runs another graph of the artifact as one step. The inner
//! graph runs with a state of its own, filled from the outer state by `input` (then its own
//! defaults), over the conversation as the node found it; when it reaches its `END` its messages
//! are appended to the outer conversation and `output` copies its fields back into the outer
//! state. The inner graph is proved on its own, from its own entry, like every graph of the
//! artifact, so an approval inside it still gates its tool, and nothing outside it approves a
//! tool inside it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a subgraph node's state is mapped in and out.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubgraphCall {
    /// The subgraph node (its `ref` names the inner graph).
    pub node: String,
    /// Inner state field → the outer state field it starts with (copied when set).
    pub input: BTreeMap<String, String>,
    /// Outer state field → the inner state field it takes when the inner graph ends (copied
    /// when set).
    pub output: BTreeMap<String, String>,
}

impl super::Graph {
    /// The state mapping of the subgraph node `node`, if it is one.
    pub fn subgraph_of(&self, node: &str) -> Option<&SubgraphCall> {
        self.subgraphs.iter().find(|call| call.node == node)
    }
}
