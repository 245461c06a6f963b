//! Handoffs with typed payloads: validated before the handoff is taken, written into the state
//! fields they name, refused back to the model when invalid.

use serde_json::json;
use tenx_engine::Identity;
use tenx_engine::testing::FakeTools;

use crate::harness::{Host, Models, Steered, dev, tool_outputs};

const PROGRAM: &str = r#"model desk_model {
  provider = scripted
}

agent triage {
  model    = desk_model
  prompt   = "Route the case."
  handoffs = [escalation(reason: string(max_length: 80) "Why", priority: enum("low", "high") = "low" "How urgent")]
}

agent escalation {
  model  = desk_model
  prompt = "Handle the escalated case: {reason} ({priority})."
}

graph desk {
  entry = triage
  nodes = [triage, escalation]

  state {
    reason?: string "Why the case was escalated"
    priority?: enum("low", "high") "How urgent it is"
  }

  triage     -> escalation
  triage     -> END
  escalation -> END
}
"#;

#[tokio::test]
async fn a_valid_payload_is_written_into_state_before_the_target_runs() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "transfer_to_escalation", json!({"reason": "angry customer"}))]);
    steered.push_text("A person will call you.");
    let host = Host::new(PROGRAM, FakeTools::new(), Models::Steered(steered.clone()), dev());
    let out = host
        .say("t1", "I want a manager", &Identity::anonymous())
        .await
        .unwrap();
    assert_eq!(out.thread.state["reason"], "angry customer");
    assert_eq!(
        out.thread.state["priority"], "low",
        "the payload's default is filled in"
    );
    assert_eq!(tool_outputs(&out.messages), vec![json!("Transferred to escalation.")]);
    assert_eq!(out.thread.resume_at, None);
}

#[tokio::test]
async fn an_invalid_payload_is_a_tool_error_and_no_handoff() {
    let steered = Steered::default();
    steered.push_calls(&[(
        "c1",
        "transfer_to_escalation",
        json!({"reason": "x", "priority": "urgent"}),
    )]);
    steered.push_text("I can help myself.");
    let host = Host::new(PROGRAM, FakeTools::new(), Models::Steered(steered.clone()), dev());
    let out = host.say("t1", "help", &Identity::anonymous()).await.unwrap();
    let outputs = tool_outputs(&out.messages);
    assert!(
        outputs[0]
            .as_str()
            .unwrap()
            .starts_with("Tool 'transfer_to_escalation' failed: invalid arguments: $.priority"),
        "{outputs:?}"
    );
    assert!(out.thread.state.get("priority").is_none());
    // The model was asked again by triage (no handoff), and its answer ended the run.
    assert_eq!(steered.seen_tools.lock().unwrap().len(), 2);
    assert_eq!(steered.seen_tools.lock().unwrap()[0], vec!["transfer_to_escalation"]);
}
