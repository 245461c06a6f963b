//! Why a request to the engine was refused or a run failed: one [`RunError`] type with a stable
//! [`ErrorCode`] (the wire code of the standard API), a message written for the caller, and
//! details. The server maps the code to its HTTP status with [`ErrorCode::status`].

use serde_json::Value;

/// A refusal or a failure, as the API returns it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("[{code}] {message}")]
pub struct RunError {
    /// The stable code.
    pub code: ErrorCode,
    /// The message, written for the caller; never a secret.
    pub message: String,
    /// Structured details (JSON paths, names), or `null`.
    pub details: Value,
}

impl RunError {
    /// An error with a code and a message and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Value::Null,
        }
    }

    /// The same error with details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $wire:literal, $status:literal;)*) => {
        /// The stable codes of engine errors, written on the wire as their `as_str`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ErrorCode {
            /// The wire code, e.g. `INTERRUPT_001`.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire,)* }
            }

            /// The HTTP status the standard API answers with.
            pub fn status(self) -> u16 {
                match self { $(Self::$variant => $status,)* }
            }

            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(Self::$variant,)*];
        }
    };
}

error_codes! {
    /// A resume names an interrupt id that is not the open one (D1).
    InterruptMismatch = "INTERRUPT_001", 409;
    /// An answer does not match the response schema (D3).
    InterruptAnswerInvalid = "INTERRUPT_002", 422;
    /// A resume on a thread that is not paused (D2).
    NothingToResume = "INTERRUPT_003", 409;
    /// A new message to a thread paused at a question (D4).
    ThreadPaused = "INTERRUPT_004", 422;
    /// An answer after the question expired.
    InterruptExpired = "INTERRUPT_EXPIRED", 409;
    /// The answering user may not answer this question (`approvers`, `separate_duties`).
    ApproverRefused = "APPROVER_REFUSED", 403;
    /// No open question has this interrupt id (answered, withdrawn, or never asked).
    ApprovalNotFound = "APPROVAL_NOT_FOUND", 404;
    /// An escalation without a valid role or note.
    EscalationInvalid = "ESCALATION_INVALID", 422;
    /// A batch approval that breaks its rules (risk, count, total amount, answer form).
    BatchRefused = "BATCH_REFUSED", 422;
    /// An `edit` whose arguments are invalid or change a bound argument.
    EditRefused = "EDIT_REFUSED", 422;
    /// A resume of a thread made by another artifact (D16).
    GraphVersionMismatch = "GRAPH_VERSION_MISMATCH", 409;
    /// A start node that is neither `entry` nor one of `entries`.
    StartNodeRefused = "START_NODE_REFUSED", 422;
    /// Another run holds the thread (D6).
    ThreadBusy = "THREAD_BUSY", 409;
    /// The caller may not act on this thread (D7).
    NotAuthorized = "NOT_AUTHORIZED", 403;
    /// No such thread (or another user's, on reads).
    ThreadNotFound = "RESOURCE_NOT_FOUND", 404;
    /// An input validator refused a message (D14).
    ValidationRefused = "AGENTFLOW_VALIDATION_ERROR", 422;
    /// A client message with a role other than `user` (D8).
    MessageRoleForbidden = "MESSAGE_ROLE_FORBIDDEN", 422;
    /// A client message that carries a tool call.
    ToolCallInClientMessage = "TOOL_CALL_IN_CLIENT_MESSAGE", 422;
    /// A tool result for no waiting remote call, or for a server tool.
    ToolResultUnexpected = "TOOL_RESULT_UNEXPECTED", 422;
    /// A second result for one remote call.
    ToolResultDuplicate = "TOOL_RESULT_DUPLICATE", 422;
    /// A request that declares tools (D9).
    ClientToolsRefused = "CLIENT_TOOLS_REFUSED", 422;
    /// A new message while a remote call waits for its result.
    RemoteToolPending = "REMOTE_TOOL_PENDING", 422;
    /// A thread write named a `state_version` that is not the thread's (optimistic
    /// concurrency): somebody changed the thread since the caller read it.
    StateVersionMismatch = "STATE_VERSION_MISMATCH", 409;
    /// A write of state or a deletion on a thread paused at a question or a remote call: what
    /// the pause covers stays as it is until it is answered.
    ThreadPausedWrite = "THREAD_PAUSED", 409;
    /// Deleting a message that is part of a tool call and its result.
    MessageInToolCall = "MESSAGE_IN_TOOL_CALL", 409;
    /// A state write that touches what only the engine writes (`execution_meta`,
    /// `context_summary`).
    StateFieldReadOnly = "STATE_FIELD_READ_ONLY", 422;
    /// A client message whose id a different message of the thread already has.
    MessageIdTaken = "MESSAGE_ID_TAKEN", 422;
    /// The request itself is malformed (no messages, unknown or missing state fields, a bad
    /// recursion limit, an unknown graph).
    InvalidRequest = "VALIDATION_ERROR", 422;
    /// A node failed (NODE_001: an error in a node, its answers failing their checks).
    NodeFailed = "NODE_001", 500;
    /// The run exceeded its recursion limit.
    RecursionLimit = "RECURSION_001", 500;
    /// A map's list could not be read: the field is not a list, or holds more items than one fork
    /// may run (`tenx_artifact::MAX_WIDTH`).
    ForkItems = "FORK_001", 500;
    /// Merging the branches at a join gave a state value its field does not accept (a reducer
    /// over values of the wrong kind, or a merged value its schema refuses).
    ForkMerge = "FORK_002", 500;
    /// A fork would start more than [`crate::MAX_NESTING`] forks deep (forks inside branches,
    /// subgraphs, agents called as tools, counted together).
    ForkDepth = "FORK_003", 500;
    /// A route or handoff led to a node the graph does not have (D12).
    UnknownTarget = "GRAPH_007", 500;
    /// The store failed.
    Storage = "STORAGE_000", 500;
    /// The store is briefly unavailable.
    StorageTransient = "STORAGE_TRANSIENT_000", 503;
    /// The id source could not draw an id from its random source (`Ids::failures` moved during
    /// the request): nothing the request built is committed.
    RandomSourceUnavailable = "RANDOM_SOURCE_UNAVAILABLE", 503;
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}
