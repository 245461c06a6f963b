//! The per-user cap on concurrent runs (429 `TOO_MANY_RUNS`, in the reference's words) and the
//! run timeout (504; the run stops after the step in flight and its thread stays consistent),
//! over loopback HTTP with a slow tool.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tenx_engine::ports::Store;
use tenx_engine::testing::FakeTools;

use super::harness::{Server, compile_named, token, user, with_auth};

/// A model that calls `slow` for "slow …" and answers anything else at once.
pub const SLOW_PROGRAM: &str = r#"
model m {
  provider = scripted
  rules = [
    {
      match: "(?i)slow (?<words>.+)"
      turns: [
        { tool: "slow", arguments: { message: "{words}" } }
        { text: "{result}" }
      ]
    }
  ]
  fallback = { text: "Say: slow something" }
}

tool slow(message: string "What to echo, slowly") -> string {
  description = "Echo a message, slowly."
  risk = low
  run = http(POST, "http://127.0.0.1:9/slow", timeout: 30s)
}

agent a {
  model = m
  prompt = "Echo what you are asked to."
  tools = [slow]
}

graph g {
  entry = a
  nodes = [a]
  a -> END
}
"#;

pub async fn slow_server(delay: Duration, settings: tenx_server::ServerSettings) -> Server {
    let tools = FakeTools::new().returns("slow", json!("done slowly"));
    Server::start_slow(
        compile_named("tests/serve_slow.tenx", SLOW_PROGRAM),
        tools,
        delay,
        settings,
    )
    .await
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_user_over_the_concurrent_run_cap_gets_429_too_many_runs_and_nothing_is_recorded() {
    let settings = tenx_server::ServerSettings {
        max_concurrent_runs_per_user: Some(2),
        ..with_auth()
    };
    let server = slow_server(Duration::from_millis(1500), settings).await;
    let alice_token = token("alice", json!({}));
    let alice = server.as_user(&alice_token);
    let bob = server.as_user(&token("bob", json!({})));
    let run = |thread: &str| {
        let alice = server.as_user(&alice_token);
        let body = json!({"messages": [user("slow please")], "config": {"thread_id": thread}});
        tokio::spawn(async move { alice.post("/v1/graph/invoke", body).await })
    };
    let first = run("cap-1");
    let second = run("cap-2");
    let calls = server.started_calls.clone();
    until("two slow calls in flight", || calls.load(Ordering::SeqCst) == 2).await;

    let (status, body) = alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("slow again")], "config": {"thread_id": "cap-3"}}),
        )
        .await;
    assert_eq!(status, 429, "{body}");
    let message = "Too many runs in progress for this user (limit 2). Wait for one to finish and retry.";
    assert_eq!(body["error"]["code"], "TOO_MANY_RUNS");
    assert_eq!(body["error"]["message"], message);
    assert_eq!(body["error"]["details"], json!([]));
    assert_eq!(body["error"]["limit"], 2);
    assert_eq!(body["metadata"]["message"], message);
    assert!(body["metadata"]["request_id"].is_string() && body["metadata"]["timestamp"].is_string());
    assert!(
        server.store.load("cap-3").await.unwrap().is_none(),
        "a refusal records nothing"
    );
    let (status, body) = alice
        .post(
            "/v1/graph/stream",
            json!({"messages": [user("hi")], "config": {"thread_id": "cap-4"}}),
        )
        .await;
    assert_eq!(status, 429, "streams count too: {body}");

    // Another user is not held back by alice's runs.
    let (status, body) = bob
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "cap-bob"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    assert_eq!(first.await.unwrap().0, 200);
    assert_eq!(second.await.unwrap().0, 200);
    let (status, body) = alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "cap-3"}}),
        )
        .await;
    assert_eq!(status, 200, "a place is free again once a run ends: {body}");
}

#[tokio::test]
async fn a_run_past_its_timeout_is_504_and_stops_after_the_step_in_flight_with_its_thread_consistent() {
    let settings = tenx_server::ServerSettings {
        run_timeout: Some(Duration::from_secs(1)),
        ..tenx_server::ServerSettings::default()
    };
    let server = slow_server(Duration::from_millis(2500), settings).await;
    let started = Instant::now();
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("slow please")], "config": {"thread_id": "late"}}),
        )
        .await;
    let waited = started.elapsed();
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["error"]["code"], "HTTPException");
    assert_eq!(body["error"]["message"], "Graph run timed out after 1s");
    assert!(
        waited < Duration::from_millis(2400),
        "answered at the timeout, not after the tool: {waited:?}"
    );

    // The tool call in flight finishes and is checkpointed; then the run stops.
    let mut state = Value::Null;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let (_, body) = server.get("/v1/threads/late/state").await;
        state = body["data"]["state"].clone();
        if state["execution_meta"]["status"] != "running" && !state.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state["execution_meta"]["status"], "interrupted_after", "{state}");
    assert_eq!(state["execution_meta"]["interrupt_reason"], "stop_requested", "{state}");
    assert_eq!(server.tools.calls_of("slow"), 1, "the tool ran once");
    let context = state["context"].as_array().unwrap();
    let calls: Vec<&Value> = context
        .iter()
        .filter_map(|message| message["tools_calls"].as_array())
        .flatten()
        .collect();
    let results: Vec<&Value> = context.iter().filter(|message| message["role"] == "tool").collect();
    assert_eq!(calls.len(), 1, "{state}");
    assert_eq!(results.len(), 1, "the call has its result: {state}");
    assert!(
        results[0]["content"].to_string().contains("done slowly"),
        "the result is the tool's, not a cancellation: {state}"
    );
    assert!(
        server.store.in_flight("late").await.unwrap().is_empty(),
        "nothing left in flight"
    );

    // The thread goes on.
    let (status, body) = server
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello")], "config": {"thread_id": "late"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // A stream past its timeout ends with an error chunk saying so.
    let text = server
        .request(reqwest::Method::POST, "/v1/graph/stream")
        .json(&json!({"messages": [user("slow again")], "config": {"thread_id": "late-stream"}}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "error", "{text}");
    assert_eq!(
        last["data"]["reason"], "[HTTPException] Graph run timed out after 1s",
        "{last}"
    );
}
