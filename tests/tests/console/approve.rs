//! Approving and rejecting the refund example's high-risk refund in the console: the inbox row
//! (risk, age, countdown, who may answer), the detail view with its impact first, the deliberate
//! confirmation a high risk asks for, and the reason a rejection needs. The screenshots of the
//! inbox and the detail view are taken here.

use serde_json::json;

use crate::browser::{self, Browser};
use crate::desk::{
    REFUND, alice, approvals_recorded, ask, lena, open_detail, recorded, refunds, row, sign_in, until_gone_from_inbox,
};

#[tokio::test]
async fn a_support_lead_approves_a_high_risk_refund_after_retyping_its_target_and_it_runs_once() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-approve", REFUND).await;
    // A second request, so the inbox (and its screenshot) lists more than one.
    let other = ask(&server, &alice(), "refund-other", "Refund order 2077, 12.50").await;
    let browser = Browser::open().await;
    sign_in(&browser, &server, &lena()).await;
    browser.until_shown(&row(&other)).await;

    // The inbox: one row with the request's risk, action, target, age, countdown and approvers.
    let line = row(&id);
    browser.until_shown(&line).await;
    assert_eq!(browser.text(&format!("{line} .risk")).await, "high");
    assert!(browser.text(&format!("{line} .action")).await.contains("issue_refund"));
    assert!(browser.text(&format!("{line} .target")).await.contains("order 1042"));
    let age = browser.text(&format!("{line} .age")).await;
    assert!(age.contains("ago") || age.contains("now"), "age: {age:?}");
    let countdown = browser.text(&format!("{line} .countdown")).await;
    assert!(
        countdown.chars().any(|c| c.is_ascii_digit()) && !countdown.contains("expired"),
        "a 24 h expiry counts down: {countdown:?}"
    );
    let who = browser.text(&format!("{line} .who")).await;
    assert!(
        who.contains("support_lead") && who.contains("refunds:approve"),
        "who: {who:?}"
    );
    assert!(
        !browser.has(&format!("{line} input.batch-select")).await,
        "a high-risk request is never offered for a batch"
    );
    assert!(!browser.shown("#dev-banner").await, "auth is on: no development banner");
    browser.screenshot("inbox", true).await;

    // The detail view: impact first, amounts with their unit, the model's words apart.
    open_detail(&browser, &id).await;
    let order: Vec<bool> = serde_json::from_value(
        browser
            .js(
                "const impact = document.querySelector('#impact'); \
                 return ['#evidence', '#model-words', '#who-may-answer', '#approve', '#reject'].map(s => { \
                   const e = document.querySelector(s); \
                   return !!e && !!(impact.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING); });",
                vec![],
            )
            .await,
    )
    .unwrap();
    assert_eq!(
        order,
        vec![true; 5],
        "#impact comes before evidence, model words, approvers and actions"
    );
    assert!(browser.text("#impact .action").await.contains("issue_refund"));
    assert!(browser.text("#impact .target").await.contains("order 1042"));
    assert_eq!(browser.text("#impact .risk").await, "high");
    assert!(
        browser
            .text("#impact .message")
            .await
            .contains("Approve a refund of 5900 cents for order 1042?")
    );
    let amount = browser.text("table#arguments tr[data-param=\"amount_cents\"]").await;
    assert!(
        amount.contains("5900 cents") && amount.contains("59.00") && amount.contains("The amount to refund, in cents"),
        "amount row: {amount:?}"
    );
    assert!(
        browser
            .text("table#arguments tr[data-param=\"order_id\"]")
            .await
            .contains("1042")
    );
    assert!(!browser.has("#difference").await || !browser.shown("#difference").await);
    let label = browser
        .find("#model-words")
        .await
        .attr("aria-label")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        label.to_lowercase().contains("untrusted"),
        "model words pane: {label:?}"
    );
    assert!(browser.text("#who-may-answer").await.contains("support_lead"));
    browser.screenshot("detail", true).await;
    let elsewhere = browser
        .js(
            "return performance.getEntriesByType('resource').map(e => e.name) \
               .filter(url => !url.startsWith(location.origin + '/'));",
            vec![],
        )
        .await;
    assert_eq!(elsewhere, json!([]), "the console requests nothing from another origin");

    // No approve without retyping the target; a near miss is not enough.
    assert!(
        browser.disabled("#approve").await,
        "a high risk is never approved in one click"
    );
    let confirm_label = browser
        .js(
            "const i = document.querySelector('#confirm-input'); \
             return i && i.labels && i.labels[0] ? i.labels[0].textContent : '';",
            vec![],
        )
        .await;
    assert!(
        confirm_label.as_str().unwrap_or("").contains("order 1042"),
        "the confirmation says what to retype: {confirm_label}"
    );
    browser.type_into("#confirm-input", "order 104").await;
    assert!(browser.disabled("#approve").await);
    browser.type_into("#confirm-input", "order 1042").await;
    browser.until_enabled("#approve", true).await;
    assert_eq!(
        server.tools.calls_of("issue_refund"),
        0,
        "nothing ran before the answer"
    );
    browser.click("#approve").await;
    browser.until_text("#result", "Approved").await;

    // The server side: the refund ran once, and the record names both people.
    assert_eq!(server.tools.calls_of("issue_refund"), 1);
    let record = recorded(&server, &lena(), &id).await;
    assert_eq!(record["answered_by"], "lena", "{record}");
    assert_eq!(record["requested_by"], "alice", "{record}");
    assert_eq!(record["action"], "issue_refund", "{record}");
    assert_eq!(record["decision"], "approve", "{record}");
    assert_eq!(
        record["original_arguments"],
        json!({"order_id": "1042", "amount_cents": 5900}),
        "{record}"
    );
    until_gone_from_inbox(&browser, &id).await;
    assert!(browser.shown(&row(&other)).await, "the other request is still waiting");
    assert_eq!(server.tools.calls_of("issue_refund"), 1, "and it did not run");
    browser.close().await;
}

