//! What a schema violation says, keyword by keyword. The type message is seed 003's:
//! `expected boolean, got str`, the expected JSON Schema type and the received value's short
//! type name. Every other message names the constraint the value breaks and, like the type
//! message, never repeats the value itself: an answer, a tool result or a model's argument may
//! hold text nobody should see again in an error.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use super::path::JsonPath;

/// The short name of a JSON value's type, as seed 003 writes it: `str`, `int`, `float`,
/// `bool`, `null`, `list` or `dict`. A number is `int` when JSON wrote it without a fraction
/// or exponent that makes it a float (`1` is `int`, `1.0` and `1e3` are `float`).
pub fn short_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The path and message of one error.
pub(super) fn describe(error: &ValidationError<'_>, root: &Value) -> (JsonPath, String) {
    let path = JsonPath::from_pointer(error.instance_path().as_str(), root);
    let at = error.instance_path().as_str();
    // `additionalProperties: false` without `properties` fails as a `false` schema on the first
    // member: every property of the object is unexpected, so name them.
    if matches!(error.kind(), ValidationErrorKind::FalseSchema)
        && error.schema_path().as_str().ends_with("/additionalProperties")
        && let Some(Value::Object(object)) = root.pointer(at)
    {
        let keys: Vec<String> = object.keys().cloned().collect();
        return (path, unexpected(&keys));
    }
    let instance: &Value = error.instance();
    (path, message(error.kind(), instance, at))
}

fn unexpected(properties: &[String]) -> String {
    match properties {
        [one] => format!("unexpected property '{one}'"),
        many => format!("unexpected properties {}", names(many)),
    }
}

