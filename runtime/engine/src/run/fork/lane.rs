//! Lanes: each branch of a fork runs the ordinary step loop ([`crate::run::drive`]) in a working
//! copy of its own (a *lane*) over its own state and conversation, with its own steps and visits,
//! and ends where a way would enter the fork's join, or `END`. Its commits go through the fork's
//! [`Hub`], which writes the branch into its parent's checkpoint and commits the parent, one
//! commit at a time. The parent is the thread, or, for a fork inside a branch, that branch's lane,
//! whose commit goes on to its own parent: every step of every branch at every depth is durable.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex as SyncMutex};

use serde_json::{Map, Value};

use async_trait::async_trait;
use futures_util::StreamExt;

use crate::RunError;
use crate::ports::{Event, EventSink, Receipt, Record};
use crate::thread::{Branch, BranchRun, BranchStatus, InnerFork, ROOT_BRANCH, RunProgress, ThreadRecord};

use super::{Job, running};
use crate::run::Working;
use crate::run::working::damaged;

/// What makes a working copy a lane: where its commits go and where it ends.
pub(crate) struct Lane<'e> {
    pub(crate) hub: &'e dyn Hub,
    /// The branch's path in its fork.
    pub(crate) path: String,
    /// The paths from the thread down to this branch, joined with `/` (its path alone for a
    /// branch of the thread's own fork): call ids and idempotency keys carry it, so that the same
    /// node run in two branches at any depth never shares a receipt.
    pub(crate) scope: String,
    /// How many forks deep the branch is (1 for a branch of the thread's own fork).
    pub(crate) depth: usize,
    /// The fork's join (a node or `END`).
    pub(crate) join: String,
    /// How many messages of the lane's conversation are its parent's, as the fork found them.
    pub(crate) base_context: usize,
    /// How many of the branch's own messages its parent's fork holds already: a commit sends
    /// only the ones after them (a branch's messages are only ever added to).
    pub(crate) sent: usize,
    /// How the branch ended, once it has.
    pub(crate) status: BranchStatus,
    /// For the call of an agent used as a tool: that agent, which the lane runs alone (its node is
    /// the agent's name, its answer ends the lane).
    pub(crate) agent: Option<String>,
    /// The state the fork found (its parent's, kept as it was until the join), shared by the
    /// fork's lanes: a commit keeps only the fields of the lane's state that differ from it
    /// (`BranchRun::state`). `None` for a subgraph node's lane, whose state is another graph's.
    pub(crate) found: Option<Arc<Map<String, Value>>>,
}

/// Commits a lane's branch into its parent.
#[async_trait]
pub(crate) trait Hub: Send + Sync {
    /// Writes `step`'s branch and progress as the branch at `step.run.path`, with the lane's
    /// receipts and records, and commits the parent. Returns the thread's new version.
    async fn commit(&self, step: Box<Step>) -> Result<u64, RunError>;
}

/// The hub of one round of lanes: the parent's working copy behind a lock, the lanes' steps
/// waiting to be committed, and the lanes' events on their way to the parent's sink.
///
/// Steps are committed in groups: a lane queues its step, lets the other lanes run up to their
/// own commits, then takes the parent and writes every step queued by then in one commit of the
/// parent (a lane whose step an earlier holder wrote returns that commit's outcome). Each lane
/// still goes on only once its step is stored, but a round of many branches writes the parent
/// (the whole thread, every branch's messages included) about once per round of steps instead of
/// once per step of each branch: a map of 256 items took 9 s on SQLite when each step wrote the
/// thread alone.
struct ParentHub<'p, 'e> {
    parent: tokio::sync::Mutex<&'p mut Working<'e>>,
    queue: SyncMutex<Queue>,
    events: SyncMutex<Vec<Event>>,
}

