//! An MCP `tools/call` answer as a tool result or a tool error (what the model sees), and a
//! failed call as a [`ToolError`] of the right kind.
//!
//! | answer | result |
//! |---|---|
//! | `isError: true` | `Failed`: ``MCP tool `T` reported an error: <its text>`` (the model sees it) |
//! | text blocks only, result declared `string` | the texts joined by a line break, even beside `structuredContent` |
//! | `structuredContent` | that value |
//! | text blocks only, result not declared | the texts joined by a line break |
//! | text blocks only, another result type | the text read as JSON (`Client` when it is not JSON) |
//! | other blocks (image, audio, resource, link) | the content array as MCP sends it (the engine then checks it against the tool's `result`) |

use rmcp::ServiceError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;
use tenx_artifact::Schema;
use tenx_engine::ports::{ToolError, ToolErrorKind};

/// The most of a server's error text shown to the model.
const MAX_ERROR_TEXT: usize = 2_000;

pub(crate) fn error(kind: ToolErrorKind, message: impl Into<String>) -> ToolError {
    ToolError {
        kind,
        message: message.into(),
    }
}

/// Whether a result schema is a string type.
fn is_string(result: Option<&Schema>) -> bool {
    result.is_some_and(|schema| schema.to_value().get("type").and_then(Value::as_str) == Some("string"))
}

/// The texts of `content`, or `None` when a block is not text.
fn texts(content: &[ContentBlock]) -> Option<Vec<&str>> {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

/// `text` cut to at most `MAX_ERROR_TEXT` bytes, on a character boundary.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_ERROR_TEXT {
        return text.to_string();
    }
    let mut end = MAX_ERROR_TEXT;
    while !text.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    format!("{}…", text.get(..end).unwrap_or(""))
}

/// The tool result of an answer, for the tool whose result schema is `result`.
pub(crate) fn map_result(tool: &str, answer: CallToolResult, result: Option<&Schema>) -> Result<Value, ToolError> {
    if answer.is_error == Some(true) {
        let text = texts(&answer.content).map(|texts| texts.join("\n")).unwrap_or_default();
        let text = if text.trim().is_empty() {
            "no details".to_string()
        } else {
            bounded(&text)
        };
        return Err(error(
            ToolErrorKind::Failed,
            format!("MCP tool `{tool}` reported an error: {text}"),
        ));
    }
    // A tool declared to return a string gets the text even when the server also sends
    // structured content (the Python SDK wraps a `str` return as `{"result": …}`).
    if is_string(result)
        && !answer.content.is_empty()
        && let Some(texts) = texts(&answer.content)
    {
        return Ok(Value::String(texts.join("\n")));
    }
    if let Some(structured) = answer.structured_content {
        return Ok(structured);
    }
    match texts(&answer.content) {
        Some(texts) if result.is_none() || is_string(result) => Ok(Value::String(texts.join("\n"))),
        Some(texts) => serde_json::from_str(&texts.join("\n")).map_err(|_| {
            error(
                ToolErrorKind::Client,
                format!("MCP tool `{tool}` answered text that is not JSON, and its declared result is not a string"),
            )
        }),
        None => serde_json::to_value(&answer.content).map_err(|_| {
            error(
                ToolErrorKind::Client,
                format!("MCP tool `{tool}` answered content that cannot be read"),
            )
        }),
    }
}

/// A failed call as a tool error. `server` and `tool` are names from the configuration and the
/// artifact; the server's own error message is shown (it is the tool's answer to the model).
pub(crate) fn map_failure(server: &str, tool: &str, failure: ServiceError) -> ToolError {
    match failure {
        ServiceError::McpError(refusal) => error(
            ToolErrorKind::Client,
            format!(
                "MCP server `{server}` refused the call of `{tool}` ({}): {}",
                refusal.code.0,
                bounded(&refusal.message)
            ),
        ),
        ServiceError::Timeout { timeout } => error(
            ToolErrorKind::Timeout,
            format!("MCP server `{server}` did not answer within {} ms", timeout.as_millis()),
        ),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => error(
            ToolErrorKind::Connection,
            format!(
                "the connection to MCP server `{server}` broke during the call of `{tool}`: it may or may not have run"
            ),
        ),
        ServiceError::Cancelled { .. } => error(ToolErrorKind::Failed, "the call was cancelled"),
        _ => error(
            ToolErrorKind::Client,
            format!("MCP server `{server}` answered the call of `{tool}` in a way this runtime does not support"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::CallToolResult;
    use serde_json::json;

    use super::*;

    fn answer(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    fn string() -> Schema {
        Schema::from_value(&json!({"type": "string"}))
    }

    #[test]
    fn answers_become_results() {
        let text = answer(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}));
        assert_eq!(map_result("t", text.clone(), Some(&string())), Ok(json!("a\nb")));
        assert_eq!(map_result("t", text, None), Ok(json!("a\nb")));
        let json_text = answer(json!({"content": [{"type": "text", "text": "{\"n\": 1}"}]}));
        let object = Schema::from_value(&json!({"type": "object"}));
        assert_eq!(map_result("t", json_text, Some(&object)), Ok(json!({"n": 1})));
        let prose = answer(json!({"content": [{"type": "text", "text": "hello"}]}));
        assert_eq!(
            map_result("t", prose, Some(&object)).unwrap_err().kind,
            ToolErrorKind::Client
        );
        let structured =
            answer(json!({"content": [{"type": "text", "text": "ignored"}], "structuredContent": {"t": 22}}));
        assert_eq!(map_result("t", structured.clone(), Some(&object)), Ok(json!({"t": 22})));
        assert_eq!(map_result("t", structured.clone(), None), Ok(json!({"t": 22})));
        assert_eq!(map_result("t", structured, Some(&string())), Ok(json!("ignored")));
        let image = answer(json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}));
        assert_eq!(
            map_result("t", image, None),
            Ok(json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}]))
        );
    }

    #[test]
    fn is_error_is_a_tool_error_the_model_sees() {
        let failed = answer(json!({"isError": true, "content": [{"type": "text", "text": "no such file"}]}));
        let error = map_result("read", failed, Some(&string())).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::Failed);
        assert_eq!(error.message, "MCP tool `read` reported an error: no such file");
        let long = answer(json!({"isError": true, "content": [{"type": "text", "text": "é".repeat(5000)}]}));
        assert!(map_result("read", long, None).unwrap_err().message.len() < MAX_ERROR_TEXT + 100);
    }
}
