//! Graph topology in the artifact: nodes, edges, routes and their arms, input validators.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Schema;

use super::{Condition, ErrorExit, VisitLimit, sort_unique};

/// One servable graph: an entry node, nodes, the ways between them and its limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// The node a run starts at.
    pub entry: String,
    /// Nodes by name (unique within the graph; `END` is reserved).
    #[serde(deserialize_with = "super::packed_map")]
    pub nodes: BTreeMap<String, Node>,
    /// Fixed ways out of nodes, sorted by `(from, to, kind)`.
    pub edges: Vec<Edge>,
    /// Conditional ways out of nodes, at most one per node, sorted by `from`.
    pub routes: Vec<Route>,
    /// The most node steps one run may take before it fails.
    pub recursion_limit: u64,
    /// Validators applied, in this order, to every input before a run starts.
    pub input_validators: Vec<ValidatorUse>,
    /// JSON Schema (draft 2020-12) of the run state that routes and templates read.
    pub state_schema: Schema,
    /// The other nodes a run may start at, besides `entry`: sorted, without repeats, never
    /// `entry` itself. A run that asks to start anywhere else is refused.
    pub entries: Vec<String>,
    /// What the run writes into its state besides the input and agents' `output` answers:
    /// each entry names a source of values and the state path it goes to. Sorted, without
    /// repeats; one entry per source.
    pub writes: Vec<Write>,
    /// Nodes a run enters a bounded number of times, and where it goes instead: sorted by node,
    /// one per node.
    pub visit_limits: Vec<VisitLimit>,
    /// Where the run goes when a node fails: sorted by node, one per node.
    pub on_error: Vec<ErrorExit>,
    /// Where a thread's next run starts: `entry`, or `last_agent` (the agent node that ended
    /// the thread's last run, see [`super::Resume`]).
    pub resume: super::Resume,
    /// Retry policies by node, sorted by node, one per node: at a tool node the policy replaces
    /// the tool's own, at an agent node it retries the model calls. Never an interrupt node.
    pub retries: Vec<super::NodeRetry>,
    /// Ways out of nodes into parallel branches, sorted by `from`, at most one per node (see
    /// [`super::Fork`]).
    pub forks: Vec<super::Fork>,
    /// How state fields that several branches write merge at a join: sorted by field, one per
    /// field.
    pub reducers: Vec<super::Reducer>,
    /// How each subgraph node's state is mapped in and out, sorted by node, one per subgraph
    /// node.
    pub subgraphs: Vec<super::SubgraphCall>,
}

impl Graph {
    pub(crate) fn normalize(&mut self) {
        sort_unique(&mut self.edges);
        sort_unique(&mut self.entries);
        sort_unique(&mut self.writes);
        sort_unique(&mut self.visit_limits);
        sort_unique(&mut self.on_error);
        for retry in &mut self.retries {
            retry.policy.normalize();
        }
        sort_unique(&mut self.retries);
        sort_unique(&mut self.forks);
        sort_unique(&mut self.reducers);
        sort_unique(&mut self.subgraphs);
        self.routes.sort_by(|a, b| a.from.cmp(&b.from));
    }
}

/// A node: one step of a graph, which runs one agent, one tool or one human step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// What the node runs.
    pub kind: NodeKind,
    /// The name of what it runs: a key of `agents`, `tools` or `interrupts`, by `kind`.
    #[serde(rename = "ref")]
    pub reference: String,
}

/// One state write of a graph: every value `from` produces is written at the state path `to`
/// (besides going into the conversation, as a tool result always does).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Write {
    /// Where the values come from.
    pub from: WriteSource,
    /// The state path written: a top-level state field, then the properties inside it
    /// (`["order", "status"]` is `order.status`). Never empty.
    pub to: Vec<String>,
}

/// Where the values of a [`Write`] come from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum WriteSource {
    /// The result of the tool node of this name, each time it runs.
    Node(String),
    /// The result of every successful call of this tool (a key of `tools`) by an agent node
    /// of the graph. A call that fails, is refused or is rejected writes nothing.
    Tool(String),
    /// The answer to the interrupt node `node`, once it is valid: the whole answer, or its
    /// property `field`.
    Interrupt {
        /// An interrupt node of the graph.
        node: String,
        /// A property of the interrupt's response schema; `null` for the whole answer.
        #[serde(deserialize_with = "super::required")]
        field: Option<String>,
    },
}

/// What a [`Node`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A model call with the agent's allowed tools and handoffs.
    Agent,
    /// A direct tool call.
    Tool,
    /// A human step ([`super::Interrupt`]).
    Interrupt,
    /// A subgraph: another graph of the artifact (`ref` is a key of `graphs`), run as one step
    /// with the state its [`super::SubgraphCall`] maps in and out.
    Graph,
}

/// A fixed way from one node to another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// The node the edge leaves.
    pub from: String,
    /// The node it enters, or `END`.
    pub to: String,
    /// Whether it is followed always or only on a handoff.
    pub kind: EdgeKind,
}

/// How an [`Edge`] is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// Taken when the `from` node finishes. A node has at most one plain edge.
    Plain,
    /// Taken only when the agent at `from` calls the handoff tool that names the agent at `to`.
    Handoff,
}

/// A conditional way out of a node: the first arm that matches picks the next node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The node the route leaves. A node with a route has no plain edge.
    pub from: String,
    /// The state field (top-level name) whose string value is matched against `label` arms;
    /// `null` means the label the `from` node produced (e.g. an agent's structured output).
    #[serde(deserialize_with = "super::required")]
    pub by: Option<String>,
    /// Arms in the order they are tried; an `else` arm, if any, is last.
    pub arms: Vec<Arm>,
}

/// One arm of a [`Route`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arm {
    /// Matches when the route's label equals `label`.
    Label {
        /// The label to match.
        label: String,
        /// The node to go to, or `END`.
        target: String,
    },
    /// Matches when `condition` holds on the run state.
    When {
        /// The condition to evaluate.
        condition: Condition,
        /// The node to go to, or `END`.
        target: String,
    },
    /// Always matches; the fallback.
    Else {
        /// The node to go to, or `END`.
        target: String,
    },
}

impl Arm {
    /// The node this arm leads to, or `END`.
    pub fn target(&self) -> &str {
        match self {
            Self::Label { target, .. } | Self::When { target, .. } | Self::Else { target } => target,
        }
    }
}

/// A validator applied to a graph's input, with its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidatorUse {
    /// A key of `validators`.
    pub validator: String,
    /// Arguments for this use (an object; `{}` when none).
    pub args: Value,
}
