//! Who may answer, as the console shows it: a user without an approver role sees an empty inbox
//! and is refused on a direct visit; the user who started a run, approver role or not, cannot
//! approve it (separate duties). Neither ever runs the refund or records anything.

use crate::browser::{self, Browser};
use crate::desk::{REFUND, alice, approvals_recorded, ask, bob, carol, lena, refunds, sign_in};

#[tokio::test]
async fn a_user_without_the_role_sees_no_request_and_is_refused_at_its_address() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-no-role", REFUND).await;
    let browser = Browser::open().await;
    sign_in(&browser, &server, &bob()).await;

    browser.until_shown("#inbox-empty").await;
    assert!(browser.all("ul#inbox li[data-interrupt-id]").await.is_empty());

    browser.go_hash(&format!("#/approval/{id}")).await;
    let error = browser.until_text("#error", "APPROVER_REFUSED").await;
    assert!(error.contains("APPROVER_REFUSED"), "{error}");
    assert!(!browser.shown("#approve").await, "no approve button for a refused user");

    assert_eq!(server.tools.calls_of("issue_refund"), 0);
    assert!(
        approvals_recorded(&server, &lena()).await.is_empty(),
        "a refusal records nothing"
    );
    browser.close().await;
}

#[tokio::test]
async fn the_user_who_started_the_run_cannot_approve_it_even_holding_the_role() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &carol(), "refund-own", REFUND).await;
    let browser = Browser::open().await;
    sign_in(&browser, &server, &carol()).await;

    // Her own request is not hers to answer: not in her inbox, and refused at its address.
    browser.until_shown("ul#inbox, #inbox-empty").await;
    assert!(
        !browser.has(&crate::desk::row(&id)).await || !browser.shown(&crate::desk::row(&id)).await,
        "the inbox lists only what the caller may answer"
    );
    browser.go_hash(&format!("#/approval/{id}")).await;
    browser
        .until_shown(&format!("section#detail[data-interrupt-id=\"{id}\"]"))
        .await;
    let refused = browser.until_text("#refused", "separate").await;
    assert!(!refused.trim().is_empty(), "{refused}");
    for action in ["#approve", "#reject", "#edit-submit", "#escalate"] {
        assert!(
            !browser.shown(action).await,
            "`{action}` is not offered to the requester"
        );
    }

    assert_eq!(server.tools.calls_of("issue_refund"), 0);
    assert!(approvals_recorded(&server, &carol()).await.is_empty());
    // Another support lead still may.
    let (status, body) = server.as_user(&lena()).get(&format!("/v1/approvals/{id}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["may_answer"], true, "{body}");
    browser.close().await;
}

#[tokio::test]
async fn without_auth_the_console_says_that_anyone_may_approve() {
    if !browser::available() {
        return;
    }
    let server = crate::harness::Server::refunds().await;
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            serde_json::json!({"messages": [crate::harness::user(REFUND)], "config": {"thread_id": "refund-dev"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let browser = Browser::open().await;
    browser.goto(&format!("{}/console#/inbox", server.base)).await;
    let banner = browser.until_text("#dev-banner", "anyone may approve").await;
    assert_eq!(
        browser.find("#dev-banner").await.attr("role").await.unwrap().as_deref(),
        Some("alert"),
        "{banner}"
    );
    assert!(!browser.shown("form#signin").await, "no sign-in without auth");
    browser.until_shown("ul#inbox li[data-interrupt-id]").await;
    browser.close().await;
}
