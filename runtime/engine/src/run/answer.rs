//! Answers to an open question (D1–D5 and the contract's "Approvals"): bound to the open
//! interrupt id, refused after expiry (which is recorded as the `expired` outcome, never as
//! consent), refused for a user who may not answer, checked against the response schema
//! before anything is recorded, `null` as a cancel. A refused answer records nothing. A valid
//! answer is recorded and the run goes on: the approved call runs once; a rejection returns
//! `on_reject` to the model (tool approval) or ends the run with it (interrupt node).

use serde_json::{Value, json};
use tenx_artifact::WriteSource;

use crate::engine::Inner;
use crate::request::ResumeAnswer;
use crate::thread::{ApprovedStep, Pending, PendingKind, QueuedCall, ThreadRecord};
use crate::wire::{ExecutionStatus, Message};
use crate::{ErrorCode, Identity, RunError};

use super::glue::Verdict;
use super::{Flow, StepError, Working};

/// Refuses an answer from someone who does not own the thread and may not answer its open
/// question: with auth on, only the owner or an approver allowed by the question's `approvers`
/// gets further. The refusal is the one the later checks would give (D7's `Not authorized to
/// invoke graph`, or `APPROVER_REFUSED`), given first: [`super::entry`] calls this as soon as the
/// thread is loaded, before the graph the request names is compared with the thread's, and
/// before a question another artifact asked is asked again, so a stranger learns nothing of the
/// thread (not its graph, not its question) and causes nothing. Who may answer is read from the
/// thread's own graph (`None` when the artifact has no such graph: then the owner alone may).
pub(crate) fn refuse_stranger(
    inner: &Inner,
    record: &ThreadRecord,
    cancels: bool,
    identity: &Identity,
) -> Result<(), RunError> {
    if !inner.options.auth || record.owner == identity.user_id {
        return Ok(());
    }
    // Waiting at no question, there is none to tell of (D2 answers).
    let Some(pending) = record.pending.as_ref() else {
        return Ok(());
    };
    let (approvers, separate_duties) = match inner.artifact.artifact.graphs.get(&record.graph) {
        Some(graph) => super::approvals::who_may_answer(&inner.artifact.artifact, graph, pending),
        None => (None, true),
    };
    // A cancel is not a decision on the action: separate duties do not hold for it.
    let separate_duties = separate_duties && !cancels;
    match super::approvals::refusal(true, record, approvers.as_ref(), separate_duties, identity) {
        None => Ok(()),
        Some(refusal) if refusal.rule == "owner" => Err(RunError::new(
            ErrorCode::NotAuthorized,
            "Not authorized to invoke graph",
        )),
        Some(refusal) => {
            Err(RunError::new(ErrorCode::ApproverRefused, refusal.message).with_details(json!({"rule": refusal.rule})))
        }
    }
}