fn message(kind: &ValidationErrorKind, instance: &Value, at: &str) -> String {
    let got = short_type_name(instance);
    match kind {
        ValidationErrorKind::Type { kind } => format!("expected {}, got {got}", expected_types(kind)),
        ValidationErrorKind::Required { property } => {
            format!("missing required property {}", quoted(property))
        }
        ValidationErrorKind::AdditionalProperties { unexpected: properties }
        | ValidationErrorKind::UnevaluatedProperties { unexpected: properties } => unexpected(properties),
        ValidationErrorKind::AdditionalItems { limit } => format!("expected at most {limit} items"),
        ValidationErrorKind::UnevaluatedItems { .. } => "unexpected items".to_owned(),
        ValidationErrorKind::Enum { options } => format!("expected one of {}", list(options)),
        ValidationErrorKind::Constant { expected_value } => format!("expected {expected_value}"),
        ValidationErrorKind::Minimum { limit } => format!("expected a number >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("expected a number <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("expected a number > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("expected a number < {limit}"),
        ValidationErrorKind::MultipleOf { multiple_of } => format!("expected a multiple of {multiple_of}"),
        ValidationErrorKind::MinLength { limit } => {
            format!("expected at least {limit} {}", plural(*limit, "character"))
        }
        ValidationErrorKind::MaxLength { limit } => format!("expected at most {limit} {}", plural(*limit, "character")),
        ValidationErrorKind::MinItems { limit } => format!("expected at least {limit} {}", plural(*limit, "item")),
        ValidationErrorKind::MaxItems { limit } => format!("expected at most {limit} {}", plural(*limit, "item")),
        ValidationErrorKind::MinProperties { limit } => {
            format!("expected at least {limit} {}", plural(*limit, "property"))
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!("expected at most {limit} {}", plural(*limit, "property"))
        }
        ValidationErrorKind::UniqueItems => "expected unique items".to_owned(),
        ValidationErrorKind::Contains => "expected an item matching 'contains'".to_owned(),
        ValidationErrorKind::Pattern { pattern } => format!("does not match the pattern '{pattern}'"),
        ValidationErrorKind::BacktrackLimitExceeded { .. } | ValidationErrorKind::RegexEngineFailure { .. } => {
            "could not be matched against its pattern".to_owned()
        }
        ValidationErrorKind::Format { format } => format!("is not a valid '{format}'"),
        ValidationErrorKind::ContentEncoding { content_encoding } => {
            format!("is not valid '{content_encoding}' content")
        }
        ValidationErrorKind::FromUtf8 { .. } => "does not decode to UTF-8 text".to_owned(),
        ValidationErrorKind::ContentMediaType { content_media_type } => {
            format!("is not valid '{content_media_type}' content")
        }
        ValidationErrorKind::AnyOf { context } => {
            one_type_each(context, instance, at).unwrap_or_else(|| "matches none of the schemas in 'anyOf'".to_owned())
        }
        ValidationErrorKind::OneOfNotValid { context } => {
            one_type_each(context, instance, at).unwrap_or_else(|| "matches none of the schemas in 'oneOf'".to_owned())
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => "matches more than one of the schemas in 'oneOf'".to_owned(),
        ValidationErrorKind::Not { .. } => "matches the schema in 'not', which it must not".to_owned(),
        ValidationErrorKind::FalseSchema => "no value is allowed here".to_owned(),
        ValidationErrorKind::PropertyNames { error } => {
            format!(
                "has an invalid property name: {}",
                message(error.kind(), error.instance(), at)
            )
        }
        ValidationErrorKind::Custom { keyword, .. } => format!("fails '{keyword}'"),
        ValidationErrorKind::Referencing(_) => {
            "cannot be checked: the schema has a reference that does not resolve".to_owned()
        }
    }
}

/// `anyOf`/`oneOf` whose alternatives each failed on their type alone, at the value itself
/// (the usual `string or null`), read as one type error: `expected string or null, got int`.
fn one_type_each(context: &[Vec<ValidationError<'static>>], instance: &Value, at: &str) -> Option<String> {
    let mut expected = Vec::new();
    for errors in context {
        let [error] = errors.as_slice() else { return None };
        let ValidationErrorKind::Type { kind } = error.kind() else {
            return None;
        };
        if error.instance_path().as_str() != at {
            return None;
        }
        expected.extend(types(kind));
    }
    if expected.is_empty() {
        return None;
    }
    Some(format!(
        "expected {}, got {}",
        join_types(expected),
        short_type_name(instance)
    ))
}

fn types(kind: &TypeKind) -> Vec<JsonType> {
    match kind {
        TypeKind::Single(one) => vec![*one],
        TypeKind::Multiple(set) => set.iter().collect(),
    }
}

fn expected_types(kind: &TypeKind) -> String {
    join_types(types(kind))
}

/// `boolean`, `string or null`, `integer, string or null`: in the order given, `null` last,
/// each once.
fn join_types(mut kinds: Vec<JsonType>) -> String {
    kinds.dedup();
    let mut names: Vec<&str> = Vec::new();
    for kind in &kinds {
        if !names.contains(&kind.as_str()) && *kind != JsonType::Null {
            names.push(kind.as_str());
        }
    }
    if kinds.contains(&JsonType::Null) {
        names.push("null");
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_owned(),
        None => "nothing".to_owned(),
    }
}

fn quoted(property: &Value) -> String {
    match property {
        Value::String(name) => format!("'{name}'"),
        other => other.to_string(),
    }
}

fn names(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("'{name}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(options: &Value) -> String {
    match options {
        Value::Array(items) => items.iter().map(Value::to_string).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn plural(count: u64, noun: &str) -> String {
    match (count, noun) {
        (1, _) => noun.to_owned(),
        (_, "property") => "properties".to_owned(),
        _ => format!("{noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn short_type_names_are_the_seeds() {
        let values: Vec<Value> = serde_json::from_str(r#"["x", 1, -1, 1.0, 1e3, true, null, [], {}]"#).unwrap();
        let names: Vec<&str> = values.iter().map(short_type_name).collect();
        assert_eq!(
            names,
            ["str", "int", "int", "float", "float", "bool", "null", "list", "dict"]
        );
        assert_eq!(short_type_name(&json!(u64::MAX)), "int");
    }

    #[test]
    fn type_lists_put_null_last() {
        assert_eq!(join_types(vec![JsonType::Null, JsonType::String]), "string or null");
        assert_eq!(
            join_types(vec![JsonType::Integer, JsonType::Null, JsonType::String]),
            "integer, string or null"
        );
        assert_eq!(join_types(vec![JsonType::Boolean]), "boolean");
    }
}
