//! The default confirmation of a `medium` risk tool: a tool with no `approval` block of its own
//! and no approving interrupt gets a plain yes-or-no approval, asked of the user themself before
//! each call, that names the tool and shows every top-level argument.

use super::Lowerer;
use super::tool::default_response_schema;
use crate::ast::{ExprKind, ToolDecl};
use crate::resolve::Located;
use serde_json::Value;
use tenx_artifact::{Approval, DEFAULT_ON_REJECT, Decision, Schema};

/// The `reason` of a default confirmation.
pub const CONFIRMATION_REASON: &str = "confirmation";

impl Lowerer<'_, '_> {
    /// The default confirmation of `tool`: ``Run `TOOL` with a: {a}, b: {b}?``, or
    /// ``Run `TOOL`?`` when it has no parameters.
    pub(super) fn confirmation(&self, tool: &Located<ToolDecl>) -> Approval {
        Approval {
            message: confirmation_message(&tool.decl.name.name, &self.parameter_names(tool)),
            reason: CONFIRMATION_REASON.to_string(),
            target: None,
            response_schema: Schema::from(default_response_schema()),
            expires_ms: None,
            on_reject: DEFAULT_ON_REJECT.to_string(),
            evidence: Vec::new(),
            approvers: None,
            separate_duties: false,
            decision: Decision::yes_no(),
            feedback: None,
        }
    }

    /// The tool's top-level parameters in declaration order: its parameter list, the properties
    /// of an inline `parameters` schema as written, or those of a named one.
    fn parameter_names(&self, tool: &Located<ToolDecl>) -> Vec<String> {
        let decl = &tool.decl;
        if let Some(params) = &decl.params {
            return params.iter().map(|p| p.name.name.clone()).collect();
        }
        if let Some(expr) = &decl.parameters_schema
            && let ExprKind::Map(entries) = &expr.kind
            && let Some(properties) = entries.iter().find(|e| e.key == "properties")
            && let ExprKind::Map(properties) = &properties.value.kind
        {
            return properties.iter().map(|p| p.key.clone()).collect();
        }
        self.tool_parameters(tool)
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// ``Run `TOOL` with a: {a}, b: {b}?``.
fn confirmation_message(tool: &str, parameters: &[String]) -> String {
    if parameters.is_empty() {
        return format!("Run `{tool}`?");
    }
    let shown: Vec<String> = parameters.iter().map(|p| format!("{p}: {{{p}}}")).collect();
    format!("Run `{tool}` with {}?", shown.join(", "))
}
