//! The HTTP load generator of the serve benchmark: `clients` concurrent clients, each on one
//! keep-alive HTTP/1.1 connection (hyper's client connection, no pool), sending one request
//! after another for a fixed time after a warm-up, or until a fixed number of requests is done.
//! A sample is one [`Workload`] step: one request, or a pause plus its resume. Any answer but
//! 200 (or a pause without an interrupt) fails the whole measurement with what came back.
//! Against several servers ([`run_on`]) the clients are spread over them in turn, or, for a
//! [`Workload::Handover`], every client talks to the first two: the pause to one, the resume to
//! the other.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// What one sample does.
#[derive(Debug, Clone)]
pub enum Workload {
    /// One `POST path` with this JSON body.
    Post {
        /// The route, e.g. `/v1/graph/invoke`.
        path: String,
        /// The body, sent as is.
        body: Bytes,
    },
    /// A run that pauses at an approval (`message` on a new thread `{prefix}{n}`, full
    /// granularity, so the answer carries the open interrupt) and, when `resume` is set, the
    /// resume that approves it with that `interrupt_id`: the refund's pause + resume cycle.
    Pause {
        /// The user message that pauses the run.
        message: String,
        /// The new threads' ids start with this; each sample adds its sequence number.
        prefix: String,
        /// Whether the sample also resumes the run with `{"approved": true}`.
        resume: bool,
    },
    /// The pause of [`Workload::Pause`] sent to the first server and its resume (approved,
    /// bound to the `interrupt_id`) to the second, so the resume takes the thread's lock that
    /// another replica held last.
    Handover {
        /// The user message that pauses the run.
        message: String,
        /// The new threads' ids start with this; each sample adds its sequence number.
        prefix: String,
    },
}

/// How long a measurement runs.
#[derive(Debug, Clone, Copy)]
pub enum Until {
    /// Samples in the first `warm_up` are thrown away; then samples are timed for `measure`.
    Elapsed {
        /// Untimed lead-in.
        warm_up: Duration,
        /// The timed stretch.
        measure: Duration,
    },
    /// Exactly this many samples in all clients together, every one timed.
    Count(u64),
}

/// What a measurement found.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// Concurrent clients.
    pub clients: usize,
    /// Timed samples.
    pub samples: usize,
    /// Samples done, warm-up included (for counting side effects).
    pub done: u64,
    /// Timed samples per second.
    pub throughput: f64,
    /// Median latency of a sample, in microseconds.
    pub p50_us: f64,
    /// 99th percentile latency of a sample, in microseconds.
    pub p99_us: f64,
    /// Median latency of the resume alone in a timed pause + resume sample (NaN without one).
    pub resume_p50_us: f64,
    /// 99th percentile latency of the resume alone (NaN without one).
    pub resume_p99_us: f64,
}

/// Runs `workload` against `addr` with `clients` concurrent connections until `until`.
///
/// # Errors
///
/// A connection that cannot be made, a transport error, or an answer that is not 200.
pub async fn run(addr: SocketAddr, workload: &Workload, clients: usize, until: Until) -> Result<Figures, String> {
    run_on(&[addr], workload, clients, until).await
}

