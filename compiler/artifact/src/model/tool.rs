//! Tools: what the model sees, how risky a call is, who must approve it and how it runs.

use super::{Approvers, BoundSource, Decision, Evidence, Schema};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::sort_unique;

/// A tool an agent may call or a tool node may run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// The model-facing function name (`[A-Za-z0-9_-]{1,64}`).
    pub name: String,
    /// The model-facing description.
    pub description: String,
    /// JSON Schema (draft 2020-12) of the arguments, an object schema.
    pub parameters: Schema,
    /// JSON Schema of the result, if declared.
    #[serde(deserialize_with = "super::required")]
    pub result: Option<Schema>,
    /// How dangerous a call is; decides the default gate.
    pub risk: Risk,
    /// Tags, sorted (informational: selection by tag is already resolved into `allowed_tools`).
    pub tags: Vec<String>,
    /// The approval every call needs before it runs, if any.
    #[serde(deserialize_with = "super::required")]
    pub approval: Option<Approval>,
    /// Interrupts (keys of `interrupts`) that approve this tool as graph steps, sorted.
    pub approved_by: Vec<String>,
    /// A template over the arguments for the idempotency key sent with each call; `null` means
    /// the runtime derives one from the thread and the tool call.
    #[serde(deserialize_with = "super::required")]
    pub idempotency_key: Option<String>,
    /// How the tool runs.
    pub run: Run,
    /// Parameters the runtime fills, by name (each a top-level property of `parameters`): from
    /// a state field or the verified caller. The model sees `parameters` without them
    /// ([`super::bound::model_parameters`]); a model call that sets one is refused.
    pub bindings: BTreeMap<String, BoundSource>,
    /// Argument-dependent risk, if the tool declares rules; `risk` is then their worst case.
    #[serde(deserialize_with = "super::required")]
    pub risk_rules: Option<super::RiskRules>,
    /// How a failed call is attempted again, if the tool declares a policy; a graph may replace
    /// it at a tool node ([`super::NodeRetry`]). Only a tool that [`super::retry_refusal`]
    /// accepts has one.
    #[serde(deserialize_with = "super::required")]
    pub retry: Option<super::RetryPolicy>,
}

impl Tool {
    pub(crate) fn normalize(&mut self) {
        sort_unique(&mut self.tags);
        sort_unique(&mut self.approved_by);
        if let Some(approvers) = self.approval.as_mut().and_then(|approval| approval.approvers.as_mut()) {
            approvers.normalize();
        }
        if let Some(retry) = self.retry.as_mut() {
            retry.normalize();
        }
    }
}

/// Risk tier of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Runs automatically and is recorded.
    Low,
    /// Asks for a confirmation.
    Medium,
    /// Needs an approval before it runs.
    High,
    /// Never offered to any model.
    Prohibited,
}

impl Risk {
    /// The risk as the artifact and the language write it: `low`, `medium`, `high` or
    /// `prohibited`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Prohibited => "prohibited",
        }
    }
}

impl std::fmt::Display for Risk {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// What a person is asked before a tool call runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// Template over the arguments, shown to the approver.
    pub message: String,
    /// The interrupt reason, e.g. `tool_approval`.
    pub reason: String,
    /// Template over the arguments naming the affected resource, if declared.
    #[serde(deserialize_with = "super::required")]
    pub target: Option<String>,
    /// JSON Schema the approver's answer must match.
    pub response_schema: Schema,
    /// How long the approval stays answerable, in milliseconds; `null` for no expiry.
    #[serde(deserialize_with = "super::required")]
    pub expires_ms: Option<u64>,
    /// Text returned to the model when the call is rejected, cancelled or expires
    /// ([`super::DEFAULT_ON_REJECT`] when the program declares none).
    pub on_reject: String,
    /// What is shown to the approver beside the question, in order.
    pub evidence: Vec<Evidence>,
    /// Who may answer; `null` when the program names nobody (then only whoever may act on the
    /// thread, and with `separate_duties` nobody: the compiler refuses that combination).
    #[serde(deserialize_with = "super::required")]
    pub approvers: Option<Approvers>,
    /// Whether the user who started the run is refused as the approver of its own request.
    pub separate_duties: bool,
    /// How an answer is read as approve, edit, respond or reject.
    pub decision: Decision,
    /// A string property of the response schema holding the reviewer's note: on a rejection the
    /// model receives `on_reject`, a blank line and `Reviewer's note: <text>` when the answer
    /// has it. `null` when the program names none.
    #[serde(deserialize_with = "super::required")]
    pub feedback: Option<String>,
}

/// How a tool runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Run {
    /// The runtime sends the arguments as JSON to a URL.
    Http {
        /// The HTTP method.
        method: HttpMethod,
        /// The URL, a template whose `${NAME}` parts are read from the environment.
        url: String,
        /// Timeout of one attempt, in milliseconds.
        timeout_ms: u64,
        /// Headers sent with every request, by name; each value is a template whose `${NAME}`
        /// parts are read from the environment, like the URL's. Names are HTTP tokens, none is
        /// repeated (case-insensitively) or reserved to the runtime, and values hold no control
        /// character (see [`super::binding`]).
        headers: BTreeMap<String, String>,
    },
    /// The API client runs the tool and posts the result back.
    Remote,
    /// A function of the runtime's standard library.
    Builtin {
        /// The builtin's name.
        name: String,
    },
    /// A tool of a named MCP server.
    Mcp {
        /// The server name, configured on the host.
        server: String,
        /// The tool's name on that server.
        tool: String,
    },
    /// A handler the host registers under `name` (listed in [`super::Artifact::native_handlers`]).
    Native {
        /// The handler's name, such as `crm.lookup`.
        name: String,
    },
}

/// HTTP method of an [`Run::Http`] tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// `GET`
    Get,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `PATCH`
    Patch,
    /// `DELETE`
    Delete,
}
