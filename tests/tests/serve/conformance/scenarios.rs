//! The requests of each §17 scenario and the facts each reply shows. The same function runs
//! against tenx and against the reference, so both see exactly the same requests; which facts
//! must agree, and where the contract wants them to differ, is `expected`'s business.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::Step;
use super::target::{
    Reply, Target, block_types, is_interrupt_id, is_uuid, key_shape, outcome, roles, sign, step, text_of, token, user,
};

/// Runs scenario `id` against `target`; every fact is written without this run's thread tag.
pub async fn run(id: &str, target: &Target) -> Vec<Step> {
    let mut steps = steps(id, target).await;
    for step in &mut steps {
        for value in step.facts.values_mut() {
            *value = target.untag(value);
        }
    }
    steps
}

async fn steps(id: &str, target: &Target) -> Vec<Step> {
    match id {
        "1" => ping(target).await,
        "2" => echo(target).await,
        "3" => full(target).await,
        "4" => fresh_thread(target).await,
        "5" => malformed(target).await,
        "5p" => malformed_production(target).await,
        "6" => client_tool_call(target).await,
        "7" => interrupt(target).await,
        "8" => paused_message(target).await,
        "9" => resume(target).await,
        "10" => cancel(target).await,
        "11" => double(target).await,
        "12" => resume_nothing(target).await,
        "13" => tool(target).await,
        "14" => remote(target).await,
        "15" => stream(target).await,
        "16" => boom(target).await,
        "16p" => boom_production(target).await,
        "17" => recursion(target).await,
        "18" => threads(target).await,
        "19" => stop(target).await,
        "20" => auth(target).await,
        "21" => rate_limit(target).await,
        "22" => size(target).await,
        _ => panic!("no scenario {id}"),
    }
}

