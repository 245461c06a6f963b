//! Handoff payloads: each handoff's `payload` is an object schema (`"type": "object"`, with
//! `properties` an object when present), since the runtime offers it as the parameters of the
//! handoff's tool and writes its properties into state fields by name. A hand-edited artifact
//! with a payload of `true`, a string schema or a list is refused.

use super::Problems;
use crate::model::{Agent, Schema};
use serde_json::Value;

/// Checks the payload of every handoff of the agent `name`.
pub(super) fn check(name: &str, agent: &Agent, problems: &mut Problems) {
    for handoff in &agent.handoffs {
        if !is_object_schema(&handoff.payload) {
            problems.push(format!(
                "agent `{name}`: the payload of handoff `{}` must be an object schema (`\"type\": \"object\"`)",
                handoff.tool_name
            ));
        }
    }
}

/// Whether `schema` describes objects: a JSON object whose `type` is `"object"` and whose
/// `properties`, when present, is an object.
pub(crate) fn is_object_schema(schema: &Schema) -> bool {
    if !schema.is_object() {
        return false;
    }
    let value = schema.to_value();
    value.get("type").and_then(Value::as_str) == Some("object") && value.get("properties").is_none_or(Value::is_object)
}
