//! Approvals end to end at the function level: the package of a refund and its golden
//! fingerprint (verified independently with Python's hashlib over the canonical bytes), the
//! interrupt-node form, the rejection key, the recheck at a tool node, edits, who may answer,
//! and the records.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use tenx_artifact::{
    Approval, Approvers, BoundSource, CallerAttribute, DEFAULT_ON_REJECT, Decision, Evidence, Interrupt, Risk, Run,
    Tool,
};
use tenx_engine::approval::{
    ActionContext, ApprovalOutcome, ApprovalRecord, ApprovalRequest, CallRisk, ToolCallOutcome, ToolCallRecord,
    Verdict, check_edit, is_fingerprint, may_answer, read_answer,
};
use tenx_engine::schema::{CompiledSchema, SchemaCache};
use tenx_engine::{ErrorCode, Identity};

const ARTIFACT: &str = "sha256:abababababababababababababababababababababababababababababababab";

fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "amount_cents": {"type": "integer", "minimum": 1, "maximum": 10000},
            "currency": {"type": "string", "default": "EUR"},
            "user_id": {"type": "string"}
        },
        "required": ["order_id", "amount_cents", "user_id"],
        "additionalProperties": false
    })
}

fn approval() -> Approval {
    Approval {
        message: "Refund {amount_cents} cents for order {order_id}?".into(),
        reason: "tool_approval".into(),
        target: Some("order {order_id}".into()),
        response_schema: json!({
            "type": "object",
            "properties": {
                "decision": {"enum": ["approve", "edit", "reject"]},
                "edited_arguments": {"type": "object"}
            },
            "required": ["decision"]
        })
        .into(),
        expires_ms: Some(600_000),
        on_reject: DEFAULT_ON_REJECT.into(),
        evidence: vec![
            Evidence::Param("amount_cents".into()),
            Evidence::State("customer_tier".into()),
            Evidence::Literal("policy REF-7".into()),
        ],
        approvers: Some(Approvers {
            roles: vec!["finance".into()],
            scopes: vec!["refunds:approve".into()],
        }),
        separate_duties: true,
        decision: Decision::approve_edit_reject(),
        feedback: None,
    }
}

fn refund_tool() -> Tool {
    Tool {
        name: "issue_refund".into(),
        description: "Refund part or all of an order.".into(),
        parameters: parameters().into(),
        result: None,
        risk: Risk::High,
        tags: vec!["billing".into()],
        approval: Some(approval()),
        approved_by: Vec::new(),
        idempotency_key: Some("refund-{order_id}-{amount_cents}".into()),
        run: Run::Remote,
        bindings: BTreeMap::from([("user_id".to_owned(), BoundSource::Caller(CallerAttribute::UserId))]),
        risk_rules: None,
        retry: None,
    }
}

fn state() -> Map<String, Value> {
    json!({"customer_tier": "gold"}).as_object().cloned().unwrap()
}

fn context(state: &Map<String, Value>) -> ActionContext<'_> {
    ActionContext {
        artifact_id: ARTIFACT,
        graph: "refunds",
        node: "refunds_agent",
        state,
        state_version: 7,
        requested_by: Some("alice"),
        asked_at: 1_700_000_000_000,
    }
}

fn arguments() -> Value {
    let compiled = CompiledSchema::compile(&parameters()).unwrap();
    compiled
        .check_and_normalise(&json!({"order_id": "1042", "amount_cents": 5900.0, "user_id": "alice"}))
        .unwrap()
}

fn refund_request() -> ApprovalRequest {
    let tool = refund_tool();
    let state = state();
    ApprovalRequest::for_tool(
        &context(&state),
        "refund_order",
        &tool,
        tool.approval.as_ref().unwrap(),
        arguments(),
        Some("order 1042".into()),
        CallRisk::base(Risk::High),
    )
}