#[tokio::test]
async fn a_rejection_needs_a_reason_and_the_refund_never_runs() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-reject", REFUND).await;
    let browser = Browser::open().await;
    sign_in(&browser, &server, &lena()).await;
    open_detail(&browser, &id).await;

    browser.until_shown("#reject").await;
    assert!(browser.disabled("#reject").await, "no rejection without a reason");
    browser.type_into("#reject-reason", "   ").await;
    assert!(browser.disabled("#reject").await, "blanks are no reason");
    let reason = "The customer already got a voucher for this order";
    browser.type_into("#reject-reason", reason).await;
    browser.until_enabled("#reject", true).await;
    browser.click("#reject").await;
    browser.until_text("#result", "Rejected").await;

    assert_eq!(server.tools.calls_of("issue_refund"), 0, "a rejected refund never runs");
    let record = recorded(&server, &lena(), &id).await;
    assert_eq!(record["answered_by"], "lena", "{record}");
    assert_eq!(record["decision"], "reject", "{record}");
    assert_eq!(record["outcome"], "rejected", "{record}");
    assert_eq!(record["note"], reason, "{record}");
    assert_eq!(approvals_recorded(&server, &lena()).await.len(), 1);

    // The history view shows the same record: who, the outcome and the reason.
    browser.click("a#nav-history").await;
    let seq = record["seq"].as_u64().unwrap();
    let history_row = format!("table#history tr[data-seq=\"{seq}\"]");
    browser.until_shown(&history_row).await;
    assert_eq!(browser.text(&format!("{history_row} .answered-by")).await, "lena");
    assert!(
        browser
            .text(&format!("{history_row} .outcome"))
            .await
            .contains("rejected")
    );
    assert_eq!(browser.text(&format!("{history_row} .note")).await, reason);
    assert!(browser.has("a#export").await, "the record can be exported");
    browser.close().await;
}

#[tokio::test]
async fn an_approver_by_scope_approves_and_a_token_without_the_answer_scope_is_refused() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-scope", REFUND).await;
    let browser = Browser::open().await;

    // `refunds:approve` without `approvals:answer`: the page shows the request, the API refuses
    // the answer, and the page says so.
    let reader = crate::harness::token("rita", json!({"scopes": ["refunds:approve", "approvals:read"]}));
    sign_in(&browser, &server, &reader).await;
    open_detail(&browser, &id).await;
    browser.type_into("#confirm-input", "order 1042").await;
    browser.until_enabled("#approve", true).await;
    browser.click("#approve").await;
    let error = browser.until_text("#error", "approvals:answer").await;
    assert!(!error.contains("Approved"), "{error}");
    assert_eq!(server.tools.calls_of("issue_refund"), 0);

    // With the answer scope too, the approval goes through, once.
    browser.click("button#signout").await;
    let sam = crate::harness::token(
        "sam",
        json!({"scopes": ["refunds:approve", "approvals:read", "approvals:answer"]}),
    );
    sign_in(&browser, &server, &sam).await;
    open_detail(&browser, &id).await;
    browser.type_into("#confirm-input", "order 1042").await;
    browser.until_enabled("#approve", true).await;
    browser.click("#approve").await;
    browser.until_text("#result", "Approved").await;
    assert_eq!(server.tools.calls_of("issue_refund"), 1);
    let record = recorded(&server, &sam, &id).await;
    assert_eq!(record["answered_by"], "sam", "{record}");
    assert_eq!(record["decision"], "approve", "{record}");
    browser.close().await;
}