/// Applies an answer to the thread's open question.
pub(crate) async fn resume(
    working: &mut Working<'_>,
    answer: ResumeAnswer,
    messages: Vec<Message>,
    identity: &Identity,
) -> Result<(), RunError> {
    let Some(pending) = working.record.pending.clone() else {
        return Err(super::entry::nothing_to_resume());
    };
    // A question a parallel branch asked: the branch takes the answer, under the same rules (in
    // a branch, a question asked in a fork inside it goes on down).
    if let Some(path) = pending.branch.clone() {
        return super::fork::answer(working, path, answer, messages, identity).await;
    }
    let Some(open) = pending.interrupt.clone() else {
        return Err(super::entry::nothing_to_resume());
    };
    if let Some(asked) = answer.interrupt_id.as_deref()
        && asked != open.id
    {
        return Err(RunError::new(
            ErrorCode::InterruptMismatch,
            format!("interrupt_id '{asked}' does not match the open interrupt '{}'", open.id),
        ));
    }
    if working.record.artifact_id != working.engine.artifact_id {
        return Err(RunError::new(
            ErrorCode::GraphVersionMismatch,
            format!(
                "thread '{}' was made by artifact {} and this server runs {}; its pending question cannot be answered here",
                working.record.thread_id, working.record.artifact_id, working.engine.artifact_id
            ),
        ));
    }
    refuse_if_expired(working).await?;
    let (approvers, separate_duties) = super::glue::who_may_answer(working, &pending);
    let requested_by = working.progress()?.started_by.user_id.clone();
    let owner_only = approvers.is_none() && working.engine.options.auth && working.record.owner != identity.user_id;
    if owner_only {
        return Err(RunError::new(
            ErrorCode::NotAuthorized,
            "Not authorized to invoke graph",
        ));
    }
    let verdict = if answer.value.is_null() {
        if approvers.is_some() && working.record.owner != identity.user_id {
            super::glue::may_answer(working, approvers.as_ref(), false, requested_by.as_deref(), identity)?;
        }
        Verdict::Cancel
    } else {
        super::glue::may_answer(
            working,
            approvers.as_ref(),
            separate_duties,
            requested_by.as_deref(),
            identity,
        )?;
        let response_schema = tenx_artifact::Schema::from_value(&open.response_schema);
        super::glue::check_schema(&response_schema, &answer.value).map_err(|error| {
            RunError::new(
                ErrorCode::InterruptAnswerInvalid,
                format!(
                    "Resume value does not match the response schema of interrupt '{}': {error}",
                    open.id
                ),
            )
        })?;
        super::glue::read_answer(working, &pending, &answer.value)?
    };
    // Messages sent with an answer go into the conversation; they pass the validators first.
    // An approval of a tool call pauses in the middle of a model turn: a message there would
    // stand between the model's calls and their results, which no provider accepts, so it is
    // refused (nothing recorded) and the client sends it once the run has continued.
    if !messages.is_empty() && matches!(pending.kind, PendingKind::ToolApproval { .. }) {
        return Err(RunError::new(
            ErrorCode::InvalidRequest,
            format!(
                "messages cannot be sent with an answer to the approval of a tool call (interrupt '{}'); send the answer alone, then the messages",
                open.id
            ),
        ));
    }
    if !messages.is_empty() {
        super::glue::check_input(&working.graph.input_validators, &working.artifact().validators, &messages).map_err(|violation| {
            RunError::new(ErrorCode::ValidationRefused, violation.message.clone())
                .with_details(json!({"violation_type": violation.violation_type, "validator": violation.validator, "rule": violation.rule, "message_index": violation.message_index}))
        })?;
    }
    // Accepted: from here on the answer is recorded.
    for message in messages {
        working.push_message(message);
    }
    let fields = answer_fields(working, &pending, &verdict, identity, answer.note.as_deref());
    working.record("approval", fields);
    working.record.pending = None;
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::Running;
    execution.interrupted_node = None;
    execution.interrupt_reason = None;
    execution.interrupt_data = None;
    let flow = match pending.kind.clone() {
        PendingKind::ToolApproval {
            node,
            tool,
            call_id,
            arguments,
            ..
        } => {
            let call = AnsweredCall {
                node: &node,
                tool: &tool,
                call_id: &call_id,
                arguments,
            };
            answer_tool(working, &pending, call, &answer.value, verdict).await
        }
        PendingKind::InterruptNode { node } => {
            answer_interrupt(working, &pending, &open.id, &node, &answer.value, verdict).await
        }
        PendingKind::RemoteTool { .. } => return Err(super::entry::nothing_to_resume()),
    };
    match flow {
        Ok(Flow::Go(target)) => {
            // A way on that cannot be taken (a fork that cannot start) fails the run as it does
            // after any step (`drive`): recorded with the answer, not left at the question.
            if let Err(error) = super::drive::enter(working, target) {
                return super::finish::failed(working, error).await;
            }
            working.commit().await?;
            super::drive::drive(working).await
        }
        // The agent's turn goes on in the node it never left (committed already).
        Ok(Flow::Stay) => super::drive::drive(working).await,
        Ok(Flow::Paused) => Ok(()),
        Ok(Flow::Stopped) => super::finish::stopped(working).await,
        Ok(Flow::End(text)) => super::finish::completed(working, Some(text)).await,
        Err(StepError::Run(error)) => super::finish::failed(working, error).await,
        Err(StepError::Node(failure)) => {
            let node = working.branch()?.node.clone();
            let error = RunError::new(
                ErrorCode::NodeFailed,
                format!("Error in node '{node}': {}", failure.message),
            );
            super::finish::failed(working, error).await
        }
    }
}

