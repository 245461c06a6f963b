//! What breaking the risk policy looks like: [`PolicyViolation`], one variant per rule, naming
//! the graph, the tool and the way a run takes to break it, and its one-line message.

use std::fmt;

use crate::Risk;

/// One way an artifact breaks the risk policy that the compiler proves (`TENX0601`, `TENX0602`
/// and `TENX0604`; a `medium` tool's confirmation is written by the compiler) and that [`crate::load`] and [`crate::seal`] re-prove.
///
/// A path lists node names in the order a run visits them. An *interrupt-approved* tool is one
/// with no `approval` of its own and at least one interrupt in `approved_by`: its approval is a
/// graph step, so the graph's shape decides whether it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyViolation {
    /// A `high` risk tool has neither an `approval` nor an approving interrupt.
    HighRiskWithoutApproval {
        /// The tool (a key of `tools`).
        tool: String,
    },
    /// An agent's `allowed_tools` offers a `prohibited` tool to its model.
    ProhibitedToolOffered {
        /// The agent.
        agent: String,
        /// The prohibited tool.
        tool: String,
    },
    /// A tool node runs a `prohibited` tool.
    ProhibitedToolRun {
        /// The graph.
        graph: String,
        /// The node.
        node: String,
        /// The prohibited tool.
        tool: String,
    },
    /// From the entry, a run reaches a node of an interrupt-approved tool without passing one of
    /// its approving interrupt nodes.
    ApprovalBypassed {
        /// The graph.
        graph: String,
        /// The tool.
        tool: String,
        /// Its risk.
        risk: Risk,
        /// From the entry to the tool's node.
        path: Vec<String>,
    },
    /// After a node of an interrupt-approved tool runs, the run can come back to it without
    /// passing an approving interrupt node again: the second run reuses the first approval.
    ApprovalReused {
        /// The graph.
        graph: String,
        /// The tool.
        tool: String,
        /// Its risk.
        risk: Risk,
        /// From the tool's node back to it.
        path: Vec<String>,
    },
    /// A node other than an approving interrupt leads straight into a node of an
    /// interrupt-approved tool, so it can run between the approval and the tool and change
    /// what the tool reads after a person approved it.
    StepAfterApproval {
        /// The graph.
        graph: String,
        /// The node that leads into the tool's node.
        node: String,
        /// The tool.
        tool: String,
        /// Its risk.
        risk: Risk,
        /// From the entry through `node` to the tool's node.
        path: Vec<String>,
    },
    /// A reachable agent node's agent may call an interrupt-approved tool, itself or through
    /// agents it calls as tools: an interrupt earlier in the graph is not bound to the call a
    /// model makes later.
    AgentCallsApprovedTool {
        /// The graph.
        graph: String,
        /// The agent node.
        node: String,
        /// The tool.
        tool: String,
        /// Its risk.
        risk: Risk,
        /// From the entry to the agent node, then, when the node's agent reaches the tool through
        /// agents it calls as tools, those agents in order: from the one the node's agent calls
        /// to the one that may call the tool.
        path: Vec<String>,
        /// How many names at the end of `path` are agents called as tools rather than nodes: 0
        /// when the node's agent may call the tool itself.
        through: usize,
    },
    /// An approving interrupt node leads into a node of a tool it approves by a way a rejecting
    /// answer can take (a route arm that does not test the written decision for the approve
    /// value, a failure handler, a visit limit's exit): rejecting it would run the tool.
    RejectionReachesTool {
        /// The graph.
        graph: String,
        /// The interrupt node.
        interrupt: String,
        /// The tool.
        tool: String,
        /// Its risk.
        risk: Risk,
        /// From the entry through the interrupt node to the tool's node.
        path: Vec<String>,
    },
    /// A `medium` risk tool has neither an `approval` nor an approving interrupt: the compiler
    /// always writes the default confirmation, so an artifact without one was edited to drop it.
    MediumRiskWithoutConfirmation {
        /// The tool (a key of `tools`).
        tool: String,
    },
    /// A node of an interrupt-approved tool starts a branch of a fork or is a fork's join: it is
    /// entered from the fork, never straight from an approving interrupt node (an approval given
    /// before a fork stays behind in the branch that asked it).
    ApprovalAcrossFork {
        /// The graph.
        graph: String,
        /// The node the fork leaves.
        fork: String,
        /// The tool's node.
        node: String,
        /// The tool.
        tool: String,
        /// Its risk.
        risk: Risk,
    },
}

