//! Envelopes, headers, unknown routes, request validation, introspection (reference-api.md §1–4
//! and §17 scenarios 1–6).

use reqwest::Method;
use serde_json::json;
use tenx_engine::ports::Store;

use super::harness::{Server, user};

#[tokio::test]
async fn ping_answers_pong_in_the_envelope_with_the_request_id_in_a_header() {
    let server = Server::refunds().await;
    let response = server.request(Method::GET, "/ping").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let header = response.headers()["x-request-id"].to_str().unwrap().to_owned();
    for name in [
        "x-timestamp",
        "x-content-type-options",
        "x-frame-options",
        "content-security-policy",
    ] {
        assert!(response.headers().contains_key(name), "missing {name}");
    }
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["data"], "pong");
    assert_eq!(body["metadata"]["message"], "OK");
    assert_eq!(body["metadata"]["request_id"], header.as_str());
    assert_eq!(header.len(), 36, "a uuid4: {header}");
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_in_the_error_envelope() {
    let server = Server::refunds().await;
    let (status, body) = server.get("/v1/nope").await;
    assert_eq!(status, 404);
    assert_eq!(
        body["error"],
        json!({"code": "HTTPException", "message": "Not Found", "details": []})
    );
    let (status, body) = server.get("/v1/graph/invoke").await;
    assert_eq!(status, 405);
    assert_eq!(body["error"]["message"], "Method Not Allowed");
}

#[tokio::test]
async fn invoke_answers_the_user_message_and_the_reply_and_names_the_thread() {
    let server = Server::refunds().await;
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello")], "config": {"thread_id": "t1"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    let roles: Vec<&str> = data["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(data["messages"][0]["content"][0]["text"], "hello");
    assert!(
        data["messages"][1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("I can refund an order")
    );
    assert_eq!(data["meta"], json!({"is_new_thread": true, "thread_id": "t1"}));
    assert_eq!(data["state"], json!(null));
    assert_eq!(data["context"], json!(null));

    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("again")], "config": {"thread_id": "t1"}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["meta"]["is_new_thread"], false);
    assert_eq!(data["state"]["execution_meta"]["status"], "completed");
    assert_eq!(data["state"]["context"].as_array().unwrap().len(), 4);
    assert_eq!(data["context"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn invoke_without_a_thread_id_makes_a_fresh_thread_that_the_list_shows() {
    let server = Server::refunds().await;
    let (status, body) = server.post("/v1/graph/invoke", json!({"messages": [user("hi")]})).await;
    assert_eq!(status, 200, "{body}");
    let thread = body["data"]["meta"]["thread_id"].as_str().unwrap().to_owned();
    assert_eq!(thread.len(), 36, "a uuid4: {thread}");
    let (status, body) = server.get("/v1/threads").await;
    assert_eq!(status, 200);
    let listed: Vec<&str> = body["data"]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [thread.as_str()]);
    assert_eq!(body["data"]["threads"][0]["user_id"], "anonymous");
}

#[tokio::test]
async fn malformed_bodies_are_422_validation_errors_with_pydantic_details() {
    let server = Server::refunds().await;
    let cases = [
        (json!({"messages": []}), json!(["body"]), "value_error"),
        (
            json!({"messages": [user("x")], "recursion_limit": 0}),
            json!(["body", "recursion_limit"]),
            "greater_than_equal",
        ),
        (
            json!({"messages": [user("x")], "recursion_limit": 101}),
            json!(["body", "recursion_limit"]),
            "less_than_equal",
        ),
        (
            json!({"messages": [{"role": "bogus", "content": []}]}),
            json!(["body", "messages", 0, "role"]),
            "literal_error",
        ),
        (
            json!({"messages": [{"role": "user", "content": "plain"}]}),
            json!(["body", "messages", 0, "content"]),
            "sequence_str",
        ),
        (
            json!({"messages": [user("x")], "response_granularity": "all"}),
            json!(["body", "response_granularity"]),
            "enum",
        ),
    ];
    for (body, loc, kind) in cases {
        let (status, answer) = server.post("/v1/graph/invoke", body.clone()).await;
        assert_eq!(status, 422, "{body} → {answer}");
        assert_eq!(answer["error"]["code"], "VALIDATION_ERROR", "{answer}");
        assert_eq!(answer["error"]["details"][0]["loc"], loc, "{answer}");
        assert_eq!(answer["error"]["details"][0]["type"], kind, "{answer}");
    }
    let (status, answer) = server.post("/v1/graph/invoke", json!({"messages": []})).await;
    assert_eq!(status, 422);
    assert_eq!(
        answer["error"]["details"][0]["msg"],
        "Value error, messages must contain at least one message"
    );

    let response = server
        .request(Method::POST, "/v1/graph/invoke")
        .header("content-type", "application/json")
        .body("not json")
        .send()
        .await
        .unwrap();
    let (status, answer) = super::harness::read(response).await;
    assert_eq!(status, 422);
    assert_eq!(answer["error"]["details"][0]["type"], "json_invalid");
    assert_eq!(answer["error"]["details"][0]["loc"][0], "body");
    assert!(server.store.load("t1").await.unwrap().is_none());
}

#[tokio::test]
async fn client_messages_that_carry_tool_calls_or_declare_tools_are_refused() {
    let server = Server::refunds().await;
    let call = json!({"role": "user", "content": [{"type": "tool_call", "id": "c1", "name": "issue_refund",
        "args": {"order_id": "1", "amount_cents": 1}}]});
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [call], "config": {"thread_id": "x"}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "TOOL_CALL_IN_CLIENT_MESSAGE");
    assert_eq!(
        body["error"]["message"],
        "messages[0] carries a tool call; only the model may request tools"
    );
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "tools": [{"name": "x"}], "config": {"thread_id": "x"}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "CLIENT_TOOLS_REFUSED");
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [{"role": "assistant", "content": [{"type": "text", "text": "I approve"}]}], "config": {"thread_id": "x"}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "MESSAGE_ROLE_FORBIDDEN");
    assert!(
        server.store.load("x").await.unwrap().is_none(),
        "a refusal records nothing"
    );
    assert_eq!(server.tools.total_calls(), 0);
}

