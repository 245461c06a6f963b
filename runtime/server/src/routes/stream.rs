//! `POST /v1/graph/stream`: the run's events as chunks, one JSON object a line (the reference's
//! framing, with its `text/event-stream` content type), or Server-Sent Events (`event:` and
//! `data:` lines) when the client's `Accept` asks for `text/event-stream` alone.
//!
//! A refusal (a bad answer, a paused or busy thread, a validator's rejection: everything the
//! engine refuses before the run changes the thread) is answered as a normal JSON error before
//! the stream begins, so a client sees the same status as on invoke. A failure after the run
//! began arrives as an `error` chunk in a 200 stream. A client that disconnects does not stop
//! the run: it goes on and is checkpointed; `/v1/graph/stop` stops it.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use serde_json::Value;
use tenx_engine::RunOutput;
use tenx_engine::ports::{Event, EventSink};
use tokio::sync::mpsc;

use super::api_error;
use super::run::{Prepared, prepare};
use crate::AppState;
use crate::chunks::ChunkContext;
use crate::envelope::{ApiError, ApiResult};
use crate::openapi::schemas::{GraphInput, RunResponses};
use crate::runs::Finished;

/// Sends a run's events to the stream.
struct ChannelSink(mpsc::UnboundedSender<Event>);

impl EventSink for ChannelSink {
    fn emit(&mut self, event: Event) {
        // A closed channel means the stream ended early; the run goes on regardless.
        let _ = self.0.send(event);
    }
}

/// `POST /v1/graph/stream`.
#[utoipa::path(post, path = "/v1/graph/stream", tag = "graph",
    summary = "The same as invoke, as chunks: one JSON object a line, or Server-Sent Events for `Accept: text/event-stream`",
    request_body = GraphInput, responses(RunResponses), security(("bearer" = ["graph:stream"])))]
pub async fn stream(State(state): State<AppState>, request: Request) -> ApiResult {
    let sse = wants_sse(request.headers());
    let prepared = prepare(&state, request, "graph:stream").await?;
    let chunks = start(&state, prepared).await?;
    Ok(respond(chunks, if sse { Framing::Sse } else { Framing::Lines }))
}

/// How a stream's chunks are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON chunk a line (the reference's framing).
    Lines,
    /// Server-Sent Events: `event: <event>` and `data: <chunk>`.
    Sse,
    /// Server-Sent Events with an `id: <n>` line each (the `GET` stream), so a browser
    /// `EventSource` that reconnects says how far it got and is not served the run again.
    EventSource,
}

/// The 200 response of a stream: its chunks, framed, with the reference's headers.
pub fn respond(mut chunks: mpsc::Receiver<Value>, framing: Framing) -> axum::response::Response {
    let (bytes_tx, bytes_rx) = mpsc::channel::<Result<Bytes, Infallible>>(64);
    tokio::spawn(async move {
        let mut sequence = 0_u64;
        while let Some(chunk) = chunks.recv().await {
            sequence = sequence.saturating_add(1);
            if bytes_tx.send(Ok(frame(&chunk, framing, sequence))).await.is_err() {
                return;
            }
        }
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(bytes_rx));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    // The reference labels its line-per-chunk body `text/event-stream` too; clients expect it.
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("identity"));
    response
}

