//! The artifact body: the serde types a runtime reads, format `tenx-graph/3`.
//!
//! This module owns the *shape* of the artifact and nothing else: no hashing, no signing, no
//! checks beyond what serde enforces. Every type denies unknown fields, every optional field
//! must be written out (as `null`), and every collection is a `BTreeMap` or a `Vec` whose order
//! is either meaningful (route arms, validators) or normalised before sealing, so that one
//! artifact has exactly one byte form.

mod agent;
mod agent_input;
mod approval;
pub mod binding;
pub mod bound;
mod condition;
mod fork;
mod graph;
mod guard;
mod loops;
mod resume;
mod retry;
mod risk_rules;
mod schema;
mod script;
mod subgraph;
mod tool;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

pub use agent::{Agent, AgentTool, DEFAULT_RETRIES, EMPTY_PAYLOAD, Handoff, MAX_RETRIES, Model, Provider};
pub use agent_input::{AgentInput, MAX_INPUT_LAST};
pub use approval::{Approvers, DEFAULT_ON_REJECT, Decision, Evidence, TOOL_RESULT_PROPERTY, rejection_text};
pub use bound::{BoundSource, CallerAttribute};
pub use condition::{CompareOp, Condition};
pub use fork::{Fork, ForkKind, MAX_WIDTH, Reduce, Reducer};
pub use graph::{Arm, Edge, EdgeKind, Graph, Node, NodeKind, Route, ValidatorUse, Write, WriteSource};
pub use guard::{Interrupt, Validator};
pub use loops::{ErrorExit, MAX_VISITS, VisitLimit};
pub use resume::Resume;
pub use retry::{
    DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS, MAX_ATTEMPTS, MIN_ATTEMPTS, NodeRetry, RetryOn,
    RetryPolicy, retry_refusal,
};
pub use risk_rules::{RiskRule, RiskRules};
pub use schema::Schema;
pub use script::{Rule, Script, Turn};
pub use subgraph::SubgraphCall;
pub use tool::{Approval, HttpMethod, Risk, Run, Tool};

/// The format string of this version of the artifact, written in the body and the envelope.
pub const FORMAT: &str = "tenx-graph/3";

/// The reserved node name that ends a run. No node may be called `END`.
pub const END: &str = "END";

/// The handlers a runtime provides for `{"kind":"builtin"}` tools: the names the standard
/// library's `std.tools` binds with `run = builtin(NAME)`, sorted. No other builtin tool exists.
pub const BUILTIN_TOOLS: &[&str] = &["calculator", "current_time", "random_id"];

/// The handlers a runtime provides for `{"kind":"builtin"}` validators: the names the standard
/// library's `std.validators` binds with `run = builtin(NAME)`, sorted.
pub const BUILTIN_VALIDATORS: &[&str] = &["message_content", "prompt_injection"];

/// The builtin validators that can guard model output (an agent's `output_guards`): those that
/// read any text. `message_content` reads the roles and blocks of client messages, so it cannot.
pub const OUTPUT_GUARD_BUILTINS: &[&str] = &["prompt_injection"];

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
    #[serde(deserialize_with = "packed_map")]
    pub graphs: BTreeMap<String, Graph>,
    /// Agents by name.
    #[serde(deserialize_with = "packed_map")]
    pub agents: BTreeMap<String, Agent>,
    /// Tools by name (the declared name; the model-facing name is [`Tool::name`]).
    #[serde(deserialize_with = "packed_map")]
    pub tools: BTreeMap<String, Tool>,
    /// Model configurations by name.
    #[serde(deserialize_with = "packed_map")]
    pub models: BTreeMap<String, Model>,
    /// Input validators by name.
    #[serde(deserialize_with = "packed_map")]
    pub validators: BTreeMap<String, Validator>,
    /// Human steps (interrupts) by name.
    #[serde(deserialize_with = "packed_map")]
    pub interrupts: BTreeMap<String, Interrupt>,
    /// Where each part was declared, keyed like `graph.support_desk.node.triage` or
    /// `tool.issue_refund`; for runtime error messages only.
    #[serde(deserialize_with = "packed_map")]
    pub source_map: BTreeMap<String, SourceLocation>,
    /// The name of every handler a `native` tool runs, sorted and without repeats: exactly the
    /// names in the tools' [`Run::Native`] bindings, so a host can refuse to load an artifact
    /// whose handlers it has not registered.
    pub native_handlers: Vec<String>,
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
            native_handlers: Vec::new(),
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
            if let Some(approvers) = interrupt.approvers.as_mut() {
                approvers.normalize();
            }
        }
        sort_unique(&mut self.native_handlers);
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

/// Deserializes a map into a `BTreeMap` built in one pass from all its entries, instead of one
/// insertion at a time: the tree's nodes come out full rather than about half full, which on a
/// large artifact saves megabytes and time. A repeated key keeps its last value, as with
/// insertion.
pub(crate) fn packed_map<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Entries<V>(std::marker::PhantomData<V>);

    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Entries<V> {
        type Value = BTreeMap<String, V>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("a map")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
            while let Some(entry) = map.next_entry::<String, V>()? {
                entries.push(entry);
            }
            // Sorted input (as every sealed body has) is detected in one pass by the sort.
            Ok(entries.into_iter().collect())
        }
    }

    deserializer.deserialize_map(Entries(std::marker::PhantomData))
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(deserialize_with = "super::packed_map")]
        map: BTreeMap<String, u32>,
    }

    #[test]
    fn a_packed_map_is_the_map_insertion_would_build() {
        let read: Holder = serde_json::from_str(r#"{"map":{"b":1,"a":2,"c":3,"a":4}}"#).unwrap();
        let expected: BTreeMap<String, u32> = [("a", 4), ("b", 1), ("c", 3)]
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect();
        assert_eq!(read.map, expected);
        let large: String = (0..1000).map(|index| format!("\"k{index:04}\":{index},")).collect();
        let read: Holder = serde_json::from_str(&format!("{{\"map\":{{{}}}}}", large.trim_end_matches(','))).unwrap();
        assert_eq!(read.map.len(), 1000);
        assert_eq!(read.map.get("k0999"), Some(&999));
        assert!(serde_json::from_str::<Holder>(r#"{"map":[1]}"#).is_err());
    }
}
