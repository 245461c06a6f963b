//! Reading JSON for the loader: plain `serde_json` parsing plus a refusal of duplicate keys.
//!
//! JSON leaves duplicate object keys undefined and parsers disagree on them (first wins, last
//! wins, error). A sealed file with duplicates could show one thing to a person's viewer and
//! another to the runtime, so the loader refuses them outright.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Parses `bytes` as one JSON value, refusing duplicate object keys.
///
/// The error text is `serde_json`'s, with its line and column.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let value = serde_json::from_slice::<Value>(bytes)?;
    serde_json::from_slice::<NoDuplicateKeys>(bytes)?;
    Ok(value)
}

/// Deserializes any JSON value and fails on the first object with a repeated key.
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_json() {
        let value = parse(br#"{"a": [1, {"b": 2}], "c": "d"}"#).unwrap();
        assert_eq!(value["a"][1]["b"], 2);
    }

    #[test]
    fn refuses_a_duplicate_key_at_any_depth() {
        let error = parse(br#"{"a": [{"b": 1, "b": 2}]}"#).unwrap_err();
        assert!(error.to_string().starts_with("duplicate key `b`"), "{error}");
    }
}
