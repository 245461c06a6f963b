//! The engine's thread writes called directly, on a clock the test moves: a write to a thread
//! whose question expired records the expiry (as any read does), is refused `INTERRUPT_EXPIRED`,
//! and the next write goes through; a timeout is never consent, so the refund never runs.

use std::sync::Arc;

use serde_json::json;
use tenx_engine::ports::{ModelClient, NullEvents, Ports, Store};
use tenx_engine::testing::{ManualClock, SequentialIds};
use tenx_engine::wire::{ExecutionStatus, Message, Role};
use tenx_engine::{Engine, EngineOptions, ErrorCode, MemoryStore, RunRequest, ScriptedModel, StateWrite, WriteOptions};

use super::harness::{refund_example, refund_tools};

#[tokio::test]
async fn a_write_to_an_expired_question_records_the_expiry_and_the_next_write_goes_through() {
    let artifact = refund_example();
    let mut models: std::collections::BTreeMap<String, Arc<dyn ModelClient>> = Default::default();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualClock::new(1_796_083_200_000));
    let tools = Arc::new(refund_tools());
    let ports = Ports {
        store: store.clone(),
        models,
        tools: tools.clone(),
        clock: clock.clone(),
        ids: Arc::new(SequentialIds::new()),
    };
    let engine = Engine::new(artifact, ports, EngineOptions::default()).unwrap();
    let request = RunRequest {
        thread_id: Some("x1".to_owned()),
        messages: vec![Message::text("", Role::User, "Refund order 1042, 59.00", 0.0)],
        ..RunRequest::default()
    };
    let output = engine.run(request, &mut NullEvents).await.unwrap();
    assert!(output.thread.pending.is_some(), "paused at the approval");
    let options = WriteOptions::default();

    // Before the expiry: refused as paused, nothing recorded.
    let before = serde_json::to_string(&store.load("x1").await.unwrap()).unwrap();
    let refused = engine
        .put_state("x1", StateWrite::default(), &options)
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::ThreadPausedWrite);
    assert_eq!(serde_json::to_string(&store.load("x1").await.unwrap()).unwrap(), before);

    // The approval lapses after 24 hours.
    clock.advance(25 * 60 * 60 * 1000);
    let note = || vec![Message::text("", Role::User, "still there?", 0.0)];
    let refused = engine.post_messages("x1", note(), &options).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::InterruptExpired, "{refused:?}");
    let thread = store.load("x1").await.unwrap().unwrap();
    assert!(thread.pending.is_none(), "the expiry is recorded");
    assert_eq!(thread.execution.status, ExecutionStatus::Completed);
    let records = store.records("x1").await.unwrap();
    assert!(
        records
            .iter()
            .any(|record| record.kind == "approval" && record.fields["outcome"] == json!("expired")),
        "{records:?}"
    );

    let thread = engine.post_messages("x1", note(), &options).await.unwrap();
    assert_eq!(thread.context.last().unwrap().text_content(), "still there?");
    assert_eq!(tools.calls_of("issue_refund"), 0, "a timeout is never consent");
}
