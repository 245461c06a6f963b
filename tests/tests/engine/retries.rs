//! Retry policies at run time: a tool call that fails with a class its policy names is sent
//! again under the same key, each failed attempt recorded; other failures are not retried.

use serde_json::json;
use tenx_engine::Identity;
use tenx_engine::ports::{ToolError, ToolErrorKind};
use tenx_engine::testing::FakeTools;

use crate::harness::{Host, Models, Steered, dev, tool_outputs};

const PROGRAM: &str = r#"model desk_model {
  provider = scripted
}

tool lookup_order(order_id: string "The order") -> object {
  description = "Look up an order."
  risk  = low
  retry = { attempts: 3, backoff: 1s, max_backoff: 1s, on: [server_error] }
  run   = http(GET, "http://orders.test/orders", timeout: 5s)
}

agent desk {
  model  = desk_model
  prompt = "Help."
  tools  = [lookup_order]
}

graph shop {
  entry = desk
  nodes = [desk]

  desk -> END
}
"#;

fn failure(kind: ToolErrorKind) -> Result<serde_json::Value, ToolError> {
    Err(ToolError {
        kind,
        message: "HTTP 503".to_owned(),
    })
}

#[tokio::test]
async fn a_server_error_is_retried_under_the_same_key_and_recorded() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "lookup_order", json!({"order_id": "1"}))]);
    steered.push_text("ok");
    let tools = FakeTools::new().sequence(
        "lookup_order",
        vec![failure(ToolErrorKind::Server), Ok(json!({"status": "shipped"}))],
    );
    let host = Host::new(PROGRAM, tools, Models::Steered(steered), dev());
    let out = host.say("t1", "where is 1", &Identity::anonymous()).await.unwrap();
    assert_eq!(tool_outputs(&out.messages), vec![json!({"status": "shipped"})]);
    let calls = host.tools.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].idempotency_key, calls[1].idempotency_key);
    let records = host.records("t1").await;
    assert!(
        records
            .iter()
            .any(|record| record["fields"]["outcome"] == "attempt_failed"),
        "{records:#?}"
    );
}

#[tokio::test]
async fn a_client_error_is_never_retried() {
    let steered = Steered::default();
    steered.push_calls(&[("c1", "lookup_order", json!({"order_id": "1"}))]);
    steered.push_text("sorry");
    let tools = FakeTools::new().sequence("lookup_order", vec![failure(ToolErrorKind::Client), Ok(json!({}))]);
    let host = Host::new(PROGRAM, tools, Models::Steered(steered), dev());
    host.say("t1", "where is 1", &Identity::anonymous()).await.unwrap();
    assert_eq!(host.tools.calls().len(), 1);
}
