//! Parallel branches of a graph: a fork out of a node into branches that run at once and meet
//! at a join, either a fixed set of branches (`parallel`) or one branch per item of a list in
//! state (`map`), and the reducers that merge what several branches wrote into one state field.

use serde::{Deserialize, Serialize};

/// The most branches one fork may run at once, and the most items one `map` accepts.
pub const MAX_WIDTH: u64 = 256;

/// A way out of `from` into branches. Each branch runs from its first node, with its own copy of
/// the state and of the conversation, its own step count and visit counts, until it would enter
/// `join` or `END`; when every branch has, the run merges them (the state by [`Reducer`]s, the
/// conversation in branch order) and goes on at `join`. A node with a fork has no plain edge
/// and no route.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fork {
    /// The node whose way on is this fork.
    pub from: String,
    /// A fixed set of branches, or one branch per item of a list.
    pub kind: ForkKind,
    /// The first node of each branch, in the order their writes and messages are merged
    /// (`parallel`: at least two, distinct); `map`: exactly one, the node every item's branch
    /// starts at.
    pub branches: Vec<String>,
    /// `map`: the top-level state field holding the list; `null` for `parallel`.
    #[serde(deserialize_with = "super::required")]
    pub over: Option<String>,
    /// `map`: the top-level state field each item's branch finds its item in (set in that
    /// branch only, never merged); `null` for `parallel`.
    #[serde(deserialize_with = "super::required")]
    pub item: Option<String>,
    /// The most branches running at once, 1 to [`MAX_WIDTH`]; `null`: all of them (at most
    /// [`MAX_WIDTH`]).
    #[serde(deserialize_with = "super::required")]
    pub max_concurrency: Option<u64>,
    /// The node the run goes on at once every branch has finished, or `END`.
    pub join: String,
}

/// How a [`Fork`] makes its branches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkKind {
    /// One branch per node of `branches`.
    Parallel,
    /// One branch per item of the list in the state field `over`, each starting at the one
    /// node of `branches`.
    Map,
}

/// How the values several branches wrote into one state field become its value at the join.
/// A field that no reducer names keeps the value of the one branch that changed it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reducer {
    /// A top-level state field.
    pub field: String,
    /// How its values merge.
    pub reduce: Reduce,
    /// `last`: the first nodes of branches, in the order they win (the last branch of this list
    /// that changed the field gives its value); `[]` for the other reductions, and for `last`
    /// over the items of a `map` (item order).
    pub order: Vec<String>,
}

/// A reduction: see [`Reducer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// A list: the items each branch added after the list as the fork found it, in branch order,
    /// after that list.
    Append,
    /// An object: the properties each branch set or changed, in branch order, over the object
    /// as the fork found it (a later branch wins a property two changed).
    Merge,
    /// A number: the value as the fork found it plus what each branch added to it.
    Sum,
    /// The value of the last branch, in `order` (or item order), that changed it.
    Last,
}

impl super::Graph {
    /// The fork out of `node`, if its way on is one.
    pub fn fork_of(&self, node: &str) -> Option<&Fork> {
        self.forks.iter().find(|fork| fork.from == node)
    }

    /// The reducer of the state field `field`, if one is declared.
    pub fn reducer_of(&self, field: &str) -> Option<&Reducer> {
        self.reducers.iter().find(|reducer| reducer.field == field)
    }
}
