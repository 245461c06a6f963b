//! Asking pending questions again after the program changed (`tenxc dev`, the contract's
//! "Artifact changes"), when the host opts in with `EngineOptions::reask_after_reload`. A
//! question belongs to the policy of the artifact that asked it (its fingerprint's
//! `policy_revision`), so an answer to it is never used under another artifact. Instead the
//! question of a thread paused at an approval or an interrupt node under another artifact is
//! asked again under this one, as the same step would ask it now: a new interrupt id, a new
//! package and fingerprint (this artifact's policy revision), a fresh expiry, and the thread
//! stamped with this artifact. The old id is then refused like any id that is not the open one
//! (409 `INTERRUPT_001`).
//!
//! Deny by default: when the step cannot be asked again as it was (its graph, node or tool is
//! gone, the agent may no longer call the tool, the tool no longer needs approval or is
//! prohibited, its parameters no longer accept the pending arguments, the package cannot be
//! built), nothing runs. The question is withdrawn, recorded as `superseded` with the reason,
//! the open calls are answered "not run", and the run ends as an error
//! (`GRAPH_VERSION_MISMATCH`, with `outcome: superseded`): a new message starts a new run. A
//! question that had expired is expired as an answer after expiry would expire it.
//!
//! A question asked inside a fork is asked again in its branch's lane ([`super::fork::reask`]),
//! and so is every other question waiting in the fork at any depth, once every fork on the way
//! is checked to be still the program's ([`super::fork::still_forks`]); if one cannot be asked
//! again, all are withdrawn together.
//!
//! [`Engine::reask_after_reload`] does it for every such thread (the host calls it after it
//! swaps engines and at start-up, so it survives a restart); [`Engine::run`] does it first for
//! the thread a request touches, so no request ever meets a question of another artifact.

use std::sync::Arc;

use serde_json::{Value, json};
use tenx_artifact::{NodeKind, Risk};
use tokio_util::sync::CancellationToken;

use crate::engine::{Engine, Inner};
use crate::ports::{Commit, EventSink, Record};
use crate::thread::{PendingKind, ThreadRecord};
use crate::wire::{ExecutionStatus, Message, Role};
use crate::{ErrorCode, RunError};

use super::Working;
use super::working::{random_source_unavailable, store_error};

/// How many threads are read per page of the sweep.
const PAGE: usize = 256;

/// The longest the sweep waits for one thread's lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What [`Engine::reask_after_reload`] did, thread by thread.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReaskReport {
    /// Each thread that waited at a question of another artifact.
    pub threads: Vec<ReaskedThread>,
}

impl ReaskReport {
    /// The outcome for `thread_id`, if it waited at a question of another artifact.
    pub fn outcome(&self, thread_id: &str) -> Option<&ReaskOutcome> {
        self.threads
            .iter()
            .find(|thread| thread.thread_id == thread_id)
            .map(|thread| &thread.outcome)
    }
}

/// One thread's re-ask.
#[derive(Debug, Clone, PartialEq)]
pub struct ReaskedThread {
    /// The thread.
    pub thread_id: String,
    /// What happened to its question.
    pub outcome: ReaskOutcome,
}

/// What became of a question of another artifact.
#[derive(Debug, Clone, PartialEq)]
pub enum ReaskOutcome {
    /// Asked again under this artifact.
    Reasked {
        /// The id of the question that was withdrawn (now refused).
        previous: String,
        /// The id of the question asked now.
        interrupt_id: String,
    },
    /// Withdrawn without asking again: nothing ran, the run ended (see the module docs).
    Superseded {
        /// The id of the withdrawn question.
        previous: String,
        /// Why it could not be asked again.
        reason: String,
    },
    /// It had expired: recorded as `expired`, the run ended as for a late answer.
    Expired,
    /// Another holder kept the thread's lock for the whole wait; the next request to the
    /// thread asks again.
    Busy,
    /// The store failed; the thread is as it was.
    Failed(RunError),
}

