//! `http` tools against local fake services on 127.0.0.1: what is sent (body, query, key,
//! identity, declared headers), how every answer class maps to a result or a tool error, and the
//! count-per-key service the exactly-once tests use.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers may panic: a panic is a failed test"
)]

mod common;

use std::time::{Duration, Instant};

use common::{artifact, call, http, load, tool, user, vars};
use serde_json::{Value, json};
use tenx_artifact::HttpMethod;
use tenx_engine::Identity;
use tenx_engine::ports::{ToolErrorKind, ToolInvocation, ToolRunner};
use tenx_tools::NativeHandlers;
use tenx_tools::test_support::{FakeResponse, FakeService, RecordedRequest, refused_url};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "sk-live-very-secret-token";

/// The headers worth comparing, sorted (without `host`, whose port changes, and `user-agent`,
/// which holds the crate version).
fn stable_headers(request: &RecordedRequest) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = request
        .headers
        .iter()
        .filter(|(name, _)| name != "host" && name != "user-agent")
        .cloned()
        .collect();
    headers.sort();
    headers
}

#[tokio::test]
async fn post_sends_a_json_body_the_key_the_identity_and_declared_headers() {
    let service = FakeService::echo().await.unwrap();
    let artifact = artifact(vec![tool(
        "refund",
        http(
            HttpMethod::Post,
            "${PAY_URL}/refunds?v=\\$1",
            5_000,
            &[("Authorization", "Bearer ${PAY_TOKEN}"), ("X-Shop", "acme")],
        ),
        Some(json!({"type": "object"})),
    )]);
    let variables = vars(&[("PAY_URL", &service.url()), ("PAY_TOKEN", TOKEN)]);
    let tools = load(&artifact, &variables, NativeHandlers::new()).unwrap();
    let arguments = json!({"order_id": "A-1042", "amount_cents": 5950, "items": [1, 2], "note": null});
    let result = call(
        &tools,
        &artifact,
        "refund",
        arguments.clone(),
        "refund-A-1042-5950",
        &user(),
    )
    .await
    .unwrap();
    assert_eq!(
        result,
        json!({"method": "POST", "path": "/refunds", "query": "v=$1", "body": arguments})
    );
    let requests = service.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .header("user-agent")
            .is_some_and(|agent| agent.starts_with("tenx/"))
    );
    insta::assert_debug_snapshot!("post_request_headers", stable_headers(&requests[0]));
}

