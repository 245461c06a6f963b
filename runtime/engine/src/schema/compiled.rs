//! One compiled JSON Schema (draft 2020-12) and what it says about a value: valid, the first
//! violation, or every violation in order.

use std::fmt;

use jsonschema::{Validator, draft202012};
use serde::Serialize;
use serde_json::Value;

use super::message::describe;
use super::normalise::normalise;
use super::path::JsonPath;

/// A compiled schema. Compiling never fetches anything: `$ref` resolves only inside the schema
/// (and to the bundled meta-schemas); `format` is an annotation, as draft 2020-12 says and as
/// the compiler's checks of scripted turns read it, so both agree on what is valid.
pub struct CompiledSchema {
    schema: Value,
    validator: Validator,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("CompiledSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// A schema that does not compile (a sealed artifact's never do: the loader proved them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the schema does not compile: {0}")]
pub struct SchemaCompileError(pub String);

/// One way a value breaks a schema: where, and what is wrong. Written `$.approved: expected
/// boolean, got str`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SchemaViolation {
    /// Where in the value.
    pub path: JsonPath,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.path, self.message)
    }
}

impl CompiledSchema {
    /// Compiles a schema.
    ///
    /// # Errors
    ///
    /// [`SchemaCompileError`] when it is not a valid draft 2020-12 schema, or a `$ref` points
    /// outside it.
    pub fn compile(schema: &Value) -> Result<Self, SchemaCompileError> {
        let validator = draft202012::options()
            .offline()
            .build(schema)
            .map_err(|error| SchemaCompileError(error.to_string()))?;
        Ok(Self {
            schema: schema.clone(),
            validator,
        })
    }

    /// The schema compiled.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether `value` is valid (the fast path: no messages are built).
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Every violation, sorted by path (indexes numerically) then message, each once.
    pub fn violations(&self, value: &Value) -> Vec<SchemaViolation> {
        if self.is_valid(value) {
            return Vec::new();
        }
        let mut found: Vec<SchemaViolation> = self
            .validator
            .iter_errors(value)
            .map(|error| {
                let (path, message) = describe(&error, value);
                SchemaViolation { path, message }
            })
            .collect();
        found.sort();
        found.dedup();
        found
    }

    /// The first violation, the first of [`Self::violations`] (so the same value always gets
    /// the same message, whatever order the keywords were checked in).
    ///
    /// # Errors
    ///
    /// The first [`SchemaViolation`].
    pub fn check(&self, value: &Value) -> Result<(), SchemaViolation> {
        match self.violations(value).into_iter().next() {
            Some(first) => Err(first),
            None => Ok(()),
        }
    }

    /// Checks `value`, then gives its normal form ([`normalise`]: defaults filled in, whole
    /// numbers of `integer`s written as integers). The normal form is checked again, so a
    /// default that breaks its own schema is reported rather than passed on.
    ///
    /// # Errors
    ///
    /// The first [`SchemaViolation`] of the value, or of its normal form.
    pub fn check_and_normalise(&self, value: &Value) -> Result<Value, SchemaViolation> {
        self.check(value)?;
        let normal = normalise(&self.schema, value);
        if normal != *value {
            self.check(&normal)?;
        }
        Ok(normal)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn first(schema: &Value, value: &Value) -> String {
        CompiledSchema::compile(schema)
            .unwrap()
            .check(value)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn the_seed_example() {
        let schema =
            json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]});
        assert_eq!(
            first(&schema, &json!({"approved": "yes"})),
            "$.approved: expected boolean, got str"
        );
    }

    #[test]
    fn remote_references_are_never_fetched() {
        let error = CompiledSchema::compile(&json!({"$ref": "https://example.com/schema.json"})).unwrap_err();
        assert!(error.0.contains("example.com"), "{error}");
        let file = CompiledSchema::compile(&json!({"$ref": "file:///etc/passwd"})).unwrap_err();
        assert!(file.to_string().starts_with("the schema does not compile"), "{file}");
    }

    #[test]
    fn violations_are_sorted_and_first_is_the_first_of_them() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "string"}}},
            "required": ["c"]
        });
        let value = json!({"a": "x", "b": ["ok", 1, "ok", 2, 3, 4, 5, 6, 7, 8, 9, 10]});
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let all: Vec<String> = compiled.violations(&value).iter().map(ToString::to_string).collect();
        assert_eq!(
            all.first().map(String::as_str),
            Some("$: missing required property 'c'")
        );
        assert_eq!(all.get(1).map(String::as_str), Some("$.a: expected integer, got str"));
        assert_eq!(all.get(2).map(String::as_str), Some("$.b[1]: expected string, got int"));
        assert_eq!(
            all.last().map(String::as_str),
            Some("$.b[11]: expected string, got int")
        );
        assert_eq!(
            compiled.check(&value).unwrap_err().to_string(),
            "$: missing required property 'c'"
        );
        assert!(compiled.check(&json!({"c": 1})).is_ok());
    }

    #[test]
    fn normal_form_is_checked_again() {
        let compiled = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "default": "seven"}}
        }))
        .unwrap();
        assert_eq!(
            compiled.check_and_normalise(&json!({})).unwrap_err().to_string(),
            "$.n: expected integer, got str"
        );
        assert_eq!(
            compiled.check_and_normalise(&json!({"n": 7.0})).unwrap(),
            json!({"n": 7})
        );
    }
}
