//! The loader re-proves the risk policy: a sealed artifact edited by hand so that a tool can run
//! around its approval (or a prohibited tool is offered or run), then resealed with a correct id,
//! is refused, and so is the same edit signed by a key the host trusts. `seal` refuses the same
//! artifacts, so a compiler can never write one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::{Edit, envelope, reseal, sample, to_bytes};
use ed25519_dalek::Signer as _;
use serde_json::{Value, json};
use tenx_artifact::{
    ArtifactId, LoadError, PolicyViolation, Risk, SecretKey, TrustPolicy, generate_keypair, load, seal, signed_message,
};

/// The sample, sealed and unsigned, as an envelope to edit.
fn sealed_sample() -> Value {
    envelope(&seal(sample()).unwrap().to_bytes())
}

fn graph(envelope: &mut Value) -> &mut Value {
    &mut envelope["artifact"]["graphs"]["support_desk"]
}

/// Signs the envelope's id with `secret`, writing the signature block by hand as a signer
/// would: `sign` refuses to seal an artifact that breaks the policy, so it cannot be used.
fn sign_by_hand(envelope: &mut Value, secret: &SecretKey) {
    let id: ArtifactId = envelope["id"].as_str().unwrap().parse().unwrap();
    let text = secret.to_text();
    let seed = text.trim().strip_prefix("tenx-ed25519-secret:").unwrap();
    let seed: [u8; 32] = BASE64.decode(seed).unwrap().try_into().unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    let signature = key.sign(&signed_message(&id));
    envelope["signature"] = json!({
        "algorithm": "ed25519",
        "public_key": BASE64.encode(key.verifying_key().as_bytes()),
        "signature": BASE64.encode(signature.to_bytes()),
    });
}

/// The edited sample, resealed (its id recomputed) without a signature.
fn forged_unsigned(edit: Edit) -> Vec<u8> {
    let mut edited = sealed_sample();
    edit(&mut edited);
    reseal(&mut edited);
    to_bytes(&edited)
}

/// The edited sample, resealed and signed by a key the returned policy trusts and requires.
fn forged_signed(edit: Edit) -> (Vec<u8>, TrustPolicy) {
    let (secret, public) = generate_keypair().unwrap();
    let mut edited = sealed_sample();
    edit(&mut edited);
    reseal(&mut edited);
    sign_by_hand(&mut edited, &secret);
    (to_bytes(&edited), TrustPolicy::signature_required([public]))
}

fn refused(bytes: &[u8], policy: &TrustPolicy) -> LoadError {
    match load(bytes, policy) {
        Ok(loaded) => panic!("a forged artifact loaded: {}", loaded.id),
        Err(error) => error,
    }
}

/// Asserts that the edit, resealed unsigned and resealed signed by a trusted key, is refused
/// for breaking the risk policy with exactly `expected`.
fn refused_both_ways(what: &str, edit: Edit, expected: &str) {
    let expected = format!("artifact breaks the risk policy: {expected}");
    let error = refused(&forged_unsigned(edit), &TrustPolicy::signature_optional());
    assert_eq!(error.to_string(), expected, "{what}, unsigned");
    let (bytes, policy) = forged_signed(edit);
    let error = refused(&bytes, &policy);
    assert_eq!(error.to_string(), expected, "{what}, signed by a trusted key");
}

/// `triage -> review` becomes `triage -> close`: the run goes straight to the tool that the
/// review step approves.
fn reroute_edge_around_review(envelope: &mut Value) {
    let edges = graph(envelope)["edges"].as_array_mut().unwrap();
    let edge = edges
        .iter_mut()
        .find(|e| e["from"] == "triage" && e["to"] == "review")
        .unwrap();
    edge["to"] = json!("close");
}

/// `billing -> END` becomes a route whose arm leads to the tool: reached by the handoff edge
/// from `triage`, then a route arm, never passing the review.
fn route_arm_around_review(envelope: &mut Value) {
    let graph = graph(envelope);
    graph["edges"]
        .as_array_mut()
        .unwrap()
        .retain(|e| e["from"] != "billing");
    graph["routes"].as_array_mut().unwrap().insert(
        0,
        json!({"from": "billing", "by": null, "arms": [{"kind": "else", "target": "close"}]}),
    );
}

