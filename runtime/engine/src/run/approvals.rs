//! The approvals inbox, as a host's approvals API and console read it: the open questions a
//! caller may answer across threads ([`Engine::approvals`]), one whole ([`Engine::approval`]),
//! handing one to another role ([`Engine::escalate`]), and the approval record as the caller
//! may see it ([`Engine::approval_records`]). Who may answer is decided here once
//! ([`who_may_answer`], [`refusal`]) for the inbox and for answers alike, so the console never
//! offers what the engine would refuse. Answering goes through [`Engine::run`] with the
//! question's `interrupt_id` (the same rules as any resume).

use std::collections::HashMap;

use serde_json::{Value, json};
use tenx_artifact::{Approvers, Artifact, Graph};

use crate::approval::{
    ApprovalDetail, ApprovalSummary, EscalationView, Refusal, ReplacedView, ResponseKind, difference,
};
use crate::engine::{Engine, Inner};
use crate::ports::{Commit, NumberedRecord, Record};
use crate::thread::{Escalation, Pending, PendingKind, ThreadRecord};
use crate::wire::{ContentBlock, Role};
use crate::{ErrorCode, Identity, RunError};

use super::working::store_error;

/// The longest escalation note kept.
pub const MAX_NOTE_CHARS: usize = 2000;

/// A page of the approval record.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordPage {
    /// The records the caller may see, oldest first.
    pub records: Vec<NumberedRecord>,
    /// Where the next page starts (`after`), or `None` when there is no more.
    pub next_after: Option<u64>,
}

/// Who may answer `pending`: its approval's (or interrupt's) `approvers` and `separate_duties`;
/// after an escalation, only the role it was handed to (separate duties still hold).
pub(crate) fn who_may_answer(artifact: &Artifact, graph: &Graph, pending: &Pending) -> (Option<Approvers>, bool) {
    let declared = match &pending.kind {
        PendingKind::ToolApproval { tool, .. } => artifact
            .tools
            .get(tool)
            .and_then(|declared| declared.approval.as_ref())
            .map_or((None, true), |approval| {
                (approval.approvers.clone(), approval.separate_duties)
            }),
        PendingKind::InterruptNode { node } => graph
            .nodes
            .get(node)
            .and_then(|declared| artifact.interrupts.get(&declared.reference))
            .map_or((None, true), |interrupt| {
                (interrupt.approvers.clone(), interrupt.separate_duties)
            }),
        PendingKind::RemoteTool { .. } => (None, false),
    };
    match &pending.escalation {
        Some(escalation) => (
            Some(Approvers {
                roles: vec![escalation.to_role.clone()],
                scopes: Vec::new(),
            }),
            declared.1,
        ),
        None => declared,
    }
}

/// Why `identity` may not answer the question `record` waits at, or `None` when it may: the
/// rules an answer meets ([`crate::approval::may_answer`]), and without `approvers` only the
/// thread's owner.
pub(crate) fn refusal(
    auth: bool,
    record: &ThreadRecord,
    approvers: Option<&Approvers>,
    separate_duties: bool,
    identity: &Identity,
) -> Option<Refusal> {
    if auth && approvers.is_none() && record.owner != identity.user_id {
        return Some(Refusal {
            rule: "owner".to_owned(),
            message: "Not authorized to invoke graph".to_owned(),
        });
    }
    let requested_by = record.run.as_ref().and_then(|run| run.started_by.user_id.as_deref());
    crate::approval::may_answer(approvers, separate_duties, requested_by, identity, auth)
        .err()
        .map(|error| Refusal {
            rule: error
                .details
                .get("rule")
                .and_then(Value::as_str)
                .unwrap_or("approvers")
                .to_owned(),
            message: error.message,
        })
}

/// The refusal as the error an answer (or an escalation) gets.
fn refused(refusal: Refusal) -> RunError {
    if refusal.rule == "owner" {
        return RunError::new(ErrorCode::NotAuthorized, refusal.message);
    }
    RunError::new(ErrorCode::ApproverRefused, refusal.message).with_details(json!({"rule": refusal.rule}))
}