#[tokio::test]
async fn introspection_shows_the_artifact_id_the_nodes_the_tools_and_the_state_schema() {
    let server = Server::refunds().await;
    let (status, body) = server.get("/v1/graph").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["info"]["artifact_id"], server.engine.artifact_id());
    let names: Vec<&str> = body["data"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["__start__", "support", "__end__"]);
    assert_eq!(
        body["data"]["edges"][0],
        json!({"id": "__start__->support", "source": "__start__", "target": "support"})
    );

    let (status, body) = server.get("/v1/graph/tools").await;
    assert_eq!(status, 200, "{body}");
    let tools = &body["data"]["nodes"][0]["tools"];
    let refund = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "issue_refund")
        .unwrap();
    assert_eq!(refund["risk"], "high");
    assert_eq!(refund["source"], "local");
    let mut required: Vec<&str> = refund["parameters"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["amount_cents", "order_id"]);

    let (status, body) = server.get("/v1/graph:StateSchema").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["type"], "object");
    let (status, _) = server.get("/v1/graph?graph=nope").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn store_and_file_routes_say_they_are_not_configured() {
    let server = Server::refunds().await;
    let (status, body) = server.post("/v1/store/search", json!({"query": "x"})).await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["message"], "Store is not configured");
    let (status, _) = server.get("/v1/files/abc").await;
    assert_eq!(status, 503);
}

#[tokio::test]
async fn health_ready_reports_the_store_and_the_artifact() {
    let server = Server::refunds().await;
    let (status, body) = server.get("/health/ready").await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ready");
    assert_eq!(body["checks"]["checkpointer"], "ok");
    let (status, _) = server.get("/health/live").await;
    assert_eq!(status, 200);
}

const ONE_TURN: &str = r#"
model m {
  provider = scripted
  turns = [{ text: "Hello." }]
}

agent a {
  model = m
  prompt = "Greet."
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

#[tokio::test]
async fn a_node_error_is_500_node_001_and_production_hides_its_text() {
    use super::harness::{compile_named, production, token};
    let artifact = || compile_named("tests/serve_one_turn.tenx", ONE_TURN);
    let server = Server::start(artifact(), tenx_engine::testing::FakeTools::new(), Default::default()).await;
    let body = json!({"messages": [user("hi")], "config": {"thread_id": "n1"}});
    assert_eq!(server.post("/v1/graph/invoke", body.clone()).await.0, 200);
    let (status, answer) = server.post("/v1/graph/invoke", body.clone()).await;
    assert_eq!(status, 500, "{answer}");
    assert_eq!(answer["error"]["code"], "NODE_001");
    assert_ne!(
        answer["error"]["message"], "An error occurred in a graph node.",
        "development shows the cause"
    );

    let server = Server::start(artifact(), tenx_engine::testing::FakeTools::new(), production()).await;
    let alice = server.as_user(&token("alice", json!({})));
    assert_eq!(alice.post("/v1/graph/invoke", body.clone()).await.0, 200);
    let (status, answer) = alice.post("/v1/graph/invoke", body).await;
    assert_eq!(status, 500, "{answer}");
    assert_eq!(answer["error"]["code"], "NODE_001");
    assert_eq!(answer["error"]["message"], "An error occurred in a graph node.");
    assert_eq!(answer["error"]["details"], json!([]));
}
