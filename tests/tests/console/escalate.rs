//! Escalation in the console: a support lead hands the refund to `finance_lead` with a note;
//! from then on only that role may answer. The finance lead finds it in their inbox and approves
//! it; the refund runs once, and the record holds the escalation and the answer.

use crate::browser::{self, Browser};
use crate::desk::{REFUND, alice, ask, lena, open_detail, recorded, refunds, row, sign_in};
use crate::harness::token;

#[tokio::test]
async fn an_escalated_request_leaves_the_first_inbox_and_only_the_new_role_may_approve_it() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-escalate", REFUND).await;
    let fay = token("fay", serde_json::json!({"roles": ["finance_lead"]}));
    let browser = Browser::open().await;

    // The support lead escalates, with a reason.
    sign_in(&browser, &server, &lena()).await;
    open_detail(&browser, &id).await;
    let note = "Over my refund limit this month";
    browser.type_into("#escalate-role", "finance_lead").await;
    browser.type_into("#escalate-note", note).await;
    browser.click("#escalate").await;
    browser.until_text("#result", "finance_lead").await;
    browser.until_text("#who-may-answer", "finance_lead").await;
    assert!(
        browser.text("#who-may-answer").await.contains("lena"),
        "who escalated it is shown"
    );
    assert_eq!(server.tools.calls_of("issue_refund"), 0);
    let (status, body) = server.as_user(&lena()).get("/v1/approvals?offset=0&limit=50").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"]["approvals"],
        serde_json::json!([]),
        "no longer lena's to answer"
    );

    // The finance lead sees it, with the new approver, and approves it.
    browser.click("button#signout").await;
    sign_in(&browser, &server, &fay).await;
    let row = row(&id);
    browser.until_shown(&row).await;
    assert!(browser.text(&format!("{row} .who")).await.contains("finance_lead"));
    open_detail(&browser, &id).await;
    browser.type_into("#confirm-input", "order 1042").await;
    browser.until_enabled("#approve", true).await;
    browser.click("#approve").await;
    browser.until_text("#result", "Approved").await;

    assert_eq!(server.tools.calls_of("issue_refund"), 1);
    let record = recorded(&server, &fay, &id).await;
    assert_eq!(record["answered_by"], "fay", "{record}");
    assert_eq!(record["decision"], "approve", "{record}");
    let (status, body) = server
        .as_user(&lena())
        .get("/v1/approval-records?after=0&limit=100")
        .await;
    assert_eq!(status, 200, "{body}");
    let escalations: Vec<&serde_json::Value> = body["data"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|record| record["kind"] == "escalation" && record["interrupt_id"] == id.as_str())
        .collect();
    assert_eq!(escalations.len(), 1, "{body}");
    assert_eq!(escalations[0]["by"], "lena", "{body}");
    assert_eq!(escalations[0]["to_role"], "finance_lead", "{body}");
    assert_eq!(escalations[0]["note"], note, "{body}");
    browser.close().await;
}
