//! What an agent sees (`input`): over a two-agent graph, the second agent's model is shown the
//! whole conversation, none of it, its last messages (never a tool result without its call) or
//! one message rendered from the state, and always its own turn after that; the conversation
//! stored is the same whatever the second agent saw. Against the local fake provider servers,
//! a request that would not start with a user message gets one holding the prompt, so both
//! adapters send a valid request.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tenx_engine::Identity;
use tenx_engine::ports::{DeltaSink, ModelClient, ModelError, ModelReply, ModelRequest, Store};
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ExecutionStatus, Message, Role};
use tenx_models::test_support::{Canned, FakeProvider};
use tenx_models::{ProviderOptions, Transport};
use tokio_util::sync::CancellationToken;

use crate::harness::{Host, Models, Steered, compile, dev};

/// The two-agent graph: `first` looks something up and answers, then `second` (whose `input`
/// is `input`) looks something up too and answers.
fn program(input: &str) -> String {
    format!(
        r#"model m {{
  provider = scripted
}}

tool lookup(q: string "What to look up") -> string {{
  description = "Look something up."
  run = http(GET, "${{LOOKUP_URL}}/lookup", timeout: 5s)
}}

agent first {{
  model  = m
  prompt = "Find it."
  tools  = [lookup]
}}

agent second {{
  model  = m
  prompt = "Check it."
  tools  = [lookup]
  {input}
}}

graph g {{
  entry = first
  nodes = [first, second]
  state {{
    topic: string = "tides" "What the run is about"
  }}

  first  -> second
  second -> END
}}
"#
    )
}

/// What one request showed: the agent, then each message as `role:text`.
type Shown = (String, Vec<String>);

/// A steered model that also notes what each request showed.
#[derive(Clone, Default)]
struct Seeing {
    steered: Steered,
    seen: Arc<Mutex<Vec<Shown>>>,
}

#[async_trait]
impl ModelClient for Seeing {
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        sink: &mut dyn DeltaSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let shown = request.messages.iter().map(|message| described(message)).collect();
        self.seen.lock().unwrap().push((request.agent.to_owned(), shown));
        self.steered.complete(request, sink, cancel).await
    }
}

fn described(message: &Message) -> String {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::System => "system",
    };
    let calls: Vec<&str> = message
        .tools_calls
        .iter()
        .flatten()
        .map(|call| call.id.as_str())
        .collect();
    if calls.is_empty() {
        format!("{role}:{}", message.text_content())
    } else {
        format!("{role}:calls {}", calls.join(","))
    }
}

/// Runs the graph with `second`'s `input` line; returns what `second` saw on each of its two
/// model calls, and the stored conversation.
async fn run(input: &str) -> (Vec<Vec<String>>, Value) {
    let seeing = Seeing::default();
    seeing.steered.push_calls(&[("c1", "lookup", json!({"q": "it"}))]);
    seeing.steered.push_text("found it");
    seeing.steered.push_calls(&[("c2", "lookup", json!({"q": "again"}))]);
    seeing.steered.push_text("checked");
    let artifact = compile(&program(input));
    let tools = FakeTools::new().returns("lookup", json!("the answer"));
    let host = Host::from_artifact(
        artifact,
        tools,
        Models::Given(Arc::new(seeing.clone()) as Arc<dyn ModelClient>),
        dev(),
    );
    let done = host.say("t1", "hello", &Identity::anonymous()).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let seen = seeing.seen.lock().unwrap().clone();
    let agents: Vec<&str> = seen.iter().map(|(agent, _)| agent.as_str()).collect();
    assert_eq!(agents, ["first", "first", "second", "second"]);
    let second = seen.into_iter().skip(2).map(|(_, shown)| shown).collect();
    let stored = serde_json::to_value(&host.store.load("t1").await.unwrap().unwrap().context).unwrap();
    (second, stored)
}

/// The whole conversation when `second` first speaks.
const BEFORE: [&str; 4] = [
    "user:hello",
    "assistant:calls c1",
    "tool:the answer",
    "assistant:found it",
];

/// `second`'s own turn on its second call.
const OWN_TURN: [&str; 2] = ["assistant:calls c2", "tool:the answer"];

fn then(before: &[&str], own: &[&str]) -> Vec<String> {
    before.iter().chain(own).map(|text| (*text).to_owned()).collect()
}

