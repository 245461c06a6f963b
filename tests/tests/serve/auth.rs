//! JWT auth, scopes and ownership over HTTP (reference-api.md §11, contract D7, §17 scenario
//! 20): the reference's 401 codes with `WWW-Authenticate`, 403 for another user's run, 404 for
//! another user's reads, and each user's own thread list.

use reqwest::Method;
use serde_json::json;

use super::harness::{Server, now, production, read, refund_example, refund_tools, sign, token, user, with_auth};

async fn served() -> Server {
    Server::start(refund_example(), refund_tools(), with_auth()).await
}

#[tokio::test]
async fn missing_garbage_expired_and_anonymous_tokens_get_the_reference_401s() {
    let server = served().await;
    let response = server.request(Method::GET, "/v1/threads").send().await.unwrap();
    assert_eq!(
        response.headers()["www-authenticate"].to_str().unwrap(),
        "Bearer realm=\"auth_required\""
    );
    let (status, body) = read(response).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "REVOKED_TOKEN");
    assert_eq!(body["error"]["message"], "Invalid token, please login again");

    let cases = [
        (
            "garbage".to_owned(),
            "INVALID_TOKEN",
            "Invalid token, please login again",
        ),
        (
            sign(&json!({"user_id": "alice", "exp": now() - 10})),
            "EXPIRED_TOKEN",
            "Token has expired, please login again",
        ),
        (
            sign(&json!({"exp": now() + 60})),
            "INVALID_TOKEN",
            "Invalid token, user_id missing",
        ),
        (
            sign(&json!({"user_id": "alice"})),
            "INVALID_TOKEN",
            "Invalid token, please login again",
        ),
    ];
    for (token, code, message) in cases {
        let (status, body) = server.as_user(&token).get("/v1/threads").await;
        assert_eq!(status, 401, "{token}: {body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert_eq!(body["error"]["message"], message, "{body}");
    }
    let forged = {
        let header = jsonwebtoken::Header::default();
        let claims = json!({"user_id": "alice", "exp": now() + 60});
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(b"another-secret-entirely-123456789").unwrap(),
        )
        .unwrap()
    };
    let (status, body) = server.as_user(&forged).get("/v1/threads").await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_TOKEN");
    let (status, _) = server.get("/ping").await;
    assert_eq!(status, 200, "/ping is public");
}

#[tokio::test]
async fn another_users_thread_is_403_to_run_and_404_to_read_and_absent_from_lists() {
    let server = served().await;
    let alice = server.as_user(&token("alice", json!({})));
    let bob = server.as_user(&token("bob", json!({})));
    let (status, body) = alice
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("hi")], "config": {"thread_id": "own1"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let before = server.snapshot("own1").await;

    let (status, body) = bob
        .post(
            "/v1/graph/invoke",
            json!({"messages": [user("mine now")], "config": {"thread_id": "own1"}}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["message"], "Not authorized to invoke graph");
    let (status, body) = bob
        .post(
            "/v1/graph/stream",
            json!({"messages": [user("mine now")], "config": {"thread_id": "own1"}}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = bob.post("/v1/graph/stop", json!({"thread_id": "own1"})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["message"], "Not authorized to stop graph");
    assert_eq!(server.snapshot("own1").await, before, "refusals record nothing");

    for path in [
        "/v1/threads/own1",
        "/v1/threads/own1/state",
        "/v1/threads/own1/messages",
        "/v1/threads/nope/state",
    ] {
        let (status, body) = bob.get(path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["error"]["code"], "RESOURCE_NOT_FOUND");
    }
    let (status, body) = bob.get("/v1/threads").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["threads"], json!([]));
    let (_, body) = alice.get("/v1/threads").await;
    assert_eq!(body["data"]["threads"][0]["thread_id"], "own1");
    assert_eq!(body["data"]["threads"][0]["user_id"], "alice");
    let (status, _) = alice.get("/v1/threads/own1/state").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_token_that_declares_scopes_may_use_only_those_routes() {
    let server = served().await;
    let limited = server.as_user(&token("carol", json!({"scopes": ["graph:invoke"]})));
    let (status, body) = limited
        .post("/v1/graph/stream", json!({"messages": [user("hi")]}))
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["message"], "Missing required scope: graph:stream");
    let (status, body) = limited.get("/v1/threads").await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["message"], "Missing required scope: checkpointer:read");
    let (status, body) = limited
        .post("/v1/graph/invoke", json!({"messages": [user("hi")]}))
        .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn production_refuses_to_start_without_auth_or_origins() {
    let mut settings = production();
    settings.jwt = None;
    assert_eq!(
        settings.validate().unwrap_err().to_string(),
        "production mode needs auth: set JWT_SECRET_KEY, JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE"
    );
    let mut settings = production();
    settings.origins = vec!["*".to_owned()];
    assert!(settings.validate().is_err());
    let mut settings = production();
    if let Some(jwt) = settings.jwt.as_mut() {
        jwt.key = tenx_server::JwtKey::Secret(b"short".to_vec());
    }
    assert!(
        settings.validate().is_err(),
        "a secret under 32 bytes is refused in production"
    );
    assert!(production().validate().is_ok());
}
