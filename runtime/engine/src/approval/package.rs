//! The approval package: what a person is shown before an action runs, and what its
//! fingerprint binds. Built for a tool's own `approval` block (the interrupt's `value` is the
//! package) and for an interrupt node that `approves` the tool node after it (the same package,
//! with the interrupt's declared `value` under `details`).
//!
//! The templates (`target`) are rendered by the caller, so this module depends on no renderer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tenx_artifact::{Approval, Interrupt, Risk, Tool};

use super::evidence::{ResolvedEvidence, resolve_evidence};
use super::expiry::expires_at;
use super::fingerprint::digest;
use crate::RunError;
use crate::ports::Timestamp;

/// Where and when an action is asked about: the same for every package of one step.
#[derive(Debug, Clone, Copy)]
pub struct ActionContext<'a> {
    /// The artifact id (the package's `policy_revision`).
    pub artifact_id: &'a str,
    /// The graph.
    pub graph: &'a str,
    /// The node where the action runs: the agent node for a tool call, the approved tool node
    /// for an interrupt package (the fingerprint binds it, and the tool node recomputes it).
    pub node: &'a str,
    /// The run's state (evidence reads it).
    pub state: &'a Map<String, Value>,
    /// The thread's state version when the question is asked.
    pub state_version: u64,
    /// The user who started the run, `None` without auth.
    pub requested_by: Option<&'a str>,
    /// When the question is asked.
    pub asked_at: Timestamp,
}

/// The risk of one call: the tool's `risk`, or what its `risk_rules` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRisk {
    /// The risk.
    pub risk: Risk,
    /// The index of the risk rule that gave it, `None` for the base (or a tool without rules).
    pub rule: Option<usize>,
}

impl CallRisk {
    /// The tool's own risk, no rule applied.
    pub fn base(risk: Risk) -> Self {
        Self { risk, rule: None }
    }
}

/// Which package is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum PackageForm {
    /// A tool's own `approval` block (or the default confirmation).
    ToolApproval,
    /// An interrupt node that approves the tool node after it.
    InterruptNode {
        /// The interrupt's declared `value` (`null` when it declares none), shown as `details`.
        details: Value,
    },
}

/// Everything an approval binds and shows, before it is written as a package. Kept (it
/// serialises) so that the tool node after an approving interrupt can compare the action it is
/// about to run with the one that was approved ([`Self::recheck`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The artifact id.
    pub policy_revision: String,
    /// The graph.
    pub graph: String,
    /// The node where the action runs.
    pub node: String,
    /// The tool's declared name.
    pub action: String,
    /// The tool's model-facing name.
    pub tool_name: String,
    /// The validated, normalised arguments, bound arguments included.
    pub normalized_arguments: Value,
    /// The rendered `target`, or `None`.
    pub target: Option<String>,
    /// The resolved evidence, in order.
    pub evidence: Vec<ResolvedEvidence>,
    /// The call's risk.
    pub risk: Risk,
    /// The risk rule that gave it.
    pub risk_rule: Option<usize>,
    /// The thread's state version when asked.
    pub state_version: u64,
    /// The user who started the run.
    pub requested_by: Option<String>,
    /// When the question lapses (milliseconds since the Unix epoch), or `None`.
    pub expires_at: Option<Timestamp>,
    /// The text returned on rejection, cancel or expiry.
    pub on_reject: String,
    /// Which package.
    pub form: PackageForm,
}

impl ApprovalRequest {
    /// The request for a tool call that its own `approval` block gates. `arguments` are the
    /// validated, normalised arguments; `target` is the approval's `target` template rendered
    /// over them (`None` when it declares none).
    pub fn for_tool(
        context: &ActionContext<'_>,
        tool_key: &str,
        tool: &Tool,
        approval: &Approval,
        arguments: Value,
        target: Option<String>,
        risk: CallRisk,
    ) -> Self {
        let evidence = resolve_evidence(&approval.evidence, &arguments, context.state);
        Self::new(
            context,
            tool_key,
            tool,
            arguments,
            target,
            evidence,
            risk,
            expires_at(context.asked_at, approval.expires_ms),
            approval.on_reject.clone(),
            PackageForm::ToolApproval,
        )
    }

