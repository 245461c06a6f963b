//! The shapes `/openapi.json` shows: the envelopes, the request bodies the handlers read and the
//! bare health answers, as documentation types (`utoipa::ToSchema`). The handlers read bodies as
//! JSON and check them field by field ([`crate::input`]), so these types are never built; the
//! serve tests check real requests and answers against them.

#![allow(dead_code, reason = "documentation types: described, never built")]

use serde_json::{Map, Value};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{IntoResponses, ToSchema};

/// Any JSON value, written with every type named (utoipa reads an empty schema back as an
/// error, so the document says "any" in a form it reads).
fn any_value() -> Schema {
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([
                Type::Object,
                Type::Array,
                Type::String,
                Type::Number,
                Type::Boolean,
                Type::Null,
            ]))
            .build(),
    )
}

/// A list of any JSON values.
fn any_values() -> Schema {
    Schema::Array(ArrayBuilder::new().items(RefOr::T(any_value())).build())
}

/// A list of JSON objects.
fn objects() -> Schema {
    Schema::Array(
        ArrayBuilder::new()
            .items(RefOr::T(Schema::Object(
                ObjectBuilder::new().schema_type(Type::Object).build(),
            )))
            .build(),
    )
}

/// A success: `{"data", "metadata"}`.
#[derive(ToSchema)]
pub struct SuccessEnvelope {
    /// The route's payload.
    #[schema(schema_with = any_value)]
    data: Value,
    metadata: SuccessMetadata,
}

/// The metadata of a success.
#[derive(ToSchema)]
pub struct SuccessMetadata {
    /// The request's id (also the `X-Request-ID` header).
    request_id: String,
    /// ISO-8601 UTC time without a zone (also `X-Timestamp`).
    timestamp: String,
    /// `OK` unless the route says otherwise.
    message: String,
}

/// A failure: `{"error": {code, message, details}, "metadata"}`.
#[derive(ToSchema)]
pub struct ErrorEnvelope {
    error: ErrorObject,
    metadata: ErrorMetadata,
}

/// What went wrong.
#[derive(ToSchema)]
pub struct ErrorObject {
    /// The stable code (`VALIDATION_ERROR`, `INTERRUPT_001`, `TOO_MANY_RUNS`, `HTTPException`, …).
    code: String,
    /// Written for the caller; never a secret.
    message: String,
    /// Always a list: request validation errors fill it with `{loc, msg, type}`.
    #[schema(schema_with = any_values)]
    details: Vec<Value>,
}

/// The metadata of a failure: `{request_id, timestamp, message}`, or the middleware form
/// `{request_id, status: "error"}` (413, 429 `RATE_LIMIT_EXCEEDED`, 400 `INVALID_CONTENT_LENGTH`).
#[derive(ToSchema)]
pub struct ErrorMetadata {
    request_id: String,
    timestamp: Option<String>,
    message: Option<String>,
    status: Option<String>,
}

/// A message a client sends: role `user` (the engine refuses others, except `tool` results for a
/// waiting remote call), content a list of blocks.
#[derive(ToSchema)]
pub struct InputMessage {
    /// Kept as given; filled in when missing.
    message_id: Option<String>,
    role: Role,
    /// Content blocks, e.g. `{"type": "text", "text": "…"}`.
    #[schema(schema_with = objects)]
    content: Vec<Map<String, Value>>,
}

/// A message's role.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Role {
    /// A user (the only role a client sends, but tool results).
    User,
    /// A model.
    Assistant,
    /// A system prompt.
    System,
    /// A tool result.
    Tool,
}

/// How much of the run an answer carries.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Granularity {
    /// Messages only.
    Low,
    /// Messages, the context and the summary.
    Partial,
    /// Everything, the state included.
    Full,
}

/// What a request does when another run holds the thread.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum OnBusy {
    /// Wait for the run that holds the thread (`busy_wait_seconds`).
    Wait,
    /// Stop the run that holds the thread.
    Cancel,
}

/// `config` of a run.
#[derive(ToSchema)]
pub struct RunConfig {
    /// The thread (a string or an integer); a new uuid4 when absent.
    #[schema(value_type = Option<String>)]
    thread_id: Value,
    on_busy: Option<OnBusy>,
}

/// The body of invoke, stream and a WebSocket frame (GraphInput): a new message, an answer to
/// the open question (`resume` with its `interrupt_id`) or a remote tool's result.
#[derive(ToSchema)]
pub struct GraphInput {
    /// At least one, unless `resume` is given.
    messages: Option<Vec<InputMessage>>,
    config: Option<RunConfig>,
    /// Typed state fields (checked against the state schema); `current_node` picks the start.
    #[schema(value_type = Option<Object>)]
    initial_state: Option<Map<String, Value>>,
    /// Lowers the graph's limit, never raises it.
    #[schema(minimum = 1, maximum = 100)]
    recursion_limit: Option<u64>,
    response_granularity: Option<Granularity>,
    /// The answer to the open question (checked against its schema).
    #[schema(schema_with = any_value, required = false)]
    resume: Option<Value>,
    /// The open question's id, which an answer is bound to.
    interrupt_id: Option<String>,
    /// Which graph of the artifact runs (the first by name when absent).
    graph: Option<String>,
    on_busy: Option<OnBusy>,
}

