//! The approvals API over HTTP (issue 16): the inbox lists only what the caller may answer,
//! reading and answering enforce `approvers` and `separate_duties` with tokens of several users
//! and roles (a refusal records nothing), escalation hands a request to another role, batch
//! approval refuses high risk and its caps before anything runs, expiry is never consent, a
//! request asked again after the program changed shows what changed, and the approval record
//! says who and what, paged and as JSON Lines.

use std::sync::Arc;

use serde_json::{Value, json};
use tenx_engine::testing::{FakeTools, ManualClock};
use tenx_engine::{Engine, EngineOptions, MemoryStore, ScriptedModel};
use tenx_server::{ApprovalBatch, ServerSettings};

use super::harness::{Server, Setup, compile_named, refund_example, refund_tools, token, user, with_auth};

const REFUND: &str = "Refund order 1042, 59.00";

/// The refund example with auth; `alice` asks, `bob` leads support, `carol` holds nothing,
/// `dave` is in finance.
struct People {
    server: Server,
    alice: Server,
    bob: Server,
    carol: Server,
    dave: Server,
}

fn people(server: Server) -> People {
    let scopes = json!([
        "graph:invoke",
        "checkpointer:read",
        "approvals:read",
        "approvals:answer"
    ]);
    People {
        alice: server.as_user(&token("alice", json!({"roles": ["support_lead"], "scopes": scopes}))),
        bob: server.as_user(&token("bob", json!({"roles": ["support_lead"], "scopes": scopes}))),
        carol: server.as_user(&token("carol", json!({"roles": ["viewer"], "scopes": scopes}))),
        dave: server.as_user(&token("dave", json!({"roles": ["finance_lead"], "scopes": scopes}))),
        server,
    }
}

/// `asker` starts a refund on `thread`; the open interrupt's id.
async fn ask(asker: &Server, thread: &str) -> String {
    let (status, body) = asker
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user(REFUND)], "config": {"thread_id": thread}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `who` answers `id` with `resume`: the status and the body.
async fn answer(who: &Server, id: &str, resume: Value) -> (u16, Value) {
    who.post(&format!("/v1/approvals/{id}/answer"), json!({"resume": resume}))
        .await
}