/// `{"messages": [U(text)], "config": {"thread_id": thread}}` plus `extra` keys.
fn input(text: &str, thread: &str, extra: Value) -> Value {
    let mut body = json!({"messages": [user(text)], "config": {"thread_id": thread}});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

/// A resume of `thread` with `value`.
fn resume_body(value: Value, thread: &str) -> Value {
    json!({"resume": value, "config": {"thread_id": thread}})
}

/// The outcome, the roles of `data.messages` and the last message's text.
fn invoked(reply: &Reply) -> Vec<(&'static str, Value)> {
    let mut facts = outcome(reply);
    let messages = &reply.body["data"]["messages"];
    facts.push(("roles", roles(messages)));
    facts.push((
        "last_text",
        messages
            .as_array()
            .and_then(|all| all.last())
            .map(text_of)
            .unwrap_or(Value::Null),
    ));
    facts
}

/// The paused state of a thread, read back.
async fn paused_state(target: &Target, thread: &str) -> Vec<(&'static str, Value)> {
    let reply = target.get(&format!("/v1/threads/{thread}/state")).await;
    let meta = &reply.body["data"]["state"]["execution_meta"];
    let interrupt = &meta["interrupt_data"]["interrupt"];
    let mut facts = outcome(&reply);
    facts.extend([
        ("execution_status", meta["status"].clone()),
        ("interrupt_reason", meta["interrupt_reason"].clone()),
        ("interrupt_id_shape", json!(is_interrupt_id(&interrupt["id"]))),
        ("interrupt_key", key_shape(&interrupt["key"])),
        ("interrupt_node", interrupt["node"].clone()),
        ("interrupt_message", interrupt["message"].clone()),
        ("interrupt_reason_field", interrupt["reason"].clone()),
    ]);
    facts
}

/// The open interrupt's id on `thread`.
async fn open_interrupt(target: &Target, thread: &str) -> Value {
    let reply = target.get(&format!("/v1/threads/{thread}/state")).await;
    reply.body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"].clone()
}

async fn ping(target: &Target) -> Vec<Step> {
    let reply = target.get("/ping").await;
    let header = reply
        .headers
        .get("x-request-id")
        .and_then(|value| value.to_str().ok())
        .map(|value| json!(value))
        .unwrap_or(Value::Null);
    let mut facts = outcome(&reply);
    facts.extend([
        ("data", reply.body["data"].clone()),
        ("metadata_message", reply.body["metadata"]["message"].clone()),
        ("request_id_is_uuid", json!(is_uuid(&header))),
        (
            "header_is_metadata_request_id",
            json!(header == reply.body["metadata"]["request_id"]),
        ),
        ("x_timestamp", json!(reply.headers.contains_key("x-timestamp"))),
        (
            "security_headers",
            json!(
                [
                    "x-content-type-options",
                    "x-frame-options",
                    "content-security-policy",
                    "referrer-policy"
                ]
                .iter()
                .all(|name| reply.headers.contains_key(*name))
            ),
        ),
    ]);
    vec![step("ping", facts)]
}

async fn echo(target: &Target) -> Vec<Step> {
    let thread = target.thread("t1");
    let reply = target
        .post("/v1/graph/invoke", input("hello", &thread, json!({})))
        .await;
    let data = &reply.body["data"];
    let mut facts = invoked(&reply);
    facts.extend([
        ("first_text", text_of(&data["messages"][0])),
        ("meta", target.untag(&data["meta"])),
        ("state", data["state"].clone()),
        ("context", data["context"].clone()),
        ("summary", data["summary"].clone()),
    ]);
    vec![step("invoke", facts)]
}

async fn full(target: &Target) -> Vec<Step> {
    let thread = target.thread("t3");
    target
        .post("/v1/graph/invoke", input("hello", &thread, json!({})))
        .await;
    let reply = target
        .post(
            "/v1/graph/invoke",
            input("hello", &thread, json!({"response_granularity": "full"})),
        )
        .await;
    let data = &reply.body["data"];
    let meta = &data["state"]["execution_meta"];
    let mut facts = outcome(&reply);
    facts.extend([
        ("execution_status", meta["status"].clone()),
        ("current_node", meta["current_node"].clone()),
        ("step", meta["step"].clone()),
        ("context_roles", roles(&data["state"]["context"])),
        ("context_len", json!(data["context"].as_array().map(Vec::len))),
        ("is_new_thread", data["meta"]["is_new_thread"].clone()),
    ]);
    vec![step("full", facts)]
}

async fn fresh_thread(target: &Target) -> Vec<Step> {
    let reply = target.post("/v1/graph/invoke", json!({"messages": [user("hi")]})).await;
    let thread = reply.body["data"]["meta"]["thread_id"].clone();
    let mut facts = outcome(&reply);
    facts.push(("thread_id_is_uuid", json!(is_uuid(&thread))));
    let list = target.get("/v1/threads").await;
    let listed = list.body["data"]["threads"]
        .as_array()
        .is_some_and(|threads| threads.iter().any(|t| t["thread_id"] == thread));
    let mut list_facts = outcome(&list);
    list_facts.push(("lists_the_thread", json!(listed)));
    vec![step("invoke", facts), step("list", list_facts)]
}

/// The outcome and the first validation detail.
fn detail(reply: &Reply) -> Vec<(&'static str, Value)> {
    let mut facts = outcome(reply);
    let first = &reply.body["error"]["details"][0];
    facts.extend([("loc", first["loc"].clone()), ("type", first["type"].clone())]);
    facts
}

async fn malformed(target: &Target) -> Vec<Step> {
    let thread = target.thread("bad");
    let empty = target.post("/v1/graph/invoke", json!({"messages": []})).await;
    let mut empty_facts = detail(&empty);
    empty_facts.push(("msg", empty.body["error"]["details"][0]["msg"].clone()));
    let not_json = target
        .read(
            target
                .request(Method::POST, "/v1/graph/invoke")
                .header("content-type", "application/json")
                .body("not json"),
        )
        .await;
    let zero = target
        .post("/v1/graph/invoke", input("x", &thread, json!({"recursion_limit": 0})))
        .await;
    let bogus = target
        .post(
            "/v1/graph/invoke",
            json!({"messages": [{"role": "bogus", "content": [{"type": "text", "text": "x"}]}]}),
        )
        .await;
    let plain = target
        .post(
            "/v1/graph/invoke",
            json!({"messages": [{"role": "user", "content": "plain"}]}),
        )
        .await;
    vec![
        step("empty_messages", empty_facts),
        step("not_json", detail(&not_json)),
        step("recursion_limit_0", detail(&zero)),
        step("role_bogus", detail(&bogus)),
        step("content_string", detail(&plain)),
    ]
}

async fn malformed_production(target: &Target) -> Vec<Step> {
    let reply = target
        .send(
            Method::POST,
            "/v1/graph/invoke",
            Some(&json!({"messages": [], "config": {"thread_id": target.thread("badp")}})),
            Some(&alice()),
        )
        .await;
    let mut facts = outcome(&reply);
    facts.extend([
        ("details", reply.body["error"]["details"].clone()),
        ("metadata_message", reply.body["metadata"]["message"].clone()),
    ]);
    vec![step("empty_messages", facts)]
}

async fn client_tool_call(target: &Target) -> Vec<Step> {
    let thread = target.thread("tc");
    let call = json!({"role": "user", "content": [{"type": "tool_call", "id": "c1", "name": "add", "args": {"a": 1, "b": 2}}]});
    let reply = target
        .post(
            "/v1/graph/invoke",
            json!({"messages": [call], "config": {"thread_id": thread}}),
        )
        .await;
    let mut facts = outcome(&reply);
    facts.push(("detail_msg", reply.body["error"]["details"][0]["msg"].clone()));
    vec![step("tool_call_block", facts)]
}

async fn interrupt(target: &Target) -> Vec<Step> {
    let thread = target.thread("ti");
    let reply = target
        .post("/v1/graph/invoke", input("interrupt please", &thread, json!({})))
        .await;
    vec![
        step("invoke", invoked(&reply)),
        step("state", paused_state(target, &thread).await),
    ]
}

async fn paused_message(target: &Target) -> Vec<Step> {
    let thread = target.thread("ti");
    target
        .post("/v1/graph/invoke", input("interrupt please", &thread, json!({})))
        .await;
    let reply = target
        .post("/v1/graph/invoke", input("hello?", &thread, json!({})))
        .await;
    vec![step("message_while_paused", outcome(&reply))]
}

async fn resume(target: &Target) -> Vec<Step> {
    let thread = target.thread("ti");
    target
        .post("/v1/graph/invoke", input("interrupt please", &thread, json!({})))
        .await;
    let first = target
        .post("/v1/graph/invoke", resume_body(json!({"ok": true}), &thread))
        .await;
    let again = target
        .post("/v1/graph/invoke", resume_body(json!({"ok": true}), &thread))
        .await;
    vec![step("resume", invoked(&first)), step("resume_again", outcome(&again))]
}

async fn cancel(target: &Target) -> Vec<Step> {
    let thread = target.thread("tn");
    target
        .post("/v1/graph/invoke", input("interrupt please", &thread, json!({})))
        .await;
    let reply = target.post("/v1/graph/invoke", resume_body(Value::Null, &thread)).await;
    vec![step("resume_null", invoked(&reply))]
}

async fn double(target: &Target) -> Vec<Step> {
    let thread = target.thread("td");
    let first = target
        .post("/v1/graph/invoke", input("double", &thread, json!({})))
        .await;
    let first_state = paused_state(target, &thread).await;
    let first_id = open_interrupt(target, &thread).await;
    let second = target
        .post("/v1/graph/invoke", resume_body(json!({"ok": true}), &thread))
        .await;
    let mut second_state = paused_state(target, &thread).await;
    let second_id = open_interrupt(target, &thread).await;
    second_state.push(("a_new_id", json!(second_id != first_id && is_interrupt_id(&second_id))));
    let last = target
        .post("/v1/graph/invoke", resume_body(json!({"ok": true}), &thread))
        .await;

    // A plain value as the answer, as the reference's own probe sends it.
    let plain = target.thread("td-plain");
    target
        .post("/v1/graph/invoke", input("double", &plain, json!({})))
        .await;
    let answer_a = target.post("/v1/graph/invoke", resume_body(json!("A"), &plain)).await;
    vec![
        step("invoke", invoked(&first)),
        step("first_pause", first_state),
        step("resume_1", invoked(&second)),
        step("second_pause", second_state),
        step("resume_2", invoked(&last)),
        step("resume_with_a_string", outcome(&answer_a)),
    ]
}

async fn resume_nothing(target: &Target) -> Vec<Step> {
    let reply = target.post("/v1/graph/invoke", json!({"resume": 1})).await;
    vec![step("resume_without_thread", outcome(&reply))]
}

async fn tool(target: &Target) -> Vec<Step> {
    let thread = target.thread("tt");
    let reply = target.post("/v1/graph/invoke", input("tool", &thread, json!({}))).await;
    let messages = &reply.body["data"]["messages"];
    let result = &messages[2]["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_result").cloned())
        .unwrap_or(Value::Null);
    let mut facts = invoked(&reply);
    facts.extend([
        ("call_name", messages[1]["tools_calls"][0]["function"]["name"].clone()),
        (
            "call_arguments",
            messages[1]["tools_calls"][0]["function"]["arguments"]
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .unwrap_or(Value::Null),
        ),
        ("result_output", result["output"].clone()),
        ("result_status", result["status"].clone()),
        ("result_is_error", result["is_error"].clone()),
    ]);

    let missing_thread = target.thread("tm");
    let missing = target
        .post("/v1/graph/invoke", input("missing", &missing_thread, json!({})))
        .await;
    let messages = &missing.body["data"]["messages"];
    let tool_message = messages
        .as_array()
        .and_then(|all| all.iter().find(|m| m["role"] == "tool").cloned())
        .unwrap_or(Value::Null);
    let result = tool_message["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_result").cloned())
        .unwrap_or(Value::Null);
    let mut missing_facts = invoked(&missing);
    missing_facts.extend([
        ("tool_blocks", block_types(&tool_message)),
        ("result_output", result["output"].clone()),
        ("result_is_error", result["is_error"].clone()),
    ]);
    vec![step("tool", facts), step("unknown_tool", missing_facts)]
}

