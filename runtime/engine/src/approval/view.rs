//! What the approvals inbox and the console show of an open question ([`ApprovalSummary`],
//! [`ApprovalDetail`]): the action, its target and arguments first, who may answer, when it
//! lapses, and, when the question replaces an earlier one, what changed ([`difference`]). Also
//! the rules of batch approval ([`check_batch`]): never `high` risk, capped in count and in
//! total amount. Pure: the run layer fills these from the thread and the artifact.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tenx_artifact::{Approvers, Decision};

use crate::ports::Timestamp;
use crate::thread::Escalation;
use crate::{ErrorCode, RunError};

/// How an answer is written, as the console builds its buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseKind {
    /// `{"approved": true | false}` (`std.approval.yes_no`).
    YesNo,
    /// `{"decision": "approve" | "edit" | "reject", "edited_arguments"?}`
    /// (`std.approval.approve_edit_reject`).
    ApproveEditReject,
    /// A program's own response schema.
    Custom,
}

impl ResponseKind {
    /// The kind of a declared decision rule.
    pub fn of(decision: &Decision) -> Self {
        if *decision == Decision::yes_no() {
            return Self::YesNo;
        }
        let edits = decision.edit.as_ref() == Some(&json!("edit"));
        if decision.field == "decision" && decision.approve == json!("approve") && edits {
            Self::ApproveEditReject
        } else {
            Self::Custom
        }
    }

    /// The answer that approves as shown, for kinds that have one without further input.
    pub fn approve_answer(self) -> Option<Value> {
        match self {
            Self::YesNo => Some(json!({"approved": true})),
            Self::ApproveEditReject => Some(json!({"decision": "approve"})),
            Self::Custom => None,
        }
    }
}

/// Where an escalated question went, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EscalationView {
    /// The role that may answer it now.
    pub role: String,
    /// Why.
    pub note: String,
    /// Who escalated it.
    pub by: Option<String>,
    /// When (milliseconds since the Unix epoch).
    pub at_ms: Timestamp,
}

impl From<&Escalation> for EscalationView {
    fn from(escalation: &Escalation) -> Self {
        Self {
            role: escalation.to_role.clone(),
            note: escalation.note.clone(),
            by: escalation.by.clone(),
            at_ms: escalation.at,
        }
    }
}

/// One open question, as the inbox lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalSummary {
    /// The question.
    pub interrupt_id: String,
    /// The thread it waits in.
    pub thread_id: String,
    /// The graph.
    pub graph: String,
    /// The node the thread is paused in.
    pub node: String,
    /// The tool's declared name.
    pub action: Option<String>,
    /// The tool's model-facing name.
    pub tool_name: Option<String>,
    /// `low`, `medium` or `high`.
    pub risk: Option<String>,
    /// The rendered question.
    pub message: String,
    /// The rendered target, if declared.
    pub target: Option<String>,
    /// The validated, normalised arguments.
    pub normalized_arguments: Value,
    /// When it was asked (milliseconds since the Unix epoch).
    pub asked_at_ms: Timestamp,
    /// When it lapses, if it does.
    pub expires_at_ms: Option<Timestamp>,
    /// The user who started the run.
    pub requested_by: Option<String>,
    /// Who may answer (`None`: whoever may act on the thread). After an escalation, the role
    /// it was handed to.
    pub approvers: Option<Approvers>,
    /// Whether the user who started the run is refused.
    pub separate_duties: bool,
    /// Where it was escalated to, if it was.
    pub escalated_to: Option<EscalationView>,
    /// How an answer is written.
    pub response: ResponseKind,
    /// Whether it replaces an earlier question whose action changed.
    pub replaces: bool,
}

/// Why the caller may not answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The rule that refused: `verified`, `approvers`, `separate_duties` or `owner`.
    pub rule: String,
    /// The message a refused answer gets.
    pub message: String,
}

/// One changed field between a question and the one it replaces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The field: a package field, or `normalized_arguments.<name>` for one argument.
    pub field: String,
    /// Its value in the earlier question (`null` when it had none).
    pub before: Value,
    /// Its value now (`null` when it has none).
    pub after: Value,
}

/// The earlier question, as the person saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplacedView {
    /// Its interrupt id.
    pub interrupt_id: String,
    /// Its fingerprint.
    pub approval_fingerprint: Option<String>,
    /// Its rendered question.
    pub message: String,
    /// Its arguments.
    pub normalized_arguments: Value,
    /// Its target.
    pub target: Value,
    /// Its evidence.
    pub evidence: Value,
    /// Its risk.
    pub risk: Value,
}

