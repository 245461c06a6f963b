//! How a run ends: at `END` (completed, with `resume = last_agent` noting where the next run
//! starts), failed (the error kept in the thread), or stopped.

use serde_json::json;
use tenx_artifact::{NodeKind, Resume};

use crate::RunError;
use crate::ports::Event;
use crate::wire::{ExecutionStatus, Message, Role, StopState};

use super::Working;

/// The run reached `END`, or an interrupt's rejection ended it with `final_text`.
pub(crate) async fn completed(working: &mut Working<'_>, final_text: Option<String>) -> Result<(), RunError> {
    if let Some(text) = final_text {
        let mut message = Message::text(working.message_id(), Role::Assistant, text, working.now_seconds());
        message
            .metadata
            .insert("node".to_owned(), json!(working.branch()?.node));
        working.push_message(message);
        working.record.resume_at = None;
    } else if working.lane.is_none() {
        let last = working.branch()?.last_node.clone();
        let resumable = working.graph.resume == Resume::LastAgent
            && last.as_deref().is_some_and(|node| {
                working
                    .graph
                    .nodes
                    .get(node)
                    .is_some_and(|declared| declared.kind == NodeKind::Agent)
                    && working.graph.resume_nodes().contains(&node)
            });
        working.record.resume_at = if resumable { last } else { None };
    }
    // A parallel branch that ends is done; the run goes on once every branch is.
    if working.lane.is_some() {
        working.record.pending = None;
        return super::fork::end_lane(working, crate::thread::BranchStatus::Done).await;
    }
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::Completed;
    execution.interrupted_node = None;
    execution.interrupt_reason = None;
    execution.interrupt_data = None;
    working.record.pending = None;
    working.record.run = None;
    working.commit().await?;
    if working.listening() {
        let thread_id = working.record.thread_id.clone();
        working.emit(Event::RunFinished { thread_id });
    }
    Ok(())
}

/// The run failed: the error is kept in the thread (`internal_data.error`) and returned.
pub(crate) async fn failed(working: &mut Working<'_>, error: RunError) -> Result<(), RunError> {
    // A branch's failure is recorded in the branch; the fork fails the run when it settles. The
    // branch ends here: a call of it still in flight would never be finished.
    if working.lane.is_some() {
        super::abandoned::settle_failed_branch(working).await;
        working.record.pending = None;
        let status = crate::thread::BranchStatus::Failed {
            code: error.code.as_str().to_owned(),
            message: error.message.clone(),
        };
        return super::fork::end_lane(working, status).await;
    }
    // The run ends here: a call of it still in flight would never be finished.
    super::abandoned::settle_failed_run(working).await;
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::Error;
    execution.internal_data.insert("error".to_owned(), json!(error.message));
    execution
        .internal_data
        .insert("error_code".to_owned(), json!(error.code.as_str()));
    working.record.pending = None;
    working.record.run = None;
    working.record.resume_at = None;
    working.emit(Event::Error {
        code: error.code.as_str().to_owned(),
        message: error.message.clone(),
    });
    // A store failure cannot be recorded in the store; return it as it is.
    if let Err(store_error) = working.commit().await {
        if error.code.status() < 500
            || matches!(
                error.code,
                crate::ErrorCode::Storage | crate::ErrorCode::StorageTransient
            )
        {
            return Err(error);
        }
        return Err(store_error);
    }
    Err(error)
}

/// A stop (or a `cancel` from a newer request) reached the run between steps. A run split into
/// branches is kept as a crash at this moment would keep it, for the thread's next run to go on
/// with (see [`super::stopped_fork`]); any other is dropped.
pub(crate) async fn stopped(working: &mut Working<'_>) -> Result<(), RunError> {
    if working.lane.is_some() {
        return super::fork::end_lane(working, crate::thread::BranchStatus::Stopped).await;
    }
    let node = working.branch()?.node.clone();
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::InterruptedAfter;
    execution.interrupted_node = Some(node);
    execution.interrupt_reason = Some("stop_requested".to_owned());
    execution.interrupt_data = Some(json!({"source": "stop", "info": "requested via stop"}));
    execution.stop_current_execution = StopState::Stopped;
    working.record.pending = None;
    if !super::stopped_fork::park(&mut working.record) {
        working.record.run = None;
    }
    working.commit().await
}