async fn remote(target: &Target) -> Vec<Step> {
    let thread = target.thread("tr");
    let reply = target
        .post("/v1/graph/invoke", input("remote", &thread, json!({})))
        .await;
    let last = reply.body["data"]["messages"]
        .as_array()
        .and_then(|all| all.last().cloned())
        .unwrap_or(Value::Null);
    let block = last["content"][0].clone();
    let mut facts = invoked(&reply);
    facts.extend([
        ("last_role", last["role"].clone()),
        ("last_blocks", block_types(&last)),
        ("block_name", block["name"].clone()),
        ("block_tool_type", block["tool_type"].clone()),
        ("block_args", block["args"].clone()),
    ]);
    let state = target.get(&format!("/v1/threads/{thread}/state")).await;
    let meta = &state.body["data"]["state"]["execution_meta"];
    let mut state_facts = outcome(&state);
    state_facts.extend([
        ("execution_status", meta["status"].clone()),
        ("interrupt_reason", meta["interrupt_reason"].clone()),
    ]);
    let result = |call_id: &Value| {
        json!({
            "messages": [{"role": "tool", "content": [{"type": "tool_result", "call_id": call_id, "output": "client says hi"}]}],
            "config": {"thread_id": thread},
        })
    };
    let wrong = target.post("/v1/graph/invoke", result(&json!("bogus"))).await;
    let right = target.post("/v1/graph/invoke", result(&block["id"])).await;
    vec![
        step("invoke", facts),
        step("state", state_facts),
        step("wrong_call_id", outcome(&wrong)),
        step("right_call_id", invoked(&right)),
    ]
}