/// The canonical bytes the fingerprint hashes, written out by hand. Verified independently:
/// `python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())' "$BYTES"`.
const CANONICAL: &str = concat!(
    r#"{"action":"refund_order","evidence":[{"param":"amount_cents","value":5900},"#,
    r#"{"state":"customer_tier","value":"gold"},{"literal":"policy REF-7"}],"#,
    r#""expires_at":1700000600000,"graph":"refunds","node":"refunds_agent","#,
    r#""normalized_arguments":{"amount_cents":5900,"currency":"EUR","order_id":"1042","user_id":"alice"},"#,
    r#""policy_revision":"sha256:abababababababababababababababababababababababababababababababab","#,
    r#""requested_by":"alice","state_version":7,"target":"order 1042"}"#
);
/// Python, building the same object itself: `json.dumps(inputs, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=False)` gives `CANONICAL`, and `hashlib.sha256` of it gives this.
const GOLDEN: &str = "sha256:90ddee2e69207df503dd90a2c0605b5f188b2d1e376407394d1e5d7a5572455d";

#[test]
fn the_refund_package_and_its_golden_fingerprint() {
    let request = refund_request();
    let canonical = tenx_artifact::canonical_json(&request.fingerprint_inputs()).unwrap();
    assert_eq!(String::from_utf8(canonical).unwrap(), CANONICAL);
    let fingerprint = request.fingerprint().unwrap();
    assert_eq!(fingerprint, GOLDEN);
    assert!(is_fingerprint(&fingerprint));
    let package = request.package().unwrap();
    assert_eq!(package["approval_fingerprint"], json!(GOLDEN));
    insta::assert_json_snapshot!("refund_package", package);
}

/// One change to a request.
type Change = fn(&mut ApprovalRequest);

#[test]
fn every_bound_input_moves_the_fingerprint() {
    let base = refund_request();
    let golden = base.fingerprint().unwrap();
    let changes: Vec<(&str, Change)> = vec![
        ("policy_revision", |r| r.policy_revision = "sha256:other".into()),
        ("graph", |r| r.graph = "other".into()),
        ("node", |r| r.node = "other".into()),
        ("action", |r| r.action = "other".into()),
        ("normalized_arguments", |r| {
            r.normalized_arguments["amount_cents"] = json!(5901)
        }),
        ("target", |r| r.target = None),
        ("evidence", |r| drop(r.evidence.pop())),
        ("state_version", |r| r.state_version = 8),
        ("requested_by", |r| r.requested_by = None),
        ("expires_at", |r| r.expires_at = None),
    ];
    for (name, change) in changes {
        let mut changed = base.clone();
        change(&mut changed);
        assert_ne!(changed.fingerprint().unwrap(), golden, "{name} is not bound");
    }
    // What is shown but not bound: the model-facing name, the risk, the on-reject text.
    let mut shown = base.clone();
    shown.tool_name = "refund_order".into();
    shown.risk = Risk::Medium;
    shown.on_reject = "No.".into();
    assert_eq!(shown.fingerprint().unwrap(), golden);
    // `tool_name` appears only when it differs from the declared name.
    assert!(shown.package().unwrap().get("tool_name").is_none());
    assert_eq!(base.package().unwrap()["tool_name"], json!("issue_refund"));
}

#[test]
fn a_rejection_is_remembered_by_the_action_not_the_moment() {
    let base = refund_request();
    let key = base.rejection_key().unwrap();
    assert!(is_fingerprint(&key));
    assert_ne!(key, base.fingerprint().unwrap());
    let mut later = base.clone();
    later.expires_at = Some(1_800_000_000_000);
    later.state_version = 12;
    assert_eq!(
        later.rejection_key().unwrap(),
        key,
        "asked again later in the run: the same action"
    );
    let mut other = base.clone();
    other.normalized_arguments["amount_cents"] = json!(100);
    assert_ne!(other.rejection_key().unwrap(), key, "another amount is another action");
    let mut elsewhere = base;
    elsewhere.node = "other_agent".into();
    assert_ne!(elsewhere.rejection_key().unwrap(), key);
}

fn approving_interrupt() -> Interrupt {
    Interrupt {
        message: "Pay {amount_cents}?".into(),
        reason: "human_review".into(),
        value: Some(json!({"ticket": "T-9"})),
        response_schema: json!({"type": "object"}).into(),
        expires_ms: None,
        approves: vec!["refund_order".into()],
        on_reject: "Payment declined.".into(),
        target: None,
        evidence: vec![Evidence::State("customer_tier".into())],
        approvers: None,
        separate_duties: false,
        decision: Decision::yes_no(),
        feedback: None,
    }
}