impl Engine {
    /// Asks again, under this artifact, every question a thread waits at that another artifact
    /// asked (see the module docs); does nothing unless `EngineOptions::reask_after_reload` is
    /// on (`tenx serve` leaves it off and refuses such answers with `GRAPH_VERSION_MISMATCH`).
    /// Each thread is handled under its lock, awaited for at most `EngineOptions::busy_wait` and
    /// never more than 2 s: a thread still held is reported `Busy` and asked again by its next
    /// request.
    ///
    /// Fails only when the store cannot list threads; a thread that fails is reported in its
    /// entry and the others go on.
    pub async fn reask_after_reload(&self, events: &mut dyn EventSink) -> Result<ReaskReport, RunError> {
        let inner = &*self.inner;
        let mut report = ReaskReport::default();
        if !inner.options.reask_after_reload {
            return Ok(report);
        }
        let mut candidates = Vec::new();
        let mut offset = 0_usize;
        loop {
            let page = inner
                .ports
                .store
                .list_threads(None, offset, PAGE)
                .await
                .map_err(store_error)?;
            for summary in &page {
                if let Ok(Some(record)) = inner.ports.store.load(&summary.thread_id).await
                    && needs_reask(inner, &record)
                {
                    candidates.push(summary.thread_id.clone());
                }
            }
            if page.len() < PAGE {
                break;
            }
            offset = offset.saturating_add(PAGE);
        }
        // A thread in use is left to its next request, which asks again first: the sweep does
        // not stall a reload behind a long run.
        let wait = inner.options.busy_wait.min(LOCK_WAIT);
        for thread_id in candidates {
            let outcome = match tokio::time::timeout(wait, inner.ports.store.lock(&thread_id)).await {
                Ok(Ok(lease)) => {
                    let outcome = match inner.ports.store.load(&thread_id).await {
                        Ok(Some(record)) if needs_reask(inner, &record) => reask_locked(inner, record, events).await,
                        // Answered, deleted or asked again since it was listed.
                        Ok(_) => None,
                        Err(error) => Some(ReaskOutcome::Failed(store_error(error))),
                    };
                    drop(lease);
                    outcome
                }
                Ok(Err(error)) => Some(ReaskOutcome::Failed(store_error(error))),
                Err(_) => Some(ReaskOutcome::Busy),
            };
            if let Some(outcome) = outcome {
                report.threads.push(ReaskedThread { thread_id, outcome });
            }
        }
        Ok(report)
    }
}

/// Whether `record` waits at a question another artifact asked, and this engine asks again.
pub(crate) fn needs_reask(inner: &Inner, record: &ThreadRecord) -> bool {
    inner.options.reask_after_reload
        && record.artifact_id != inner.artifact_id
        && matches!(
            record.pending.as_ref().map(|pending| &pending.kind),
            Some(PendingKind::ToolApproval { .. } | PendingKind::InterruptNode { .. })
        )
}

/// Asks `record`'s question again, or withdraws it; the caller holds the thread's lock and
/// `record` is what the store holds. `None` when there was nothing to do.
pub(crate) async fn reask_locked(
    inner: &Inner,
    record: ThreadRecord,
    events: &mut dyn EventSink,
) -> Option<ReaskOutcome> {
    let pending = record.pending.clone()?;
    let previous = pending
        .interrupt
        .as_ref()
        .map(|interrupt| interrupt.id.clone())
        .unwrap_or_default();
    let Some((graph_name, graph)) = inner.artifact.artifact.graphs.get_key_value(&record.graph) else {
        let reason = format!("the graph `{}` is no longer in the program", record.graph);
        return Some(supersede(inner, record, &previous, reason, events).await);
    };
    if record.run.is_none() {
        let reason = "the thread has no run in progress to ask in".to_owned();
        return Some(supersede(inner, record, &previous, reason, events).await);
    }
    // Asked inside a fork: every question waiting in it is asked again, in its branch's lane.
    if pending.branch.is_some() {
        return Some(reask_branches(inner, (graph_name, graph), record, &previous, events).await);
    }
    let original = record.clone();
    let version = record.version;
    let mut working = Working::new(
        inner,
        (graph_name.clone(), graph),
        record,
        Some(version),
        events,
        CancellationToken::new(),
    );
    if pending.expires_at.is_some_and(|expires_at| working.now() >= expires_at) {
        return Some(match super::answer::expire(&mut working, &pending).await {
            Ok(()) => ReaskOutcome::Expired,
            Err(error) => ReaskOutcome::Failed(error),
        });
    }
    let asked = ask_again(&mut working, &pending).await?;
    let events = working.events;
    match asked {
        Ok(interrupt_id) => Some(ReaskOutcome::Reasked { previous, interrupt_id }),
        Err(Withdraw::Because(reason)) => Some(supersede(inner, original, &previous, reason, events).await),
        Err(Withdraw::Failed(error)) => Some(ReaskOutcome::Failed(error)),
    }
}

