//! What an agent's model is shown of the conversation: its `input` (all of it, none of it, its
//! last `N` messages, or one user message rendered from the state), then always the agent's own
//! turn. The conversation itself is never changed here; what is built is lent to one model
//! request (and its retries' notes are added to it).
//!
//! The agent's own turn is what the current visit of its node has added: the trailing messages
//! of the conversation whose metadata `node` is this node (after the last message that is not),
//! in order: its tool calls, their results, its answers refused by a guard. Without them the
//! model could never see its own tool results.
//!
//! Every provider needs a first user message (the Anthropic messages API refuses any other
//! first message; chat-completions servers with strict chat templates do too), so when what
//! `none` or `last(N)` shows would be empty or would start with anything else, the engine puts
//! first one user message holding the agent's rendered prompt. (The system prompt stays the
//! same.) A `last(N)` window never starts with a tool result whose call was cut off: it is
//! extended back to the assistant message holding the call. A template shows one user message
//! first by construction, and `conversation` is shown as it is.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};
use tenx_artifact::AgentInput;

use crate::wire::{ContentBlock, Message, Role};

/// The id of the user message this module puts first. It is shown to the model only, never
/// stored, so it takes no id from the thread's id source.
pub(crate) const SHOWN_MESSAGE_ID: &str = "input";

/// What the agent at `node` is shown of `context`, by its `input`: `prompt` is its rendered
/// system prompt (the lead message of `none` and `last`), `state` fills a template.
pub(crate) fn shown<'c>(
    input: &AgentInput,
    context: &'c [Arc<Message>],
    node: &str,
    prompt: &str,
    state: &Map<String, Value>,
    now: f64,
) -> Cow<'c, [Arc<Message>]> {
    let turn_start = own_turn_start(context, node);
    let (before, turn) = context.split_at_checked(turn_start).unwrap_or((context, &[]));
    match input {
        AgentInput::Conversation => Cow::Borrowed(context),
        AgentInput::None => led(turn, prompt, now),
        AgentInput::Last { count } => {
            let count = usize::try_from(*count).unwrap_or(usize::MAX);
            let start = window_start(before, before.len().saturating_sub(count));
            led(context.get(start..).unwrap_or_default(), prompt, now)
        }
        AgentInput::Template { template } => {
            let text = super::glue::render(template, state);
            let mut messages = Vec::with_capacity(turn.len().saturating_add(1));
            messages.push(Arc::new(Message::text(SHOWN_MESSAGE_ID, Role::User, text, now)));
            messages.extend_from_slice(turn);
            Cow::Owned(messages)
        }
    }
}

/// Where the agent's own turn starts: after the last message that the node at `node` did not
/// add (`context.len()` when it added none at the end).
fn own_turn_start(context: &[Arc<Message>], node: &str) -> usize {
    context
        .iter()
        .rposition(|message| message.metadata.get("node").and_then(Value::as_str) != Some(node))
        .map_or(0, |last_other| last_other.saturating_add(1))
}

/// `shown` as it is when it starts with a user message, else with one user message holding
/// `prompt` put first.
fn led<'c>(shown: &'c [Arc<Message>], prompt: &str, now: f64) -> Cow<'c, [Arc<Message>]> {
    if shown.first().is_some_and(|message| message.role == Role::User) {
        return Cow::Borrowed(shown);
    }
    let mut messages = Vec::with_capacity(shown.len().saturating_add(1));
    messages.push(Arc::new(Message::text(SHOWN_MESSAGE_ID, Role::User, prompt, now)));
    messages.extend_from_slice(shown);
    Cow::Owned(messages)
}

/// The start of a window of `before` that begins at `start`, moved back so that every tool
/// result in it has the assistant message holding its call in it too. A result whose call is
/// in no earlier message at all is left out when the window would start with it.
fn window_start(before: &[Arc<Message>], mut start: usize) -> usize {
    let mut at = start;
    while let Some(message) = before.get(at) {
        if message.role == Role::Tool {
            let held_before = result_ids(message).into_iter().filter_map(|id| {
                before
                    .get(..start)
                    .and_then(|earlier| earlier.iter().rposition(|m| holds_call(m, id)))
            });
            if let Some(call_at) = held_before.min() {
                // The messages between the call and the old start are now shown too: look at
                // them again, since their own results may reach further back.
                start = call_at;
                at = call_at;
                continue;
            }
        }
        at = at.saturating_add(1);
    }
    // A result still first has its call nowhere (a conversation edited by hand): leave it out.
    while before.get(start).is_some_and(|message| message.role == Role::Tool) {
        start = start.saturating_add(1);
    }
    start
}

/// The call ids a tool message answers.
fn result_ids(message: &Message) -> Vec<&str> {
    let mut ids: Vec<&str> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult { call_id, .. } => Some(call_id.as_str()),
            ContentBlock::RemoteToolCall { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    if let Some(id) = message.metadata.get("tool_call_id").and_then(Value::as_str)
        && !ids.contains(&id)
    {
        ids.push(id);
    }
    ids
}

/// Whether `message` is an assistant message that made the call `id`.
fn holds_call(message: &Message, id: &str) -> bool {
    message.role == Role::Assistant
        && (message.tools_calls.iter().flatten().any(|call| call.id == id)
            || message
                .content
                .iter()
                .any(|block| matches!(block, ContentBlock::ToolCall { id: call, .. } if call == id)))
}

#[cfg(test)]
mod tests;
