//! Guards around a run: input validators and human steps (interrupts).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Approvers, Decision, Evidence, Schema};

/// An input validator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Validator {
    /// A validator of the standard library, e.g. `prompt_injection`.
    Builtin {
        /// The builtin's name.
        name: String,
        /// Its declared arguments (an object).
        args: Value,
    },
    /// A validator declared in the program.
    Declared {
        /// Regular expressions (Rust `regex` syntax) that refuse an input when one matches.
        deny_patterns: Vec<String>,
        /// Words that refuse an input when one occurs (case-insensitive).
        deny_keywords: Vec<String>,
        /// The longest accepted input, in characters; `null` for no limit.
        #[serde(deserialize_with = "super::required")]
        max_length: Option<u64>,
    },
}

/// A human step: the run pauses and a person answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interrupt {
    /// Template over the state, shown to the person.
    pub message: String,
    /// The interrupt reason, e.g. `human_review`.
    pub reason: String,
    /// A value shown with the question, if any.
    #[serde(deserialize_with = "super::required")]
    pub value: Option<Value>,
    /// JSON Schema the answer must match.
    pub response_schema: Schema,
    /// How long the question stays answerable, in milliseconds; `null` for no expiry.
    #[serde(deserialize_with = "super::required")]
    pub expires_ms: Option<u64>,
    /// Tools (keys of `tools`) this step approves, sorted; each lists this step in `approved_by`.
    pub approves: Vec<String>,
    /// The run's final message when the answer rejects, cancels or the question expires
    /// ([`super::DEFAULT_ON_REJECT`] when the program declares none).
    pub on_reject: String,
    /// Template over the state naming the affected resource or principal, if declared.
    #[serde(deserialize_with = "super::required")]
    pub target: Option<String>,
    /// What is shown to the approver beside the question, in order (state fields and literals).
    pub evidence: Vec<Evidence>,
    /// Who may answer; `null` when the program names nobody.
    #[serde(deserialize_with = "super::required")]
    pub approvers: Option<Approvers>,
    /// Whether the user who started the run is refused as the approver of its own request.
    pub separate_duties: bool,
    /// How an answer is read as approve or reject (never edit or respond).
    pub decision: Decision,
    /// A string property of the response schema holding the reviewer's note: when the run ends
    /// on a rejection, its final message is `on_reject`, a blank line and
    /// `Reviewer's note: <text>` when the answer has it. `null` when the program names none.
    #[serde(deserialize_with = "super::required")]
    pub feedback: Option<String>,
}