/// Asks again every question waiting inside the fork of `record`'s run, at every depth (each was
/// asked under the other artifact, the open one and those still to open alike), after checking
/// that every fork on the way is still the program's. When one cannot be asked again, they are
/// all withdrawn and the run ends, as for a question outside a fork.
async fn reask_branches(
    inner: &Inner,
    (graph_name, graph): (&String, &tenx_artifact::Graph),
    record: ThreadRecord,
    previous: &str,
    events: &mut dyn EventSink,
) -> ReaskOutcome {
    let still = record.run.as_ref().map_or(Ok(()), |run| {
        super::fork::still_forks(&inner.artifact.artifact, graph, run)
    });
    if let Err(reason) = still {
        return supersede(inner, record, previous, reason, events).await;
    }
    let thread_id = record.thread_id.clone();
    let version = record.version;
    let mut working = Working::new(
        inner,
        (graph_name.clone(), graph),
        record,
        Some(version),
        events,
        CancellationToken::new(),
    );
    working.record.artifact_id.clone_from(&inner.artifact_id);
    let asked = super::fork::reask(&mut working).await;
    let open = open_id(&working);
    let events = working.events;
    match asked {
        Ok(()) if open.is_empty() => ReaskOutcome::Expired,
        Ok(()) => ReaskOutcome::Reasked {
            previous: previous.to_owned(),
            interrupt_id: open,
        },
        Err(error) if error.details.get("withdrawn") == Some(&Value::Bool(true)) => {
            // Other branches may have been asked again already: withdraw what the store holds now.
            match inner.ports.store.load(&thread_id).await {
                Ok(Some(now)) => supersede(inner, now, previous, error.message, events).await,
                Ok(None) => ReaskOutcome::Failed(super::working::damaged()),
                Err(error) => ReaskOutcome::Failed(store_error(error)),
            }
        }
        Err(error) => ReaskOutcome::Failed(error),
    }
}

/// Asks the question a branch's lane waits at again (see [`super::fork::reask`]): deeper down when
/// it was asked in a fork inside the branch, else as its step would ask it now; an expired one
/// expires (ending the branch). One that cannot be asked again is an error marked `withdrawn`.
pub(crate) async fn reask_in_lane(working: &mut Working<'_>) -> Result<(), RunError> {
    let Some(pending) = working.record.pending.clone() else {
        return Ok(());
    };
    if pending.branch.is_some() {
        return Box::pin(super::fork::reask(working)).await;
    }
    if pending.expires_at.is_some_and(|expires_at| working.now() >= expires_at) {
        return super::answer::expire(working, &pending).await;
    }
    match ask_again(working, &pending).await {
        None | Some(Ok(_)) => Ok(()),
        Some(Err(Withdraw::Because(reason))) => {
            Err(RunError::new(ErrorCode::GraphVersionMismatch, reason).with_details(json!({"withdrawn": true})))
        }
        Some(Err(Withdraw::Failed(error))) => Err(error),
    }
}

/// Asks `pending`'s question again as its step would ask it now: the new interrupt id, or why
/// not. `None` for a remote call, which is no question.
async fn ask_again(working: &mut Working<'_>, pending: &crate::thread::Pending) -> Option<Result<String, Withdraw>> {
    Some(match &pending.kind {
        PendingKind::ToolApproval {
            node,
            tool,
            call_id,
            arguments,
            ..
        } => ask_tool_again(working, pending, node, tool, call_id, arguments).await,
        PendingKind::InterruptNode { node } => ask_interrupt_again(working, pending, node).await,
        PendingKind::RemoteTool { .. } => return None,
    })
}

/// Why a question is not asked again.
enum Withdraw {
    /// It no longer applies: withdraw it, with this reason.
    Because(String),
    /// The store or the id source failed: leave the thread as it is.
    Failed(RunError),
}

impl From<super::StepError> for Withdraw {
    fn from(error: super::StepError) -> Self {
        match error {
            super::StepError::Node(failure) => Self::Because(failure.message),
            super::StepError::Run(error) if is_infrastructure(&error) => Self::Failed(error),
            super::StepError::Run(error) => Self::Because(error.message),
        }
    }
}

