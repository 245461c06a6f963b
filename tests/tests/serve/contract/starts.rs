//! How a run starts (the contract's run-time semantics): only at `entry` or a declared extra
//! entry (422 `START_NODE_REFUSED`, never on a paused thread); `initial_state` checked against
//! the state schema, 422 naming unknown, missing and mistyped fields; a request lowers
//! `recursion_limit` and never raises it (a higher one is capped at the graph's).

use serde_json::{Value, json};
use tenx_engine::testing::FakeTools;

use super::super::harness::{Server, compile_named, user};
use super::super::steered::Steered;
use super::{interrupt, refused, shop};

#[tokio::test]
async fn a_run_starts_only_at_the_entry_or_a_declared_entry_and_never_on_a_paused_thread() {
    let steered = Steered::default();
    steered.text("Admin here.");
    let server = shop(&steered).await;
    let start_at = |thread: &str, node: &str| json!({"messages": [user("hi")], "initial_state": {"current_node": node}, "config": {"thread_id": thread}, "response_granularity": "full"});
    for node in ["billing", "nowhere"] {
        let answer = server.post("/v1/graph/invoke", start_at("s1", node)).await;
        let message =
            format!("a run of graph 'shop' cannot start at '{node}': it starts at its entry or a declared extra entry");
        refused(&answer, 422, "START_NODE_REFUSED", Some(&message));
        assert_eq!(server.snapshot("s1").await, "null", "records nothing");
    }
    let (status, body) = server.post("/v1/graph/invoke", start_at("s1", "admin_desk")).await;
    assert_eq!(status, 200, "{body}");
    let last = body["data"]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["metadata"]["node"], "admin_desk");

    steered.calls(&[("c1", "refund", json!({"order_id": "7"}))]);
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("refund 7")], "config": {"thread_id": "s2"}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let open = interrupt(&body);
    let before = server.snapshot("s2").await;
    let answer = server.post("/v1/graph/invoke", start_at("s2", "admin_desk")).await;
    let message = format!(
        "Thread is paused at interrupt '{}' in node 'desk'. Resume it with {{'resume': value}}.",
        open["id"].as_str().unwrap()
    );
    refused(&answer, 422, "INTERRUPT_004", Some(&message));
    assert_eq!(server.snapshot("s2").await, before);
}

const STATEFUL: &str = r#"
model m {
  provider = scripted
  rules    = [{ match: ".", turns: [{ text: "Noted." }] }]
}

agent a {
  model  = m
  prompt = "Note the customer."
}

graph notes {
  entry = a
  nodes = [a]

  state {
    customer: string "The customer"
    visits?: int "How many visits"
  }

  a -> END
}
"#;

#[tokio::test]
async fn initial_state_is_checked_against_the_state_schema_naming_the_fields() {
    let artifact = compile_named("tests/serve_notes.tenx", STATEFUL);
    let server = Server::start(artifact, FakeTools::new(), Default::default()).await;
    let with_state = |state: Value| json!({"messages": [user("hi")], "initial_state": state, "config": {"thread_id": "n1"}, "response_granularity": "full"});
    let cases = [
        (
            json!({"customer": "ann", "colour": "red", "size": 1}),
            "initial_state sets fields graph 'notes' does not declare: 'colour', 'size'",
        ),
        (
            json!({"visits": 2}),
            "initial_state is missing required fields of graph 'notes': 'customer'",
        ),
        (
            json!({"customer": 7}),
            "initial_state does not match the state schema: $.customer: expected string, got int",
        ),
        (
            json!({"customer": "ann", "visits": "two"}),
            "initial_state does not match the state schema: $.visits: expected integer, got str",
        ),
    ];
    for (state, message) in cases {
        let answer = server.post("/v1/graph/invoke", with_state(state.clone())).await;
        refused(&answer, 422, "VALIDATION_ERROR", Some(message));
        assert_eq!(server.snapshot("n1").await, "null", "{state}: records nothing");
    }
    let (status, body) = server
        .post("/v1/graph/invoke", with_state(json!({"customer": "ann"})))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["state"]["customer"], "ann");
}

#[tokio::test]
async fn a_request_may_lower_the_recursion_limit_and_a_higher_one_is_capped_at_the_graphs() {
    let steered = Steered::default();
    let server = shop(&steered).await;
    let looping = |steered: &Steered, thread: &str| {
        for index in 0..60 {
            steered.calls(&[(&format!("{thread}-{index}"), "lookup_order", json!({"order_id": "1"}))]);
        }
    };
    let run = |thread: &str, limit: u64| json!({"messages": [user("look")], "recursion_limit": limit, "config": {"thread_id": thread}});
    looping(&steered, "low");
    let answer = server.post("/v1/graph/invoke", run("low", 3)).await;
    let body = refused(
        &answer,
        500,
        "RECURSION_001",
        Some("Graph execution exceeded recursion limit: 3"),
    );
    assert_eq!(body["error"]["details"][0]["max_steps"], 3, "{body}");
    let lowered = server.tools.calls_of("lookup_order");
    assert!((1..=2).contains(&lowered), "{lowered} rounds ran under a limit of 3");

    let answer = server.post("/v1/graph/invoke", run("high", 100)).await;
    let body = refused(
        &answer,
        500,
        "RECURSION_001",
        Some("Graph execution exceeded recursion limit: 25"),
    );
    assert_eq!(
        body["error"]["details"][0]["max_steps"], 25,
        "the graph's limit: {body}"
    );
}

#[tokio::test]
async fn the_recursion_limit_is_500_recursion_001_in_production_too_with_its_text_hidden() {
    use super::super::harness::{production, token};
    let steered = Steered::default();
    for index in 0..10 {
        steered.calls(&[(&format!("p{index}"), "lookup_order", json!({"order_id": "1"}))]);
    }
    let server = super::shop_with(&steered, production(), Default::default()).await;
    let alice = server.as_user(&token("alice", json!({})));
    let answer = alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("look")], "recursion_limit": 2, "config": {"thread_id": "p1"}}),
        )
        .await;
    let body = refused(
        &answer,
        500,
        "RECURSION_001",
        Some("An unexpected error occurred. Please contact support."),
    );
    assert_eq!(body["error"]["details"], json!([]), "{body}");
}
