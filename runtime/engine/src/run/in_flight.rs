//! The call in flight: before a call is sent, the whole checkpoint is committed with the call
//! (`Branch::in_flight`) and its in-flight receipt, so whatever the run decided before it (an
//! answer, an edit, the results of earlier calls, their records) is durable before any effect
//! can happen. The commit that stores the call's receipt clears it. A run that finds its branch
//! with a call in flight (after a crash: see [`super::recover`]) finishes exactly that call
//! through [`super::execute::run_tool`], which re-sends the same key or marks the call
//! `outcome_unknown`, and never asks its approval again.
//!
//! A call a stop cut short after it was sent leaves no run behind (the run stopped), but its
//! receipt stays in flight and its result in the conversation is a placeholder that carries
//! the call ([`STOPPED_IN_FLIGHT`]). The thread's next run finishes it first, exactly as
//! recovery finishes a call a crash cut short ([`finish_stopped_calls`]). Inside a fork's branch
//! the stopped run is kept (see [`super::stopped_fork`]), so the call stays the branch's call in
//! flight, with no placeholder, and the next run finishes it here, as after a crash.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::ports::{Receipt, ReceiptState};
use crate::thread::InFlightCall;
use crate::wire::{ContentBlock, Message, Role, ToolResultStatus};
use crate::{ErrorCode, RunError};

use super::execute::{Outcome, STOPPED_IN_FLIGHT, StoppedCall};
use super::{StepError, Working};

impl Working<'_> {
    /// Commits the checkpoint with `call` in flight and its in-flight `marker`.
    pub(crate) async fn commit_in_flight(&mut self, call: InFlightCall, marker: Receipt) -> Result<(), RunError> {
        self.branch_mut()?.in_flight = Some(call);
        self.receipts.push(marker);
        self.commit().await
    }

    /// Forgets the call in flight (its receipt goes with the next commit).
    pub(crate) fn clear_in_flight(&mut self) -> Result<(), RunError> {
        self.branch_mut()?.in_flight = None;
        Ok(())
    }

    /// The call in flight at `node`, if the branch has one there.
    pub(crate) fn in_flight_at(&self, node: &str) -> Option<InFlightCall> {
        self.branch()
            .ok()
            .and_then(|branch| branch.in_flight.as_ref())
            .filter(|call| call.node == node)
            .cloned()
    }
}

/// Finishes an agent node's call that was in flight: its result goes into the conversation (and
/// state) as if the call had just returned, and is committed; the turn's later calls and the
/// model follow as usual. `false` when a stop cut it short again inside a fork's branch before it
/// was sent again: it stays in flight, unanswered, and the branch stops.
pub(crate) async fn finish_agent_call(
    working: &mut Working<'_>,
    node: &str,
    call: InFlightCall,
) -> Result<bool, StepError> {
    let queued = super::agent::unanswered_calls(&working.record.context, node)
        .into_iter()
        .find(|queued| queued.id == call.call_id);
    let outcome =
        super::execute::run_tool(working, node, &call.tool, &call.call_id, &call.arguments, call.approved).await?;
    if outcome.in_flight {
        return Ok(false);
    }
    // The conversation shows the call as the model made it. A call that is no longer open
    // (impossible: the commit of its result clears it) only gets its receipt stored.
    if let Some(queued) = queued {
        super::calls::push_result(
            working,
            node,
            &queued,
            &call.tool,
            outcome.output.clone(),
            outcome.is_error,
        );
        if !outcome.is_error {
            super::execute::write_tool_result(working, node, &call.tool, &outcome.output)?;
        }
    }
    working.commit().await?;
    Ok(true)
}

/// Finishes the calls a stop cut short after they were sent, before a new run of the thread
/// goes on: each is sent again under the key it was sent under, with the arguments it was sent
/// with (an approved or edited call is not asked again), through the exactly-once path (a
/// `done` receipt answers it, an in-flight one is sent again, recorded `resent`). Its real
/// result replaces the placeholder, in the same place of the conversation, and is written
/// where the graph's `results` say; the receipts are committed before the run moves on. A
/// call whose tool the artifact no longer has becomes `outcome_unknown`, never sent. Stopped
/// again before it is sent again, a call keeps its placeholder.
pub(crate) async fn finish_stopped_calls(working: &mut Working<'_>) -> Result<(), RunError> {
    let stopped = stopped_calls(&working.record.context);
    if stopped.is_empty() {
        return Ok(());
    }
    for (index, stopped) in stopped {
        let outcome = if working.artifact().tools.contains_key(&stopped.call.tool) {
            match super::execute::run_keyed(working, &stopped.call, stopped.idempotency_key.clone()).await {
                Ok(outcome) => outcome,
                Err(StepError::Run(error)) => return Err(error),
                Err(StepError::Node(failure)) => return Err(node_failed(&stopped.call.node, &failure.message)),
            }
        } else {
            tool_gone(working, &stopped)
        };
        if outcome.stopped {
            // Stopped again before it was sent again: it stays as it was.
            working.cut_short = None;
            continue;
        }
        if let Some(message) = working.record.context.get_mut(index).map(Arc::make_mut) {
            message.metadata.remove(STOPPED_IN_FLIGHT);
            message.content = vec![ContentBlock::ToolResult {
                call_id: stopped.call.call_id.clone(),
                output: outcome.output.clone(),
                is_error: outcome.is_error,
                status: Some(if outcome.is_error {
                    ToolResultStatus::Failed
                } else {
                    ToolResultStatus::Completed
                }),
            }];
        }
        if !outcome.is_error {
            super::execute::write_tool_result(working, &stopped.call.node, &stopped.call.tool, &outcome.output)
                .map_err(|failure| node_failed(&stopped.call.node, &failure.message))?;
        }
    }
    working.commit().await
}

/// The calls a stop cut short outside a fork that `context` holds (each tool message whose
/// placeholder carries one, see [`STOPPED_IN_FLIGHT`]), with their messages' indexes.
pub(crate) fn stopped_calls(context: &[Arc<Message>]) -> Vec<(usize, StoppedCall)> {
    context
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role == Role::Tool)
        .filter_map(|(index, message)| {
            let carried = message.metadata.get(STOPPED_IN_FLIGHT)?;
            serde_json::from_value::<StoppedCall>(carried.clone())
                .ok()
                .map(|call| (index, call))
        })
        .collect()
}

/// A stopped call whose tool the artifact no longer has: `outcome_unknown`, never sent again.
fn tool_gone(working: &mut Working<'_>, stopped: &StoppedCall) -> Outcome {
    let call = &stopped.call;
    working.receipts.push(Receipt {
        thread_id: working.record.thread_id.clone(),
        key: stopped.idempotency_key.clone(),
        tool: call.tool.clone(),
        state: ReceiptState::OutcomeUnknown,
    });
    working.record(
        "tool_call",
        json!({"tool": call.tool, "call_id": call.call_id, "node": call.node, "idempotency_key": stopped.idempotency_key, "outcome": "outcome_unknown", "approved": call.approved, "reason": "the run was stopped while the call ran and the program no longer has the tool"}),
    );
    Outcome {
        output: Value::String(format!(
            "Tool '{}' failed: the run was stopped while the call ran and the program no longer has the tool, so nobody can tell whether it took effect; it was not sent again (outcome_unknown)",
            call.tool
        )),
        is_error: true,
        stopped: false,
        in_flight: false,
    }
}

/// `NODE_001` for a stopped call that could not be finished.
fn node_failed(node: &str, message: &str) -> RunError {
    RunError::new(ErrorCode::NodeFailed, format!("Error in node '{node}': {message}"))
        .with_details(json!({"node": node}))
}
