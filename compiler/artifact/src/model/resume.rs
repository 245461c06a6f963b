//! Where the next run of a thread starts: a graph's `resume` option. With `last_agent`, a
//! thread whose last run finished by going from an agent node straight to `END` starts its next
//! run at that agent node (the *resume nodes* are the agent nodes with a way to `END` that a run
//! can reach); otherwise, and always with `entry`, the next run starts at `entry`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{END, Graph, NodeKind};

/// A graph's `resume` option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resume {
    /// Every run starts at `entry` (or a start node the client names).
    #[default]
    Entry,
    /// A new run of a thread starts at the agent node whose step ended its last run, when that
    /// run finished at `END` straight from an agent node.
    LastAgent,
}

impl Graph {
    /// The nodes a run of this graph may be resumed at, in name order: with
    /// [`Resume::LastAgent`], every agent node with a plain edge or a route arm to `END`;
    /// nothing with [`Resume::Entry`]. Whether a run can reach them is the caller's concern (the
    /// policy proof keeps only reachable ones).
    pub fn resume_nodes(&self) -> Vec<&str> {
        if self.resume != Resume::LastAgent {
            return Vec::new();
        }
        // One pass over the ways: the nodes with one into `END`.
        let mut ends: BTreeSet<&str> = self
            .edges
            .iter()
            .filter(|e| e.to == END)
            .map(|e| e.from.as_str())
            .collect();
        ends.extend(
            self.routes
                .iter()
                .filter(|r| r.arms.iter().any(|arm| arm.target() == END))
                .map(|r| r.from.as_str()),
        );
        self.nodes
            .iter()
            .filter(|(name, node)| node.kind == NodeKind::Agent && ends.contains(name.as_str()))
            .map(|(name, _)| name.as_str())
            .collect()
    }
}