/// One lane's step, on its way to the commit that writes it (boxed: it moves from the lane to
/// the hub's queue to the parent, and a branch and its progress are over a kilobyte).
pub(crate) struct Step {
    /// The branch, with only its messages from `messages_from` on (the parent keeps the ones
    /// before).
    run: BranchRun,
    messages_from: usize,
    progress: Branch,
    receipts: Vec<Receipt>,
    records: Vec<Record>,
}

/// The steps waiting to be committed, and how the commits so far went.
#[derive(Default)]
struct Queue {
    /// The ticket the next step gets.
    next: u64,
    /// Steps not committed yet, in ticket order.
    waiting: Vec<(u64, Box<Step>)>,
    /// Each commit's last ticket and outcome, in order: a ticket is in the first commit whose
    /// last ticket is not below it.
    written: BTreeMap<u64, Result<u64, RunError>>,
    /// The thread's version after this hub's last commit, while that commit and every one before
    /// it since succeeded: from then on, only the steps it writes change the thread.
    own_version: Option<u64>,
}

impl<'e> ParentHub<'_, 'e> {
    /// Hands the lanes' buffered events to the parent's sink.
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

    /// Queues a step; its ticket.
    fn enqueue(&self, step: Box<Step>) -> Result<u64, RunError> {
        let mut queue = self.queue.lock().map_err(|_| damaged())?;
        let ticket = queue.next;
        queue.next = ticket.saturating_add(1);
        queue.waiting.push((ticket, step));
        Ok(ticket)
    }

    /// The outcome of the commit that wrote `ticket`, if one has.
    fn written(&self, ticket: u64) -> Result<Option<Result<u64, RunError>>, RunError> {
        let queue = self.queue.lock().map_err(|_| damaged())?;
        Ok(queue.written.range(ticket..).next().map(|(_, outcome)| outcome.clone()))
    }

    /// Takes every waiting step.
    fn take_waiting(&self) -> Result<Vec<(u64, Box<Step>)>, RunError> {
        let mut queue = self.queue.lock().map_err(|_| damaged())?;
        Ok(std::mem::take(&mut queue.waiting))
    }

    /// Remembers the outcome of the commit whose last ticket is `last`.
    fn remember(&self, last: u64, outcome: Result<u64, RunError>) -> Result<(), RunError> {
        let mut queue = self.queue.lock().map_err(|_| damaged())?;
        queue.own_version = outcome.as_ref().ok().copied();
        queue.written.insert(last, outcome);
        Ok(())
    }

    /// Whether the thread as stored at `version` is what this hub's last commit wrote (so the
    /// parent has changed since only by the steps applied to it).
    fn wrote(&self, version: Option<u64>) -> Result<bool, RunError> {
        let queue = self.queue.lock().map_err(|_| damaged())?;
        Ok(version.is_some() && queue.own_version == version)
    }
}

