//! The checkpoint of a fork in progress: the branches a run split into at a fork node, each with
//! its own state, the messages it added and what it waits for. The branches' progress (node,
//! steps, visits, the call in flight) is kept beside the root's in [`super::RunProgress::branches`],
//! by path. While a fork runs, the thread's own state and conversation stay as the fork found
//! them; the join merges the branches into them.
//!
//! Forks nest: a branch may reach a fork of its own (a `parallel` or `map` inside a branch, a
//! subgraph node, the call of an agent used as a tool). That inner fork is kept in the branch
//! ([`BranchRun::inner`]), with its branches' progress, exactly as the thread keeps its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Pending;
use crate::wire::Message;

/// A fork in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkProgress {
    /// The node the run forked at (the root branch stays there until the join).
    pub from: String,
    /// Where the run goes on once every branch has ended (a node or `END`).
    pub join: String,
    /// The most branches running at once.
    pub width: u64,
    /// The branches, in merge order.
    pub branches: Vec<BranchRun>,
    /// For a subgraph node: the inner graph its one branch runs (the fork's `from` is the
    /// subgraph node, `join` is `END` of the inner graph).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgraph: Option<String>,
    /// For the call of an agent used as a tool: the call its one branch answers (the fork's
    /// `from` is the calling agent node, `join` is `END`; the branch runs the agent alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_call: Option<AgentCallProgress>,
}

/// The call an agent-tool fork answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentCallProgress {
    /// The call's id, in the calling agent's turn.
    pub call_id: String,
    /// The model-facing tool name.
    pub tool_name: String,
    /// The call's arguments, as the model wrote them.
    pub arguments: String,
    /// The agent that answers it.
    pub agent: String,
}

/// One branch of a fork.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchRun {
    /// Its path: the first node for a parallel branch (`web`), with the item's index for a map
    /// (`summarise[2]`). Its progress is `RunProgress::branches[path]`.
    pub path: String,
    /// What the branch's state holds beyond the state its fork found (its parent's, which the
    /// parent keeps as it was until the join): each field whose value differs from that state's,
    /// so a map's item and what the branch wrote (a map of n items keeps n items, not n copies of
    /// the list it maps over). A subgraph node's branch holds the inner graph's whole state,
    /// which is another graph's. See [`BranchRun::state_over`].
    pub state: Map<String, Value>,
    /// The messages the branch added to the conversation as the fork found it (shared, as the
    /// conversation's are: `ThreadRecord::context`).
    pub messages: Vec<Arc<Message>>,
    /// What the branch waits for, when it paused (boxed: a branch moves through its fork's hub
    /// at every commit, and a question is most of a branch's size).
    pub pending: Option<Box<Pending>>,
    /// The positions of the models the branch called (scripted cursors).
    pub model_cursors: BTreeMap<String, Value>,
    /// Whether it still runs, or how it ended.
    pub status: BranchStatus,
    /// The fork inside this branch, while the branch is split in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner: Option<Box<InnerFork>>,
}

impl BranchRun {
    /// The branch's whole state over `found`, the state its fork found (a subgraph node's
    /// branch, whose `state` is whole, ignores it): `found` with the branch's fields over it.
    pub fn state_over(&self, found: &Map<String, Value>, subgraph: bool) -> Map<String, Value> {
        if subgraph {
            return self.state.clone();
        }
        let mut state = found.clone();
        state.extend(self.state.iter().map(|(field, value)| (field.clone(), value.clone())));
        state
    }

    /// The fields of `state` (a branch's whole state) whose values differ from `found`'s: what
    /// [`BranchRun::state`] keeps.
    pub fn state_beyond(state: &Map<String, Value>, found: &Map<String, Value>) -> Map<String, Value> {
        state
            .iter()
            .filter(|(field, value)| found.get(field.as_str()) != Some(value))
            .map(|(field, value)| (field.clone(), value.clone()))
            .collect()
    }

    /// A branch about to run its first node: nothing added, nothing awaited.
    pub fn starting(
        path: String,
        state: Map<String, Value>,
        messages: Vec<Arc<Message>>,
        model_cursors: BTreeMap<String, Value>,
    ) -> Self {
        Self {
            path,
            state,
            messages,
            pending: None,
            model_cursors,
            status: BranchStatus::Running,
            inner: None,
        }
    }
}

/// A fork in progress inside a branch: the branch's own [`ForkProgress`] and its branches'
/// progress by path (the branch's own progress stays in its parent's
/// [`super::RunProgress::branches`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InnerFork {
    /// The inner fork.
    pub fork: ForkProgress,
    /// The progress of the inner fork's branches, by path.
    pub branches: BTreeMap<String, super::Branch>,
}

/// How far a branch is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum BranchStatus {
    /// Running, or paused (see [`BranchRun::pending`]).
    Running,
    /// It reached the join or `END` (or ended on a rejection).
    Done,
    /// It failed with this error.
    Failed {
        /// The error's code, e.g. `NODE_001`.
        code: String,
        /// Its message.
        message: String,
    },
    /// A stop reached it.
    Stopped,
}