#[tokio::test]
async fn each_input_shows_its_part_then_the_own_turn_and_the_stored_conversation_is_the_same() {
    let (conversation, stored) = run("").await;
    assert_eq!(
        conversation,
        [then(&BEFORE, &[]), then(&BEFORE, &OWN_TURN)],
        "the default"
    );
    let (written, written_stored) = run("input = conversation").await;
    assert_eq!(written, conversation);
    assert_eq!(written_stored, stored);

    let (none, none_stored) = run("input = none").await;
    let prompt = ["user:Check it."];
    assert_eq!(none, [then(&prompt, &[]), then(&prompt, &OWN_TURN)]);
    assert_eq!(none_stored, stored, "the conversation stored is unchanged");

    // The last message is `first`'s answer: led by the prompt, as it is no user message.
    let (last, last_stored) = run("input = last(1)").await;
    let answer = ["user:Check it.", "assistant:found it"];
    assert_eq!(last, [then(&answer, &[]), then(&answer, &OWN_TURN)]);
    assert_eq!(last_stored, stored);

    // The last 2 start at the result of `c1`: the window reaches back to its call.
    let (paired, paired_stored) = run("input = last(2)").await;
    let pair = [
        "user:Check it.",
        "assistant:calls c1",
        "tool:the answer",
        "assistant:found it",
    ];
    assert_eq!(paired, [then(&pair, &[]), then(&pair, &OWN_TURN)]);
    assert_eq!(paired_stored, stored);

    let (template, template_stored) = run(r#"input = "Check the notes on {topic}""#).await;
    let rendered = ["user:Check the notes on tides"];
    assert_eq!(template, [then(&rendered, &[]), then(&rendered, &OWN_TURN)]);
    assert_eq!(template_stored, stored);
    let last = stored.as_array().unwrap().last().unwrap();
    assert_eq!(last["metadata"]["node"], "second", "the answer is appended as usual");
}

/// `first` answers, then `second` (its `input` being `input`) answers; both are `provider`
/// models at the fake.
fn provider_program(provider: &str, name: &str, base_url: &str, input: &str) -> String {
    format!(
        r#"model m {{
  provider = {provider}
  name     = "{name}"
  base_url = "{base_url}"
}}

agent first {{
  model  = m
  prompt = "Find it."
}}

agent second {{
  model  = m
  prompt = "Check it."
  input  = {input}
}}

graph g {{
  entry = first
  nodes = [first, second]

  first  -> second
  second -> END
}}
"#
    )
}

/// Runs `provider_program` against `fake` and returns the bodies it was sent.
async fn sent(fake: &FakeProvider, program: &str) -> Vec<Value> {
    let artifact = compile(program);
    let declared = artifact.artifact.models["m"].clone();
    let transport = Transport::new(ProviderOptions::default()).unwrap();
    let client = tenx_models::client_for("m", &declared, None, &transport).unwrap();
    let host = Host::from_artifact(artifact, FakeTools::new(), Models::Given(client), dev());
    let done = host.say("t1", "hello", &Identity::anonymous()).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    fake.received().iter().map(|received| received.json()).collect()
}

fn openai_fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        tenx_tests::repo_root()
            .join("runtime/models/tests/fixtures/openai")
            .join(name),
    )
    .unwrap()
}

fn anthropic_fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        tenx_tests::repo_root()
            .join("runtime/models/tests/fixtures/anthropic")
            .join(name),
    )
    .unwrap()
}

#[tokio::test]
async fn openai_is_sent_a_user_message_first_for_none_and_for_a_window_starting_elsewhere() {
    for input in ["none", "last(1)"] {
        let fake = FakeProvider::start([
            Canned::sse(openai_fixture("text.sse"), 64),
            Canned::sse(openai_fixture("text.sse"), 64),
        ])
        .await
        .unwrap();
        let program = provider_program("openai", "gpt-4o-mini", &format!("{}/v1", fake.url()), input);
        let bodies = sent(&fake, &program).await;
        assert_eq!(bodies.len(), 2);
        assert_eq!(roles(&bodies[0]), ["system", "user"], "`first` sees the conversation");
        assert_eq!(bodies[0]["messages"][1]["content"], "hello");
        let messages = bodies[1]["messages"].as_array().unwrap();
        assert_eq!(messages[0], json!({"role": "system", "content": "Check it."}));
        assert_eq!(messages[1], json!({"role": "user", "content": "Check it."}), "{input}");
        let expected: &[&str] = if input == "none" {
            &["system", "user"]
        } else {
            &["system", "user", "assistant"]
        };
        assert_eq!(roles(&bodies[1]), expected, "{input}");
        assert!(
            !messages.iter().any(|message| message["content"] == "hello"),
            "the client's message is not shown to `second`"
        );
    }
}

#[tokio::test]
async fn anthropic_is_sent_a_user_message_first_for_none_and_for_a_window_starting_elsewhere() {
    for input in ["none", "last(1)"] {
        let fake = FakeProvider::start([
            Canned::sse(anthropic_fixture("text.sse"), 9),
            Canned::sse(anthropic_fixture("text.sse"), 9),
        ])
        .await
        .unwrap();
        let program = provider_program("anthropic", "claude-sonnet-4-5", &fake.url(), input);
        let bodies = sent(&fake, &program).await;
        assert_eq!(bodies.len(), 2);
        assert_eq!(
            bodies[0]["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "hello"}]}])
        );
        assert_eq!(bodies[1]["system"], "Check it.");
        let prompt = json!({"role": "user", "content": [{"type": "text", "text": "Check it."}]});
        let expected = if input == "none" {
            json!([prompt])
        } else {
            json!([prompt, {"role": "assistant", "content": [{"type": "text", "text": "Your refund of 59.00 was issued."}]}])
        };
        assert_eq!(bodies[1]["messages"], expected, "{input}");
    }
}

/// The role of each message of a chat-completions request body.
fn roles(body: &Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect()
}
