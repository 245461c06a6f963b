//! A local fake provider for tests and benchmarks (feature `test-support`): it listens on
//! `127.0.0.1` only, records every request, and answers from a queue of [`Canned`] answers
//! (recorded bodies, replayed byte for byte, a stream sent in small pieces so events are split
//! across reads, optionally left hanging or cut short). When the queue is empty it repeats the
//! last answer; a [`FakeProvider::cycling`] fake plays its queue round and round instead.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::body::{Body, Bytes, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::task::JoinHandle;

/// The largest request body recorded.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// One request the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Every header, names lowercase, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Received {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What happens after a streamed body's last piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The body ends normally.
    Close,
    /// The connection stays open and nothing more comes (to test cancellation and timeouts).
    Hang,
}

/// One canned answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canned {
    /// The status code.
    pub status: u16,
    /// Headers to send.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When set, the body is sent in pieces of this many bytes (a streamed answer).
    pub piece: Option<usize>,
    /// What happens after the last piece.
    pub ending: Ending,
}

impl Canned {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            piece: None,
            ending: Ending::Close,
        }
    }

    /// A 200 `text/event-stream` body sent in pieces of `piece` bytes.
    pub fn sse(body: impl Into<Vec<u8>>, piece: usize) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream; charset=utf-8".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: body.into(),
            piece: Some(piece.max(1)),
            ending: Ending::Close,
        }
    }

    /// The same answer with another header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same answer, left hanging after its body.
    pub fn hanging(mut self) -> Self {
        self.ending = Ending::Hang;
        self
    }
}

/// The fake's shared state.
#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    queue: Mutex<VecDeque<Canned>>,
    last: Mutex<Option<Canned>>,
    /// Plays the queue round and round and records nothing (for benchmarks).
    cycle: bool,
}

/// A running fake provider. Stops when dropped.
pub struct FakeProvider {
    address: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Locks a mutex, taking its value even if a panicking test poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FakeProvider {
    /// Starts a fake that answers `answers` in order (then repeats the last one).
    pub async fn start(answers: impl IntoIterator<Item = Canned>) -> std::io::Result<Self> {
        Self::serve(Shared {
            queue: Mutex::new(answers.into_iter().collect()),
            ..Shared::default()
        })
        .await
    }

    async fn serve(shared: Shared) -> std::io::Result<Self> {
        let shared = Arc::new(shared);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let app = Router::new().fallback(answer).with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ended = axum::serve(listener, app).await;
        });
        Ok(Self { address, shared, task })
    }

    /// Starts a fake that answers `answers` in order, round and round, and records nothing (a
    /// benchmark's thousands of calls): `received` stays empty.
    pub async fn cycling(answers: impl IntoIterator<Item = Canned>) -> std::io::Result<Self> {
        Self::serve(Shared {
            queue: Mutex::new(answers.into_iter().collect()),
            cycle: true,
            ..Shared::default()
        })
        .await
    }

    /// `http://127.0.0.1:PORT` (append the API's base path, e.g. `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Queues more answers.
    pub fn push(&self, answer: Canned) {
        lock(&self.shared.queue).push_back(answer);
    }

    /// Every request so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.shared.received).clone()
    }
}

/// Records a request and plays the next canned answer.
async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, MAX_REQUEST_BYTES).await.unwrap_or_default().to_vec();
    if shared.cycle {
        let mut queue = lock(&shared.queue);
        let next = queue.pop_front();
        if let Some(canned) = &next {
            queue.push_back(canned.clone());
        }
        drop(queue);
        return respond(next.unwrap_or_else(|| Canned::json(500, "{}")));
    }
    lock(&shared.received).push(Received {
        path: parts.uri.path().to_owned(),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    });
    let canned = {
        let next = lock(&shared.queue).pop_front();
        let mut last = lock(&shared.last);
        match next {
            Some(canned) => {
                *last = Some(canned.clone());
                canned
            }
            None => last.clone().unwrap_or_else(|| Canned::json(500, "{}")),
        }
    };
    respond(canned)
}

/// The response of a canned answer.
fn respond(canned: Canned) -> Response {
    let body = match canned.piece {
        None if canned.ending == Ending::Close => Body::from(canned.body),
        piece => {
            let size = piece.unwrap_or(canned.body.len()).max(1);
            let pieces: Vec<Result<Bytes, std::io::Error>> = canned
                .body
                .chunks(size)
                .map(|piece| Ok(Bytes::copy_from_slice(piece)))
                .collect();
            let sent = futures_util::stream::iter(pieces);
            match canned.ending {
                Ending::Close => Body::from_stream(sent),
                Ending::Hang => Body::from_stream(sent.chain(futures_util::stream::pending())),
            }
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(canned.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in &canned.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            response.headers_mut().append(name, value);
        }
    }
    response
}
