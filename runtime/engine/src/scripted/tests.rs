use serde_json::{Value, json};
use tenx_artifact::{Model, Provider};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::wire::{ContentBlock, Message, Role};

fn model(script: Value) -> Model {
    Model {
        provider: Provider::Scripted,
        name: None,
        base_url: None,
        api_key_env: None,
        params: json!({}),
        script: Some(serde_json::from_value(script).unwrap()),
    }
}

fn openai() -> Model {
    Model {
        provider: Provider::Openai,
        name: Some("gpt-4o-mini".into()),
        base_url: None,
        api_key_env: Some("OPENAI_API_KEY".into()),
        params: json!({}),
        script: None,
    }
}

fn refund_model() -> Model {
    model(json!({
        "turns": [],
        "rules": [{
            "match": "(?i)refund order (?<order>[0-9]+),? *(?<amount>[0-9]+(?:\\.[0-9]{1,2})?)",
            "turns": [
                {"kind": "tool", "tool": "issue_refund", "arguments": {"order_id": "{order}", "amount_cents": "{amount:cents}"}},
                {"kind": "text", "text": "{result}"}
            ]
        }],
        "fallback": {"kind": "text", "text": "I can refund an order. Write, for example: Refund order 1042, 59.00"}
    }))
}

/// Collects deltas; cancels `token` after `cancel_after` pieces when set.
#[derive(Default)]
struct Pieces {
    pieces: Vec<String>,
    cancel: Option<(usize, CancellationToken)>,
}

impl DeltaSink for Pieces {
    fn text(&mut self, piece: &str) {
        self.pieces.push(piece.to_string());
        if let Some((after, token)) = &self.cancel
            && self.pieces.len() >= *after
        {
            token.cancel();
        }
    }
}

struct Call<'a> {
    model: &'a Model,
    messages: &'a [std::sync::Arc<Message>],
    run_id: &'a str,
    input: &'a str,
    cursor: Option<Value>,
}

fn request<'a>(call: &'a Call<'a>) -> ModelRequest<'a> {
    ModelRequest {
        model_name: "demo",
        model: call.model,
        thread_id: "thread_1",
        node: "support",
        agent: "support",
        system: "Refund orders when asked.".into(),
        messages: call.messages,
        tools: Vec::new().into(),
        output_schema: None,
        run_input: call.input,
        cursor: call.cursor.as_ref(),
        run_id: call.run_id,
    }
}

async fn complete(client: &ScriptedModel, call: &Call<'_>) -> (Result<ModelReply, ModelError>, Vec<String>) {
    let mut sink = Pieces::default();
    let reply = client
        .complete(request(call), &mut sink, &CancellationToken::new())
        .await;
    (reply, sink.pieces)
}

fn user(text: &str) -> std::sync::Arc<Message> {
    std::sync::Arc::new(Message::text("m_user", Role::User, text, 0.0))
}

fn tool_result(call_id: &str, text: &str) -> std::sync::Arc<Message> {
    let mut message = Message::text("m_tool", Role::Tool, "", 0.0);
    message.content = vec![ContentBlock::ToolResult {
        call_id: call_id.into(),
        output: json!(text),
        is_error: false,
        status: None,
    }];
    std::sync::Arc::new(message)
}

#[tokio::test]
async fn fixed_turns_play_across_the_thread_and_stream_text() {
    let model = model(json!({
        "turns": [
            {"kind": "text", "text": "Draft: tenx checks agent graphs before they run."},
            {"kind": "tool", "tool": "lookup_order", "arguments": {"order_id": "1042", "nested": {"n": 1}}},
            {"kind": "text", "text": "Reviewed."}
        ],
        "rules": [],
        "fallback": null
    }));
    let client = ScriptedModel::new();
    let messages = [user("go")];
    let mut call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input: "go",
        cursor: None,
    };

    let (reply, pieces) = complete(&client, &call).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Draft: tenx checks agent graphs before they run.");
    assert!(reply.tool_calls.is_empty());
    assert!(pieces.len() > 1 && pieces.len() <= DELTA_PIECES, "{pieces:?}");
    assert_eq!(pieces.concat(), reply.text);
    assert_eq!(reply.cursor, Some(json!({"turn": 1, "calls": 0})));

    // The next run of the thread continues the fixed turns.
    call.cursor = reply.cursor;
    call.run_id = "run_2";
    let (reply, pieces) = complete(&client, &call).await;
    let reply = reply.unwrap();
    assert!(pieces.is_empty());
    assert_eq!(reply.text, "");
    assert_eq!(
        reply.tool_calls,
        vec![ModelToolCall {
            id: "call_demo_1".into(),
            name: "lookup_order".into(),
            arguments: r#"{"nested":{"n":1},"order_id":"1042"}"#.into(),
        }]
    );
    assert_eq!(reply.cursor, Some(json!({"turn": 2, "calls": 1})));

    call.cursor = reply.cursor;
    let reply = complete(&client, &call).await.0.unwrap();
    assert_eq!(reply.text, "Reviewed.");

    call.cursor = reply.cursor;
    let error = complete(&client, &call).await.0.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::ScriptExhausted);
    assert_eq!(
        error.message,
        "scripted model `demo` has no turn left: its 3 fixed turn(s) are all played in this thread, and model call 4 asked for another"
    );
}

