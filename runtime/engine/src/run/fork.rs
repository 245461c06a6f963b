//! Parallel branches: a fork splits the run into branches that run at the same time, each in
//! its own lane ([`lane`]), started by [`start`]. Every step of every branch is committed into
//! the thread's checkpoint ([`crate::thread::ForkProgress`]), so after a crash only the
//! unfinished branches go on, each from its last step, and a finished branch never runs again.
//! Forks nest: a branch may reach a fork of its own (a `parallel` or `map` inside a branch, a
//! subgraph node, the call of an agent used as a tool), which runs in the branch's lane exactly as
//! the thread's runs in the thread, and is kept in the branch's checkpoint
//! ([`crate::thread::InnerFork`]).
//!
//! When no branch can go on, the fork *settles*: a stopped branch stops the run, whatever waits
//! or failed beside it (the run is kept as a crash at that moment keeps it, see
//! [`super::stopped_fork`]); else a branch that waits for an answer pauses the run on its
//! question (the first in branch order; one open question at a time, each with its own interrupt
//! id, contract D1; a question asked deeper names the whole path down to it), a failed branch
//! fails the run, and when every branch is done they are merged at the join ([`super::join`]).

mod lane;
mod reload;
mod start;

use serde_json::json;

use crate::ports::Event;
use crate::request::ResumeAnswer;
use crate::thread::{BranchStatus, PendingKind, ThreadRecord};
use crate::wire::{ExecutionStatus, Message};
use crate::{ErrorCode, Identity, RunError};

use super::Working;
use super::working::damaged;

pub(crate) use lane::{Lane, commit_lane};
pub(crate) use reload::still_forks;
pub(crate) use start::start;

/// How deep forks may nest at run time: a fork inside a branch, a subgraph node and the call of
/// an agent used as a tool each count one level. Each level is a lane polled inside its parent's,
/// so the bound keeps a run's stack and its checkpoint small; a fork deeper than this fails the
/// run (`FORK_003`) instead of starting.
pub const MAX_NESTING: usize = 16;

/// The way on of a fork's node, as [`super::drive::next_after`] returns it: never a node name
/// (node names are identifiers).
pub(crate) const FORK: &str = "(fork)";

/// What a fork led to.
pub(crate) enum ForkFlow {
    /// Every branch ended and was merged: the root branch is at the join (committed).
    Joined,
    /// The run paused on a branch's question (committed).
    Paused,
    /// A stop reached a branch.
    Stopped,
}

/// A call of an agent used as a tool, as the calling agent's round found it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgentCall {
    pub(crate) call_id: String,
    pub(crate) tool_name: String,
    pub(crate) arguments: String,
    /// The agent that answers.
    pub(crate) agent: String,
    /// The user message it starts from.
    pub(crate) input: String,
}

/// What a lane is to do.
pub(super) enum Job {
    /// Run the branch on from where it is.
    Drive,
    /// Apply the answer to the branch's open question, then run on.
    Answer(ResumeAnswer, Vec<Message>, Identity),
    /// Ask the branch's question again under the engine's artifact (see [`reask`]).
    Reask,
    /// Give the client's result to the branch's remote call, then run on.
    Results(Vec<Message>),
}

/// Runs the fork in progress until it settles (see the module docs).
pub(crate) async fn run(parent: &mut Working<'_>) -> Result<ForkFlow, RunError> {
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    let ready: Vec<(String, Job)> = fork
        .branches
        .iter()
        .filter(|branch| branch.status == BranchStatus::Running && branch.pending.is_none())
        .map(|branch| (branch.path.clone(), Job::Drive))
        .collect();
    let width = usize::try_from(fork.width).unwrap_or(1).max(1);
    if !ready.is_empty() {
        lane::run_lanes(parent, ready, width).await?;
    }
    settle(parent).await
}

/// Applies an answer to the question a branch asked, then runs the fork on (see [`go_on`]).
pub(crate) async fn answer(
    parent: &mut Working<'_>,
    path: String,
    answer: ResumeAnswer,
    messages: Vec<Message>,
    identity: &Identity,
) -> Result<(), RunError> {
    go_on(parent, path, Job::Answer(answer, messages, identity.clone())).await
}

/// Gives the client's result to the remote call a branch waits for, then runs the fork on (see
/// [`go_on`]).
pub(crate) async fn remote_results(
    parent: &mut Working<'_>,
    path: String,
    messages: Vec<Message>,
) -> Result<(), RunError> {
    go_on(parent, path, Job::Results(messages)).await
}

/// Runs `job` in the waiting branch at `path`, then the fork on. A refused answer or result
/// changes nothing; an answer to an expired question ends that branch (recorded) and the error
/// is returned once the fork has gone on.
async fn go_on(parent: &mut Working<'_>, path: String, job: Job) -> Result<(), RunError> {
    let asked = parent.record.pending.clone();
    let answered = lane::run_lanes(parent, vec![(path, job)], 1).await;
    let unchanged = parent.record.pending == asked;
    match answered {
        Err(error) if unchanged => Err(error),
        Err(error) => {
            Box::pin(super::drive::drive(parent)).await?;
            Err(error)
        }
        Ok(()) => Box::pin(super::drive::drive(parent)).await,
    }
}

/// Asks every question waiting in the fork in progress again, at every depth, under the engine's
/// artifact (`tenxc dev` reloaded the program: each was asked under the other one), then lets the
/// fork settle: it pauses on the first waiting branch's new question, or, when none can be asked
/// any more (they expired, ending their branches), goes on as after any answer. A question that
/// cannot be asked again is returned as an error ([`crate::run::reask`] withdraws them all).
pub(crate) async fn reask(parent: &mut Working<'_>) -> Result<(), RunError> {
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    let waiting: Vec<(String, Job)> = fork
        .branches
        .iter()
        .filter(|branch| branch.status == BranchStatus::Running && branch.pending.is_some())
        .map(|branch| (branch.path.clone(), Job::Reask))
        .collect();
    let width = usize::try_from(fork.width).unwrap_or(1).max(1);
    lane::run_lanes(parent, waiting, width).await?;
    Box::pin(super::drive::drive(parent)).await
}

