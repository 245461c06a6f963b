//! The loader's rules for forks and subgraphs, on built programs edited the way an attacker (or a
//! faulty compiler) would write them: each way around an approval through a branch, a join and a
//! subgraph is refused by `seal` (as `load` would refuse it), while an approval and its tool inside
//! one branch seal; a branch that is not a region of its own is inconsistent; forks nest inside
//! branches, and subgraphs inside branches, but no graph runs itself.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use tenx_artifact::{
    Artifact, Edge, EdgeKind, Fork, ForkKind, Node, NodeKind, PolicyViolation, SealError, SubgraphCall, TrustPolicy,
    load, seal,
};

/// A desk, an interrupt that approves `pay` (high risk), `pay`, and another agent.
const BASE: &str = r#"
import std.approval.yes_no

model m {
  provider = scripted
  turns    = [{ text: "ok" }]
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

agent desk {
  model  = m
  prompt = "Desk."
}

agent other {
  model  = m
  prompt = "Other."
}

graph g {
  entry = desk
  nodes = [desk, approve, pay, other]

  state {
    order_id: string = "1" "The order"
  }

  desk    -> approve
  approve -> pay
  pay     -> other
  other   -> END
}
"#;

fn base() -> Artifact {
    let bytes = tenx_tests::sealed_bytes("tests/loader_forks.tenx", BASE);
    load(&bytes, &TrustPolicy::signature_optional()).unwrap().artifact
}

fn plain(from: &str, to: &str) -> Edge {
    Edge {
        from: from.into(),
        to: to.into(),
        kind: EdgeKind::Plain,
    }
}

fn parallel(from: &str, branches: &[&str], join: &str) -> Fork {
    Fork {
        from: from.into(),
        kind: ForkKind::Parallel,
        branches: branches.iter().map(|branch| (*branch).to_owned()).collect(),
        over: None,
        item: None,
        max_concurrency: None,
        join: join.into(),
    }
}

/// `base` with graph `g`'s ways replaced by `edges` and `forks`.
fn shaped(edges: &[(&str, &str)], forks: Vec<Fork>) -> Artifact {
    let mut artifact = base();
    let graph = artifact.graphs.get_mut("g").unwrap();
    graph.edges = edges.iter().map(|(from, to)| plain(from, to)).collect();
    graph.forks = forks;
    artifact
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

#[test]
fn an_approval_and_its_tool_inside_one_branch_seal_and_load() {
    let artifact = shaped(
        &[("approve", "pay"), ("pay", "END"), ("other", "END")],
        vec![parallel("desk", &["approve", "other"], "END")],
    );
    let sealed = seal(artifact).unwrap();
    load(&sealed.to_bytes(), &TrustPolicy::signature_optional()).unwrap();
}

#[test]
fn an_approval_before_the_fork_does_not_reach_a_tool_that_starts_a_branch() {
    let artifact = shaped(
        &[("desk", "approve"), ("pay", "END"), ("other", "END")],
        vec![parallel("approve", &["pay", "other"], "END")],
    );
    assert_eq!(
        violation(artifact),
        PolicyViolation::ApprovalAcrossFork {
            graph: "g".into(),
            fork: "approve".into(),
            node: "pay".into(),
            tool: "pay".into(),
            risk: tenx_artifact::Risk::High,
        }
    );
}

#[test]
fn an_approval_in_one_branch_does_not_reach_a_tool_in_another() {
    let artifact = shaped(
        &[("approve", "END"), ("other", "pay"), ("pay", "END")],
        vec![parallel("desk", &["approve", "other"], "END")],
    );
    let found = violation(artifact);
    assert!(
        matches!(&found, PolicyViolation::ApprovalBypassed { path, .. } if path == &["desk", "other", "pay"]),
        "from the entry through the fork and `other` to the tool, past no approval: {found:?}"
    );
}

#[test]
fn an_approval_inside_a_branch_does_not_reach_a_tool_at_the_join() {
    let artifact = shaped(
        &[("approve", "pay"), ("other", "pay"), ("pay", "END")],
        vec![parallel("desk", &["approve", "other"], "pay")],
    );
    assert!(
        matches!(violation(artifact), PolicyViolation::ApprovalAcrossFork { ref node, .. } if node == "pay"),
        "a join is entered from the fork"
    );
}

#[test]
fn a_branch_must_be_a_region_of_its_own() {
    // `desk` leads into the middle of the branch that starts at `approve`.
    let into = shaped(
        &[("approve", "pay"), ("pay", "END"), ("other", "pay")],
        vec![parallel("desk", &["approve", "other"], "END")],
    );
    let message = inconsistent(into);
    assert!(
        message.contains("is in two branches") || message.contains("inside the branch"),
        "{message}"
    );
    // A branch that leads back to its fork's node.
    let back = shaped(
        &[("approve", "pay"), ("pay", "desk"), ("other", "END")],
        vec![parallel("desk", &["approve", "other"], "END")],
    );
    assert!(inconsistent(back).contains("leads back to `desk`"));
    // A fork inside a branch, joining inside it (here at `END`): forks nest.
    let nest = |inner: Fork| {
        let mut artifact = shaped(
            &[("approve", "pay"), ("pay", "END"), ("left", "END"), ("right", "END")],
            vec![parallel("desk", &["approve", "other"], "END"), inner],
        );
        let graph = artifact.graphs.get_mut("g").unwrap();
        for name in ["left", "right"] {
            let node = graph.nodes["other"].clone();
            graph.nodes.insert(name.into(), node);
        }
        artifact
    };
    seal(nest(parallel("other", &["left", "right"], "END"))).unwrap();
    // One that joins at `pay`, inside the other branch of the outer fork.
    let message = inconsistent(nest(parallel("other", &["left", "right"], "pay")));
    assert!(
        message.contains("is in two branches") || message.contains("in another region"),
        "{message}"
    );
    // A fork's node with another way on.
    let both = shaped(
        &[
            ("desk", "approve"),
            ("approve", "pay"),
            ("pay", "END"),
            ("other", "END"),
        ],
        vec![parallel("desk", &["approve", "other"], "END")],
    );
    assert!(inconsistent(both).contains("has a fork and another way on"));
}

/// `base` with a second graph `inner` holding `approve`, `pay` (or only `pay`), and `g`'s
/// `other` node a subgraph node running it.
fn with_subgraph(inner_entry: &str) -> Artifact {
    let mut artifact = base();
    let mut inner = artifact.graphs["g"].clone();
    inner.entry = inner_entry.into();
    inner.nodes.remove("desk");
    inner.nodes.remove("other");
    if inner_entry == "pay" {
        inner.nodes.remove("approve");
        inner.edges = vec![plain("pay", "END")];
    } else {
        inner.edges = vec![plain("approve", "pay"), plain("pay", "END")];
    }
    artifact.graphs.insert("inner".into(), inner);
    let outer = artifact.graphs.get_mut("g").unwrap();
    outer.nodes.insert(
        "other".into(),
        Node {
            kind: NodeKind::Graph,
            reference: "inner".into(),
        },
    );
    outer.subgraphs = vec![SubgraphCall {
        node: "other".into(),
        input: [("order_id".to_owned(), "order_id".to_owned())].into(),
        output: std::collections::BTreeMap::new(),
    }];
    // `approve -> pay -> other`: the outer approval is followed by the subgraph.
    artifact
}

#[test]
fn a_gated_tool_inside_a_subgraph_is_still_gated() {
    // Inside, `approve -> pay`: sealed.
    seal(with_subgraph("approve")).unwrap();
    // Inside, `pay` alone, even right after the outer graph's approval: refused, since nothing
    // outside a graph approves a tool inside it.
    let mut artifact = with_subgraph("pay");
    let outer = artifact.graphs.get_mut("g").unwrap();
    outer.edges = vec![
        plain("desk", "approve"),
        plain("approve", "other"),
        plain("pay", "END"),
        plain("other", "END"),
    ];
    outer.nodes.remove("pay");
    outer.edges.retain(|edge| edge.from != "pay");
    assert!(
        matches!(violation(artifact), PolicyViolation::ApprovalBypassed { ref graph, .. } if graph == "inner"),
        "the inner graph starts at its gated tool"
    );
}

#[test]
fn subgraphs_nest_but_never_run_themselves() {
    let mut artifact = with_subgraph("approve");
    let outer = artifact.graphs.get_mut("g").unwrap();
    outer.nodes.insert(
        "other".into(),
        Node {
            kind: NodeKind::Graph,
            reference: "g".into(),
        },
    );
    assert!(inconsistent(artifact).contains("a subgraph node leads back to the graph: `g` → `g`"));
    // Nor through another graph: `g` runs `inner`, which runs `g`.
    let mut around = with_subgraph("approve");
    let inner = around.graphs.get_mut("inner").unwrap();
    inner.nodes.insert(
        "desk".into(),
        Node {
            kind: NodeKind::Graph,
            reference: "g".into(),
        },
    );
    inner.subgraphs = vec![SubgraphCall {
        node: "desk".into(),
        input: [("order_id".to_owned(), "order_id".to_owned())].into(),
        output: std::collections::BTreeMap::new(),
    }];
    inner.entry = "desk".into();
    inner.edges = vec![plain("desk", "approve"), plain("approve", "pay"), plain("pay", "END")];
    let message = inconsistent(around);
    assert!(message.contains("`g` → `inner` → `g`"), "{message}");
    // A subgraph node inside a branch seals: subgraphs run inside branches.
    let mut branched = with_subgraph("approve");
    let outer = branched.graphs.get_mut("g").unwrap();
    outer.edges = vec![plain("approve", "pay"), plain("pay", "END"), plain("other", "END")];
    outer.forks = vec![parallel("desk", &["approve", "other"], "END")];
    seal(branched).unwrap();
    let mut unmapped = with_subgraph("approve");
    unmapped.graphs.get_mut("g").unwrap().subgraphs.clear();
    assert!(inconsistent(unmapped).contains("has no entry in `subgraphs`"));
}

#[test]
fn an_agent_cannot_reach_an_interrupt_approved_tool_through_an_agent_it_calls() {
    let mut artifact = base();
    let mut helper = artifact.agents["other"].clone();
    helper.allowed_tools = vec!["pay".into()];
    artifact.agents.insert("helper".into(), helper);
    artifact.agents.get_mut("desk").unwrap().agent_tools = vec![tenx_artifact::AgentTool {
        tool_name: "helper".into(),
        agent: "helper".into(),
        description: "Helps.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"input": {"type": "string"}}}).into(),
    }];
    assert!(
        matches!(violation(artifact), PolicyViolation::AgentCallsApprovedTool { ref node, ref tool, .. } if node == "desk" && tool == "pay"),
        "an interrupt in the graph approves no call the helper's model makes"
    );
}

#[test]
fn agents_called_as_tools_never_call_each_other_in_a_circle() {
    let mut artifact = base();
    let mut helper = artifact.agents["other"].clone();
    helper.agent_tools = vec![tenx_artifact::AgentTool {
        tool_name: "desk".into(),
        agent: "desk".into(),
        description: "Back to the desk.".into(),
        parameters: serde_json::json!({"type": "object"}).into(),
    }];
    artifact.agents.insert("helper".into(), helper);
    artifact.agents.get_mut("desk").unwrap().agent_tools = vec![tenx_artifact::AgentTool {
        tool_name: "helper".into(),
        agent: "helper".into(),
        description: "Helps.".into(),
        parameters: serde_json::json!({"type": "object"}).into(),
    }];
    assert!(inconsistent(artifact).contains("in a circle: `desk` → `helper` → `desk`"));
}
