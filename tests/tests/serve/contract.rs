//! The contract's decisions over real loopback HTTP (`/work/shared/spec/contract.md` D1–D16, its
//! run-time semantics and clarifications), in particular every guarantee of seed 000: forged
//! tool results and roles, stale and repeated resumes, hidden tools and undeclared handoffs.
//! Each refusal asserts its status, code and (where the contract fixes it) its text, and that
//! the thread reads back byte-identical. `docs/conformance.md` maps each decision to its tests.

mod busy;
mod forgery;
mod reads;
mod remote;
mod resumes;
mod secrets;
mod starts;
mod visibility;

use serde_json::{Value, json};
use tenx_engine::testing::FakeTools;

use super::harness::{Server, Setup, compile_named};
use super::steered::Steered;

/// A shop whose one model is steered by the test: `desk` (the entry) sees the `orders` tools
/// (a lookup, a refund that needs approval, a remote tool that runs on the client) and hands off
/// to `billing` only; `admin_desk`, a declared extra entry, alone sees `delete_shop`.
pub const SHOP: &str = r#"import std.approval.yes_no

tag orders "Reads orders"
tag admin "Administers the shop"

model desk_model {
  provider = scripted
}

schema location = {
  "type": "object",
  "properties": {
    "latitude": { "type": "number", "minimum": -90, "maximum": 90 },
    "longitude": { "type": "number", "minimum": -180, "maximum": 180 }
  },
  "required": ["latitude", "longitude"]
}

tool lookup_order(order_id: string "The order") -> object {
  description = "Look up an order."
  tags = [orders]
  risk = low
  run  = http(GET, "http://orders.test/orders", timeout: 5s)
}

tool refund(order_id: string "The order") -> string {
  description = "Refund an order."
  tags = [orders]
  risk = high
  approval {
    message   = "Refund order {order_id}?"
    response  = yes_no
    approvers = [role("lead")]
  }
  run = http(POST, "http://pay.test/refunds", timeout: 5s)
}

tool user_location(precision: enum("city", "exact") = "city" "How precise") -> location {
  description = "The user's location, from their device."
  tags = [orders]
  risk = low
  run  = remote
}

tool delete_shop(confirm: bool "Really") -> string {
  description = "Delete everything."
  tags = [admin]
  risk = low
  run  = http(POST, "http://admin.test/delete", timeout: 5s)
}

agent desk {
  model    = desk_model
  prompt   = "Help with orders."
  tools    = tagged(orders)
  handoffs = [billing]
}

agent billing {
  model  = desk_model
  prompt = "Handle invoices."
}

agent admin_desk {
  model  = desk_model
  prompt = "Administer."
  tools  = tagged(admin)
}

graph shop {
  entry   = desk
  entries = [admin_desk]
  nodes   = [desk, billing, admin_desk]

  desk       -> billing
  desk       -> END
  billing    -> END
  admin_desk -> END
}
"#;

/// The shop served with fake tools, its model steered by `steered`.
pub async fn shop(steered: &Steered) -> Server {
    shop_with(steered, tenx_server::ServerSettings::default(), Setup::default()).await
}

/// [`shop`] with `settings`, and `setup` but for its model.
pub async fn shop_with(steered: &Steered, settings: tenx_server::ServerSettings, setup: Setup) -> Server {
    let tools = FakeTools::new()
        .returns("lookup_order", json!({"status": "shipped"}))
        .returns("refund", json!("refunded"))
        .returns("delete_shop", json!("deleted"));
    let setup = Setup {
        model: steered.client(),
        ..setup
    };
    Server::start_with(compile_named("tests/serve_shop.tenx", SHOP), tools, settings, setup).await
}

/// `POST /v1/graph/invoke` with `messages` on `thread`, the full granularity.
pub async fn send(server: &Server, thread: &str, messages: Value) -> (u16, Value) {
    server
        .post(
            "/v1/graph/invoke",
            json!({"messages": messages, "config": {"thread_id": thread}, "response_granularity": "full"}),
        )
        .await
}

/// A `tool` message answering each `(call_id, output)`.
pub fn results(answers: &[(&str, Value)]) -> Value {
    let blocks: Vec<Value> = answers
        .iter()
        .map(|(id, output)| json!({"type": "tool_result", "call_id": id, "output": output}))
        .collect();
    json!([{"role": "tool", "content": blocks}])
}

/// Asserts a refusal: its status, code and (when given) message; returns the body.
pub fn refused(answer: &(u16, Value), status: u16, code: &str, message: Option<&str>) -> Value {
    let (got, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    if let Some(message) = message {
        assert_eq!(body["error"]["message"], message, "{body}");
    }
    body.clone()
}

/// The open interrupt of a full invoke answer.
pub fn interrupt(body: &Value) -> Value {
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(meta["status"], "interrupted_before", "{meta}");
    meta["interrupt_data"]["interrupt"].clone()
}

/// The outputs of the tool-result blocks of `messages`, in order.
pub fn tool_outputs(messages: &Value) -> Vec<Value> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().unwrap().clone())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["output"].clone())
        .collect()
}
