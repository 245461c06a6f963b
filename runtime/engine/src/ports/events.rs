//! Run events: what a run did, in order, for the server to stream.

use serde::Serialize;
use serde_json::Value;

use crate::wire::{InterruptObject, Message};

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run started at `node`.
    RunStarted {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
        /// The first node.
        node: String,
    },
    /// A node started.
    NodeStarted {
        /// The node.
        node: String,
        /// The step counter.
        step: u64,
        /// The fork branch it ran in: the branch's path from the thread, one part per fork it
        /// is nested in, joined by `/` (`web`, `summarise[2]`, `section_team[1]/section_team`, a
        /// subgraph node's own branch named by the node, an agent tool's call `agent@call_id`);
        /// `None` outside every fork. Set by the fork's lane, so every event of a branch has it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// A node finished.
    NodeFinished {
        /// The node.
        node: String,
        /// The step counter.
        step: u64,
        /// The fork branch it ran in, as [`Event::NodeStarted`]'s.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// A message was added to the conversation (a user, assistant or tool message).
    Message {
        /// The message.
        message: Message,
        /// The fork branch it was added in, as [`Event::NodeStarted`]'s.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// A piece of streamed model text.
    Delta {
        /// The node.
        node: String,
        /// The text.
        text: String,
        /// The fork branch it ran in, as [`Event::NodeStarted`]'s.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// A tool call is about to run.
    ToolCall {
        /// The node.
        node: String,
        /// The declared tool.
        tool: String,
        /// The call id.
        call_id: String,
        /// The normalised arguments.
        args: Value,
        /// The fork branch it ran in, as [`Event::NodeStarted`]'s.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// A tool call returned (or was refused).
    ToolResult {
        /// The node.
        node: String,
        /// The declared tool.
        tool: String,
        /// The call id.
        call_id: String,
        /// Whether it failed.
        is_error: bool,
        /// The fork branch it ran in, as [`Event::NodeStarted`]'s.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// The run paused at a question.
    Interrupted {
        /// The question.
        interrupt: InterruptObject,
    },
    /// A validator refused input (nothing was recorded).
    Rejected {
        /// The validator's violation type.
        violation_type: String,
        /// Its message.
        message: String,
    },
    /// The run failed.
    Error {
        /// The error code.
        code: String,
        /// The message.
        message: String,
    },
    /// The run finished at `END`.
    RunFinished {
        /// The thread.
        thread_id: String,
    },
}

/// Receives a run's events.
pub trait EventSink: Send {
    /// One event, in order.
    fn emit(&mut self, event: Event);

    /// Whether the sink reads events at all. A sink that drops everything says `false`, and the
    /// engine then builds no event (a message's copy, a delta's text) only to drop it. The
    /// events a listening sink receives are the same either way.
    fn listening(&self) -> bool {
        true
    }
}

/// Drops every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullEvents;

impl EventSink for NullEvents {
    fn emit(&mut self, _event: Event) {}

    fn listening(&self) -> bool {
        false
    }
}

impl EventSink for Vec<Event> {
    fn emit(&mut self, event: Event) {
        self.push(event);
    }
}