#[tokio::test]
async fn put_and_patch_send_bodies_get_and_delete_send_query_strings() {
    let service = FakeService::echo().await.unwrap();
    let url = format!("{}/orders", service.url());
    let artifact = artifact(vec![
        tool("get", http(HttpMethod::Get, &url, 5_000, &[]), None),
        tool(
            "delete",
            http(HttpMethod::Delete, &format!("{url}?force=1"), 5_000, &[]),
            None,
        ),
        tool("put", http(HttpMethod::Put, &url, 5_000, &[]), None),
        tool("patch", http(HttpMethod::Patch, &url, 5_000, &[]), None),
    ]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    let arguments =
        json!({"id": "A 1&2", "n": 3, "ok": false, "skip": null, "tags": ["x", "y"], "f": {"b": 1, "a": 2}});
    let query = "f=%7B%22a%22%3A2%2C%22b%22%3A1%7D&id=A+1%262&n=3&ok=false&tags=%5B%22x%22%2C%22y%22%5D";
    let got = call(&tools, &artifact, "get", arguments.clone(), "k1", &user())
        .await
        .unwrap();
    assert_eq!(
        got,
        json!({"method": "GET", "path": "/orders", "query": query, "body": null})
    );
    let got = call(&tools, &artifact, "delete", arguments.clone(), "k2", &user())
        .await
        .unwrap();
    assert_eq!(
        got,
        json!({"method": "DELETE", "path": "/orders", "query": format!("force=1&{query}"), "body": null})
    );
    for method in ["put", "patch"] {
        let got = call(&tools, &artifact, method, arguments.clone(), "k3", &user())
            .await
            .unwrap();
        assert_eq!(
            got,
            json!({"method": method.to_uppercase(), "path": "/orders", "query": null, "body": arguments})
        );
    }
    let requests = service.requests();
    assert!(requests[0].body.is_empty() && requests[1].body.is_empty());
    assert_eq!(requests[0].header("content-type"), None);
    assert_eq!(requests[2].header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn the_key_and_identity_are_encoded_and_no_bearer_token_is_forwarded() {
    let service = FakeService::echo().await.unwrap();
    let artifact = artifact(vec![tool(
        "t",
        http(HttpMethod::Post, &service.url(), 5_000, &[]),
        None,
    )]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    let identity = Identity {
        user_id: Some("ana maría".into()),
        roles: vec!["a,b".into(), "c".into()],
        scopes: Vec::new(),
        claims: serde_json::Map::new(),
    };
    call(&tools, &artifact, "t", json!({}), "key with\nnewline 100%", &identity)
        .await
        .unwrap();
    call(&tools, &artifact, "t", json!({}), "k", &Identity::anonymous())
        .await
        .unwrap();
    let requests = service.requests();
    assert_eq!(requests[0].idempotency_key(), Some("key%20with%0Anewline%20100%25"));
    assert_eq!(requests[0].header("x-tenx-user-id"), Some("ana%20mar%C3%ADa"));
    assert_eq!(requests[0].header("x-tenx-roles"), Some("a%2Cb,c"));
    assert_eq!(requests[0].header("x-tenx-scopes"), Some(""));
    assert_eq!(requests[1].header("x-tenx-user-id"), None);
    for request in &requests {
        assert_eq!(request.header("authorization"), None);
        assert_eq!(request.header("cookie"), None);
    }
}

/// Calls a tool whose service answers `answer`, with result schema `result`.
async fn answered(answer: FakeResponse, result: Option<Value>) -> Result<Value, tenx_engine::ports::ToolError> {
    let service = FakeService::start(move |_| answer.clone()).await.unwrap();
    let artifact = artifact(vec![tool(
        "t",
        http(
            HttpMethod::Post,
            "${URL}/x?token=${TOKEN}",
            5_000,
            &[("Authorization", "${TOKEN}")],
        ),
        result,
    )]);
    let tools = load(
        &artifact,
        &vars(&[("URL", &service.url()), ("TOKEN", TOKEN)]),
        NativeHandlers::new(),
    )
    .unwrap();
    let outcome = call(&tools, &artifact, "t", json!({}), "k", &user()).await;
    if let Err(error) = &outcome {
        assert!(!error.message.contains(TOKEN), "{error:?}");
        assert!(!error.message.contains("127.0.0.1"), "{error:?}");
    }
    outcome
}

#[tokio::test]
async fn every_status_class_becomes_the_right_tool_error() {
    let cases = [
        (400, ToolErrorKind::Client, "the service answered 400 Bad Request"),
        (401, ToolErrorKind::Client, "the service answered 401 Unauthorized"),
        (404, ToolErrorKind::Client, "the service answered 404 Not Found"),
        (409, ToolErrorKind::Client, "the service answered 409 Conflict"),
        (
            500,
            ToolErrorKind::Server,
            "the service answered 500 Internal Server Error",
        ),
        (502, ToolErrorKind::Server, "the service answered 502 Bad Gateway"),
        (
            503,
            ToolErrorKind::Server,
            "the service answered 503 Service Unavailable",
        ),
    ];
    for (status, kind, message) in cases {
        let body = json!({"error": format!("details that mention {TOKEN}")});
        let error = answered(FakeResponse::json(status, &body), None).await.unwrap_err();
        assert_eq!((error.kind, error.message.as_str()), (kind, message), "{status}");
    }
    let error = answered(FakeResponse::empty(429).with_header("retry-after", "3"), None)
        .await
        .unwrap_err();
    assert_eq!(
        error.kind,
        ToolErrorKind::RateLimited {
            retry_after_ms: Some(3_000)
        }
    );
    assert_eq!(
        error.message,
        "the service answered 429 Too Many Requests (retry after 3000 ms)"
    );
    let error = answered(FakeResponse::empty(429), None).await.unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::RateLimited { retry_after_ms: None });
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let target = FakeService::echo().await.unwrap();
    let location = format!("{}/elsewhere", target.url());
    let error = answered(FakeResponse::empty(302).with_header("location", &location), None)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Client);
    assert_eq!(
        error.message,
        "the service answered 302 Found; redirects are not followed"
    );
    let error = answered(FakeResponse::empty(307).with_header("location", &location), None)
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "the service answered 307 Temporary Redirect; redirects are not followed"
    );
    assert!(target.requests().is_empty(), "the redirect target was called");
}

#[tokio::test]
async fn two_hundreds_decode_by_content_and_result_type() {
    let object = Some(json!({"type": "object"}));
    let string = Some(json!({"type": "string"}));
    assert_eq!(
        answered(FakeResponse::json(201, &json!({"id": 7})), object.clone()).await,
        Ok(json!({"id": 7}))
    );
    assert_eq!(
        answered(FakeResponse::text(200, "text/plain", "{\"id\": 7}"), object.clone()).await,
        Ok(json!({"id": 7}))
    );
    let error = answered(FakeResponse::text(200, "text/html", "<h1>hi</h1>"), object.clone())
        .await
        .unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (
            ToolErrorKind::Client,
            "the service answered 200 OK with a body that is not JSON"
        )
    );
    let error = answered(FakeResponse::text(200, "application/json", "not json"), string.clone())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Client);
    assert_eq!(
        answered(
            FakeResponse::text(200, "text/plain; charset=utf-8", "#ff8800"),
            string.clone()
        )
        .await,
        Ok(json!("#ff8800"))
    );
    assert_eq!(
        answered(FakeResponse::json(200, &json!("quoted")), string.clone()).await,
        Ok(json!("quoted"))
    );
    assert_eq!(
        answered(FakeResponse::empty(204), object.clone()).await,
        Ok(Value::Null)
    );
    assert_eq!(answered(FakeResponse::empty(204), string).await, Ok(json!("")));
}

