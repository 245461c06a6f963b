//! JSON Schemas inside the artifact, kept as their canonical JSON text.
//!
//! A runtime compiles a schema into a validator when it needs one; until then the text is all it
//! has to keep. Holding each schema as one string instead of a tree of maps makes loading a large
//! artifact several times cheaper (one allocation per schema instead of dozens) and keeps the
//! loaded artifact small. Loading still proves every schema is well-formed JSON, and the seal
//! covers the text byte for byte.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::canonical_json;

/// A JSON Schema (draft 2020-12) as canonical JSON text: sorted keys, no insignificant
/// whitespace, the number and string forms of [`canonical_json`].
///
/// Two schemas are equal when their texts are; for canonical texts that is equality of the JSON
/// values. Every schema the compiler writes, and every schema read from a sealed file, is
/// canonical: the seal is the hash of canonical bytes.
///
/// It is (de)serialised as embedded JSON with `serde_json` (a `RawValue`), so other serde formats
/// cannot hold it, and a pretty printer writes it compact: print `serde_json::to_value` of the
/// artifact to indent schemas too.
#[derive(Clone)]
pub struct Schema(Box<RawValue>);

impl Schema {
    /// The schema whose JSON value is `value`.
    pub fn from_value(value: &Value) -> Self {
        let text = canonical_json(value)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| RawValue::from_string(text).ok());
        // A `Value` always has canonical text (its numbers are finite, its strings UTF-8), so the
        // fallback is never taken; if it were, `null` is no schema and sealing refuses it.
        Self(text.unwrap_or_else(|| RawValue::NULL.to_owned()))
    }

    /// The canonical JSON text.
    pub fn as_json(&self) -> &str {
        self.0.get()
    }

    /// The schema as a JSON value, e.g. to compile a validator from it.
    pub fn to_value(&self) -> Value {
        // The text was checked to be one JSON value when this schema was made or read.
        serde_json::from_str(self.as_json()).unwrap_or(Value::Null)
    }

    /// Whether the schema is a JSON object (as opposed to `true`, `false` or a non-schema).
    pub fn is_object(&self) -> bool {
        self.as_json().trim_start().starts_with('{')
    }

    /// Whether the text is a schema at all: an object, `true` or `false`.
    pub fn is_schema(&self) -> bool {
        let text = self.as_json().trim();
        self.is_object() || text == "true" || text == "false"
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Self {
        Self::from_value(&value)
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.as_json() == other.as_json()
    }
}

impl Eq for Schema {}

/// Schemas order by their canonical text, so a list holding them sorts deterministically.
impl PartialOrd for Schema {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Schema {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_json().cmp(other.as_json())
    }
}

impl std::hash::Hash for Schema {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_json().hash(state);
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_json())
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_json())
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Schema;

    #[test]
    fn the_text_is_canonical_and_round_trips() {
        let value =
            json!({"type": "object", "properties": {"b": {"type": "number", "maximum": 1.5}, "a": {"const": "é\n"}}});
        let schema = Schema::from_value(&value);
        assert_eq!(
            schema.as_json(),
            r#"{"properties":{"a":{"const":"é\n"},"b":{"maximum":1.5,"type":"number"}},"type":"object"}"#
        );
        assert_eq!(schema.to_value(), value);
        let read: Schema = serde_json::from_str(&serde_json::to_string(&schema).unwrap()).unwrap();
        assert_eq!(read, schema);
        // Read from a JSON tree (the loader's full path), the text is the same canonical text.
        let from_tree: Schema = serde_json::from_value(value).unwrap();
        assert_eq!(from_tree, schema);
    }

    #[test]
    fn kinds() {
        assert!(Schema::from_value(&json!({})).is_object());
        assert!(Schema::from_value(&json!(true)).is_schema());
        assert!(!Schema::from_value(&json!(true)).is_object());
        assert!(!Schema::from_value(&json!("object")).is_schema());
        assert!(!Schema::from_value(&json!(null)).is_schema());
    }
}
