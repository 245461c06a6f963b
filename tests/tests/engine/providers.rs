//! The refund example with its model switched to `provider = openai`, against a local fake
//! chat-completions server replaying recorded answers: the same approval flow as with the
//! scripted model, and the conversation the provider is sent on the way.

use serde_json::json;
use tenx_engine::Identity;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ExecutionStatus, Role};
use tenx_models::test_support::{Canned, FakeProvider};
use tenx_models::{ProviderOptions, Transport};

use crate::harness::{Host, Models, assistant_texts, compile_named, dev, example};

const ASK: &str = "Refund order 1042, 59.00";

/// A recorded answer of `runtime/models/tests/fixtures/openai/`.
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        tenx_tests::repo_root()
            .join("runtime/models/tests/fixtures/openai")
            .join(name),
    )
    .unwrap()
}

/// The refund example with `support_model` declared as an OpenAI-compatible model at `base_url`.
fn refund_program(base_url: &str) -> String {
    let text = example("refund_approval");
    let start = text.find("model support_model {").unwrap();
    let end = start + text[start..].find("\n}\n").unwrap() + 3;
    format!(
        "{}model support_model {{\n  provider = openai\n  name     = \"gpt-4o-mini\"\n  base_url = \"{base_url}\"\n}}\n{}",
        &text[..start],
        &text[end..]
    )
}

#[tokio::test]
async fn the_refund_example_runs_its_approval_flow_with_openai_against_the_fake() {
    let fake = FakeProvider::start([
        Canned::sse(fixture("refund_call.sse"), 11),
        Canned::sse(fixture("refund_answer.sse"), 11),
    ])
    .await
    .unwrap();
    let artifact = compile_named(
        "examples/refund_approval/main.tenx",
        &refund_program(&format!("{}/v1", fake.url())),
    );
    let declared = artifact.artifact.models["support_model"].clone();
    let transport = Transport::new(ProviderOptions::default()).unwrap();
    let client = tenx_models::client_for("support_model", &declared, None, &transport).unwrap();
    let tools = FakeTools::new().returns("issue_refund", json!("Refunded 5900 cents on order 1042."));
    let host = Host::from_artifact(artifact, tools, Models::Given(client), dev());
    let anyone = Identity::anonymous();

    let paused = host.say("t1", ASK, &anyone).await.unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    assert_eq!(host.tools.total_calls(), 0, "nothing runs before the approval");
    let interrupt = paused.thread.pending.as_ref().unwrap().interrupt.clone().unwrap();
    assert_eq!(interrupt.message, "Approve a refund of 5900 cents for order 1042?");
    assert_eq!(interrupt.value["action"], "issue_refund");
    assert_eq!(
        interrupt.value["normalized_arguments"],
        json!({"order_id": "1042", "amount_cents": 5900})
    );

    let done = host
        .answer("t1", json!({"approved": true}), Some(&interrupt.id), &anyone)
        .await
        .unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("issue_refund"), 1);
    assert_eq!(
        assistant_texts(&done.messages),
        vec!["Refunded 5900 cents on order 1042.".to_owned()]
    );
    let last = done
        .messages
        .iter()
        .rev()
        .find(|message| message.role == Role::Assistant)
        .unwrap();
    assert_eq!(
        last.usages.map(|usage| usage.total_tokens),
        Some(271),
        "usage is recorded"
    );

    let received = fake.received();
    assert_eq!(
        received.len(),
        2,
        "one model call before the approval, one after the refund"
    );
    let first = received[0].json();
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["issue_refund", "lookup_order"]);
    let second = received[1].json();
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(messages[1]["content"], json!(ASK));
    assert_eq!(
        messages[2]["tool_calls"],
        json!([{"id": "call_R3fUnD1042aB1cD2eF3gH4iJ", "type": "function",
            "function": {"name": "issue_refund", "arguments": "{\"order_id\":\"1042\",\"amount_cents\":5900}"}}])
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_R3fUnD1042aB1cD2eF3gH4iJ",
            "content": "Refunded 5900 cents on order 1042."})
    );
    assert!(
        messages[0]["content"]
            .as_str()
            .is_some_and(|prompt: &str| prompt.starts_with("You are a support agent")),
        "{}",
        messages[0]
    );
    assert_eq!(second["model"], json!("gpt-4o-mini"));
}

