//! Who may act on another user's thread, and in which graph (security review F2, F3).
//!
//! F2: with auth on, a resume (or any run) on another user's thread is refused with D7's 403
//! before anything about its question is told: not that it waits at one, nor the question's id,
//! nor that it expired. An approver the question names may still answer it. A refusal records
//! nothing.
//!
//! F3: in an artifact that serves several graphs, a thread keeps the graph it was started with:
//! an answer (through the approvals API or a resume) runs there without naming it, and a request
//! naming another graph is refused. A new thread still names its graph.

use std::sync::Arc;

use serde_json::{Value, json};
use tenx_engine::testing::ManualClock;

use super::harness::{Server, Setup, compile_named, refund_example, refund_tools, token, user, with_auth};

const REFUND: &str = "Refund order 1042, 59.00";
const WRONG_ID: &str = "int_00000000000000000000000000000000";

/// `alice` asks (owns the threads), `bob` leads support (an approver), `carol` holds no role.
struct People {
    server: Server,
    alice: Server,
    bob: Server,
    carol: Server,
}

fn people(server: Server) -> People {
    let scopes = json!([
        "graph:invoke",
        "graph:stream",
        "checkpointer:read",
        "approvals:read",
        "approvals:answer"
    ]);
    People {
        alice: server.as_user(&token("alice", json!({"roles": ["support_lead"], "scopes": scopes}))),
        bob: server.as_user(&token("bob", json!({"roles": ["support_lead"], "scopes": scopes}))),
        carol: server.as_user(&token("carol", json!({"roles": ["viewer"], "scopes": scopes}))),
        server,
    }
}

/// `asker` asks for a refund on `thread` (in `graph`, when named); the open interrupt's id.
async fn ask(asker: &Server, thread: &str, graph: Option<&str>) -> String {
    let mut body = json!({"messages": [user(REFUND)], "config": {"thread_id": thread}, "response_granularity": "full"});
    if let Some(graph) = graph {
        body["graph"] = json!(graph);
    }
    let (status, body) = asker.post("/v1/graph/invoke", body).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["state"]["execution_meta"]["interrupt_data"]["interrupt"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A resume of `thread` with `resume`, naming `interrupt_id` when given.
fn resume(thread: &str, resume: Value, interrupt_id: Option<&str>) -> Value {
    let mut body = json!({"resume": resume, "config": {"thread_id": thread}});
    if let Some(id) = interrupt_id {
        body["interrupt_id"] = json!(id);
    }
    body
}

fn code(body: &Value) -> Option<&str> {
    body["error"]["code"].as_str()
}

/// D7's refusal, telling nothing of the question `id`.
fn assert_not_authorized(status: u16, body: &Value, id: &str) {
    assert_eq!((status, code(body)), (403, Some("HTTPException")), "{body}");
    assert_eq!(body["error"]["message"], "Not authorized to invoke graph", "{body}");
    assert!(
        !body.to_string().contains(id),
        "the refusal names the open interrupt: {body}"
    );
}

#[tokio::test]
async fn a_resume_of_another_users_paused_thread_is_403_whatever_it_names_and_records_nothing() {
    let p = people(Server::start(refund_example(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "u2", None).await;
    let before = p.server.snapshot("u2").await;

    for (name, body) in [
        ("a wrong id", resume("u2", json!({"approved": true}), Some(WRONG_ID))),
        ("the open id", resume("u2", json!({"approved": true}), Some(&id))),
        ("no id", resume("u2", json!({"approved": true}), None)),
        ("a cancel", resume("u2", Value::Null, Some(WRONG_ID))),
        (
            "an invalid answer",
            resume("u2", json!({"nonsense": 1}), Some(WRONG_ID)),
        ),
    ] {
        for route in ["/v1/graph/invoke", "/v1/graph/stream"] {
            let (status, answer) = p.carol.post(route, body.clone()).await;
            eprintln!("{name} on {route}");
            assert_not_authorized(status, &answer, &id);
        }
    }
    // A new message too (D7), and the thread reads as missing.
    let (status, body) = p
        .carol
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "u2"}}),
        )
        .await;
    assert_not_authorized(status, &body, &id);
    assert_eq!(p.carol.get("/v1/threads/u2").await.0, 404);
    assert_eq!(
        p.server.snapshot("u2").await,
        before,
        "a refused resume recorded something"
    );
    assert_eq!(p.server.tools.calls_of("issue_refund"), 0);

    // A thread that does not exist is still D2's answer.
    let (status, body) = p
        .carol
        .post(
            "/v1/graph/invoke",
            resume("nobody", json!({"approved": true}), Some(WRONG_ID)),
        )
        .await;
    assert_eq!((status, code(&body)), (409, Some("INTERRUPT_003")), "{body}");
}

