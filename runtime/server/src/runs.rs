//! Runs in progress in this process: the per-user cap (`max_concurrent_runs_per_user`, 429
//! `TOO_MANY_RUNS`), the run timeout (`run_timeout`), and shutdown. Every run goes through
//! [`spawn`]: it runs in a task of its own (a client that goes away does not cut a step short),
//! holds its [`Slot`] until it ends, and is observed by the metrics. A run past its timeout is
//! asked to stop after its step ([`Engine::stop_after_step`]): the step in flight finishes and
//! is checkpointed, and the run ends as a stop does, so the thread stays consistent. At
//! shutdown ([`Runs::close`]) no new run starts and every run stops the same way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;
use tenx_engine::ports::EventSink;
use tenx_engine::{Engine, RunError, RunOutput, RunRequest};
use tokio::sync::{Notify, oneshot};

use crate::AppState;
use crate::envelope::ApiError;
use crate::metrics::Observed;

/// How often a stop is asked again of a run that had not begun yet (it waited for its thread).
const RETRY: Duration = Duration::from_millis(20);

/// The runs of this process.
#[derive(Debug, Default)]
pub struct Runs {
    active: Mutex<Active>,
    closed: AtomicBool,
    ended: Notify,
}

#[derive(Default)]
struct Active {
    by_user: HashMap<String, usize>,
    runs: HashMap<u64, (Engine, String)>,
    next: u64,
}

impl std::fmt::Debug for Active {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Active")
            .field("runs", &self.runs.len())
            .finish()
    }
}

/// A run's place: held until the run ends.
pub struct Slot {
    runs: Arc<Runs>,
    id: u64,
    user: Option<String>,
    engine: Engine,
    thread_id: String,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Slot")
            .field("id", &self.id)
            .field("thread_id", &self.thread_id)
            .finish_non_exhaustive()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut active) = self.runs.active.lock() {
            active.runs.remove(&self.id);
            if let Some(user) = &self.user
                && let Some(count) = active.by_user.get_mut(user)
            {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    active.by_user.remove(user);
                }
            }
        }
        self.runs.ended.notify_waiters();
    }
}

impl Runs {
    /// A place for a run of `engine` on `thread_id` for `user`, who may have at most `cap` runs
    /// at once (`None`: no cap; anonymous callers are not capped, as in the reference).
    pub fn acquire(
        self: &Arc<Self>,
        engine: Engine,
        thread_id: &str,
        user: Option<&str>,
        cap: Option<usize>,
    ) -> Result<Slot, ApiError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "SHUTTING_DOWN",
                "The server is shutting down; retry on another instance",
            ));
        }
        let Ok(mut active) = self.active.lock() else {
            return Err(ApiError::http(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the run registry failed",
            ));
        };
        if let (Some(user), Some(cap)) = (user, cap) {
            let count = active.by_user.get(user).copied().unwrap_or(0);
            if count >= cap {
                let mut error = ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "TOO_MANY_RUNS",
                    format!("Too many runs in progress for this user (limit {cap}). Wait for one to finish and retry."),
                );
                error.extra.insert("limit".to_owned(), json!(cap));
                return Err(error);
            }
            active.by_user.insert(user.to_owned(), count.saturating_add(1));
        }
        let id = active.next;
        active.next = active.next.wrapping_add(1);
        active.runs.insert(id, (engine.clone(), thread_id.to_owned()));
        Ok(Slot {
            runs: self.clone(),
            id,
            user: user.map(str::to_owned),
            engine,
            thread_id: thread_id.to_owned(),
        })
    }

    /// How many runs are in progress.
    pub fn count(&self) -> usize {
        self.active.lock().map_or(0, |active| active.runs.len())
    }

    /// Shutdown begins: no new run starts (503 `SHUTTING_DOWN`) and every run in progress is
    /// asked to stop after its step, again and again until none is left (a run that waited for
    /// its thread begins later).
    pub fn close(self: &Arc<Self>) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let runs = self.clone();
        tokio::spawn(async move {
            loop {
                let active: Vec<(Engine, String)> = match runs.active.lock() {
                    Ok(active) => active.runs.values().cloned().collect(),
                    Err(_) => return,
                };
                if active.is_empty() {
                    return;
                }
                for (engine, thread_id) in &active {
                    engine.stop_after_step(thread_id);
                }
                tokio::time::sleep(RETRY).await;
            }
        });
    }

    /// Waits until no run is left, for at most `grace`. How many were still running then.
    pub async fn wait_idle(&self, grace: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let ended = self.ended.notified();
            let left = self.count();
            if left == 0 {
                return 0;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                return self.count();
            }
        }
    }
}

/// How a run ended: its outcome, and whether the run timeout stopped it.
#[derive(Debug)]
pub struct Finished {
    /// The engine's answer.
    pub outcome: Result<RunOutput, RunError>,
    /// Whether the run passed `run_timeout` (it was asked to stop after its step).
    pub timed_out: bool,
}

/// Runs `request` in a task of its own, holding `slot`, its events to `sink` (observed by the
/// metrics), under the run timeout. The answer arrives when the run ends.
pub fn spawn<S: EventSink + 'static>(
    state: &AppState,
    slot: Slot,
    request: RunRequest,
    sink: S,
) -> oneshot::Receiver<Finished> {
    let metrics = state.metrics_handle();
    let timeout = state.settings().run_timeout;
    let (done, answer) = oneshot::channel();
    tokio::spawn(async move {
        let engine = slot.engine.clone();
        let began = timeout.map(|_| Arc::new(AtomicBool::new(false)));
        let mut sink = Observed::new(sink, metrics.clone(), engine.clone(), began.clone());
        if let Some(metrics) = &metrics {
            metrics.in_progress(1);
        }
        let (outcome, timed_out) = {
            let run = engine.run(request, &mut sink);
            tokio::pin!(run);
            match timeout {
                None => (run.await, false),
                Some(limit) => {
                    tokio::select! {
                        outcome = &mut run => (outcome, false),
                        () = tokio::time::sleep(limit) => {
                            (stop_after_step(&engine, &slot.thread_id, began.as_deref(), &mut run).await, true)
                        }
                    }
                }
            }
        };
        sink.finish();
        if let Some(metrics) = &metrics {
            metrics.in_progress(-1);
            metrics.run_ended(&outcome, timed_out);
        }
        drop(slot);
        let _ = done.send(Finished { outcome, timed_out });
    });
    answer
}

/// Asks the run to stop after its step once it has begun (until then it waits for its thread,
/// and a stop would reach the run that holds it), then waits for it to end.
async fn stop_after_step<F>(
    engine: &Engine,
    thread_id: &str,
    began: Option<&AtomicBool>,
    run: &mut std::pin::Pin<&mut F>,
) -> Result<RunOutput, RunError>
where
    F: Future<Output = Result<RunOutput, RunError>>,
{
    loop {
        if began.is_some_and(|began| began.load(Ordering::Acquire)) && engine.stop_after_step(thread_id) {
            return run.await;
        }
        tokio::select! {
            outcome = &mut *run => return outcome,
            () = tokio::time::sleep(RETRY) => {}
        }
    }
}
