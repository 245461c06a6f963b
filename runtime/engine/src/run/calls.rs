//! One round of a model's tool calls, in call order. Each call is checked before anything runs:
//! a name outside the agent's allowed tools and declared handoffs is `Tool 'x' not found.`
//! (D10, D11); a bound argument the model set is refused; the arguments must match the
//! parameters; the call's risk (its risk rules over the arguments) decides whether a person is
//! asked first (the run pauses, one question at a time); a remote tool pauses for the client.
//! A declared handoff ends the round: the calls after it are answered "not run".

use serde_json::{Map, Value, json};
use tenx_artifact::{Agent, BoundSource, CallerAttribute, EdgeKind, NodeKind, Risk, Run, Tool};

use crate::thread::QueuedCall;
use crate::wire::{ContentBlock, Message, Role, ToolResultStatus};

use super::{StepError, Working};

/// Where a round of calls leaves the agent node.
pub(crate) enum CallsFlow {
    /// Every call has its result: call the model again.
    Continue,
    /// A call waits for a person or the client.
    Paused,
    /// A handoff: go to this node.
    Handoff(String),
    /// A call of an agent used as a tool: the agent runs on its own (see `fork::start`); the
    /// turn's later calls wait for its answer.
    AgentCall(super::fork::AgentCall),
    /// A stop cut a call short inside a fork's branch after it was sent: it stays in flight
    /// with no result (the round's later calls are answered "not run"), and the branch stops.
    Stopped,
}

/// Runs the calls of one model turn that have no result yet.
pub(crate) async fn run_calls(
    working: &mut Working<'_>,
    node: &str,
    agent: &Agent,
    calls: Vec<QueuedCall>,
) -> Result<CallsFlow, StepError> {
    let mut calls = calls.into_iter();
    while let Some(call) = calls.next() {
        if working.cancelled() {
            // A stop (a cancel) reached the round: the calls not sent yet are not sent, asked
            // or handed off; each is answered, so the conversation stays whole, and the run
            // stops before its next step.
            not_run(working, node, std::iter::once(call).chain(calls));
            return Ok(CallsFlow::Continue);
        }
        if let Some(target) = handoff_target(working, node, agent, &call.name) {
            let target = target?;
            if let Err(reason) = take_payload(working, agent, &call) {
                refuse(
                    working,
                    node,
                    &call,
                    &call.name,
                    format!("Tool '{}' failed: {reason}", call.name),
                    "invalid_arguments",
                );
                continue;
            }
            push_result(
                working,
                node,
                &call,
                &call.name,
                json!(format!("Transferred to {target}.")),
                false,
            );
            for rest in calls {
                push_result(
                    working,
                    node,
                    &rest,
                    &rest.name,
                    json!("Not run: the conversation was handed off."),
                    true,
                );
            }
            working.commit().await?;
            return Ok(CallsFlow::Handoff(target));
        }
        if let Some(used) = agent.agent_tools.iter().find(|used| used.tool_name == call.name) {
            match agent_call_input(used, &call) {
                Ok(input) => {
                    return Ok(CallsFlow::AgentCall(super::fork::AgentCall {
                        call_id: call.id.clone(),
                        tool_name: used.tool_name.clone(),
                        arguments: call.arguments.clone(),
                        agent: used.agent.clone(),
                        input,
                    }));
                }
                Err(reason) => {
                    refuse(
                        working,
                        node,
                        &call,
                        &call.name,
                        format!("Tool '{}' failed: {reason}", call.name),
                        "invalid_arguments",
                    );
                    continue;
                }
            }
        }
        match one_call(working, node, agent, &call).await? {
            CallFlow::Answered => {}
            CallFlow::Paused => return Ok(CallsFlow::Paused),
            CallFlow::InFlight => {
                not_run(working, node, calls);
                return Ok(CallsFlow::Stopped);
            }
        }
    }
    Ok(CallsFlow::Continue)
}

