//! Lowering of tools: the model-facing name and description, parameter and result schemas,
//! risk, tags, the approval block, the interrupts that approve the tool, the idempotency key
//! template and the run binding.

use super::Lowerer;
use crate::ast::{self, ExprKind, RunBinding};
use crate::resolve::Located;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tenx_artifact::{Approval, Artifact, DEFAULT_ON_REJECT, HttpMethod, Risk, RiskRule, RiskRules, Run, Schema, Tool};

/// The `reason` of an approval that does not set one.
pub const DEFAULT_APPROVAL_REASON: &str = "tool_approval";

/// The timeout of an `http` tool that does not set one: 30 seconds.
pub const DEFAULT_HTTP_TIMEOUT_MS: u64 = 30_000;

/// The response schema of an approval (or interrupt) that declares none: a plain yes or no,
/// `{"approved": true|false}`, the same answer as `std.approval.yes_no`.
pub const DEFAULT_RESPONSE_SCHEMA: &str =
    r#"{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}"#;

/// [`DEFAULT_RESPONSE_SCHEMA`] as a value.
pub(super) fn default_response_schema() -> Value {
    json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]})
}

impl Lowerer<'_, '_> {
    pub(super) fn tools(&self, artifact: &mut Artifact) {
        for &t in &self.reachable.tools {
            let Some(located) = self.program.tools.get(t) else {
                continue;
            };
            let decl = &located.decl;
            let Some((run, _)) = &decl.run else { continue };
            let name = &decl.name.name;
            let approved_by = self
                .reachable
                .approvers
                .get(name)
                .into_iter()
                .flatten()
                .filter(|&i| self.reachable.interrupts.contains(i))
                .filter_map(|&i| self.program.interrupts.get(i))
                .map(|interrupt| interrupt.decl.name.name.clone())
                .collect::<Vec<_>>();
            // A `medium` tool that no block or interrupt approves is confirmed by default.
            let approval = match &decl.approval {
                Some(approval) => Some(self.approval(located, approval)),
                None if decl.may_be(ast::Risk::Medium) && approved_by.is_empty() => Some(self.confirmation(located)),
                None => None,
            };
            let tool = Tool {
                name: decl.model_name().to_string(),
                description: decl.description.as_ref().and_then(super::text).unwrap_or_default(),
                parameters: Schema::from(self.tool_parameters(located)),
                result: decl
                    .result
                    .as_ref()
                    .map(|ty| Schema::from(self.type_schema(located.file, ty))),
                risk: lower_risk(decl.risk_level()),
                tags: decl.tags.iter().map(|tag| tag.name.clone()).collect(),
                approval,
                approved_by,
                idempotency_key: decl.idempotency_key.as_ref().and_then(super::text),
                run: lower_run(run, name),
                bindings: crate::check::bound_args::lower(self.program, decl),
                risk_rules: lower_risk_rules(decl),
                retry: decl.retry.as_ref().and_then(crate::retry::lower),
            };
            self.locate(artifact, format!("tool.{name}"), located.file, decl.name.span);
            artifact.tools.insert(name.clone(), tool);
        }
    }

    fn approval(&self, tool: &Located<ast::ToolDecl>, approval: &ast::Approval) -> Approval {
        let file = tool.file;
        let params = crate::check::evidence::tool_params(self.program, &tool.decl);
        Approval {
            message: approval.message.as_ref().and_then(super::text).unwrap_or_default(),
            reason: approval
                .reason
                .as_ref()
                .and_then(super::text)
                .unwrap_or_else(|| DEFAULT_APPROVAL_REASON.to_string()),
            target: approval.target.as_ref().and_then(super::text),
            response_schema: approval
                .response
                .as_ref()
                .and_then(|schema| self.schema_ref(file, schema))
                .map_or_else(|| Schema::from(default_response_schema()), Schema::from),
            expires_ms: approval.expires.map(|(ms, _)| ms),
            on_reject: approval
                .on_reject
                .as_ref()
                .and_then(super::text)
                .unwrap_or_else(|| DEFAULT_ON_REJECT.to_string()),
            evidence: approval
                .evidence
                .iter()
                .filter_map(|item| crate::check::evidence::lower_item(&params, item))
                .collect(),
            approvers: crate::check::approvers::lower_approvers(approval.approvers.as_ref()),
            separate_duties: crate::check::approvers::tool_separate_duties(&tool.decl, approval),
            decision: self.decision(approval.response.as_ref(), approval.decision.as_ref()),
            feedback: approval.feedback.as_ref().and_then(super::text),
        }
    }
}

/// The artifact's risk level.
pub(super) fn lower_risk(risk: ast::Risk) -> Risk {
    match risk {
        ast::Risk::Low => Risk::Low,
        ast::Risk::Medium => Risk::Medium,
        ast::Risk::High => Risk::High,
        ast::Risk::Prohibited => Risk::Prohibited,
    }
}

/// The tool's risk rules in order, with the base risk; `None` when it declares none.
fn lower_risk_rules(decl: &ast::ToolDecl) -> Option<RiskRules> {
    if decl.risk_rules.is_empty() {
        return None;
    }
    Some(RiskRules {
        base: lower_risk(decl.base_risk()),
        rules: decl
            .risk_rules
            .iter()
            .map(|rule| RiskRule {
                condition: super::graph::lower_condition(&rule.condition),
                risk: lower_risk(rule.risk),
            })
            .collect(),
    })
}

/// How the tool runs. An `mcp` tool without `tool:` uses the tool's declared name.
fn lower_run(run: &RunBinding, declared_name: &str) -> Run {
    match run {
        RunBinding::Http {
            method,
            url,
            timeout_ms,
            headers,
        } => Run::Http {
            method: match method.name.to_ascii_uppercase().as_str() {
                "GET" => HttpMethod::Get,
                "PUT" => HttpMethod::Put,
                "PATCH" => HttpMethod::Patch,
                "DELETE" => HttpMethod::Delete,
                _ => HttpMethod::Post,
            },
            url: url.as_str().map(str::to_string).unwrap_or_default(),
            timeout_ms: timeout_ms.filter(|&ms| ms > 0).unwrap_or(DEFAULT_HTTP_TIMEOUT_MS),
            headers: match headers.as_ref().map(|h| &h.kind) {
                Some(ExprKind::Map(entries)) => entries
                    .iter()
                    .filter_map(|e| Some((e.key.clone(), e.value.as_str()?.to_string())))
                    .collect(),
                _ => BTreeMap::new(),
            },
        },
        RunBinding::Native { name, .. } => Run::Native { name: name.clone() },
        RunBinding::Remote => Run::Remote,
        RunBinding::Builtin(name) => Run::Builtin {
            name: name.name.clone(),
        },
        RunBinding::Mcp { server, tool } => Run::Mcp {
            server: server.clone(),
            tool: tool.clone().unwrap_or_else(|| declared_name.to_string()),
        },
    }
}