fn is_infrastructure(error: &RunError) -> bool {
    matches!(
        error.code,
        ErrorCode::Storage | ErrorCode::StorageTransient | ErrorCode::ThreadBusy | ErrorCode::RandomSourceUnavailable
    )
}

/// Asks a tool call's approval again, as the node would ask it now. The new interrupt id.
async fn ask_tool_again(
    working: &mut Working<'_>,
    pending: &crate::thread::Pending,
    node: &str,
    tool_name: &str,
    call_id: &str,
    arguments: &Value,
) -> Result<String, Withdraw> {
    let artifact = working.artifact();
    let Some(declared) = working.graph.nodes.get(node) else {
        return Err(Withdraw::Because(format!(
            "the node `{node}` is no longer in the graph"
        )));
    };
    let allowed = match declared.kind {
        NodeKind::Agent => artifact
            .agents
            .get(&declared.reference)
            .is_some_and(|agent| agent.allowed_tools.iter().any(|name| name == tool_name)),
        NodeKind::Tool => declared.reference == tool_name,
        NodeKind::Interrupt | NodeKind::Graph => false,
    };
    if !allowed {
        return Err(Withdraw::Because(format!(
            "the node `{node}` no longer calls the tool `{tool_name}`"
        )));
    }
    let Some(tool) = artifact.tools.get(tool_name) else {
        return Err(Withdraw::Because(format!(
            "the tool `{tool_name}` is no longer in the program"
        )));
    };
    if let Err(error) = super::glue::check_schema(&tool.parameters, arguments) {
        return Err(Withdraw::Because(format!(
            "the parameters of `{tool_name}` no longer accept the pending arguments: {error}"
        )));
    }
    let (risk, rule) = super::glue::call_risk(tool, arguments);
    let approval = match (risk, tool.approval.as_ref()) {
        (Risk::Prohibited, _) => {
            return Err(Withdraw::Because(format!("the tool `{tool_name}` is now prohibited")));
        }
        (Risk::Low, _) | (_, None) => {
            return Err(Withdraw::Because(format!(
                "the call of `{tool_name}` no longer needs this approval"
            )));
        }
        (Risk::Medium | Risk::High, Some(approval)) => approval,
    };
    restamp(
        working,
        pending,
        json!({"node": node, "tool": tool_name, "call_id": call_id}),
    );
    let ask = super::pause::AskTool {
        node,
        tool_name,
        tool,
        call_id,
        arguments,
        approval,
        risk,
        rule,
    };
    match super::pause::ask_tool(working, ask).await? {
        super::pause::Asked::Paused => Ok(open_id(working)),
        super::pause::Asked::AlreadyRejected(_) => Err(Withdraw::Because(format!(
            "the same call of `{tool_name}` was rejected earlier in this run"
        ))),
    }
}

/// Asks an interrupt node's question again. The new interrupt id.
async fn ask_interrupt_again(
    working: &mut Working<'_>,
    pending: &crate::thread::Pending,
    node: &str,
) -> Result<String, Withdraw> {
    let interrupt = working
        .graph
        .nodes
        .get(node)
        .filter(|declared| declared.kind == NodeKind::Interrupt)
        .map(|declared| declared.reference.clone());
    let Some(name) = interrupt.filter(|name| working.artifact().interrupts.contains_key(name)) else {
        return Err(Withdraw::Because(format!(
            "the interrupt node `{node}` is no longer in the graph"
        )));
    };
    restamp(working, pending, json!({"node": node}));
    super::interrupt::interrupt_node(working, node, &name).await?;
    Ok(open_id(working))
}

/// Stamps the working copy with this artifact, withdraws the old question and records why.
fn restamp(working: &mut Working<'_>, pending: &crate::thread::Pending, mut fields: Value) {
    let previous = pending.interrupt.as_ref().map(|interrupt| interrupt.id.clone());
    if let Value::Object(fields) = &mut fields {
        fields.insert("interrupt_id".to_owned(), json!(previous));
        fields.insert("fingerprint".to_owned(), json!(pending.fingerprint));
        fields.insert("decision".to_owned(), Value::Null);
        fields.insert("outcome".to_owned(), json!("reasked"));
        fields.insert("previous_artifact_id".to_owned(), json!(working.record.artifact_id));
        fields.insert("artifact_id".to_owned(), json!(working.engine.artifact_id));
        fields.insert(
            "reason".to_owned(),
            json!("the program changed: the question is asked again under the new artifact"),
        );
    }
    working.record("approval", fields);
    working.replacing = crate::thread::Replaced::of(pending);
    working.record.artifact_id.clone_from(&working.engine.artifact_id);
    working.record.pending = None;
}