/// Answers the calls a stop reached before they were sent: none is sent, asked or handed off.
fn not_run(working: &mut Working<'_>, node: &str, calls: impl Iterator<Item = QueuedCall>) {
    for rest in calls {
        working.record(
            "tool_call",
            json!({"tool": rest.name, "call_id": rest.id, "node": node, "outcome": "not_run", "reason": "the run was stopped before the call was sent"}),
        );
        push_result(
            working,
            node,
            &rest,
            &rest.name,
            json!("Not run: the run was stopped."),
            true,
        );
    }
}

enum CallFlow {
    Answered,
    Paused,
    /// A stop cut the call short inside a fork's branch; it stays in flight, unanswered.
    InFlight,
}

/// The call's arguments as a JSON object (none written is `{}`).
fn object_arguments(call: &QueuedCall) -> Result<Map<String, Value>, String> {
    let text = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(arguments)) => Ok(arguments),
        _ => Err("the arguments are not a JSON object".to_owned()),
    }
}

/// The message an agent called as a tool starts from: the value of the call's only string
/// argument when its parameters have exactly one property and it is a string, else the arguments
/// as canonical JSON. Arguments that do not match the parameters are refused.
fn agent_call_input(used: &tenx_artifact::AgentTool, call: &QueuedCall) -> Result<String, String> {
    let arguments = object_arguments(call)?;
    let arguments = super::glue::with_defaults(&used.parameters, Value::Object(arguments));
    super::glue::check_schema(&used.parameters, &arguments).map_err(|error| format!("invalid arguments: {error}"))?;
    let declared = super::glue::schema_value(&used.parameters);
    let properties = declared.get("properties").and_then(Value::as_object);
    if let (Some(properties), Value::Object(given)) = (properties, &arguments)
        && properties.len() == 1
        && let Some((name, _)) = properties.iter().next()
        && let Some(Value::String(only)) = given.get(name)
    {
        return Ok(only.clone());
    }
    Ok(super::glue::canonical_text(&arguments))
}

/// A handoff's payload: validated against the handoff's `payload` schema (defaults filled in),
/// then each property named like a state field is written, checked against the state schema,
/// in one step. An invalid payload is a tool error the model sees; the handoff is not taken.
fn take_payload(working: &mut Working<'_>, agent: &Agent, call: &QueuedCall) -> Result<(), String> {
    let Some(handoff) = agent.handoffs.iter().find(|handoff| handoff.tool_name == call.name) else {
        return Ok(());
    };
    let arguments = object_arguments(call)?;
    let payload = super::glue::with_defaults(&handoff.payload, Value::Object(arguments));
    super::glue::check_schema(&handoff.payload, &payload).map_err(|error| format!("invalid arguments: {error}"))?;
    let declared = super::glue::schema_value(&working.graph.state_schema);
    let fields = declared.get("properties").and_then(Value::as_object);
    let mut state = working.record.state.clone();
    if let (Value::Object(payload), Some(fields)) = (payload, fields) {
        for (name, value) in payload {
            if fields.contains_key(&name) {
                state.insert(name, value);
            }
        }
    }
    super::glue::check_schema(&working.graph.state_schema, &Value::Object(state.clone()))
        .map_err(|error| format!("the payload does not fit the graph's state: {error}"))?;
    working.record.state = state;
    Ok(())
}

/// The node a declared handoff of this agent leads to, if `name` is one (D10): `None` when the
/// name is no declared handoff (then it is an ordinary, unknown call).
fn handoff_target(
    working: &Working<'_>,
    node: &str,
    agent: &Agent,
    name: &str,
) -> Option<Result<String, crate::RunError>> {
    let handoff = agent.handoffs.iter().find(|handoff| handoff.tool_name == name)?;
    let graph = working.graph;
    let target = graph
        .edges
        .iter()
        .filter(|edge| edge.from == node && edge.kind == EdgeKind::Handoff)
        .map(|edge| edge.to.as_str())
        .find(|to| {
            graph
                .nodes
                .get(*to)
                .is_some_and(|declared| declared.kind == NodeKind::Agent && declared.reference == handoff.target)
        });
    Some(match target {
        Some(target) => Ok(target.to_owned()),
        None => Err(super::drive::unknown_target(&working.graph_name, node, &handoff.target)),
    })
}

