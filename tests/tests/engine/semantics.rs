//! Behaviours of `docs/language.md` and the contract that the other files do not pin:
//! `resume = last_agent`, an `output` answer that breaks its schema (asked again, then
//! `NODE_001`), a tool result that breaks its declared type, a request that lowers (never
//! raises) the recursion limit, and `resume: null` cancelling an approval.

use serde_json::{Value, json};
use tenx_engine::ports::Store;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Role};
use tenx_engine::{ErrorCode, Identity, RunRequest};

use crate::harness::{Host, Models, Steered, assistant_texts, dev, example_artifact, tool_outputs, user};

const DESK: &str = r#"
model desk_model {
  provider = scripted
  turns    = [
    { tool: "transfer_to_billing", arguments: {} }
    { text: "Your invoice is on its way." }
    { text: "Billing here again." }
  ]
}

agent triage {
  model    = desk_model
  prompt   = "You are the first contact of a support desk. Hand anything about invoices to billing."
  handoffs = [billing]
}

agent billing {
  model  = desk_model
  prompt = "You handle invoices. Hand back to triage when the customer asks about anything else."
  handoffs = [triage]
}

graph desk {
  entry  = triage
  nodes  = [triage, billing]
  resume = last_agent

  triage  -> billing
  triage  -> END
  billing -> triage
  billing -> END
}
"#;

#[tokio::test]
async fn with_resume_last_agent_the_next_run_starts_at_the_agent_that_answered() {
    let host = Host::new(DESK, FakeTools::new(), Models::Scripted, dev());
    let anyone = Identity::anonymous();
    let first = host.say("t", "Where is my invoice?", &anyone).await.unwrap();
    assert_eq!(assistant_texts(&first.messages), ["Your invoice is on its way."]);
    assert_eq!(first.thread.resume_at.as_deref(), Some("billing"));
    let second = host.say("t", "Thanks, and one more thing", &anyone).await.unwrap();
    let answer = second
        .messages
        .iter()
        .rfind(|message| message.role == Role::Assistant)
        .unwrap();
    assert_eq!(answer.text_content(), "Billing here again.");
    assert_eq!(
        answer.metadata["node"], "billing",
        "no handoff: the run started at billing"
    );
    // A client that names the entry still gets it.
    let named = host
        .run(RunRequest {
            thread_id: Some("t".into()),
            messages: vec![user("Start over")],
            start_node: Some("triage".into()),
            ..RunRequest::default()
        })
        .await;
    let named = named.unwrap_err();
    assert_eq!(
        named.code,
        ErrorCode::NodeFailed,
        "the script has no turn left, at triage"
    );
    assert_eq!(named.details["node"], "triage");
}

const JUDGE: &str = r#"
model judge_model {
  provider = scripted
  fallback = { text: "unused" }
}

schema verdict = {
  "type": "object",
  "properties": { "label": { "type": "string", "enum": ["ok", "bad"] } },
  "required": ["label"],
  "additionalProperties": false
}

agent judge {
  model   = judge_model
  prompt  = "Judge the message."
  output  = verdict
  retries = 1
}

graph judging {
  entry = judge
  nodes = [judge]

  state {
    label?: enum("ok", "bad") "The verdict"
  }

  judge -> END
}
"#;

