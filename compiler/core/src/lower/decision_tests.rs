//! Unit tests of lowering decisions and default confirmations: the standard schemas are read by
//! their standard rule, a custom response by its `decision`, and a `medium` tool without an
//! approval gets the default confirmation naming its parameters in declaration order.

use serde_json::json;
use tenx_artifact::{Artifact, Decision};

/// Lowers a program whose only diagnostics are `medium` tool warnings.
fn lower(text: &str) -> Artifact {
    super::tests::lower_allowing(text, &["TENX0603"])
}

const PROGRAM: &str = r#"
import std.approval.approve_edit_reject
import std.approval.yes_no

model m {
  provider = scripted
}

tool edit_me(order_id: string "The order") -> string {
  description = "Edited."
  risk = high
  approval {
    message  = "Run?"
    response = approve_edit_reject
    approvers = [role("lead")]
  }
  run = remote
}

tool yes_or_no(order_id: string "The order") -> string {
  description = "Yes or no."
  risk = high
  approval {
    message  = "Run?"
    response = yes_no
    approvers = [role("lead")]
  }
  run = remote
}

tool custom(order_id: string "The order") -> string {
  description = "Custom."
  risk = high
  approval {
    message  = "Run?"
    response = {
      "type": "object",
      "properties": { "verdict": { "enum": ["ship", "amend", "hold"] }, "edited_arguments": { "type": "object" } },
      "required": ["verdict"]
    }
    decision = { field: "verdict", approve: "ship", edit: "amend" }
    approvers = [role("lead")]
  }
  run = remote
}

tool draft(zeta: string "Last letter", alpha: int "First letter") -> string {
  description = "Medium, no block."
  risk = medium
  run = remote
}

tool inline_draft -> string {
  description = "Medium, inline parameters."
  risk = medium
  parameters = {
    "type": "object",
    "properties": { "zeta": { "type": "string" }, "alpha": { "type": "string" } }
  }
  run = remote
}

tool bare() -> string {
  description = "Medium, no parameters."
  risk = medium
  run = remote
}

tool confirmed(x: string "X") -> string {
  description = "Medium with its own block."
  risk = medium
  approval {
    message = "Do {x}?"
  }
  run = remote
}

agent a {
  model  = m
  prompt = "Work."
  tools  = [edit_me, yes_or_no, custom, draft, inline_draft, bare, confirmed]
}

interrupt review {
  message  = "Go on?"
  response = { "type": "object", "properties": { "go": { "const": true } }, "required": ["go"] }
  decision = { field: "go", approve: true }
}

graph g {
  entry = a
  nodes = [a, review]

  a      -> review
  review -> END
}
"#;

#[test]
fn decisions_follow_the_resolved_response() {
    let artifact = lower(PROGRAM);
    let decision = |tool: &str| artifact.tools[tool].approval.as_ref().map(|a| a.decision.clone());
    assert_eq!(decision("edit_me"), Some(Decision::approve_edit_reject()));
    assert_eq!(decision("yes_or_no"), Some(Decision::yes_no()));
    assert_eq!(
        decision("custom"),
        Some(Decision {
            field: "verdict".into(),
            approve: json!("ship"),
            edit: Some(json!("amend")),
            respond: None,
        })
    );
    assert_eq!(decision("confirmed"), Some(Decision::yes_no()));
    assert_eq!(
        artifact.interrupts["review"].decision,
        Decision {
            field: "go".into(),
            approve: json!(true),
            edit: None,
            respond: None,
        }
    );
}

#[test]
fn medium_tools_without_a_block_get_the_default_confirmation() {
    let artifact = lower(PROGRAM);
    let approval = |tool: &str| artifact.tools[tool].approval.clone().expect("an approval");
    let draft = approval("draft");
    assert_eq!(draft.message, "Run `draft` with zeta: {zeta}, alpha: {alpha}?");
    assert_eq!(draft.reason, super::CONFIRMATION_REASON);
    let default: serde_json::Value = serde_json::from_str(super::DEFAULT_RESPONSE_SCHEMA).expect("json");
    assert_eq!(draft.response_schema.to_value(), default);
    assert_eq!(draft.decision, Decision::yes_no());
    assert_eq!(
        (
            draft.target,
            draft.evidence.len(),
            draft.expires_ms,
            draft.approvers,
            draft.separate_duties
        ),
        (None, 0, None, None, false)
    );
    assert_eq!(draft.on_reject, tenx_artifact::DEFAULT_ON_REJECT);
    assert_eq!(
        approval("inline_draft").message,
        "Run `inline_draft` with zeta: {zeta}, alpha: {alpha}?"
    );
    assert_eq!(approval("bare").message, "Run `bare`?");
    // The block wins.
    assert_eq!(approval("confirmed").message, "Do {x}?");
}

#[test]
fn respond_and_feedback_are_lowered_as_written() {
    let text = include_str!("../../../../tests/fixtures/decisions/respond_and_feedback.tenx");
    let artifact = lower(text);
    let approval = artifact.tools["ship_order"].approval.clone().expect("an approval");
    assert_eq!(
        approval.decision,
        Decision {
            field: "verdict".into(),
            approve: json!("ship"),
            edit: None,
            respond: Some(json!("answer")),
        }
    );
    assert_eq!(approval.feedback.as_deref(), Some("note"));
    assert_eq!(
        artifact.interrupts["confirm_close"].feedback.as_deref(),
        Some("comment")
    );
    assert_eq!(artifact.interrupts["confirm_close"].decision.respond, None);
    // Without `feedback`, none is written.
    let draft = artifact.tools.get("close_ticket").and_then(|t| t.approval.clone());
    assert!(draft.is_none_or(|a| a.feedback.is_none()));
}
