//! An expired question in the console: its countdown reaches "expired", and an answer given
//! after that is refused with `INTERRUPT_EXPIRED`, shown in the page; the refund never runs.

use crate::browser::{self, Browser};
use crate::desk::{REFUND, alice, approvals_recorded, ask, lena, open_detail, refund_changed, row, sign_in};
use crate::harness::{Server, refund_tools, with_auth};

#[tokio::test]
async fn an_answer_after_the_countdown_says_expired_is_refused_and_nothing_runs() {
    if !browser::available() {
        return;
    }
    let artifact = refund_changed("expires   = 24h", "expires   = 3s");
    let server = Server::start(artifact, refund_tools(), with_auth()).await;
    let id = ask(&server, &alice(), "refund-expiry", REFUND).await;
    let browser = Browser::open().await;
    sign_in(&browser, &server, &lena()).await;

    // Time itself is under test: the countdown runs out while the page is open.
    let row = row(&id);
    browser.until_shown(&row).await;
    browser.until_text(&format!("{row} .countdown"), "expired").await;

    open_detail(&browser, &id).await;
    if browser.has("#confirm-input").await && browser.shown("#confirm-input").await {
        browser.type_into("#confirm-input", "order 1042").await;
    }
    if browser.shown("#approve").await && !browser.disabled("#approve").await {
        browser.click("#approve").await;
    }
    let error = browser.until_text("#error", "INTERRUPT_EXPIRED").await;
    assert!(error.contains("INTERRUPT_EXPIRED"), "{error}");
    assert!(
        !browser.shown("#result").await || !browser.text("#result").await.contains("Approved"),
        "an expired question is never approved"
    );

    assert_eq!(
        server.tools.calls_of("issue_refund"),
        0,
        "an expired approval is never consent"
    );
    let approved = approvals_recorded(&server, &lena())
        .await
        .into_iter()
        .filter(|record| record["decision"] == "approve")
        .count();
    assert_eq!(approved, 0);
    browser.close().await;
}
