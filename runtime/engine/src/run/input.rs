//! Client input: what a client may send (D8, D9 and the contract's "Client input"), checked
//! before the validators and before anything is written. Only `user` messages start runs; a
//! `tool` message may carry nothing but results for remote calls waiting on this thread.

use std::collections::BTreeSet;

use serde_json::json;

use crate::request::RunRequest;
use crate::thread::{PendingKind, ThreadRecord};
use crate::wire::{ContentBlock, Message, Role, ToolResultStatus};
use crate::{ErrorCode, RunError};

use super::Working;

/// The checks that need no thread: roles, tool calls in client messages, an empty request.
pub(crate) fn check_shape(request: &RunRequest) -> Result<(), RunError> {
    if request.messages.is_empty() && request.resume.is_none() {
        return Err(RunError::new(
            ErrorCode::InvalidRequest,
            "messages must contain at least one message",
        ));
    }
    for (index, message) in request.messages.iter().enumerate() {
        check_message("messages", index, message)?;
    }
    let tool_messages = request
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .count();
    if tool_messages > 0 && tool_messages != request.messages.len() {
        return Err(RunError::new(
            ErrorCode::MessageRoleForbidden,
            "a request carries either user messages or tool results for waiting remote calls, not both",
        ));
    }
    if tool_messages > 0 && request.resume.is_some() {
        return Err(RunError::new(
            ErrorCode::MessageRoleForbidden,
            "tool results cannot come with a resume",
        ));
    }
    Ok(())
}

/// The checks of one client message (`label[index]` names it in the refusal): no tool calls,
/// role `user` (or `tool` carrying nothing but `tool_result` blocks), no tool result in a user
/// message.
pub(crate) fn check_message(label: &str, index: usize, message: &Message) -> Result<(), RunError> {
    if message.tools_calls.as_ref().is_some_and(|calls| !calls.is_empty())
        || message.content.iter().any(ContentBlock::is_tool_call)
    {
        return Err(RunError::new(
            ErrorCode::ToolCallInClientMessage,
            format!("{label}[{index}] carries a tool call; only the model may request tools"),
        ));
    }
    match message.role {
        Role::User => {
            if message
                .content
                .iter()
                .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
            {
                return Err(RunError::new(
                    ErrorCode::MessageRoleForbidden,
                    format!("{label}[{index}] is a user message with a tool result; send results in a tool message"),
                ));
            }
        }
        Role::Tool => {
            if message.content.is_empty()
                || !message
                    .content
                    .iter()
                    .all(|block| matches!(block, ContentBlock::ToolResult { .. }))
            {
                return Err(RunError::new(
                    ErrorCode::MessageRoleForbidden,
                    format!("{label}[{index}] is a tool message with content other than tool_result blocks"),
                ));
            }
        }
        Role::Assistant | Role::System => {
            let role = if message.role == Role::Assistant {
                "assistant"
            } else {
                "system"
            };
            return Err(RunError::new(
                ErrorCode::MessageRoleForbidden,
                format!(
                    "{label}[{index}] has role '{role}'; clients may send only 'user' messages (and 'tool' results for waiting remote calls)"
                ),
            ));
        }
    }
    Ok(())
}

/// Whether the messages are tool results (the shape check already made them all-or-nothing).
pub(crate) fn is_tool_results(messages: &[Message]) -> bool {
    messages.first().is_some_and(|message| message.role == Role::Tool)
}

/// Tool results sent when no remote call waits (none, or only a server tool's question): a
/// second answer to a remote call the thread already took is a duplicate, anything else unexpected.
pub(crate) fn unexpected_results(record: &ThreadRecord, messages: &[Message]) -> RunError {
    let call = results(messages)
        .into_iter()
        .next()
        .map(|(id, _)| id)
        .unwrap_or_default();
    refused_result(record, &call)
}

/// The refusal of a result for `call_id`, which is not the waiting call.
fn refused_result(record: &ThreadRecord, call_id: &str) -> RunError {
    if answered_remote(record, call_id) {
        return duplicate_result();
    }
    RunError::new(
        ErrorCode::ToolResultUnexpected,
        format!("No remote tool call '{call_id}' is waiting for a result"),
    )
}

fn duplicate_result() -> RunError {
    RunError::new(
        ErrorCode::ToolResultDuplicate,
        "Each tool call can be answered only once",
    )
}