/// Checks and runs (or pauses) one call.
async fn one_call(
    working: &mut Working<'_>,
    node: &str,
    agent: &Agent,
    call: &QueuedCall,
) -> Result<CallFlow, StepError> {
    let artifact = working.artifact();
    let declared = agent.allowed_tools.iter().find(|name| {
        artifact
            .tools
            .get(*name)
            .is_some_and(|tool| tool.name == call.name && tool.risk != Risk::Prohibited)
    });
    let (Some(declared), Some(tool)) = (declared, declared.and_then(|name| artifact.tools.get(name))) else {
        refuse(
            working,
            node,
            call,
            &call.name,
            format!("Tool '{}' not found.", call.name),
            "not_found",
        );
        return Ok(CallFlow::Answered);
    };
    let declared = declared.clone();
    let arguments = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(arguments)) => arguments,
        _ => {
            refuse(
                working,
                node,
                call,
                &declared,
                format!("Tool '{}' failed: the arguments are not a JSON object", call.name),
                "invalid_arguments",
            );
            return Ok(CallFlow::Answered);
        }
    };
    let arguments = match prepare_arguments(working, tool, arguments, true) {
        Ok(arguments) => arguments,
        Err(reason) => {
            refuse(
                working,
                node,
                call,
                &declared,
                format!("Tool '{}' failed: {reason}", call.name),
                "refused",
            );
            return Ok(CallFlow::Answered);
        }
    };
    let (risk, rule) = super::glue::call_risk(tool, &arguments);
    let needs_approval = match risk {
        Risk::Low => false,
        Risk::Medium | Risk::High => true,
        Risk::Prohibited => {
            refuse(
                working,
                node,
                call,
                &declared,
                format!("Tool '{}' not found.", call.name),
                "not_found",
            );
            return Ok(CallFlow::Answered);
        }
    };
    if needs_approval || !tool.approved_by.is_empty() {
        let Some(approval) = tool.approval.as_ref() else {
            // Only an interrupt node may approve this tool, and an agent cannot be one: the
            // compiler refuses such a program, so this is a tampered artifact. Fail closed.
            refuse(
                working,
                node,
                call,
                &declared,
                format!(
                    "Tool '{}' failed: it needs an approval this call cannot have",
                    call.name
                ),
                "refused",
            );
            return Ok(CallFlow::Answered);
        };
        let asked = super::pause::AskTool {
            node,
            tool_name: &declared,
            tool,
            call_id: &call.id,
            arguments: &arguments,
            approval,
            risk,
            rule,
        };
        return match super::pause::ask_tool(working, asked).await? {
            super::pause::Asked::Paused => Ok(CallFlow::Paused),
            super::pause::Asked::AlreadyRejected(text) => {
                push_result(working, node, call, &declared, json!(text), false);
                working.record("approval", json!({"tool": declared, "call_id": call.id, "node": node, "outcome": "rejected_before", "decision": "reject"}));
                Ok(CallFlow::Answered)
            }
        };
    }
    if matches!(tool.run, Run::Remote) {
        super::pause::remote_call(working, node, &declared, tool, &call.id, &arguments).await?;
        return Ok(CallFlow::Paused);
    }
    let outcome = super::execute::run_tool(working, node, &declared, &call.id, &arguments, false).await?;
    if outcome.in_flight {
        return Ok(CallFlow::InFlight);
    }
    push_result(working, node, call, &declared, outcome.output.clone(), outcome.is_error);
    if !outcome.is_error {
        super::execute::write_tool_result(working, node, &declared, &outcome.output)?;
    }
    Ok(CallFlow::Answered)
}