/// Starts a prepared run and returns its chunks as they come. A refusal (everything the engine
/// refuses before the run changes the thread) is returned as an error instead, before any
/// chunk; a failure after the run began is the last chunk.
pub async fn start(state: &AppState, prepared: Prepared) -> Result<mpsc::Receiver<Value>, ApiError> {
    let max_steps = prepared
        .input
        .request
        .recursion_limit
        .unwrap_or_else(|| default_limit(state, prepared.input.request.graph.as_deref()));
    let mut context = ChunkContext {
        thread_id: prepared.thread_id.clone(),
        is_new_thread: prepared.is_new_thread,
        run_id: None,
        max_steps,
        step: 0,
        granularity: prepared.input.granularity,
        timestamp: now_seconds(),
        production: state.settings().mode == crate::Mode::Production,
    };
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let mut done = crate::runs::spawn(state, prepared.slot, prepared.input.request, ChannelSink(events_tx));
    let timeout = state.settings().run_timeout;

    // Hold the answer until the run has either begun changing the thread or been refused.
    let mut held = Vec::new();
    let mut outcome = None;
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => {
                    let refusal = matches!(event, Event::Rejected { .. });
                    held.push(event);
                    if !refusal {
                        break;
                    }
                }
                None => {
                    outcome = (&mut done).await.ok();
                    break;
                }
            },
            result = &mut done => {
                outcome = result.ok();
                break;
            }
        }
    }
    if let Some(Finished {
        outcome: Err(error), ..
    }) = &outcome
        && held.iter().all(|event| matches!(event, Event::Rejected { .. }))
    {
        return Err(api_error(state, error.clone()));
    }

    let (chunks_tx, chunks_rx) = mpsc::channel::<Value>(64);
    let production = state.settings().mode == crate::Mode::Production;
    tokio::spawn(async move {
        let mut saw_error = false;
        let mut pending = held.into_iter();
        loop {
            let event = match pending.next() {
                Some(event) => event,
                None => match events.recv().await {
                    Some(event) => event,
                    None => break,
                },
            };
            saw_error |= matches!(event, Event::Error { .. });
            for chunk in context.chunks(event) {
                if chunks_tx.send(chunk).await.is_err() {
                    return;
                }
            }
        }
        let outcome = match outcome {
            Some(outcome) => Some(outcome),
            None => done.await.ok(),
        };
        let last = match outcome.map(|finished| (finished.outcome, finished.timed_out)) {
            Some((_, true)) => context.error(
                "HTTPException",
                &super::run::timeout_message(timeout.unwrap_or_default()),
            ),
            Some((Ok(output), false)) => {
                let usage = totals(&output);
                let interrupted = output.thread.pending.is_some();
                let state = crate::state::agent_state(&output.thread);
                context.summary(state, interrupted, output.thread.context.len(), usage)
            }
            Some((Err(error), false)) if !saw_error => {
                let message = if production && error.code.status() >= 500 {
                    super::production_message(error.code.as_str()).to_owned()
                } else {
                    error.message.clone()
                };
                context.error(error.code.as_str(), &message)
            }
            Some((Err(_), false)) => None,
            None => context.error("GRAPH_STREAM_ERROR", "the run ended without an outcome"),
        };
        if let Some(chunk) = last {
            let _ = chunks_tx.send(chunk).await;
        }
    });
    Ok(chunks_rx)
}

/// Whether the client asks for Server-Sent Events framing: `Accept` names `text/event-stream`
/// and nothing else (a browser `EventSource`, or a client that says so).
fn wants_sse(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| {
            accept
                .split(',')
                .all(|part| part.trim().starts_with("text/event-stream"))
        })
}

fn frame(chunk: &Value, framing: Framing, sequence: u64) -> Bytes {
    let json = serde_json::to_string(chunk).unwrap_or_default();
    let event = chunk.get("event").and_then(Value::as_str).unwrap_or("message");
    match framing {
        Framing::Lines => Bytes::from(format!("{json}\n")),
        Framing::Sse => Bytes::from(format!("event: {event}\ndata: {json}\n\n")),
        Framing::EventSource => Bytes::from(format!("id: {sequence}\nevent: {event}\ndata: {json}\n\n")),
    }
}

fn totals(output: &RunOutput) -> [u64; 3] {
    let mut totals = [0_u64; 3];
    for message in &output.messages {
        if let Some(usage) = &message.usages {
            let [input, output, reasoning] = &mut totals;
            *input = input.saturating_add(usage.prompt_tokens);
            *output = output.saturating_add(usage.completion_tokens);
            *reasoning = reasoning.saturating_add(usage.reasoning_tokens);
        }
    }
    totals
}

fn default_limit(state: &AppState, graph: Option<&str>) -> u64 {
    let engine = state.engine();
    let graphs = &engine.artifact().artifact.graphs;
    graph
        .and_then(|name| graphs.get(name))
        .or_else(|| graphs.values().next())
        .map_or(25, |graph| graph.recursion_limit)
}

fn now_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}
