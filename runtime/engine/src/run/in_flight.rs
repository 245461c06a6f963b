//! The call in flight: before a call is sent, the whole checkpoint is committed with the call
//! (`Branch::in_flight`) and its in-flight receipt, so whatever the run decided before it (an
//! answer, an edit, the results of earlier calls, their records) is durable before any effect
//! can happen. The commit that stores the call's receipt clears it. A run that finds its branch
//! with a call in flight (after a crash: see [`super::recover`]) finishes exactly that call
//! through [`super::execute::run_tool`], which re-sends the same key or marks the call
//! `outcome_unknown`, and never asks its approval again.

use crate::RunError;
use crate::ports::Receipt;
use crate::thread::InFlightCall;

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
/// model follow as usual.
pub(crate) async fn finish_agent_call(
    working: &mut Working<'_>,
    node: &str,
    call: InFlightCall,
) -> Result<(), StepError> {
    let queued = super::agent::unanswered_calls(&working.record.context, node)
        .into_iter()
        .find(|queued| queued.id == call.call_id);
    let outcome =
        super::execute::run_tool(working, node, &call.tool, &call.call_id, &call.arguments, call.approved).await?;
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
    Ok(())
}
