//! Parallel branches over HTTP: a run whose branches each ask an approval pauses with one open
//! question at a time; the approvals inbox lists it with its own interrupt id, an approver answers
//! it through `/v1/approvals/{id}/answer`, and the next branch's question opens, until the join.
//! Remote (client-run) calls inside branches go to the client the same way, one at a time. The
//! first program is edited the way the compiler writes a fork (see `tests/tests/engine/forks.rs`).

use serde_json::{Value, json};
use tenx_artifact::{Fork, ForkKind, TrustPolicy, load, seal};
use tenx_engine::testing::FakeTools;

use super::harness::{Server, compile_named, token, user, with_auth};

const REFUNDS: &str = r#"
import std.approval.yes_no

model a_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "A" } }, { text: "A handled." }]
}
model b_model {
  provider = scripted
  turns    = [{ tool: "refund", arguments: { order_id: "B" } }, { text: "B handled." }]
}
model desk_model {
  provider = scripted
  turns    = [{ text: "Two refunds to look at." }, { text: "Both looked at." }]
}

tool refund(order_id: string "The order") -> string {
  description = "Refund an order."
  risk = high
  idempotency_key = "refund-{order_id}"
  approval {
    message   = "Refund order {order_id}?"
    response  = yes_no
    on_reject = "Refund declined."
    approvers = [role("support_lead")]
  }
  run = http(POST, "${PAYMENTS_URL}/refunds", timeout: 5s)
}

agent desk {
  model  = desk_model
  prompt = "Split the refunds."
}
agent a {
  model  = a_model
  prompt = "Refund order A."
  tools  = [refund]
}
agent b {
  model  = b_model
  prompt = "Refund order B."
  tools  = [refund]
}
agent summary {
  model  = desk_model
  prompt = "Say what happened."
}

graph refunds {
  entry = desk
  nodes = [desk, a, b, summary]

  state {
    pick: string = "a" "Only here so that both branches are reachable before the fork replaces the route"
  }

  route desk {
    when pick == "a" -> a
    else             -> b
  }
  a -> summary
  b -> summary
  summary -> END
}
"#;

fn forked() -> tenx_artifact::LoadedArtifact {
    let mut artifact = compile_named("forks.tenx", REFUNDS).artifact;
    let graph = artifact.graphs.get_mut("refunds").unwrap();
    graph.routes.clear();
    graph.forks = vec![Fork {
        from: "desk".into(),
        kind: ForkKind::Parallel,
        branches: vec!["a".into(), "b".into()],
        over: None,
        item: None,
        max_concurrency: None,
        join: "summary".into(),
    }];
    load(&seal(artifact).unwrap().to_bytes(), &TrustPolicy::signature_optional()).unwrap()
}

