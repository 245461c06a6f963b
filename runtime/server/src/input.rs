//! The body of invoke, stream and the WebSocket's frames (reference-api.md §4, GraphInput), read
//! from JSON into the engine's [`RunRequest`]. Shape errors answer the reference's 422
//! `VALIDATION_ERROR` with pydantic-style details; what the engine checks (roles, tool calls in
//! client messages, start nodes, state fields, answers) it checks itself, once.

use serde_json::{Map, Value, json};
use tenx_engine::wire::Message;
use tenx_engine::{Identity, OnBusy, ResumeAnswer, RunRequest};

use crate::envelope::ApiError;

/// How much of the run a response carries (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Granularity {
    /// Messages only.
    #[default]
    Low,
    /// Messages, the context and the summary.
    Partial,
    /// Everything, the state included.
    Full,
}

/// A parsed graph input.
#[derive(Debug, Clone)]
pub struct GraphInput {
    /// The engine's request (identity filled in by the caller).
    pub request: RunRequest,
    /// The response granularity.
    pub granularity: Granularity,
}

/// Reads a graph input from a parsed JSON body.
pub fn parse(body: &Value, identity: Identity) -> Result<GraphInput, ApiError> {
    let Value::Object(body) = body else {
        return Err(ApiError::invalid_field(
            json!(["body"]),
            "Input should be a valid dictionary or object to extract fields from",
            "model_attributes_type",
        ));
    };
    refuse_client_tools(body)?;
    let resume = body.get("resume");
    let messages = messages(body.get("messages"))?;
    if messages.is_empty() && resume.is_none() {
        return Err(ApiError::invalid_field(
            json!(["body"]),
            "Value error, messages must contain at least one message",
            "value_error",
        ));
    }
    let config = match body.get("config") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(config)) => config.clone(),
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "config"]),
                "Input should be a valid dictionary",
                "dict_type",
            ));
        }
    };
    let thread_id = match config.get("thread_id") {
        Some(Value::String(id)) => Some(id.trim().to_owned()).filter(|id| !id.is_empty()),
        Some(Value::Number(id)) => Some(id.to_string()),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "config", "thread_id"]),
                "thread_id must be a string or an integer",
                "value_error",
            ));
        }
    };
    let interrupt_id = match body.get("interrupt_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "interrupt_id"]),
                "Input should be a valid string",
                "string_type",
            ));
        }
    };
    let on_busy = on_busy(body.get("on_busy").or_else(|| config.get("on_busy")))?;
    let recursion_limit = recursion_limit(body.get("recursion_limit"))?;
    let granularity = granularity(body.get("response_granularity"))?;
    let (initial_state, start_node) = initial_state(body.get("initial_state"))?;
    let graph = match body.get("graph") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.clone()),
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "graph"]),
                "Input should be a valid string",
                "string_type",
            ));
        }
    };
    Ok(GraphInput {
        request: RunRequest {
            graph,
            thread_id,
            messages,
            resume: resume.map(|value| ResumeAnswer {
                value: value.clone(),
                interrupt_id,
                note: None,
            }),
            initial_state,
            start_node,
            recursion_limit,
            identity,
            on_busy,
        },
        granularity,
    })
}

/// D9: tools come only from the sealed artifact.
pub fn refuse_client_tools(body: &Map<String, Value>) -> Result<(), ApiError> {
    let config = body.get("config").and_then(Value::as_object);
    let declares = body.contains_key("tools")
        || config.is_some_and(|config| config.contains_key("tools") || config.contains_key("remote_tools"));
    if declares {
        return Err(ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "CLIENT_TOOLS_REFUSED",
            "tools come only from the sealed program; a request may not declare tools",
        ));
    }
    Ok(())
}

fn messages(value: Option<&Value>) -> Result<Vec<Message>, ApiError> {
    messages_at(value, &["body", "messages"])
}

/// Client messages at `path` of the body (`["body", "messages"]`, `["body", "state",
/// "context"]`), read as the reference reads them: a list of message objects whose role is one
/// of the four and whose content is a list. What a client may send is the engine's check.
pub fn messages_at(value: Option<&Value>, path: &[&str]) -> Result<Vec<Message>, ApiError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(path),
                "Input should be a valid list",
                "list_type",
            ));
        }
    };
    let mut messages = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        messages.push(message(path, index, item)?);
    }
    Ok(messages)
}

