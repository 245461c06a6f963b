//! Lowering of interrupts, the explicit human steps: message, reason, shown value, response
//! schema, expiry, the tools they approve, the text used on rejection, and what the approval
//! binds (target, evidence) and who may give it (approvers, separate duties).

use super::Lowerer;
use super::tool::default_response_schema;
use crate::ast::Expr;
use tenx_artifact::{Artifact, DEFAULT_ON_REJECT, Interrupt, Schema};

/// The `reason` of an interrupt that does not set one.
pub const DEFAULT_INTERRUPT_REASON: &str = "human_review";

impl Lowerer<'_, '_> {
    pub(super) fn interrupts(&self, artifact: &mut Artifact) {
        for &i in &self.reachable.interrupts {
            let Some(located) = self.program.interrupts.get(i) else {
                continue;
            };
            let decl = &located.decl;
            let interrupt = Interrupt {
                message: decl.message.as_ref().and_then(super::text).unwrap_or_default(),
                reason: decl
                    .reason
                    .as_ref()
                    .and_then(super::text)
                    .unwrap_or_else(|| DEFAULT_INTERRUPT_REASON.to_string()),
                value: decl.value.as_ref().and_then(Expr::to_json),
                response_schema: decl
                    .response
                    .as_ref()
                    .and_then(|schema| self.schema_ref(located.file, schema))
                    .map_or_else(|| Schema::from(default_response_schema()), Schema::from),
                expires_ms: decl.expires.map(|(ms, _)| ms),
                approves: decl.approves.iter().map(|tool| tool.name.clone()).collect(),
                on_reject: decl
                    .on_reject
                    .as_ref()
                    .and_then(super::text)
                    .unwrap_or_else(|| DEFAULT_ON_REJECT.to_string()),
                target: decl.target.as_ref().and_then(super::text),
                evidence: decl
                    .evidence
                    .iter()
                    .filter_map(|item| crate::check::evidence::lower_item(&[], item))
                    .collect(),
                approvers: crate::check::approvers::lower_approvers(decl.approvers.as_ref()),
                separate_duties: crate::check::approvers::interrupt_separate_duties(self.program, decl),
                decision: self.decision(decl.response.as_ref(), decl.decision.as_ref()),
                feedback: decl.feedback.as_ref().and_then(super::text),
            };
            let name = &decl.name.name;
            self.locate(artifact, format!("interrupt.{name}"), located.file, decl.name.span);
            artifact.interrupts.insert(name.clone(), interrupt);
        }
    }
}
