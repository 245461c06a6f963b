//! Pausing a run for a person or a client: a tool call that needs approval (the approval
//! package, its fingerprint and the question), and a remote tool call the client must run. The
//! pause is committed with the thread, so the answer may come after a restart.

use serde_json::{Value, json};
use tenx_artifact::{Approval, Risk, Tool};

use crate::ports::Event;
use crate::thread::{Pending, PendingKind, Replaced};
use crate::wire::{ContentBlock, ExecutionStatus, InterruptObject, Message, Role};

use super::{StepError, Working};

/// A tool call to ask about.
pub(crate) struct AskTool<'a> {
    pub(crate) node: &'a str,
    pub(crate) tool_name: &'a str,
    pub(crate) tool: &'a Tool,
    pub(crate) call_id: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) approval: &'a Approval,
    pub(crate) risk: Risk,
    pub(crate) rule: Option<usize>,
}

/// What asking led to.
pub(crate) enum Asked {
    /// The question is open; the run is paused.
    Paused,
    /// The same action was rejected earlier in this run: its `on_reject`, without a new question.
    AlreadyRejected(String),
}

/// Builds the package for a tool call and pauses the run on it, unless the same action was
/// rejected, cancelled or expired earlier in this run.
pub(crate) async fn ask_tool(working: &mut Working<'_>, ask: AskTool<'_>) -> Result<Asked, StepError> {
    let asked_at = working.now();
    let expires_at = ask.approval.expires_ms.map(|ms| asked_at.saturating_add(ms));
    let package = super::glue::tool_package(working, &ask, expires_at, working.stored_version.unwrap_or(0))?;
    if working.branch()?.rejected.contains(&package.rejection_key) {
        return Ok(Asked::AlreadyRejected(ask.approval.on_reject.clone()));
    }
    let scope = match ask.arguments {
        Value::Object(arguments) => arguments.clone(),
        _ => serde_json::Map::new(),
    };
    let interrupt = InterruptObject {
        id: working.engine.ports.ids.interrupt_id(),
        key: format!("tool:{}:0", ask.call_id),
        node: ask.node.to_owned(),
        value: package.value,
        message: super::glue::render(&ask.approval.message, &scope),
        reason: ask.approval.reason.clone(),
        response_schema: ask.approval.response_schema.to_value(),
        tool_call_id: Some(ask.call_id.to_owned()),
    };
    let pending = Pending {
        kind: PendingKind::ToolApproval {
            node: ask.node.to_owned(),
            tool: ask.tool_name.to_owned(),
            call_id: ask.call_id.to_owned(),
            arguments: ask.arguments.clone(),
            queued: Vec::new(),
        },
        interrupt: Some(interrupt),
        expires_at,
        fingerprint: Some(package.fingerprint),
        asked_at,
        state_version: package.state_version,
        rejection_key: Some(package.rejection_key),
        replaces: None,
        escalation: None,
        branch: None,
        within: Vec::new(),
    };
    pause(working, pending).await?;
    Ok(Asked::Paused)
}

/// Rechecks, when an answer approves (or edits) a tool call, that the stored question still
/// asks about the call that would run: the package recomputed from the stored arguments, the
/// state and the artifact, at the state version and expiry it was asked with, must have the
/// fingerprint the person saw. `None` when it does. Otherwise the store changed under the
/// question (a tampered store): the answer is not used for this call, the recheck is recorded
/// as `stale`, and the call is asked again as it would run now.
pub(crate) async fn recheck_tool(
    working: &mut Working<'_>,
    pending: &Pending,
    node: &str,
    tool_name: &str,
    call_id: &str,
    arguments: &Value,
) -> Result<Option<Asked>, StepError> {
    let artifact = working.artifact();
    let tool = artifact.tools.get(tool_name);
    let Some((tool, approval)) = tool.and_then(|tool| tool.approval.as_ref().map(|approval| (tool, approval))) else {
        return Err(super::NodeFailure::new(format!("tool `{tool_name}` has no approval to answer")).into());
    };
    let (risk, rule) = super::glue::call_risk(tool, arguments);
    let ask = AskTool {
        node,
        tool_name,
        tool,
        call_id,
        arguments,
        approval,
        risk,
        rule,
    };
    let package = super::glue::tool_package(working, &ask, pending.expires_at, pending.state_version)?;
    if pending.fingerprint.as_deref() == Some(package.fingerprint.as_str()) {
        return Ok(None);
    }
    let interrupt_id = pending.interrupt.as_ref().map(|interrupt| interrupt.id.clone());
    working.record("approval", json!({"interrupt_id": interrupt_id, "node": node, "tool": tool_name, "call_id": call_id, "outcome": "stale", "fingerprint": pending.fingerprint}));
    working.replacing = Replaced::of(pending);
    ask_tool(working, ask).await.map(Some)
}

