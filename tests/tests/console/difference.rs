//! A request that replaces an earlier one whose fingerprint changed: the refund asked under one
//! build of the example, then asked again after the program changed its target (the engine's
//! re-ask, two engines over one store). The console shows the difference, before and after,
//! and only the new request's approval runs the refund, once.

use std::collections::BTreeMap;
use std::sync::Arc;

use tenx_engine::ports::{Ids, ModelClient, NullEvents, Ports};
use tenx_engine::testing::SequentialIds;
use tenx_engine::{Engine, EngineOptions, MemoryStore, ScriptedModel};

use crate::browser::{self, Browser};
use crate::desk::{REFUND, alice, ask, lena, open_detail, recorded, refund_changed, row, sign_in};
use crate::harness::{Server, Setup, refund_example, refund_tools, with_auth};

#[tokio::test]
async fn a_request_asked_again_after_its_target_changed_shows_the_difference() {
    if !browser::available() {
        return;
    }
    // The first build asks.
    let store = Arc::new(MemoryStore::default());
    let first = Server::start_with(
        refund_example(),
        refund_tools(),
        with_auth(),
        Setup {
            store: Some(store.clone()),
            ..Setup::default()
        },
    )
    .await;
    let old_id = ask(&first, &alice(), "refund-changed", REFUND).await;

    // The second build writes the target differently and asks again, over the same store; its
    // ids start past the first build's.
    let artifact = refund_changed("target    = \"order {order_id}\"", "target    = \"order #{order_id}\"");
    let ids = SequentialIds::new();
    for _ in 0..10 {
        ids.interrupt_id();
        ids.run_id();
        ids.message_id();
    }
    let tools = Arc::new(refund_tools());
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let ports = Ports {
        store: store.clone(),
        models,
        tools: tools.clone(),
        clock: Arc::new(tenx_runtime::ports::SystemClock),
        ids: Arc::new(ids),
    };
    let options = EngineOptions {
        auth: true,
        reask_after_reload: true,
        ..EngineOptions::default()
    };
    let engine = Engine::new(artifact, ports, options).unwrap();
    engine.reask_after_reload(&mut NullEvents).await.unwrap();
    let second = Server::serve(engine, store, tools.clone(), with_auth()).await;

    let (status, body) = second.as_user(&lena()).get("/v1/approvals?offset=0&limit=50").await;
    assert_eq!(status, 200, "{body}");
    let pending = body["data"]["approvals"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{body}");
    let new_id = pending[0]["interrupt_id"].as_str().unwrap().to_owned();
    assert_ne!(new_id, old_id, "a new question, with a new id");
    assert_eq!(pending[0]["replaces"], true, "{body}");

    let browser = Browser::open().await;
    sign_in(&browser, &second, &lena()).await;
    browser.until_shown(&row(&new_id)).await;
    open_detail(&browser, &new_id).await;
    browser.until_shown("#difference").await;
    let heading = browser.text("#difference").await;
    assert!(heading.contains("Changed since the earlier request"), "{heading}");
    let target = "#difference tr[data-field=\"target\"]";
    assert_eq!(browser.text(&format!("{target} .before")).await, "order 1042");
    assert_eq!(browser.text(&format!("{target} .after")).await, "order #1042");
    let impact_first = browser
        .js(
            "return !!(document.querySelector('#impact').compareDocumentPosition(\
               document.querySelector('#difference')) & Node.DOCUMENT_POSITION_FOLLOWING);",
            vec![],
        )
        .await;
    assert_eq!(impact_first, true, "the impact comes first, then the difference");

    // Approving the new request (retyping the new target) runs the refund once.
    browser.type_into("#confirm-input", "order #1042").await;
    browser.until_enabled("#approve", true).await;
    browser.click("#approve").await;
    browser.until_text("#result", "Approved").await;
    assert_eq!(tools.calls_of("issue_refund"), 1);
    let record = recorded(&second, &lena(), &new_id).await;
    assert_eq!(record["answered_by"], "lena", "{record}");
    assert_eq!(record["decision"], "approve", "{record}");
    browser.close().await;
}