/// One client message; a missing id or timestamp is filled in by the engine.
fn message(path: &[&str], index: usize, item: &Value) -> Result<Message, ApiError> {
    let at = |field: Option<&str>| {
        let mut loc: Vec<Value> = path.iter().map(|part| json!(part)).collect();
        loc.push(json!(index));
        if let Some(field) = field {
            loc.push(json!(field));
        }
        Value::Array(loc)
    };
    let Value::Object(object) = item else {
        return Err(ApiError::invalid_field(
            at(None),
            "Input should be a valid dictionary or object to extract fields from",
            "model_attributes_type",
        ));
    };
    match object.get("role") {
        Some(Value::String(role)) if matches!(role.as_str(), "user" | "assistant" | "system" | "tool") => {}
        _ => {
            return Err(ApiError::invalid_field(
                at(Some("role")),
                "Input should be 'user', 'assistant', 'system' or 'tool'",
                "literal_error",
            ));
        }
    }
    match object.get("content") {
        Some(Value::Array(_)) => {}
        // pydantic's own refusal of a string where a list of blocks goes.
        Some(Value::String(_)) => {
            return Err(ApiError::invalid_field(
                at(Some("content")),
                "'str' instances are not allowed as a Sequence value",
                "sequence_str",
            ));
        }
        _ => {
            return Err(ApiError::invalid_field(
                at(Some("content")),
                "Input should be a valid list",
                "list_type",
            ));
        }
    }
    let mut filled = object.clone();
    filled
        .entry("message_id")
        .or_insert_with(|| Value::String(String::new()));
    serde_json::from_value(Value::Object(filled))
        .map_err(|error| ApiError::invalid_field(at(None), error.to_string(), "value_error"))
}

/// `on_busy` (`"wait"`, the default, or `"cancel"`), where a body may put it.
pub fn on_busy_of(body: &Map<String, Value>) -> Result<OnBusy, ApiError> {
    let config = body.get("config").and_then(Value::as_object);
    on_busy(
        body.get("on_busy")
            .or_else(|| config.and_then(|config| config.get("on_busy"))),
    )
}

fn on_busy(value: Option<&Value>) -> Result<OnBusy, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(OnBusy::Wait),
        Some(Value::String(mode)) if mode == "wait" => Ok(OnBusy::Wait),
        Some(Value::String(mode)) if mode == "cancel" => Ok(OnBusy::Cancel),
        Some(_) => Err(ApiError::invalid_field(
            json!(["body", "on_busy"]),
            "Input should be 'wait' or 'cancel'",
            "literal_error",
        )),
    }
}

fn recursion_limit(value: Option<&Value>) -> Result<Option<u64>, ApiError> {
    let loc = json!(["body", "recursion_limit"]);
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => match number.as_i64() {
            Some(limit) if limit < 1 => Err(ApiError::invalid_field(
                loc,
                "Input should be greater than or equal to 1",
                "greater_than_equal",
            )),
            Some(limit) if limit > 100 => Err(ApiError::invalid_field(
                loc,
                "Input should be less than or equal to 100",
                "less_than_equal",
            )),
            Some(limit) => Ok(u64::try_from(limit).ok()),
            None => Err(ApiError::invalid_field(
                loc,
                "Input should be a valid integer",
                "int_type",
            )),
        },
        Some(_) => Err(ApiError::invalid_field(
            loc,
            "Input should be a valid integer",
            "int_type",
        )),
    }
}

fn granularity(value: Option<&Value>) -> Result<Granularity, ApiError> {
    match value.and_then(Value::as_str) {
        None if value.is_none_or(Value::is_null) => Ok(Granularity::Low),
        Some("low") => Ok(Granularity::Low),
        Some("partial") => Ok(Granularity::Partial),
        Some("full") => Ok(Granularity::Full),
        _ => Err(ApiError::invalid_field(
            json!(["body", "response_granularity"]),
            "Input should be 'full', 'partial' or 'low'",
            "enum",
        )),
    }
}

/// `initial_state`: typed state fields, and the special key `current_node` (the start node).
fn initial_state(value: Option<&Value>) -> Result<(Map<String, Value>, Option<String>), ApiError> {
    let mut state = match value {
        None | Some(Value::Null) => return Ok((Map::new(), None)),
        Some(Value::Object(state)) => state.clone(),
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "initial_state"]),
                "Input should be a valid dictionary",
                "dict_type",
            ));
        }
    };
    let start = match state.remove("current_node") {
        None | Some(Value::Null) => None,
        Some(Value::String(node)) => Some(node),
        Some(_) => {
            return Err(ApiError::invalid_field(
                json!(["body", "initial_state", "current_node"]),
                "Input should be a valid string",
                "string_type",
            ));
        }
    };
    Ok((state, start))
}
