//! Editing an `approve_edit_reject` request in the console: the form is generated from the
//! tool's parameter schema, an invalid value is refused in the page (nothing is sent), and a
//! valid edit runs the tool once with the edited arguments.

use std::time::Duration;

use serde_json::json;

use crate::browser::{self, Browser};
use crate::desk::{alice, approvals_recorded, ask, dan, deliveries, open_detail, recorded, sign_in, still_pending};

#[tokio::test]
async fn an_edit_is_checked_against_the_schema_in_the_page_and_runs_once_as_edited() {
    if !browser::available() {
        return;
    }
    let server = deliveries().await;
    let id = ask(&server, &alice(), "delivery-edit", "Deliver order 7 to Lyon floor 3").await;
    let browser = Browser::open().await;
    sign_in(&browser, &server, &dan()).await;
    open_detail(&browser, &id).await;

    // One typed input per property, with the schema's bounds.
    browser.until_shown("form#edit-form").await;
    let fields = browser
        .js(
            "const f = document.querySelector('form#edit-form'); \
             const get = n => { const e = f.querySelector(`[name=\"${n}\"]`); \
               return e ? {tag: e.tagName.toLowerCase(), type: e.type, min: e.min, max: e.max, \
                 minLength: e.minLength, maxLength: e.maxLength, value: e.value, \
                 labelled: !!(e.labels && e.labels.length)} : null; }; \
             return {order_id: get('order_id'), city: get('city'), floor: get('floor')};",
            vec![],
        )
        .await;
    assert_eq!(fields["floor"]["type"], "number", "{fields}");
    assert_eq!(fields["floor"]["min"], "0", "{fields}");
    assert_eq!(fields["floor"]["max"], "60", "{fields}");
    assert_eq!(
        fields["floor"]["value"], "3",
        "the form starts from the request: {fields}"
    );
    assert_eq!(fields["city"]["type"], "text", "{fields}");
    assert_eq!(fields["city"]["minLength"], 2, "{fields}");
    assert_eq!(fields["city"]["maxLength"], 40, "{fields}");
    assert_eq!(fields["city"]["value"], "Lyon", "{fields}");
    assert_eq!(fields["order_id"]["value"], "7", "{fields}");
    for name in ["order_id", "city", "floor"] {
        assert_eq!(fields[name]["labelled"], true, "`{name}` has a label: {fields}");
    }

    // A floor above the schema's maximum: refused in the page, nothing sent.
    browser.type_into("form#edit-form [name=\"floor\"]", "99").await;
    browser.click("#edit-submit").await;
    let errors = browser.until_text("#edit-errors", "floor").await;
    assert!(!errors.trim().is_empty(), "{errors}");
    // Give a request that should not have been sent the time to arrive, then check nothing did.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(server.tools.calls_of("change_delivery"), 0);
    assert!(
        still_pending(&server, &dan(), &id).await,
        "an invalid form answers nothing"
    );
    assert!(approvals_recorded(&server, &dan()).await.is_empty());
    assert!(!browser.shown("#result").await || browser.text("#result").await.trim().is_empty());

    // A valid edit runs once, with exactly the edited arguments.
    browser.type_into("form#edit-form [name=\"floor\"]", "5").await;
    browser.type_into("form#edit-form [name=\"city\"]", "Paris").await;
    browser.click("#edit-submit").await;
    browser.until_text("#result", "dit").await;
    let calls = server.tools.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].tool, "change_delivery");
    assert_eq!(
        calls[0].arguments,
        json!({"order_id": "7", "city": "Paris", "floor": 5})
    );
    let record = recorded(&server, &dan(), &id).await;
    assert_eq!(record["answered_by"], "dan", "{record}");
    assert_eq!(record["decision"], "edit", "{record}");
    assert_eq!(
        record["edited_arguments"],
        json!({"order_id": "7", "city": "Paris", "floor": 5}),
        "{record}"
    );
    assert_eq!(
        record["original_arguments"],
        json!({"order_id": "7", "city": "Lyon", "floor": 3}),
        "{record}"
    );
    browser.close().await;
}
