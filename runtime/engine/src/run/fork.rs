//! Parallel branches: a fork splits the run into branches that run at the same time, each in
//! its own working copy (a *lane*) over its own state and conversation, with its own steps and
//! visits. A lane runs the ordinary step loop ([`super::drive`]) and ends where a way would
//! enter the fork's join, or `END`. Its commits go through the fork's [`Hub`], which writes the
//! branch into the thread's checkpoint ([`crate::thread::ForkProgress`]) and commits the thread,
//! one commit at a time: every step of every branch is durable, so after a crash only the
//! unfinished branches go on, each from its last step, and a finished branch never runs again.
//!
//! When no branch can go on, the fork *settles*: a branch that waits for an answer pauses the
//! run on its question (the first in branch order; one open question at a time, each with its
//! own interrupt id, contract D1), a failed branch fails the run, a stopped one stops it, and
//! when every branch is done they are merged at the join ([`super::join`]).

use std::collections::BTreeMap;
use std::sync::Mutex as SyncMutex;

use async_trait::async_trait;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tenx_artifact::{END, Fork, ForkKind, MAX_WIDTH};

use crate::ports::{Event, EventSink, Receipt, Record};
use crate::request::ResumeAnswer;
use crate::thread::{
    Branch, BranchRun, BranchStatus, ForkProgress, PendingKind, ROOT_BRANCH, RunProgress, ThreadRecord,
};
use crate::wire::{ExecutionStatus, Message};
use crate::{ErrorCode, Identity, RunError};

use super::Working;
use super::working::damaged;

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

/// What makes a working copy a lane: where its commits go and where it ends.
pub(crate) struct Lane<'e> {
    pub(crate) hub: &'e dyn Hub,
    /// The branch's path.
    pub(crate) path: String,
    /// The fork's join (a node or `END`).
    pub(crate) join: String,
    /// How many messages of the lane's conversation are the thread's, as the fork found them.
    pub(crate) base_context: usize,
    /// How the branch ended, once it has.
    pub(crate) status: BranchStatus,
    /// For the call of an agent used as a tool: that agent, which the lane runs alone (its node is
    /// the agent's name, its answer ends the lane).
    pub(crate) agent: Option<String>,
}

/// Commits a lane's branch into the thread.
#[async_trait]
pub(crate) trait Hub: Send + Sync {
    /// Writes `run` and `progress` as the branch at `path`, with the lane's receipts and records,
    /// and commits the thread. Returns the thread's new version.
    async fn commit(
        &self,
        run: BranchRun,
        progress: Branch,
        receipts: Vec<Receipt>,
        records: Vec<Record>,
    ) -> Result<u64, RunError>;
}

/// The hub of one round of lanes: the thread's working copy behind a lock, and the lanes' events
/// on their way to the thread's sink.
struct ParentHub<'p, 'e> {
    parent: tokio::sync::Mutex<&'p mut Working<'e>>,
    events: SyncMutex<Vec<Event>>,
}

impl<'p, 'e> ParentHub<'p, 'e> {
    /// Hands the lanes' buffered events to the thread's sink.
    fn flush(&self, parent: &mut Working<'e>) {
        let events = self
            .events
            .lock()
            .map(|mut events| std::mem::take(&mut *events))
            .unwrap_or_default();
        for event in events {
            parent.emit(event);
        }
    }
}

#[async_trait]
impl Hub for ParentHub<'_, '_> {
    async fn commit(
        &self,
        run: BranchRun,
        progress: Branch,
        receipts: Vec<Receipt>,
        records: Vec<Record>,
    ) -> Result<u64, RunError> {
        let mut guard = self.parent.lock().await;
        let parent: &mut Working<'_> = &mut guard;
        self.flush(parent);
        // The answer that continues this branch was accepted: the thread no longer waits for it.
        let answered = parent.record.pending.as_ref().is_some_and(|pending| {
            pending.branch.as_deref() == Some(run.path.as_str())
                && run
                    .pending
                    .as_ref()
                    .and_then(|own| own.interrupt.as_ref())
                    .map(|open| &open.id)
                    != pending.interrupt.as_ref().map(|open| &open.id)
        });
        if answered {
            parent.record.pending = None;
            running(&mut parent.record);
        }
        let path = run.path.clone();
        let fork = parent.progress_mut()?.fork.as_mut().ok_or_else(damaged)?;
        let slot = fork
            .branches
            .iter_mut()
            .find(|branch| branch.path == path)
            .ok_or_else(damaged)?;
        *slot = run;
        parent.progress_mut()?.branches.insert(path, progress);
        parent.receipts.extend(receipts);
        parent.records.extend(records);
        parent.commit().await?;
        Ok(parent.stored_version.unwrap_or(0))
    }
}