/// A `recheck` tool node that runs `lookup_order`, added to the graph.
fn add_recheck_node(graph: &mut Value) {
    graph["nodes"]["recheck"] = json!({"kind": "tool", "ref": "lookup_order"});
}

/// After `close` runs, `recheck` can send the run back to `close` without a new review.
fn loop_back_without_review(envelope: &mut Value) {
    let graph = graph(envelope);
    add_recheck_node(graph);
    let edges = graph["edges"].as_array_mut().unwrap();
    let edge = edges.iter_mut().find(|e| e["from"] == "close").unwrap();
    edge["to"] = json!("recheck");
    graph["routes"].as_array_mut().unwrap().insert(
        0,
        json!({
            "from": "recheck",
            "by": null,
            "arms": [{"kind": "label", "label": "retry", "target": "close"}, {"kind": "else", "target": "END"}],
        }),
    );
}

/// After `close` runs, the run goes back through `review`: every run of the tool is approved.
fn loop_back_through_review(envelope: &mut Value) {
    let graph = graph(envelope);
    let edges = graph["edges"].as_array_mut().unwrap();
    let edge = edges.iter_mut().find(|e| e["from"] == "close").unwrap();
    edge["to"] = json!("triage");
}

/// The review's `approve` arm leads to `recheck`, which then runs the tool: something runs
/// between the approval and the tool.
fn step_between_review_and_tool(envelope: &mut Value) {
    let graph = graph(envelope);
    add_recheck_node(graph);
    graph["routes"][0]["arms"][0]["target"] = json!("recheck");
    graph["edges"]
        .as_array_mut()
        .unwrap()
        .insert(2, json!({"from": "recheck", "to": "close", "kind": "plain"}));
}

/// The review's `else` arm, which a rejecting answer takes, leads to the tool too.
fn else_arm_to_the_tool(envelope: &mut Value) {
    graph(envelope)["routes"][0]["arms"][2]["target"] = json!("close");
}

/// The review's answer is no longer written into `decision`: its `approve` arm then tests a
/// value the answer did not give, which a rejecting answer can leave there.
fn route_on_an_unwritten_decision(envelope: &mut Value) {
    graph(envelope)["writes"] = json!([]);
}

/// The response no longer requires `decision`: an answer without it leaves an older value.
fn decision_no_longer_required(envelope: &mut Value) {
    envelope["artifact"]["interrupts"]["manager_review"]["response_schema"]
        .as_object_mut()
        .unwrap()
        .remove("required");
}

/// The review's failure handler leads to the tool.
fn failure_of_review_runs_the_tool(envelope: &mut Value) {
    graph(envelope)["on_error"] = json!([{"node": "review", "target": "close"}]);
}

/// The billing agent's model may call `close_account` itself, whatever the review decided.
fn agent_calls_reviewed_tool(envelope: &mut Value) {
    envelope["artifact"]["agents"]["billing"]["allowed_tools"] =
        json!(["close_account", "issue_refund", "lookup_order", "weather"]);
}

fn offer_prohibited_tool(envelope: &mut Value) {
    envelope["artifact"]["agents"]["triage"]["allowed_tools"] = json!(["lookup_order", "now", "wipe_database"]);
}

/// A node runs `wipe_database`, behind the review step.
fn run_prohibited_tool(envelope: &mut Value) {
    let graph = graph(envelope);
    graph["nodes"]["wipe"] = json!({"kind": "tool", "ref": "wipe_database"});
    graph["routes"][0]["arms"][2]["target"] = json!("wipe");
    graph["edges"]
        .as_array_mut()
        .unwrap()
        .push(json!({"from": "wipe", "to": "END", "kind": "plain"}));
}

fn drop_refund_approval(envelope: &mut Value) {
    envelope["artifact"]["tools"]["issue_refund"]["approval"] = Value::Null;
}