fn ids(list: &Value) -> Vec<String> {
    list["data"]["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["interrupt_id"].as_str().unwrap().to_owned())
        .collect()
}

async fn records(reader: &Server) -> Vec<Value> {
    let (status, body) = reader.get("/v1/approval-records?limit=1000").await;
    assert_eq!(status, 200, "{body}");
    body["data"]["records"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_inbox_lists_what_each_user_may_answer_and_an_approver_answers_once() {
    let p = people(Server::start(refund_example(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "t1").await;

    // bob may answer; alice asked it (separate duties), carol holds no approver role.
    let (status, list) = p.bob.get("/v1/approvals").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(ids(&list), vec![id.clone()]);
    assert_eq!(list["data"]["anyone_may_approve"], false);
    let item = &list["data"]["approvals"][0];
    assert_eq!(item["action"], "issue_refund");
    assert_eq!(item["risk"], "high");
    assert_eq!(item["target"], "order 1042");
    assert_eq!(
        item["normalized_arguments"],
        json!({"amount_cents": 5900, "order_id": "1042"})
    );
    assert_eq!(item["requested_by"], "alice");
    assert_eq!(
        item["approvers"],
        json!({"roles": ["support_lead"], "scopes": ["refunds:approve"]})
    );
    assert_eq!(item["separate_duties"], true);
    assert_eq!(item["response"], "yes_no");
    assert!(item["expires_at_ms"].as_u64().unwrap() > item["asked_at_ms"].as_u64().unwrap());
    assert!(ids(&p.alice.get("/v1/approvals").await.1).is_empty());
    assert!(ids(&p.carol.get("/v1/approvals").await.1).is_empty());

    // The detail: impact, evidence, the parameter schema; who may not answer is told why.
    let (status, detail) = p.bob.get(&format!("/v1/approvals/{id}")).await;
    assert_eq!(status, 200, "{detail}");
    let detail = &detail["data"];
    assert_eq!(detail["may_answer"], true);
    assert_eq!(detail["on_reject"], "Refund declined.");
    assert_eq!(detail["evidence"][1], json!({"literal": "refund-policy-7"}));
    assert_eq!(
        detail["parameters_schema"]["properties"]["amount_cents"]["description"],
        "The amount to refund, in cents"
    );
    assert!(detail["approval_fingerprint"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(detail["replaces_request"], Value::Null);
    let (status, own) = p.alice.get(&format!("/v1/approvals/{id}")).await;
    assert_eq!(status, 200, "the requester reads their own request: {own}");
    assert_eq!(own["data"]["may_answer"], false);
    assert_eq!(own["data"]["refused"]["rule"], "separate_duties");
    let (status, refused) = p.carol.get(&format!("/v1/approvals/{id}")).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["error"]["code"], "APPROVER_REFUSED");
    assert_eq!(refused["error"]["details"][0]["rule"], "approvers");

    // Refused answers record nothing.
    let before = p.server.snapshot("t1").await;
    for (who, rule) in [(&p.alice, "separate_duties"), (&p.carol, "approvers")] {
        let (status, body) = answer(who, &id, json!({"approved": true})).await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "APPROVER_REFUSED");
        assert_eq!(body["error"]["details"][0]["rule"], rule);
    }
    let (status, body) = answer(&p.bob, &id, json!({"approved": "yes"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("INTERRUPT_002")),
        "{body}"
    );
    let (status, body) = p
        .bob
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": true}, "extra": 1}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(p.server.snapshot("t1").await, before);
    assert!(records(&p.bob).await.is_empty());
    assert_eq!(p.server.tools.calls_of("issue_refund"), 0);

    // bob approves: the refund runs once, and the record says who and what.
    let (status, answered) = p
        .bob
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": true}, "note": "checked the order"}),
        )
        .await;
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["data"]["outcome"], "approved");
    assert_eq!(answered["data"]["status"], "completed");
    assert_eq!(answered["data"]["final_text"], "Refunded 5900 cents for order 1042");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);
    let (status, again) = answer(&p.bob, &id, json!({"approved": true})).await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (404, Some("APPROVAL_NOT_FOUND"))
    );
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);
    assert!(ids(&p.bob.get("/v1/approvals").await.1).is_empty());

    let seen = records(&p.bob).await;
    let approval = seen
        .iter()
        .find(|record| record["kind"] == "approval")
        .expect("an approval record");
    assert_eq!(approval["interrupt_id"], id.as_str());
    assert_eq!(approval["requested_by"], "alice");
    assert_eq!(approval["answered_by"], "bob");
    assert_eq!(approval["decision"], "approve");
    assert_eq!(approval["action"], "issue_refund");
    assert_eq!(approval["note"], "checked the order");
    assert_eq!(approval["idempotency_key"], "refund-1042-5900");
    assert_eq!(
        approval["original_arguments"],
        json!({"amount_cents": 5900, "order_id": "1042"})
    );
    assert_eq!(approval["thread_id"], "t1");
    assert!(approval["answered_at"].as_u64().is_some());
    let call = seen
        .iter()
        .find(|record| record["kind"] == "tool_call" && record["outcome"] == "completed")
        .expect("the refund's tool-call record");
    assert_eq!(call["idempotency_key"], "refund-1042-5900");
    // The requester sees it too; carol (another role, not her thread) sees nothing.
    assert_eq!(records(&p.alice).await.len(), seen.len());
    assert!(records(&p.carol).await.is_empty());

    // Paging by `seq`, and the JSON Lines export of the same records.
    let first_seq = seen[0]["seq"].as_u64().unwrap();
    let (_, page) = p
        .bob
        .get(&format!("/v1/approval-records?after={first_seq}&limit=1"))
        .await;
    assert_eq!(page["data"]["records"].as_array().unwrap().len(), 1);
    assert_eq!(page["data"]["records"][0]["seq"], seen[1]["seq"]);
    let response = p
        .bob
        .request(reqwest::Method::GET, "/v1/approval-records/export")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let text = response.text().await.unwrap();
    let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines, seen);
}

#[tokio::test]
async fn a_rejection_keeps_its_reason_and_nothing_runs() {
    let p = people(Server::start(refund_example(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "t2").await;
    let (status, answered) = p
        .bob
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": false}, "note": "the order was already refunded"}),
        )
        .await;
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["data"]["outcome"], "rejected");
    assert_eq!(answered["data"]["final_text"], "Refund declined.");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 0);
    let approval = records(&p.bob)
        .await
        .into_iter()
        .find(|record| record["kind"] == "approval")
        .unwrap();
    assert_eq!(approval["outcome"], "rejected");
    assert_eq!(approval["note"], "the order was already refunded");
    assert_eq!(
        approval["idempotency_key"],
        Value::Null,
        "a rejected action runs under no key"
    );
}

