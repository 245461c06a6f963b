//! Agent nodes: call the agent's model with its prompt, what it sees of the conversation (its
//! `input`, see [`super::input_scope`]) and only its allowed tools and handoffs; run the calls
//! it makes (see [`super::calls`]); repeat until it answers without a call. Each model call and each round of calls is one step, and the checkpoint is
//! committed after each. An answer that fails the agent's output guards or `output` schema is
//! dropped and the model asked again (at most `retries` times), never used.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Map, Value, json};
use tenx_artifact::{Agent, Risk};

use crate::ports::{DeltaSink, Event, EventSink, ModelReply, ModelRequest, ToolSpec};
use crate::thread::QueuedCall;
use crate::wire::{ContentBlock, FunctionCall, Message, Role, ToolCall};

use super::calls::{CallsFlow, run_calls};
use super::{Flow, NodeFailure, StepError, Working};

/// Runs an agent node until its model answers (then its way out), it hands off, or a call pauses.
pub(crate) async fn agent_node(working: &mut Working<'_>, node: &str, agent_name: &str) -> Result<Flow, StepError> {
    let artifact = working.artifact();
    let Some(agent) = artifact.agents.get(agent_name) else {
        return Err(NodeFailure::new(format!("agent `{agent_name}` is not in the artifact")).into());
    };
    if let Some(call) = working.in_flight_at(node)
        && !super::in_flight::finish_agent_call(working, node, call).await?
    {
        // Stopped again before it was sent again, inside a fork's branch: still in flight.
        return Ok(Flow::Stopped);
    }
    loop {
        let open = unanswered_calls(&working.record.context, node);
        if !open.is_empty() {
            // A round is one step: counted when it starts, not again when it goes on after a
            // pause or a crash (then some of its calls have results already).
            if !round_started(&working.record.context) {
                working.count_step()?;
            }
            match run_calls(working, node, agent, open).await? {
                CallsFlow::Continue => working.commit().await?,
                CallsFlow::Paused => return Ok(Flow::Paused),
                CallsFlow::Stopped => return Ok(Flow::Stopped),
                CallsFlow::Handoff(target) => return Ok(Flow::Go(target)),
                CallsFlow::AgentCall(call) => {
                    working.agent_call = Some(call);
                    return Ok(Flow::Go(super::fork::FORK.to_owned()));
                }
            }
            continue;
        }
        if working.stop_requested() {
            return Ok(Flow::Stopped);
        }
        working.count_step()?;
        let (reply, parsed) = match ask_model(working, node, agent_name, agent).await {
            // A stop reached the model call in flight (the provider gave up with `Cancelled`):
            // the run is stopped, as between steps, not failed.
            Err(_) if working.cancel.is_cancelled() => return Ok(Flow::Stopped),
            asked => asked?,
        };
        let message = assistant_message(working, node, agent_name, agent, &reply, parsed.clone());
        working.push_message(message);
        if reply.tool_calls.is_empty() {
            if let Some(Value::Object(answer)) = parsed {
                write_output(working, &answer)?;
            }
            // No commit here: the loop commits this step together with the move to the next
            // node (or the run's end), before anything else leaves the process.
            let next = super::drive::next_after(working, node)?;
            return Ok(Flow::Go(next));
        }
        // No commit here either: the calls commit this step with the first thing they do (the
        // call in flight, a question, a handoff, or the round's results).
    }
}

/// The calls of this node's last model turn that have no result yet, in call order: after a
/// pause or a crash, the turn continues with them.
pub(crate) fn unanswered_calls(context: &[Arc<Message>], node: &str) -> Vec<QueuedCall> {
    let Some(turn) = context.iter().rposition(|message| message.role != Role::Tool) else {
        return Vec::new();
    };
    let Some(assistant) = context.get(turn) else {
        return Vec::new();
    };
    if assistant.role != Role::Assistant || assistant.metadata.get("node").and_then(Value::as_str) != Some(node) {
        return Vec::new();
    }
    let answered: Vec<&str> = context
        .iter()
        .skip(turn.saturating_add(1))
        .filter_map(|message| message.metadata.get("tool_call_id").and_then(Value::as_str))
        .collect();
    assistant
        .tools_calls
        .iter()
        .flatten()
        .filter(|call| !answered.contains(&call.id.as_str()))
        .map(|call| QueuedCall {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: call.function.arguments.clone(),
        })
        .collect()
}

/// Whether some call of the last model turn has its result: the turn's round of calls began
/// (and was counted) before, and now goes on.
fn round_started(context: &[Arc<Message>]) -> bool {
    context.last().is_some_and(|message| message.role == Role::Tool)
}

/// What each agent's model is shown, built once per engine: the specs depend only on the
/// artifact, and building them parses every tool's parameters.
#[derive(Debug, Default)]
pub(crate) struct ToolSpecCache {
    by_agent: RwLock<HashMap<String, Arc<[ToolSpec]>, foldhash::fast::RandomState>>,
}

