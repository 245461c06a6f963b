//! The scripted model's position lives in the thread's checkpoint: a thread paused between two
//! model calls, stored, serialised and read back by a new store and a new model instance plays
//! on where it paused; a second thread plays the same script from its start.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tenx_artifact::{Model, Provider};
use tenx_engine::ports::{
    Clock, Commit, DeltaSink, Ids, ModelClient, ModelReply, ModelRequest, Receipt, ReceiptState, Store,
};
use tenx_engine::testing::{ManualClock, SequentialIds};
use tenx_engine::thread::ThreadRecord;
use tenx_engine::wire::{ContentBlock, ExecutionMeta, Message, Role};
use tenx_engine::{MemoryStore, ScriptedModel};
use tokio_util::sync::CancellationToken;

const INPUT: &str = "Refund order 1042, 59.00";

fn refund_demo() -> Model {
    Model {
        provider: Provider::Scripted,
        name: None,
        base_url: None,
        api_key_env: None,
        params: json!({}),
        script: Some(
            serde_json::from_value(json!({
                "turns": [],
                "rules": [{
                    "match": "(?i)refund order (?<order>[0-9]+),? *(?<amount>[0-9]+(?:\\.[0-9]{1,2})?)",
                    "turns": [
                        {"kind": "tool", "tool": "issue_refund", "arguments": {"order_id": "{order}", "amount_cents": "{amount:cents}"}},
                        {"kind": "text", "text": "{result}"}
                    ]
                }],
                "fallback": {"kind": "text", "text": "I can refund an order."}
            }))
            .unwrap(),
        ),
    }
}

fn new_thread(thread_id: &str, clock: &ManualClock, ids: &SequentialIds) -> ThreadRecord {
    let now = clock.now();
    ThreadRecord {
        format: tenx_engine::thread::CheckpointFormat::CURRENT,
        thread_id: thread_id.into(),
        artifact_id: "sha256:demo".into(),
        graph: "refunds".into(),
        owner: Some("ann".into()),
        version: 1,
        created_at: now,
        updated_at: now,
        state: Map::new(),
        context: vec![Message::text(ids.message_id(), Role::User, INPUT, clock.now_seconds()).into()],
        execution: ExecutionMeta::new(thread_id),
        pending: None,
        run: None,
        resume_at: None,
        model_cursors: BTreeMap::new(),
        substitutions: BTreeMap::new(),
        stopped_run: None,
    }
}

struct Ignore;

impl DeltaSink for Ignore {
    fn text(&mut self, _piece: &str) {}
}

/// One model call for `thread`, as the run loop makes it: the cursor from the checkpoint in,
/// the reply's cursor back into the checkpoint.
async fn model_call(client: &dyn ModelClient, model: &Model, thread: &mut ThreadRecord, run_id: &str) -> ModelReply {
    let request = ModelRequest {
        model_name: "refund_demo",
        model,
        thread_id: &thread.thread_id,
        node: "support",
        agent: "support",
        system: "Refund orders when asked.".into(),
        messages: &thread.context,
        tools: Vec::new().into(),
        output_schema: None,
        run_input: INPUT,
        cursor: thread.model_cursors.get("refund_demo"),
        run_id,
    };
    let reply = client
        .complete(request, &mut Ignore, &CancellationToken::new())
        .await
        .unwrap();
    if let Some(cursor) = &reply.cursor {
        thread.model_cursors.insert("refund_demo".into(), cursor.clone());
    }
    reply
}

async fn save(
    store: &dyn Store,
    mut thread: ThreadRecord,
    expected: Option<u64>,
    receipts: Vec<Receipt>,
) -> ThreadRecord {
    if let Some(version) = expected {
        thread.version = version + 1;
    }
    store
        .commit(Commit {
            thread: Some(thread.clone()),
            expected_version: expected,
            receipts,
            records: Vec::new(),
        })
        .await
        .unwrap();
    thread
}

#[tokio::test]
async fn a_paused_thread_resumes_its_rule_from_the_checkpoint() {
    let clock = ManualClock::new(1_700_000_000_000);
    let ids = SequentialIds::new();
    let model = refund_demo();
    let store = MemoryStore::new();
    let run_id = ids.run_id();

    // First model call: the tool call; the thread pauses for its approval.
    let thread_id = ids.thread_id();
    let lease = store.lock(&thread_id).await.unwrap();
    let mut thread = new_thread(&thread_id, &clock, &ids);
    let reply = model_call(&ScriptedModel::new(), &model, &mut thread, &run_id).await;
    let call = reply.tool_calls.first().unwrap().clone();
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("call_refund_demo_1", "issue_refund")
    );
    let thread = save(&store, thread, None, Vec::new()).await;
    drop(lease);

    // The checkpoint leaves the process (a durable store) and comes back into a new one.
    let bytes = serde_json::to_vec(&store.load(&thread_id).await.unwrap().unwrap()).unwrap();
    assert_eq!(
        thread.model_cursors.get("refund_demo"),
        Some(
            &json!({"turn": 1, "calls": 1, "run": {"id": "run_1", "rule": 0, "captures": {"amount": "59.00", "order": "1042"}}})
        )
    );
    let restarted = MemoryStore::new();
    let mut thread: ThreadRecord = serde_json::from_slice(&bytes).unwrap();
    let version = thread.version;
    thread = save(&restarted, thread, None, Vec::new()).await;
    assert_eq!(thread.version, version);

    // The approval, the tool's receipt and its result; then the second model call of the run.
    clock.advance(30_000);
    let lease = restarted.lock(&thread_id).await.unwrap();
    let mut result = Message::text(ids.message_id(), Role::Tool, "", clock.now_seconds());
    result.content = vec![ContentBlock::ToolResult {
        call_id: call.id.clone(),
        output: Value::String("Refund 5900 for order 1042 issued.".into()),
        is_error: false,
        status: None,
    }];
    thread.context.push(result.into());
    let receipt = Receipt {
        thread_id: thread_id.clone(),
        key: "refund-1042".into(),
        tool: "issue_refund".into(),
        state: ReceiptState::Done {
            result: json!("Refund 5900 for order 1042 issued."),
            is_error: false,
        },
    };
    let mut thread = save(&restarted, thread, Some(version), vec![receipt]).await;
    let reply = model_call(&ScriptedModel::new(), &model, &mut thread, &run_id).await;
    assert_eq!(reply.text, "Refund 5900 for order 1042 issued.");
    let thread = save(&restarted, thread, Some(version + 1), Vec::new()).await;
    drop(lease);
    assert_eq!(restarted.load(&thread_id).await.unwrap().unwrap(), thread);

    // Another thread plays the same script from its own start.
    let other_id = ids.thread_id();
    let mut other = new_thread(&other_id, &clock, &ids);
    let shared: Arc<dyn ModelClient> = Arc::new(ScriptedModel::new());
    let reply = model_call(shared.as_ref(), &model, &mut other, &ids.run_id()).await;
    assert_eq!(reply.tool_calls.first().unwrap().id, "call_refund_demo_1");
}
