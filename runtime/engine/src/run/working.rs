//! The working copy of a thread during a request: the engine changes it, then commits it
//! whole (with receipts and records) through the store, version-checked, after every step.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};
use tenx_artifact::{Artifact, END, Graph};
use tokio_util::sync::CancellationToken;

use crate::engine::Inner;
use crate::ports::{Commit, Event, EventSink, Receipt, Record, StoreError, Timestamp};
use crate::thread::{Branch, ROOT_BRANCH, RunProgress, ThreadRecord};
use crate::wire::Message;
use crate::{ErrorCode, RunError};

/// One request's view of its thread.
pub(crate) struct Working<'e> {
    pub(crate) engine: &'e Inner,
    pub(crate) graph_name: String,
    pub(crate) graph: &'e Graph,
    pub(crate) record: ThreadRecord,
    /// The version the store holds (`None`: the thread is not stored yet).
    pub(crate) stored_version: Option<u64>,
    pub(crate) events: &'e mut dyn EventSink,
    /// Whether the sink reads events ([`EventSink::listening`]): when not, none is built.
    listening: bool,
    /// The messages this request added, in order (returned to the caller).
    pub(crate) produced: Vec<Produced>,
    /// Records and receipts to write with the next commit.
    pub(crate) records: Vec<Record>,
    pub(crate) receipts: Vec<Receipt>,
    pub(crate) cancel: CancellationToken,
    /// `Ids::failures` when the request began: once it moves, nothing is committed.
    pub(crate) id_failures: u64,
    /// The question the next pause replaces (asked again because what it asked about changed).
    pub(crate) replacing: Option<crate::thread::Replaced>,
    /// Set when this working copy is one parallel branch of a fork: its commits go through the
    /// fork's hub into the thread's checkpoint (see [`super::fork`]).
    pub(crate) lane: Option<super::fork::Lane<'e>>,
    /// The call of an agent used as a tool that the next fork starts (set by the agent node).
    pub(crate) agent_call: Option<super::fork::AgentCall>,
    /// The call a stop just cut short after it was sent: the next result pushed for it carries
    /// it (see [`super::execute::STOPPED_IN_FLIGHT`]).
    pub(crate) cut_short: Option<super::execute::StoppedCall>,
    /// `on_busy = "cancel"` met a run a crash left (see [`super::entry`]): the run settles its
    /// call in flight (sent again under its key, or `outcome_unknown`), answers its round's
    /// calls not sent yet "not run", and stops as a cancelled run stops, with no step of its own.
    pub(crate) ends_once_settled: bool,
}

impl<'e> Working<'e> {
    /// A request's working copy of `record`, stored at `stored_version` (`None`: not stored yet).
    pub(crate) fn new(
        engine: &'e Inner,
        (graph_name, graph): (String, &'e Graph),
        record: ThreadRecord,
        stored_version: Option<u64>,
        events: &'e mut dyn EventSink,
        cancel: CancellationToken,
    ) -> Self {
        let listening = events.listening();
        Self {
            engine,
            graph_name,
            graph,
            record,
            stored_version,
            events,
            listening,
            produced: Vec::new(),
            records: Vec::new(),
            receipts: Vec::new(),
            cancel,
            id_failures: engine.ports.ids.failures(),
            replacing: None,
            lane: None,
            agent_call: None,
            cut_short: None,
            ends_once_settled: false,
        }
    }

    /// Whether this working copy is a parallel branch that reached its end: the fork's join,
    /// or `END`.
    pub(crate) fn lane_ends_at(&self, node: &str) -> bool {
        self.lane.as_ref().is_some_and(|lane| node == END || node == lane.join)
    }

    /// Whether the run is to stop before its next step: a stop cancelled it, or it was asked to
    /// stop after the step it was in.
    pub(crate) fn stop_requested(&self) -> bool {
        self.cancelled() || self.engine.running.stops_after_step(&self.record.thread_id)
    }

    /// Whether a cancel reached the run (a stop, or a cancel the run ends with once settled):
    /// no call is sent from now on that was not sent already.
    pub(crate) fn cancelled(&self) -> bool {
        self.ends_once_settled || self.cancel.is_cancelled()
    }

    pub(crate) fn artifact(&self) -> &'e Artifact {
        &self.engine.artifact.artifact
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.engine.ports.clock.now()
    }

    pub(crate) fn now_seconds(&self) -> f64 {
        self.engine.ports.clock.now_seconds()
    }