#[tokio::test]
async fn an_escalated_request_is_answered_only_by_the_role_it_was_handed_to() {
    let p = people(Server::start(refund_example(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "t3").await;
    let path = format!("/v1/approvals/{id}/escalate");

    // Refusals first: a bad role, no note, someone who may not answer; none records anything.
    let before = p.server.snapshot("t3").await;
    let (status, body) = p
        .bob
        .post(&path, json!({"to_role": "finance lead!", "note": "x"}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("ESCALATION_INVALID")),
        "{body}"
    );
    let (status, body) = p.bob.post(&path, json!({"to_role": "finance_lead"})).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = p
        .carol
        .post(&path, json!({"to_role": "finance_lead", "note": "mine now"}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("APPROVER_REFUSED")),
        "{body}"
    );
    assert_eq!(p.server.snapshot("t3").await, before);

    let (status, escalated) = p
        .bob
        .post(
            &path,
            json!({"to_role": "finance_lead", "note": "over my refund limit"}),
        )
        .await;
    assert_eq!(status, 200, "{escalated}");
    assert_eq!(escalated["data"]["escalated_to"]["role"], "finance_lead");
    assert_eq!(escalated["data"]["escalated_to"]["by"], "bob");
    assert_eq!(
        escalated["data"]["approvers"],
        json!({"roles": ["finance_lead"], "scopes": []})
    );
    assert_eq!(escalated["data"]["may_answer"], false, "bob handed it on");

    assert!(ids(&p.bob.get("/v1/approvals").await.1).is_empty());
    assert_eq!(ids(&p.dave.get("/v1/approvals").await.1), vec![id.clone()]);
    let (status, body) = answer(&p.bob, &id, json!({"approved": true})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("APPROVER_REFUSED")),
        "{body}"
    );
    assert_eq!(p.server.tools.calls_of("issue_refund"), 0);
    let (status, body) = answer(&p.dave, &id, json!({"approved": true})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);

    let seen = records(&p.bob).await;
    let escalation = seen.iter().find(|record| record["kind"] == "escalation").unwrap();
    assert_eq!(escalation["to_role"], "finance_lead");
    assert_eq!(escalation["note"], "over my refund limit");
    let approval = seen.iter().find(|record| record["kind"] == "approval").unwrap();
    assert_eq!(approval["answered_by"], "dave");
    assert_eq!(approval["escalated_to"], "finance_lead");
}

#[tokio::test]
async fn an_expired_request_cannot_be_answered_and_nothing_runs() {
    let clock = Arc::new(ManualClock::new(1_796_083_200_000));
    let setup = Setup {
        clock: Some(clock.clone()),
        ..Setup::default()
    };
    let p = people(Server::start_with(refund_example(), refund_tools(), with_auth(), setup).await);
    let id = ask(&p.alice, "t4").await;
    clock.advance(25 * 3600 * 1000);
    let (status, body) = answer(&p.bob, &id, json!({"approved": true})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("INTERRUPT_EXPIRED")),
        "{body}"
    );
    assert_eq!(p.server.tools.calls_of("issue_refund"), 0);
    let expired = records(&p.bob).await;
    assert!(
        expired
            .iter()
            .any(|record| record["kind"] == "approval" && record["outcome"] == "expired"),
        "{expired:?}"
    );
    assert!(
        ids(&p.bob.get("/v1/approvals").await.1).is_empty(),
        "an expired request leaves the inbox"
    );
}

/// Invoices of a chosen amount, each paid by a medium-risk tool behind a yes/no confirmation.
const INVOICES: &str = r#"
import std.approval.yes_no

tag billing "Pays invoices"

model clerk_model {
  provider = scripted
  rules = [
    {
      match: "(?i)pay (?<amount>[0-9]+)",
      turns: [
        { tool: "pay_invoice", arguments: { amount_cents: "{amount:int}" } },
        { text: "{result}" }
      ]
    }
  ]
  fallback = { text: "Write: pay 300" }
}

tool pay_invoice(amount_cents: int(min: 1, max: 100000) "The amount to pay, in cents") -> string {
  description = "Pay an invoice."
  tags = [billing]
  risk = medium
  approval {
    message  = "Pay {amount_cents} cents?"
    response = yes_no
  }
  run = http(POST, "http://127.0.0.1:9/pay", timeout: 5s)
}

agent clerk {
  model  = clerk_model
  prompt = "Pay invoices."
  tools  = tagged(billing)
}

graph invoices {
  entry = clerk
  nodes = [clerk]
  clerk -> END
}
"#;