/// Fills bound arguments, then validates and normalises the arguments against the tool's
/// parameters. `from_model`: a model-set bound argument is refused (a tool node's arguments
/// come from the state, where bound names are simply overwritten by their source).
pub(crate) fn prepare_arguments(
    working: &Working<'_>,
    tool: &Tool,
    mut arguments: Map<String, Value>,
    from_model: bool,
) -> Result<Value, String> {
    let parameters = super::glue::schema_value(&tool.parameters);
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, source) in &tool.bindings {
        if from_model && arguments.contains_key(name) {
            return Err(format!("argument {name} is set by the runtime"));
        }
        match bound_value(working, source) {
            Some(value) => {
                arguments.insert(name.clone(), value);
            }
            None if required.contains(&name.as_str()) => return Err(format!("argument {name} has no value")),
            None => {
                arguments.remove(name);
            }
        }
    }
    let arguments = super::glue::with_defaults(&tool.parameters, Value::Object(arguments));
    super::glue::check_schema(&tool.parameters, &arguments).map_err(|error| format!("invalid arguments: {error}"))?;
    Ok(arguments)
}

/// The value a bound argument gets from its source, now.
fn bound_value(working: &Working<'_>, source: &BoundSource) -> Option<Value> {
    let started_by = working.record.run.as_ref().map(|run| &run.started_by)?;
    match source {
        BoundSource::State(field) => working.state().get(field).filter(|value| !value.is_null()).cloned(),
        BoundSource::Caller(attribute) => match attribute {
            CallerAttribute::UserId => started_by.user_id.clone().map(Value::String),
            CallerAttribute::Scopes => started_by.user_id.as_ref().map(|_| json!(started_by.scopes)),
            CallerAttribute::Roles => started_by.user_id.as_ref().map(|_| json!(started_by.roles)),
        },
        BoundSource::Claim(name) => started_by.claims.get(name).filter(|value| value.is_string()).cloned(),
    }
}

/// Answers a call with an error the model sees, and records the refusal.
fn refuse(working: &mut Working<'_>, node: &str, call: &QueuedCall, tool: &str, text: String, outcome: &str) {
    working.record(
        "tool_call",
        json!({"tool": tool, "call_id": call.id, "node": node, "outcome": outcome}),
    );
    let mut message = result_message(working, node, call, tool, json!(text.clone()), true);
    message.content.insert(
        0,
        ContentBlock::Error {
            message: text,
            code: None,
            data: None,
        },
    );
    working.push_message(message);
}

/// Appends a call's result. The result of a call a stop just cut short after it was sent
/// carries the call (see [`super::execute::STOPPED_IN_FLIGHT`]), for the next run to finish.
pub(crate) fn push_result(
    working: &mut Working<'_>,
    node: &str,
    call: &QueuedCall,
    tool: &str,
    output: Value,
    is_error: bool,
) {
    let mut message = result_message(working, node, call, tool, output, is_error);
    if let Some(cut) = working.cut_short.take_if(|cut| cut.call.call_id == call.id) {
        message.metadata.insert(
            super::execute::STOPPED_IN_FLIGHT.to_owned(),
            serde_json::to_value(&cut).unwrap_or(Value::Null),
        );
    }
    working.push_message(message);
}

/// A `tool` message answering `call`.
pub(crate) fn result_message(
    working: &Working<'_>,
    node: &str,
    call: &QueuedCall,
    tool: &str,
    output: Value,
    is_error: bool,
) -> Message {
    let message = Message::text(working.message_id(), Role::Tool, "", working.now_seconds());
    answer_message(message, node, call, tool, output, is_error)
}

/// `message` (an empty `tool` message) made the answer to `call`.
pub(crate) fn answer_message(
    mut message: Message,
    node: &str,
    call: &QueuedCall,
    tool: &str,
    output: Value,
    is_error: bool,
) -> Message {
    message.content = vec![ContentBlock::ToolResult {
        call_id: call.id.clone(),
        output,
        is_error,
        status: Some(if is_error {
            ToolResultStatus::Failed
        } else {
            ToolResultStatus::Completed
        }),
    }];
    message.metadata.insert("tool_call_id".to_owned(), json!(call.id));
    message.metadata.insert("function_name".to_owned(), json!(call.name));
    message
        .metadata
        .insert("function_argument".to_owned(), json!(call.arguments));
    message.metadata.insert("tool".to_owned(), json!(tool));
    message.metadata.insert("node".to_owned(), json!(node));
    message
}
