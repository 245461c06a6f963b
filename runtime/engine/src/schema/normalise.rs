//! The normal form of a valid value, as the approval package's `normalized_arguments` shows it
//! and the fingerprint and idempotency keys bind it: defaults filled in and integers written as
//! integers, so that two spellings of one action are one action.
//!
//! How deep it goes: through `properties` of objects (at every depth: a missing property with a
//! `default` gets the default, a present one is normalised by its own schema) and through
//! `items` of arrays (when `items` is one schema). It does not follow `$ref`, `allOf`, `anyOf`,
//! `oneOf`, `if`/`then`/`else`, `additionalProperties` or `patternProperties`: there is no one
//! schema to take a default from there. Property order needs no work: canonical JSON sorts keys.

use serde_json::{Map, Number, Value};

/// The largest integer an `f64` holds exactly (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// `value` in normal form under `schema` (draft 2020-12). Call it on a value the schema
/// accepts; it never fails, and a value it cannot read is returned as it is.
///
/// - An object property that is absent, whose schema has a `default`, is set to that default
///   (itself normalised). A property present as `null` stays `null`.
/// - A number whose schema's `type` is `integer` (alone or with `null`) and that JSON wrote as
///   a float with no fraction, such as `5900.0`, becomes the integer `5900`.
pub fn normalise(schema: &Value, value: &Value) -> Value {
    let Value::Object(schema) = schema else {
        return value.clone();
    };
    match value {
        Value::Object(fields) => Value::Object(normalise_object(schema, fields)),
        Value::Array(items) => match schema.get("items") {
            Some(item_schema @ Value::Object(_)) => {
                Value::Array(items.iter().map(|item| normalise(item_schema, item)).collect())
            }
            _ => value.clone(),
        },
        Value::Number(number) if wants_integer(schema) => whole(number).map_or_else(|| value.clone(), Value::Number),
        _ => value.clone(),
    }
}

fn normalise_object(schema: &Map<String, Value>, fields: &Map<String, Value>) -> Map<String, Value> {
    let mut out = fields.clone();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return out;
    };
    for (name, property) in properties {
        match fields.get(name) {
            Some(present) => {
                out.insert(name.clone(), normalise(property, present));
            }
            None => {
                if let Some(default) = property.get("default") {
                    out.insert(name.clone(), normalise(property, default));
                }
            }
        }
    }
    out
}

fn wants_integer(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "integer",
        Some(Value::Array(kinds)) => {
            kinds.iter().any(|kind| kind == "integer") && !kinds.iter().any(|kind| kind == "number")
        }
        _ => false,
    }
}

/// The integer a float with no fraction stands for, when it is exact.
fn whole(number: &Number) -> Option<Number> {
    if !number.is_f64() {
        return None;
    }
    let float = number.as_f64()?;
    if float.fract() != 0.0 || float.abs() > EXACT {
        return None;
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a whole float within ±2^53 is an exact i64"
    )]
    let integer = float as i64;
    Some(Number::from(integer))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fills_defaults_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "currency": {"type": "string", "default": "EUR"},
                "note": {"type": ["string", "null"], "default": "none"},
                "shipping": {
                    "type": "object",
                    "default": {},
                    "properties": {"speed": {"type": "string", "default": "normal"}}
                },
                "lines": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"qty": {"type": "integer", "default": 1}}}
                }
            }
        });
        let value = json!({"note": null, "lines": [{}, {"qty": 3.0}]});
        assert_eq!(
            normalise(&schema, &value),
            json!({
                "currency": "EUR",
                "note": null,
                "shipping": {"speed": "normal"},
                "lines": [{"qty": 1}, {"qty": 3}]
            })
        );
    }

    #[test]
    fn integers_are_written_as_integers_only_when_the_schema_says_integer() {
        let value: Value = serde_json::from_str("5900.0").unwrap();
        assert_eq!(normalise(&json!({"type": "integer"}), &value).to_string(), "5900");
        assert_eq!(
            normalise(&json!({"type": ["integer", "null"]}), &value).to_string(),
            "5900"
        );
        assert_eq!(normalise(&json!({"type": "number"}), &value).to_string(), "5900.0");
        assert_eq!(
            normalise(&json!({"type": ["integer", "number"]}), &value).to_string(),
            "5900.0"
        );
        let big: Value = serde_json::from_str("1e300").unwrap();
        assert_eq!(normalise(&json!({"type": "integer"}), &big), big);
        let fraction: Value = serde_json::from_str("1.5").unwrap();
        assert_eq!(normalise(&json!({"type": "integer"}), &fraction), fraction);
    }

    #[test]
    fn leaves_what_it_cannot_read() {
        assert_eq!(normalise(&json!(true), &json!({"a": 1})), json!({"a": 1}));
        let schema = json!({"anyOf": [{"properties": {"a": {"default": 1}}}]});
        assert_eq!(normalise(&schema, &json!({})), json!({}));
    }
}
