//! The standard API calls the scenarios make, over loopback HTTP: start a refund, answer its
//! approval (bound to its `interrupt_id`), read a thread; and what they read from the answers.
//! A call to a replica that was killed is an `Err` (the connection is refused or cut).

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

/// One HTTP client for the whole test binary (connections are pooled per replica).
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .timeout(Duration::from_secs(90))
            .build()
            .unwrap()
    })
}

/// An answer: its status and JSON body.
pub type Answer = (u16, Value);

async fn read(response: reqwest::Response) -> Result<Answer, reqwest::Error> {
    let status = response.status().as_u16();
    let text = response.text().await?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
}

async fn invoke(base: &str, body: Value) -> Result<Answer, reqwest::Error> {
    read(
        client()
            .post(format!("{base}/v1/graph/invoke"))
            .json(&body)
            .send()
            .await?,
    )
    .await
}

/// The order a flow refunds, its refund's idempotency key, and the request that asks for it.
pub fn order_key(order: u32) -> String {
    format!("refund-{order}-5900")
}

/// Asks for the refund of `order` (59.00) on `thread`: the run pauses at the approval.
pub async fn start(base: &str, thread: &str, order: u32) -> Result<Answer, reqwest::Error> {
    let text = format!("Refund order {order}, 59.00");
    invoke(
        base,
        json!({
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            "config": {"thread_id": thread},
            "response_granularity": "full",
        }),
    )
    .await
}

/// Approves the open question `interrupt` of `thread`.
pub async fn approve(base: &str, thread: &str, interrupt: &str) -> Result<Answer, reqwest::Error> {
    invoke(
        base,
        json!({
            "resume": {"approved": true},
            "interrupt_id": interrupt,
            "config": {"thread_id": thread},
            "response_granularity": "full",
        }),
    )
    .await
}

/// `GET /v1/threads/{thread}/state`.
pub async fn state(base: &str, thread: &str) -> Result<Answer, reqwest::Error> {
    read(client().get(format!("{base}/v1/threads/{thread}/state")).send().await?).await
}

/// The `execution_meta` of an invoke answer (`response_granularity: full`) or a state read.
pub fn meta(body: &Value) -> &Value {
    &body["data"]["state"]["execution_meta"]
}

/// `execution_meta.status`: `running`, `interrupted_before`, `completed`, `error`, …
pub fn status(body: &Value) -> &str {
    meta(body)["status"].as_str().unwrap_or_default()
}

/// The open question's `interrupt_id`, if the thread waits at one.
pub fn interrupt_id(body: &Value) -> Option<String> {
    meta(body)["interrupt_data"]["interrupt"]["id"]
        .as_str()
        .map(str::to_owned)
}

/// An error answer's code.
pub fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

/// The tool messages in a state read's conversation, each as its content's JSON text.
pub fn tool_results(body: &Value) -> Vec<String> {
    body["data"]["state"]["context"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].to_string())
        .collect()
}

/// The text of the conversation's last message.
pub fn last_text(body: &Value) -> String {
    let context = body["data"]["state"]["context"].as_array().cloned().unwrap_or_default();
    context
        .last()
        .and_then(|message| message["content"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect()
}