/// The fields every approval record of `pending`'s question carries (docs/runtime.md,
/// "Records"): the question, where and for what it was asked, by whom, when, and the action as
/// shown (from the package).
pub(crate) fn question_fields(working: &Working<'_>, pending: &Pending) -> serde_json::Map<String, Value> {
    let open = pending.interrupt.as_ref();
    let shown = |field: &str| {
        open.and_then(|open| open.value.get(field))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let action = match &pending.kind {
        PendingKind::ToolApproval { tool, .. } => json!(tool),
        _ => shown("action"),
    };
    let requested_by = working
        .record
        .run
        .as_ref()
        .and_then(|run| run.started_by.user_id.clone());
    let fields = json!({
        "interrupt_id": open.map(|open| open.id.clone()),
        "graph": working.graph_name,
        "node": open.map(|open| open.node.clone()),
        "action": action,
        "tool_name": shown("tool_name"),
        "tool_call_id": open.and_then(|open| open.tool_call_id.clone()),
        "fingerprint": pending.fingerprint,
        "requested_by": requested_by,
        "asked_at": pending.asked_at,
        "risk": shown("risk"),
        "target": shown("target"),
        "original_arguments": shown("normalized_arguments"),
        "escalated_to": pending.escalation.as_ref().map(|escalation| escalation.to_role.clone()),
    });
    match fields {
        Value::Object(fields) => fields,
        _ => serde_json::Map::new(),
    }
}

/// The approval record of an accepted answer: the question's fields, who answered and when,
/// the decision and outcome, after an edit the edited arguments, the idempotency key the
/// approved action runs under, and the answering person's note.
fn answer_fields(
    working: &Working<'_>,
    pending: &Pending,
    verdict: &Verdict,
    identity: &Identity,
    note: Option<&str>,
) -> Value {
    let edited_arguments = match verdict {
        Verdict::Edit(edited) => edited.clone(),
        _ => Value::Null,
    };
    let idempotency_key = match (&pending.kind, verdict) {
        (
            PendingKind::ToolApproval {
                node,
                tool,
                call_id,
                arguments,
                ..
            },
            Verdict::Approve | Verdict::Edit(_),
        ) => {
            let runs_with = if let Verdict::Edit(edited) = verdict {
                edited
            } else {
                arguments
            };
            working
                .artifact()
                .tools
                .get(tool)
                .map(|declared| {
                    json!(super::execute::idempotency_key(
                        working, declared, node, call_id, runs_with
                    ))
                })
                .unwrap_or(Value::Null)
        }
        _ => Value::Null,
    };
    let mut fields = question_fields(working, pending);
    fields.insert("answered_by".to_owned(), json!(identity.user_id));
    fields.insert("answered_at".to_owned(), json!(working.now()));
    fields.insert("decision".to_owned(), json!(verdict.as_str()));
    fields.insert("outcome".to_owned(), json!(verdict.settled_outcome()));
    fields.insert("edited_arguments".to_owned(), edited_arguments);
    fields.insert("idempotency_key".to_owned(), idempotency_key);
    fields.insert("note".to_owned(), json!(note));
    Value::Object(fields)
}

/// The call an approval was asked for.
struct AnsweredCall<'a> {
    node: &'a str,
    tool: &'a str,
    call_id: &'a str,
    arguments: Value,
}

/// The reviewer's note of an answer: its `feedback` property, when the approval names one.
fn note<'v>(feedback: Option<&str>, value: &'v Value) -> Option<&'v str> {
    feedback
        .and_then(|property| value.get(property))
        .and_then(Value::as_str)
}

/// The answer to a tool call's approval.
async fn answer_tool(
    working: &mut Working<'_>,
    pending: &Pending,
    answered: AnsweredCall<'_>,
    value: &Value,
    verdict: Verdict,
) -> Result<Flow, StepError> {
    let AnsweredCall {
        node,
        tool,
        call_id,
        arguments,
    } = answered;
    let is_tool_node = working.is_tool_node(node);
    let call = working.call_of(tool, call_id, &arguments);
    if matches!(verdict, Verdict::Approve | Verdict::Edit(_)) {
        match super::pause::recheck_tool(working, pending, node, tool, call_id, &arguments).await? {
            None => {}
            Some(super::pause::Asked::Paused) => return Ok(Flow::Paused),
            Some(super::pause::Asked::AlreadyRejected(text)) if is_tool_node => return Ok(Flow::End(text)),
            Some(super::pause::Asked::AlreadyRejected(text)) => {
                super::calls::push_result(working, node, &call, tool, json!(text), false);
                working.commit().await?;
                return Ok(Flow::Stay);
            }
        }
    }
    let arguments = match verdict {
        Verdict::Approve => arguments,
        Verdict::Edit(edited) => edited,
        Verdict::Respond(result) => return respond(working, node, tool, &call, &arguments, result, is_tool_node).await,
        Verdict::Reject | Verdict::Cancel => {
            let approval = working
                .artifact()
                .tools
                .get(tool)
                .and_then(|declared| declared.approval.as_ref());
            let on_reject = approval.map(|approval| approval.on_reject.clone()).unwrap_or_default();
            let feedback = approval.and_then(|approval| approval.feedback.as_deref());
            let on_reject = match verdict {
                Verdict::Reject => tenx_artifact::rejection_text(&on_reject, note(feedback, value)),
                _ => on_reject,
            };
            remember_rejection(working, pending)?;
            if is_tool_node {
                return Ok(Flow::End(on_reject));
            }
            super::calls::push_result(working, node, &call, tool, json!(on_reject), false);
            working.commit().await?;
            return Ok(Flow::Stay);
        }
    };
    if is_tool_node {
        return super::tool_node::run_approved(working, node, tool, call_id, &arguments, true).await;
    }
    let outcome = super::execute::run_tool(working, node, tool, call_id, &arguments, true).await?;
    if outcome.in_flight {
        // A stop cut it short inside a fork's branch: it stays in flight, approved, for the
        // thread's next run to finish.
        return Ok(Flow::Stopped);
    }
    super::calls::push_result(working, node, &call, tool, outcome.output.clone(), outcome.is_error);
    if !outcome.is_error {
        super::execute::write_tool_result(working, node, tool, &outcome.output)?;
    }
    working.commit().await?;
    // On in the agent node (not a new visit): the turn's other calls, then the model.
    Ok(Flow::Stay)
}

