//! What the compiler relies on for `results` and agent tools: a tool result is written into the
//! graph's state (`writes`) only when an agent node makes the call itself. The same tool called
//! inside an agent called as a tool gives its result to that agent, and the thread's state is
//! left as it was (the call's branch runs over a copy of it, and only the agent's answer comes
//! back). So `tenxc check` counts no `results` writer through agent tools (`TENX0333`).

use serde_json::json;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::ExecutionStatus;

use crate::harness::{Host, Models, tool_outputs};

const DESK: &str = r#"
model desk_model {
  provider = scripted
  turns    = [
    { tool: "orders", arguments: { input: "Where is 1042?" } }
    { text: "Asked." }
    { tool: "lookup", arguments: { order_id: "1042" } }
    { text: "Looked up." }
  ]
}
model orders_model {
  provider = scripted
  turns    = [{ tool: "lookup", arguments: { order_id: "1042" } }, { text: "It ships today." }]
}

tool lookup(order_id: string "The order") -> string {
  description = "Look an order up."
  risk = low
  run  = http(POST, "${ORDERS_URL}/lookup", timeout: 5s)
}

agent orders {
  model       = orders_model
  prompt      = "Look the order up."
  description = "Finds orders"
  tools       = [lookup]
}

agent desk {
  model  = desk_model
  prompt = "Answer questions about orders."
  tools  = [lookup]
  agents = [orders]
}

graph desk_graph {
  entry   = desk
  nodes   = [desk]
  results = { lookup: order }

  state {
    order?: string "The order, once looked up"
  }

  desk -> END
}
"#;

#[tokio::test]
async fn a_result_inside_an_agent_call_is_not_written_into_the_thread_state() {
    let tools = FakeTools::new().returns("lookup", json!("shipping"));
    let host = Host::new(DESK, tools, Models::Scripted, crate::harness::dev());
    // The desk asks `orders`, which calls `lookup`: the call's result stays inside the call.
    let asked = host.say_to("desk_graph", "t1", "Where is 1042?").await.unwrap();
    assert_eq!(asked.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("lookup"), 1);
    assert_eq!(tool_outputs(&asked.thread.context), [json!("It ships today.")]);
    assert_eq!(asked.thread.state.get("order"), None, "{:#?}", asked.thread.state);
    // The desk calls `lookup` itself: written.
    let looked = host.say_to("desk_graph", "t1", "Look it up yourself.").await.unwrap();
    assert_eq!(host.tools.calls_of("lookup"), 2);
    assert_eq!(looked.thread.state.get("order"), Some(&json!("shipping")));
}