/// Writes `step` as its branch into `parent`'s fork in progress (not committed yet).
fn apply(parent: &mut Working<'_>, step: Box<Step>) -> Result<(), RunError> {
    let Step {
        mut run,
        messages_from,
        progress,
        receipts,
        records,
    } = *step;
    // The answer (or remote result) that continues this branch was accepted: the parent no
    // longer waits for it.
    let answered = parent.record.pending.as_ref().is_some_and(|pending| {
        pending.branch.as_deref() == Some(run.path.as_str())
            && run.pending.as_deref().and_then(awaited) != awaited(pending)
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
    let mut messages = std::mem::take(&mut slot.messages);
    if messages.len() < messages_from {
        return Err(damaged());
    }
    messages.truncate(messages_from);
    messages.append(&mut run.messages);
    run.messages = messages;
    *slot = run;
    parent.progress_mut()?.branches.insert(path, progress);
    parent.receipts.extend(receipts);
    parent.records.extend(records);
    Ok(())
}

#[async_trait]
impl Hub for ParentHub<'_, '_> {
    async fn commit(&self, step: Box<Step>) -> Result<u64, RunError> {
        let ticket = self.enqueue(step)?;
        // The other lanes run up to their own commits first: their steps join this one's.
        tokio::task::yield_now().await;
        let mut guard = self.parent.lock().await;
        if let Some(outcome) = self.written(ticket)? {
            return outcome;
        }
        let parent: &mut Working<'_> = &mut guard;
        let steps = self.take_waiting()?;
        let last = steps.last().map_or(ticket, |(last, _)| *last);
        self.flush(parent);
        // The thread's own fork, over the thread as this hub last wrote it: only these steps'
        // branches move, so the store may copy the others (`Store::commit_fork_step`).
        let moved = (parent.lane.is_none() && self.wrote(parent.stored_version)?).then(|| {
            steps
                .iter()
                .map(|(_, step)| step.run.path.clone())
                .collect::<BTreeSet<_>>()
        });
        let mut outcome = Ok(());
        for (_, step) in steps {
            outcome = outcome.and_then(|()| apply(parent, step));
        }
        let outcome = match outcome {
            Ok(()) => parent
                .commit_moved(moved.as_ref())
                .await
                .map(|()| parent.stored_version.unwrap_or(0)),
            Err(error) => Err(error),
        };
        self.remember(last, outcome.clone())?;
        outcome
    }
}

/// A lane's event sink: everything but questions goes to the parent's sink at the next commit
/// (the question the run pauses on is announced once, when the thread's fork settles).
struct LaneSink<'h> {
    events: &'h SyncMutex<Vec<Event>>,
    listening: bool,
    /// A subgraph node's (or a calling agent node's) name: its lane's nodes are named
    /// `prefix/node`, and a lane inside it adds its own, so the stream shows `outer/inner/node`.
    prefix: Option<String>,
    /// The lane's branch path from the thread (its scope), given to every event of its nodes
    /// that a lane deeper down has not named already.
    branch: String,
}

/// What a pause awaits: the open question's interrupt id, or the remote call's id.
fn awaited(pending: &crate::thread::Pending) -> Option<&str> {
    match (&pending.interrupt, &pending.kind) {
        (Some(open), _) => Some(open.id.as_str()),
        (None, crate::thread::PendingKind::RemoteTool { call_id, .. }) => Some(call_id.as_str()),
        (None, _) => None,
    }
}

impl EventSink for LaneSink<'_> {
    fn emit(&mut self, mut event: Event) {
        // A question, or a remote call for the client, is announced once, when the thread
        // pauses on it (see `settle`).
        let remote_call = |message: &crate::wire::Message| {
            message.metadata.get("is_remote").is_some_and(|remote| remote == true)
                && message
                    .content
                    .iter()
                    .any(|block| matches!(block, crate::wire::ContentBlock::RemoteToolCall { .. }))
        };
        if matches!(&event, Event::Interrupted { .. })
            || matches!(&event, Event::Message { message, .. } if remote_call(message))
        {
            return;
        }
        if let Some(prefix) = &self.prefix
            && let Event::NodeStarted { node, .. } | Event::NodeFinished { node, .. } = &mut event
        {
            *node = format!("{prefix}/{node}");
        }
        if let Event::NodeStarted { branch, .. }
        | Event::NodeFinished { branch, .. }
        | Event::Delta { branch, .. }
        | Event::ToolCall { branch, .. }
        | Event::ToolResult { branch, .. }
        | Event::Message { branch, .. } = &mut event
            && branch.is_none()
        {
            *branch = Some(self.branch.clone());
        }
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }

    fn listening(&self) -> bool {
        self.listening
    }
}