/// Pauses the run on a question: the thread shows it, and the caller gets it as an event.
pub(crate) async fn pause(working: &mut Working<'_>, mut pending: Pending) -> Result<(), StepError> {
    if pending.interrupt.is_some() && pending.replaces.is_none() {
        pending.replaces = working.replacing.take();
    }
    let interrupt = pending.interrupt.clone();
    let node = working.branch()?.node.clone();
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::InterruptedBefore;
    execution.interrupted_node = Some(node);
    execution.interrupt_reason = Some("interrupt".to_owned());
    execution.interrupt_data = interrupt.as_ref().map(|interrupt| json!({"interrupt": interrupt}));
    working.record.pending = Some(pending);
    working.commit().await?;
    if let Some(interrupt) = interrupt {
        working.emit(Event::Interrupted { interrupt });
    }
    Ok(())
}

/// The `remote_tool_call` placeholder the client gets for a remote call (never stored in the
/// conversation): the call's id, the model-facing tool name and the arguments.
pub(crate) fn remote_placeholder(
    working: &Working<'_>,
    node: &str,
    name: &str,
    call_id: &str,
    arguments: &Value,
) -> Message {
    let mut placeholder = Message::text(working.message_id(), Role::Tool, "", working.now_seconds());
    placeholder.content = vec![ContentBlock::RemoteToolCall {
        id: call_id.to_owned(),
        name: name.to_owned(),
        args: arguments.clone(),
        tool_type: "remote".to_owned(),
    }];
    placeholder.metadata.insert("is_remote".to_owned(), json!(true));
    placeholder.metadata.insert("tool_call_id".to_owned(), json!(call_id));
    placeholder.metadata.insert("node".to_owned(), json!(node));
    placeholder
}

/// Pauses for a remote tool: the client gets a `remote_tool_call` placeholder (not stored in
/// the conversation) and must post the result for exactly this call.
pub(crate) async fn remote_call(
    working: &mut Working<'_>,
    node: &str,
    declared: &str,
    tool: &Tool,
    call_id: &str,
    arguments: &Value,
) -> Result<(), StepError> {
    let placeholder = remote_placeholder(working, node, &tool.name, call_id, arguments);
    working.push_placeholder(placeholder);
    let pending = Pending {
        kind: PendingKind::RemoteTool {
            node: node.to_owned(),
            tool: declared.to_owned(),
            call_id: call_id.to_owned(),
            queued: Vec::new(),
            arguments: arguments.clone(),
        },
        interrupt: None,
        expires_at: None,
        fingerprint: None,
        asked_at: working.now(),
        state_version: working.stored_version.unwrap_or(0),
        rejection_key: None,
        replaces: None,
        escalation: None,
        branch: None,
        within: Vec::new(),
    };
    let node_name = working.branch()?.node.clone();
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::InterruptedAfter;
    execution.interrupted_node = Some(node_name);
    execution.interrupt_reason = Some("remote_tool_call".to_owned());
    execution.interrupt_data = None;
    working.record.pending = Some(pending);
    working.record(
        "tool_call",
        json!({"tool": declared, "call_id": call_id, "node": node, "outcome": "sent_to_client"}),
    );
    working.commit().await?;
    Ok(())
}
