//! What an approval binds and who may give it: typed evidence, the approvers, and the rule that
//! reads an answer as approve, edit or reject. Shared by a tool's own [`super::Approval`] and an
//! approving [`super::Interrupt`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sort_unique;

/// The text a run uses on rejection, cancel or expiry when the program declares no `on_reject`.
pub const DEFAULT_ON_REJECT: &str = "The action was not approved.";

/// One item shown to the approver beside the question, in the order declared.
///
/// Written `{"param": name}`, `{"state": field}` or `{"literal": text}`, so a runtime never has
/// to guess whether a string names an argument, a state field or is meant as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Evidence {
    /// The value of the call's argument of this name (a tool approval only).
    Param(String),
    /// The value of this top-level state field of the run.
    State(String),
    /// This text, as written (a policy id, a ticket link).
    Literal(String),
}

/// Who may answer: a user whose verified token holds any of these roles or any of these scopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approvers {
    /// Roles (the token's `roles` claim), sorted.
    pub roles: Vec<String>,
    /// Scopes (`resource:action`, the token's `scopes` claim), sorted.
    pub scopes: Vec<String>,
}

impl Approvers {
    pub(crate) fn normalize(&mut self) {
        sort_unique(&mut self.roles);
        sort_unique(&mut self.scopes);
    }
}

/// How an answer is read: the answer approves when its `field` equals `approve`, asks for an
/// edit when it equals `edit` (the new arguments are the answer's `edited_arguments`), and
/// rejects otherwise. `resume: null` always cancels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// The top-level property of the answer that carries the decision.
    pub field: String,
    /// The value of `field` that approves.
    pub approve: Value,
    /// The value of `field` that approves with edited arguments, or `null` when the answer
    /// cannot edit.
    #[serde(deserialize_with = "super::required")]
    pub edit: Option<Value>,
}

impl Decision {
    /// The decision of `std.approval.yes_no` (and of an approval that declares no response):
    /// `{"approved": true}` approves.
    pub fn yes_no() -> Self {
        Self {
            field: "approved".to_owned(),
            approve: Value::Bool(true),
            edit: None,
        }
    }

    /// The decision of `std.approval.approve_edit_reject`: `"approve"` approves, `"edit"`
    /// approves the `edited_arguments`, anything else rejects.
    pub fn approve_edit_reject() -> Self {
        Self {
            field: "decision".to_owned(),
            approve: Value::String("approve".to_owned()),
            edit: Some(Value::String("edit".to_owned())),
        }
    }
}