/// Commits a lane's working copy through its hub (called by [`Working::commit`]): its branch, and
/// while it is split in turn, the fork inside it.
pub(crate) async fn commit_lane(working: &mut Working<'_>) -> Result<(), RunError> {
    let Some(lane) = working.lane.as_ref() else {
        return Err(damaged());
    };
    let record = &working.record;
    let own = record.run.as_ref().ok_or_else(damaged)?;
    // A branch that ended keeps no fork of its own; a stopped one keeps it as a crash would, for
    // the thread's next run to go on with (see `run/stopped_fork.rs`).
    let inner = match (&own.fork, &lane.status) {
        (Some(fork), BranchStatus::Running | BranchStatus::Stopped) => Some(Box::new(InnerFork {
            fork: fork.clone(),
            branches: own
                .branches
                .iter()
                .filter(|(path, _)| path.as_str() != ROOT_BRANCH)
                .map(|(path, branch)| (path.clone(), branch.clone()))
                .collect(),
        })),
        _ => None,
    };
    let state = match &lane.found {
        Some(found) => BranchRun::state_beyond(&record.state, found),
        None => record.state.clone(),
    };
    // Only the messages the parent does not hold yet: cloning the branch's whole conversation at
    // every step made a fork's commits grow with each branch's length.
    let sent = lane.sent;
    let own = record.context.len().saturating_sub(lane.base_context);
    let run = BranchRun {
        path: lane.path.clone(),
        state,
        messages: record
            .context
            .get(lane.base_context.saturating_add(sent)..)
            .unwrap_or_default()
            .to_vec(),
        pending: record.pending.clone().map(Box::new),
        model_cursors: record.model_cursors.clone(),
        status: lane.status.clone(),
        inner,
    };
    let progress = working.branch()?.clone();
    let receipts = std::mem::take(&mut working.receipts);
    let records = std::mem::take(&mut working.records);
    let hub = lane.hub;
    let step = Box::new(Step {
        run,
        messages_from: sent,
        progress,
        receipts,
        records,
    });
    let version = hub.commit(step).await?;
    if let Some(lane) = working.lane.as_mut() {
        lane.sent = own;
    }
    working.stored_version = Some(version);
    working.record.version = version;
    Ok(())
}