#[tokio::test]
async fn an_answer_over_the_size_limit_is_refused() {
    let huge = vec![b' '; tenx_tools::http::response::MAX_BODY_BYTES + 1];
    let error = answered(FakeResponse::text(200, "application/json", huge), None)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ToolErrorKind::Client);
    assert_eq!(error.message, "the service's answer is larger than 8388608 bytes");
}

#[tokio::test]
async fn a_slow_service_times_out() {
    let service = FakeService::start(|_| FakeResponse::json(200, &json!(1)).after(Duration::from_secs(5)))
        .await
        .unwrap();
    let artifact = artifact(vec![tool("t", http(HttpMethod::Post, &service.url(), 150, &[]), None)]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    let started = Instant::now();
    let error = call(&tools, &artifact, "t", json!({}), "k", &user()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ToolErrorKind::Timeout, "the service did not answer within 150 ms")
    );
    assert_eq!(service.requests().len(), 1, "the request was sent once, not retried");
}

#[tokio::test]
async fn a_refused_connection_is_a_connection_error() {
    let url = refused_url().await.unwrap();
    let artifact = artifact(vec![tool("t", http(HttpMethod::Get, "${URL}/x", 2_000, &[]), None)]);
    let tools = load(&artifact, &vars(&[("URL", &url)]), NativeHandlers::new()).unwrap();
    let error = call(&tools, &artifact, "t", json!({}), "k", &user()).await.unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ToolErrorKind::Connection, "could not connect to the service")
    );
}

