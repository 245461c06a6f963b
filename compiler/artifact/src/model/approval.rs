//! What an approval binds and who may give it: typed evidence, the approvers, and the rule that
//! reads an answer as approve, edit or reject. Shared by a tool's own [`super::Approval`] and an
//! approving [`super::Interrupt`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sort_unique;

/// The text a run uses on rejection, cancel or expiry when the program declares no `on_reject`.
pub const DEFAULT_ON_REJECT: &str = "The action was not approved.";

/// The property of an answer that carries the call's result when the answer `respond`s.
pub const TOOL_RESULT_PROPERTY: &str = "tool_result";

/// What the model receives as the result of a rejected tool call (and what a run that an
/// interrupt's rejection ends gives as its final message): `on_reject`, and when the approval
/// names a `feedback` property that the answer holds as a non-empty string, a blank line and
/// `Reviewer's note: ` followed by that text, as written.
pub fn rejection_text(on_reject: &str, note: Option<&str>) -> String {
    match note.filter(|note| !note.is_empty()) {
        Some(note) => format!("{on_reject}\n\nReviewer's note: {note}"),
        None => on_reject.to_owned(),
    }
}

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
/// edit when it equals `edit` (the new arguments are the answer's `edited_arguments`), answers
/// the call itself when it equals `respond` (the answer's `tool_result` becomes the call's
/// result and the tool does not run), and rejects otherwise. `resume: null` always cancels.
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
    /// The value of `field` that answers the call in the tool's place with the answer's
    /// `tool_result`, or `null` when the answer cannot respond (always `null` at an interrupt).
    #[serde(deserialize_with = "super::required")]
    pub respond: Option<Value>,
}

impl Decision {
    /// The decision of `std.approval.yes_no` (and of an approval that declares no response):
    /// `{"approved": true}` approves.
    pub fn yes_no() -> Self {
        Self {
            field: "approved".to_owned(),
            approve: Value::Bool(true),
            edit: None,
            respond: None,
        }
    }

    /// The decision of `std.approval.approve_edit_reject`: `"approve"` approves, `"edit"`
    /// approves the `edited_arguments`, anything else rejects.
    pub fn approve_edit_reject() -> Self {
        Self {
            field: "decision".to_owned(),
            approve: Value::String("approve".to_owned()),
            edit: Some(Value::String("edit".to_owned())),
            respond: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rejection_text;

    #[test]
    fn the_reviewers_note_follows_on_reject_after_a_blank_line() {
        assert_eq!(
            rejection_text("Refund declined.", Some("Over the limit.")),
            "Refund declined.\n\nReviewer's note: Over the limit."
        );
        assert_eq!(rejection_text("Refund declined.", Some("")), "Refund declined.");
        assert_eq!(rejection_text("Refund declined.", None), "Refund declined.");
    }
}
