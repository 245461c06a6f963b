//! The loader's rules for agents called as tools, on built programs edited the way a later
//! compiler (or an attacker) would write them: nested agent tools seal and load; an
//! interrupt-approved tool reached two levels down is refused with the chain of agents; a called
//! agent that hands off, and a circle of calls, are inconsistent; a bound state field must be
//! declared by a graph that reaches the tool only through agent tools.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use tenx_artifact::{AgentTool, Artifact, BoundSource, Handoff, PolicyViolation, SealError, TrustPolicy, load, seal};

/// A desk that asks `specialist`, which asks `clerk`, whose tool `lookup` is harmless; `pay`
/// (high risk) is approved by the interrupt `approve` and runs as a tool node after it.
const NESTED: &str = r#"
import std.approval.yes_no

model m {
  provider = scripted
  turns    = [{ text: "ok" }]
}

tool lookup(order_id: string "The order") -> string {
  description = "Look an order up."
  risk = low
  run  = http(POST, "${ORDERS_URL}/lookup", timeout: 5s)
}

tool pay(order_id: string "The order") -> string {
  description = "Pay out an order."
  risk = high
  run  = http(POST, "${PAY_URL}/pay", timeout: 5s)
}

interrupt approve {
  message  = "Pay order {order_id}?"
  response = yes_no
  approves = [pay]
  separate_duties = false
}

agent clerk {
  model       = m
  prompt      = "Look orders up."
  description = "Looks orders up"
  tools       = [lookup]
}

agent specialist {
  model       = m
  prompt      = "Answer order questions."
  description = "Answers order questions"
  agents      = [clerk]
}

agent desk {
  model  = m
  prompt = "Desk."
  agents = [specialist]
}

graph g {
  entry = desk
  nodes = [desk, approve, pay]

  state {
    order_id: string = "1" "The order"
  }

  desk    -> approve
  approve -> pay
  pay     -> END
}
"#;

fn nested() -> Artifact {
    let bytes = tenx_tests::sealed_bytes("tests/loader_agent_tools.tenx", NESTED);
    load(&bytes, &TrustPolicy::signature_optional()).unwrap().artifact
}

fn violation(artifact: Artifact) -> PolicyViolation {
    match seal(artifact) {
        Err(SealError::PolicyViolation { violation, .. }) => violation,
        other => panic!("expected a policy violation, got {other:?}"),
    }
}

fn inconsistent(artifact: Artifact) -> String {
    match seal(artifact) {
        Err(SealError::Inconsistent(message)) => message,
        other => panic!("expected an inconsistent artifact, got {other:?}"),
    }
}

fn called(agent: &str) -> AgentTool {
    AgentTool {
        tool_name: agent.into(),
        agent: agent.into(),
        description: "Helps.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"input": {"type": "string"}}}).into(),
    }
}

#[test]
fn nested_agent_tools_seal_and_load() {
    let artifact = nested();
    assert_eq!(artifact.agents["specialist"].agent_tools[0].agent, "clerk");
    let sealed = seal(artifact).unwrap();
    load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap();
}

#[test]
fn an_interrupt_approved_tool_two_levels_down_is_refused_with_the_chain() {
    let mut artifact = nested();
    artifact
        .agents
        .get_mut("clerk")
        .unwrap()
        .allowed_tools
        .push("pay".into());
    let found = violation(artifact);
    assert_eq!(
        found,
        PolicyViolation::AgentCallsApprovedTool {
            graph: "g".into(),
            node: "desk".into(),
            tool: "pay".into(),
            risk: tenx_artifact::Risk::High,
            path: vec!["desk".into(), "specialist".into(), "clerk".into()],
            through: 2,
        }
    );
    assert!(
        found
            .to_string()
            .ends_with("entry `desk` asks `specialist`, which asks `clerk`, which calls `pay`"),
        "{found}"
    );
}

#[test]
fn a_called_agent_that_hands_off_is_inconsistent() {
    let mut artifact = nested();
    artifact.agents.get_mut("clerk").unwrap().handoffs = vec![Handoff {
        tool_name: "transfer_to_desk".into(),
        target: "desk".into(),
        payload: serde_json::json!({"type": "object"}).into(),
    }];
    assert!(inconsistent(artifact).contains("calls agent `clerk` as a tool, which hands off"));
}

#[test]
fn a_circle_of_calls_is_inconsistent() {
    let mut artifact = nested();
    artifact.agents.get_mut("clerk").unwrap().agent_tools = vec![called("desk")];
    let message = inconsistent(artifact);
    assert!(
        message.contains("agents call each other as tools in a circle: `clerk` → `desk` → `specialist` → `clerk`"),
        "{message}"
    );
    let mut artifact = nested();
    artifact.agents.get_mut("clerk").unwrap().agent_tools = vec![called("clerk")];
    let message = inconsistent(artifact);
    assert!(message.contains("in a circle: `clerk` → `clerk`"), "{message}");
}

#[test]
fn a_bound_field_is_declared_where_only_a_called_agent_runs_the_tool() {
    let mut artifact = nested();
    artifact
        .tools
        .get_mut("lookup")
        .unwrap()
        .bindings
        .insert("order_id".into(), BoundSource::State("customer".into()));
    let message = inconsistent(artifact);
    assert!(
        message.contains("`order_id` is bound to state field `customer`, which graph `g`"),
        "{message}"
    );
    // Declared by the graph: sealed.
    let mut artifact = nested();
    artifact
        .tools
        .get_mut("lookup")
        .unwrap()
        .bindings
        .insert("order_id".into(), BoundSource::State("order_id".into()));
    seal(artifact).unwrap();
}