/// A lane's event sink: everything but questions goes to the thread's sink at the next commit
/// (the question the run pauses on is announced when the fork settles, once).
struct LaneSink<'h> {
    events: &'h SyncMutex<Vec<Event>>,
    listening: bool,
    /// A subgraph node's name: its lane's nodes are named `prefix/node` (`outer/inner/node` as
    /// the stream shows them).
    prefix: Option<String>,
}

impl EventSink for LaneSink<'_> {
    fn emit(&mut self, mut event: Event) {
        if matches!(event, Event::Interrupted { .. }) {
            return;
        }
        if let Some(prefix) = &self.prefix
            && let Event::NodeStarted { node, .. } | Event::NodeFinished { node, .. } = &mut event
        {
            *node = format!("{prefix}/{node}");
        }
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }

    fn listening(&self) -> bool {
        self.listening
    }
}

/// Commits a lane's working copy through its hub (called by [`Working::commit`]).
pub(crate) async fn commit_lane(working: &mut Working<'_>) -> Result<(), RunError> {
    let Some(lane) = working.lane.as_ref() else {
        return Err(damaged());
    };
    let record = &working.record;
    let run = BranchRun {
        path: lane.path.clone(),
        state: record.state.clone(),
        messages: record.context.get(lane.base_context..).unwrap_or_default().to_vec(),
        pending: record.pending.clone(),
        model_cursors: record.model_cursors.clone(),
        status: lane.status.clone(),
    };
    let progress = working.branch()?.clone();
    let receipts = std::mem::take(&mut working.receipts);
    let records = std::mem::take(&mut working.records);
    let version = lane.hub.commit(run, progress, receipts, records).await?;
    working.stored_version = Some(version);
    working.record.version = version;
    Ok(())
}

/// Splits the run at `node`'s fork: the fork's branches, each at its first node with the
/// thread's state (a map's item set in its own), are recorded in the progress. Nothing runs yet:
/// the step loop finds the fork and runs it ([`run`]).
pub(crate) fn start(working: &mut Working<'_>, node: &str) -> Result<(), RunError> {
    if let Some(call) = working.agent_call.take() {
        return start_agent_call(working, node, call);
    }
    let graph = working.graph;
    if graph.subgraph_of(node).is_some() {
        return start_subgraph(working, node);
    }
    let Some(fork) = graph.fork_of(node) else {
        return Err(super::drive::unknown_target(&working.graph_name, node, FORK));
    };
    let starts = branch_starts(working, fork)?;
    let width = fork.max_concurrency.unwrap_or(MAX_WIDTH).clamp(1, MAX_WIDTH);
    let mut branches = Vec::with_capacity(starts.len());
    let mut progress = BTreeMap::new();
    for (path, first, state) in starts {
        let mut branch = Branch {
            node: first.clone(),
            ..Branch::default()
        };
        if graph.visit_limits.iter().any(|limit| limit.node == first) {
            branch.visits.insert(first.clone(), 1);
        }
        progress.insert(path.clone(), branch);
        branches.push(BranchRun {
            path,
            state,
            messages: Vec::new(),
            pending: None,
            model_cursors: working.record.model_cursors.clone(),
            status: BranchStatus::Running,
        });
    }
    let run = working.progress_mut()?;
    run.branches.extend(progress);
    run.fork = Some(ForkProgress {
        from: node.to_owned(),
        join: fork.join.clone(),
        width,
        branches,
        subgraph: None,
        agent_call: None,
    });
    Ok(())
}