#[tokio::test]
async fn a_resume_of_another_users_finished_thread_is_403_not_nothing_to_resume() {
    let p = people(Server::start(refund_example(), refund_tools(), with_auth()).await);
    let (status, body) = p
        .alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hello")], "config": {"thread_id": "done"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let before = p.server.snapshot("done").await;
    for who in [&p.carol, &p.bob] {
        let (status, body) = who
            .post(
                "/v1/graph/invoke",
                resume("done", json!({"approved": true}), Some(WRONG_ID)),
            )
            .await;
        assert_not_authorized(status, &body, WRONG_ID);
    }
    assert_eq!(p.server.snapshot("done").await, before);
    // Its owner is told there is nothing to resume.
    let (status, body) = p
        .alice
        .post("/v1/graph/invoke", resume("done", json!({"approved": true}), None))
        .await;
    assert_eq!((status, code(&body)), (409, Some("INTERRUPT_003")), "{body}");
}

#[tokio::test]
async fn an_approver_of_another_users_thread_may_still_resume_it() {
    let p = people(Server::start(refund_example(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "t1", None).await;
    let before = p.server.snapshot("t1").await;
    // bob may answer the question, so a stale id is D1's answer to him.
    let (status, body) = p
        .bob
        .post(
            "/v1/graph/invoke",
            resume("t1", json!({"approved": true}), Some(WRONG_ID)),
        )
        .await;
    assert_eq!((status, code(&body)), (409, Some("INTERRUPT_001")), "{body}");
    assert_eq!(p.server.snapshot("t1").await, before);
    let (status, body) = p
        .bob
        .post("/v1/graph/invoke", resume("t1", json!({"approved": true}), Some(&id)))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);
    // bob sends his answer again: it was answered (D2); to anyone else the thread is not theirs.
    let again = resume("t1", json!({"approved": true}), Some(&id));
    let (status, body) = p.bob.post("/v1/graph/invoke", again.clone()).await;
    assert_eq!((status, code(&body)), (409, Some("INTERRUPT_003")), "{body}");
    let (status, body) = p.carol.post("/v1/graph/invoke", again).await;
    assert_not_authorized(status, &body, &id);
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);
}

#[tokio::test]
async fn a_stranger_is_refused_before_expiry_is_told_or_recorded() {
    let clock = Arc::new(ManualClock::new(1_796_083_200_000));
    let setup = Setup {
        clock: Some(clock.clone()),
        ..Setup::default()
    };
    let p = people(Server::start_with(refund_example(), refund_tools(), with_auth(), setup).await);
    let id = ask(&p.alice, "t4", None).await;
    clock.advance(25 * 3600 * 1000);
    let before = p.server.snapshot("t4").await;
    let (status, body) = p
        .carol
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!((status, code(&body)), (403, Some("APPROVER_REFUSED")), "{body}");
    let (status, body) = p
        .carol
        .post("/v1/graph/invoke", resume("t4", json!({"approved": true}), Some(&id)))
        .await;
    assert_not_authorized(status, &body, &id);
    assert_eq!(
        p.server.snapshot("t4").await,
        before,
        "a stranger's answer recorded the expiry"
    );
    // An approver is told it expired.
    let (status, body) = p
        .bob
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!((status, code(&body)), (409, Some("INTERRUPT_EXPIRED")), "{body}");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 0);
}

