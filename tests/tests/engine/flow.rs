//! The examples run end to end: handoffs, interrupt nodes that approve tool nodes, remote tools
//! the client runs, typed state, and the recursion limit.

use serde_json::{Map, json};
use tenx_engine::ports::Store;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{ErrorCode, Identity, RunRequest};

use crate::harness::{Host, Models, Steered, assistant_texts, dev, example_artifact, tool_outputs, user};

#[tokio::test]
async fn support_desk_hands_off_to_billing_which_refunds_after_approval() {
    let tools = FakeTools::new()
        .returns("lookup_order", json!({"order_id": "1042", "paid_cents": 5900}))
        .returns("issue_refund", json!("refund r-1 issued"));
    let host = Host::from_artifact(example_artifact("support_desk"), tools, Models::Scripted, dev());
    let anyone = Identity::anonymous();
    let paused = host
        .say("t1", "My order 1042 arrived broken; I want my money back.", &anyone)
        .await
        .unwrap();
    assert_eq!(paused.thread.execution.current_node, "billing");
    assert_eq!(
        paused.thread.pending.as_ref().unwrap().interrupt.as_ref().unwrap().node,
        "billing"
    );
    assert!(
        tool_outputs(&paused.messages).contains(&json!("Transferred to billing.")),
        "{:#?}",
        paused.messages
    );
    let done = host
        .answer("t1", json!({"decision": "approve"}), None, &anyone)
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("lookup_order"), 1);
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
    assert_eq!(
        assistant_texts(&done.messages),
        vec!["Order 1042 has been refunded: 59.00 will be back on your card in a few days.".to_owned()]
    );
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
}

#[tokio::test]
async fn a_card_number_is_refused_by_the_declared_validator_and_nothing_is_recorded() {
    let host = Host::from_artifact(
        example_artifact("support_desk"),
        FakeTools::new(),
        Models::Scripted,
        dev(),
    );
    let refused = host
        .say("t1", "my card is 4111 1111 1111 1111", &Identity::anonymous())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::ValidationRefused);
    assert!(host.store.load("t1").await.unwrap().is_none());
}

fn research(steered: &Steered) -> Host {
    let tools = FakeTools::new()
        .returns(
            "web_search",
            json!([{"title": "Tides", "url": "https://example.org/tides"}]),
        )
        .returns("publish_report", json!("https://site.test/reports/tides"));
    Host::from_artifact(
        example_artifact("research_flow"),
        tools,
        Models::Steered(steered.clone()),
        dev(),
    )
}