/// Decides what the fork leads to once no branch can go on (see the module docs).
async fn settle(parent: &mut Working<'_>) -> Result<ForkFlow, RunError> {
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    if fork
        .branches
        .iter()
        .any(|branch| branch.status == BranchStatus::Running && branch.pending.is_none())
    {
        // A lane stopped without ending or waiting: only a failure it could not record does that,
        // and that failure was returned already.
        return Err(damaged());
    }
    // A stop beside a waiting or failed branch stops the run, as a crash at that moment would
    // leave it: the stopped branches' calls in flight are kept and finished by the next run, and
    // then the fork settles again (on the question, which was not open yet, or the failure). So
    // a stop wins whether it reaches the fork while its lanes run or between two steps.
    if fork
        .branches
        .iter()
        .any(|branch| branch.status == BranchStatus::Stopped)
    {
        return Ok(ForkFlow::Stopped);
    }
    if let Some(waiting) = fork
        .branches
        .iter()
        .find(|branch| branch.status == BranchStatus::Running && branch.pending.is_some())
    {
        let path = waiting.path.clone();
        let Some(mut pending) = waiting.pending.clone() else {
            return Err(damaged());
        };
        let node = parent
            .progress()?
            .branches
            .get(&path)
            .map(|branch| branch.node.clone())
            .unwrap_or_default();
        // Asked in a fork inside the branch: the path below goes first in `within`.
        if let Some(below) = pending.branch.take() {
            pending.within.insert(0, below);
        }
        pending.branch = Some(path);
        let interrupt = pending.interrupt.clone();
        let remote = match &pending.kind {
            PendingKind::RemoteTool {
                node,
                tool,
                call_id,
                arguments,
                ..
            } => Some((node.clone(), tool.clone(), call_id.clone(), arguments.clone())),
            _ => None,
        };
        let execution = &mut parent.record.execution;
        execution.interrupted_node = Some(node);
        if remote.is_some() {
            execution.status = ExecutionStatus::InterruptedAfter;
            execution.interrupt_reason = Some("remote_tool_call".to_owned());
            execution.interrupt_data = None;
        } else {
            execution.status = ExecutionStatus::InterruptedBefore;
            execution.interrupt_reason = Some("interrupt".to_owned());
            execution.interrupt_data = interrupt.as_ref().map(|interrupt| json!({"interrupt": interrupt}));
        }
        parent.record.pending = Some(*pending);
        parent.commit().await?;
        if let Some(interrupt) = interrupt {
            parent.emit(Event::Interrupted { interrupt });
        }
        // The client is asked to run the call: the thread's answer shows it, once.
        if let Some((node, tool, call_id, arguments)) = remote.filter(|_| parent.lane.is_none()) {
            let name = parent
                .artifact()
                .tools
                .get(&tool)
                .map_or(tool, |declared| declared.name.clone());
            let placeholder = super::pause::remote_placeholder(parent, &node, &name, &call_id, &arguments);
            parent.push_placeholder(placeholder);
        }
        return Ok(ForkFlow::Paused);
    }
    if fork.agent_call.is_some() {
        // The agent's answer, or its failure, is the call's result; the calling agent's turn goes
        // on where it was (its later calls, then its model).
        super::join::answer_agent_call(parent)?;
        parent.progress_mut()?.fork = None;
        parent.commit().await?;
        return Ok(ForkFlow::Joined);
    }
    if let Some((path, code, message)) = fork.branches.iter().find_map(|branch| match &branch.status {
        BranchStatus::Failed { code, message } => Some((branch.path.clone(), code.clone(), message.clone())),
        _ => None,
    }) {
        let code = ErrorCode::ALL
            .iter()
            .copied()
            .find(|known| known.as_str() == code)
            .unwrap_or(ErrorCode::NodeFailed);
        let what = if fork.subgraph.is_some() {
            "subgraph node"
        } else {
            "branch"
        };
        return Err(RunError::new(code, format!("{what} `{path}`: {message}")).with_details(json!({"branch": path})));
    }
    let (subgraph, from, join) = (fork.subgraph.is_some(), fork.from.clone(), fork.join.clone());
    let join = if subgraph {
        super::join::merge_subgraph(parent)?;
        super::drive::next_after(parent, &from)?
    } else {
        super::join::merge(parent)?;
        join
    };
    parent.progress_mut()?.fork = None;
    super::drive::enter(parent, join)?;
    parent.commit().await?;
    Ok(ForkFlow::Joined)
}

/// Marks the thread's run as running again (no question open).
pub(super) fn running(record: &mut ThreadRecord) {
    let execution = &mut record.execution;
    execution.status = ExecutionStatus::Running;
    execution.interrupted_node = None;
    execution.interrupt_reason = None;
    execution.interrupt_data = None;
}

/// Ends a lane's branch with `status` and commits it.
pub(crate) async fn end_lane(working: &mut Working<'_>, status: BranchStatus) -> Result<(), RunError> {
    if let Some(lane) = working.lane.as_mut() {
        lane.status = status;
    }
    working.commit().await
}

/// `text` with every character outside `A-Za-z0-9_-` replaced by `_`, for ids made from a
/// branch's path (`summarise[2]` becomes `summarise_2_`).
pub(crate) fn id_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