#[tokio::test]
async fn an_output_answer_that_breaks_its_schema_is_asked_again_then_fails_the_node() {
    let steered = Steered::default();
    steered.push_text("not json");
    steered.push_text(r#"{"label": "ok"}"#);
    let host = Host::new(JUDGE, FakeTools::new(), Models::Steered(steered.clone()), dev());
    let done = host.say("t", "judge this", &Identity::anonymous()).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        done.thread.state["label"], "ok",
        "written into the state field of its name"
    );
    assert_eq!(
        assistant_texts(&done.thread.context),
        [r#"{"label": "ok"}"#],
        "the refused answer is never used"
    );

    steered.push_text(r#"{"label": "maybe"}"#);
    steered.push_text("still not json");
    let failed = host.say("u", "judge this", &Identity::anonymous()).await.unwrap_err();
    assert_eq!(failed.code, ErrorCode::NodeFailed);
    assert!(
        failed
            .message
            .contains("failed the check `output: the answer is not JSON` 2 times"),
        "{}",
        failed.message
    );
    let thread = host.store.load("u").await.unwrap().unwrap();
    assert!(
        !thread.state.contains_key("label"),
        "nothing of the failed answers reached state"
    );
    assert!(assistant_texts(&thread.context).is_empty());
}

fn refunds(steered: &Steered, tools: FakeTools) -> Host {
    Host::from_artifact(
        example_artifact("refund_approval"),
        tools,
        Models::Steered(steered.clone()),
        dev(),
    )
}

#[tokio::test]
async fn a_tool_result_that_breaks_its_declared_type_is_a_tool_error_the_model_sees() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "lookup_order", json!({"order_id": "1"}))]);
    steered.push_text("The lookup failed.");
    let host = refunds(&steered, FakeTools::new().returns("lookup_order", json!("just text")));
    let done = host.say("t", "look it up", &Identity::anonymous()).await.unwrap();
    assert_eq!(
        tool_outputs(&done.messages),
        [json!(
            "Tool 'lookup_order' failed: its result does not match its declared type: $: expected object, got str"
        )]
    );
    let is_error = done
        .messages
        .iter()
        .flat_map(|message| &message.content)
        .any(|block| matches!(block, ContentBlock::ToolResult { is_error: true, .. }));
    assert!(is_error);
    assert!(
        !host.snapshot("t").await.contains("just text"),
        "the bad result is not stored as one"
    );
}

#[tokio::test]
async fn a_request_lowers_the_recursion_limit_and_never_raises_it() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "lookup_order", json!({"order_id": "1"}))]);
    let tools = FakeTools::new().returns("lookup_order", json!({"paid_cents": 1}));
    let host = refunds(&steered, tools);
    let lowered = host
        .run(RunRequest {
            thread_id: Some("t".into()),
            messages: vec![user("look it up")],
            recursion_limit: Some(1),
            ..RunRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(lowered.code, ErrorCode::RecursionLimit);
    assert_eq!(lowered.details["max_steps"], 1);
    assert_eq!(host.tools.total_calls(), 0, "the round past the limit never ran");

    for n in 0..30 {
        steered.push_calls(&[(&format!("d{n}"), "lookup_order", json!({"order_id": "1"}))]);
    }
    let raised = host
        .run(RunRequest {
            thread_id: Some("u".into()),
            messages: vec![user("look it up")],
            recursion_limit: Some(1000),
            ..RunRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(raised.code, ErrorCode::RecursionLimit);
    assert_eq!(raised.details["max_steps"], 25, "the graph's limit, not the request's");
}

#[tokio::test]
async fn a_null_answer_cancels_the_approval_and_the_model_gets_on_reject() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "issue_refund", json!({"order_id": "1", "amount_cents": 100}))]);
    steered.push_text("Not refunded.");
    let host = refunds(&steered, FakeTools::new().returns("issue_refund", json!("Refunded.")));
    let anyone = Identity::anonymous();
    host.say("t", "refund 1", &anyone).await.unwrap();
    let open = host.open_interrupt("t").await;
    let done = host.answer("t", Value::Null, Some(&open), &anyone).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.total_calls(), 0);
    assert_eq!(tool_outputs(&done.messages), [json!("Refund declined.")]);
    let decisions: Vec<(Value, Value)> = host
        .records("t")
        .await
        .iter()
        .filter(|record| record["kind"] == "approval")
        .map(|record| {
            (
                record["fields"]["decision"].clone(),
                record["fields"]["outcome"].clone(),
            )
        })
        .collect();
    assert_eq!(decisions, [(json!("cancel"), json!("cancelled"))]);
}