/// The answer at an interrupt node: written into state where `answers` say (whatever it
/// decides), then on to the next node (approve), or the end of the run with `on_reject`.
async fn answer_interrupt(
    working: &mut Working<'_>,
    pending: &Pending,
    interrupt_id: &str,
    node: &str,
    value: &Value,
    verdict: Verdict,
) -> Result<Flow, StepError> {
    let Some(interrupt) = working.interrupt_at(node) else {
        return Err(
            super::NodeFailure::new(format!("interrupt node `{node}` asks no interrupt of the artifact")).into(),
        );
    };
    if !matches!(verdict, Verdict::Cancel) {
        write_answer(working, node, value)?;
    }
    match verdict {
        Verdict::Approve | Verdict::Edit(_) => {
            if let (Some((tool_node, _)), Some(fingerprint)) = (
                super::interrupt::approved_tool_node(working, node, interrupt),
                pending.fingerprint.clone(),
            ) {
                let state_version = pending.state_version;
                working.branch_mut()?.approved = Some(ApprovedStep {
                    interrupt_node: node.to_owned(),
                    tool_node,
                    fingerprint,
                    interrupt_id: interrupt_id.to_owned(),
                    state_version,
                    expires_at: pending.expires_at,
                    shown: crate::thread::Replaced::of(pending),
                });
            }
            Ok(Flow::Go(super::drive::next_after(working, node)?))
        }
        Verdict::Cancel => {
            remember_rejection(working, pending)?;
            Ok(Flow::End(interrupt.on_reject.clone()))
        }
        Verdict::Reject | Verdict::Respond(_) => {
            remember_rejection(working, pending)?;
            // A route out of the interrupt steers on every valid answer (the compiler and the
            // loader proved that no rejecting way reaches a tool it approves); a plain edge
            // means a rejection ends the run.
            if working.graph.routes.iter().any(|route| route.from == node) {
                return Ok(Flow::Go(super::drive::next_after(working, node)?));
            }
            let text = tenx_artifact::rejection_text(&interrupt.on_reject, note(interrupt.feedback.as_deref(), value));
            Ok(Flow::End(text))
        }
    }
}