/// One open question, whole, as the console's detail view shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalDetail {
    /// What the inbox shows.
    #[serde(flatten)]
    pub summary: ApprovalSummary,
    /// The package's fingerprint.
    pub approval_fingerprint: Option<String>,
    /// The text returned on rejection, cancel or expiry.
    pub on_reject: Option<String>,
    /// The declared evidence, resolved.
    pub evidence: Value,
    /// An interrupt node's declared value, if any.
    pub details: Value,
    /// The model's own words beside the call: untrusted output, shown apart.
    pub model_text: Option<String>,
    /// The JSON Schema of the tool's parameters (an edit form is built from it).
    pub parameters_schema: Value,
    /// The JSON Schema an answer must match.
    pub response_schema: Value,
    /// The question this one replaces, if any.
    pub replaces_request: Option<ReplacedView>,
    /// What changed since the question it replaces (empty when it replaces none).
    pub difference: Vec<Difference>,
    /// Whether the caller may answer.
    pub may_answer: bool,
    /// Why not, when the caller may not.
    pub refused: Option<Refusal>,
}

/// The package fields compared between a question and the one it replaces, in the order shown.
const COMPARED: &[&str] = &[
    "action",
    "target",
    "risk",
    "evidence",
    "requested_by",
    "policy_revision",
    "details",
];

/// What changed between two packages: each argument apart (added, removed or changed), then
/// the other fields a person judges by. The fingerprint, expiry and state version are not
/// listed: they change with every question.
pub fn difference(before: &Value, after: &Value) -> Vec<Difference> {
    let mut found = Vec::new();
    let empty = Map::new();
    let arguments = |package: &Value| {
        package
            .get("normalized_arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(|| empty.clone())
    };
    let (old, new) = (arguments(before), arguments(after));
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let (was, is) = (old.get(name), new.get(name));
        if was != is {
            found.push(Difference {
                field: format!("normalized_arguments.{name}"),
                before: was.cloned().unwrap_or(Value::Null),
                after: is.cloned().unwrap_or(Value::Null),
            });
        }
    }
    for field in COMPARED {
        let (was, is) = (before.get(field), after.get(field));
        if was.unwrap_or(&Value::Null) != is.unwrap_or(&Value::Null) {
            found.push(Difference {
                field: (*field).to_owned(),
                before: was.cloned().unwrap_or(Value::Null),
                after: is.cloned().unwrap_or(Value::Null),
            });
        }
    }
    found
}

/// The caps of batch approval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchLimits {
    /// The most questions one batch answers.
    pub max_count: usize,
    /// The most their amounts may add up to ([`amount_of`]).
    pub max_total: f64,
}

impl Default for BatchLimits {
    fn default() -> Self {
        Self {
            max_count: 10,
            max_total: 100_000.0,
        }
    }
}

/// The amount a question moves: the sum of its numeric arguments named `amount`, `amount_*` or
/// `*_amount` (in the tool's own units).
pub fn amount_of(arguments: &Value) -> f64 {
    arguments.as_object().map_or(0.0, |arguments| {
        arguments
            .iter()
            .filter(|(name, _)| *name == "amount" || name.starts_with("amount_") || name.ends_with("_amount"))
            .filter_map(|(_, value)| value.as_f64())
            .sum()
    })
}

