//! Self-checks of what an answer carries besides its decision: the reviewer's note
//! (`feedback`, a string property of the response schema) and, for a decision that can
//! `respond`, the result that answers the call (`tool_result`, a property of the response
//! schema). A rule here is proved for a compiled program by the compiler's feedback and respond
//! checks (`TENX0415`–`TENX0417`, `TENX0628`).

use serde_json::Value;

use super::Problems;
use crate::answer_ways::property;
use crate::model::{Artifact, Decision, Schema, TOOL_RESULT_PROPERTY};

pub(super) fn check(artifact: &Artifact, problems: &mut Problems) {
    for (name, tool) in &artifact.tools {
        let Some(approval) = &tool.approval else { continue };
        let what = format!("tool `{name}`: approval");
        check_feedback(approval.feedback.as_deref(), &approval.response_schema, &what, problems);
        check_respond(&approval.decision, &approval.response_schema, &what, problems);
    }
    for (name, interrupt) in &artifact.interrupts {
        let what = format!("interrupt `{name}`");
        check_feedback(
            interrupt.feedback.as_deref(),
            &interrupt.response_schema,
            &what,
            problems,
        );
        if interrupt.decision.respond.is_some() {
            problems.push(format!(
                "{what}: `decision.respond` must be null: an interrupt has no call to answer"
            ));
        }
    }
}

/// `feedback` names a property of the response schema whose schema is a string.
fn check_feedback(feedback: Option<&str>, response: &Schema, what: &str, problems: &mut Problems) {
    let Some(feedback) = feedback else { return };
    let root = response.to_value();
    let Some(property) = property(&root, feedback) else {
        problems.push(format!(
            "{what}: `feedback` names `{feedback}`, which the response schema does not define"
        ));
        return;
    };
    if property.get("type").and_then(Value::as_str) != Some("string") {
        problems.push(format!(
            "{what}: `feedback` names `{feedback}`, which the response schema does not declare a string"
        ));
    }
}

/// A decision that can `respond` reads `tool_result` from the answer: the response schema
/// defines it.
fn check_respond(decision: &Decision, response: &Schema, what: &str, problems: &mut Problems) {
    if decision.respond.is_none() {
        return;
    }
    if property(&response.to_value(), TOOL_RESULT_PROPERTY).is_none() {
        problems.push(format!(
            "{what}: `decision.respond` needs the response schema to define `{TOOL_RESULT_PROPERTY}`"
        ));
    }
}
