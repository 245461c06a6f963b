//! Run events as the stream's chunks (reference-api.md §5): `{"event", "message", "state",
//! "data", "thread_id", "run_id", "metadata", "timestamp"}`, one JSON object a line (or an SSE
//! `data:` frame), filtered by the response granularity: `low` passes `message` and `error`,
//! `partial` everything but `updates`, `full` everything and a closing summary. An event a fork's
//! branch emits adds its `branch` path to the update (or to a message's or delta's metadata): a
//! key the reference never sends, absent outside every fork.

use serde_json::{Map, Value, json};
use tenx_engine::ports::Event;

use crate::input::Granularity;

/// What every chunk of one stream shares.
#[derive(Debug, Clone)]
pub struct ChunkContext {
    /// The thread.
    pub thread_id: String,
    /// Whether the request created it.
    pub is_new_thread: bool,
    /// The run, once it is known.
    pub run_id: Option<String>,
    /// The run's step limit.
    pub max_steps: u64,
    /// The step the run is at.
    pub step: u64,
    /// The granularity asked for.
    pub granularity: Granularity,
    /// Seconds since the epoch when the stream began.
    pub timestamp: f64,
    /// Whether internal error text is hidden (production mode).
    pub production: bool,
}

/// `object` with the fork branch an event ran in (`"branch": "summarise[2]"`), when it ran in
/// one: a key the reference never sends, so a graph without forks streams exactly its chunks.
fn on_branch(mut object: Value, branch: Option<String>) -> Value {
    if let (Some(branch), Some(fields)) = (branch, object.as_object_mut()) {
        fields.insert("branch".to_owned(), Value::String(branch));
    }
    object
}

impl ChunkContext {
    /// The chunks one event becomes (none when the granularity filters it out).
    pub fn chunks(&mut self, event: Event) -> Vec<Value> {
        let chunk = match event {
            Event::RunStarted { run_id, node, .. } => {
                self.run_id = Some(run_id);
                self.update(json!({"status": "invoking_graph", "node": "__start__", "next_node": node,
                    "step": 0, "max_steps": self.max_steps}))
            }
            Event::NodeStarted { node, step, branch } => {
                self.step = step;
                self.update(on_branch(
                    json!({"status": "invoking_node", "node": node, "step": step, "max_steps": self.max_steps}),
                    branch,
                ))
            }
            Event::NodeFinished { node, step, branch } => {
                self.step = step;
                self.update(on_branch(
                    json!({"status": "node_invoked", "node": node, "step": step, "max_steps": self.max_steps}),
                    branch,
                ))
            }
            Event::Message { message, branch } => {
                let node = message.metadata.get("node").cloned().unwrap_or(Value::Null);
                self.chunk("message", Some(json!(message)), None, on_branch(json!({"node": node}), branch))
            }
            Event::Delta { node, text, branch } => self.chunk(
                "message",
                Some(json!({"message_id": "", "role": "assistant", "content": [{"type": "text", "text": text, "annotations": []}],
                    "delta": true, "tools_calls": null, "reasoning": null, "timestamp": self.timestamp,
                    "metadata": {"node": node}, "usages": null, "raw": null, "parsed_content": null})),
                None,
                on_branch(json!({"node": node}), branch),
            ),
            Event::ToolCall {
                node,
                tool,
                call_id,
                args,
                branch,
            } => self.update(on_branch(
                json!({"status": "invoking_tool", "tool_name": tool, "args": args, "tool_call_id": call_id,
                    "node": node}),
                branch,
            )),
            Event::ToolResult {
                node,
                tool,
                call_id,
                is_error,
                branch,
            } => self.update(on_branch(
                json!({"status": "tool_result", "tool_name": tool, "tool_call_id": call_id, "node": node,
                    "is_error": is_error}),
                branch,
            )),
            Event::Interrupted { interrupt } => {
                let node = interrupt.node.clone();
                self.update(json!({"status": "interrupted", "node": node, "step": self.step,
                    "max_steps": self.max_steps, "reason": "Graph execution paused by interrupt()",
                    "interrupt": interrupt}))
            }
            Event::Rejected { violation_type, message } => self.chunk(
                "error",
                None,
                Some(json!({"reason": message, "violation_type": violation_type,
                    "code": "AGENTFLOW_VALIDATION_ERROR"})),
                json!({}),
            ),
            Event::Error { code, message } => {
                if self.production && !code.starts_with("AGENTFLOW_") && !code.starts_with("INTERRUPT_") {
                    self.error(&code, crate::routes::production_message(&code))
                } else {
                    self.error(&code, &message)
                }
            }
            Event::RunFinished { .. } => self.update(json!({"status": "graph_invoked", "node": "__end__",
                "step": self.step, "max_steps": self.max_steps, "is_context_trimmed": false,
                "reason": "Graph execution completed successfully"})),
        };
        chunk.filter(|chunk| self.passes(chunk)).into_iter().collect()
    }

    /// An `error` chunk for a failure the run reported after the stream began.
    pub fn error(&self, code: &str, message: &str) -> Option<Value> {
        self.chunk(
            "error",
            None,
            Some(
                json!({"status": "invoked_graph", "step": self.step, "max_steps": self.max_steps,
                "code": code, "reason": format!("[{code}] {message}")}),
            ),
            json!({}),
        )
    }

    /// The closing `updates` chunk of a `full` stream, with the thread's state.
    pub fn summary(
        &self,
        state: Value,
        is_interrupted: bool,
        total_messages: usize,
        tokens: [u64; 3],
    ) -> Option<Value> {
        if self.granularity != Granularity::Full {
            return None;
        }
        let [input, output, reasoning] = tokens;
        let mut chunk = self.chunk(
            "updates",
            None,
            Some(json!({"status": "graph_invoked", "reason": "Graph execution finished",
                "is_interrupted": is_interrupted, "total_messages": total_messages,
                "total_input_tokens": input, "total_output_tokens": output,
                "total_reasoning_tokens": reasoning,
                "total_tokens": input.saturating_add(output).saturating_add(reasoning)})),
            json!({}),
        )?;
        if let Some(object) = chunk.as_object_mut() {
            object.insert("state".to_owned(), state);
        }
        Some(chunk)
    }

    fn update(&self, data: Value) -> Option<Value> {
        self.chunk("updates", None, Some(data), json!({}))
    }

    fn chunk(&self, event: &str, message: Option<Value>, data: Option<Value>, metadata: Value) -> Option<Value> {
        let mut metadata: Map<String, Value> = match metadata {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        metadata.insert("is_new_thread".to_owned(), json!(self.is_new_thread));
        metadata.insert("thread_id".to_owned(), json!(self.thread_id));
        Some(json!({
            "event": event,
            "message": message,
            "state": null,
            "data": data,
            "thread_id": self.thread_id,
            "run_id": self.run_id,
            "metadata": metadata,
            "timestamp": self.timestamp,
        }))
    }

    fn passes(&self, chunk: &Value) -> bool {
        let event = chunk.get("event").and_then(Value::as_str).unwrap_or_default();
        match self.granularity {
            Granularity::Low => matches!(event, "message" | "error"),
            Granularity::Partial => event != "updates",
            Granularity::Full => true,
        }
    }
}
