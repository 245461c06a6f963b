//! The run loop's one door to the engine's pure parts (`expr`, `schema`, `approval`,
//! `validate`): the loop calls these small adapters, so the modules it uses can evolve behind
//! one file.

use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};
use tenx_artifact::{Approvers, Handoff, Interrupt, Risk, Route, Schema, Tool, ValidatorUse};

use crate::approval::{ActionContext, ApprovalRequest, CallRisk, PackageForm};
use crate::schema::{CompiledSchema, SchemaCache};
use crate::thread::{Pending, PendingKind};
use crate::wire::Message;
use crate::{Identity, RunError};

use super::{NodeFailure, Working};

pub(crate) use crate::approval::Verdict;

/// The schemas of the artifacts this process runs, compiled once.
static SCHEMAS: LazyLock<SchemaCache> = LazyLock::new(SchemaCache::new);

/// Checks a value against one of the artifact's schemas: the first violation, written
/// `$.path: what`.
pub(crate) fn check_schema(schema: &Schema, value: &Value) -> Result<(), String> {
    let compiled = SCHEMAS.get(schema).map_err(|error| error.to_string())?;
    compiled.check(value).map_err(|violation| violation.to_string())
}

/// Fills defaults and normalises numbers as the schema says.
pub(crate) fn with_defaults(schema: &Schema, value: Value) -> Value {
    crate::schema::normalise(&schema_value(schema), &value)
}

/// An artifact schema as a JSON value: the one its compiled form keeps (parsed once per
/// process), or parsed now when it does not compile (a sealed artifact's always do).
pub(crate) fn schema_value(schema: &Schema) -> SchemaValue {
    match SCHEMAS.get(schema) {
        Ok(compiled) => SchemaValue::Cached(compiled),
        Err(_) => SchemaValue::Parsed(schema.to_value()),
    }
}

/// A schema's JSON value, read through [`std::ops::Deref`].
pub(crate) enum SchemaValue {
    /// Kept by the compiled schema.
    Cached(Arc<CompiledSchema>),
    /// Parsed for this use.
    Parsed(Value),
}

impl std::ops::Deref for SchemaValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        match self {
            Self::Cached(compiled) => compiled.schema(),
            Self::Parsed(value) => value,
        }
    }
}

/// A template rendered over a scope. The compiler and the loader proved every template well
/// formed; should one not be, it is shown as written rather than guessed at.
pub(crate) fn render(template: &str, scope: &Map<String, Value>) -> String {
    crate::expr::render(template, scope).unwrap_or_else(|_| template.to_owned())
}

/// Every string of a value rendered as a template (an interrupt's `value`).
pub(crate) fn render_deep(value: &Value, scope: &Map<String, Value>) -> Value {
    crate::expr::render_tree(value, scope).unwrap_or_else(|_| value.clone())
}

/// The target of a route's first matching arm.
pub(crate) fn choose<'r>(route: &'r Route, state: &Map<String, Value>) -> Option<&'r str> {
    crate::expr::choose(route, state)
}

/// A call's risk and the rule that gave it.
pub(crate) fn call_risk(tool: &Tool, arguments: &Value) -> (Risk, Option<usize>) {
    crate::expr::call_risk(tool, arguments)
}

/// Writes a value at a state path.
pub(crate) fn write_path(state: &mut Map<String, Value>, path: &[String], value: Value) -> Result<(), NodeFailure> {
    crate::expr::write_path(state, path, value)
        .map_err(|error| NodeFailure::new(format!("cannot write state path `{}`: {error}", path.join("."))))
}

/// A validator's refusal.
pub(crate) struct Refusal {
    pub(crate) validator: String,
    pub(crate) violation_type: String,
    pub(crate) message: String,
    pub(crate) rule: String,
    pub(crate) message_index: Option<usize>,
}

/// A non-strict validator's finding (logged, not refused).
pub(crate) struct Finding {
    pub(crate) violation_type: String,
    pub(crate) message: String,
}