async fn invoice(server: &Server, thread: &str, amount: u64) -> String {
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user(&format!("pay {amount}"))], "config": {"thread_id": thread}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_batch_approves_low_and_medium_risk_within_its_caps_and_refuses_the_rest_whole() {
    let settings = ServerSettings {
        approval_batch: ApprovalBatch {
            max_count: 2,
            max_total: 1000,
        },
        ..ServerSettings::default()
    };
    let tools = FakeTools::new().returns("pay_invoice", json!("paid"));
    let server = Server::start(compile_named("invoices.tenx", INVOICES), tools, settings).await;
    let a = invoice(&server, "a", 300).await;
    let b = invoice(&server, "b", 400).await;
    let c = invoice(&server, "c", 700).await;
    let (_, list) = server.get("/v1/approvals").await;
    assert_eq!(list["data"]["anyone_may_approve"], true, "development mode says so");
    assert_eq!(list["data"]["batch"], json!({"max_count": 2, "max_total": 1000.0}));
    assert_eq!(ids(&list), [a.clone(), b.clone(), c.clone()], "oldest first");
    assert_eq!(list["data"]["approvals"][0]["risk"], "medium");
    let before = [
        server.snapshot("a").await,
        server.snapshot("b").await,
        server.snapshot("c").await,
    ];

    for (batch, rule) in [
        (json!([a, b, c]), "count"),
        (json!([b, c]), "total_amount"),
        (json!([a, a]), "duplicate"),
        (json!([]), "count"),
    ] {
        let (status, body) = server
            .post("/v1/approvals/batch", json!({"interrupt_ids": batch}))
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["code"], "BATCH_REFUSED");
        assert_eq!(body["error"]["details"][0]["rule"], rule, "{body}");
    }
    assert_eq!(server.tools.calls_of("pay_invoice"), 0, "a refused batch runs nothing");
    let after = [
        server.snapshot("a").await,
        server.snapshot("b").await,
        server.snapshot("c").await,
    ];
    assert_eq!(after, before, "a refused batch records nothing");

    let (status, body) = server
        .post(
            "/v1/approvals/batch",
            json!({"interrupt_ids": [a, b], "note": "month end"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let results = body["data"]["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .all(|result| result["ok"] == true && result["outcome"] == "approved"),
        "{body}"
    );
    assert_eq!(server.tools.calls_of("pay_invoice"), 2);
    assert_eq!(ids(&server.get("/v1/approvals").await.1), [c]);
}

#[tokio::test]
async fn a_high_risk_request_is_never_approved_in_a_batch() {
    let server = Server::refunds().await;
    let id = ask(&server, "h1").await;
    let (status, body) = server.post("/v1/approvals/batch", json!({"interrupt_ids": [id]})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["details"][0]["rule"], "risk");
    assert_eq!(server.tools.calls_of("issue_refund"), 0);
}

#[tokio::test]
async fn a_request_asked_again_after_the_program_changed_shows_what_changed() {
    let store = Arc::new(MemoryStore::new());
    let setup = Setup {
        store: Some(store.clone()),
        ..Setup::default()
    };
    let first = Server::start_with(refund_example(), refund_tools(), ServerSettings::default(), setup).await;
    let old_id = ask(&first, "c1").await;

    // The same program with its target worded differently: a new artifact.
    let path = tenx_tests::repo_root().join("examples/refund_approval/main.tenx");
    let changed = std::fs::read_to_string(path).unwrap().replace(
        r#"target    = "order {order_id}""#,
        r#"target    = "order #{order_id} (customer refund)""#,
    );
    let artifact = compile_named("examples/refund_approval/main.tenx", &changed);
    let mut models: std::collections::BTreeMap<String, Arc<dyn tenx_engine::ports::ModelClient>> = Default::default();
    models.insert("support_model".into(), Arc::new(ScriptedModel::new()));
    let tools = Arc::new(refund_tools());
    let ports = tenx_engine::ports::Ports {
        store: store.clone(),
        models,
        tools: tools.clone(),
        clock: Arc::new(tenx_runtime::ports::SystemClock),
        ids: Arc::new(tenx_runtime::ports::OsIds::new().unwrap()),
    };
    let options = EngineOptions {
        reask_after_reload: true,
        ..EngineOptions::default()
    };
    let engine = Engine::new(artifact, ports, options).unwrap();
    engine
        .reask_after_reload(&mut tenx_engine::ports::NullEvents)
        .await
        .unwrap();
    let second = Server::serve(engine, store, tools, ServerSettings::default()).await;

    let (_, list) = second.get("/v1/approvals").await;
    let new_id = ids(&list).pop().expect("the request asked again");
    assert_ne!(new_id, old_id);
    assert_eq!(list["data"]["approvals"][0]["replaces"], true);
    let (status, detail) = second.get(&format!("/v1/approvals/{new_id}")).await;
    assert_eq!(status, 200, "{detail}");
    let detail = &detail["data"];
    assert_eq!(detail["replaces_request"]["interrupt_id"], old_id.as_str());
    assert_eq!(detail["replaces_request"]["target"], "order 1042");
    let changes: Vec<&str> = detail["difference"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["field"].as_str().unwrap())
        .collect();
    assert_eq!(changes, ["target", "policy_revision"], "{detail}");
    assert_eq!(detail["difference"][0]["before"], "order 1042");
    assert_eq!(detail["difference"][0]["after"], "order #1042 (customer refund)");
    let (status, gone) = second.get(&format!("/v1/approvals/{old_id}")).await;
    assert_eq!(status, 404, "{gone}");
}

#[tokio::test]
async fn an_edit_is_checked_against_the_parameters_and_runs_once_with_the_edited_arguments() {
    let program = INVOICES
        .replace("import std.approval.yes_no", "import std.approval.approve_edit_reject")
        .replace("response = yes_no", "response = approve_edit_reject");
    let tools = FakeTools::new().returns("pay_invoice", json!("paid"));
    let server = Server::start(
        compile_named("invoices.tenx", &program),
        tools,
        ServerSettings::default(),
    )
    .await;
    let id = invoice(&server, "e", 300).await;
    let (_, detail) = server.get(&format!("/v1/approvals/{id}")).await;
    assert_eq!(detail["data"]["response"], "approve_edit_reject");
    assert_eq!(
        detail["data"]["parameters_schema"]["properties"]["amount_cents"]["maximum"],
        100_000
    );

    // Outside the parameters: refused, nothing recorded, nothing ran.
    let before = server.snapshot("e").await;
    let (status, body) = server
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"decision": "edit", "edited_arguments": {"amount_cents": 100_001}}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("EDIT_REFUSED")),
        "{body}"
    );
    assert_eq!(server.snapshot("e").await, before);
    assert_eq!(server.tools.calls_of("pay_invoice"), 0);

    let (status, body) = server
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"decision": "edit", "edited_arguments": {"amount_cents": 250}}, "note": "the invoice says 2.50"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["outcome"], "edited");
    let calls = server.tools.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, json!({"amount_cents": 250}));
    let record = &body["data"]["record"];
    assert_eq!(record["original_arguments"], json!({"amount_cents": 300}));
    assert_eq!(record["edited_arguments"], json!({"amount_cents": 250}));
    assert_eq!(record["note"], "the invoice says 2.50");
}

