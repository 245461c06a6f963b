//! A request's way in: pick the graph and thread, take the thread's lock (one run per thread),
//! load it, check who asks, and hand over to a resume, a remote result or a new run. Every
//! refusal happens before anything is written, so a refused request records nothing.

use std::collections::BTreeMap;

use crate::engine::{Engine, Inner};
use crate::ports::EventSink;
use crate::request::{OnBusy, RunOutput, RunRequest};
use crate::thread::{PendingKind, ThreadRecord};
use crate::wire::{ExecutionMeta, Role};
use crate::{ErrorCode, RunError};

use super::working::store_error;
use super::{Working, answer, input, start};

impl Engine {
    /// Serves one request on a thread: a new message (a new run), an answer to the open
    /// question (`resume`), or the result of a waiting remote tool call. Returns the messages
    /// the run produced and the committed thread; a refusal leaves the thread exactly as it was.
    pub async fn run(&self, request: RunRequest, events: &mut dyn EventSink) -> Result<RunOutput, RunError> {
        let inner = &*self.inner;
        let (graph_name, graph) = pick_graph(inner, request.graph.as_deref())?;
        input::check_shape(&request)?;
        let id_failures = inner.ports.ids.failures();
        let (thread_id, named) = match request.thread_id.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => (id.to_owned(), true),
            _ => (inner.ports.ids.thread_id(), false),
        };
        if inner.ports.ids.failures() != id_failures {
            return Err(super::working::random_source_unavailable());
        }
        if request.on_busy == OnBusy::Cancel {
            super::cancel_anywhere(inner, &thread_id).await;
        }
        let lease = match tokio::time::timeout(inner.options.busy_wait, inner.ports.store.lock(&thread_id)).await {
            Ok(lease) => lease.map_err(store_error)?,
            Err(_) => return Err(RunError::new(ErrorCode::ThreadBusy, "thread is busy")),
        };
        let stored = inner.ports.store.load(&thread_id).await.map_err(store_error)?;
        if let Some(record) = &stored {
            // An answer may come from an approver who does not own the thread; whoever may not
            // answer it is refused here, before anything about the thread is told.
            match &request.resume {
                Some(resume) => answer::refuse_stranger(inner, record, resume.value.is_null(), &request.identity)?,
                None if inner.options.auth && record.owner != request.identity.user_id => {
                    return Err(RunError::new(
                        ErrorCode::NotAuthorized,
                        "Not authorized to invoke graph",
                    ));
                }
                None => {}
            }
            if record.graph != graph_name {
                return Err(RunError::new(
                    ErrorCode::InvalidRequest,
                    format!("thread '{thread_id}' runs graph '{}', not '{graph_name}'", record.graph),
                ));
            }
        } else if named && request.resume.is_some() {
            return Err(nothing_to_resume());
        }
        // `tenxc dev`: a question another artifact asked is asked again (or withdrawn) before
        // the request meets it. An answer that names no interrupt was written for the old
        // question, so it is refused; one that names the old id is refused by D1 below.
        let stored = match stored {
            Some(record) if super::reask::needs_reask(inner, &record) => {
                // Its events are not this request's: the request then meets the new question.
                let outcome = super::reask::reask_locked(inner, record, &mut crate::ports::NullEvents).await;
                if let Some(crate::ReaskOutcome::Failed(error)) = outcome {
                    return Err(error);
                }
                let reloaded = inner.ports.store.load(&thread_id).await.map_err(store_error)?;
                if let (Some(resume), Some(crate::ReaskOutcome::Reasked { interrupt_id, .. })) =
                    (&request.resume, &outcome)
                    && resume.interrupt_id.is_none()
                {
                    return Err(RunError::new(
                        ErrorCode::GraphVersionMismatch,
                        format!(
                            "the program changed since thread '{thread_id}' asked its question; it was asked again as interrupt '{interrupt_id}': read it and answer that one"
                        ),
                    ));
                }
                reloaded
            }
            stored => stored,
        };
        // From here on the request is the thread's run in this process: a stop reaches it, the
        // part below included.
        let cancel = inner.running.start(&thread_id);
        let stored = match stored {
            Some(record) if request.resume.is_none() && record.pending.is_none() && record.run.is_some() => {
                match crash_left_first(inner, &thread_id, cancel.clone(), request.on_busy).await {
                    Ok(reloaded) => reloaded,
                    Err(error) => {
                        inner.running.finish(&thread_id);
                        return Err(error);
                    }
                }
            }
            stored => stored,
        };
        let is_new_thread = stored.is_none();
        let stored_version = stored.as_ref().map(|record| record.version);
        let record = stored.unwrap_or_else(|| new_thread(inner, &thread_id, &graph_name, &request));
        let mut working = Working::new(inner, (graph_name, graph), record, stored_version, events, cancel);
        working.id_failures = id_failures;
        let before = working.record.context.len();
        let outcome = serve(&mut working, request).await;
        inner.running.finish(&thread_id);
        drop(lease);
        outcome?;
        let mut messages = Vec::new();
        if !working.produced_starts_with_user()
            && let Some(last_user) = working
                .record
                .context
                .iter()
                .take(before)
                .rev()
                .find(|message| message.role == Role::User)
        {
            messages.push(last_user.clone());
        }
        messages.append(&mut working.take_produced());
        Ok(RunOutput {
            thread_id,
            is_new_thread,
            messages,
            thread: working.record,
        })
    }
}