/// The graph's input validators over the client's messages.
pub(crate) fn check_input(
    uses: &[ValidatorUse],
    validators: &std::collections::BTreeMap<String, tenx_artifact::Validator>,
    messages: &[Message],
) -> Result<Vec<Finding>, Refusal> {
    crate::validate::check_input(uses, validators, messages)
        .map(|logged| {
            logged
                .into_iter()
                .map(|entry| Finding {
                    violation_type: entry.0.violation_type.as_str().to_owned(),
                    message: entry.0.message,
                })
                .collect()
        })
        .map_err(refusal)
}

/// An agent's output guards over one answer's text.
pub(crate) fn check_output(
    uses: &[ValidatorUse],
    validators: &std::collections::BTreeMap<String, tenx_artifact::Validator>,
    text: &str,
) -> Result<(), Refusal> {
    crate::validate::check_output(uses, validators, text)
        .map(|_| ())
        .map_err(refusal)
}

fn refusal(violation: crate::validate::Violation) -> Refusal {
    Refusal {
        validator: violation.validator,
        violation_type: violation.violation_type.as_str().to_owned(),
        message: violation.message,
        rule: violation.rule,
        message_index: violation.message_index,
    }
}

/// The parameters a handoff tool is offered with.
pub(crate) fn handoff_parameters(handoff: &Handoff) -> Value {
    handoff.payload.to_value()
}

/// A package and what the run keeps of it.
pub(crate) struct Package {
    pub(crate) value: Value,
    pub(crate) fingerprint: String,
    pub(crate) rejection_key: String,
    pub(crate) state_version: u64,
}

fn package_of(request: &ApprovalRequest) -> Result<Package, NodeFailure> {
    let failed = |error: RunError| NodeFailure::new(format!("cannot build the approval package: {}", error.message));
    Ok(Package {
        value: request.package().map_err(failed)?,
        fingerprint: request.fingerprint().map_err(failed)?,
        rejection_key: request.rejection_key().map_err(failed)?,
        state_version: request.state_version,
    })
}

/// The package of a tool call its own approval gates, at a state version and expiry (the ones
/// of now when it is asked, the ones it was asked with when an answer rechecks it).
pub(crate) fn tool_package(
    working: &Working<'_>,
    ask: &super::pause::AskTool<'_>,
    expires_at: Option<u64>,
    state_version: u64,
) -> Result<Package, NodeFailure> {
    let requested_by = working.requested_by();
    let context = ActionContext {
        artifact_id: &working.engine.artifact_id,
        graph: &working.graph_name,
        node: ask.node,
        state: working.state(),
        state_version,
        requested_by: requested_by.as_deref(),
        asked_at: working.now(),
    };
    let scope = ask.arguments.as_object().cloned().unwrap_or_default();
    let target = ask.approval.target.as_deref().map(|template| render(template, &scope));
    let mut request = ApprovalRequest::for_tool(
        &context,
        ask.tool_name,
        ask.tool,
        ask.approval,
        ask.arguments.clone(),
        target,
        CallRisk {
            risk: ask.risk,
            rule: ask.rule,
        },
    );
    request.expires_at = expires_at;
    package_of(&request)
}

/// The package an interrupt node shows for the tool node it approves, at a given state version
/// and expiry (the tool node recomputes it with the ones the person saw).
#[expect(clippy::too_many_arguments, reason = "every input of the package, named")]
pub(crate) fn interrupt_package(
    working: &Working<'_>,
    interrupt: &Interrupt,
    tool_node: &str,
    tool_name: &str,
    tool: &Tool,
    arguments: &Value,
    details: Option<Value>,
    state_version: u64,
    expires_at: Option<u64>,
) -> Result<Package, NodeFailure> {
    let requested_by = working.requested_by();
    let context = ActionContext {
        artifact_id: &working.engine.artifact_id,
        graph: &working.graph_name,
        node: tool_node,
        state: working.state(),
        state_version,
        requested_by: requested_by.as_deref(),
        asked_at: working.now(),
    };
    let target = interrupt
        .target
        .as_deref()
        .map(|template| render(template, working.state()));
    let (risk, rule) = call_risk(tool, arguments);
    let mut request = ApprovalRequest::for_interrupt(
        &context,
        interrupt,
        tool_name,
        tool,
        arguments.clone(),
        target,
        CallRisk { risk, rule },
    );
    request.expires_at = expires_at;
    request.form = PackageForm::InterruptNode {
        details: details.unwrap_or(Value::Null),
    };
    package_of(&request)
}