    pub(crate) fn message_id(&self) -> String {
        self.engine.ports.ids.message_id()
    }

    pub(crate) fn emit(&mut self, event: Event) {
        self.events.emit(event);
    }

    /// Emits the event `make` builds, building it only when the sink listens.
    pub(crate) fn emit_with(&mut self, make: impl FnOnce() -> Event) {
        if self.listening {
            self.events.emit(make());
        }
    }

    /// Whether the sink reads events.
    pub(crate) fn listening(&self) -> bool {
        self.listening
    }

    /// Appends a message to the conversation and to what this request returns (the output
    /// takes it from the conversation at the end, shared: `Produced::InContext`).
    pub(crate) fn push_message(&mut self, message: Message) {
        if self.listening {
            self.events.emit(Event::Message {
                message: message.clone(),
                branch: None,
            });
        }
        self.produced.push(Produced::InContext(self.record.context.len()));
        self.record.context.push(Arc::new(message));
    }

    /// Inserts a message into the conversation at `index` (at most its end), and adds it to what
    /// this request returns, as [`Self::push_message`] does.
    pub(crate) fn insert_message(&mut self, index: usize, message: Message) {
        let index = index.min(self.record.context.len());
        if self.listening {
            self.events.emit(Event::Message {
                message: message.clone(),
                branch: None,
            });
        }
        for produced in &mut self.produced {
            if let Produced::InContext(at) = produced
                && *at >= index
            {
                *at = at.saturating_add(1);
            }
        }
        self.produced.push(Produced::InContext(index));
        self.record.context.insert(index, Arc::new(message));
    }

    /// Appends a message a parallel branch added (and announced) to the conversation, at the
    /// join, and to what this request returns.
    pub(crate) fn push_merged(&mut self, message: Arc<Message>) {
        self.produced.push(Produced::InContext(self.record.context.len()));
        self.record.context.push(message);
    }

    /// Adds a message to what this request returns that the conversation does not keep (a
    /// remote call's placeholder).
    pub(crate) fn push_placeholder(&mut self, message: Message) {
        self.emit_with(|| Event::Message {
            message: message.clone(),
            branch: None,
        });
        self.produced.push(Produced::Placeholder(Arc::new(message)));
    }

    /// The messages this request added, in order (shared with the conversation).
    pub(crate) fn take_produced(&mut self) -> Vec<Arc<Message>> {
        let produced = std::mem::take(&mut self.produced);
        produced
            .into_iter()
            .filter_map(|entry| match entry {
                Produced::InContext(index) => self.record.context.get(index).cloned(),
                Produced::Placeholder(message) => Some(message),
            })
            .collect()
    }

    /// Whether the first message this request added is a user message.
    pub(crate) fn produced_starts_with_user(&self) -> bool {
        match self.produced.first() {
            Some(Produced::InContext(index)) => self
                .record
                .context
                .get(*index)
                .is_some_and(|message| message.role == crate::wire::Role::User),
            Some(Produced::Placeholder(message)) => message.role == crate::wire::Role::User,
            None => false,
        }
    }

    /// The state fields.
    pub(crate) fn state(&self) -> &Map<String, Value> {
        &self.record.state
    }

    /// The current run's progress. A run in progress always has one: the loop creates it
    /// before the first step, and a checkpoint without one is refused as damaged.
    pub(crate) fn progress(&self) -> Result<&RunProgress, RunError> {
        self.record.run.as_ref().ok_or_else(damaged)
    }

    pub(crate) fn progress_mut(&mut self) -> Result<&mut RunProgress, RunError> {
        self.record.run.as_mut().ok_or_else(damaged)
    }

    /// The root branch (the only one until parallel branches exist).
    pub(crate) fn branch(&self) -> Result<&Branch, RunError> {
        self.progress()?.branches.get(ROOT_BRANCH).ok_or_else(damaged)
    }

    pub(crate) fn branch_mut(&mut self) -> Result<&mut Branch, RunError> {
        self.progress_mut()?.branches.get_mut(ROOT_BRANCH).ok_or_else(damaged)
    }

    /// Counts one step (a model call or a tool round) and refuses the one past the limit.
    pub(crate) fn count_step(&mut self) -> Result<(), RunError> {
        let limit = self.progress()?.recursion_limit;
        let branch = self.branch_mut()?;
        branch.steps = branch.steps.saturating_add(1);
        let steps = branch.steps;
        let node = branch.node.clone();
        self.record.execution.step = steps;
        if steps > limit {
            return Err(RunError::new(
                ErrorCode::RecursionLimit,
                format!("Graph execution exceeded recursion limit: {limit}"),
            )
            .with_details(serde_json::json!({"max_steps": limit, "current_step": steps, "current_node": node})));
        }
        Ok(())
    }