/// The review no longer approves `close_account`, on both sides, so they still mirror each
/// other.
fn drop_review_from_approvers(envelope: &mut Value) {
    envelope["artifact"]["tools"]["close_account"]["approved_by"] = json!([]);
    envelope["artifact"]["interrupts"]["manager_review"]["approves"] = json!([]);
}

/// `close_account` becomes a `low` risk tool, and the edge is rerouted around its review.
/// The tool node `close`, guarded by the review, becomes an extra entry: a run may start there.
fn extra_entry_at_the_tool(envelope: &mut Value) {
    graph(envelope)["entries"] = json!(["close"]);
}

fn lower_risk_and_reroute(envelope: &mut Value) {
    envelope["artifact"]["tools"]["close_account"]["risk"] = json!("low");
    reroute_edge_around_review(envelope);
}

#[test]
fn the_hand_signing_helper_makes_signatures_the_loader_accepts() {
    let (bytes, policy) = forged_signed(|_| {});
    let loaded = load(&bytes, &policy).unwrap();
    assert_eq!(loaded.artifact, seal(sample()).unwrap().into_artifact());
    assert!(loaded.signer.is_some());
}

#[test]
fn an_edge_rerouted_around_the_approving_interrupt_is_refused() {
    refused_both_ways(
        "rerouted edge",
        reroute_edge_around_review,
        "graph `support_desk`: tool `close_account` (risk high) can run without its approval: \
         entry `triage` → `close`",
    );
    let error = refused(
        &forged_unsigned(reroute_edge_around_review),
        &TrustPolicy::signature_optional(),
    );
    assert_eq!(
        error,
        LoadError::PolicyViolation {
            violation: PolicyViolation::ApprovalBypassed {
                graph: "support_desk".into(),
                tool: "close_account".into(),
                risk: Risk::High,
                path: vec!["triage".into(), "close".into()],
            },
            more: 0,
        }
    );
}

#[test]
fn a_handoff_and_a_route_arm_around_the_approving_interrupt_are_refused() {
    refused_both_ways(
        "route arm",
        route_arm_around_review,
        "graph `support_desk`: tool `close_account` (risk high) can run without its approval: \
         entry `triage` → `billing` → `close`",
    );
}

#[test]
fn a_loop_back_to_the_tool_without_a_new_approval_is_refused() {
    refused_both_ways(
        "loop",
        loop_back_without_review,
        "graph `support_desk`: tool `close_account` (risk high) can run again without a new \
         approval: `close` → `recheck` → `close`",
    );
}

#[test]
fn an_extra_entry_past_the_approving_interrupt_is_refused() {
    refused_both_ways(
        "extra entry",
        extra_entry_at_the_tool,
        "graph `support_desk`: tool `close_account` (risk high) can run without its approval: \
         entry `close`",
    );
}

#[test]
fn a_loop_back_through_the_approving_interrupt_loads() {
    let bytes = forged_unsigned(loop_back_through_review);
    let loaded = load(&bytes, &TrustPolicy::signature_optional()).unwrap();
    assert_eq!(loaded.artifact.graphs["support_desk"].edges.len(), 4);
}

#[test]
fn a_step_between_the_approval_and_the_tool_is_refused() {
    refused_both_ways(
        "step between",
        step_between_review_and_tool,
        "graph `support_desk`: node `recheck` runs between the approval of tool `close_account` \
         (risk high) and the tool itself: entry `triage` → `review` → `recheck` → `close`",
    );
}

#[test]
fn a_way_a_rejecting_answer_takes_into_the_tool_is_refused() {
    refused_both_ways(
        "else arm",
        else_arm_to_the_tool,
        "graph `support_desk`: a rejecting answer to interrupt node `review` can lead to tool \
         `close_account` (risk high), which it approves: entry `triage` → `review` → `close`",
    );
    let error = refused(
        &forged_unsigned(else_arm_to_the_tool),
        &TrustPolicy::signature_optional(),
    );
    assert_eq!(
        error,
        LoadError::PolicyViolation {
            violation: PolicyViolation::RejectionReachesTool {
                graph: "support_desk".into(),
                interrupt: "review".into(),
                tool: "close_account".into(),
                risk: Risk::High,
                path: vec!["triage".into(), "review".into(), "close".into()],
            },
            more: 0,
        }
    );
    for (what, edit) in [
        ("unwritten decision", route_on_an_unwritten_decision as Edit),
        ("optional decision", decision_no_longer_required),
        ("failure handler", failure_of_review_runs_the_tool),
    ] {
        refused_both_ways(
            what,
            edit,
            "graph `support_desk`: a rejecting answer to interrupt node `review` can lead to tool \
             `close_account` (risk high), which it approves: entry `triage` → `review` → `close`",
        );
    }
}