/// Who may answer the open question: its `approvers` and `separate_duties`.
pub(crate) fn who_may_answer(working: &Working<'_>, pending: &Pending) -> (Option<Approvers>, bool) {
    super::approvals::who_may_answer(working.artifact(), working.graph, pending)
}

/// Whether `identity` may answer.
pub(crate) fn may_answer(
    working: &Working<'_>,
    approvers: Option<&Approvers>,
    separate_duties: bool,
    requested_by: Option<&str>,
    identity: &Identity,
) -> Result<(), RunError> {
    crate::approval::may_answer(
        approvers,
        separate_duties,
        requested_by,
        identity,
        working.engine.options.auth,
    )
}

/// What a valid answer decides; an edit's arguments are checked (422 `EDIT_REFUSED`) first.
pub(crate) fn read_answer(working: &Working<'_>, pending: &Pending, value: &Value) -> Result<Verdict, RunError> {
    match &pending.kind {
        PendingKind::ToolApproval { tool, arguments, .. } => {
            let Some(declared) = working.artifact().tools.get(tool) else {
                return Ok(Verdict::Reject);
            };
            let Some(approval) = declared.approval.as_ref() else {
                return Ok(Verdict::Reject);
            };
            match crate::approval::read_answer(&approval.decision, value) {
                Verdict::Edit(edited) => {
                    let parameters = SCHEMAS
                        .get(&declared.parameters)
                        .map_err(|error| RunError::new(crate::ErrorCode::EditRefused, error.to_string()))?;
                    let normal = crate::approval::check_edit(tool, declared, &parameters, arguments, &edited)?;
                    Ok(Verdict::Edit(normal))
                }
                Verdict::Respond(result) => {
                    if let Some(schema) = declared.result.as_ref()
                        && let Err(error) = check_schema(schema, &result)
                    {
                        let id = pending
                            .interrupt
                            .as_ref()
                            .map(|interrupt| interrupt.id.clone())
                            .unwrap_or_default();
                        return Err(RunError::new(
                            crate::ErrorCode::InterruptAnswerInvalid,
                            format!(
                                "Resume value does not match the result type of tool '{tool}' for interrupt '{id}': $.tool_result{}",
                                error.strip_prefix('$').unwrap_or(&error)
                            ),
                        ));
                    }
                    Ok(Verdict::Respond(result))
                }
                other => Ok(other),
            }
        }
        PendingKind::InterruptNode { node } => {
            let name = working
                .graph
                .nodes
                .get(node)
                .map(|declared| declared.reference.clone())
                .unwrap_or_default();
            Ok(working
                .artifact()
                .interrupts
                .get(&name)
                .map_or(Verdict::Reject, |interrupt| {
                    match crate::approval::read_answer(&interrupt.decision, value) {
                        // An interrupt has no arguments to edit (the compiler refuses `edit` there).
                        Verdict::Edit(_) => Verdict::Reject,
                        other => other,
                    }
                }))
        }
        PendingKind::RemoteTool { .. } => Ok(Verdict::Reject),
    }
}

/// A value's canonical JSON text (sorted keys, no spaces), as fingerprints and guards read it.
pub(crate) fn canonical_text(value: &Value) -> String {
    tenx_artifact::canonical_json(value)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_string())
}