/// The refund example serving a second graph, `refunds_again`, over the same agent.
fn two_graphs() -> tenx_artifact::LoadedArtifact {
    let path = tenx_tests::repo_root().join("examples/refund_approval/main.tenx");
    let text = std::fs::read_to_string(path).unwrap();
    // Its `test` blocks name no graph, which only a one-graph program allows.
    let mut text = text.split("\ntest ").next().unwrap().to_owned();
    text.push_str("\ngraph refunds_again {\n  entry = support\n  nodes = [support]\n\n  support -> END\n}\n");
    compile_named("two_graphs.tenx", &text)
}

#[tokio::test]
async fn an_answer_through_the_approvals_api_runs_in_the_graph_its_thread_records() {
    let p = people(Server::start(two_graphs(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "g1", Some("refunds_again")).await;
    let (status, list) = p.bob.get("/v1/approvals").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["data"]["approvals"][0]["graph"], "refunds_again");
    let (status, body) = p
        .bob
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["outcome"], "approved");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);

    // A stranger is refused as in a one-graph artifact, and nothing is recorded.
    let id = ask(&p.alice, "g2", Some("refunds")).await;
    let before = p.server.snapshot("g2").await;
    let (status, body) = p
        .carol
        .post(
            &format!("/v1/approvals/{id}/answer"),
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!((status, code(&body)), (403, Some("APPROVER_REFUSED")), "{body}");
    let (status, body) = p
        .bob
        .post(
            "/v1/approvals/int_unknown/answer",
            json!({"resume": {"approved": true}}),
        )
        .await;
    assert_eq!((status, code(&body)), (404, Some("APPROVAL_NOT_FOUND")), "{body}");
    assert_eq!(p.server.snapshot("g2").await, before);
}

#[tokio::test]
async fn a_resume_in_a_two_graph_artifact_needs_no_graph_and_refuses_another() {
    let p = people(Server::start(two_graphs(), refund_tools(), with_auth()).await);
    let id = ask(&p.alice, "g3", Some("refunds_again")).await;
    let before = p.server.snapshot("g3").await;

    // Naming a graph the thread does not run is refused, and records nothing.
    let mut named = resume("g3", json!({"approved": true}), Some(&id));
    named["graph"] = json!("refunds");
    let (status, body) = p.bob.post("/v1/graph/invoke", named.clone()).await;
    assert_eq!((status, code(&body)), (422, Some("VALIDATION_ERROR")), "{body}");
    assert_eq!(
        body["error"]["message"],
        "thread 'g3' runs graph 'refunds_again', not 'refunds'"
    );
    // A stranger learns nothing, not even the graph.
    let (status, body) = p.carol.post("/v1/graph/invoke", named).await;
    assert_not_authorized(status, &body, &id);
    assert!(!body.to_string().contains("refunds_again"), "{body}");
    assert_eq!(p.server.snapshot("g3").await, before);

    // Without a graph, the thread's own; naming it is fine too.
    let (status, body) = p
        .bob
        .post("/v1/graph/invoke", resume("g3", json!({"approved": true}), Some(&id)))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(p.server.tools.calls_of("issue_refund"), 1);
    let (status, body) = p
        .alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("thanks")], "config": {"thread_id": "g3"}, "graph": "refunds_again"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    // The owner's next message needs no graph either.
    let (status, body) = p
        .alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("bye")], "config": {"thread_id": "g3"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // A new thread still names its graph.
    let (status, body) = p
        .alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "g4"}}),
        )
        .await;
    assert_eq!((status, code(&body)), (422, Some("VALIDATION_ERROR")), "{body}");
    assert_eq!(body["error"]["message"], "the artifact serves 2 graphs; name one");
}