/// The chunks of an NDJSON stream.
fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or(Value::String(line.to_owned())))
        .collect()
}

async fn stream(target: &Target) -> Vec<Step> {
    let thread = target.thread("ts");
    let reply = target.post("/v1/graph/stream", input("hi", &thread, json!({}))).await;
    let chunks = lines(&reply.text);
    let whole: Vec<&Value> = chunks.iter().filter(|c| c["message"]["delta"] != true).collect();
    let content_type = reply
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let facts = vec![
        ("status", json!(reply.status)),
        ("event_stream", json!(content_type.starts_with("text/event-stream"))),
        (
            "whole_chunks",
            json!(
                whole
                    .iter()
                    .map(|c| json!([c["event"], c["message"]["role"]]))
                    .collect::<Vec<_>>()
            ),
        ),
        (
            "last_text",
            whole.last().map(|c| text_of(&c["message"])).unwrap_or(Value::Null),
        ),
        (
            "every_chunk_names_the_thread",
            json!(chunks.iter().all(|c| c["metadata"]["thread_id"] == json!(thread))),
        ),
        ("delta_chunks", json!(chunks.len() - whole.len())),
    ];
    let full_thread = target.thread("ts-full");
    let full = target
        .post(
            "/v1/graph/stream",
            input("hi", &full_thread, json!({"response_granularity": "full"})),
        )
        .await;
    let chunks = lines(&full.text);
    let last = chunks.last().cloned().unwrap_or(Value::Null);
    let full_facts = vec![
        ("status", json!(full.status)),
        ("last_event", last["event"].clone()),
        ("last_status", last["data"]["status"].clone()),
        (
            "is_interrupted_is_bool",
            json!(last["data"]["is_interrupted"].is_boolean()),
        ),
    ];
    vec![step("low", facts), step("full", full_facts)]
}