/// Starts the call of an agent used as a tool by the agent node `node`: one branch that runs the
/// agent alone, on a conversation of its input, with the thread's state for its prompt.
fn start_agent_call(working: &mut Working<'_>, node: &str, call: AgentCall) -> Result<(), RunError> {
    let path = format!("{}@{}", call.agent, call.call_id);
    let message = Message::text(
        working.message_id(),
        crate::wire::Role::User,
        call.input,
        working.now_seconds(),
    );
    let branch = Branch {
        node: call.agent.clone(),
        ..Branch::default()
    };
    let state = working.record.state.clone();
    let cursors = working.record.model_cursors.clone();
    let run = working.progress_mut()?;
    run.branches.insert(path.clone(), branch);
    run.fork = Some(ForkProgress {
        from: node.to_owned(),
        join: END.to_owned(),
        width: 1,
        branches: vec![BranchRun {
            path,
            state,
            messages: vec![message],
            pending: None,
            model_cursors: cursors,
            status: BranchStatus::Running,
        }],
        subgraph: None,
        agent_call: Some(crate::thread::AgentCallProgress {
            call_id: call.call_id,
            tool_name: call.tool_name,
            arguments: call.arguments,
            agent: call.agent,
        }),
    });
    Ok(())
}

/// Starts the subgraph node `node`: one branch over the inner graph, from its entry, with the
/// state `input` maps in (then the inner graph's defaults), checked against its state schema.
fn start_subgraph(working: &mut Working<'_>, node: &str) -> Result<(), RunError> {
    let graph = working.graph;
    let artifact = working.artifact();
    let (Some(call), Some(declared)) = (graph.subgraph_of(node), graph.nodes.get(node)) else {
        return Err(damaged());
    };
    let Some(inner) = artifact.graphs.get(&declared.reference) else {
        return Err(super::drive::unknown_target(
            &working.graph_name,
            node,
            &declared.reference,
        ));
    };
    let mut state = serde_json::Map::new();
    for (to, from) in &call.input {
        if let Some(value) = working.record.state.get(from) {
            state.insert(to.clone(), value.clone());
        }
    }
    let state = match super::glue::with_defaults(&inner.state_schema, Value::Object(state)) {
        Value::Object(state) => state,
        _ => serde_json::Map::new(),
    };
    super::glue::check_schema(&inner.state_schema, &Value::Object(state.clone())).map_err(|error| {
        RunError::new(
            ErrorCode::NodeFailed,
            format!(
                "the state subgraph node `{node}` maps into graph `{}` does not fit it: {error}",
                declared.reference
            ),
        )
        .with_details(json!({"node": node, "graph": declared.reference}))
    })?;
    let mut branch = Branch {
        node: inner.entry.clone(),
        ..Branch::default()
    };
    if inner.visit_limits.iter().any(|limit| limit.node == inner.entry) {
        branch.visits.insert(inner.entry.clone(), 1);
    }
    let cursors = working.record.model_cursors.clone();
    let run = working.progress_mut()?;
    run.branches.insert(node.to_owned(), branch);
    run.fork = Some(ForkProgress {
        from: node.to_owned(),
        join: END.to_owned(),
        width: 1,
        branches: vec![BranchRun {
            path: node.to_owned(),
            state,
            messages: Vec::new(),
            pending: None,
            model_cursors: cursors,
            status: BranchStatus::Running,
        }],
        subgraph: Some(declared.reference.clone()),
        agent_call: None,
    });
    Ok(())
}

/// One branch as a fork starts it: its path, first node and state.
type BranchStart = (String, String, serde_json::Map<String, Value>);

/// Each branch of `fork`.
fn branch_starts(working: &Working<'_>, fork: &Fork) -> Result<Vec<BranchStart>, RunError> {
    let state = &working.record.state;
    match fork.kind {
        ForkKind::Parallel => Ok(fork
            .branches
            .iter()
            .map(|first| (first.clone(), first.clone(), state.clone()))
            .collect()),
        ForkKind::Map => {
            let (Some(first), Some(over), Some(item)) = (fork.branches.first(), &fork.over, &fork.item) else {
                return Err(damaged());
            };
            let items = match state.get(over) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => {
                    return Err(RunError::new(
                        ErrorCode::ForkItems,
                        format!(
                            "the map out of `{}` reads `{over}`, which does not hold a list",
                            fork.from
                        ),
                    )
                    .with_details(json!({"node": fork.from, "field": over})));
                }
            };
            if u64::try_from(items.len()).unwrap_or(u64::MAX) > MAX_WIDTH {
                return Err(RunError::new(
                    ErrorCode::ForkItems,
                    format!(
                        "the map out of `{}` was given {} items in `{over}`; one map runs at most {MAX_WIDTH}",
                        fork.from,
                        items.len()
                    ),
                )
                .with_details(json!({"node": fork.from, "field": over, "items": items.len()})));
            }
            Ok(items
                .into_iter()
                .enumerate()
                .map(|(index, value)| {
                    let mut state = state.clone();
                    state.insert(item.clone(), value);
                    (format!("{first}[{index}]"), first.clone(), state)
                })
                .collect())
        }
    }
}

