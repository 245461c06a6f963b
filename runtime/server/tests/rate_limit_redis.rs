//! The Redis rate limiter against the real Redis at `TENX_TEST_REDIS_URL` (each test under a key
//! prefix of its own; without the variable a test says it skips and passes): two servers share
//! one allowance over real loopback HTTP, the headers and 429 match the memory backend's, per
//! user keys are digests of the token, and Redis going away refuses requests with 503 until it
//! is back. Refusing to start without Redis needs no Redis.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed test"
)]

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};
use tenx_server::rate_limit::{
    LimitBy, RateLimitBackend, RateLimitSettings, RedisLimiter, RedisLimiterError, RedisUrl,
};
use tenx_server::{AppState, ServerSettings};

const HELLO: &[u8] = include_bytes!("../../../compiler/artifact/tests/fixtures/hello.tenxg");

fn redis_url(test: &str) -> Option<String> {
    match std::env::var("TENX_TEST_REDIS_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            eprintln!("skipping {test}: TENX_TEST_REDIS_URL is not set");
            None
        }
    }
}

/// A key prefix no other test (or run) uses.
fn prefix(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("tenx-test:{test}:{}:{nanos}", std::process::id())
}

fn limit(requests: u32, by: LimitBy) -> RateLimitSettings {
    RateLimitSettings {
        requests: NonZeroU32::new(requests).unwrap(),
        window: Duration::from_secs(60),
        by,
    }
}

/// A server (one replica) on a loopback port; its address.
async fn serve(rate: RateLimitSettings, backend: RateLimitBackend) -> SocketAddr {
    let loaded = tenx_runtime::load(HELLO, &tenx_artifact::TrustPolicy::signature_optional()).unwrap();
    let engine = tenx_runtime::HostBuilder::new(loaded)
        .store(Arc::new(tenx_engine::MemoryStore::new()))
        .build(|_| None)
        .unwrap();
    let settings = ServerSettings {
        rate_limit: Some(rate),
        rate_limit_backend: backend,
        ..ServerSettings::default()
    };
    let state = AppState::new(engine, settings).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = tenx_server::router(state).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    address
}

async fn redis_backend(url: &str, prefix: &str) -> RateLimitBackend {
    let url = RedisUrl::parse(url).unwrap();
    RateLimitBackend::Redis(RedisLimiter::connect(&url, prefix).await.unwrap())
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// What a limited answer says: status, the four headers but `X-RateLimit-Reset` (an epoch
/// second, read apart), `Retry-After`, and the error code.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    status: u16,
    limit: Option<String>,
    remaining: Option<String>,
    reset_after: Option<String>,
    retry_after: Option<String>,
    code: Option<String>,
    reset: Option<u64>,
}

async fn get(client: &reqwest::Client, address: SocketAddr, path: &str, token: Option<&str>) -> (Answer, Value) {
    let mut request = client.get(format!("http://{address}{path}"));
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.send().await.unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let mut answer = Answer {
        status: response.status().as_u16(),
        limit: header("x-ratelimit-limit"),
        remaining: header("x-ratelimit-remaining"),
        reset_after: header("x-ratelimit-reset-after"),
        retry_after: header("retry-after"),
        code: None,
        reset: header("x-ratelimit-reset").map(|reset| reset.parse().unwrap()),
    };
    let body: Value = response.json().await.unwrap_or(Value::Null);
    answer.code = body["error"]["code"].as_str().map(str::to_owned);
    (answer, body)
}

async fn keys(url: &str, prefix: &str) -> Vec<String> {
    let client = redis::Client::open(url).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let mut cursor = 0_u64;
    let mut keys = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut connection)
            .await
            .unwrap();
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys
}

async fn clean(url: &str, prefix: &str) {
    let client = redis::Client::open(url).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    for key in keys(url, prefix).await {
        let _: i64 = redis::cmd("DEL").arg(&key).query_async(&mut connection).await.unwrap();
    }
}