async fn boom(target: &Target) -> Vec<Step> {
    let thread = target.thread("tb");
    let reply = target.post("/v1/graph/stream", input("boom", &thread, json!({}))).await;
    let chunks = lines(&reply.text);
    let errors: Vec<&Value> = chunks.iter().filter(|c| c["event"] == "error").collect();
    let facts = vec![
        ("status", json!(reply.status)),
        ("has_error_chunk", json!(!errors.is_empty())),
        (
            "reason_names_node_001",
            json!(errors.iter().any(|c| {
                c["data"]["reason"]
                    .as_str()
                    .is_some_and(|reason| reason.contains("[NODE_001] Error in node 'agent'"))
            })),
        ),
    ];
    let invoke_thread = target.thread("tb-invoke");
    let invoke = target
        .post("/v1/graph/invoke", input("boom", &invoke_thread, json!({})))
        .await;
    vec![step("stream", facts), step("invoke_dev", outcome(&invoke))]
}

/// Alice's token, for tenx's production server (the reference's has no auth and ignores it).
fn alice() -> String {
    token("alice", json!({}))
}

async fn boom_production(target: &Target) -> Vec<Step> {
    let thread = target.thread("tbp");
    let reply = target
        .send(
            Method::POST,
            "/v1/graph/invoke",
            Some(&input("boom", &thread, json!({}))),
            Some(&alice()),
        )
        .await;
    let mut facts = outcome(&reply);
    facts.push(("details", reply.body["error"]["details"].clone()));
    vec![step("invoke", facts)]
}

async fn recursion(target: &Target) -> Vec<Step> {
    let thread = target.thread("tl");
    let reply = target
        .send(
            Method::POST,
            "/v1/graph/invoke",
            Some(&input("loop", &thread, json!({"recursion_limit": 5}))),
            Some(&alice()),
        )
        .await;
    vec![step("invoke", outcome(&reply))]
}