/// A person answered the call instead of the tool (`respond`): the tool does not run; the
/// answer's `tool_result` (checked against the tool's result schema before anything was
/// recorded) is the call's result, stored as its receipt so a repeat of the key returns it.
async fn respond(
    working: &mut Working<'_>,
    node: &str,
    tool: &str,
    call: &QueuedCall,
    arguments: &Value,
    result: Value,
    is_tool_node: bool,
) -> Result<Flow, StepError> {
    let Some(declared) = working.artifact().tools.get(tool) else {
        return Err(super::NodeFailure::new(format!("tool `{tool}` is not in the artifact")).into());
    };
    let key = super::execute::idempotency_key(working, declared, node, &call.id, arguments);
    working.receipts.push(crate::ports::Receipt {
        thread_id: working.record.thread_id.clone(),
        key: key.clone(),
        tool: tool.to_owned(),
        state: crate::ports::ReceiptState::Done {
            result: result.clone(),
            is_error: false,
        },
    });
    working.record(
        "tool_call",
        json!({"tool": tool, "call_id": call.id, "node": node, "idempotency_key": key, "outcome": "responded"}),
    );
    if is_tool_node {
        let mut call_message = crate::wire::Message::text(
            working.message_id(),
            crate::wire::Role::Assistant,
            "",
            working.now_seconds(),
        );
        call_message.tools_calls = Some(vec![crate::wire::ToolCall {
            id: call.id.clone(),
            kind: "function".to_owned(),
            function: crate::wire::FunctionCall {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            },
        }]);
        call_message.metadata.insert("node".to_owned(), json!(node));
        call_message.metadata.insert("tool_node".to_owned(), json!(true));
        working.push_message(call_message);
    }
    super::calls::push_result(working, node, call, tool, result.clone(), false);
    super::execute::write_tool_result(working, node, tool, &result)?;
    working.commit().await?;
    if is_tool_node {
        return Ok(Flow::Go(super::drive::next_after(working, node)?));
    }
    Ok(Flow::Stay)
}

/// Writes a valid interrupt answer where the graph's `answers` say.
fn write_answer(working: &mut Working<'_>, node: &str, value: &Value) -> Result<(), super::NodeFailure> {
    let mut state = working.record.state.clone();
    let mut wrote = false;
    for write in &working.graph.writes {
        if let WriteSource::Interrupt { node: source, field } = &write.from
            && source == node
        {
            let written = match field {
                None => Some(value.clone()),
                Some(field) => value.get(field).cloned(),
            };
            if let Some(written) = written {
                super::glue::write_path(&mut state, &write.to, written)?;
                wrote = true;
            }
        }
    }
    if wrote {
        super::glue::check_schema(&working.graph.state_schema, &Value::Object(state.clone()))
            .map_err(|error| super::NodeFailure::new(format!("the answer does not fit the graph's state: {error}")))?;
        working.record.state = state;
    }
    Ok(())
}

/// Remembers that this action was refused in this run, so it is not asked again.
fn remember_rejection(working: &mut Working<'_>, pending: &Pending) -> Result<(), RunError> {
    if let Some(key) = pending.rejection_key.clone() {
        working.branch_mut()?.rejected.insert(key);
    }
    Ok(())
}

/// When the open question has expired: records the `expired` outcome (the action does not run;
/// the run ends, with `on_reject` as the call's result or the run's final message) and refuses
/// with `INTERRUPT_EXPIRED`.
pub(crate) async fn refuse_if_expired(working: &mut Working<'_>) -> Result<(), RunError> {
    let Some(pending) = working.record.pending.clone() else {
        return Ok(());
    };
    let Some(expires_at) = pending.expires_at else {
        return Ok(());
    };
    if working.now() < expires_at {
        return Ok(());
    }
    let id = pending
        .interrupt
        .as_ref()
        .map(|interrupt| interrupt.id.clone())
        .unwrap_or_default();
    expire(working, &pending).await?;
    Err(RunError::new(
        ErrorCode::InterruptExpired,
        format!("interrupt '{id}' expired; a timeout is never consent"),
    ))
}

/// Records that a question expired and ends the run.
pub(crate) async fn expire(working: &mut Working<'_>, pending: &Pending) -> Result<(), RunError> {
    let mut fields = question_fields(working, pending);
    fields.insert("answered_by".to_owned(), Value::Null);
    fields.insert("decision".to_owned(), Value::Null);
    fields.insert("outcome".to_owned(), json!("expired"));
    working.record("approval", Value::Object(fields));
    let text = match &pending.kind {
        PendingKind::ToolApproval {
            node,
            tool,
            call_id,
            arguments,
            ..
        } => {
            let on_reject = working
                .artifact()
                .tools
                .get(tool)
                .and_then(|declared| declared.approval.as_ref())
                .map(|approval| approval.on_reject.clone())
                .unwrap_or_default();
            if working.is_tool_node(node) {
                Some(on_reject)
            } else {
                let call = working.call_of(tool, call_id, arguments);
                super::calls::push_result(working, node, &call, tool, json!(on_reject), false);
                None
            }
        }
        PendingKind::InterruptNode { node } => working.interrupt_at(node).map(|interrupt| interrupt.on_reject.clone()),
        PendingKind::RemoteTool { .. } => None,
    };
    remember_rejection(working, pending)?;
    working
        .record
        .execution
        .internal_data
        .insert("outcome".to_owned(), json!("expired"));
    super::finish::completed(working, text).await
}