#[tokio::test]
async fn a_cancelled_call_stops_waiting() {
    let service = FakeService::start(|_| FakeResponse::json(200, &json!(1)).after(Duration::from_secs(5)))
        .await
        .unwrap();
    let artifact = artifact(vec![tool(
        "t",
        http(HttpMethod::Post, &service.url(), 30_000, &[]),
        None,
    )]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let identity = user();
    let arguments = json!({});
    let error = tools
        .call(
            ToolInvocation {
                tool_name: "t",
                tool: &artifact.tools["t"],
                arguments: &arguments,
                idempotency_key: "k",
                identity: &identity,
                thread_id: "th",
                call_id: "c",
            },
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ToolErrorKind::Failed, "the call was cancelled")
    );
    let error = tools
        .call(
            ToolInvocation {
                tool_name: "t",
                tool: &artifact.tools["t"],
                arguments: &arguments,
                idempotency_key: "k2",
                identity: &identity,
                thread_id: "th",
                call_id: "c",
            },
            &cancel,
        )
        .await
        .unwrap_err();
    assert_eq!(error.message, "the call was cancelled before it was sent");
    assert_eq!(service.requests_for_key("k2"), 0);
}

#[tokio::test]
async fn the_idempotent_service_counts_requests_and_effects_per_key() {
    let service = FakeService::idempotent(|request| {
        FakeResponse::json(
            200,
            &json!({"refund": request.json()["order_id"], "nonce": request.path}),
        )
    })
    .await
    .unwrap();
    let artifact = artifact(vec![tool(
        "refund",
        http(HttpMethod::Post, &service.url(), 5_000, &[]),
        None,
    )]);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    let first = call(
        &tools,
        &artifact,
        "refund",
        json!({"order_id": "A"}),
        "refund-A",
        &user(),
    )
    .await;
    // A repeat after a crash re-sends the same key: the service answers from its store.
    let repeat = call(
        &tools,
        &artifact,
        "refund",
        json!({"order_id": "A"}),
        "refund-A",
        &user(),
    )
    .await;
    let other = call(
        &tools,
        &artifact,
        "refund",
        json!({"order_id": "B"}),
        "refund-B",
        &user(),
    )
    .await;
    assert_eq!(first, repeat);
    assert_eq!(other, Ok(json!({"refund": "B", "nonce": "/"})));
    assert_eq!(service.requests_for_key("refund-A"), 2);
    assert_eq!(service.effects_for_key("refund-A"), 1);
    assert_eq!(service.effects_for_key("refund-B"), 1);
    assert_eq!(service.effects_for_key("never"), 0);
    assert!(service.duplicated_effects().is_empty());

    // A service that does not deduplicate shows the duplicate.
    let naive = FakeService::start(|_| FakeResponse::json(200, &json!(true)))
        .await
        .unwrap();
    let artifact = artifact_for(&naive);
    let tools = load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap();
    for _ in 0..2 {
        call(&tools, &artifact, "t", json!({}), "same", &user()).await.unwrap();
    }
    assert_eq!(naive.effects_for_key("same"), 2);
    assert_eq!(naive.duplicated_effects(), vec!["same".to_string()]);
}

fn artifact_for(service: &FakeService) -> tenx_artifact::Artifact {
    artifact(vec![tool(
        "t",
        http(HttpMethod::Post, &service.url(), 5_000, &[]),
        None,
    )])
}

#[tokio::test]
async fn concurrent_repeats_of_one_key_run_one_effect() {
    let service = FakeService::idempotent(|_| FakeResponse::json(200, &json!("done")))
        .await
        .unwrap();
    let artifact = artifact_for(&service);
    let tools = std::sync::Arc::new(load(&artifact, &vars(&[]), NativeHandlers::new()).unwrap());
    let artifact = std::sync::Arc::new(artifact);
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (tools, artifact) = (tools.clone(), artifact.clone());
        tasks.push(tokio::spawn(async move {
            call(&tools, &artifact, "t", json!({}), "one-key", &user()).await
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), Ok(json!("done")));
    }
    assert_eq!(service.requests_for_key("one-key"), 20);
    assert_eq!(service.effects_for_key("one-key"), 1);
}