#[test]
fn an_agent_given_an_interrupt_approved_tool_is_refused() {
    refused_both_ways(
        "agent bypass",
        agent_calls_reviewed_tool,
        "graph `support_desk`: agent node `billing` can call tool `close_account` (risk high) \
         without passing its approval: entry `triage` → `billing` calls `close_account`",
    );
}

#[test]
fn a_prohibited_tool_offered_to_an_agent_or_run_by_a_node_is_refused() {
    refused_both_ways(
        "offered",
        offer_prohibited_tool,
        "agent `triage` allows tool `wipe_database`, whose risk is `prohibited`",
    );
    refused_both_ways(
        "run",
        run_prohibited_tool,
        "graph `support_desk`: node `wipe` runs tool `wipe_database`, whose risk is `prohibited`",
    );
}

#[test]
fn a_high_risk_tool_stripped_of_its_approval_is_refused() {
    refused_both_ways(
        "approval dropped",
        drop_refund_approval,
        "tool `issue_refund` has risk `high` but neither an approval nor an approving interrupt",
    );
    refused_both_ways(
        "approving interrupt dropped",
        drop_review_from_approvers,
        "tool `close_account` has risk `high` but neither an approval nor an approving interrupt",
    );
}

#[test]
fn an_interrupt_approval_binds_whatever_the_risk_says() {
    // The compiler proves dominance for every tool an interrupt approves, not only `high` ones.
    refused_both_ways(
        "risk lowered",
        lower_risk_and_reroute,
        "graph `support_desk`: tool `close_account` (risk low) can run without its approval: \
         entry `triage` → `close`",
    );
}

#[test]
fn a_lowered_risk_with_every_gate_removed_is_beyond_what_the_loader_can_know() {
    // The loader re-proves the rules, not the author's intent: a `low` tool needs no approval,
    // so only a signature can tell this edit from a program written that way.
    let edit: Edit = |envelope| {
        drop_review_from_approvers(envelope);
        envelope["artifact"]["tools"]["close_account"]["risk"] = json!("low");
    };
    assert!(load(&forged_unsigned(edit), &TrustPolicy::signature_optional()).is_ok());
    let (bytes, _) = forged_signed(edit);
    let (_, release_key) = generate_keypair().unwrap();
    let error = refused(&bytes, &TrustPolicy::signature_required([release_key]));
    assert!(matches!(error, LoadError::UntrustedKey { .. }), "{error}");
}

#[test]
fn seal_refuses_every_edit_the_loader_refuses() {
    let edits: [(&str, Edit); 10] = [
        ("extra entry", extra_entry_at_the_tool),
        ("rerouted edge", reroute_edge_around_review),
        ("route arm", route_arm_around_review),
        ("loop", loop_back_without_review),
        ("step between", step_between_review_and_tool),
        ("agent bypass", agent_calls_reviewed_tool),
        ("offered", offer_prohibited_tool),
        ("run", run_prohibited_tool),
        ("approval dropped", drop_refund_approval),
        ("risk lowered", lower_risk_and_reroute),
    ];
    for (what, edit) in edits {
        let mut edited = sealed_sample();
        edit(&mut edited);
        let artifact: tenx_artifact::Artifact = serde_json::from_value(edited["artifact"].clone()).unwrap();
        let sealed = seal(artifact);
        let refusal = refused(&forged_unsigned(edit), &TrustPolicy::signature_optional());
        let Err(error) = sealed else {
            panic!("{what}: sealed");
        };
        assert_eq!(error.to_string(), refusal.to_string(), "{what}");
    }
}
