//! Shared pieces of the provider tests: fixtures, a model declaration, a client of a model
//! declared at a local fake server, a request, one call (`ask`, `failure`), a sink that records
//! deltas (and can cancel), and fast retry options.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::panic,
    reason = "each test file uses a different part of the helpers; a panic is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tenx_artifact::{Model, Provider};
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest, ToolSpec};
use tenx_engine::wire::{ContentBlock, FunctionCall, Message, Role, ToolCall, ToolResultStatus};
use tenx_models::test_support::FakeProvider;
use tenx_models::{ProviderOptions, RetryPolicy, Timeouts, Transport};
use tokio_util::sync::CancellationToken;

/// The API key the tests use; it must never show in an error.
pub const KEY: &str = "sk-test-0123456789abcdef-secret";

/// A recorded body.
pub fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|error| panic!("{full}: {error}"))
}

/// Options with fast retries (3 attempts, waits of a few ms, `Retry-After` up to 2 s).
pub fn fast() -> ProviderOptions {
    ProviderOptions {
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            headers: Duration::from_secs(10),
            idle: Duration::from_secs(10),
            total: Duration::from_secs(30),
        },
        retry: RetryPolicy {
            attempts: 3,
            base: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            retry_after_cap: Duration::from_secs(2),
        },
    }
}

/// The transport with [`fast`] options.
pub fn transport() -> Transport {
    Transport::new(fast()).unwrap()
}

/// A declared model of `provider` at `base_url`, its key in `TEST_KEY`.
pub fn model(provider: Provider, name: &str, base_url: &str, params: Value) -> Model {
    Model {
        provider,
        name: Some(name.into()),
        base_url: Some(base_url.into()),
        api_key_env: Some("TEST_KEY".into()),
        params,
        script: None,
    }
}

/// A client and the model it was built from.
pub type Client = (Arc<dyn ModelClient>, Model);

/// The client of a model of `provider` declared at `fake` (`gpt-4o-mini` at its `/v1`, or
/// `claude-sonnet-4-5` at its root) with `params`, its key [`KEY`], on the [`fast`] transport.
pub fn client(provider: Provider, fake: &FakeProvider, params: Value) -> Client {
    let declared = match provider {
        Provider::Anthropic => model(provider, "claude-sonnet-4-5", &fake.url(), params),
        _ => model(provider, "gpt-4o-mini", &format!("{}/v1", fake.url()), params),
    };
    let client = tenx_models::client_for("support_model", &declared, Some(KEY), &transport()).unwrap();
    (client, declared)
}

/// Calls once with `messages`, `tools` and `output_schema`, the pieces into `sink`, never
/// cancelled.
pub async fn call(
    (client, declared): &Client,
    messages: &[Message],
    tools: Vec<ToolSpec>,
    output_schema: Option<&Value>,
    sink: &mut Pieces,
) -> Result<ModelReply, ModelError> {
    let messages = shared(messages);
    client
        .complete(
            request(declared, &messages, tools, output_schema),
            sink,
            &CancellationToken::new(),
        )
        .await
}

/// Calls once with `messages`, no tools and no output schema, never cancelled.
pub async fn ask(client: &Client, messages: &[Message]) -> Result<ModelReply, ModelError> {
    call(client, messages, Vec::new(), None, &mut Pieces::default()).await
}

/// Calls a model of `provider` at `fake` once, with a prompt that must never show in an error,
/// and returns the error.
pub async fn failure(provider: Provider, fake: &FakeProvider) -> ModelError {
    let messages = [user("Refund order 1042, 59.00 PROMPT-MARKER")];
    ask(&client(provider, fake, json!({})), &messages).await.unwrap_err()
}

