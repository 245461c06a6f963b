//! Structural self-checks of decision rules: how the runtime reads an answer as approve, edit or
//! reject (see [`crate::Decision`]). Part of [`crate::check`]; a rule here is proved for a
//! compiled program by the compiler's decision checks (`TENX0409`–`TENX0414`, `TENX0614`,
//! `TENX0615`).

use serde_json::Value;

use crate::model::{Artifact, Decision, Schema};

/// Every approval's and interrupt's decision: `field` names something, `approve`, `edit` and
/// `respond` are strings or booleans and differ, and `edit` appears only where there are arguments to edit (a
/// tool approval whose tool has parameters, never an interrupt).
pub(crate) fn check(artifact: &Artifact, problems: &mut Vec<String>) {
    for (name, tool) in &artifact.tools {
        let Some(approval) = &tool.approval else { continue };
        let what = format!("tool `{name}`: approval `decision`");
        check_decision(&approval.decision, &what, problems);
        if approval.decision.edit.is_some() && !has_parameters(&tool.parameters) {
            problems.push(format!(
                "{what}: `edit` needs arguments to edit, but the tool has no parameters"
            ));
        }
    }
    for (name, interrupt) in &artifact.interrupts {
        let what = format!("interrupt `{name}`: `decision`");
        check_decision(&interrupt.decision, &what, problems);
        if interrupt.decision.edit.is_some() {
            problems.push(format!(
                "{what}: an interrupt has no arguments to edit, so `edit` must be null"
            ));
        }
    }
}

fn check_decision(decision: &Decision, what: &str, problems: &mut Vec<String>) {
    if decision.field.is_empty() {
        problems.push(format!("{what}: `field` must not be empty"));
    }
    if !is_answer_value(&decision.approve) {
        problems.push(format!("{what}: `approve` must be a string or a boolean"));
    }
    if let Some(edit) = &decision.edit {
        if !is_answer_value(edit) {
            problems.push(format!("{what}: `edit` must be a string or a boolean"));
        }
        if *edit == decision.approve {
            problems.push(format!("{what}: `edit` must differ from `approve`"));
        }
    }
    if let Some(respond) = &decision.respond {
        if !is_answer_value(respond) {
            problems.push(format!("{what}: `respond` must be a string or a boolean"));
        }
        if *respond == decision.approve || decision.edit.as_ref() == Some(respond) {
            problems.push(format!("{what}: `respond` must differ from `approve` and `edit`"));
        }
    }
}

/// A value a decision field can be compared with: a string or a boolean.
fn is_answer_value(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Bool(_))
}

/// Whether a tool's `parameters` schema defines at least one property.
pub(crate) fn has_parameters(parameters: &Schema) -> bool {
    parameters
        .to_value()
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty())
}