    /// The request an interrupt node that `approves` the tool node after it shows: built for
    /// that tool node's call (`arguments`: the state fields it reads, normalised; `target`: the
    /// interrupt's `target` rendered over the state), with the interrupt's evidence, expiry,
    /// `on_reject` and its declared `value` as `details`. `context.node` is the tool node.
    pub fn for_interrupt(
        context: &ActionContext<'_>,
        interrupt: &Interrupt,
        tool_key: &str,
        tool: &Tool,
        arguments: Value,
        target: Option<String>,
        risk: CallRisk,
    ) -> Self {
        let evidence = resolve_evidence(&interrupt.evidence, &arguments, context.state);
        Self::new(
            context,
            tool_key,
            tool,
            arguments,
            target,
            evidence,
            risk,
            expires_at(context.asked_at, interrupt.expires_ms),
            interrupt.on_reject.clone(),
            PackageForm::InterruptNode {
                details: interrupt.value.clone().unwrap_or(Value::Null),
            },
        )
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one private constructor shared by the two forms"
    )]
    fn new(
        context: &ActionContext<'_>,
        tool_key: &str,
        tool: &Tool,
        arguments: Value,
        target: Option<String>,
        evidence: Vec<ResolvedEvidence>,
        risk: CallRisk,
        expires_at: Option<Timestamp>,
        on_reject: String,
        form: PackageForm,
    ) -> Self {
        Self {
            policy_revision: context.artifact_id.to_owned(),
            graph: context.graph.to_owned(),
            node: context.node.to_owned(),
            action: tool_key.to_owned(),
            tool_name: tool.name.clone(),
            normalized_arguments: arguments,
            target,
            evidence,
            risk: risk.risk,
            risk_rule: risk.rule,
            state_version: context.state_version,
            requested_by: context.requested_by.map(str::to_owned),
            expires_at,
            on_reject,
            form,
        }
    }

    /// The fingerprint inputs: `{policy_revision, graph, node, action, normalized_arguments,
    /// target, evidence, state_version, requested_by, expires_at}`.
    pub fn fingerprint_inputs(&self) -> Value {
        json!({
            "policy_revision": self.policy_revision,
            "graph": self.graph,
            "node": self.node,
            "action": self.action,
            "normalized_arguments": self.normalized_arguments,
            "target": self.target,
            "evidence": self.evidence,
            "state_version": self.state_version,
            "requested_by": self.requested_by,
            "expires_at": self.expires_at,
        })
    }

    /// `approval_fingerprint`: `sha256:<64 lowercase hex>` of the canonical bytes of
    /// [`Self::fingerprint_inputs`].
    ///
    /// # Errors
    ///
    /// `NODE_001` when the arguments hold a number that is not finite (not possible with plain
    /// `serde_json` values).
    pub fn fingerprint(&self) -> Result<String, RunError> {
        digest(&self.fingerprint_inputs())
    }

    /// The key under which a rejection (or cancel, or expiry) is remembered for the rest of the
    /// run: the fingerprint of the same inputs without `expires_at` and `state_version`. Every
    /// step moves the state version, so a key with it would never match the same action asked
    /// again; the action itself (arguments, target, evidence, node, requester, revision) is
    /// what a rejection refuses.
    ///
    /// # Errors
    ///
    /// As [`Self::fingerprint`].
    pub fn rejection_key(&self) -> Result<String, RunError> {
        let mut inputs = self.fingerprint_inputs();
        if let Some(map) = inputs.as_object_mut() {
            map.remove("expires_at");
            map.remove("state_version");
        }
        digest(&inputs)
    }

    /// The package, as the paused interrupt's `value`: `action`, `tool_name` (only when the
    /// model-facing name differs), `normalized_arguments`, `target`, `evidence`, `risk`,
    /// `risk_rule`, `policy_revision`, `requested_by`, `expires_at`, `approval_fingerprint`,
    /// `on_reject`, and for an interrupt node `details`.
    ///
    /// # Errors
    ///
    /// As [`Self::fingerprint`].
    pub fn package(&self) -> Result<Value, RunError> {
        let mut package = Map::new();
        package.insert("action".into(), Value::String(self.action.clone()));
        if self.tool_name != self.action {
            package.insert("tool_name".into(), Value::String(self.tool_name.clone()));
        }
        package.insert("normalized_arguments".into(), self.normalized_arguments.clone());
        package.insert("target".into(), json!(self.target));
        package.insert("evidence".into(), json!(self.evidence));
        package.insert("risk".into(), Value::String(self.risk.as_str().to_owned()));
        package.insert("risk_rule".into(), json!(self.risk_rule));
        package.insert("policy_revision".into(), Value::String(self.policy_revision.clone()));
        package.insert("requested_by".into(), json!(self.requested_by));
        package.insert("expires_at".into(), json!(self.expires_at));
        package.insert("approval_fingerprint".into(), Value::String(self.fingerprint()?));
        package.insert("on_reject".into(), Value::String(self.on_reject.clone()));
        if let PackageForm::InterruptNode { details } = &self.form {
            package.insert("details".into(), details.clone());
        }
        Ok(Value::Object(package))
    }

    /// Whether the action about to run at the tool node is the one approved: the fingerprint
    /// with the tool node's freshly read `arguments`, rendered `target` and resolved `evidence`
    /// (and the current artifact id) equals the approved one. Everything else (graph, node,
    /// state version and expiry when asked, requester) is the approved request's own.
    ///
    /// # Errors
    ///
    /// As [`Self::fingerprint`].
    pub fn recheck(
        &self,
        policy_revision: &str,
        arguments: &Value,
        target: Option<&str>,
        evidence: &[ResolvedEvidence],
    ) -> Result<bool, RunError> {
        let fresh = Self {
            policy_revision: policy_revision.to_owned(),
            normalized_arguments: arguments.clone(),
            target: target.map(str::to_owned),
            evidence: evidence.to_vec(),
            ..self.clone()
        };
        Ok(fresh.fingerprint()? == self.fingerprint()?)
    }
}