async fn threads(target: &Target) -> Vec<Step> {
    let limit = target.get("/v1/threads?limit=0").await;
    let nope = target.thread("nope");
    let thread = target.get(&format!("/v1/threads/{nope}")).await;
    let mut thread_facts = outcome(&thread);
    thread_facts.push(("data", thread.body["data"].clone()));
    let state = target.get(&format!("/v1/threads/{nope}/state")).await;
    let mut state_facts = outcome(&state);
    state_facts.push(("data", state.body["data"].clone()));

    let kept = target.thread("del");
    target.post("/v1/graph/invoke", input("hello", &kept, json!({}))).await;
    let no_body = target
        .send(Method::DELETE, &format!("/v1/threads/{kept}"), None, None)
        .await;
    let deleted = target
        .send(
            Method::DELETE,
            &format!("/v1/threads/{kept}"),
            Some(&json!({"config": {}})),
            None,
        )
        .await;
    let mut deleted_facts = outcome(&deleted);
    deleted_facts.push(("data", deleted.body["data"].clone()));
    let unknown = target
        .send(
            Method::DELETE,
            &format!("/v1/threads/{}", target.thread("x")),
            Some(&json!({"config": {}})),
            None,
        )
        .await;
    vec![
        step("limit_0", outcome(&limit)),
        step("get_unknown", thread_facts),
        step("state_unknown", state_facts),
        step("delete_without_body", outcome(&no_body)),
        step("delete", deleted_facts),
        step("delete_unknown", outcome(&unknown)),
    ]
}