#[tokio::test]
async fn an_expired_request_cannot_be_escalated_and_the_refusal_records_nothing() {
    let clock = Arc::new(ManualClock::new(1_796_083_200_000));
    let setup = Setup {
        clock: Some(clock.clone()),
        ..Setup::default()
    };
    let p = people(Server::start_with(refund_example(), refund_tools(), with_auth(), setup).await);
    let id = ask(&p.alice, "x1").await;
    clock.advance(25 * 3600 * 1000);
    let before = p.server.snapshot("x1").await;
    let (status, body) = p
        .bob
        .post(
            &format!("/v1/approvals/{id}/escalate"),
            json!({"to_role": "finance_lead", "note": "too late"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("INTERRUPT_EXPIRED")),
        "{body}"
    );
    assert_eq!(p.server.snapshot("x1").await, before);
    assert!(records(&p.bob).await.is_empty(), "nothing recorded");
}

#[tokio::test]
async fn two_approvers_answering_at_once_run_the_refund_once() {
    let mut settings = with_auth();
    settings.max_concurrent_runs_per_user = None;
    let server = Server::start_slow(
        refund_example(),
        refund_tools(),
        std::time::Duration::from_millis(400),
        settings,
    )
    .await;
    let p = people(server);
    let id = ask(&p.alice, "r1").await;
    let erin = p.server.as_user(&token("erin", json!({"roles": ["support_lead"]})));
    let (first, second) = tokio::join!(
        answer(&p.bob, &id, json!({"approved": true})),
        answer(&erin, &id, json!({"approved": true})),
    );
    let mut statuses = [first.0, second.0];
    statuses.sort_unstable();
    assert_eq!(statuses[0], 200, "{first:?} {second:?}");
    assert!(
        matches!(statuses[1], 404 | 409),
        "the other answer is refused: {first:?} {second:?}"
    );
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1, "refunded once");
    let answers = records(&p.bob)
        .await
        .into_iter()
        .filter(|record| record["kind"] == "approval")
        .count();
    assert_eq!(answers, 1, "one answer recorded");
}
