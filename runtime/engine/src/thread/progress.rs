//! The progress of a run, kept per branch: the root branch (`""`), and while a fork runs, one
//! per parallel branch (see [`super::ForkProgress`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::Identity;

/// The path of the root branch.
pub const ROOT_BRANCH: &str = "";

/// A run in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunProgress {
    /// The run's id.
    pub run_id: String,
    /// Who started it (bound arguments read it; `separate_duties` refuses it as approver).
    pub started_by: Identity,
    /// The most steps any branch may take.
    pub recursion_limit: u64,
    /// The text of the user message that started the run (scripted rules match it).
    pub input_text: String,
    /// Branches by path (`""` is the root).
    pub branches: BTreeMap<String, Branch>,
    /// The fork in progress, while the run is split into branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<super::ForkProgress>,
}

impl RunProgress {
    /// The progress of every branch of the run at every depth (forks nest): the thread's own
    /// branches first, then those of the forks inside them.
    pub fn all_branches(&self) -> Vec<&Branch> {
        let mut found: Vec<&Branch> = self.branches.values().collect();
        let mut forks: Vec<&super::ForkProgress> = self.fork.iter().collect();
        while let Some(fork) = forks.pop() {
            for run in &fork.branches {
                if let Some(inner) = run.inner.as_deref() {
                    found.extend(inner.branches.values());
                    forks.push(&inner.fork);
                }
            }
        }
        found
    }
}

/// Where one branch of a run is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Branch {
    /// The node the branch is at.
    pub node: String,
    /// Steps taken (each model call and each tool round is one).
    pub steps: u64,
    /// How many times each node with a visit limit was entered.
    pub visits: BTreeMap<String, u64>,
    /// The approval fingerprint inputs (hashed) that were rejected, cancelled or expired in
    /// this run: the same action asked again gets `on_reject` without a new question.
    pub rejected: BTreeSet<String>,
    /// The node whose way out led to `END` (set when the branch finishes).
    pub last_node: Option<String>,
    /// An interrupt node's approval of the tool node that follows it, waiting to be used there.
    pub approved: Option<ApprovedStep>,
    /// The call being executed: committed with its in-flight marker, cleared with its receipt,
    /// so recovery after a crash finishes exactly this call (see `run/in_flight.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<super::InFlightCall>,
}

/// An approval an interrupt node gave for the tool node after it: used once, at that node, and
/// only while the package's fingerprint computed there is the one the person approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedStep {
    /// The interrupt node that asked.
    pub interrupt_node: String,
    /// The tool node it approved.
    pub tool_node: String,
    /// The approved package's fingerprint.
    pub fingerprint: String,
    /// The approval's interrupt id (for the record).
    pub interrupt_id: String,
    /// The state version the package was built at (a fingerprint input).
    pub state_version: u64,
    /// When the question would have lapsed (a fingerprint input).
    pub expires_at: Option<u64>,
    /// The question as the person saw it: when the tool node finds the action changed, the
    /// question asked again shows the difference from this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<super::Replaced>,
}