async fn stop(target: &Target) -> Vec<Step> {
    let thread = target.thread("slow3");
    let runner = target.clone();
    let body = input("slow", &thread, json!({}));
    let started = Instant::now();
    let running = tokio::spawn(async move { runner.post("/v1/graph/invoke", body).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stopped = target.post("/v1/graph/stop", json!({"thread_id": thread})).await;
    let mut stop_facts = outcome(&stopped);
    stop_facts.push(("data", stopped.body["data"].clone()));
    let invoke = running.await.unwrap();
    let mut invoke_facts = invoked(&invoke);
    invoke_facts.push(("returned_within_4s", json!(started.elapsed() < Duration::from_secs(4))));
    let state = target.get(&format!("/v1/threads/{thread}/state")).await;
    let meta = &state.body["data"]["state"]["execution_meta"];
    let mut state_facts = outcome(&state);
    state_facts.extend([
        ("execution_status", meta["status"].clone()),
        ("interrupt_reason", meta["interrupt_reason"].clone()),
    ]);

    let done = target.thread("t19");
    target.post("/v1/graph/invoke", input("hello", &done, json!({}))).await;
    let completed = target.post("/v1/graph/stop", json!({"thread_id": done})).await;
    let mut completed_facts = outcome(&completed);
    completed_facts.push(("data", completed.body["data"].clone()));
    let unknown = target
        .post("/v1/graph/stop", json!({"thread_id": target.thread("ghost")}))
        .await;
    let mut unknown_facts = outcome(&unknown);
    unknown_facts.push(("data", unknown.body["data"].clone()));
    let blank = target.post("/v1/graph/stop", json!({"thread_id": "  "})).await;
    vec![
        step("stop_running", stop_facts),
        step("stopped_invoke", invoke_facts),
        step("stopped_state", state_facts),
        step("stop_completed", completed_facts),
        step("stop_unknown", unknown_facts),
        step("stop_blank", outcome(&blank)),
    ]
}

/// The outcome plus the `WWW-Authenticate` header.
fn challenged(reply: &Reply) -> Vec<(&'static str, Value)> {
    let mut facts = outcome(reply);
    facts.push((
        "www_authenticate",
        reply
            .headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(|v| json!(v))
            .unwrap_or(Value::Null),
    ));
    facts
}

async fn auth(target: &Target) -> Vec<Step> {
    let own = target.thread("own1");
    let body = input("hi", &own, json!({}));
    let none = target.send(Method::POST, "/v1/graph/invoke", Some(&body), None).await;
    let expired_token = sign(&json!({"user_id": "alice", "exp": super::super::harness::now() - 10}));
    let expired = target
        .send(Method::POST, "/v1/graph/invoke", Some(&body), Some(&expired_token))
        .await;
    let alice = token("alice", json!({}));
    let bob = token("bob", json!({}));
    let created = target
        .send(Method::POST, "/v1/graph/invoke", Some(&body), Some(&alice))
        .await;
    let bob_invoke = target
        .send(
            Method::POST,
            "/v1/graph/invoke",
            Some(&input("mine now", &own, json!({}))),
            Some(&bob),
        )
        .await;
    let bob_state = target
        .send(Method::GET, &format!("/v1/threads/{own}/state"), None, Some(&bob))
        .await;
    let bob_unknown = target
        .send(
            Method::GET,
            &format!("/v1/threads/{}/state", target.thread("nobody")),
            None,
            Some(&bob),
        )
        .await;
    let bob_list = target.send(Method::GET, "/v1/threads", None, Some(&bob)).await;
    let mut list_facts = outcome(&bob_list);
    list_facts.push(("threads", bob_list.body["data"]["threads"].clone()));
    let scoped = token("carol", json!({"scopes": ["graph:invoke"]}));
    let scoped_stream = target
        .send(
            Method::POST,
            "/v1/graph/stream",
            Some(&input("hi", &target.thread("carol"), json!({}))),
            Some(&scoped),
        )
        .await;
    vec![
        step("no_token", challenged(&none)),
        step("expired", challenged(&expired)),
        step("alice_creates", outcome(&created)),
        step("bob_invokes", outcome(&bob_invoke)),
        step("bob_reads_state", outcome(&bob_state)),
        step("bob_reads_unknown", outcome(&bob_unknown)),
        step("bob_lists", list_facts),
        step("scope_missing", outcome(&scoped_stream)),
    ]
}

/// The rate-limit headers of a reply.
fn limited(reply: &Reply) -> Vec<(&'static str, Value)> {
    let header = |name: &str| {
        reply
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| json!(v))
            .unwrap_or(Value::Null)
    };
    let mut facts = outcome(reply);
    facts.extend([
        ("x_ratelimit_limit", header("x-ratelimit-limit")),
        ("x_ratelimit_remaining", header("x-ratelimit-remaining")),
        ("has_reset", json!(reply.headers.contains_key("x-ratelimit-reset"))),
        (
            "has_reset_after",
            json!(reply.headers.contains_key("x-ratelimit-reset-after")),
        ),
        ("has_retry_after", json!(reply.headers.contains_key("retry-after"))),
    ]);
    if reply.status == 429 {
        let error = &reply.body["error"];
        facts.extend([
            ("limit", error["limit"].clone()),
            ("window_seconds", error["window_seconds"].clone()),
            ("retry_after_is_number", json!(error["retry_after_seconds"].is_number())),
            ("metadata_keys", metadata_keys(&reply.body)),
        ]);
    }
    facts
}

/// The sorted keys of a reply's `metadata`.
fn metadata_keys(body: &Value) -> Value {
    body["metadata"]
        .as_object()
        .map(|meta| meta.keys().cloned().collect())
        .unwrap_or(Value::Null)
}

async fn rate_limit(target: &Target) -> Vec<Step> {
    let mut steps = Vec::new();
    for name in ["request_1", "request_2", "request_3", "request_4", "request_5"] {
        let reply = target.get("/v1/threads").await;
        steps.push(step(name, limited(&reply)));
    }
    let ping = target.get("/ping").await;
    steps.push(step("ping_after", outcome(&ping)));
    steps
}

async fn size(target: &Target) -> Vec<Step> {
    let big = input(&"x".repeat(3000), &target.thread("big"), json!({}));
    let reply = target.post("/v1/graph/invoke", big).await;
    let mut facts = outcome(&reply);
    facts.extend([
        ("metadata_keys", metadata_keys(&reply.body)),
        ("metadata_status", reply.body["metadata"]["status"].clone()),
        ("max_size_bytes", reply.body["error"]["max_size_bytes"].clone()),
    ]);
    vec![step("too_large", facts)]
}
