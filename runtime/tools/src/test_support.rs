//! A local fake HTTP service for tests (feature `test-support`): it listens on `127.0.0.1` only,
//! records every request, counts requests and effects per `Idempotency-Key`, and answers from a
//! closure. Exactly-once and crash tests (here and in other crates) use it as the service behind
//! an `http` tool: [`FakeService::idempotent`] deduplicates like a well-behaved service (a
//! repeated key gets the stored answer and runs no second effect), so a test can prove that no
//! effect ran twice even when the engine re-sends a key after a crash.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::task::JoinHandle;

/// The largest request body recorded.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// One request the service received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, e.g. `/orders/lookup`.
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    /// Every header, names lowercase, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The `Idempotency-Key` header.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.header("idempotency-key")
    }

    /// The body as JSON (`Null` when it is empty or not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What the service answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeResponse {
    /// The status code.
    pub status: u16,
    /// Headers to send.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// How long to wait before answering.
    pub delay: Duration,
}

impl FakeResponse {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
            delay: Duration::ZERO,
        }
    }

    /// `status` with a body of `content_type`.
    pub fn text(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// `status` with no body and no headers.
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// The same answer with one more header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same answer, sent after `delay`.
    #[must_use]
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Responder = Box<dyn Fn(&RecordedRequest) -> FakeResponse + Send + Sync>;

struct Shared {
    responder: Responder,
    idempotent: bool,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Per key: how many times the responder ran (the effect), and its stored answer.
    effects: Mutex<BTreeMap<String, (usize, FakeResponse)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A fake service on `127.0.0.1`; it stops when dropped.
pub struct FakeService {
    address: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for FakeService {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("FakeService")
            .field("address", &self.address)
            .field("requests", &lock(&self.shared.requests).len())
            .finish_non_exhaustive()
    }
}

impl Drop for FakeService {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeService {
    /// A service that runs `respond` for every request (every request is an effect).
    pub async fn start(
        respond: impl Fn(&RecordedRequest) -> FakeResponse + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        Self::serve(Box::new(respond), false).await
    }

    /// A service that deduplicates by `Idempotency-Key`, as a well-behaved service does: the
    /// first request with a key runs `respond` (the effect) and its answer is stored; a repeat
    /// gets the stored answer without a new effect. Requests without a key always run.
    pub async fn idempotent(
        respond: impl Fn(&RecordedRequest) -> FakeResponse + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        Self::serve(Box::new(respond), true).await
    }

    /// A service that answers `200` with a JSON echo of the request:
    /// `{"method", "path", "query", "body"}` (`body` parsed as JSON, else `null`).
    pub async fn echo() -> std::io::Result<Self> {
        Self::start(|request| {
            FakeResponse::json(
                200,
                &serde_json::json!({
                    "method": request.method,
                    "path": request.path,
                    "query": request.query,
                    "body": request.json(),
                }),
            )
        })
        .await
    }

    async fn serve(responder: Responder, idempotent: bool) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            responder,
            idempotent,
            requests: Mutex::new(Vec::new()),
            effects: Mutex::new(BTreeMap::new()),
        });
        let router = Router::new().fallback(handle).with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _stopped = axum::serve(listener, router).await;
        });
        Ok(Self { address, shared, task })
    }

    /// The base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many requests arrived with `Idempotency-Key: key`.
    pub fn requests_for_key(&self, key: &str) -> usize {
        lock(&self.shared.requests)
            .iter()
            .filter(|request| request.idempotency_key() == Some(key))
            .count()
    }

    /// How many times the effect ran for `key` (equal to [`Self::requests_for_key`] unless the
    /// service is [`Self::idempotent`], where it is at most 1).
    pub fn effects_for_key(&self, key: &str) -> usize {
        lock(&self.shared.effects).get(key).map_or(0, |(count, _)| *count)
    }

    /// The keys whose effect ran more than once: empty when every effect ran at most once.
    pub fn duplicated_effects(&self) -> Vec<String> {
        lock(&self.shared.effects)
            .iter()
            .filter(|(_, (count, _))| *count > 1)
            .map(|(key, _)| key.clone())
            .collect()
    }
}

/// A local URL where nothing listens (a port bound and released), for connection failures.
pub async fn refused_url() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let address = listener.local_addr()?;
    drop(listener);
    Ok(format!("http://{address}"))
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = to_bytes(body, MAX_REQUEST_BYTES).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body.to_vec(),
    };
    lock(&shared.requests).push(recorded.clone());
    let answer = match recorded.idempotency_key().map(str::to_string) {
        Some(key) => {
            // One lock over the check and the effect, so two concurrent repeats of a key run
            // one effect between them.
            let mut effects = lock(&shared.effects);
            match effects.get_mut(&key) {
                Some((_, stored)) if shared.idempotent => stored.clone(),
                Some((count, _)) => {
                    *count = count.saturating_add(1);
                    (shared.responder)(&recorded)
                }
                None => {
                    let answer = (shared.responder)(&recorded);
                    effects.insert(key, (1, answer.clone()));
                    answer
                }
            }
        }
        None => (shared.responder)(&recorded),
    };
    if !answer.delay.is_zero() {
        tokio::time::sleep(answer.delay).await;
    }
    build(answer)
}

fn build(answer: FakeResponse) -> Response {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in answer.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value)) {
            response.headers_mut().append(name, value);
        }
    }
    response
}
