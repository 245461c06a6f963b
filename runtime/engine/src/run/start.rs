//! A new run of a thread: the client's user messages pass the graph's validators, the state is
//! set and checked against the graph's state schema, the start node is chosen (`entry`, a
//! declared extra entry, or the agent a `last_agent` thread resumes at), and the loop begins.
//! A thread whose last run a stop ended inside a fork goes on with that run instead, where it
//! stopped (see [`super::stopped_fork`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use tenx_artifact::Resume;

use crate::ports::Event;
use crate::request::RunRequest;
use crate::thread::{Branch, ROOT_BRANCH, RunProgress};
use crate::wire::ExecutionStatus;
use crate::{ErrorCode, RunError};

use super::Working;

/// Starts a run with the request's user messages.
pub(crate) async fn new_run(working: &mut Working<'_>, request: RunRequest) -> Result<(), RunError> {
    let graph = working.graph;
    let validators = &working.artifact().validators;
    let logged =
        super::glue::check_input(&graph.input_validators, validators, &request.messages).map_err(|violation| {
            working.emit(Event::Rejected {
                violation_type: violation.violation_type.clone(),
                message: violation.message.clone(),
            });
            validator_refusal(&violation, |index| index)
        })?;
    for entry in logged {
        working.emit(Event::Rejected {
            violation_type: format!("logged:{}", entry.violation_type),
            message: entry.message,
        });
    }
    let start = start_node(working, request.start_node.as_deref())?;
    let state = initial_state(working, request.initial_state)?;
    let graph_limit = graph.recursion_limit.min(working.engine.options.max_recursion_limit);
    let limit = request
        .recursion_limit
        .map_or(graph_limit, |asked| asked.min(graph_limit));
    if limit == 0 {
        return Err(RunError::new(
            ErrorCode::InvalidRequest,
            "recursion_limit must be at least 1",
        ));
    }
    // Everything is accepted: from here on the run changes the thread. A run a stop ended inside
    // a fork is gone on with (under this artifact only; taken before the thread is stamped
    // with it).
    let kept = super::stopped_fork::take(working).await?;
    // The run starts before its input joins the conversation, so a stream shows the user's
    // message inside the run.
    let run_id = working.engine.ports.ids.run_id();
    if working.listening() {
        let thread_id = working.record.thread_id.clone();
        let node = match &kept {
            Some(run) => run
                .branches
                .get(ROOT_BRANCH)
                .map_or_else(|| start.clone(), |root| root.node.clone()),
            None => start.clone(),
        };
        working.emit(Event::RunStarted {
            thread_id,
            run_id: run_id.clone(),
            node,
        });
    }
    working.record.state = state;
    working.record.artifact_id.clone_from(&working.engine.artifact_id);
    working
        .record
        .substitutions
        .clone_from(&working.engine.options.substitutions);
    let now = working.now_seconds();
    let mut input_text = String::new();
    let mut at = super::stopped_fork::input_index(&working.record.context, kept.is_some());
    for mut message in request.messages {
        if message.message_id.trim().is_empty() {
            message.message_id = working.message_id();
        }
        if message.timestamp <= 0.0 {
            message.timestamp = now;
        }
        message.delta = false;
        input_text = message.text_content();
        working.insert_message(at, message);
        at = at.saturating_add(1);
    }
    let goes_on = kept.is_some();
    let run = match kept {
        // The kept run is this request's run now: its id, starter, limit and input.
        Some(run) => RunProgress {
            run_id: run_id.clone(),
            started_by: request.identity,
            recursion_limit: limit,
            input_text,
            ..run
        },
        None => RunProgress {
            run_id: run_id.clone(),
            started_by: request.identity,
            recursion_limit: limit,
            input_text,
            branches: BTreeMap::from([(
                ROOT_BRANCH.to_owned(),
                Branch {
                    node: String::new(),
                    ..Branch::default()
                },
            )]),
            fork: None,
        },
    };
    working.record.run = Some(run);
    working.record.resume_at = None;
    let execution = &mut working.record.execution;
    execution.status = ExecutionStatus::Running;
    execution.step = 0;
    execution.interrupted_node = None;
    execution.interrupt_reason = None;
    execution.interrupt_data = None;
    execution.internal_data = Map::new();
    execution.stop_current_execution = crate::wire::StopState::None;
    // A stop that reached the request before its run's first step (while it finished the run a
    // crash left, see `entry`) stops the run here, as between two steps: the message is kept,
    // nothing is sent or asked for it, and a call a stop cut short keeps its placeholder.
    if working.stop_requested() {
        if !goes_on {
            super::drive::enter(working, start)?;
        }
        return super::finish::stopped(working).await;
    }
    // A call a stop cut short after it was sent is finished first, as recovery would.
    super::in_flight::finish_stopped_calls(working).await?;
    if !goes_on {
        super::drive::enter(working, start)?;
    }
    super::drive::drive(working).await
}

