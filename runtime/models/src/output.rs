//! An agent's `output` schema as a provider is given it. Both providers want an object at the
//! root (OpenAI's `response_format`, Anthropic's tool `input_schema`), so any other schema is
//! wrapped as the single required property `value` and the answer unwrapped again: the engine
//! always receives the bare answer as JSON text.

use serde_json::{Value, json};

/// The property a non-object output schema is wrapped in.
pub const WRAPPED_PROPERTY: &str = "value";

/// The schema as sent, and whether it was wrapped.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputShape {
    /// An object schema.
    pub schema: Value,
    /// Whether `schema` wraps the agent's schema in [`WRAPPED_PROPERTY`].
    pub wrapped: bool,
}

impl OutputShape {
    /// The shape of `schema`.
    pub fn of(schema: &Value) -> Self {
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            return Self {
                schema: schema.clone(),
                wrapped: false,
            };
        }
        Self {
            schema: json!({
                "type": "object",
                "properties": {WRAPPED_PROPERTY: schema},
                "required": [WRAPPED_PROPERTY],
                "additionalProperties": false,
            }),
            wrapped: true,
        }
    }

    /// The answer's text the engine checks, from the JSON the model wrote for the sent schema:
    /// unwrapped when the schema was wrapped (text that is not JSON, or has no `value`, is
    /// returned as written and fails the engine's check).
    pub fn answer(&self, written: &str) -> String {
        if !self.wrapped {
            return written.to_owned();
        }
        match serde_json::from_str::<Value>(written) {
            Ok(Value::Object(mut object)) => match object.remove(WRAPPED_PROPERTY) {
                Some(inner) => inner.to_string(),
                None => written.to_owned(),
            },
            _ => written.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_sent_as_they_are_and_others_wrapped() {
        let object = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let shape = OutputShape::of(&object);
        assert!(!shape.wrapped);
        assert_eq!(shape.schema, object);
        assert_eq!(shape.answer(r#"{"a":1}"#), r#"{"a":1}"#);

        let list = json!({"type": "array", "items": {"type": "string"}});
        let shape = OutputShape::of(&list);
        assert!(shape.wrapped);
        assert_eq!(shape.schema["properties"]["value"], list);
        assert_eq!(shape.answer(r#"{"value": ["x", "y"]}"#), r#"["x","y"]"#);
        assert_eq!(shape.answer("oops"), "oops");
        assert_eq!(shape.answer(r#"{"other": 1}"#), r#"{"other": 1}"#);
    }
}
