//! The fan-out benchmark's tool server, stood in for on loopback: `POST /fetch` with a `topic`
//! answers `{"topic": …, "summary": …}` after a fixed delay (a tokio sleep, so concurrent
//! requests wait at the same time, as a tool waiting on I/O does). It counts the requests and the
//! most that were in flight at once, so a run can check that its fetches were made and whether
//! they overlapped. It runs on its own thread and single-threaded runtime, like the refund
//! stand-in (`standin.rs`), so its work is not done on the measured engine's threads, and it
//! reads that thread's CPU time ([`FetchStandIn::cpu_us`]) so the bench can take it off the
//! process's: LangGraph's Python process does not serve the fetches either.
//! [`Fetcher`] posts to it bare, through the client tenx's `http` tools use: the floor under
//! every framework's fetch.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
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
    /// `/proc/PID/task/TID/schedstat` of its thread (`None` where there is no such file).
    schedstat: Option<PathBuf>,
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
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("fetch-stand-in".to_owned())
            .spawn(move || {
                // `/proc/thread-self` names this thread as `PID/task/TID`.
                let own = std::fs::read_link("/proc/thread-self")
                    .ok()
                    .map(|task| Path::new("/proc").join(task).join("schedstat"));
                let _ = sender.send(own);
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let _stopped = axum::serve(listener, router).await;
                });
            })
            .map_err(|error| format!("the fetch stand-in's thread: {error}"))?;
        let schedstat = receiver.recv().ok().flatten().filter(|path| path.exists());
        Ok(Self {
            addr,
            counts,
            schedstat,
        })
    }

    /// The CPU time its thread has had so far, in µs (the first field of its `schedstat`, in
    /// ns): what serving the fetches cost this process. `None` where it cannot be read.
    #[must_use]
    pub fn cpu_us(&self) -> Option<f64> {
        let text = std::fs::read_to_string(self.schedstat.as_ref()?).ok()?;
        let nanoseconds: u64 = text.split_whitespace().next()?.parse().ok()?;
        #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
        let micros = nanoseconds as f64 / 1000.0;
        Some(micros)
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

    /// Fetches every topic at once, on this task (as a fork's lanes are polled): the answers in
    /// the topics' order.
    ///
    /// # Errors
    ///
    /// One of the fetches failed.
    pub async fn fetch_all(&self, topics: &[&str]) -> Result<Vec<Value>, String> {
        futures_util::future::join_all(topics.iter().map(|topic| self.fetch(topic)))
            .await
            .into_iter()
            .collect()
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