#[test]
fn the_interrupt_node_form_and_its_recheck_at_the_tool_node() {
    let tool = refund_tool();
    let state = state();
    let mut context = context(&state);
    context.node = "pay";
    let interrupt = approving_interrupt();
    let request = ApprovalRequest::for_interrupt(
        &context,
        &interrupt,
        "refund_order",
        &tool,
        arguments(),
        None,
        CallRisk {
            risk: Risk::Medium,
            rule: Some(1),
        },
    );
    let mut package = request.package().unwrap();
    let fingerprint = package.as_object_mut().unwrap().remove("approval_fingerprint").unwrap();
    assert_eq!(fingerprint, json!(request.fingerprint().unwrap()));
    insta::assert_json_snapshot!("interrupt_package", package);

    // At the tool node: the same action passes; any difference asks again.
    let evidence = request.evidence.clone();
    assert!(request.recheck(ARTIFACT, &arguments(), None, &evidence).unwrap());
    let mut raised = arguments();
    raised["amount_cents"] = json!(9000);
    assert!(!request.recheck(ARTIFACT, &raised, None, &evidence).unwrap());
    assert!(
        !request
            .recheck("sha256:new-program", &arguments(), None, &evidence)
            .unwrap()
    );
    assert!(
        !request
            .recheck(ARTIFACT, &arguments(), Some("order 1042"), &evidence)
            .unwrap()
    );
    let changed_state = json!({"customer_tier": "bronze"}).as_object().cloned().unwrap();
    let fresh = tenx_engine::approval::resolve_evidence(&interrupt.evidence, &arguments(), &changed_state);
    assert!(!request.recheck(ARTIFACT, &arguments(), None, &fresh).unwrap());
    // The request survives a checkpoint.
    let stored: ApprovalRequest = serde_json::from_value(serde_json::to_value(&request).unwrap()).unwrap();
    assert_eq!(stored, request);
}

fn edit(edited: Value) -> Result<Value, tenx_engine::RunError> {
    let tool = refund_tool();
    let cache = SchemaCache::new();
    let parameters = cache.get(&tool.parameters).unwrap();
    check_edit("refund_order", &tool, &parameters, &arguments(), &edited)
}

#[test]
fn an_edit_is_checked_then_normalised() {
    let answer = json!({"decision": "edit", "edited_arguments": {"order_id": "1042", "amount_cents": 2500}});
    let Verdict::Edit(edited) = read_answer(&Decision::approve_edit_reject(), &answer) else {
        panic!("an edit")
    };
    // The bound argument left out keeps the runtime's value; the default is filled in.
    assert_eq!(
        edit(edited).unwrap(),
        json!({"order_id": "1042", "amount_cents": 2500, "currency": "EUR", "user_id": "alice"})
    );
    // Repeating the bound argument unchanged is fine.
    assert!(edit(json!({"order_id": "1042", "amount_cents": 2500, "user_id": "alice"})).is_ok());
}

#[test]
fn every_edit_refusal() {
    let cases = [
        ("past the maximum", json!({"order_id": "1042", "amount_cents": 20000})),
        ("wrong type", json!({"order_id": "1042", "amount_cents": "2500"})),
        (
            "unknown argument",
            json!({"order_id": "1042", "amount_cents": 1, "note": "x"}),
        ),
        ("missing argument", json!({"amount_cents": 1})),
        (
            "bound argument changed",
            json!({"order_id": "1042", "amount_cents": 1, "user_id": "mallory"}),
        ),
        ("not an object", json!(["order_id"])),
        ("no edited_arguments", Value::Null),
    ];
    let mut out = String::new();
    for (name, edited) in cases {
        let error = edit(edited).unwrap_err();
        assert_eq!(error.code, ErrorCode::EditRefused, "{name}");
        assert_eq!(error.code.status(), 422);
        out.push_str(&format!("{name}:\n  {}\n  {}\n", error.message, error.details));
    }
    insta::assert_snapshot!("edit_refusals", out);
}

fn user(id: &str, roles: &[&str], scopes: &[&str]) -> Identity {
    Identity {
        user_id: Some(id.into()),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        claims: Map::new(),
    }
}

