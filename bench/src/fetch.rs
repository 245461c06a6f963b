//! The fan-out benchmark's tool server, stood in for on loopback: `POST /fetch` with a `topic`
//! answers `{"topic": …, "summary": …}` after a fixed delay (a tokio sleep, so concurrent
//! requests wait at the same time, as a tool waiting on I/O does). It counts the requests and the
//! most that were in flight at once, so a run can check that its fetches were made and whether
//! they overlapped. It runs on its own thread and single-threaded runtime, like the refund
//! stand-in (`standin.rs`), so its work is not done on the measured engine's threads.
//! [`Fetcher`] posts to it bare, through the client tenx's `http` tools use: the floor under
//! every framework's fetch.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

/// The running stand-in.
pub struct FetchStandIn {
    /// Where it listens.
    pub addr: SocketAddr,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    delay: Duration,
    answered: AtomicU64,
    in_flight: AtomicU64,
    most_in_flight: AtomicU64,
}

impl FetchStandIn {
    /// Binds a free loopback port and serves on a thread of its own, each answer after `delay`.
    ///
    /// # Errors
    ///
    /// The port, the runtime or the thread cannot be had.
    pub fn start(delay: Duration) -> Result<Self, String> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|error| format!("binding the fetch stand-in: {error}"))?;
        let addr = listener
            .local_addr()
            .map_err(|error| format!("the fetch stand-in's address: {error}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|error| format!("the fetch stand-in's socket: {error}"))?;
        let counts = Arc::new(Counts {
            delay,
            ..Counts::default()
        });
        let router = Router::new()
            .route("/fetch", post(fetch))
            .with_state(Arc::clone(&counts));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| format!("the fetch stand-in's runtime: {error}"))?;
        std::thread::Builder::new()
            .name("fetch-stand-in".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let _stopped = axum::serve(listener, router).await;
                });
            })
            .map_err(|error| format!("the fetch stand-in's thread: {error}"))?;
        Ok(Self { addr, counts })
    }

    /// Its base URL, what `FANOUT_URL` is set to.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests answered so far.
    #[must_use]
    pub fn answered(&self) -> u64 {
        self.counts.answered.load(Ordering::SeqCst)
    }

    /// The most requests that were waiting at the same time so far.
    #[must_use]
    pub fn most_in_flight(&self) -> u64 {
        self.counts.most_in_flight.load(Ordering::SeqCst)
    }

    /// Forgets the most in flight (before a measurement of its own).
    pub fn reset_most_in_flight(&self) {
        self.counts.most_in_flight.store(0, Ordering::SeqCst);
    }
}

/// Bare fetches from the stand-in: one POST and its whole answer read, nothing else, through
/// the shared client of tenx's `http` tools (`tenx_tools::http::client`, which also installs
/// the process's TLS provider).
pub struct Fetcher {
    client: reqwest::Client,
    url: String,
}

impl Fetcher {
    /// A fetcher for the stand-in at `url`.
    ///
    /// # Errors
    ///
    /// The client cannot be built.
    pub fn new(url: &str) -> Result<Self, String> {
        let client = tenx_tools::http::client().map_err(|error| format!("the http client: {error}"))?;
        Ok(Self {
            client,
            url: format!("{url}/fetch"),
        })
    }

    /// Fetches `topic`: the stand-in's answer.
    ///
    /// # Errors
    ///
    /// The request failed, was refused, or its answer is not JSON.
    pub async fn fetch(&self, topic: &str) -> Result<Value, String> {
        let response = self
            .client
            .post(&self.url)
            .json(&json!({"topic": topic}))
            .send()
            .await
            .map_err(|error| format!("fetching {topic}: {error}"))?;
        if !response.status().is_success() {
            return Err(format!("fetching {topic}: {}", response.status()));
        }
        response
            .json()
            .await
            .map_err(|error| format!("fetching {topic}: {error}"))
    }
}

async fn fetch(State(counts): State<Arc<Counts>>, Json(body): Json<Value>) -> Json<Value> {
    let now = counts.in_flight.fetch_add(1, Ordering::SeqCst).saturating_add(1);
    counts.most_in_flight.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(counts.delay).await;
    counts.in_flight.fetch_sub(1, Ordering::SeqCst);
    counts.answered.fetch_add(1, Ordering::SeqCst);
    let topic = body.get("topic").and_then(Value::as_str).unwrap_or("?");
    Json(json!({"topic": topic, "summary": format!("what is known about {topic}")}))
}