#[tokio::test]
async fn two_replicas_share_one_allowance() {
    let Some(url) = redis_url("two_replicas_share_one_allowance") else {
        return;
    };
    let prefix = prefix("two-replicas");
    // Two replicas, each with its own connection, as two processes would have.
    let a = serve(limit(6, LimitBy::Ip), redis_backend(&url, &prefix).await).await;
    let b = serve(limit(6, LimitBy::Ip), redis_backend(&url, &prefix).await).await;
    let client = client();
    let mut allowed = Vec::new();
    let mut refused = 0;
    for round in 0..8 {
        for replica in [a, b] {
            let (answer, _) = get(&client, replica, "/v1/threads", None).await;
            match answer.status {
                200 => allowed.push(answer.remaining.unwrap()),
                429 => refused += 1,
                other => panic!("round {round}: {other} {answer:?}"),
            }
        }
    }
    assert_eq!(
        allowed,
        ["5", "4", "3", "2", "1", "0"],
        "one allowance counted down across both"
    );
    assert_eq!(refused, 10, "16 requests, a limit of 6");
    // Each replica alone would have let 6 through (12 in all): the memory backend, for contrast.
    let c = serve(limit(6, LimitBy::Ip), RateLimitBackend::Memory).await;
    let d = serve(limit(6, LimitBy::Ip), RateLimitBackend::Memory).await;
    let mut alone = 0;
    for _ in 0..8 {
        for replica in [c, d] {
            if get(&client, replica, "/v1/threads", None).await.0.status == 200 {
                alone += 1;
            }
        }
    }
    assert_eq!(alone, 12);
    let keys = keys(&url, &prefix).await;
    assert_eq!(keys, [format!("{prefix}:ip:127.0.0.1")]);
    clean(&url, &prefix).await;
}

#[tokio::test]
async fn the_headers_and_the_429_are_the_memory_backends() {
    let Some(url) = redis_url("the_headers_and_the_429_are_the_memory_backends") else {
        return;
    };
    let prefix = prefix("headers");
    let memory = serve(limit(4, LimitBy::Ip), RateLimitBackend::Memory).await;
    let redis = serve(limit(4, LimitBy::Ip), redis_backend(&url, &prefix).await).await;
    let client = client();
    for _ in 0..6 {
        let (mut from_memory, memory_body) = get(&client, memory, "/v1/threads", None).await;
        let (mut from_redis, redis_body) = get(&client, redis, "/v1/threads", None).await;
        let (memory_reset, redis_reset) = (from_memory.reset.take().unwrap(), from_redis.reset.take().unwrap());
        assert!(memory_reset.abs_diff(redis_reset) <= 1, "{memory_reset} {redis_reset}");
        assert_eq!(from_memory, from_redis);
        if from_redis.status == 429 {
            assert_eq!(
                from_redis.retry_after.as_deref(),
                Some("15"),
                "60 s / 4: one back each 15 s"
            );
            assert_eq!(from_redis.remaining.as_deref(), Some("0"));
            for field in ["code", "message", "limit", "window_seconds", "retry_after_seconds"] {
                assert_eq!(memory_body["error"][field], redis_body["error"][field], "{field}");
            }
            assert_eq!(redis_body["error"]["code"], "RATE_LIMIT_EXCEEDED");
            assert_eq!(
                redis_body["error"]["message"],
                "Too many requests. Limit: 4 per 60s. Retry after 15s."
            );
            assert_eq!(redis_body["metadata"]["status"], "error");
        }
    }
    // The health routes are never limited, on either backend.
    for path in ["/ping", "/health/live", "/health/ready"] {
        assert_eq!(get(&client, redis, path, None).await.0.status, 200, "{path}");
    }
    clean(&url, &prefix).await;
}

#[tokio::test]
async fn each_user_has_a_key_of_its_own_and_the_token_never_reaches_redis() {
    let Some(url) = redis_url("each_user_has_a_key_of_its_own_and_the_token_never_reaches_redis") else {
        return;
    };
    let prefix = prefix("users");
    let server = serve(limit(2, LimitBy::User), redis_backend(&url, &prefix).await).await;
    let client = client();
    let (one, two) = ("token-of-user-one-c0ffee", "token-of-user-two-beef");
    let statuses = |answers: Vec<Answer>| answers.into_iter().map(|answer| answer.status).collect::<Vec<_>>();
    let mut first = Vec::new();
    for _ in 0..3 {
        first.push(get(&client, server, "/v1/threads", Some(one)).await.0);
    }
    assert_eq!(statuses(first), [200, 200, 429]);
    let mut second = Vec::new();
    for _ in 0..3 {
        second.push(get(&client, server, "/v1/threads", Some(two)).await.0);
    }
    assert_eq!(
        statuses(second),
        [200, 200, 429],
        "user two has an allowance of its own"
    );
    assert_eq!(
        get(&client, server, "/v1/threads", None).await.0.status,
        200,
        "anonymous: by IP"
    );
    let digest = |token: &str| {
        Sha256::digest(format!("Bearer {token}").as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>()
    };
    let mut expected = vec![
        format!("{prefix}:ip:127.0.0.1"),
        format!("{prefix}:user:{}", digest(one)),
        format!("{prefix}:user:{}", digest(two)),
    ];
    expected.sort();
    let found = keys(&url, &prefix).await;
    assert_eq!(found, expected);
    let redis = redis::Client::open(url.as_str()).unwrap();
    let mut connection = redis.get_multiplexed_async_connection().await.unwrap();
    for key in &found {
        assert!(!key.contains("token-of-user"), "{key}");
        let value: String = redis::cmd("GET").arg(key).query_async(&mut connection).await.unwrap();
        assert!(!value.contains("token-of-user"), "{value}");
        assert!(value.parse::<u64>().is_ok(), "a time in microseconds: {value}");
        let ttl: i64 = redis::cmd("PTTL").arg(key).query_async(&mut connection).await.unwrap();
        assert!(
            (1..=60_000).contains(&ttl),
            "every key expires within the window: {key} {ttl}"
        );
    }
    clean(&url, &prefix).await;
}

/// A TCP relay to the real Redis that can be cut and restored on the same port: Redis going
/// away and coming back, as the limiter sees it.
struct Relay {
    address: SocketAddr,
    upstream: String,
    tasks: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Relay {
    async fn start(upstream: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relay = Self {
            address: listener.local_addr().unwrap(),
            upstream: upstream.to_owned(),
            tasks: Arc::default(),
        };
        relay.accept(listener);
        relay
    }

    fn accept(&self, listener: tokio::net::TcpListener) {
        let tasks = self.tasks.clone();
        let upstream = self.upstream.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let relaying = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                tasks.lock().unwrap().push(relaying.abort_handle());
            }
        });
        self.tasks.lock().unwrap().push(accepting.abort_handle());
    }

    /// Closes every connection and stops listening.
    async fn cut(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    async fn restore(&self) {
        let listener = tokio::net::TcpListener::bind(self.address).await.unwrap();
        self.accept(listener);
    }
}

