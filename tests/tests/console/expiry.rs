//! An expired question in the console: its countdown reaches "expired", and an answer given
//! after that is refused with `INTERRUPT_EXPIRED`, shown in the page; the refund never runs.

use crate::browser::{self, Browser};
use crate::desk::{REFUND, alice, ask, lena, open_detail, recorded, refund_changed, row, sign_in};
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

    // Time itself is under test: the countdown runs out while the page is open, and never
    // before the server's expiry (an answer given while the page says "expired" must not run).
    let (status, body) = server.as_user(&lena()).get(&format!("/v1/approvals/{id}")).await;
    assert_eq!(status, 200, "{body}");
    let expires_at_ms = body["data"]["expires_at_ms"].as_u64().unwrap();
    let row = row(&id);
    browser.until_shown(&row).await;
    browser
        .js(
            "window.tenxExpiredAt = null; \
             const check = () => { const e = document.querySelector(arguments[0]); \
               if (window.tenxExpiredAt === null && e && e.textContent.includes('expired')) \
                 window.tenxExpiredAt = Date.now(); }; \
             new MutationObserver(check).observe(document.body, \
               {childList: true, characterData: true, subtree: true}); \
             check(); return true;",
            vec![serde_json::json!(format!("{row} .countdown"))],
        )
        .await;
    browser.until_text(&format!("{row} .countdown"), "expired").await;
    let shown_at = browser.js("return window.tenxExpiredAt;", vec![]).await;
    let shown_at = shown_at
        .as_u64()
        .unwrap_or_else(|| panic!("no time recorded: {shown_at}"));
    assert!(
        shown_at + 50 >= expires_at_ms,
        "the countdown said \"expired\" {} ms before the question expired",
        expires_at_ms.saturating_sub(shown_at)
    );

    // The page still lets a person try (the server is the judge of time); the answer is refused.
    open_detail(&browser, &id).await;
    browser.type_into("#confirm-input", "order 1042").await;
    browser.until_enabled("#approve", true).await;
    browser.click("#approve").await;
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
    let record = recorded(&server, &lena(), &id).await;
    assert_eq!(record["outcome"], "expired", "{record}");
    assert_ne!(record["decision"], "approve", "{record}");
    browser.close().await;
}
