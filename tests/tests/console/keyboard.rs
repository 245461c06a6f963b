//! The console without a mouse and in a narrow window: the refund's approval completed with
//! the keyboard alone (Tab, typing, Enter and Space as WebDriver key actions), no action button
//! focused when the detail view opens, and the detail's actions shown without horizontal
//! scrolling in a 375 px wide window.

use fantoccini::key::Key;
use serde_json::json;

use crate::browser::{self, Browser};
use crate::desk::{REFUND, alice, ask, lena, open_detail, recorded, refunds, row};

/// The action controls of the detail view: none may have the focus when it opens.
const ACTIONS: [&str; 7] = [
    "#approve",
    "#reject",
    "#edit-submit",
    "#escalate",
    "#confirm-input",
    "#reject-reason",
    "#escalate-role",
];

#[tokio::test]
async fn the_approve_flow_works_with_the_keyboard_alone() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-keyboard", REFUND).await;
    let browser = Browser::open().await;

    // Sign in: focus the token field by Tab, type, press Enter.
    browser.goto(&format!("{}/console#/inbox", server.base)).await;
    browser.until_shown("form#signin").await;
    browser.tab_to("input#token", 30).await;
    browser.type_keys(&lena()).await;
    browser.press(&[char::from(Key::Enter)]).await;
    browser.until_shown("button#signout").await;

    // Open the request from the inbox by Tab and Enter.
    let open = format!("{} a.open", row(&id));
    browser.until_shown(&open).await;
    browser.tab_to(&open, 40).await;
    browser.press(&[char::from(Key::Enter)]).await;
    browser
        .until_shown(&format!("section#detail[data-interrupt-id=\"{id}\"]"))
        .await;
    browser.until_shown("#approve").await;
    let focused = browser.focused().await;
    assert!(
        !ACTIONS.contains(&focused.as_str()),
        "no action has the focus when the detail opens (focus: {focused})"
    );

    // Retype the target, then Tab to approve and press Space.
    browser.tab_to("#confirm-input", 60).await;
    browser.type_keys("order 1042").await;
    browser.until_enabled("#approve", true).await;
    browser.tab_to("#approve", 60).await;
    browser.press(&[' ']).await;
    browser.until_text("#result", "Approved").await;

    assert_eq!(server.tools.calls_of("issue_refund"), 1);
    let record = recorded(&server, &lena(), &id).await;
    assert_eq!(record["answered_by"], "lena", "{record}");
    assert_eq!(record["decision"], "approve", "{record}");
    browser.close().await;
}

#[tokio::test]
async fn a_375_px_window_shows_the_inbox_and_the_detail_actions_without_horizontal_scrolling() {
    if !browser::available() {
        return;
    }
    let server = refunds().await;
    let id = ask(&server, &alice(), "refund-narrow", REFUND).await;
    let browser = Browser::open().await;
    browser.viewport(375, 800).await;
    let width = browser.js("return window.innerWidth;", vec![]).await;
    assert_eq!(width, json!(375), "the viewport is 375 px wide");
    crate::desk::sign_in(&browser, &server, &lena()).await;
    browser.until_shown(&row(&id)).await;
    no_horizontal_overflow(&browser, "the inbox").await;

    open_detail(&browser, &id).await;
    browser.until_shown("#approve").await;
    no_horizontal_overflow(&browser, "the detail view").await;
    for action in ["#approve", "#reject", "#reject-reason", "#confirm-input"] {
        let rect = browser
            .js(
                "const r = document.querySelector(arguments[0]).getBoundingClientRect(); \
                 return [r.left, r.right, r.width];",
                vec![json!(action)],
            )
            .await;
        let (left, right, width) = (
            rect[0].as_f64().unwrap(),
            rect[1].as_f64().unwrap(),
            rect[2].as_f64().unwrap(),
        );
        assert!(
            left >= 0.0 && right <= 375.0 && width > 0.0,
            "`{action}` lies within the 375 px window: {rect}"
        );
    }
    browser.screenshot("detail-375", false).await;
    browser.close().await;
}

async fn no_horizontal_overflow(browser: &Browser, view: &str) {
    let sizes = browser
        .js(
            "return [document.scrollingElement.scrollWidth, window.innerWidth];",
            vec![],
        )
        .await;
    let (scroll, inner) = (sizes[0].as_u64(), sizes[1].as_u64());
    assert!(
        matches!((scroll, inner), (Some(scroll), Some(inner)) if scroll <= inner),
        "{view} scrolls sideways at 375 px: {sizes}"
    );
}