/// Runs `jobs`, at most `width` at once, each in its own lane, until each lane's branch ends or
/// waits. The first error a lane could not record in its branch (a store failure) is returned
/// once every lane has stopped.
pub(super) async fn run_lanes(
    parent: &mut Working<'_>,
    jobs: Vec<(String, Job)>,
    width: usize,
) -> Result<(), RunError> {
    let engine = parent.engine;
    let fork = parent.progress()?.fork.as_ref().ok_or_else(damaged)?;
    // An agent called as a tool sees only its own conversation.
    let base_context = if fork.agent_call.is_some() {
        0
    } else {
        parent.record.context.len()
    };
    let mut lanes = Vec::with_capacity(jobs.len());
    for (path, job) in jobs {
        let record = lane_record(parent, &path)?;
        let sent = record.context.len().saturating_sub(base_context);
        lanes.push((record, sent, path, job));
    }
    let join = fork.join.clone();
    // A subgraph's lane runs the inner graph, and names its nodes `node/inner` in events.
    let (graph_name, graph, prefix) = match &fork.subgraph {
        Some(inner) => {
            let (name, graph) = engine
                .artifact
                .artifact
                .graphs
                .get_key_value(inner)
                .ok_or_else(|| crate::run::drive::unknown_target(&parent.graph_name, &fork.from, inner))?;
            (name.clone(), graph, Some(fork.from.clone()))
        }
        None if fork.agent_call.is_some() => (parent.graph_name.clone(), parent.graph, Some(fork.from.clone())),
        None => (parent.graph_name.clone(), parent.graph, None),
    };
    let agent = fork.agent_call.as_ref().map(|call| call.agent.clone());
    let found = fork.subgraph.is_none().then(|| Arc::new(parent.record.state.clone()));
    let cancel = parent.cancel.clone();
    let listening = parent.listening();
    let depth = parent.lane.as_ref().map_or(0, |lane| lane.depth).saturating_add(1);
    let scope_of = {
        let above = parent.lane.as_ref().map(|lane| lane.scope.clone());
        move |path: &str| match &above {
            Some(above) => format!("{above}/{path}"),
            None => path.to_owned(),
        }
    };
    let stored_version = parent.stored_version;
    let hub = ParentHub {
        parent: tokio::sync::Mutex::new(parent),
        queue: SyncMutex::new(Queue::default()),
        events: SyncMutex::new(Vec::new()),
    };
    let results: Vec<Result<(), RunError>> =
        futures_util::stream::iter(lanes.into_iter().map(|(record, sent, path, job)| {
            let hub = &hub;
            let graph_name = graph_name.clone();
            let join = join.clone();
            let cancel = cancel.clone();
            let prefix = prefix.clone();
            let agent = agent.clone();
            let found = found.clone();
            let scope = scope_of(&path);
            async move {
                let mut sink = LaneSink {
                    events: &hub.events,
                    listening,
                    prefix,
                    branch: scope.clone(),
                };
                let mut lane = Working::new(engine, (graph_name, graph), record, stored_version, &mut sink, cancel);
                lane.lane = Some(Lane {
                    hub,
                    path,
                    scope,
                    depth,
                    join,
                    base_context,
                    sent,
                    status: BranchStatus::Running,
                    agent,
                    found,
                });
                // The thread's version moves with every branch's commit; a lane reads it from its
                // parent when it starts.
                lane.stored_version = Some(hub.parent.lock().await.stored_version.unwrap_or(0));
                lane.record.version = lane.stored_version.unwrap_or(0);
                match job {
                    Job::Drive => Box::pin(crate::run::drive::drive(&mut lane)).await,
                    Job::Answer(answer, messages, identity) => {
                        Box::pin(crate::run::answer::resume(&mut lane, answer, messages, &identity)).await
                    }
                    Job::Reask => Box::pin(crate::run::reask::reask_in_lane(&mut lane)).await,
                    Job::Results(messages) => Box::pin(crate::run::input::remote_results(&mut lane, messages)).await,
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

/// The working record of the branch at `path`: its parent's thread record with the branch's
/// state, the conversation as the fork found it plus the branch's messages (only the branch's own
/// for an agent's call), the branch's progress as its root, and the fork inside it, if any.
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
    let mut pending = run.pending.as_deref().cloned();
    // The parent's copy of the question is the one that counts (an escalation changes it there);
    // inside the branch it is the question of the branch below, if it was asked deeper.
    if let Some(open) = record
        .pending
        .as_ref()
        .filter(|open| open.branch.as_deref() == Some(path))
    {
        let mut open = open.clone();
        open.branch = None;
        if !open.within.is_empty() {
            open.branch = Some(open.within.remove(0));
        }
        pending = Some(open);
    }
    let mut branches = BTreeMap::from([(ROOT_BRANCH.to_owned(), branch.clone())]);
    let inner = run.inner.as_deref().filter(|_| run.status == BranchStatus::Running);
    if let Some(inner) = inner {
        branches.extend(
            inner
                .branches
                .iter()
                .map(|(path, branch)| (path.clone(), branch.clone())),
        );
    }
    Ok(ThreadRecord {
        format: crate::thread::CheckpointFormat::CURRENT,
        thread_id: record.thread_id.clone(),
        artifact_id: record.artifact_id.clone(),
        graph: record.graph.clone(),
        owner: record.owner.clone(),
        version: record.version,
        created_at: record.created_at,
        updated_at: record.updated_at,
        state: run.state_over(&record.state, fork.subgraph.is_some()),
        context,
        execution,
        pending,
        run: Some(RunProgress {
            run_id: progress.run_id.clone(),
            started_by: progress.started_by.clone(),
            recursion_limit: progress.recursion_limit,
            input_text: progress.input_text.clone(),
            branches,
            fork: inner.map(|inner| inner.fork.clone()),
        }),
        resume_at: None,
        model_cursors: run.model_cursors.clone(),
        substitutions: record.substitutions.clone(),
        stopped_run: None,
    })
}