/// The tool specs of `agent_name` (see [`tool_specs`]), from the engine's cache.
pub(crate) fn cached_tool_specs(working: &Working<'_>, agent_name: &str, agent: &Agent) -> Arc<[ToolSpec]> {
    let cache = &working.engine.tool_specs;
    if let Some(found) = cache
        .by_agent
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(agent_name)
    {
        return Arc::clone(found);
    }
    let specs: Arc<[ToolSpec]> = tool_specs(working, agent).into();
    let mut by_agent = cache.by_agent.write().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(by_agent.entry(agent_name.to_owned()).or_insert(specs))
}

/// What the model is shown: the allowed tools (never a prohibited one) by their model-facing
/// names, without bound parameters, then the handoffs.
pub(crate) fn tool_specs(working: &Working<'_>, agent: &Agent) -> Vec<ToolSpec> {
    let artifact = working.artifact();
    let mut specs: Vec<ToolSpec> = agent
        .allowed_tools
        .iter()
        .filter_map(|name| artifact.tools.get(name))
        .filter(|tool| tool.risk != Risk::Prohibited)
        .map(|tool| ToolSpec {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: tenx_artifact::bound::model_parameters(
                &super::glue::schema_value(&tool.parameters),
                tool.bindings.keys().map(String::as_str),
            ),
        })
        .collect();
    specs.extend(agent.handoffs.iter().map(|handoff| ToolSpec {
        name: handoff.tool_name.clone(),
        description: format!("Hand the conversation to `{}`.", handoff.target),
        parameters: super::glue::handoff_parameters(handoff),
    }));
    specs.extend(agent.agent_tools.iter().map(|used| ToolSpec {
        name: used.tool_name.clone(),
        description: used.description.clone(),
        parameters: used.parameters.to_value(),
    }));
    specs
}

/// Forwards streamed text to the run's events (when the sink listens).
struct Forward<'a> {
    events: &'a mut dyn EventSink,
    listening: bool,
    node: &'a str,
}

impl DeltaSink for Forward<'_> {
    fn text(&mut self, piece: &str) {
        if self.listening {
            self.events.emit(Event::Delta {
                node: self.node.to_owned(),
                text: piece.to_owned(),
                branch: None,
            });
        }
    }
}

/// Calls the model until an answer passes the agent's guards and `output` schema, at most
/// `1 + retries` times. Returns the reply and, with an `output` schema, the parsed answer.
async fn ask_model(
    working: &mut Working<'_>,
    node: &str,
    agent_name: &str,
    agent: &Agent,
) -> Result<(ModelReply, Option<Value>), StepError> {
    let Some(client) = working.engine.ports.models.get(&agent.model).cloned() else {
        return Err(NodeFailure::new(format!("no model client for `{}`", agent.model)).into());
    };
    let Some(model) = working.artifact().models.get(&agent.model) else {
        return Err(NodeFailure::new(format!("model `{}` is not in the artifact", agent.model)).into());
    };
    let system = super::glue::render(&agent.prompt, working.state());
    let tools = cached_tool_specs(working, agent_name, agent);
    // What the agent sees of the conversation (its `input`, then its own turn) is lent to the
    // model when it is the conversation as it is; only a retry copies it, to add its note.
    let mut conversation: Cow<'_, [Arc<Message>]> = super::input_scope::shown(
        &agent.input,
        &working.record.context,
        node,
        &system,
        working.state(),
        working.now_seconds(),
    );
    let output_schema = agent.output_schema.as_ref().map(tenx_artifact::Schema::to_value);
    let attempts = agent.retries.saturating_add(1);
    let mut last_check = String::new();
    for attempt in 1..=attempts {
        let input_text = working.progress()?.input_text.clone();
        let run_id = working.progress()?.run_id.clone();
        let policy = super::retry::for_model(working.graph, node).cloned();
        let mut transport_attempt = 1_u64;
        let mut reply = loop {
            let request = ModelRequest {
                model_name: &agent.model,
                model,
                thread_id: &working.record.thread_id,
                node,
                agent: agent_name,
                system: system.clone(),
                messages: &conversation,
                tools: Arc::clone(&tools),
                output_schema: output_schema.as_ref(),
                run_input: &input_text,
                cursor: working.record.model_cursors.get(&agent.model),
                run_id: &run_id,
            };
            let mut forward = Forward {
                listening: working.listening(),
                events: &mut *working.events,
                node,
            };
            match client.complete(request, &mut forward, &working.cancel).await {
                Ok(reply) => break reply,
                Err(error) => {
                    let class = super::retry::model_class(error.kind);
                    let Some(policy) = policy
                        .as_ref()
                        .filter(|policy| super::retry::again(policy, transport_attempt, class))
                    else {
                        return Err(
                            NodeFailure::new(format!("model `{}` failed: {}", agent.model, error.message)).into(),
                        );
                    };
                    let seed = format!("{}:{node}:{}", working.record.thread_id, working.branch()?.steps);
                    let retry_after = match error.kind {
                        crate::ports::ModelErrorKind::RateLimited { retry_after_ms } => retry_after_ms,
                        _ => None,
                    };
                    tokio::time::sleep(super::retry::wait(policy, transport_attempt, &seed, retry_after)).await;
                    transport_attempt = transport_attempt.saturating_add(1);
                }
            }
        };
        if let Some(cursor) = reply.cursor.take() {
            working.record.model_cursors.insert(agent.model.clone(), cursor);
        }
        match check_reply(working, agent, &reply) {
            Ok(parsed) => return Ok((reply, parsed)),
            Err(check) => {
                if attempt < attempts {
                    let refused = Message::text(
                        working.message_id(),
                        Role::System,
                        format!("Your last answer was not accepted: it failed the check `{check}`. Answer again."),
                        working.now_seconds(),
                    );
                    conversation.to_mut().push(Arc::new(refused));
                }
                last_check = check;
            }
        }
    }
    Err(NodeFailure::new(format!(
        "the answers of agent `{agent_name}` failed the check `{last_check}` {attempts} times (NODE_001: node `{node}`, check `{last_check}`, attempts {attempts})"
    ))
    .into())
}