#[tokio::test]
async fn a_rule_plays_through_a_pause_and_resume() {
    let model = refund_model();
    let client = ScriptedModel::new();
    let input = "Refund order 1042, 59.00";
    let mut messages = vec![user(input)];
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input,
        cursor: None,
    };
    let reply = complete(&client, &call).await.0.unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    let tool_call = reply.tool_calls.first().unwrap().clone();
    assert_eq!(tool_call.id, "call_demo_1");
    assert_eq!(tool_call.name, "issue_refund");
    assert_eq!(
        serde_json::from_str::<Value>(&tool_call.arguments).unwrap(),
        json!({"order_id": "1042", "amount_cents": 5900})
    );

    // The thread pauses for the approval; the cursor is all that is kept (as JSON in the
    // checkpoint). A new client instance plays on after the resume.
    let stored = serde_json::to_string(&reply.cursor).unwrap();
    messages.push(tool_result(&tool_call.id, "Refund 5900 for order 1042 issued."));
    let resumed = ScriptedModel::new();
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input,
        cursor: serde_json::from_str(&stored).unwrap(),
    };
    let reply = complete(&resumed, &call).await.0.unwrap();
    assert_eq!(reply.text, "Refund 5900 for order 1042 issued.");

    // The rule has no third turn.
    let call = Call {
        cursor: reply.cursor.clone(),
        ..call
    };
    let error = complete(&resumed, &call).await.0.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::ScriptExhausted);
    assert!(
        error
            .message
            .starts_with("scripted model `demo` has no turn left: rule 0 has 2 turn(s)"),
        "{}",
        error.message
    );

    // A new run of the thread matches again; its call ids go on counting.
    messages.push(user("Refund order 7, 1"));
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_2",
        input: "Refund order 7, 1",
        cursor: reply.cursor,
    };
    let reply = complete(&resumed, &call).await.0.unwrap();
    assert_eq!(reply.tool_calls.first().unwrap().id, "call_demo_2");
}

#[tokio::test]
async fn a_rejected_approval_reads_on_reject_as_the_result() {
    let model = refund_model();
    let input = "refund order 5 10";
    let messages = [user(input), tool_result("call_demo_1", "Refund declined.")];
    let cursor =
        json!({"turn": 1, "calls": 1, "run": {"id": "run_1", "rule": 0, "captures": {"order": "5", "amount": "10"}}});
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input,
        cursor: Some(cursor),
    };
    assert_eq!(
        complete(&ScriptedModel::new(), &call).await.0.unwrap().text,
        "Refund declined."
    );
}

#[tokio::test]
async fn every_thread_plays_the_same_script() {
    let model = refund_model();
    let client = ScriptedModel::new();
    let messages = [user("hello")];
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input: "hello",
        cursor: None,
    };
    let first = complete(&client, &call).await.0.unwrap();
    let second = complete(&client, &call).await.0.unwrap();
    assert_eq!(first, second);
    assert_eq!(
        first.text,
        "I can refund an order. Write, for example: Refund order 1042, 59.00"
    );
}

#[tokio::test]
async fn a_substituted_script_plays_for_a_declared_provider() {
    let model = openai();
    let messages = [user("hi")];
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input: "hi",
        cursor: None,
    };
    let error = complete(&ScriptedModel::new(), &call).await.0.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert_eq!(
        error.message,
        "scripted model `demo` has no script: its provider is not `scripted`"
    );

    let script =
        serde_json::from_value(json!({"turns": [{"kind": "text", "text": "stand-in"}], "rules": [], "fallback": null}))
            .unwrap();
    let reply = complete(&ScriptedModel::with_script(script), &call).await.0.unwrap();
    assert_eq!(reply.text, "stand-in");
}

#[tokio::test]
async fn a_tampered_cursor_is_refused() {
    let model = refund_model();
    let messages = [user("hi")];
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input: "hi",
        cursor: Some(json!({"turn": "x"})),
    };
    let error = complete(&ScriptedModel::new(), &call).await.0.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert!(
        error
            .message
            .starts_with("scripted model `demo` has a stored position that is not valid"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn cancellation_stops_the_answer() {
    let model = refund_model();
    let messages = [user("hi")];
    let call = Call {
        model: &model,
        messages: &messages,
        run_id: "run_1",
        input: "hi",
        cursor: None,
    };
    let client = ScriptedModel::new();

    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let mut sink = Pieces::default();
    let error = client
        .complete(request(&call), &mut sink, &cancelled)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Cancelled);
    assert!(sink.pieces.is_empty());

    // Cancelled after the first piece: no further piece, no reply (so no new cursor).
    let token = CancellationToken::new();
    let mut sink = Pieces {
        pieces: Vec::new(),
        cancel: Some((1, token.clone())),
    };
    let error = client.complete(request(&call), &mut sink, &token).await.unwrap_err();
    assert_eq!(error.kind, ModelErrorKind::Cancelled);
    assert_eq!(sink.pieces.len(), 1);
}
