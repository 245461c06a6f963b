//! JSON paths as the engine writes them in messages: `$` for the whole value, `.name` for an
//! object property whose name is an identifier, `["name"]` (a JSON string) for any other name,
//! and `[0]` for an array index: `$.items[0].sku`, `$["order id"]`.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathSegment {
    /// An array index.
    Index(usize),
    /// An object property.
    Key(String),
}

/// A location inside a JSON value, written `$.a.b[0]`. Ordered segment by segment (indexes
/// numerically), so sorted violations read top to bottom.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JsonPath(pub Vec<PathSegment>);

impl JsonPath {
    /// The path of the whole value, `$`.
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// The path one property further down.
    #[must_use]
    pub fn key(&self, name: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(PathSegment::Key(name.to_owned()));
        Self(segments)
    }

    /// The path of a JSON Pointer (RFC 6901) into `instance`. Whether a segment of digits is an
    /// index or a property name is decided by the value it steps into (an array or an object),
    /// which the pointer alone cannot tell.
    pub fn from_pointer(pointer: &str, instance: &Value) -> Self {
        let mut segments = Vec::new();
        let mut current = Some(instance);
        for raw in pointer.split('/').skip(1) {
            let name = raw.replace("~1", "/").replace("~0", "~");
            match (current, name.parse::<usize>()) {
                (Some(Value::Array(items)), Ok(index)) => {
                    current = items.get(index);
                    segments.push(PathSegment::Index(index));
                }
                (node, _) => {
                    current = node.and_then(|node| node.get(&name));
                    segments.push(PathSegment::Key(name));
                }
            }
        }
        Self(segments)
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for JsonPath {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("$")?;
        for segment in &self.0 {
            match segment {
                PathSegment::Index(index) => write!(formatter, "[{index}]")?,
                PathSegment::Key(name) if is_identifier(name) => write!(formatter, ".{name}")?,
                PathSegment::Key(name) => write!(formatter, "[{}]", Value::String(name.clone()))?,
            }
        }
        Ok(())
    }
}

impl Serialize for JsonPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn writes_dotted_names_brackets_and_indexes() {
        let instance = json!({"a": {"b": [{"c": 1}]}, "order id": 1, "0": {"1": true}});
        let cases = [
            ("", "$"),
            ("/a", "$.a"),
            ("/a/b/0/c", "$.a.b[0].c"),
            ("/order id", "$[\"order id\"]"),
            ("/0/1", "$[\"0\"][\"1\"]"),
            ("/a~1b~0c", "$[\"a/b~c\"]"),
        ];
        for (pointer, written) in cases {
            assert_eq!(
                JsonPath::from_pointer(pointer, &instance).to_string(),
                written,
                "{pointer}"
            );
        }
    }

    #[test]
    fn orders_indexes_numerically() {
        let instance = json!([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let ten = JsonPath::from_pointer("/10", &instance);
        let two = JsonPath::from_pointer("/2", &instance);
        assert!(two < ten);
        assert!(JsonPath::root() < two);
    }
}
