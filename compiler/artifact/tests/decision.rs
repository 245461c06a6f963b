//! Decision rules (how an answer reads as approve, edit or reject) and a `medium` tool's
//! confirmation: `seal` refuses an artifact that breaks one, and `load` refuses a sealed file
//! edited to break one and resealed with a correct id.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{Edit, envelope, reseal, sample, to_bytes};
use serde_json::{Value, json};
use tenx_artifact::{Artifact, Decision, PolicyViolation, SealError, TrustPolicy, load, seal};

type Break = fn(&mut Artifact);

fn refund_decision(artifact: &mut Artifact) -> &mut Decision {
    &mut artifact
        .tools
        .get_mut("issue_refund")
        .unwrap()
        .approval
        .as_mut()
        .unwrap()
        .decision
}

fn review_decision(artifact: &mut Artifact) -> &mut Decision {
    &mut artifact.interrupts.get_mut("manager_review").unwrap().decision
}

#[test]
fn seal_refuses_a_decision_the_runtime_could_not_apply() {
    let cases: [(&str, Break, &str); 6] = [
        (
            "empty field",
            |a| refund_decision(a).field = String::new(),
            "tool `issue_refund`: approval `decision`: `field` must not be empty",
        ),
        (
            "a number to approve",
            |a| refund_decision(a).approve = json!(1),
            "tool `issue_refund`: approval `decision`: `approve` must be a string or a boolean",
        ),
        (
            "an edit value that is an object",
            |a| refund_decision(a).edit = Some(json!({"x": 1})),
            "tool `issue_refund`: approval `decision`: `edit` must be a string or a boolean",
        ),
        (
            "edit equal to approve",
            |a| refund_decision(a).edit = Some(json!(true)),
            "tool `issue_refund`: approval `decision`: `edit` must differ from `approve`",
        ),
        (
            "edit on a tool without parameters",
            |a| {
                let tool = a.tools.get_mut("issue_refund").unwrap();
                tool.parameters = json!({"type": "object"}).into();
                tool.approval.as_mut().unwrap().decision = Decision::approve_edit_reject();
            },
            "tool `issue_refund`: approval `decision`: `edit` needs arguments to edit",
        ),
        (
            "edit on an interrupt",
            |a| *review_decision(a) = Decision::approve_edit_reject(),
            "interrupt `manager_review`: `decision`: an interrupt has no arguments to edit",
        ),
    ];
    for (what, edit, expected) in cases {
        let mut artifact = sample();
        edit(&mut artifact);
        match seal(artifact) {
            Err(SealError::Inconsistent(message)) => {
                assert!(
                    message.contains(expected),
                    "{what}: expected `{expected}` in `{message}`"
                );
            }
            other => panic!("{what}: expected Inconsistent, got {other:?}"),
        }
    }
}

#[test]
fn an_edit_decision_on_a_tool_with_parameters_seals() {
    let mut artifact = sample();
    *refund_decision(&mut artifact) = Decision::approve_edit_reject();
    assert!(seal(artifact).is_ok());
}

#[test]
fn seal_refuses_a_medium_tool_without_its_confirmation() {
    let mut artifact = sample();
    artifact.tools.get_mut("weather").unwrap().approval = None;
    match seal(artifact) {
        Err(SealError::PolicyViolation { violation, .. }) => assert_eq!(
            violation,
            PolicyViolation::MediumRiskWithoutConfirmation { tool: "weather".into() }
        ),
        other => panic!("expected a policy violation, got {other:?}"),
    }
}

fn drop_confirmation(envelope: &mut Value) {
    envelope["artifact"]["tools"]["weather"]["approval"] = Value::Null;
}

fn edit_on_interrupt(envelope: &mut Value) {
    envelope["artifact"]["interrupts"]["manager_review"]["decision"]["edit"] = json!("edit");
}

fn approve_with_a_number(envelope: &mut Value) {
    envelope["artifact"]["tools"]["issue_refund"]["approval"]["decision"]["approve"] = json!(1);
}

