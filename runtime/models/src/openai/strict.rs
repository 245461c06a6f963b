//! Whether a JSON Schema meets OpenAI's rules for `strict` structured output: every object
//! lists all its properties in `required` and sets `additionalProperties: false`, the root is an
//! object, and only the supported keywords appear (no `oneOf`, `allOf`, `not`, `if`,
//! `minLength`, `uniqueItems`, `patternProperties`, …). A schema that breaks a rule is sent with
//! `strict: false` instead (the engine still checks every answer against it).
//!
//! The walk is iterative: a schema's depth is the author's, never the stack's.

use serde_json::{Map, Value};

/// The keywords strict mode accepts.
const SUPPORTED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The deepest nesting of objects strict mode accepts.
const MAX_OBJECT_DEPTH: usize = 10;

/// Whether `schema` can be sent with `strict: true`.
pub fn is_strict_compatible(schema: &Value) -> bool {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return false;
    }
    let mut pending: Vec<(&Value, usize)> = vec![(schema, 0)];
    while let Some((node, depth)) = pending.pop() {
        let Value::Object(node) = node else {
            return false;
        };
        if node.keys().any(|keyword| !SUPPORTED.contains(&keyword.as_str())) {
            return false;
        }
        let mut depth = depth;
        if is_object_schema(node) {
            depth = depth.saturating_add(1);
            if depth > MAX_OBJECT_DEPTH || !closes_object(node) {
                return false;
            }
        }
        for keyword in ["properties", "$defs", "definitions"] {
            if let Some(children) = node.get(keyword) {
                let Value::Object(children) = children else {
                    return false;
                };
                pending.extend(children.values().map(|child| (child, depth)));
            }
        }
        if let Some(items) = node.get("items") {
            pending.push((items, depth));
        }
        if let Some(alternatives) = node.get("anyOf") {
            let Value::Array(alternatives) = alternatives else {
                return false;
            };
            pending.extend(alternatives.iter().map(|child| (child, depth)));
        }
    }
    true
}

/// Whether a schema node describes an object (`type` is or includes `object`, or it has
/// `properties`).
fn is_object_schema(node: &Map<String, Value>) -> bool {
    let typed = match node.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind.as_str() == Some("object")),
        _ => false,
    };
    typed || node.contains_key("properties")
}

/// Whether an object node sets `additionalProperties: false` and requires every property.
fn closes_object(node: &Map<String, Value>) -> bool {
    if node.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    let empty = Map::new();
    let properties = match node.get("properties") {
        Some(Value::Object(properties)) => properties,
        None => &empty,
        Some(_) => return false,
    };
    let required: Vec<&str> = match node.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        None => Vec::new(),
        Some(_) => return false,
    };
    properties.keys().all(|name| required.contains(&name.as_str()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn closed_objects_with_supported_keywords_are_strict() {
        assert!(is_strict_compatible(&json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["approve", "reject"]},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "notes": {"type": ["string", "null"]},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}},
                    "required": ["sku"],
                    "additionalProperties": false
                }}
            },
            "required": ["verdict", "score", "notes", "items"],
            "additionalProperties": false
        })));
        assert!(is_strict_compatible(
            &json!({"type": "object", "properties": {}, "additionalProperties": false})
        ));
    }

    #[test]
    fn anything_else_falls_back() {
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(!is_strict_compatible(&open), "additionalProperties missing");
        let optional =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
        assert!(!is_strict_compatible(&optional), "a property not required");
        let length = json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}},
            "required": ["a"], "additionalProperties": false});
        assert!(!is_strict_compatible(&length), "minLength");
        let nested_open = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}},
            "required": ["a"], "additionalProperties": false});
        assert!(!is_strict_compatible(&nested_open), "a nested open object");
        assert!(
            !is_strict_compatible(&json!({"type": "array", "items": {}})),
            "root not an object"
        );
        let one_of = json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}},
            "required": ["a"], "additionalProperties": false});
        assert!(!is_strict_compatible(&one_of), "oneOf");
        let mut deep = json!({"type": "object", "properties": {}, "additionalProperties": false});
        for _ in 0..10 {
            deep =
                json!({"type": "object", "properties": {"d": deep}, "required": ["d"], "additionalProperties": false});
        }
        assert!(!is_strict_compatible(&deep), "deeper than 10 objects");
    }
}
