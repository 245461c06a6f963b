//! Batch approval in the console: only for low and medium risk, capped in count and in total
//! amount. A selection over either cap keeps the button disabled and the status names the cap;
//! a valid batch approves each request once.

use serde_json::json;

use crate::browser::{self, Browser};
use crate::desk::{alice, ask, credits, lena, recorded, row, sign_in, still_pending};

/// Ticks (or unticks) the batch checkbox of `interrupt_id`.
async fn toggle(browser: &Browser, interrupt_id: &str) {
    browser
        .click(&format!("{} input.batch-select", row(interrupt_id)))
        .await;
}

#[tokio::test]
async fn a_batch_over_the_caps_is_refused_in_the_page_and_a_valid_one_approves_each_once() {
    if !browser::available() {
        return;
    }
    let server = credits().await;
    let alice = alice();
    // Two large credits (together over the total cap of 100000), two small ones, and enough
    // more small ones to go over the count cap of 10.
    let big_a = ask(&server, &alice, "credit-big-a", "Credit account 1 with 600.00").await;
    let big_b = ask(&server, &alice, "credit-big-b", "Credit account 2 with 600.00").await;
    let small_c = ask(&server, &alice, "credit-small-c", "Credit account 3 with 25.00").await;
    let small_d = ask(&server, &alice, "credit-small-d", "Credit account 4 with 15.00").await;
    let mut many = Vec::new();
    for n in 0..9 {
        many.push(
            ask(
                &server,
                &alice,
                &format!("credit-many-{n}"),
                &format!("Credit account {} with 1.00", 10 + n),
            )
            .await,
        );
    }
    let (status, body) = server.as_user(&lena()).get("/v1/approvals?offset=0&limit=50").await;
    assert_eq!(status, 200, "{body}");
    let caps = &body["data"]["batch"];
    assert_eq!(caps["max_count"].as_u64(), Some(10), "{caps}");
    assert_eq!(caps["max_total"].as_f64(), Some(100_000.0), "{caps}");

    let browser = Browser::open().await;
    sign_in(&browser, &server, &lena()).await;
    browser.until_shown(&row(many.last().unwrap())).await;
    assert!(browser.disabled("#batch-approve").await, "nothing selected yet");

    // Over the total amount: 60000 + 60000 > 100000.
    toggle(&browser, &big_a).await;
    toggle(&browser, &big_b).await;
    let status = browser.until_text("#batch-status", "100000").await;
    assert!(
        status.contains("120000"),
        "the status names the total and the cap: {status:?}"
    );
    assert!(browser.disabled("#batch-approve").await);
    toggle(&browser, &big_a).await;
    toggle(&browser, &big_b).await;

    // Over the count: 11 small credits > 10.
    toggle(&browser, &small_c).await;
    toggle(&browser, &small_d).await;
    for id in &many {
        toggle(&browser, id).await;
    }
    browser
        .until(
            "#batch-status to name the count cap of 10",
            "const t = document.querySelector('#batch-status').textContent; \
             return /\\b10\\b/.test(t) && !t.includes('100000');",
            vec![],
        )
        .await;
    let status = browser.text("#batch-status").await;
    assert!(status.contains("cap"), "the status names the count cap: {status:?}");
    browser.until_enabled("#batch-approve", false).await;
    for id in &many {
        toggle(&browser, id).await;
    }

    // Two small credits: allowed, and each runs once.
    browser.until_enabled("#batch-approve", true).await;
    assert_eq!(server.tools.calls_of("grant_credit"), 0, "nothing ran before the batch");
    browser.click("#batch-approve").await;
    browser
        .until(
            "both approved requests to leave the inbox",
            "return !document.querySelector(arguments[0]) && !document.querySelector(arguments[1]);",
            vec![json!(row(&small_c)), json!(row(&small_d))],
        )
        .await;
    let calls = server.tools.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let mut accounts: Vec<(String, i64)> = calls
        .iter()
        .map(|call| {
            (
                call.arguments["account_id"].as_str().unwrap().to_owned(),
                call.arguments["amount_cents"].as_i64().unwrap(),
            )
        })
        .collect();
    accounts.sort();
    assert_eq!(accounts, vec![("3".to_owned(), 2500), ("4".to_owned(), 1500)]);
    for id in [&small_c, &small_d] {
        let record = recorded(&server, &lena(), id).await;
        assert_eq!(record["answered_by"], "lena", "{record}");
        assert_eq!(record["decision"], "approve", "{record}");
    }
    for id in [&big_a, &big_b].into_iter().chain(&many) {
        assert!(still_pending(&server, &lena(), id).await, "{id} was not in the batch");
    }
    browser.close().await;
}