/// The refund tools, as the engine shows them.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "lookup_order".into(),
            description: "Look up an order.".into(),
            parameters: json!({"type": "object", "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"], "additionalProperties": false}),
        },
        ToolSpec {
            name: "issue_refund".into(),
            description: "Refund part or all of an order.".into(),
            parameters: json!({"type": "object", "properties": {"order_id": {"type": "string"},
                "amount_cents": {"type": "integer"}}, "required": ["order_id", "amount_cents"],
                "additionalProperties": false}),
        },
    ]
}

/// `messages` as a thread's conversation holds them.
pub fn shared(messages: &[Message]) -> Vec<Arc<Message>> {
    messages.iter().cloned().map(Arc::new).collect()
}

/// A request of `model` with `messages`, `tools` and an optional output schema.
pub fn request<'a>(
    model: &'a Model,
    messages: &'a [Arc<Message>],
    tools: Vec<ToolSpec>,
    output_schema: Option<&'a Value>,
) -> ModelRequest<'a> {
    ModelRequest {
        model_name: "support_model",
        model,
        thread_id: "thread-1",
        node: "support",
        agent: "support",
        system: "You are a support agent.".into(),
        messages,
        tools: tools.into(),
        output_schema,
        run_input: "Refund order 1042, 59.00",
        cursor: None,
        run_id: "run-1",
    }
}

/// Records streamed pieces; cancels `cancel_on_first` (if set) when the first piece arrives.
#[derive(Default)]
pub struct Pieces {
    pub pieces: Vec<String>,
    pub cancel_on_first: Option<CancellationToken>,
}

impl DeltaSink for Pieces {
    fn text(&mut self, piece: &str) {
        self.pieces.push(piece.to_owned());
        if let Some(token) = &self.cancel_on_first {
            token.cancel();
        }
    }
}

/// A user message.
pub fn user(text: &str) -> Message {
    Message::text("m-user", Role::User, text, 0.0)
}

/// An assistant turn that called `calls` (id, name, arguments).
fn assistant_calls(calls: &[(&str, &str, &str)]) -> Message {
    let mut message = Message::text("m-a", Role::Assistant, "", 0.0);
    message.content.clear();
    let mut wire = Vec::new();
    for (id, name, arguments) in calls {
        message.content.push(ContentBlock::ToolCall {
            id: (*id).into(),
            name: (*name).into(),
            args: serde_json::from_str(arguments).unwrap(),
            tool_type: None,
        });
        wire.push(ToolCall {
            id: (*id).into(),
            kind: "function".into(),
            function: FunctionCall {
                name: (*name).into(),
                arguments: (*arguments).into(),
            },
        });
    }
    message.tools_calls = Some(wire);
    message
}

/// A tool message answering `call`.
fn result(call: &str, output: Value, is_error: bool) -> Message {
    let mut message = Message::text("m-t", Role::Tool, "", 0.0);
    message.content = vec![ContentBlock::ToolResult {
        call_id: call.into(),
        output,
        is_error,
        status: Some(if is_error {
            ToolResultStatus::Failed
        } else {
            ToolResultStatus::Completed
        }),
    }];
    message.metadata.insert("tool_call_id".into(), json!(call));
    message
}

/// A conversation with parallel calls, a rejected approval, a handoff and a retry note.
pub fn long_conversation() -> Vec<Message> {
    vec![
        user("Refund order 1042, 59.00"),
        assistant_calls(&[
            ("call_1", "lookup_order", r#"{"order_id":"1042"}"#),
            ("call_2", "issue_refund", r#"{"order_id":"1042","amount_cents":5900}"#),
        ]),
        result("call_1", json!({"paid_cents": 5900, "refunded_cents": 0}), false),
        result("call_2", json!("Refund declined."), true),
        Message::text("m-s", Role::System, "Your last answer was not accepted.", 0.0),
        Message::text("m-a2", Role::Assistant, "The refund was declined.", 0.0),
        user("Then hand me to billing."),
        assistant_calls(&[("call_3", "transfer_to_billing", r#"{"reason":"declined"}"#)]),
        result("call_3", json!("Handed off to `billing`."), false),
    ]
}
