//! The keywords of JSON Schema draft 2020-12 and a walk over the places of a schema where
//! keywords are expected (the schema itself and every subschema), which the checks share.

use super::pointer;
use serde_json::{Map, Value};

/// Every keyword draft 2020-12 defines (all vocabularies), plus `definitions` and
/// `dependencies`, which its meta-schema still accepts for compatibility.
pub const KEYWORDS: &[&str] = &[
    // core
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    // applicator
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    // unevaluated
    "unevaluatedItems",
    "unevaluatedProperties",
    // validation
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    // meta-data
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    // format, content
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    // kept by the 2020-12 meta-schema for compatibility
    "definitions",
    "dependencies",
    "$recursiveAnchor",
    "$recursiveRef",
];

/// The seven JSON Schema type names.
pub const TYPE_NAMES: &[&str] = &["array", "boolean", "integer", "null", "number", "object", "string"];

/// Keywords whose value is one subschema.
pub(crate) const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// Keywords whose value maps names to subschemas.
pub(crate) const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Keywords whose value is a list of subschemas.
pub(crate) const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Every place of `root` where keywords are expected and an object is written: the root and
/// each subschema, with its pointer, in document order. Iterative.
pub(crate) fn schema_objects(root: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), root)];
    while let Some((at, value)) = stack.pop() {
        let Value::Object(map) = value else { continue };
        let mut children = Vec::new();
        for (key, sub) in map {
            let key = key.as_str();
            if ONE_SCHEMA.contains(&key) {
                children.push((pointer::child(&at, key), sub));
            } else if SCHEMA_MAPS.contains(&key)
                && let Value::Object(entries) = sub
            {
                let here = pointer::child(&at, key);
                children.extend(entries.iter().map(|(name, s)| (pointer::child(&here, name), s)));
            } else if SCHEMA_LISTS.contains(&key)
                && let Value::Array(items) = sub
            {
                let here = pointer::child(&at, key);
                children.extend(items.iter().enumerate().map(|(i, s)| (pointer::index(&here, i), s)));
            }
        }
        out.push((at, map));
        stack.extend(children.into_iter().rev());
    }
    out
}

/// Whether `key` is a keyword of draft 2020-12 (or an `x-` extension, which is deliberate).
pub(crate) fn is_known(key: &str) -> bool {
    KEYWORDS.contains(&key) || key.starts_with("x-")
}

/// A hint for keywords of other drafts or dialects that 2020-12 spells differently.
pub(crate) fn legacy_hint(key: &str) -> Option<&'static str> {
    Some(match key {
        "additionalItems" => "draft 2020-12 writes `prefixItems` for the leading items and `items` for the rest",
        "id" => "draft 2020-12 writes `$id`",
        "nullable" => "draft 2020-12 has no `nullable`: write `\"type\": [\"string\", \"null\"]`",
        "example" => "draft 2020-12 writes `examples`, a list",
        "optional" => "draft 2020-12 marks properties as required with `required`; the others are optional",
        _ => return None,
    })
}
