//! How an answer is read: the artifact's [`Decision`] names the answer's field and the values
//! that approve and edit; every other value rejects; `resume: null` cancels. The answer has
//! already matched the response schema (D3) when it is read, except `null`, which is never
//! checked against it.

use serde_json::{Value, json};
use tenx_artifact::Decision;

use crate::schema::CompiledSchema;
use crate::{ErrorCode, RunError};

/// What an answer decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run the action as shown.
    Approve,
    /// Run the action with these arguments instead (the answer's `edited_arguments`, `null`
    /// when it has none); [`super::check_edit`] checks them before anything is recorded.
    Edit(Value),
    /// Do not run it: the answer's decision field holds anything but the approve or edit value
    /// (or is missing).
    Reject,
    /// `resume: null`: do not run it; recorded as `cancelled`.
    Cancel,
    /// Do not run it: the person's `tool_result` is the call's result (the `respond` pattern).
    Respond(Value),
}

impl Verdict {
    /// The decision as records write it: `approve`, `edit`, `reject` or `cancel`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Edit(_) => "edit",
            Self::Reject => "reject",
            Self::Cancel => "cancel",
            Self::Respond(_) => "respond",
        }
    }

    /// The outcome an answer settles by itself, as records write it: `rejected` or `cancelled`
    /// (the action does not run). An approval's outcome is known only once the action ran (or
    /// was found stale), and a `respond` records its own.
    pub fn settled_outcome(&self) -> Option<&'static str> {
        match self {
            Self::Reject => Some("rejected"),
            Self::Cancel => Some("cancelled"),
            Self::Approve | Self::Edit(_) | Self::Respond(_) => None,
        }
    }

    /// Whether the action runs.
    pub fn runs(&self) -> bool {
        matches!(self, Self::Approve | Self::Edit(_))
    }
}

/// Reads `answer` (the `resume` value) under `decision`.
///
/// - `null` is [`Verdict::Cancel`];
/// - the answer's `decision.field` equal to `decision.approve` is [`Verdict::Approve`];
/// - equal to `decision.edit` (when the decision can edit) is [`Verdict::Edit`] with the
///   answer's `edited_arguments`;
/// - anything else, including a missing field or an answer that is not an object, is
///   [`Verdict::Reject`]: only an explicit approval approves.
///
/// `yes_no` is `{field: "approved", approve: true}`; `approve_edit_reject` is
/// `{field: "decision", approve: "approve", edit: "edit"}`; a custom response declares its own.
pub fn read_answer(decision: &Decision, answer: &Value) -> Verdict {
    if answer.is_null() {
        return Verdict::Cancel;
    }
    let chosen = answer.get(&decision.field);
    if chosen == Some(&decision.approve) {
        return Verdict::Approve;
    }
    if let Some(edit) = &decision.edit
        && chosen == Some(edit)
    {
        return Verdict::Edit(answer.get("edited_arguments").cloned().unwrap_or(Value::Null));
    }
    if let Some(respond) = &decision.respond
        && chosen == Some(respond)
    {
        return Verdict::Respond(
            answer
                .get(tenx_artifact::TOOL_RESULT_PROPERTY)
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    Verdict::Reject
}

/// Checks a `resume` value against the question's response schema (D3), before anything is
/// read or recorded. `null` (a cancel) is never checked.
///
/// # Errors
///
/// `INTERRUPT_002` (422): `Resume value does not match the response schema of interrupt
/// '<id>': <json path>: <what>`, the first violation, with `details.path` and
/// `details.message`.
pub fn check_answer(response_schema: &CompiledSchema, interrupt_id: &str, answer: &Value) -> Result<(), RunError> {
    if answer.is_null() {
        return Ok(());
    }
    response_schema.check(answer).map_err(|violation| {
        RunError::new(
            ErrorCode::InterruptAnswerInvalid,
            format!("Resume value does not match the response schema of interrupt '{interrupt_id}': {violation}"),
        )
        .with_details(json!({"path": violation.path, "message": violation.message}))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn yes_no() {
        let decision = Decision::yes_no();
        assert_eq!(read_answer(&decision, &json!({"approved": true})), Verdict::Approve);
        assert_eq!(read_answer(&decision, &json!({"approved": false})), Verdict::Reject);
        assert_eq!(read_answer(&decision, &json!({"approved": "true"})), Verdict::Reject);
        assert_eq!(read_answer(&decision, &json!({})), Verdict::Reject);
        assert_eq!(read_answer(&decision, &json!([true])), Verdict::Reject);
        assert_eq!(read_answer(&decision, &json!(true)), Verdict::Reject);
        assert_eq!(read_answer(&decision, &Value::Null), Verdict::Cancel);
        // yes_no cannot edit, whatever the answer carries.
        let sneaky = json!({"approved": false, "decision": "edit", "edited_arguments": {"amount_cents": 1}});
        assert_eq!(read_answer(&decision, &sneaky), Verdict::Reject);
    }

    #[test]
    fn approve_edit_reject() {
        let decision = Decision::approve_edit_reject();
        assert_eq!(
            read_answer(&decision, &json!({"decision": "approve"})),
            Verdict::Approve
        );
        let edited = json!({"decision": "edit", "edited_arguments": {"amount_cents": 100}});
        assert_eq!(
            read_answer(&decision, &edited),
            Verdict::Edit(json!({"amount_cents": 100}))
        );
        assert_eq!(
            read_answer(&decision, &json!({"decision": "edit"})),
            Verdict::Edit(Value::Null)
        );
        assert_eq!(read_answer(&decision, &json!({"decision": "reject"})), Verdict::Reject);
        assert_eq!(read_answer(&decision, &json!({"decision": "APPROVE"})), Verdict::Reject);
        assert_eq!(read_answer(&decision, &Value::Null), Verdict::Cancel);
    }

    #[test]
    fn custom_decisions() {
        let verdict = Decision {
            field: "verdict".into(),
            approve: json!("ship"),
            edit: Some(json!("amend")),
            respond: None,
        };
        assert_eq!(
            read_answer(&verdict, &json!({"verdict": "ship", "note": "ok"})),
            Verdict::Approve
        );
        assert_eq!(
            read_answer(
                &verdict,
                &json!({"verdict": "amend", "edited_arguments": {"carrier": "ups"}})
            ),
            Verdict::Edit(json!({"carrier": "ups"}))
        );
        assert_eq!(read_answer(&verdict, &json!({"verdict": "hold"})), Verdict::Reject);
        let boolean = Decision {
            field: "ok".into(),
            approve: json!(true),
            edit: None,
            respond: None,
        };
        assert_eq!(read_answer(&boolean, &json!({"ok": true})), Verdict::Approve);
        assert_eq!(read_answer(&boolean, &json!({"ok": 1})), Verdict::Reject);
        let negative = Decision {
            field: "deny".into(),
            approve: json!(false),
            edit: None,
            respond: None,
        };
        assert_eq!(read_answer(&negative, &json!({"deny": false})), Verdict::Approve);
        assert_eq!(read_answer(&negative, &json!({})), Verdict::Reject);
    }

    #[test]
    fn names_and_effects() {
        let all = [
            Verdict::Approve,
            Verdict::Edit(Value::Null),
            Verdict::Reject,
            Verdict::Cancel,
        ];
        let names: Vec<&str> = all.iter().map(Verdict::as_str).collect();
        assert_eq!(names, ["approve", "edit", "reject", "cancel"]);
        let runs: Vec<bool> = all.iter().map(Verdict::runs).collect();
        assert_eq!(runs, [true, true, false, false]);
    }
}