/// What a lane is to do.
enum Job {
    /// Run the branch on from where it is.
    Drive,
    /// Apply the answer to the branch's open question, then run on.
    Answer(ResumeAnswer, Vec<Message>, Identity),
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
        run_lanes(parent, ready, width).await?;
    }
    settle(parent).await
}

/// Applies an answer to the question a branch asked, then runs the fork on. A refused answer
/// changes nothing; an answer to an expired question ends that branch (recorded) and the error
/// is returned once the fork has gone on.
pub(crate) async fn answer(
    parent: &mut Working<'_>,
    path: String,
    answer: ResumeAnswer,
    messages: Vec<Message>,
    identity: &Identity,
) -> Result<(), RunError> {
    let asked = parent.record.pending.clone();
    let answered = run_lanes(parent, vec![(path, Job::Answer(answer, messages, identity.clone()))], 1).await;
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

/// Runs `jobs`, at most `width` at once, each in its own lane, until each lane's branch ends or
/// waits. The first error a lane could not record in its branch (a store failure) is returned
/// once every lane has stopped.
async fn run_lanes(parent: &mut Working<'_>, jobs: Vec<(String, Job)>, width: usize) -> Result<(), RunError> {
    let mut lanes = Vec::with_capacity(jobs.len());
    for (path, job) in jobs {
        lanes.push((lane_record(parent, &path)?, path, job));
    }
    let engine = parent.engine;
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    let join = fork.join.clone();
    // A subgraph's lane runs the inner graph, and names its nodes `node/inner` in events.
    let (graph_name, graph, prefix) = match &fork.subgraph {
        Some(inner) => {
            let (name, graph) = engine
                .artifact
                .artifact
                .graphs
                .get_key_value(inner)
                .ok_or_else(|| super::drive::unknown_target(&parent.graph_name, &fork.from, inner))?;
            (name.clone(), graph, Some(fork.from.clone()))
        }
        None if fork.agent_call.is_some() => (parent.graph_name.clone(), parent.graph, Some(fork.from.clone())),
        None => (parent.graph_name.clone(), parent.graph, None),
    };
    let agent = fork.agent_call.as_ref().map(|call| call.agent.clone());
    let cancel = parent.cancel.clone();
    let listening = parent.listening();
    // An agent called as a tool sees only its own conversation.
    let base_context = if agent.is_some() {
        0
    } else {
        parent.record.context.len()
    };
    let stored_version = parent.stored_version;
    let hub = ParentHub {
        parent: tokio::sync::Mutex::new(parent),
        events: SyncMutex::new(Vec::new()),
    };
    let results: Vec<Result<(), RunError>> =
        futures_util::stream::iter(lanes.into_iter().map(|(record, path, job)| {
            let hub = &hub;
            let graph_name = graph_name.clone();
            let join = join.clone();
            let cancel = cancel.clone();
            let prefix = prefix.clone();
            let agent = agent.clone();
            async move {
                let mut sink = LaneSink {
                    events: &hub.events,
                    listening,
                    prefix,
                };
                let mut lane = Working::new(engine, (graph_name, graph), record, stored_version, &mut sink, cancel);
                lane.lane = Some(Lane {
                    hub,
                    path,
                    join,
                    base_context,
                    status: BranchStatus::Running,
                    agent,
                });
                // The thread's version moves with every branch's commit; a lane reads it from the
                // thread when it starts.
                lane.stored_version = Some(hub.parent.lock().await.stored_version.unwrap_or(0));
                lane.record.version = lane.stored_version.unwrap_or(0);
                match job {
                    Job::Drive => Box::pin(super::drive::drive(&mut lane)).await,
                    Job::Answer(answer, messages, identity) => {
                        Box::pin(super::answer::resume(&mut lane, answer, messages, &identity)).await
                    }
                }
            }
        }))
        .buffer_unordered(width)
        .collect()
        .await;
    let parent = hub.parent.into_inner();
    let events = hub.events.into_inner().unwrap_or_default();
    for event in events {
        parent.emit(event);
    }
    results.into_iter().find_map(Result::err).map_or(Ok(()), Err)
}

/// The working record of the branch at `path`: the thread with the branch's state, the
/// conversation as the fork found it plus the branch's messages, and the branch's progress as
/// its root.
fn lane_record(parent: &Working<'_>, path: &str) -> Result<ThreadRecord, RunError> {
    let progress = parent.progress()?;
    let fork = progress.fork.as_ref().ok_or_else(damaged)?;
    let run = fork
        .branches
        .iter()
        .find(|branch| branch.path == path)
        .ok_or_else(damaged)?;
    let branch = progress.branches.get(path).ok_or_else(damaged)?;
    let record = &parent.record;
    let mut context = Vec::with_capacity(record.context.len().saturating_add(run.messages.len()));
    if fork.agent_call.is_none() {
        context.extend(record.context.iter().cloned());
    }
    context.extend(run.messages.iter().cloned());
    let mut execution = record.execution.clone();
    execution.current_node.clone_from(&branch.node);
    let mut pending = run.pending.clone();
    // The thread's copy of the question is the one that counts (an escalation changes it there).
    if let Some(open) = record
        .pending
        .as_ref()
        .filter(|open| open.branch.as_deref() == Some(path))
    {
        let mut open = open.clone();
        open.branch = None;
        pending = Some(open);
    }
    Ok(ThreadRecord {
        thread_id: record.thread_id.clone(),
        artifact_id: record.artifact_id.clone(),
        graph: record.graph.clone(),
        owner: record.owner.clone(),
        version: record.version,
        created_at: record.created_at,
        updated_at: record.updated_at,
        state: run.state.clone(),
        context,
        execution,
        pending,
        run: Some(RunProgress {
            run_id: progress.run_id.clone(),
            started_by: progress.started_by.clone(),
            recursion_limit: progress.recursion_limit,
            input_text: progress.input_text.clone(),
            branches: BTreeMap::from([(ROOT_BRANCH.to_owned(), branch.clone())]),
            fork: None,
        }),
        resume_at: None,
        model_cursors: run.model_cursors.clone(),
        substitutions: record.substitutions.clone(),
    })
}

/// Decides what the fork leads to once no branch can go on (see the module docs).
async fn settle(parent: &mut Working<'_>) -> Result<ForkFlow, RunError> {
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    if let Some(waiting) = fork
        .branches
        .iter()
        .find(|branch| branch.status == BranchStatus::Running && branch.pending.is_some())
    {
        let path = waiting.path.clone();
        let Some(mut pending) = waiting.pending.clone() else {
            return Err(damaged());
        };
        if matches!(pending.kind, PendingKind::RemoteTool { .. }) {
            return Err(RunError::new(
                ErrorCode::NodeFailed,
                format!(
                    "the branch `{path}` waits for a remote tool; remote tools cannot run inside parallel branches"
                ),
            ));
        }
        let node = parent
            .progress()?
            .branches
            .get(&path)
            .map(|branch| branch.node.clone())
            .unwrap_or_default();
        pending.branch = Some(path);
        let interrupt = pending.interrupt.clone();
        let execution = &mut parent.record.execution;
        execution.status = ExecutionStatus::InterruptedBefore;
        execution.interrupted_node = Some(node);
        execution.interrupt_reason = Some("interrupt".to_owned());
        execution.interrupt_data = interrupt.as_ref().map(|interrupt| json!({"interrupt": interrupt}));
        parent.record.pending = Some(pending);
        parent.commit().await?;
        if let Some(interrupt) = interrupt {
            parent.emit(Event::Interrupted { interrupt });
        }
        return Ok(ForkFlow::Paused);
    }
    if fork
        .branches
        .iter()
        .any(|branch| branch.status == BranchStatus::Running)
    {
        // A lane stopped without ending or waiting: only a failure it could not record does that,
        // and that failure was returned already.
        return Err(damaged());
    }
    if fork.agent_call.is_some() {
        if fork
            .branches
            .iter()
            .any(|branch| branch.status == BranchStatus::Stopped)
        {
            return Ok(ForkFlow::Stopped);
        }
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
    if fork
        .branches
        .iter()
        .any(|branch| branch.status == BranchStatus::Stopped)
    {
        return Ok(ForkFlow::Stopped);
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
fn running(record: &mut ThreadRecord) {
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