/// Runs `workload` against several servers: client `i` on `addrs[i % addrs.len()]`, or, for a
/// [`Workload::Handover`], every client on both `addrs[0]` (pauses) and `addrs[1]` (resumes).
///
/// # Errors
///
/// No address (or fewer than two for a handover), a connection that cannot be made, a
/// transport error, or an answer that is not 200.
pub async fn run_on(
    addrs: &[SocketAddr],
    workload: &Workload,
    clients: usize,
    until: Until,
) -> Result<Figures, String> {
    let shared = Arc::new(Shared {
        workload: workload.clone(),
        until,
        next: AtomicU64::new(0),
        started: Instant::now(),
    });
    let mut handles = Vec::with_capacity(clients);
    for index in 0..clients {
        let senders = match workload {
            Workload::Handover { .. } => match addrs {
                [pause, resume, ..] => vec![connect(*pause).await?, connect(*resume).await?],
                _ => return Err("a handover needs two servers".to_owned()),
            },
            _ => {
                let addr = addrs
                    .get(index % addrs.len().max(1))
                    .ok_or("no server to send the load to")?;
                vec![connect(*addr).await?]
            }
        };
        let shared = Arc::clone(&shared);
        handles.push(tokio::spawn(client(senders, shared)));
    }
    let mut latencies: Vec<u32> = Vec::new();
    let mut resumes: Vec<u32> = Vec::new();
    let mut failure = None;
    let mut done = 0;
    for handle in handles {
        match handle.await {
            Ok(Ok(outcome)) => {
                latencies.extend(outcome.latencies);
                resumes.extend(outcome.resumes);
                done += outcome.done;
            }
            Ok(Err(error)) => failure = failure.or(Some(error)),
            Err(error) => failure = failure.or(Some(format!("a client task failed: {error}"))),
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    let seconds = match until {
        Until::Elapsed { measure, .. } => measure.as_secs_f64(),
        Until::Count(_) => shared.started.elapsed().as_secs_f64(),
    };
    latencies.sort_unstable();
    resumes.sort_unstable();
    #[expect(clippy::cast_precision_loss, reason = "a count to print")]
    let throughput = latencies.len() as f64 / seconds;
    Ok(Figures {
        clients,
        samples: latencies.len(),
        done,
        throughput,
        p50_us: at(&latencies, 0.50),
        p99_us: at(&latencies, 0.99),
        resume_p50_us: at(&resumes, 0.50),
        resume_p99_us: at(&resumes, 0.99),
    })
}

/// The `share` quantile of sorted microseconds (NaN when there are none).
fn at(sorted: &[u32], share: f64) -> f64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into the sorted samples, within 0..len"
    )]
    let index = ((sorted.len() as f64) * share) as usize;
    sorted
        .get(index.min(sorted.len().saturating_sub(1)))
        .map_or(f64::NAN, |&micros| f64::from(micros))
}

struct Shared {
    workload: Workload,
    until: Until,
    next: AtomicU64,
    started: Instant,
}

struct Outcome {
    latencies: Vec<u32>,
    resumes: Vec<u32>,
    done: u64,
}

/// Opens one keep-alive HTTP/1.1 connection; its driver runs as its own task.
async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|error| format!("connecting to {addr}: {error}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|error| format!("HTTP handshake with {addr}: {error}"))?;
    tokio::spawn(async move {
        let _closed = connection.await;
    });
    Ok(sender)
}

async fn client(mut senders: Vec<SendRequest<Full<Bytes>>>, shared: Arc<Shared>) -> Result<Outcome, String> {
    let mut latencies = Vec::new();
    let mut resumes = Vec::new();
    let mut done = 0;
    loop {
        let sequence = shared.next.fetch_add(1, Ordering::Relaxed);
        let (timed, deadline) = match shared.until {
            Until::Count(count) => (sequence < count, sequence >= count),
            Until::Elapsed { warm_up, measure } => {
                let elapsed = shared.started.elapsed();
                (elapsed >= warm_up, elapsed >= warm_up + measure)
            }
        };
        if deadline {
            break;
        }
        let started = Instant::now();
        let resumed = sample(&mut senders, &shared.workload, sequence).await?;
        let took = started.elapsed();
        done += 1;
        let in_window = match shared.until {
            Until::Count(_) => true,
            Until::Elapsed { warm_up, measure } => shared.started.elapsed() <= warm_up + measure,
        };
        if timed && in_window {
            latencies.push(micros(took));
            resumes.extend(resumed.map(micros));
        }
    }
    Ok(Outcome {
        latencies,
        resumes,
        done,
    })
}