/// Log lines, captured for one test.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn redis_going_away_refuses_requests_with_503_until_it_is_back() {
    let Some(url) = redis_url("redis_going_away_refuses_requests_with_503_until_it_is_back") else {
        return;
    };
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // A current-thread test: the server's tasks run on this thread, under this subscriber.
    let _logging = tracing::subscriber::set_default(subscriber);
    let parsed = url::Url::parse(&url).unwrap();
    let upstream = format!(
        "{}:{}",
        parsed.host_str().unwrap(),
        parsed.port_or_known_default().unwrap_or(6379)
    );
    let relay = Relay::start(&upstream).await;
    let prefix = prefix("outage");
    let through_relay = format!("redis://{}", relay.address);
    let server = serve(limit(100, LimitBy::Ip), redis_backend(&through_relay, &prefix).await).await;
    let client = client();
    assert_eq!(get(&client, server, "/v1/threads", None).await.0.status, 200);

    relay.cut().await;
    let started = std::time::Instant::now();
    let (answer, body) = get(&client, server, "/v1/threads", None).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(answer.status, 503, "{body}");
    assert_eq!(answer.code.as_deref(), Some("RATE_LIMITER_UNAVAILABLE"));
    assert_eq!(answer.retry_after.as_deref(), Some("1"));
    assert_eq!(body["metadata"]["status"], "error");
    let (again, _) = get(&client, server, "/v1/threads", None).await;
    assert_eq!(again.status, 503, "fail closed, every time: {again:?}");
    for path in ["/ping", "/health/live"] {
        assert_eq!(get(&client, server, path, None).await.0.status, 200, "{path}");
    }
    let log = logs.text();
    let named = format!("redis://{}", relay.address);
    assert_eq!(
        log.matches("the rate limiter cannot reach Redis").count(),
        1,
        "one line per outage, not per request: {log}"
    );
    assert!(log.contains(&named), "the log names Redis: {log}");

    relay.restore().await;
    let mut status = 0;
    for _ in 0..50 {
        status = get(&client, server, "/v1/threads", None).await.0.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the limiter reconnects on its own");
    assert!(
        logs.text().contains("the rate limiter reaches Redis again"),
        "{}",
        logs.text()
    );
    clean(&url, &prefix).await;
}

#[tokio::test]
async fn without_redis_the_limiter_does_not_start_and_says_why_without_the_password() {
    // A port nothing listens on: bound, then released.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = RedisUrl::parse(&format!("redis://app:pw-never-printed@{free}")).unwrap();
    let started = std::time::Instant::now();
    let error = RedisLimiter::connect(&url, "tenx-test:down").await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(12), "{:?}", started.elapsed());
    assert!(matches!(error, RedisLimiterError::Unavailable { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("the rate limiter cannot use Redis at redis://app:***@{free}")),
        "{text}"
    );
    assert!(!format!("{text} {error:?}").contains("pw-never-printed"), "{text}");
    let error = RedisLimiter::connect(&url, "has space").await.unwrap_err();
    assert!(matches!(error, RedisLimiterError::Prefix(_)), "{error:?}");
}