/// `POST /v1/graph/stop`.
#[derive(ToSchema)]
pub struct StopRequest {
    /// The thread whose run stops between steps.
    #[schema(value_type = String)]
    thread_id: Value,
}

/// `DELETE /v1/threads/{thread_id}`: the body is required, as in the reference.
#[derive(ToSchema)]
pub struct DeleteThreadRequest {
    #[schema(value_type = Object)]
    config: Map<String, Value>,
}

/// `PUT /v1/threads/{thread_id}/state`.
#[derive(ToSchema)]
pub struct PutStateRequest {
    /// Typed fields to merge (objects deep-merged, `null` ignored), `context` messages to append;
    /// `execution_meta` and `context_summary` only as read (unchanged).
    #[schema(value_type = Object)]
    state: Map<String, Value>,
    #[schema(value_type = Option<Object>)]
    config: Option<Map<String, Value>>,
    /// The version the caller read; another one is 409 `STATE_VERSION_MISMATCH`.
    state_version: Option<u64>,
    on_busy: Option<OnBusy>,
}

/// `POST /v1/threads/{thread_id}/messages`: appended without running the graph.
#[derive(ToSchema)]
pub struct PostMessagesRequest {
    /// At least one; role `user` only, no tool calls.
    messages: Vec<InputMessage>,
    /// Accepted (an object) and not kept.
    #[schema(value_type = Option<Object>)]
    metadata: Option<Map<String, Value>>,
    #[schema(value_type = Option<Object>)]
    config: Option<Map<String, Value>>,
    /// The version the caller read; another one is 409 `STATE_VERSION_MISMATCH`.
    state_version: Option<u64>,
    on_busy: Option<OnBusy>,
}

/// `DELETE /v1/threads/{thread_id}/state` (optional) and `DELETE …/messages/{message_id}`
/// (required, `{"config": {}}` at least, as in the reference).
#[derive(ToSchema)]
pub struct ThreadWriteOptions {
    #[schema(value_type = Option<Object>)]
    config: Option<Map<String, Value>>,
    /// The version the caller read; another one is 409 `STATE_VERSION_MISMATCH`.
    state_version: Option<u64>,
    on_busy: Option<OnBusy>,
}

/// `GET /health/live`.
#[derive(ToSchema)]
pub struct Live {
    /// `live`.
    status: String,
}

/// `GET /health/ready`.
#[derive(ToSchema)]
pub struct Ready {
    /// `ready` or `not_ready`.
    status: String,
    /// `checkpointer`, `artifact`, `artifact_id`.
    #[schema(value_type = Object)]
    checks: Map<String, Value>,
}

/// The answers of a route that runs a graph.
#[derive(IntoResponses)]
pub enum RunResponses {
    /// The run's answer.
    #[response(status = 200)]
    Ok(SuccessEnvelope),
    /// Unauthenticated (`REVOKED_TOKEN`, `INVALID_TOKEN`, `EXPIRED_TOKEN`).
    #[response(status = 401)]
    Unauthorized(ErrorEnvelope),
    /// A missing scope, or another user's thread (`Not authorized to … graph`).
    #[response(status = 403)]
    Forbidden(ErrorEnvelope),
    /// A stale `interrupt_id`, nothing to resume, a busy thread, another artifact's thread.
    #[response(status = 409)]
    Conflict(ErrorEnvelope),
    /// The body is over `MAX_REQUEST_SIZE` (`REQUEST_TOO_LARGE`).
    #[response(status = 413)]
    TooLarge(ErrorEnvelope),
    /// A malformed body, an answer against its schema, a validator's rejection, client input
    /// the contract refuses.
    #[response(status = 422)]
    Unprocessable(ErrorEnvelope),
    /// The rate limit (`RATE_LIMIT_EXCEEDED`) or the caller's concurrent runs
    /// (`TOO_MANY_RUNS`).
    #[response(status = 429)]
    TooMany(ErrorEnvelope),
    /// A node failed (`NODE_001`), the recursion limit (`RECURSION_001`), the store.
    #[response(status = 500)]
    Failed(ErrorEnvelope),
    /// The run passed `run_timeout_seconds` (it stops after the step in flight).
    #[response(status = 504)]
    Timeout(ErrorEnvelope),
}

/// The answers of a route that reads.
#[derive(IntoResponses)]
pub enum ReadResponses {
    /// The answer.
    #[response(status = 200)]
    Ok(SuccessEnvelope),
    /// Unauthenticated.
    #[response(status = 401)]
    Unauthorized(ErrorEnvelope),
    /// A missing scope.
    #[response(status = 403)]
    Forbidden(ErrorEnvelope),
    /// No such thread, message or graph (another user's thread answers the same).
    #[response(status = 404)]
    NotFound(ErrorEnvelope),
    /// Bad paging or a bad id.
    #[response(status = 422)]
    Unprocessable(ErrorEnvelope),
    /// The rate limit.
    #[response(status = 429)]
    TooMany(ErrorEnvelope),
}

/// The answer of a route that is not configured.
#[derive(IntoResponses)]
pub enum UnconfiguredResponses {
    /// `Store is not configured` / `Media storage is not configured`.
    #[response(status = 503)]
    Unavailable(ErrorEnvelope),
}