/// The node this run starts at.
fn start_node(working: &Working<'_>, asked: Option<&str>) -> Result<String, RunError> {
    let graph = working.graph;
    if let Some(asked) = asked {
        if asked == graph.entry || graph.entries.iter().any(|entry| entry == asked) {
            return Ok(asked.to_owned());
        }
        return Err(RunError::new(
            ErrorCode::StartNodeRefused,
            format!(
                "a run of graph '{}' cannot start at '{asked}': it starts at its entry or a declared extra entry",
                working.graph_name
            ),
        ));
    }
    if graph.resume == Resume::LastAgent
        && let Some(node) = working.record.resume_at.as_deref()
        && working.record.artifact_id == working.engine.artifact_id
        && graph.resume_nodes().contains(&node)
    {
        return Ok(node.to_owned());
    }
    Ok(graph.entry.clone())
}

/// D14: a validator's rejection (`AGENTFLOW_VALIDATION_ERROR` with its `violation_type`);
/// `index` maps the index of the checked message to the one the client sent.
pub(crate) fn validator_refusal(violation: &super::glue::Refusal, index: impl Fn(usize) -> usize) -> RunError {
    RunError::new(ErrorCode::ValidationRefused, violation.message.clone()).with_details(json!({
        "violation_type": violation.violation_type,
        "validator": violation.validator,
        "rule": violation.rule,
        "message_index": violation.message_index.map(index),
    }))
}

/// The state this run starts with: the thread's, updated by `initial_state`, checked against
/// the graph's state schema. Unknown fields and missing required ones are refused, naming them.
fn initial_state(working: &Working<'_>, given: Map<String, Value>) -> Result<Map<String, Value>, RunError> {
    refuse_unknown_fields(working, "initial_state", &given)?;
    let mut state = working.record.state.clone();
    state.extend(given);
    checked_state(working, "initial_state", state)
}

/// Refuses fields the graph's state schema does not declare, naming them (`label` names what
/// set them: `initial_state`, `state`).
pub(crate) fn refuse_unknown_fields(
    working: &Working<'_>,
    label: &str,
    given: &Map<String, Value>,
) -> Result<(), RunError> {
    let schema_value = super::glue::schema_value(&working.graph.state_schema);
    let declared: Vec<String> = schema_value
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    let unknown: Vec<&String> = given.keys().filter(|key| !declared.contains(key)).collect();
    if !unknown.is_empty() {
        let names = unknown
            .iter()
            .map(|name| format!("'{name}'"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(RunError::new(
            ErrorCode::InvalidRequest,
            format!(
                "{label} sets fields graph '{}' does not declare: {names}",
                working.graph_name
            ),
        ));
    }
    Ok(())
}

/// A whole new state, defaults filled in, checked against the graph's state schema: missing
/// required fields are refused, naming them.
pub(crate) fn checked_state(
    working: &Working<'_>,
    label: &str,
    state: Map<String, Value>,
) -> Result<Map<String, Value>, RunError> {
    let schema = &working.graph.state_schema;
    let schema_value = super::glue::schema_value(schema);
    let state = super::glue::with_defaults(schema, Value::Object(state));
    let Value::Object(state) = state else {
        return Err(RunError::new(
            ErrorCode::InvalidRequest,
            format!("{label} must be an object"),
        ));
    };
    let missing: Vec<String> = schema_value
        .get("required")
        .and_then(Value::as_array)
        .map(|required| {
            required
                .iter()
                .filter_map(Value::as_str)
                .filter(|name| !state.contains_key(*name))
                .map(|name| format!("'{name}'"))
                .collect()
        })
        .unwrap_or_default();
    if !missing.is_empty() {
        return Err(RunError::new(
            ErrorCode::InvalidRequest,
            format!(
                "{label} is missing required fields of graph '{}': {}",
                working.graph_name,
                missing.join(", ")
            ),
        ));
    }
    super::glue::check_schema(schema, &Value::Object(state.clone())).map_err(|error| {
        RunError::new(
            ErrorCode::InvalidRequest,
            format!("{label} does not match the state schema: {error}"),
        )
    })?;
    Ok(state)
}
