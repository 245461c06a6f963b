//! The server side of the console tests: the test server of the serve tests (the real router
//! on loopback, in-memory store, fake tools, HS256 auth) over the refund example or one of this
//! folder's programs; users as tokens; runs started over the API the way a client starts them;
//! and the approval record read back over the API, to check what the page did.

use serde_json::{Value, json};
use tenx_artifact::LoadedArtifact;
use tenx_engine::testing::FakeTools;

use crate::browser::Browser;
use crate::harness::{Server, compile_named, refund_example, refund_tools, token, user, with_auth};

/// The refund request of the example: `issue_refund(order_id: "1042", amount_cents: 5900)`.
pub const REFUND: &str = "Refund order 1042, 59.00";

/// The edit flow's program (`approve_edit_reject`).
pub fn delivery_desk() -> LoadedArtifact {
    compile_named(
        "tests/tests/console/delivery_desk.tenx",
        include_str!("delivery_desk.tenx"),
    )
}

/// The batch flow's program (medium risk, `yes_no`).
pub fn credit_desk() -> LoadedArtifact {
    compile_named("tests/tests/console/credit_desk.tenx", include_str!("credit_desk.tenx"))
}

/// The refund example with `from` replaced by `to` (the replaced text must be there).
pub fn refund_changed(from: &str, to: &str) -> LoadedArtifact {
    let path = tenx_tests::repo_root().join("examples/refund_approval/main.tenx");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "`{from}` is in the refund example");
    compile_named("examples/refund_approval/main.tenx", &text.replace(from, to))
}

/// The refund example served with auth.
pub async fn refunds() -> Server {
    Server::start(refund_example(), refund_tools(), with_auth()).await
}

/// The delivery desk served with auth.
pub async fn deliveries() -> Server {
    let tools = FakeTools::new().returns("change_delivery", json!("Delivery changed."));
    Server::start(delivery_desk(), tools, with_auth()).await
}

/// The credit desk served with auth.
pub async fn credits() -> Server {
    let tools = FakeTools::new().returns("grant_credit", json!("Credit granted."));
    Server::start(credit_desk(), tools, with_auth()).await
}

/// `alice`, a support agent: starts runs, holds no approver role.
pub fn alice() -> String {
    token("alice", json!({"roles": ["support_agent"]}))
}

/// `lena`, a support lead: may approve refunds and credits.
pub fn lena() -> String {
    token("lena", json!({"roles": ["support_lead"]}))
}

/// `dan`, a dispatcher: may answer delivery changes.
pub fn dan() -> String {
    token("dan", json!({"roles": ["dispatcher"]}))
}

/// `bob`, an intern: no approver role at all.
pub fn bob() -> String {
    token("bob", json!({"roles": ["intern"]}))
}

/// `carol`, a support lead who starts a refund herself.
pub fn carol() -> String {
    token("carol", json!({"roles": ["support_lead"]}))
}

/// Starts a run on `thread` as the holder of `as_user` with `text`; it must pause at an
/// approval. Returns the open interrupt's id.
pub async fn ask(server: &Server, as_user: &str, thread: &str, text: &str) -> String {
    let (status, body) = server
        .as_user(as_user)
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user(text)], "config": {"thread_id": thread}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(meta["status"], "interrupted_before", "{meta}");
    meta["interrupt_data"]["interrupt"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no interrupt id in {meta}"))
        .to_owned()
}

/// The approval record as `as_user` may read it: the records of kind `approval`.
pub async fn approvals_recorded(server: &Server, as_user: &str) -> Vec<Value> {
    let (status, body) = server
        .as_user(as_user)
        .get("/v1/approval-records?after=0&limit=100")
        .await;
    assert_eq!(status, 200, "{body}");
    body["data"]["records"]
        .as_array()
        .unwrap_or_else(|| panic!("no records in {body}"))
        .iter()
        .filter(|record| record["kind"] == "approval")
        .cloned()
        .collect()
}

/// The one approval record of `interrupt_id`, which must exist.
pub async fn recorded(server: &Server, as_user: &str, interrupt_id: &str) -> Value {
    let records = approvals_recorded(server, as_user).await;
    let mine: Vec<&Value> = records
        .iter()
        .filter(|record| record["interrupt_id"] == interrupt_id)
        .collect();
    assert_eq!(mine.len(), 1, "one record of {interrupt_id}: {records:#?}");
    mine[0].clone()
}

/// Whether `interrupt_id` is still pending (readable by `as_user`, who may answer it).
pub async fn still_pending(server: &Server, as_user: &str, interrupt_id: &str) -> bool {
    let (status, _) = server
        .as_user(as_user)
        .get(&format!("/v1/approvals/{interrupt_id}"))
        .await;
    status == 200
}

/// Opens the console and signs in with `token` (pasted into the sign-in form, as a person
/// would); returns once the page shows the signed-in state.
pub async fn sign_in(browser: &Browser, server: &Server, token: &str) {
    browser.goto(&format!("{}/console#/inbox", server.base)).await;
    browser.until_shown("form#signin").await;
    browser.type_into("input#token", token).await;
    browser.click("button#signin-submit").await;
    browser.until_shown("button#signout").await;
    browser.until_shown("ul#inbox, #inbox-empty").await;
}

/// The selector of the inbox row of `interrupt_id`.
pub fn row(interrupt_id: &str) -> String {
    format!("ul#inbox li[data-interrupt-id=\"{interrupt_id}\"]")
}

/// Opens the detail view of `interrupt_id` from its inbox row's link.
pub async fn open_detail(browser: &Browser, interrupt_id: &str) {
    browser.click(&format!("{} a.open", row(interrupt_id))).await;
    browser
        .until_shown(&format!("section#detail[data-interrupt-id=\"{interrupt_id}\"]"))
        .await;
}

/// Waits until the inbox no longer lists `interrupt_id`.
pub async fn until_gone_from_inbox(browser: &Browser, interrupt_id: &str) {
    browser.go_hash("#/inbox").await;
    browser
        .until(
            &format!("{interrupt_id} to leave the inbox"),
            "return !!document.querySelector('ul#inbox, #inbox-empty') \
             && !document.querySelector(arguments[0]);",
            vec![json!(row(interrupt_id))],
        )
        .await;
}