impl fmt::Display for PolicyViolation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HighRiskWithoutApproval { tool } => write!(
                formatter,
                "tool `{tool}` has risk `high` but neither an approval nor an approving interrupt"
            ),
            Self::ProhibitedToolOffered { agent, tool } => {
                write!(
                    formatter,
                    "agent `{agent}` allows tool `{tool}`, whose risk is `prohibited`"
                )
            }
            Self::ProhibitedToolRun { graph, node, tool } => write!(
                formatter,
                "graph `{graph}`: node `{node}` runs tool `{tool}`, whose risk is `prohibited`"
            ),
            Self::ApprovalBypassed {
                graph,
                tool,
                risk,
                path,
            } => write!(
                formatter,
                "graph `{graph}`: tool `{tool}` (risk {risk}) can run without its approval: {}",
                Path::from_entry(path)
            ),
            Self::ApprovalReused {
                graph,
                tool,
                risk,
                path,
            } => write!(
                formatter,
                "graph `{graph}`: tool `{tool}` (risk {risk}) can run again without a new approval: {}",
                Path::between(path)
            ),
            Self::StepAfterApproval {
                graph,
                node,
                tool,
                risk,
                path,
            } => write!(
                formatter,
                "graph `{graph}`: node `{node}` runs between the approval of tool `{tool}` (risk {risk}) \
                 and the tool itself: {}",
                Path::from_entry(path)
            ),
            Self::AgentCallsApprovedTool {
                graph,
                node,
                tool,
                risk,
                path,
                through,
            } => {
                let (nodes, agents) = path.split_at(path.len().saturating_sub(*through));
                let asks: String = agents.iter().map(|agent| format!(" asks `{agent}`, which")).collect();
                write!(
                    formatter,
                    "graph `{graph}`: agent node `{node}` can call tool `{tool}` (risk {risk}) without \
                     passing its approval: {}{asks} calls `{tool}`",
                    Path::from_entry(nodes)
                )
            }
            Self::RejectionReachesTool {
                graph,
                interrupt,
                tool,
                risk,
                path,
            } => write!(
                formatter,
                "graph `{graph}`: a rejecting answer to interrupt node `{interrupt}` can lead to tool \
                 `{tool}` (risk {risk}), which it approves: {}",
                Path::from_entry(path)
            ),
            Self::ApprovalAcrossFork {
                graph,
                fork,
                node,
                tool,
                risk,
            } => write!(
                formatter,
                "graph `{graph}`: node `{node}` of tool `{tool}` (risk {risk}) is entered from the fork \
                 out of `{fork}`, not straight from an interrupt that approves it"
            ),
            Self::MediumRiskWithoutConfirmation { tool } => write!(
                formatter,
                "tool `{tool}` has risk `medium` but neither an approval (the default confirmation) \
                 nor an approving interrupt"
            ),
        }
    }
}

/// A path for a message: `` entry `a` → `b` → `c` ``, in full when short, else its first and
/// last steps around a count, as the compiler's notes write it.
struct Path<'a> {
    steps: &'a [String],
    from_entry: bool,
}

impl<'a> Path<'a> {
    /// A path that starts at the graph's entry.
    fn from_entry(steps: &'a [String]) -> Self {
        Self {
            steps,
            from_entry: true,
        }
    }

    /// A path that starts anywhere.
    fn between(steps: &'a [String]) -> Self {
        Self {
            steps,
            from_entry: false,
        }
    }
}

/// Steps shown at each end of a long path.
const ENDS: usize = 4;

impl fmt::Display for Path<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.steps.len();
        let long = count > 3 * ENDS;
        for (index, step) in self.steps.iter().enumerate() {
            if long && index >= ENDS && index < count - ENDS {
                if index == ENDS {
                    write!(formatter, " → … {} more steps …", count - 2 * ENDS)?;
                }
                continue;
            }
            if index > 0 {
                formatter.write_str(" → ")?;
            } else if self.from_entry {
                formatter.write_str("entry ")?;
            }
            write!(formatter, "`{step}`")?;
        }
        Ok(())
    }
}

/// ` (and N more problems)` after the first of `1 + more` problems, or nothing.
pub(crate) fn and_more(more: &usize) -> String {
    match more {
        0 => String::new(),
        1 => " (and 1 more problem)".to_owned(),
        more => format!(" (and {more} more problems)"),
    }
}