fn research_script(steered: &Steered) {
    steered.push_calls(&[("c1", "web_search", json!({"query": "tides"}))]);
    steered.push_text("Notes: tides follow the moon (https://example.org/tides).");
    steered.push_text(r##"{"report": "# Tides\nThey follow the moon."}"##);
    steered.push_text(r#"{"verdict": "publish", "score": 0.9}"#);
}

fn start(thread: &str) -> RunRequest {
    let mut state = Map::new();
    state.insert("topic".into(), json!("tides"));
    RunRequest {
        thread_id: Some(thread.into()),
        messages: vec![user("Write about tides")],
        initial_state: state,
        ..RunRequest::default()
    }
}

#[tokio::test]
async fn research_flow_publishes_only_the_approved_report() {
    let steered = Steered::default();
    research_script(&steered);
    let host = research(&steered);
    let paused = host.run(start("t1")).await.unwrap();
    let thread = &paused.thread;
    assert_eq!(thread.state["verdict"], "publish");
    assert_eq!(thread.state["report"], "# Tides\nThey follow the moon.");
    let interrupt = thread.pending.as_ref().unwrap().interrupt.clone().unwrap();
    assert_eq!(interrupt.node, "approve_publication");
    assert_eq!(interrupt.key, "node:approve_publication:0");
    assert_eq!(interrupt.message, "Publish the report on tides?");
    assert_eq!(interrupt.value["action"], "publish_report");
    assert_eq!(
        interrupt.value["normalized_arguments"],
        json!({"topic": "tides", "report": "# Tides\nThey follow the moon."})
    );
    assert_eq!(
        interrupt.value["details"],
        json!({"topic": "tides", "report": "# Tides\nThey follow the moon."})
    );
    assert_eq!(host.tools.calls_of("publish_report"), 0);
    let done = host
        .answer(
            "t1",
            json!({"approved": true}),
            Some(&interrupt.id),
            &Identity::anonymous(),
        )
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let calls = host.tools.calls();
    let publish: Vec<_> = calls.iter().filter(|call| call.tool == "publish_report").collect();
    assert_eq!(publish.len(), 1);
    assert_eq!(
        publish[0].arguments,
        json!({"topic": "tides", "report": "# Tides\nThey follow the moon."})
    );
    assert_eq!(publish[0].idempotency_key, "publish-tides");
}

/// A fixed-turn script (`\{` is a literal brace in a turn's template).
fn script(turns: serde_json::Value) -> tenx_engine::ScriptedModel {
    let script = serde_json::from_value(json!({"turns": turns, "rules": [], "fallback": null})).unwrap();
    tenx_engine::ScriptedModel::with_script(script)
}

#[tokio::test]
async fn research_flow_runs_with_scripts_substituted_for_its_providers_and_the_thread_says_so() {
    let mut clients: std::collections::BTreeMap<String, std::sync::Arc<dyn tenx_engine::ports::ModelClient>> =
        std::collections::BTreeMap::new();
    clients.insert(
        "writer_model".into(),
        std::sync::Arc::new(script(json!([
            {"kind": "tool", "tool": "web_search", "arguments": {"query": "tides"}},
            {"kind": "text", "text": "Notes: tides follow the moon."},
            {"kind": "text", "text": "\\{\"report\": \"# Tides\"\\}"}
        ]))),
    );
    clients.insert(
        "reviewer_model".into(),
        std::sync::Arc::new(script(json!([
            {"kind": "text", "text": "\\{\"verdict\": \"publish\", \"score\": 0.9\\}"}
        ]))),
    );
    let tools = FakeTools::new()
        .returns(
            "web_search",
            json!([{"title": "Tides", "url": "https://example.org/tides"}]),
        )
        .returns("publish_report", json!("https://site.test/reports/tides"));
    let host = Host::from_artifact(example_artifact("research_flow"), tools, Models::Each(clients), dev());
    let paused = host.run(start("t1")).await.unwrap();
    let substituted = json!({"reviewer_model": "scripted", "writer_model": "scripted"});
    assert_eq!(json!(paused.thread.substitutions), substituted);
    assert_eq!(paused.thread.state["report"], "# Tides");
    let interrupt = paused.thread.pending.unwrap().interrupt.unwrap().id;
    let done = host
        .answer(
            "t1",
            json!({"approved": true}),
            Some(&interrupt),
            &Identity::anonymous(),
        )
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("publish_report"), 1);
    let stored = host.store.load("t1").await.unwrap().unwrap();
    assert_eq!(
        json!(stored.substitutions),
        substituted,
        "recorded on the stored thread"
    );
}

#[tokio::test]
async fn a_rejected_publication_ends_the_run_with_on_reject() {
    let steered = Steered::default();
    research_script(&steered);
    let host = research(&steered);
    host.run(start("t1")).await.unwrap();
    let done = host
        .answer("t1", json!({"approved": false}), None, &Identity::anonymous())
        .await
        .unwrap();
    assert_eq!(host.tools.calls_of("publish_report"), 0);
    assert_eq!(
        assistant_texts(&done.messages).last().unwrap(),
        "Publication declined; the report was not published."
    );
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
}

#[tokio::test]
async fn a_missing_required_state_field_is_refused_naming_it() {
    let steered = Steered::default();
    let host = research(&steered);
    let refused = host
        .run(RunRequest {
            thread_id: Some("t1".into()),
            messages: vec![user("hi")],
            ..RunRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidRequest);
    assert!(refused.message.contains("'topic'"), "{}", refused.message);
    let mut state = Map::new();
    state.insert("topic".into(), json!("x"));
    state.insert("colour".into(), json!("red"));
    let unknown = host
        .run(RunRequest {
            thread_id: Some("t1".into()),
            messages: vec![user("hi")],
            initial_state: state,
            ..RunRequest::default()
        })
        .await
        .unwrap_err();
    assert!(unknown.message.contains("'colour'"), "{}", unknown.message);
}

#[tokio::test]
async fn the_recursion_limit_stops_a_model_that_never_stops_calling_tools() {
    let steered = Steered::default();
    for index in 0..40 {
        steered.push_calls(&[(&format!("c{index}"), "web_search", json!({"query": "again"}))]);
    }
    let host = research(&steered);
    let failed = host.run(start("t1")).await.unwrap_err();
    assert_eq!(failed.code, ErrorCode::RecursionLimit);
    assert_eq!(failed.message, "Graph execution exceeded recursion limit: 12");
    let thread = host.store.load("t1").await.unwrap().unwrap();
    assert_eq!(thread.execution.status, ExecutionStatus::Error);
}

#[tokio::test]
async fn a_remote_tool_pauses_until_the_client_posts_its_result() {
    let steered = Steered::default();
    steered.push_calls(&[("call_loc", "user_location", json!({}))]);
    steered.push_text("You are in Paris.");
    let host = Host::from_artifact(
        example_artifact("client_tool"),
        FakeTools::new(),
        Models::Steered(steered),
        dev(),
    );
    let anyone = Identity::anonymous();
    let paused = host.say("t1", "Where am I?", &anyone).await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedAfter);
    assert_eq!(
        paused.thread.execution.interrupt_reason.as_deref(),
        Some("remote_tool_call")
    );
    let placeholder = paused.messages.last().unwrap();
    assert!(matches!(&placeholder.content[0], ContentBlock::RemoteToolCall { id, .. } if id == "call_loc"));
    assert!(
        !paused
            .thread
            .context
            .iter()
            .any(|message| message.metadata.get("is_remote").is_some()),
        "the placeholder is not stored"
    );
    let blocked = host.say("t1", "hello?", &anyone).await.unwrap_err();
    assert_eq!(blocked.code, ErrorCode::RemoteToolPending);

    let result = |call: &str, output| {
        let mut message = Message::text("r1", Role::Tool, "", 0.0);
        message.content = vec![ContentBlock::ToolResult {
            call_id: call.into(),
            output,
            is_error: false,
            status: None,
        }];
        RunRequest {
            thread_id: Some("t1".into()),
            messages: vec![message],
            ..RunRequest::default()
        }
    };
    let wrong = host
        .run(result("bogus", json!({"latitude": 48.8, "longitude": 2.3})))
        .await
        .unwrap_err();
    assert_eq!(wrong.message, "No remote tool call 'bogus' is waiting for a result");
    let invalid = host
        .run(result("call_loc", json!({"latitude": 500})))
        .await
        .unwrap_err();
    assert_eq!(invalid.code, ErrorCode::ToolResultUnexpected);
    let done = host
        .run(result(
            "call_loc",
            json!({"latitude": 48.8, "longitude": 2.3, "city": "Paris"}),
        ))
        .await
        .unwrap();
    assert_eq!(assistant_texts(&done.messages).last().unwrap(), "You are in Paris.");
    assert_eq!(host.tools.total_calls(), 0, "the server never ran the remote tool");
    let before = host.snapshot("t1").await;
    let again = host
        .run(result("call_loc", json!({"latitude": 1, "longitude": 2})))
        .await
        .unwrap_err();
    assert_eq!(
        (again.code, again.message.as_str()),
        (
            ErrorCode::ToolResultDuplicate,
            "Each tool call can be answered only once"
        ),
        "a second answer to a call already answered"
    );
    assert_eq!(host.snapshot("t1").await, before);
}