#[test]
fn who_may_answer() {
    let approvers = Approvers {
        roles: vec!["finance".into()],
        scopes: vec!["refunds:approve".into()],
    };
    let a = Some(&approvers);
    // Any listed role or scope suffices.
    assert!(may_answer(a, true, Some("alice"), &user("bob", &["finance"], &[]), true).is_ok());
    assert!(may_answer(a, true, Some("alice"), &user("carol", &[], &["refunds:approve"]), true).is_ok());
    // Without approvers, whoever may act on the thread (the server checked) may answer.
    assert!(may_answer(None, false, Some("alice"), &user("alice", &[], &[]), true).is_ok());
    // Development mode: anyone, even the starter under separate duties.
    assert!(may_answer(a, true, None, &Identity::anonymous(), false).is_ok());
    assert!(may_answer(a, true, Some("alice"), &user("alice", &[], &[]), false).is_ok());
    // Without auth on the run, separate duties has nobody to refuse.
    assert!(may_answer(None, true, None, &user("dave", &[], &[]), true).is_ok());

    let refusals = [
        (
            "unverified",
            may_answer(a, false, Some("alice"), &Identity::anonymous(), true),
        ),
        (
            "no role or scope",
            may_answer(
                a,
                false,
                Some("alice"),
                &user("eve", &["support"], &["refunds:read"]),
                true,
            ),
        ),
        (
            "a role named like a scope",
            may_answer(a, false, None, &user("eve", &["refunds:approve"], &[]), true),
        ),
        (
            "the starter, an approver",
            may_answer(a, true, Some("alice"), &user("alice", &["finance"], &[]), true),
        ),
        (
            "the starter, no approvers",
            may_answer(None, true, Some("alice"), &user("alice", &[], &[]), true),
        ),
    ];
    let mut out = String::new();
    for (name, result) in refusals {
        let error = result.unwrap_err();
        assert_eq!(error.code, ErrorCode::ApproverRefused, "{name}");
        assert_eq!(error.code.status(), 403);
        assert!(
            !error.message.contains("finance") && !error.message.contains("refunds:approve"),
            "{name} leaks"
        );
        out.push_str(&format!("{name}: {} {}\n", error.message, error.details));
    }
    insta::assert_snapshot!("approver_refusals", out);
}

#[test]
fn records_carry_who_when_what_and_never_results() {
    let request = refund_request();
    let approval = ApprovalRecord {
        interrupt_id: Some("int_710c73f7a4a1479881718d9ad18a3c55".into()),
        graph: request.graph.clone(),
        node: request.node.clone(),
        action: request.action.clone(),
        tool_call_id: Some("call_1".into()),
        fingerprint: request.fingerprint().unwrap(),
        requested_by: Some("alice".into()),
        answered_by: Some("bob".into()),
        asked_at: 1_700_000_000_000,
        answered_at: Some(1_700_000_060_000),
        decision: Some(Verdict::Edit(Value::Null).as_str().into()),
        outcome: ApprovalOutcome::Edited,
        idempotency_key: Some("refund-1042-2500".into()),
        original_arguments: request.normalized_arguments.clone(),
        edited_arguments: Some(
            json!({"order_id": "1042", "amount_cents": 2500, "currency": "EUR", "user_id": "alice"}),
        ),
        edited_fingerprint: Some("sha256:0000000000000000000000000000000000000000000000000000000000000000".into()),
    }
    .into_record("thread-1", 1_700_000_060_000);
    assert_eq!(approval.kind, "approval");
    assert_eq!(approval.thread_id, "thread-1");
    let call = ToolCallRecord {
        graph: "refunds".into(),
        node: "refunds_agent".into(),
        tool: Some("refund_order".into()),
        tool_name: "issue_refund".into(),
        call_id: "call_1".into(),
        requested_by: Some("alice".into()),
        idempotency_key: Some("refund-1042-2500".into()),
        arguments: Some(json!({"order_id": "1042", "amount_cents": 2500, "currency": "EUR", "user_id": "alice"})),
        approval_fingerprint: Some("sha256:0000000000000000000000000000000000000000000000000000000000000000".into()),
        outcome: ToolCallOutcome::Completed,
        reason: None,
        started_at: 1_700_000_060_001,
        finished_at: 1_700_000_060_050,
    }
    .into_record("thread-1", 1_700_000_060_050);
    assert_eq!(call.kind, "tool_call");
    insta::assert_json_snapshot!("records", [approval, call]);
}
