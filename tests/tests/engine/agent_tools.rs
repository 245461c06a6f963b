//! Agents as tools, end to end in process: a model calls another agent as a tool; that agent
//! runs on its own (its own conversation from the call's input, its own tools and approvals) and
//! its answer is the call's result; a question it asks pauses the thread, and the answer lets it
//! finish and the calling agent go on. These tests were written before the language had
//! `agents = [...]` and write the agent tools into the compiled artifact, as the compiler lowers
//! them; `nesting.rs` writes them in the language.

use serde_json::{Value, json};
use tenx_artifact::AgentTool;
use tenx_engine::ErrorCode;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ExecutionStatus, Role};

use crate::harness::{Host, Models, assistant_texts, compile_patched, dev, tool_outputs};

const DESK: &str = r#"
import std.approval.yes_no

model desk_model {
  provider = scripted
  turns    = [{ text: "The test gives this model its turns." }]
}
model spanish_model {
  provider = scripted
  turns    = [{ text: "hola" }]
}
model refunder_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "1042" } }, { text: "Refunded 1042." }]
}

tool refund(order_id: string "The order") -> string {
  description = "Refund an order."
  risk = high
  idempotency_key = "refund-{order_id}"
  approval {
    message   = "Refund order {order_id}?"
    response  = yes_no
    on_reject = "Refund declined."
    separate_duties = false
  }
  run = http(POST, "${PAYMENTS_URL}/refunds", timeout: 5s)
}

agent desk {
  model  = desk_model
  prompt = "Use your agents."
}
agent spanish {
  model  = spanish_model
  prompt = "Translate to Spanish."
}
agent refunder {
  model  = refunder_model
  prompt = "Refund the order you are given."
  tools  = [refund]
}

graph desk_graph {
  entry = desk
  nodes = [desk]
  desk -> END
}

// Only here so that the two agents are in the artifact; the desk calls them as tools.
graph helpers {
  entry = spanish
  nodes = [spanish, refunder]
  spanish  -> refunder
  refunder -> END
}
"#;

/// The desk's model calls `spanish`, then `refunder`, then answers with the last result.
fn desk_turns(artifact: &mut tenx_artifact::Artifact) {
    let script = artifact.models.get_mut("desk_model").unwrap().script.as_mut().unwrap();
    let call = |tool: &str, name: &str, value: &str| tenx_artifact::Turn::Tool {
        tool: tool.into(),
        arguments: [(name.to_owned(), json!(value))].into_iter().collect(),
    };
    script.turns = vec![
        call("spanish", "text", "hello"),
        call("refunder", "order", "1042"),
        tenx_artifact::Turn::Text {
            text: "Done: {result}".into(),
        },
    ];
}

fn desk() -> tenx_artifact::LoadedArtifact {
    compile_patched(DESK, |artifact| {
        desk_turns(artifact);
        let desk = artifact.agents.get_mut("desk").unwrap();
        desk.agent_tools = vec![
            AgentTool {
                tool_name: "refunder".into(),
                agent: "refunder".into(),
                description: "Refunds an order.".into(),
                parameters:
                    json!({"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}).into(),
            },
            AgentTool {
                tool_name: "spanish".into(),
                agent: "spanish".into(),
                description: "Translates a text to Spanish.".into(),
                parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
                    .into(),
            },
        ];
    })
}

#[tokio::test]
async fn an_agent_called_as_a_tool_answers_the_call_and_its_approval_pauses_the_thread() {
    let tools = FakeTools::new().returns("refund", json!("refund r-1"));
    let host = Host::from_artifact(desk(), tools, Models::Scripted, dev());
    let paused = host
        .say_to("desk_graph", "t1", "Translate hello, then refund 1042.")
        .await
        .unwrap();
    // `spanish` answered its call; `refunder` called `refund`, which asks a person first.
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let pending = paused.thread.pending.as_ref().unwrap();
    assert_eq!(pending.branch.as_deref(), Some("refunder@call_desk_model_2"));
    assert!(pending.interrupt.as_ref().unwrap().message.contains("1042"));
    assert_eq!(host.tools.calls_of("refund"), 0);
    // The call's result is the agent's answer, in the desk's conversation.
    assert_eq!(tool_outputs(&paused.thread.context), [json!("hola")]);
    // The helper agents' own messages are not the thread's.
    assert!(
        !assistant_texts(&paused.thread.context).contains(&"hola".to_owned()),
        "{:#?}",
        paused.thread.context
    );
    let id = host.open_interrupt("t1").await;
    let wrong = host.approve_on("desk_graph", "t1", "nope", true).await.unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InterruptMismatch);
    let done = host.approve_on("desk_graph", "t1", &id, true).await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    assert_eq!(host.tools.calls_of("refund"), 1);
    assert_eq!(
        tool_outputs(&done.thread.context),
        [json!("hola"), json!("Refunded 1042.")]
    );
    assert_eq!(
        assistant_texts(&done.thread.context).last().map(String::as_str),
        Some("Done: Refunded 1042.")
    );
    // Each agent call is recorded with the agent's own conversation.
    let calls: Vec<Value> = host
        .records("t1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "agent_call")
        .map(|record| record["fields"].clone())
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["agent"], "spanish");
    assert_eq!(calls[0]["outcome"], "completed");
    let inner: Vec<String> = calls[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(inner, ["user", "assistant", "tool", "assistant"], "{:#?}", calls[1]);
    assert_eq!(
        calls[1]["messages"][0]["content"][0]["text"], "1042",
        "the call's only string is its input"
    );
    let roles: Vec<Role> = done.thread.context.iter().map(|message| message.role).collect();
    assert!(
        roles.iter().filter(|role| **role == Role::User).count() == 1,
        "{roles:?}"
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_an_agent_tool_are_a_tool_error_and_run_nothing() {
    let artifact = compile_patched(DESK, |artifact| {
        desk_turns(artifact);
        let desk = artifact.agents.get_mut("desk").unwrap();
        desk.agent_tools = vec![AgentTool {
            tool_name: "spanish".into(),
            agent: "spanish".into(),
            description: "Translates a text to Spanish.".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "integer"}}, "required": ["text"]})
                .into(),
        }];
        let script = artifact.models.get_mut("desk_model").unwrap().script.as_mut().unwrap();
        script.turns.remove(1);
    });
    let host = Host::from_artifact(artifact, FakeTools::new(), Models::Scripted, dev());
    let done = host.say_to("desk_graph", "t1", "Translate hello.").await.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let outputs = tool_outputs(&done.thread.context);
    assert_eq!(outputs.len(), 1);
    assert!(
        outputs[0].as_str().unwrap().contains("invalid arguments"),
        "{outputs:?}"
    );
    let calls = host
        .records("t1")
        .await
        .into_iter()
        .filter(|record| record["kind"] == "agent_call")
        .count();
    assert_eq!(calls, 0, "the agent never ran");
}