/// The agent's output guards and `output` schema over one reply: the name of the first failed
/// check (a validator's name, or `output: <schema error>`), never the text it matched.
fn check_reply(working: &Working<'_>, agent: &Agent, reply: &ModelReply) -> Result<Option<Value>, String> {
    let validators = &working.artifact().validators;
    for call in &reply.tool_calls {
        let text = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(value) => super::glue::canonical_text(&value),
            Err(_) => call.arguments.clone(),
        };
        super::glue::check_output(&agent.output_guards, validators, &text).map_err(|violation| violation.validator)?;
    }
    if !reply.tool_calls.is_empty() {
        return Ok(None);
    }
    let parsed = match &agent.output_schema {
        Some(schema) => {
            let value: Value =
                serde_json::from_str(reply.text.trim()).map_err(|_| "output: the answer is not JSON".to_owned())?;
            super::glue::check_schema(schema, &value).map_err(|error| format!("output: {error}"))?;
            Some(value)
        }
        None => None,
    };
    let text = parsed
        .as_ref()
        .map_or_else(|| reply.text.clone(), super::glue::canonical_text);
    super::glue::check_output(&agent.output_guards, validators, &text).map_err(|violation| violation.validator)?;
    Ok(parsed)
}

/// The assistant message of an accepted reply.
fn assistant_message(
    working: &Working<'_>,
    node: &str,
    agent_name: &str,
    agent: &Agent,
    reply: &ModelReply,
    parsed: Option<Value>,
) -> Message {
    let mut message = Message::text(
        working.message_id(),
        Role::Assistant,
        reply.text.clone(),
        working.now_seconds(),
    );
    if reply.text.is_empty() {
        message.content.clear();
    }
    let mut calls = Vec::new();
    for call in &reply.tool_calls {
        let args = serde_json::from_str::<Value>(&call.arguments).unwrap_or(Value::String(call.arguments.clone()));
        message.content.push(ContentBlock::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            args,
            tool_type: None,
        });
        calls.push(ToolCall {
            id: call.id.clone(),
            kind: "function".to_owned(),
            function: FunctionCall {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            },
        });
    }
    if !calls.is_empty() {
        message.tools_calls = Some(calls);
    }
    let shown: Vec<Value> = cached_tool_specs(working, agent_name, agent)
        .iter()
        .map(|spec| Value::String(spec.name.clone()))
        .collect();
    message.metadata.insert("allowed_tools".to_owned(), Value::Array(shown));
    message.metadata.insert("node".to_owned(), json!(node));
    message.metadata.insert("agent".to_owned(), json!(agent_name));
    message.usages = reply.usage;
    message.parsed_content = parsed;
    message
}

/// Writes each property of a structured answer into the state field of its name, when the
/// graph declares one; a value that does not fit the field fails the node.
fn write_output(working: &mut Working<'_>, answer: &Map<String, Value>) -> Result<(), NodeFailure> {
    let properties = super::glue::schema_value(&working.graph.state_schema)
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut state = working.record.state.clone();
    for (name, value) in answer {
        if properties.contains_key(name) {
            state.insert(name.clone(), value.clone());
        }
    }
    super::glue::check_schema(&working.graph.state_schema, &Value::Object(state.clone()))
        .map_err(|error| NodeFailure::new(format!("the answer does not fit the graph's state: {error}")))?;
    working.record.state = state;
    Ok(())
}
