//! An `edit` answer's arguments, checked before anything is recorded: a full replacement of the
//! arguments, valid against the tool's parameters, that leaves every bound argument as the
//! runtime set it. Refusals are 422 `EDIT_REFUSED`; the question stays open.

use serde_json::Value;
use tenx_artifact::Tool;

use crate::schema::CompiledSchema;
use crate::{ErrorCode, RunError};

/// Checks `edited` (the answer's `edited_arguments`) against the tool's `parameters` and the
/// `original` normalised arguments, and gives the edited arguments normalised.
///
/// A bound argument (`tool.bindings`) may be left out of the edit (the runtime's value is kept)
/// or repeated unchanged; any other value for it is refused, as is anything the parameters
/// refuse (the message carries the first violation's path).
///
/// # Errors
///
/// `EDIT_REFUSED` (422) when `edited` is not an object, breaks the parameters, or changes a
/// bound argument.
pub fn check_edit(
    tool_key: &str,
    tool: &Tool,
    parameters: &CompiledSchema,
    original: &Value,
    edited: &Value,
) -> Result<Value, RunError> {
    let Value::Object(fields) = edited else {
        return Err(RunError::new(
            ErrorCode::EditRefused,
            format!("The edit of tool '{tool_key}' must carry 'edited_arguments', an object of the tool's arguments"),
        ));
    };
    let mut fields = fields.clone();
    for name in tool.bindings.keys() {
        if !fields.contains_key(name)
            && let Some(value) = original.get(name)
        {
            fields.insert(name.clone(), value.clone());
        }
    }
    let normal = parameters
        .check_and_normalise(&Value::Object(fields))
        .map_err(|violation| {
            RunError::new(
                ErrorCode::EditRefused,
                format!("The edited arguments do not match the parameters of tool '{tool_key}': {violation}"),
            )
            .with_details(serde_json::json!({"path": violation.path, "message": violation.message}))
        })?;
    for name in tool.bindings.keys() {
        if normal.get(name) != original.get(name) {
            return Err(RunError::new(
                ErrorCode::EditRefused,
                format!("The edit changes argument '{name}' of tool '{tool_key}', which the runtime sets; it cannot be edited"),
            )
            .with_details(serde_json::json!({"argument": name})));
        }
    }
    Ok(normal)
}