/// Whether these questions may be approved together: none `high` risk (or of unknown risk),
/// each answerable without input (`yes_no` or `approve_edit_reject`), no more than
/// `max_count`, amounts adding up to no more than `max_total`, none twice. Refused whole:
/// 422 `BATCH_REFUSED` with `details.rule`.
pub fn check_batch(items: &[ApprovalSummary], limits: BatchLimits) -> Result<(), RunError> {
    let refuse = |rule: &str, message: String| {
        Err(RunError::new(ErrorCode::BatchRefused, message).with_details(json!({"rule": rule})))
    };
    if items.is_empty() {
        return refuse("count", "a batch approves at least one request".to_owned());
    }
    if items.len() > limits.max_count {
        return refuse(
            "count",
            format!(
                "a batch approves at most {} requests; this one has {}",
                limits.max_count,
                items.len()
            ),
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for item in items {
        if !seen.insert(item.interrupt_id.as_str()) {
            return refuse(
                "duplicate",
                format!("request '{}' is in the batch twice", item.interrupt_id),
            );
        }
        if !matches!(item.risk.as_deref(), Some("low" | "medium")) {
            return refuse(
                "risk",
                format!(
                    "request '{}' is {} risk: only low and medium risk requests are approved in a batch; open it and approve it alone",
                    item.interrupt_id,
                    item.risk.as_deref().unwrap_or("unknown")
                ),
            );
        }
        if item.response.approve_answer().is_none() {
            return refuse(
                "response",
                format!(
                    "request '{}' has its own answer form: open it and answer it alone",
                    item.interrupt_id
                ),
            );
        }
    }
    let total: f64 = items.iter().map(|item| amount_of(&item.normalized_arguments)).sum();
    if total > limits.max_total {
        return refuse(
            "total_amount",
            format!(
                "the batch's total amount {total} is over the cap of {}",
                limits.max_total
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, risk: &str, amount: i64) -> ApprovalSummary {
        ApprovalSummary {
            interrupt_id: id.to_owned(),
            thread_id: "t".to_owned(),
            graph: "g".to_owned(),
            node: "n".to_owned(),
            action: Some("pay".to_owned()),
            tool_name: Some("pay".to_owned()),
            risk: Some(risk.to_owned()),
            message: "pay?".to_owned(),
            target: None,
            normalized_arguments: json!({"amount_cents": amount, "note": "x"}),
            asked_at_ms: 0,
            expires_at_ms: None,
            requested_by: None,
            approvers: None,
            separate_duties: false,
            escalated_to: None,
            response: ResponseKind::YesNo,
            replaces: false,
        }
    }

    fn rule(result: Result<(), RunError>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code, ErrorCode::BatchRefused);
        error.details["rule"].as_str().unwrap().to_owned()
    }

    #[test]
    fn a_batch_refuses_high_risk_too_many_and_too_much() {
        let limits = BatchLimits {
            max_count: 2,
            max_total: 1000.0,
        };
        assert!(check_batch(&[item("a", "low", 400), item("b", "medium", 600)], limits).is_ok());
        assert_eq!(rule(check_batch(&[item("a", "high", 1)], limits)), "risk");
        assert_eq!(
            rule(check_batch(
                &[item("a", "low", 1), item("b", "low", 1), item("c", "low", 1)],
                limits
            )),
            "count"
        );
        assert_eq!(
            rule(check_batch(&[item("a", "low", 400), item("b", "low", 601)], limits)),
            "total_amount"
        );
        assert_eq!(
            rule(check_batch(&[item("a", "low", 1), item("a", "low", 1)], limits)),
            "duplicate"
        );
        assert_eq!(rule(check_batch(&[], limits)), "count");
        let mut custom = item("a", "low", 1);
        custom.response = ResponseKind::Custom;
        assert_eq!(rule(check_batch(&[custom], limits)), "response");
    }

    #[test]
    fn the_difference_lists_each_changed_argument_then_the_fields_judged_by() {
        let before = json!({"action": "refund", "normalized_arguments": {"order_id": "1042", "amount_cents": 5900, "gone": 1},
            "target": "order 1042", "risk": "high", "approval_fingerprint": "sha256:aa", "expires_at": 1});
        let after = json!({"action": "refund", "normalized_arguments": {"order_id": "1042", "amount_cents": 7900, "new": true},
            "target": "order #1042", "risk": "high", "approval_fingerprint": "sha256:bb", "expires_at": 2});
        let found = difference(&before, &after);
        let fields: Vec<&str> = found.iter().map(|change| change.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "normalized_arguments.amount_cents",
                "normalized_arguments.gone",
                "normalized_arguments.new",
                "target"
            ]
        );
        assert_eq!(found[0].before, json!(5900));
        assert_eq!(found[0].after, json!(7900));
        assert_eq!(found[1].after, Value::Null);
        assert!(difference(&before, &before).is_empty());
    }

    #[test]
    fn amounts_are_read_from_amount_named_arguments_only() {
        assert!(
            (amount_of(&json!({"amount": 1.5, "amount_cents": 2, "refund_amount": 3, "count": 100})) - 6.5).abs()
                < 1e-9
        );
        assert!(amount_of(&json!("not an object")).abs() < 1e-9);
    }

    #[test]
    fn response_kinds_follow_the_decision_rule() {
        assert_eq!(ResponseKind::of(&Decision::yes_no()), ResponseKind::YesNo);
        let aer = Decision {
            field: "decision".to_owned(),
            approve: json!("approve"),
            edit: Some(json!("edit")),
            respond: None,
        };
        assert_eq!(ResponseKind::of(&aer), ResponseKind::ApproveEditReject);
        let custom = Decision {
            field: "ok".to_owned(),
            approve: json!(true),
            edit: None,
            respond: None,
        };
        assert_eq!(ResponseKind::of(&custom), ResponseKind::Custom);
    }
}
