//! `GET /openapi.json` against the real router: every mounted method and path is documented and
//! every documented one is mounted (the mounted list is the route table the router is built
//! from; each documented route is also called over HTTP, so a row the router lost shows), each
//! route's documented scope is the one it enforces, and the document is valid: it reads back into
//! utoipa's types unchanged, its references resolve, its path parameters are declared, and its
//! request schemas accept and refuse what the server accepts and refuses.

use std::collections::BTreeSet;

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::harness::{Server, refund_example, refund_tools, token, user, with_auth};

const METHODS: [&str; 8] = ["get", "post", "put", "delete", "patch", "options", "head", "trace"];
/// What an `ANY` row of the table is documented as.
const ANY: [&str; 5] = ["get", "post", "put", "delete", "patch"];

/// `{*rest}` (axum) is `{rest}` in OpenAPI.
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

fn documented(document: &Value) -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in METHODS {
            if item.get(method).is_some() {
                routes.insert((method.to_owned(), path.clone()));
            }
        }
    }
    routes
}

fn mounted(settings: &tenx_server::ServerSettings) -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    for row in tenx_server::routes::table::table(settings) {
        let path = openapi_path(row.path);
        match &row.method {
            Some(method) => {
                routes.insert((method.as_str().to_lowercase(), path));
            }
            None => routes.extend(ANY.iter().map(|method| ((*method).to_owned(), path.clone()))),
        }
    }
    routes
}

