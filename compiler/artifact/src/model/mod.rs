//! The artifact body: the serde types a runtime reads, format `tenx-graph/1`.
//!
//! This module owns the *shape* of the artifact and nothing else: no hashing, no signing, no
//! checks beyond what serde enforces. Every type denies unknown fields, every optional field
//! must be written out (as `null`), and every collection is a `BTreeMap` or a `Vec` whose order
//! is either meaningful (route arms, validators) or normalised before sealing, so that one
//! artifact has exactly one byte form.

mod agent;
mod condition;
mod graph;
mod guard;
mod schema;
mod tool;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

pub use agent::{Agent, Handoff, Model, Provider};
pub use condition::{CompareOp, Condition};
pub use graph::{Arm, Edge, EdgeKind, Graph, Node, NodeKind, Route, ValidatorUse};
pub use guard::{Interrupt, Validator};
pub use schema::Schema;
pub use tool::{Approval, HttpMethod, Risk, Run, Tool};

/// The format string of this version of the artifact, written in the body and the envelope.
pub const FORMAT: &str = "tenx-graph/1";

/// The reserved node name that ends a run. No node may be called `END`.
pub const END: &str = "END";

/// A compiled program: every graph, and everything its graphs refer to.
///
/// Names (map keys) are the declared names of the program; references between parts use them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// Always [`FORMAT`] for this version of the crate.
    pub format: String,
    /// The compiler that produced the artifact, e.g. `tenxc 0.1.0`.
    pub compiler: String,
    /// Graphs by name; each is one servable entry point.
    pub graphs: BTreeMap<String, Graph>,
    /// Agents by name.
    pub agents: BTreeMap<String, Agent>,
    /// Tools by name (the declared name; the model-facing name is [`Tool::name`]).
    pub tools: BTreeMap<String, Tool>,
    /// Model configurations by name.
    pub models: BTreeMap<String, Model>,
    /// Input validators by name.
    pub validators: BTreeMap<String, Validator>,
    /// Human steps (interrupts) by name.
    pub interrupts: BTreeMap<String, Interrupt>,
    /// Where each part was declared, keyed like `graph.support_desk.node.triage` or
    /// `tool.issue_refund`; for runtime error messages only.
    pub source_map: BTreeMap<String, SourceLocation>,
}

impl Artifact {
    /// An empty artifact of the current [`FORMAT`], made by `compiler` (e.g. `tenxc 0.1.0`).
    pub fn new(compiler: impl Into<String>) -> Self {
        Self {
            format: FORMAT.to_owned(),
            compiler: compiler.into(),
            graphs: BTreeMap::new(),
            agents: BTreeMap::new(),
            tools: BTreeMap::new(),
            models: BTreeMap::new(),
            validators: BTreeMap::new(),
            interrupts: BTreeMap::new(),
            source_map: BTreeMap::new(),
        }
    }

    /// Puts every order-insensitive list into its one sorted, duplicate-free order.
    ///
    /// [`crate::seal`] calls this, so a compiler may fill lists in any order. Lists whose order
    /// means something (route arms, input validators, approval evidence) are left alone.
    pub fn normalize(&mut self) {
        for graph in self.graphs.values_mut() {
            graph.normalize();
        }
        for agent in self.agents.values_mut() {
            agent.normalize();
        }
        for tool in self.tools.values_mut() {
            tool.normalize();
        }
        for interrupt in self.interrupts.values_mut() {
            sort_unique(&mut interrupt.approves);
        }
    }
}

/// A place in a `.tenx` source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceLocation {
    /// Path relative to the project root (never absolute, so builds are reproducible), or
    /// `<stdlib>/name.tenx` for the standard library.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
}

/// Sorts a list and drops repeated entries.
pub(crate) fn sort_unique<T: Ord>(list: &mut Vec<T>) {
    list.sort();
    list.dedup();
}

/// Deserializes an `Option` field that must be present (possibly as `null`).
///
/// Serde treats a missing `Option` field as `None`; with this the field is required, so a body
/// has exactly one accepted spelling.
pub(crate) fn required<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}
