//! Bounded loops and failure handlers of a graph: visit limits with their exits, and the node a
//! run goes to when a node fails.

use serde::{Deserialize, Serialize};

/// The largest `max` of a visit limit.
pub const MAX_VISITS: u64 = 1_000;

/// A node a run may enter at most `max` times. A way (edge, route arm, handoff, `on_error` or
/// another limit's exit) that would enter it once more leads to `exit` instead, without running
/// the node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisitLimit {
    /// The limited node.
    pub node: String,
    /// How many times one run may enter it, 1 to [`MAX_VISITS`].
    pub max: u64,
    /// A node of the graph, or `END`, other than `node`.
    pub exit: String,
}

/// Where a run goes when `node` fails (after its retries), instead of failing the run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorExit {
    /// The node that may fail.
    pub node: String,
    /// A node of the graph, or `END`, other than `node`.
    pub target: String,
}