fn scope_of(operation: &Value) -> Option<String> {
    operation["security"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|requirement| requirement.get("bearer"))
        .map(|scopes| scopes[0].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn openapi_documents_exactly_the_routes_the_router_mounts_with_the_scopes_they_enforce() {
    let settings = with_auth();
    let server = Server::start(refund_example(), refund_tools(), settings.clone()).await;
    let (status, document) = server.get("/openapi.json").await;
    assert_eq!(status, 200, "public, like /health: {document}");
    assert_eq!(document["openapi"], "3.1.0");

    let documented = documented(&document);
    let mounted = mounted(&settings);
    let undocumented: Vec<_> = mounted.difference(&documented).collect();
    let unmounted: Vec<_> = documented.difference(&mounted).collect();
    assert!(undocumented.is_empty(), "mounted, not documented: {undocumented:?}");
    assert!(unmounted.is_empty(), "documented, not mounted: {unmounted:?}");
    assert!(documented.contains(&("get".to_owned(), "/metrics".to_owned())));
    assert!(documented.contains(&("post".to_owned(), "/v1/graph/invoke".to_owned())));

    // Each documented route, called over HTTP by a token that holds no scope it needs: a public
    // route answers without asking for one, a scoped route refuses with exactly its documented
    // scope, and none falls through to the router's 404 or 405.
    let prober = server.as_user(&token("prober", json!({"scopes": ["nothing:here"]})));
    for (method, path) in &documented {
        let operation = &document["paths"][path][method];
        let scope = scope_of(operation);
        let concrete = path
            .replace("{thread_id}", "probe-thread")
            .replace("{message_id}", "probe-message")
            .replace("{rest}", "probe")
            .replace("{file}", "console.js");
        if path == "/v1/graph/ws" {
            let message = websocket_refusal(&server, &prober_token()).await;
            assert_eq!(message, "Missing required scope: graph:stream");
            assert_eq!(scope.as_deref(), Some("graph:stream"));
            continue;
        }
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let mut request = prober.request(method.clone(), &concrete);
        if method != Method::GET && method != Method::HEAD {
            request = request.json(&json!({}));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        let message = body["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(
            !(status == 404 && message == "Not Found" || status == 405 && message == "Method Not Allowed"),
            "{method} {concrete} is documented but the router does not serve it: {status} {body}"
        );
        match scope {
            Some(scope) => {
                assert_eq!(status, 403, "{method} {concrete}: {body}");
                assert_eq!(
                    message,
                    format!("Missing required scope: {scope}"),
                    "{method} {concrete}"
                );
            }
            None => assert!(
                status != 401 && status != 403,
                "{method} {concrete} is documented as public: {status} {body}"
            ),
        }
    }

    let mut without_metrics = settings.clone();
    without_metrics.metrics = false;
    let quiet = Server::start(refund_example(), refund_tools(), without_metrics.clone()).await;
    let (_, document) = quiet.get("/openapi.json").await;
    assert!(
        !documented_has(&document, "/metrics"),
        "metrics = false leaves /metrics out"
    );
    assert_eq!(self::documented(&document), self::mounted(&without_metrics));
    assert_eq!(quiet.get("/metrics").await.0, 404);
}

fn documented_has(document: &Value, path: &str) -> bool {
    document["paths"].get(path).is_some()
}

fn prober_token() -> String {
    token("prober", json!({"scopes": ["nothing:here"]}))
}

/// The reason of the error chunk a WebSocket sends a token that lacks its scope.
async fn websocket_refusal(server: &Server, token: &str) -> String {
    let url = format!("{}/v1/graph/ws", server.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        format!("10xgraph-bearer, {token}").parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    socket
        .send(Message::text(json!({"messages": [user("hi")]}).to_string()))
        .await
        .unwrap();
    while let Some(Ok(message)) = socket.next().await {
        if let Message::Text(text) = message {
            let chunk: Value = serde_json::from_str(text.as_str()).unwrap();
            return chunk["data"]["reason"].as_str().unwrap_or_default().to_owned();
        }
    }
    String::new()
}

#[tokio::test]
async fn the_openapi_document_is_valid_and_its_schemas_agree_with_the_server() {
    let server = Server::refunds().await;
    let (_, document) = server.get("/openapi.json").await;

    // It reads back into utoipa's own types and writes out the same.
    let typed: utoipa::openapi::OpenApi = serde_json::from_value(document.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), document);

    // Every reference resolves, every operation is named once and answers something, every
    // path parameter is declared, every security requirement names a scheme.
    let text = document.to_string();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let target = reference.split('"').next().unwrap();
        let pointer = target.strip_prefix('#').unwrap();
        assert!(document.pointer(pointer).is_some(), "unresolved {target}");
    }
    let mut ids = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let id = operation["operationId"].as_str().unwrap();
            assert!(ids.insert(id.to_owned()), "operationId {id} twice");
            assert!(
                !operation["responses"].as_object().unwrap().is_empty(),
                "{method} {path}"
            );
            let declared: BTreeSet<&str> = operation["parameters"]
                .as_array()
                .map(|parameters| {
                    parameters
                        .iter()
                        .filter(|parameter| parameter["in"] == "path")
                        .map(|parameter| parameter["name"].as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            let in_path: BTreeSet<&str> = path
                .split('{')
                .skip(1)
                .map(|part| part.split('}').next().unwrap())
                .collect();
            assert_eq!(declared, in_path, "{method} {path}");
            for requirement in operation["security"].as_array().unwrap() {
                for scheme in requirement.as_object().unwrap().keys() {
                    assert!(
                        document["components"]["securitySchemes"].get(scheme).is_some(),
                        "{method} {path}: {scheme}"
                    );
                }
            }
        }
    }
    assert_eq!(document["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(
        document["components"]["securitySchemes"]["bearer"]["bearerFormat"],
        "JWT"
    );

    // The documented body of invoke accepts what the server runs and refuses what it refuses.
    let invoke = &document["paths"]["/v1/graph/invoke"]["post"];
    let body_schema = &invoke["requestBody"]["content"]["application/json"]["schema"];
    let validator = schema(&document, body_schema);
    for good in [
        json!({"messages": [user("hello")], "config": {"thread_id": "o1"}}),
        json!({"messages": [user("hello")], "response_granularity": "full", "recursion_limit": 5, "on_busy": "wait"}),
    ] {
        assert!(validator.is_valid(&good), "{good}");
        let (status, answer) = server.post("/v1/graph/invoke", good).await;
        assert_eq!(status, 200, "{answer}");
        // And the answer has the documented envelope.
        let ok = schema(
            &document,
            &invoke["responses"]["200"]["content"]["application/json"]["schema"],
        );
        assert!(ok.is_valid(&answer), "{answer}");
    }
    for bad in [
        json!({"messages": "hello"}),
        json!({"messages": [user("hello")], "response_granularity": "everything"}),
        json!({"messages": [user("hello")], "recursion_limit": 0}),
        json!({"messages": [{"role": "robot", "content": []}]}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
        let (status, answer) = server.post("/v1/graph/invoke", bad).await;
        assert_eq!(status, 422, "{answer}");
        let error = schema(
            &document,
            &invoke["responses"]["422"]["content"]["application/json"]["schema"],
        );
        assert!(error.is_valid(&answer), "{answer}");
    }
}

/// A validator for `schema`, a part of `document` (its `$ref`s point into the document).
fn schema(document: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.as_object().unwrap().clone();
    root.insert("components".to_owned(), document["components"].clone());
    root.insert(
        "$schema".to_owned(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    jsonschema::validator_for(&Value::Object(root)).unwrap()
}