fn open_id(working: &Working<'_>) -> String {
    working
        .record
        .pending
        .as_ref()
        .and_then(|pending| pending.interrupt.as_ref())
        .map(|interrupt| interrupt.id.clone())
        .unwrap_or_default()
}

/// Withdraws `record`'s question without running anything and ends its run, in one commit over
/// the stored version (see the module docs).
async fn supersede(
    inner: &Inner,
    mut record: ThreadRecord,
    previous: &str,
    reason: String,
    events: &mut dyn EventSink,
) -> ReaskOutcome {
    let id_failures = inner.ports.ids.failures();
    let now = inner.ports.clock.now();
    let pending = record.pending.take();
    let mut fields = json!({
        "interrupt_id": previous,
        "fingerprint": pending.as_ref().and_then(|pending| pending.fingerprint.clone()),
        "decision": null,
        "outcome": "superseded",
        "reason": reason,
        "previous_artifact_id": record.artifact_id,
        "artifact_id": inner.artifact_id,
    });
    if let (
        Some(PendingKind::ToolApproval {
            node, tool, call_id, ..
        }),
        Value::Object(map),
    ) = (pending.as_ref().map(|pending| &pending.kind), &mut fields)
    {
        map.insert("node".to_owned(), json!(node));
        map.insert("tool".to_owned(), json!(tool));
        map.insert("call_id".to_owned(), json!(call_id));
    } else if let (Some(PendingKind::InterruptNode { node }), Value::Object(map)) =
        (pending.as_ref().map(|pending| &pending.kind), &mut fields)
    {
        map.insert("node".to_owned(), json!(node));
    }
    let message = format!(
        "the program changed while thread '{}' waited at interrupt '{previous}', and the question cannot be asked again: {reason}. Nothing ran; a new message starts a new run",
        record.thread_id
    );
    // The conversation stays well formed: every call of the last model turn gets its answer.
    let answers: Vec<Message> = super::retire::open_calls(&record.context)
        .into_iter()
        .map(|(node, call)| {
            let empty = Message::text(
                inner.ports.ids.message_id(),
                Role::Tool,
                "",
                inner.ports.clock.now_seconds(),
            );
            let text = format!("Not run: the program changed while the call waited for approval ({reason}).");
            let tool = call.name.clone();
            super::calls::answer_message(empty, &node, &call, &tool, json!(text), true)
        })
        .collect();
    if inner.ports.ids.failures() != id_failures {
        return ReaskOutcome::Failed(random_source_unavailable());
    }
    record.context.extend(answers.into_iter().map(Arc::new));
    let execution = &mut record.execution;
    execution.status = ExecutionStatus::Error;
    execution.internal_data.insert("error".to_owned(), json!(message));
    execution
        .internal_data
        .insert("error_code".to_owned(), json!(ErrorCode::GraphVersionMismatch.as_str()));
    execution
        .internal_data
        .insert("outcome".to_owned(), json!("superseded"));
    execution.interrupted_node = None;
    execution.interrupt_reason = None;
    execution.interrupt_data = None;
    record.artifact_id.clone_from(&inner.artifact_id);
    record.run = None;
    record.resume_at = None;
    let expected = record.version;
    record.version = expected.saturating_add(1);
    record.updated_at = now;
    let thread_id = record.thread_id.clone();
    let commit = Commit {
        thread: Some(record),
        expected_version: Some(expected),
        receipts: Vec::new(),
        records: vec![Record {
            thread_id,
            at: now,
            kind: "approval".to_owned(),
            fields,
        }],
    };
    if let Err(error) = inner.ports.store.commit(commit).await {
        return ReaskOutcome::Failed(store_error(error));
    }
    events.emit(crate::ports::Event::Error {
        code: ErrorCode::GraphVersionMismatch.as_str().to_owned(),
        message,
    });
    ReaskOutcome::Superseded {
        previous: previous.to_owned(),
        reason,
    }
}