/// A desk whose model is an OpenAI-compatible model at `base_url`, with a graph retry policy on
/// its model calls that names `rate_limited`.
fn rate_limited_program(base_url: &str) -> String {
    format!(
        r#"model desk_model {{
  provider = openai
  name     = "gpt-4o-mini"
  base_url = "{base_url}"
}}

agent desk {{
  model  = desk_model
  prompt = "Help."
}}

graph shop {{
  entry = desk
  nodes = [desk]
  retry = {{ desk: {{ attempts: 2, backoff: 1ms, max_backoff: 5s, on: [rate_limited] }} }}

  desk -> END
}}
"#
    )
}

#[tokio::test]
async fn a_providers_retry_after_reaches_the_engine_and_its_retry_waits_for_it() {
    let fake = FakeProvider::start([
        Canned::json(429, fixture("error_429.json")).header("retry-after", "1"),
        Canned::sse(fixture("text.sse"), 64),
    ])
    .await
    .unwrap();
    let artifact = crate::harness::compile(&rate_limited_program(&format!("{}/v1", fake.url())));
    let declared = artifact.artifact.models["desk_model"].clone();
    // The provider client does not retry on its own here, so the 429 and its `Retry-After`
    // reach the engine, whose policy for the node retries and must wait at least that long (its
    // own backoff is at most 1 ms).
    let options = ProviderOptions {
        retry: tenx_models::RetryPolicy {
            attempts: 1,
            ..tenx_models::RetryPolicy::default()
        },
        ..ProviderOptions::default()
    };
    let client = tenx_models::client_for("desk_model", &declared, None, &Transport::new(options).unwrap()).unwrap();
    let host = Host::from_artifact(artifact, FakeTools::new(), Models::Given(client), dev());
    let started = std::time::Instant::now();
    let done = host.say("t1", "hello", &Identity::anonymous()).await.unwrap();
    let waited = started.elapsed();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(fake.received().len(), 2);
    assert!(
        waited >= std::time::Duration::from_secs(1),
        "the engine waited {waited:?}, less than the provider's Retry-After of 1 s"
    );
}

#[tokio::test]
async fn stopping_a_run_cancels_its_provider_call_in_flight_and_the_run_ends_stopped() {
    // The answer starts streaming, then nothing more comes: the call is in flight when the
    // run is stopped.
    let mut cut = fixture("text.sse");
    cut.truncate(cut.len() / 2);
    let fake = FakeProvider::start([Canned::sse(cut, 64).hanging()]).await.unwrap();
    let artifact = crate::harness::compile(&rate_limited_program(&format!("{}/v1", fake.url())));
    let declared = artifact.artifact.models["desk_model"].clone();
    let transport = Transport::new(ProviderOptions::default()).unwrap();
    let client = tenx_models::client_for("desk_model", &declared, None, &transport).unwrap();
    let host = Host::from_artifact(artifact, FakeTools::new(), Models::Given(client), dev());
    let started = std::time::Instant::now();
    let stopper = async {
        while fake.received().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(host.engine.stop("t1"), "the run is in progress");
    };
    let anyone = Identity::anonymous();
    let (stopped, ()) = tokio::join!(host.say("t1", "hello", &anyone), stopper);
    let stopped = stopped.unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the stop did not wait for the provider's idle timeout"
    );
    let execution = &stopped.thread.execution;
    assert_eq!(execution.status, ExecutionStatus::InterruptedAfter, "{execution:?}");
    assert_eq!(execution.interrupt_reason.as_deref(), Some("stop_requested"));
    assert_eq!(fake.received().len(), 1, "a cancelled call is not retried");
}