#[test]
fn load_refuses_a_sealed_file_edited_to_break_a_decision_or_drop_a_confirmation() {
    let bytes = seal(sample()).unwrap().to_bytes();
    let edits: [(&str, Edit, &str); 3] = [
        (
            "dropped confirmation",
            drop_confirmation,
            "tool `weather` has risk `medium` but neither an approval (the default confirmation) nor an approving interrupt",
        ),
        (
            "edit on an interrupt",
            edit_on_interrupt,
            "interrupt `manager_review`: `decision`: an interrupt has no arguments to edit",
        ),
        (
            "approve with a number",
            approve_with_a_number,
            "`approve` must be a string or a boolean",
        ),
    ];
    for (what, edit, expected) in edits {
        let mut edited = envelope(&bytes);
        edit(&mut edited);
        reseal(&mut edited);
        let error = load(&to_bytes(&edited), &TrustPolicy::signature_optional()).unwrap_err();
        assert!(error.to_string().contains(expected), "{what}: {error}");
    }
}

fn refund_approval(artifact: &mut Artifact) -> &mut tenx_artifact::Approval {
    artifact
        .tools
        .get_mut("issue_refund")
        .unwrap()
        .approval
        .as_mut()
        .unwrap()
}

/// The refund's approval answers with a verdict that can respond, a result and a note.
fn respond_approval(artifact: &mut Artifact) {
    let approval = refund_approval(artifact);
    approval.response_schema = json!({
        "type": "object",
        "properties": {
            "verdict": {"enum": ["ship", "answer", "hold"]},
            "tool_result": {"type": "string"},
            "note": {"$ref": "#/$defs/note"}
        },
        "required": ["verdict"],
        "$defs": {"note": {"type": "string"}}
    })
    .into();
    approval.decision = Decision {
        field: "verdict".into(),
        approve: json!("ship"),
        edit: None,
        respond: Some(json!("answer")),
    };
    approval.feedback = Some("note".into());
}

#[test]
fn a_respond_decision_and_a_feedback_property_seal() {
    let mut artifact = sample();
    respond_approval(&mut artifact);
    artifact.interrupts.get_mut("manager_review").unwrap().feedback = None;
    let sealed = seal(artifact).unwrap();
    let approval = sealed.artifact().tools["issue_refund"].approval.clone().unwrap();
    assert_eq!(approval.decision.respond, Some(json!("answer")));
    assert_eq!(approval.feedback.as_deref(), Some("note"));
}

#[test]
fn seal_refuses_a_respond_or_feedback_the_runtime_could_not_apply() {
    let cases: [(&str, Break, &str); 6] = [
        (
            "respond equal to approve",
            |a| {
                respond_approval(a);
                refund_approval(a).decision.respond = Some(json!("ship"));
            },
            "tool `issue_refund`: approval `decision`: `respond` must differ from `approve` and `edit`",
        ),
        (
            "respond with a number",
            |a| {
                respond_approval(a);
                refund_approval(a).decision.respond = Some(json!(2));
            },
            "tool `issue_refund`: approval `decision`: `respond` must be a string or a boolean",
        ),
        (
            "respond without a tool result",
            |a| {
                respond_approval(a);
                let schema = refund_approval(a).response_schema.to_value();
                let mut schema = schema.clone();
                schema["properties"].as_object_mut().unwrap().remove("tool_result");
                refund_approval(a).response_schema = schema.into();
            },
            "tool `issue_refund`: approval: `decision.respond` needs the response schema to define `tool_result`",
        ),
        (
            "respond on an interrupt",
            |a| review_decision(a).respond = Some(json!("answer")),
            "interrupt `manager_review`: `decision.respond` must be null: an interrupt has no call to answer",
        ),
        (
            "feedback the response does not define",
            |a| a.interrupts.get_mut("manager_review").unwrap().feedback = Some("why".into()),
            "interrupt `manager_review`: `feedback` names `why`, which the response schema does not define",
        ),
        (
            "feedback that is not a string",
            |a| {
                respond_approval(a);
                refund_approval(a).feedback = Some("verdict".into());
            },
            "tool `issue_refund`: approval: `feedback` names `verdict`, which the response schema does not declare a string",
        ),
    ];
    for (what, edit, expected) in cases {
        let mut artifact = sample();
        edit(&mut artifact);
        match seal(artifact) {
            Err(SealError::Inconsistent(message)) => {
                assert!(
                    message.contains(expected),
                    "{what}: expected `{expected}` in `{message}`"
                );
            }
            other => panic!("{what}: expected Inconsistent, got {other:?}"),
        }
    }
}