fn inbox(list: &Value) -> Vec<(String, String)> {
    list["data"]["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["interrupt_id"].as_str().unwrap().to_owned(),
                item["normalized_arguments"]["order_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn branch_approvals_reach_the_inbox_one_at_a_time_and_each_answer_continues_its_branch() {
    let tools = FakeTools::new().responds("refund", |call| {
        Ok(json!(format!(
            "refunded {}",
            call.arguments["order_id"].as_str().unwrap_or("?")
        )))
    });
    let server = Server::start(forked(), tools, with_auth()).await;
    let scopes = json!([
        "graph:invoke",
        "checkpointer:read",
        "approvals:read",
        "approvals:answer"
    ]);
    let alice = server.as_user(&token("alice", json!({"roles": ["clerk"], "scopes": scopes})));
    let bob = server.as_user(&token("bob", json!({"roles": ["support_lead"], "scopes": scopes})));

    let (status, body) = alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("Refund A and B.")], "config": {"thread_id": "t1"}, "response_granularity": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let first = body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, list) = bob.get("/v1/approvals").await;
    assert_eq!(
        inbox(&list),
        [(first.clone(), "A".to_owned())],
        "one question at a time: branch a's"
    );
    // alice holds no approver role: refused, and nothing changes.
    let before = server.snapshot("t1").await;
    let (status, refused) = alice
        .post(
            &format!("/v1/approvals/{first}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(server.snapshot("t1").await, before, "a refused answer records nothing");

    let (status, answered) = bob
        .post(
            &format!("/v1/approvals/{first}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!(status, 200, "{answered}");
    let (_, list) = bob.get("/v1/approvals").await;
    let open = inbox(&list);
    assert_eq!(open.len(), 1, "{list}");
    assert_eq!(open[0].1, "B", "branch b's question opened next");
    assert_ne!(open[0].0, first, "with its own interrupt id");
    // The old id answers nothing any more.
    let (status, stale) = bob
        .post(
            &format!("/v1/approvals/{first}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_ne!(status, 200, "{stale}");

    let (status, done) = bob
        .post(
            &format!("/v1/approvals/{}/answer", open[0].0),
            json!({"resume": {"approved": false}}),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    let (_, list) = bob.get("/v1/approvals").await;
    assert!(inbox(&list).is_empty(), "{list}");
    let (status, thread) = alice.get("/v1/threads/t1/state").await;
    assert_eq!(status, 200, "{thread}");
    let texts: Vec<String> = thread["data"]["state"]["context"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .filter_map(|message| message["content"][0]["text"].as_str().map(str::to_owned))
        .filter(|text| !text.is_empty())
        .collect();
    assert_eq!(
        texts,
        ["Two refunds to look at.", "A handled.", "B handled.", "Both looked at."],
        "{thread}"
    );
}

/// Two branches that each ask the client to read a sensor (`run = remote`).
const DEVICES: &str = include_str!("../common/parallel_devices.tenx");

/// The `remote_tool_call` block of an invoke answer's last message.
fn remote_call(body: &Value) -> Value {
    let last = body["data"]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"][0]["type"], "remote_tool_call", "{body}");
    last["content"][0].clone()
}

#[tokio::test]
async fn remote_calls_inside_branches_go_to_the_client_one_at_a_time_over_http() {
    let server = Server::start(
        compile_named("devices.tenx", DEVICES),
        FakeTools::new(),
        tenx_server::ServerSettings::default(),
    )
    .await;
    let invoke =
        |messages: Value| json!({"messages": messages, "config": {"thread_id": "d1"}, "response_granularity": "full"});
    let result = |id: &Value, output: &str| json!([{"role": "tool", "content": [{"type": "tool_result", "call_id": id, "output": output}]}]);
    let (status, body) = server
        .post("/v1/graph/invoke", invoke(json!([user("Read both.")])))
        .await;
    assert_eq!(status, 200, "{body}");
    let meta = &body["data"]["state"]["execution_meta"];
    assert_eq!(meta["status"], "interrupted_after", "{meta}");
    assert_eq!(meta["interrupt_reason"], "remote_tool_call");
    let phone = remote_call(&body);
    assert_eq!(phone["args"], json!({"sensor": "phone"}));

    let before = server.snapshot("d1").await;
    let (status, refused) = server.post("/v1/graph/invoke", invoke(json!([user("hello?")]))).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["code"], "REMOTE_TOOL_PENDING");
    assert_eq!(server.snapshot("d1").await, before, "a refused message records nothing");

    let (status, body) = server
        .post("/v1/graph/invoke", invoke(result(&phone["id"], "42 steps")))
        .await;
    assert_eq!(status, 200, "{body}");
    let watch = remote_call(&body);
    assert_eq!(
        watch["args"],
        json!({"sensor": "watch"}),
        "the other branch's call opens next"
    );
    let (status, again) = server
        .post("/v1/graph/invoke", invoke(result(&phone["id"], "43 steps")))
        .await;
    assert_eq!(status, 422, "{again}");
    assert_eq!(again["error"]["code"], "TOOL_RESULT_DUPLICATE");

    let (status, body) = server
        .post("/v1/graph/invoke", invoke(result(&watch["id"], "60 bpm")))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["state"]["execution_meta"]["status"], "completed", "{body}");
    let (_, thread) = server.get("/v1/threads/d1/state").await;
    let texts: Vec<String> = thread["data"]["state"]["context"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .filter_map(|message| message["content"][0]["text"].as_str().map(str::to_owned))
        .filter(|text| !text.is_empty())
        .collect();
    assert_eq!(
        texts,
        [
            "Asking both devices.",
            "Phone says 42 steps.",
            "Watch says 60 bpm.",
            "Both read."
        ]
    );
}