/// Whether the thread holds the accepted result of remote call `call_id`: in its conversation, or
/// in the messages of a branch of the fork in progress, at any depth.
fn answered_remote(record: &ThreadRecord, call_id: &str) -> bool {
    let mut messages: Vec<&Message> = record.context.iter().map(|message| &**message).collect();
    let mut forks: Vec<&crate::thread::ForkProgress> = record.run.iter().filter_map(|run| run.fork.as_ref()).collect();
    while let Some(fork) = forks.pop() {
        for branch in &fork.branches {
            messages.extend(branch.messages.iter().map(|message| &**message));
            forks.extend(branch.inner.as_deref().map(|inner| &inner.fork));
        }
    }
    messages.into_iter().any(|message| {
        message.metadata.get("is_remote") == Some(&json!(true))
            && message
                .content
                .iter()
                .any(|block| matches!(block, ContentBlock::ToolResult { call_id: id, .. } if id == call_id))
    })
}

/// The `(call_id, output)` pairs of tool-result blocks, in order.
fn results(messages: &[Message]) -> Vec<(String, serde_json::Value)> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { call_id, output, .. } => Some((call_id.clone(), output.clone())),
            _ => None,
        })
        .collect()
}

/// The client's result for the waiting remote call: checked (the right call, once, valid
/// against the tool's `result` schema), appended, and the run goes on where it paused.
pub(crate) async fn remote_results(working: &mut Working<'_>, messages: Vec<Message>) -> Result<(), RunError> {
    // A call a parallel branch made: the branch takes the result, under the same checks (a
    // result for another call is refused here, where every branch's answered calls are seen).
    if let Some(pending) = working.record.pending.clone()
        && let Some(path) = pending.branch
    {
        if let PendingKind::RemoteTool { call_id, .. } = &pending.kind
            && let Some((other, _)) = results(&messages).into_iter().find(|(id, _)| id != call_id)
        {
            return Err(refused_result(&working.record, &other));
        }
        return super::fork::remote_results(working, path, messages).await;
    }
    let Some(PendingKind::RemoteTool {
        node, tool, call_id, ..
    }) = working.record.pending.as_ref().map(|pending| pending.kind.clone())
    else {
        return Err(unexpected_results(&working.record, &messages));
    };
    let answers = results(&messages);
    let mut seen = BTreeSet::new();
    for (id, _) in &answers {
        if !seen.insert(id.clone()) {
            return Err(duplicate_result());
        }
        if *id != call_id {
            return Err(refused_result(&working.record, id));
        }
    }
    let Some((_, output)) = answers.into_iter().next() else {
        return Err(unexpected_results(&working.record, &messages));
    };
    let result_schema = working
        .artifact()
        .tools
        .get(&tool)
        .and_then(|declared| declared.result.as_ref());
    if let Some(schema) = result_schema
        && let Err(error) = super::glue::check_schema(schema, &output)
    {
        return Err(RunError::new(
            ErrorCode::ToolResultUnexpected,
            format!("the result for remote tool call '{call_id}' does not match the result type of `{tool}`: {error}"),
        ));
    }
    let mut message = Message::text(working.message_id(), Role::Tool, "", working.now_seconds());
    message.content = vec![ContentBlock::ToolResult {
        call_id: call_id.clone(),
        output: output.clone(),
        is_error: false,
        status: Some(ToolResultStatus::Completed),
    }];
    message.metadata.insert("tool_call_id".to_owned(), json!(call_id));
    message.metadata.insert("function_name".to_owned(), json!(tool));
    message.metadata.insert("node".to_owned(), json!(node));
    message.metadata.insert("is_remote".to_owned(), json!(true));
    working.record.pending = None;
    working.record.execution.status = crate::wire::ExecutionStatus::Running;
    working.record.execution.interrupted_node = None;
    working.record.execution.interrupt_reason = None;
    working.push_message(message);
    super::execute::write_tool_result(working, &node, &tool, &output).map_err(|failure| {
        RunError::new(
            ErrorCode::NodeFailed,
            format!("Error in node '{node}': {}", failure.message),
        )
    })?;
    working.record(
        "tool_call",
        json!({"tool": tool, "call_id": call_id, "node": node, "outcome": "remote_result"}),
    );
    working.commit().await?;
    super::drive::drive(working).await
}