fn not_found(interrupt_id: &str) -> RunError {
    RunError::new(
        ErrorCode::ApprovalNotFound,
        format!("approval '{interrupt_id}' not found: it was answered, withdrawn or never asked"),
    )
}

/// An open question of a thread, read for the inbox.
struct Question<'a> {
    record: &'a ThreadRecord,
    pending: &'a Pending,
    interrupt: &'a crate::wire::InterruptObject,
    graph: &'a Graph,
}

impl<'a> Question<'a> {
    /// The question `record` waits at, when this artifact can answer it.
    fn of(inner: &'a Inner, record: &'a ThreadRecord) -> Option<Self> {
        let pending = record.pending.as_ref()?;
        let interrupt = pending.interrupt.as_ref()?;
        if record.artifact_id != inner.artifact_id {
            return None;
        }
        let graph = inner.artifact.artifact.graphs.get(&record.graph)?;
        Some(Self {
            record,
            pending,
            interrupt,
            graph,
        })
    }

    fn shown(&self, field: &str) -> Value {
        self.interrupt.value.get(field).cloned().unwrap_or(Value::Null)
    }

    fn text(&self, field: &str) -> Option<String> {
        self.interrupt
            .value
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// The declared tool the question is about, if any.
    fn action(&self) -> Option<String> {
        match &self.pending.kind {
            PendingKind::ToolApproval { tool, .. } => Some(tool.clone()),
            _ => self.text("action"),
        }
    }

    fn response(&self, artifact: &Artifact) -> ResponseKind {
        let decision = match &self.pending.kind {
            PendingKind::ToolApproval { tool, .. } => artifact
                .tools
                .get(tool)
                .and_then(|declared| declared.approval.as_ref())
                .map(|approval| &approval.decision),
            PendingKind::InterruptNode { node } => self
                .graph
                .nodes
                .get(node)
                .and_then(|declared| artifact.interrupts.get(&declared.reference))
                .map(|interrupt| &interrupt.decision),
            PendingKind::RemoteTool { .. } => None,
        };
        decision.map_or(ResponseKind::Custom, ResponseKind::of)
    }

    fn summary(&self, artifact: &Artifact) -> ApprovalSummary {
        let (approvers, separate_duties) = who_may_answer(artifact, self.graph, self.pending);
        ApprovalSummary {
            interrupt_id: self.interrupt.id.clone(),
            thread_id: self.record.thread_id.clone(),
            graph: self.record.graph.clone(),
            node: self.interrupt.node.clone(),
            action: self.action(),
            tool_name: self.text("tool_name"),
            risk: self.text("risk"),
            message: self.interrupt.message.clone(),
            target: self.text("target"),
            normalized_arguments: self.shown("normalized_arguments"),
            asked_at_ms: self.pending.asked_at,
            expires_at_ms: self.pending.expires_at,
            requested_by: self.record.run.as_ref().and_then(|run| run.started_by.user_id.clone()),
            approvers,
            separate_duties,
            escalated_to: self.pending.escalation.as_ref().map(EscalationView::from),
            response: self.response(artifact),
            replaces: self.pending.replaces.is_some(),
        }
    }

    /// The words of the model's message that made the call (untrusted), if any.
    fn model_text(&self) -> Option<String> {
        let call_id = self.interrupt.tool_call_id.as_deref()?;
        let message = self.record.context.iter().rev().find(|message| {
            message.role == Role::Assistant
                && message
                    .content
                    .iter()
                    .any(|block| matches!(block, ContentBlock::ToolCall { id, .. } if id == call_id))
        })?;
        let text: Vec<&str> = message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (!text.is_empty()).then(|| text.join("\n\n"))
    }

    fn detail(&self, inner: &Inner, identity: &Identity) -> ApprovalDetail {
        let artifact = &inner.artifact.artifact;
        let summary = self.summary(artifact);
        let refused = refusal(
            inner.options.auth,
            self.record,
            summary.approvers.as_ref(),
            summary.separate_duties,
            identity,
        );
        let parameters_schema = summary
            .action
            .as_ref()
            .and_then(|action| artifact.tools.get(action))
            .map_or(Value::Null, |tool| tool.parameters.to_value());
        let replaced = self.pending.replaces.as_ref();
        let replaces_request = replaced.map(|replaced| {
            let field = |name: &str| replaced.value.get(name).cloned().unwrap_or(Value::Null);
            ReplacedView {
                interrupt_id: replaced.interrupt_id.clone(),
                approval_fingerprint: replaced.fingerprint.clone(),
                message: replaced.message.clone(),
                normalized_arguments: field("normalized_arguments"),
                target: field("target"),
                evidence: field("evidence"),
                risk: field("risk"),
            }
        });
        ApprovalDetail {
            approval_fingerprint: self.pending.fingerprint.clone(),
            on_reject: self.text("on_reject"),
            evidence: self.shown("evidence"),
            details: self.shown("details"),
            model_text: self.model_text(),
            parameters_schema,
            response_schema: self.interrupt.response_schema.clone(),
            difference: replaced.map_or_else(Vec::new, |replaced| difference(&replaced.value, &self.interrupt.value)),
            replaces_request,
            may_answer: refused.is_none(),
            refused,
            summary,
        }
    }
}

impl Engine {
    /// The open questions `identity` may answer, across threads, oldest first: `offset` and
    /// `limit` page the caller's list. Questions another artifact asked are not listed (they
    /// cannot be answered here).
    pub async fn approvals(
        &self,
        identity: &Identity,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ApprovalSummary>, RunError> {
        let inner = &*self.inner;
        let store = &inner.ports.store;
        let artifact = &inner.artifact.artifact;
        let mut found = Vec::new();
        let mut skipped = 0_usize;
        for open in store.open_questions().await.map_err(store_error)? {
            if found.len() >= limit {
                break;
            }
            let Some(record) = store.load(&open.thread_id).await.map_err(store_error)? else {
                continue;
            };
            let Some(question) = Question::of(inner, &record) else {
                continue;
            };
            let summary = question.summary(artifact);
            let refused = refusal(
                inner.options.auth,
                &record,
                summary.approvers.as_ref(),
                summary.separate_duties,
                identity,
            );
            if refused.is_some() {
                continue;
            }
            if skipped < offset {
                skipped = skipped.saturating_add(1);
                continue;
            }
            found.push(summary);
        }
        Ok(found)
    }

    /// The open question `interrupt_id`, whole, for someone who may answer it or for the user
    /// who started its run (then `may_answer` is `false` when separate duties refuse them).
    /// `APPROVAL_NOT_FOUND` when no open question has the id (or it was asked under another
    /// artifact); `APPROVER_REFUSED` for anyone else.
    pub async fn approval(&self, interrupt_id: &str, identity: &Identity) -> Result<ApprovalDetail, RunError> {
        let inner = &*self.inner;
        let record = self.question_record(interrupt_id).await?;
        let question = Question::of(inner, &record).ok_or_else(|| not_found(interrupt_id))?;
        let detail = question.detail(inner, identity);
        let is_requester =
            inner.options.auth && identity.user_id.is_some() && detail.summary.requested_by == identity.user_id;
        match &detail.refused {
            Some(refusal) if !is_requester => Err(refused(refusal.clone())),
            _ => Ok(detail),
        }
    }

    /// The thread waiting at `interrupt_id` (an answer resumes it with that id).
    pub async fn approval_thread(&self, interrupt_id: &str) -> Result<String, RunError> {
        self.inner
            .ports
            .store
            .question_thread(interrupt_id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| not_found(interrupt_id))
    }

    async fn question_record(&self, interrupt_id: &str) -> Result<ThreadRecord, RunError> {
        let thread_id = self.approval_thread(interrupt_id).await?;
        let record = self.inner.ports.store.load(&thread_id).await.map_err(store_error)?;
        record
            .filter(|record| {
                record
                    .pending
                    .as_ref()
                    .and_then(|pending| pending.interrupt.as_ref())
                    .is_some_and(|interrupt| interrupt.id == interrupt_id)
            })
            .ok_or_else(|| not_found(interrupt_id))
    }

    /// Hands the open question `interrupt_id` to `to_role`, with a note saying why: afterwards
    /// only holders of that role may answer it (separate duties still hold). Only someone who
    /// may answer it may escalate it; an expired question cannot be escalated. Recorded as an
    /// `escalation` record in the commit that makes it so. Returns the question as it now is.
    pub async fn escalate(
        &self,
        interrupt_id: &str,
        to_role: &str,
        note: &str,
        identity: &Identity,
    ) -> Result<ApprovalDetail, RunError> {
        let invalid = |message: String| RunError::new(ErrorCode::EscalationInvalid, message);
        let role_ok = !to_role.is_empty()
            && to_role.len() <= 64
            && to_role
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
        if !role_ok {
            return Err(invalid(
                "to_role must be a role name of 1 to 64 letters, digits, `_`, `.`, `:` or `-`".to_owned(),
            ));
        }
        let note = note.trim();
        if note.is_empty() || note.chars().count() > MAX_NOTE_CHARS {
            return Err(invalid(format!(
                "note must say why, in 1 to {MAX_NOTE_CHARS} characters"
            )));
        }
        let inner = &*self.inner;
        let thread_id = self.approval_thread(interrupt_id).await?;
        let lease = tokio::time::timeout(inner.options.busy_wait, inner.ports.store.lock(&thread_id))
            .await
            .map_err(|_| RunError::new(ErrorCode::ThreadBusy, "thread is busy"))?
            .map_err(store_error)?;
        let mut record = self.question_record(interrupt_id).await?;
        let detail = Question::of(inner, &record)
            .ok_or_else(|| not_found(interrupt_id))?
            .detail(inner, identity);
        if let Some(refusal) = detail.refused {
            return Err(refused(refusal));
        }
        let now = inner.ports.clock.now();
        if detail.summary.expires_at_ms.is_some_and(|at| now >= at) {
            return Err(RunError::new(
                ErrorCode::InterruptExpired,
                format!("interrupt '{interrupt_id}' expired: it cannot be escalated"),
            ));
        }
        let escalation = Escalation {
            to_role: to_role.to_owned(),
            note: note.to_owned(),
            by: identity.user_id.clone(),
            at: now,
        };
        let fields = json!({
            "interrupt_id": interrupt_id,
            "graph": record.graph,
            "node": detail.summary.node,
            "action": detail.summary.action,
            "requested_by": detail.summary.requested_by,
            "by": escalation.by,
            "from": detail.summary.approvers,
            "to_role": escalation.to_role,
            "note": escalation.note,
        });
        let expected = record.version;
        if let Some(pending) = record.pending.as_mut() {
            pending.escalation = Some(escalation);
        }
        record.version = record.version.saturating_add(1);
        record.updated_at = now;
        let commit = Commit {
            thread: None,
            expected_version: Some(expected),
            receipts: Vec::new(),
            records: vec![Record {
                thread_id: thread_id.clone(),
                at: now,
                kind: "escalation".to_owned(),
                fields,
            }],
        };
        inner
            .ports
            .store
            .commit_checkpoint(&record, commit)
            .await
            .map_err(store_error)?;
        drop(lease);
        let question = Question::of(inner, &record).ok_or_else(|| not_found(interrupt_id))?;
        Ok(question.detail(inner, identity))
    }

    /// The approval record (records of kind `approval`, `escalation` and `tool_call`) appended
    /// after `after`, oldest first, at most `limit`, as `identity` may see it: without auth
    /// everything; with auth, the records of runs they started, of answers and escalations they
    /// gave, of threads they own, and of actions their roles or scopes let them approve.
    pub async fn approval_records(
        &self,
        identity: &Identity,
        after: u64,
        limit: usize,
    ) -> Result<RecordPage, RunError> {
        const CHUNK: usize = 256;
        let inner = &*self.inner;
        let store = &inner.ports.store;
        let mut owners: HashMap<String, Option<Option<String>>> = HashMap::new();
        let mut records = Vec::new();
        let mut cursor = after;
        loop {
            let chunk = store.records_after(cursor, CHUNK).await.map_err(store_error)?;
            let exhausted = chunk.len() < CHUNK;
            for numbered in chunk {
                if records.len() >= limit {
                    return Ok(RecordPage {
                        records,
                        next_after: Some(cursor),
                    });
                }
                cursor = numbered.seq;
                if !matches!(numbered.record.kind.as_str(), "approval" | "escalation" | "tool_call") {
                    continue;
                }
                if self.may_see(identity, &numbered.record, &mut owners).await? {
                    records.push(numbered);
                }
            }
            if exhausted {
                return Ok(RecordPage {
                    records,
                    next_after: None,
                });
            }
        }
    }

    async fn may_see(
        &self,
        identity: &Identity,
        record: &Record,
        owners: &mut HashMap<String, Option<Option<String>>>,
    ) -> Result<bool, RunError> {
        let inner = &*self.inner;
        if !inner.options.auth {
            return Ok(true);
        }
        let Some(user) = identity.user_id.as_deref() else {
            return Ok(false);
        };
        let field = |name: &str| record.fields.get(name).and_then(Value::as_str);
        if ["requested_by", "answered_by", "by"]
            .iter()
            .any(|name| field(name) == Some(user))
        {
            return Ok(true);
        }
        let artifact = &inner.artifact.artifact;
        let action = field("action").or_else(|| field("tool"));
        let approvers = action
            .and_then(|action| artifact.tools.get(action))
            .and_then(|tool| tool.approval.as_ref())
            .and_then(|approval| approval.approvers.as_ref());
        let holds = |approvers: &Approvers| {
            identity.roles.iter().any(|role| approvers.roles.contains(role))
                || identity.scopes.iter().any(|scope| approvers.scopes.contains(scope))
        };
        if approvers.is_some_and(holds) {
            return Ok(true);
        }
        let node_approvers = field("node").and_then(|node| {
            artifact.graphs.values().find_map(|graph| {
                let declared = graph.nodes.get(node)?;
                artifact.interrupts.get(&declared.reference)?.approvers.as_ref()
            })
        });
        if node_approvers.is_some_and(holds) {
            return Ok(true);
        }
        if !owners.contains_key(&record.thread_id) {
            let owner = inner
                .ports
                .store
                .load(&record.thread_id)
                .await
                .map_err(store_error)?
                .map(|thread| thread.owner);
            owners.insert(record.thread_id.clone(), owner);
        }
        Ok(owners
            .get(&record.thread_id)
            .is_some_and(|owner| owner.as_ref().is_some_and(|owner| owner.as_deref() == Some(user))))
    }

    /// The approval record an accepted answer to `interrupt_id` left in `thread_id` (the last
    /// `approval` record of that question with a decision), if any.
    pub async fn answer_record(&self, thread_id: &str, interrupt_id: &str) -> Result<Option<Value>, RunError> {
        let records = self.inner.ports.store.records(thread_id).await.map_err(store_error)?;
        Ok(records
            .into_iter()
            .rev()
            .find(|record| {
                record.kind == "approval"
                    && record.fields.get("interrupt_id").and_then(Value::as_str) == Some(interrupt_id)
                    && record
                        .fields
                        .get("decision")
                        .is_some_and(|decision| !decision.is_null())
            })
            .map(|record| record.fields))
    }
}
