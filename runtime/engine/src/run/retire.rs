//! Ending, at recovery, a run this artifact cannot continue: a thread made by another artifact
//! (D16) that a dead process left mid-run. Its graph may differ here, so nothing of it is run
//! again and no call of it is sent again under this program; left alone it would stay mid-run
//! forever. Instead its run is ended in one commit, its data kept: each call in flight becomes
//! `outcome_unknown` (receipt, record, and the error result the conversation shows), the
//! turn's other open calls are answered "not run", and the execution shows the error
//! `GRAPH_VERSION_MISMATCH`. A new user message then starts a new run under this artifact.

use std::sync::Arc;

use serde_json::json;

use crate::engine::Inner;
use crate::ports::{Commit, Event, EventSink, Record};
use crate::thread::{QueuedCall, ROOT_BRANCH, ThreadRecord};
use crate::wire::{ExecutionStatus, Message, Role};
use crate::{ErrorCode, RunError};

use super::working::{random_source_unavailable, store_error};

/// Ends `record`'s run (made by another artifact) and commits it over `record.version`.
/// Returns the error the run ended with.
pub(crate) async fn end_other_artifact(
    inner: &Inner,
    mut record: ThreadRecord,
    events: &mut dyn EventSink,
) -> Result<RunError, RunError> {
    let id_failures = inner.ports.ids.failures();
    let store = &inner.ports.store;
    let thread_id = record.thread_id.clone();
    let error = RunError::new(
        ErrorCode::GraphVersionMismatch,
        format!(
            "thread '{thread_id}' was left mid-run by artifact {} and cannot go on under artifact {}: its run was ended, its calls in flight were not sent again (outcome_unknown); a new message starts a new run",
            record.artifact_id, inner.artifact_id
        ),
    );
    let now = inner.ports.clock.now();
    let calls = record
        .run
        .as_ref()
        .map(super::stopped_fork::calls_in_flight)
        .unwrap_or_default();
    // The thread's own turn can have only the root branch's call in flight; a branch's calls are
    // in the branch's conversation.
    let in_flight_call = record
        .run
        .as_ref()
        .and_then(|run| run.branches.get(ROOT_BRANCH))
        .and_then(|root| root.in_flight.clone());
    let markers = store.in_flight(&thread_id).await.map_err(store_error)?;
    let mut receipts = Vec::new();
    let mut records = Vec::new();
    let reason = ErrorCode::GraphVersionMismatch.as_str();
    for (receipt, fields) in super::abandoned::outcome_unknown(markers, &calls, reason) {
        records.push(Record {
            thread_id: thread_id.clone(),
            at: now,
            kind: "tool_call".to_owned(),
            fields,
        });
        receipts.push(receipt);
    }
    // The conversation stays well formed: every call of the last model turn gets its answer.
    let answers = open_calls(&record.context)
        .into_iter()
        .map(|(node, call)| {
            let in_flight = in_flight_call.as_ref().is_some_and(|sent| sent.call_id == call.id);
            let text = if in_flight {
                format!(
                    "Tool '{}' failed: the runtime stopped while the call ran, and the program changed since; it cannot tell whether the call took effect and did not send it again (outcome_unknown)",
                    call.name
                )
            } else {
                "Not run: the run ended when the program changed.".to_owned()
            };
            let tool = in_flight_call
                .as_ref()
                .filter(|_| in_flight)
                .map_or_else(|| call.name.clone(), |sent| sent.tool.clone());
            let empty = Message::text(inner.ports.ids.message_id(), Role::Tool, "", inner.ports.clock.now_seconds());
            super::calls::answer_message(empty, &node, &call, &tool, json!(text), true)
        })
        .collect::<Vec<_>>();
    if inner.ports.ids.failures() != id_failures {
        return Err(random_source_unavailable());
    }
    record.context.extend(answers.into_iter().map(Arc::new));
    let execution = &mut record.execution;
    execution.status = ExecutionStatus::Error;
    execution.internal_data.insert("error".to_owned(), json!(error.message));
    execution
        .internal_data
        .insert("error_code".to_owned(), json!(error.code.as_str()));
    execution.interrupted_node = None;
    execution.interrupt_reason = None;
    execution.interrupt_data = None;
    record.run = None;
    record.resume_at = None;
    let expected = record.version;
    record.version = expected.saturating_add(1);
    record.updated_at = now;
    let commit = Commit {
        thread: Some(record),
        expected_version: Some(expected),
        receipts,
        records,
    };
    store.commit(commit).await.map_err(store_error)?;
    events.emit(Event::Error {
        code: error.code.as_str().to_owned(),
        message: error.message.clone(),
    });
    Ok(error)
}

/// The calls of the conversation's last model turn that have no result, with the node that
/// made them.
pub(crate) fn open_calls(context: &[Arc<Message>]) -> Vec<(String, QueuedCall)> {
    let node = context
        .iter()
        .rev()
        .find(|message| message.role != Role::Tool)
        .filter(|message| message.role == Role::Assistant)
        .and_then(|message| message.metadata.get("node"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    let Some(node) = node else {
        return Vec::new();
    };
    super::agent::unanswered_calls(context, &node)
        .into_iter()
        .map(|call| (node.clone(), call))
        .collect()
}