fn micros(took: Duration) -> u32 {
    u32::try_from(took.as_micros()).unwrap_or(u32::MAX)
}

/// One sample of `workload` on the client's connections (the first, and for a handover the
/// second for the resume); `sequence` numbers it among all clients. The resume's own time when
/// there was one.
async fn sample(
    senders: &mut [SendRequest<Full<Bytes>>],
    workload: &Workload,
    sequence: u64,
) -> Result<Option<Duration>, String> {
    let (message, prefix, resume, on_other) = match workload {
        Workload::Post { path, body } => {
            let sender = senders.first_mut().ok_or("no connection")?;
            post(sender, path, body.clone()).await?;
            return Ok(None);
        }
        Workload::Pause {
            message,
            prefix,
            resume,
        } => (message, prefix, *resume, false),
        Workload::Handover { message, prefix } => (message, prefix, true, true),
    };
    let thread = format!("{prefix}{sequence}");
    let ask = json!({
        "messages": [{"role": "user", "content": [{"type": "text", "text": message}]}],
        "config": {"thread_id": thread},
        "response_granularity": "full",
    });
    let sender = senders.first_mut().ok_or("no connection")?;
    let paused = post(sender, "/v1/graph/invoke", Bytes::from(ask.to_string())).await?;
    let interrupt = interrupt_id(&paused, "data.state.execution_meta")
        .ok_or_else(|| format!("thread {thread} did not pause at an interrupt"))?;
    if !resume {
        return Ok(None);
    }
    let sender = senders
        .get_mut(usize::from(on_other))
        .ok_or("no second connection for the handover")?;
    let started = Instant::now();
    post(sender, "/v1/graph/invoke", resume_body(&thread, &interrupt)).await?;
    Ok(Some(started.elapsed()))
}

/// The resume that approves `interrupt` on `thread`.
#[must_use]
pub fn resume_body(thread: &str, interrupt: &str) -> Bytes {
    let body = json!({
        "resume": {"approved": true},
        "interrupt_id": interrupt,
        "config": {"thread_id": thread},
    });
    Bytes::from(body.to_string())
}

/// The open interrupt's id in a JSON answer, under `execution_meta` at the dotted `path`.
#[must_use]
pub fn interrupt_id(body: &[u8], path: &str) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let meta = path.split('.').try_fold(&value, |value, key| value.get(key))?;
    meta.get("interrupt_data")?
        .get("interrupt")?
        .get("id")?
        .as_str()
        .map(str::to_owned)
}

/// `POST path` with a JSON `body`; the answer's body when it is 200.
///
/// # Errors
///
/// A transport error, or another status (with the start of the body).
pub async fn post(sender: &mut SendRequest<Full<Bytes>>, path: &str, body: Bytes) -> Result<Bytes, String> {
    send(sender, Method::POST, path, body).await
}

/// `method path` with a JSON `body` (empty for `GET`); the answer's body when it is 200.
///
/// # Errors
///
/// A transport error, or another status (with the start of the body).
pub async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    method: Method,
    path: &str,
    body: Bytes,
) -> Result<Bytes, String> {
    sender
        .ready()
        .await
        .map_err(|error| format!("connection lost before {method} {path}: {error}"))?;
    let request = Request::builder()
        .method(method.clone())
        .uri(path)
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .body(Full::new(body))
        .map_err(|error| format!("building {method} {path}: {error}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| format!("{method} {path}: {error}"))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|error| format!("reading the answer to {method} {path}: {error}"))?
        .to_bytes();
    if status == StatusCode::OK {
        Ok(bytes)
    } else {
        let text = String::from_utf8_lossy(&bytes);
        Err(format!(
            "{method} {path} answered {status}: {}",
            text.chars().take(300).collect::<String>()
        ))
    }
}

/// One connection for single requests outside a measurement (set-up and checks).
///
/// # Errors
///
/// The connection cannot be made.
pub async fn connection(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, String> {
    connect(addr).await
}