/// A run a crash left (in progress, waiting for nothing, and nobody else holds the lock) goes on
/// first, as recovery would go on with it: a new message must never replace a run whose call
/// may be in flight. It runs under the request's `cancel`, so a stop that lands here stops the
/// request: the run stops as any run does, and the request's own run then stops before its
/// first step (see `start::new_run`). With `on_busy = "cancel"` it only settles its calls (the
/// call in flight sent again under its key, the round's other calls "not run") and ends as a
/// cancelled run ends, without asking its model again. Its events are not this request's.
/// Returns the thread as it left it.
async fn crash_left_first(
    inner: &Inner,
    thread_id: &str,
    cancel: tokio_util::sync::CancellationToken,
    on_busy: OnBusy,
) -> Result<Option<ThreadRecord>, RunError> {
    let outcome = super::recover::go_on_first(inner, thread_id, cancel, on_busy == OnBusy::Cancel).await;
    let reloaded = inner.ports.store.load(thread_id).await.map_err(store_error)?;
    // A run that failed going on is recorded as failed and at rest: the message is then served.
    // One still in progress could not be settled (the store failed).
    if let crate::RecoveryOutcome::Failed(error) = outcome
        && reloaded
            .as_ref()
            .is_some_and(|record| record.run.is_some() && record.pending.is_none())
    {
        return Err(error);
    }
    Ok(reloaded)
}

/// Dispatches on what the request is, given the thread's state.
async fn serve(working: &mut Working<'_>, request: RunRequest) -> Result<(), RunError> {
    if let Some(resume) = request.resume {
        return answer::resume(working, resume, request.messages, &request.identity).await;
    }
    match working.record.pending.as_ref().map(|pending| &pending.kind) {
        Some(PendingKind::RemoteTool { .. }) => {
            if input::is_tool_results(&request.messages) {
                return input::remote_results(working, request.messages).await;
            }
            Err(remote_pending(working))
        }
        Some(PendingKind::ToolApproval { .. } | PendingKind::InterruptNode { .. }) => {
            // A result for the call paused for approval (a server tool) never answers it.
            if input::is_tool_results(&request.messages) {
                return Err(input::unexpected_results(&working.record, &request.messages));
            }
            answer::refuse_if_expired(working).await?;
            Err(paused_at_question(working))
        }
        None => {
            if input::is_tool_results(&request.messages) {
                return Err(input::unexpected_results(&working.record, &request.messages));
            }
            start::new_run(working, request).await
        }
    }
}

/// A new message while a remote call waits for its result (`REMOTE_TOOL_PENDING`).
pub(crate) fn remote_pending(working: &Working<'_>) -> RunError {
    let call = match working.record.pending.as_ref().map(|pending| &pending.kind) {
        Some(PendingKind::RemoteTool { call_id, .. }) => call_id.clone(),
        _ => String::new(),
    };
    RunError::new(
        ErrorCode::RemoteToolPending,
        format!("remote tool call '{call}' is waiting for its result; send a tool message with a tool_result for it"),
    )
}

/// D4: a new message to a thread paused at a question (`INTERRUPT_004`).
pub(crate) fn paused_at_question(working: &Working<'_>) -> RunError {
    let (id, node) = open_question(working);
    RunError::new(
        ErrorCode::ThreadPaused,
        format!("Thread is paused at interrupt '{id}' in node '{node}'. Resume it with {{'resume': value}}."),
    )
}

/// The id and node of the thread's open question (empty when none is open).
pub(crate) fn open_question(working: &Working<'_>) -> (String, String) {
    working
        .record
        .pending
        .as_ref()
        .and_then(|pending| pending.interrupt.as_ref())
        .map(|interrupt| (interrupt.id.clone(), interrupt.node.clone()))
        .unwrap_or_default()
}

/// The graph a request names, or the artifact's only one.
fn pick_graph<'i>(inner: &'i Inner, name: Option<&str>) -> Result<(String, &'i tenx_artifact::Graph), RunError> {
    let graphs = &inner.artifact.artifact.graphs;
    match name {
        Some(name) => graphs
            .get(name)
            .map(|graph| (name.to_owned(), graph))
            .ok_or_else(|| RunError::new(ErrorCode::InvalidRequest, format!("no graph named '{name}'"))),
        None => match graphs.iter().next() {
            Some((name, graph)) if graphs.len() == 1 => Ok((name.clone(), graph)),
            _ => Err(RunError::new(
                ErrorCode::InvalidRequest,
                format!("the artifact serves {} graphs; name one", graphs.len()),
            )),
        },
    }
}

/// A thread that does not exist yet (it is stored by the run's first commit).
fn new_thread(inner: &Inner, thread_id: &str, graph: &str, request: &RunRequest) -> ThreadRecord {
    let now = inner.ports.clock.now();
    ThreadRecord {
        format: crate::thread::CheckpointFormat::CURRENT,
        thread_id: thread_id.to_owned(),
        artifact_id: inner.artifact_id.clone(),
        graph: graph.to_owned(),
        owner: request.identity.user_id.clone(),
        version: 0,
        created_at: now,
        updated_at: now,
        state: serde_json::Map::new(),
        context: Vec::new(),
        execution: ExecutionMeta::new(thread_id),
        pending: None,
        run: None,
        resume_at: None,
        model_cursors: BTreeMap::new(),
        substitutions: inner.options.substitutions.clone(),
        stopped_run: None,
    }
}

/// D2: a resume on a thread that is not paused at a question.
pub(crate) fn nothing_to_resume() -> RunError {
    RunError::new(
        ErrorCode::NothingToResume,
        "Nothing to resume: this thread is not paused at an interrupt",
    )
}