    /// Writes the working copy, the queued receipts and records, atomically and only over the
    /// version this request read. Every commit moves the thread's version by one.
    pub(crate) async fn commit(&mut self) -> Result<(), RunError> {
        self.commit_moved(None).await
    }

    /// [`Working::commit`], for the thread, with the store's hint that since the checkpoint it
    /// replaces only the branches of the thread's fork at `moved` changed (see
    /// `Store::commit_fork_step`; the fork's hub knows it).
    pub(crate) async fn commit_moved(&mut self, moved: Option<&BTreeSet<String>>) -> Result<(), RunError> {
        if self.engine.ports.ids.failures() != self.id_failures {
            return Err(random_source_unavailable());
        }
        if self.lane.is_some() {
            return super::fork::commit_lane(self).await;
        }
        self.record.version = self.stored_version.map_or(1, |version| version.saturating_add(1));
        self.record.updated_at = self.now();
        let commit = Commit {
            thread: None,
            expected_version: self.stored_version,
            receipts: std::mem::take(&mut self.receipts),
            records: std::mem::take(&mut self.records),
        };
        let store = &self.engine.ports.store;
        match moved {
            Some(moved) => store.commit_fork_step(&self.record, commit, moved).await,
            None => store.commit_checkpoint(&self.record, commit).await,
        }
        .map_err(store_error)?;
        self.stored_version = Some(self.record.version);
        Ok(())
    }

    /// The interrupt an interrupt node of the graph asks.
    pub(crate) fn interrupt_at(&self, node: &str) -> Option<&'e tenx_artifact::Interrupt> {
        let graph: &'e Graph = self.graph;
        let declared = graph.nodes.get(node)?;
        self.artifact().interrupts.get(&declared.reference)
    }

    /// Whether `node` is a tool node of the graph.
    pub(crate) fn is_tool_node(&self, node: &str) -> bool {
        self.graph
            .nodes
            .get(node)
            .is_some_and(|declared| declared.kind == tenx_artifact::NodeKind::Tool)
    }

    /// A call of the declared tool `tool` as the conversation shows it (its model-facing name).
    pub(crate) fn call_of(&self, tool: &str, call_id: &str, arguments: &Value) -> crate::thread::QueuedCall {
        let name = self
            .artifact()
            .tools
            .get(tool)
            .map(|declared| declared.name.clone())
            .unwrap_or_default();
        crate::thread::QueuedCall {
            id: call_id.to_owned(),
            name,
            arguments: super::glue::canonical_text(arguments),
        }
    }

    /// The user who started the run (`None` without auth, or between runs).
    pub(crate) fn requested_by(&self) -> Option<String> {
        self.record.run.as_ref().and_then(|run| run.started_by.user_id.clone())
    }

    /// Appends a record to write with the next commit.
    pub(crate) fn record(&mut self, kind: &str, fields: Value) {
        let record = Record {
            thread_id: self.record.thread_id.clone(),
            at: self.now(),
            kind: kind.to_owned(),
            fields,
        };
        self.records.push(record);
    }
}

/// A message this request added: one of the conversation (by its index there), or one only
/// the output shows.
pub(crate) enum Produced {
    InContext(usize),
    Placeholder(Arc<Message>),
}

/// A checkpoint that lacks what a run in progress must have.
pub(crate) fn damaged() -> RunError {
    RunError::new(
        ErrorCode::Storage,
        "the thread's checkpoint is damaged: a run in progress has no progress record",
    )
}

/// An id of this request could not be drawn from the random source: nothing it built may be
/// stored or shown (see `ports::Ids`).
pub(crate) fn random_source_unavailable() -> RunError {
    RunError::new(
        ErrorCode::RandomSourceUnavailable,
        "an id could not be drawn from the random source; nothing was recorded",
    )
}

/// A store failure as a run error (never with more detail than the store gave).
pub(crate) fn store_error(error: StoreError) -> RunError {
    match error {
        StoreError::Conflict => RunError::new(ErrorCode::ThreadBusy, "thread is busy"),
        StoreError::Transient(message) => RunError::new(ErrorCode::StorageTransient, message),
        StoreError::Failed(message) => RunError::new(ErrorCode::Storage, message),
    }
}
