//! `TENX0401`: validity under draft 2020-12. Every meta-schema violation (with `format`
//! asserted, so every bad `pattern` regex and URI is found in the same pass), a `$schema` other
//! than 2020-12, every `$ref` that points nowhere or outside the schema, and what compiling the
//! schema still finds. Messages are reworded for people; each points at the text that wrote the
//! offending value through the span map.

use super::keywords::{self, TYPE_NAMES};
use super::{Lowered, pointer};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ReferencingError, ValidationError, Validator, draft202012};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::LazyLock;
use tenx_diagnostics::{Code, Diagnostic};

/// The draft 2020-12 meta-schema's URI, the only `$schema` accepted.
pub(crate) const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The 2020-12 meta-schema validator with `format` asserted (`pattern` must be a regex, `$ref`
/// a URI reference). Built once, from the meta-schemas bundled in `jsonschema`; never fetches.
static META: LazyLock<Option<Validator>> = LazyLock::new(|| {
    let root = serde_json::json!({ "$ref": DRAFT_2020_12 });
    draft202012::options()
        .should_validate_formats(true)
        .offline()
        .build(&root)
        .ok()
});

/// One problem, before it becomes a diagnostic.
struct Problem {
    pointer: String,
    /// Point at the key of `pointer` rather than its value (a bad `patternProperties` name).
    at_key: bool,
    message: String,
    label: String,
    help: Option<String>,
}

impl Problem {
    fn new(pointer: String, message: String, label: &str) -> Self {
        Problem {
            pointer,
            at_key: false,
            message,
            label: label.to_string(),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Reports what makes `lowered` invalid, except inside inlined named schemas and at text that
/// is not JSON (both reported elsewhere).
pub(crate) fn check(lowered: &Lowered, objects: &[(String, &Map<String, Value>)], diagnostics: &mut Vec<Diagnostic>) {
    let root = &lowered.value;
    let mut problems: Vec<Problem> = if plainly_valid(root, objects) {
        Vec::new()
    } else {
        meta_errors(root).iter().flat_map(describe).collect()
    };
    problems.extend(dialects(objects));
    problems.extend(references(root, objects));
    if problems.is_empty()
        && needs_build(objects)
        && let Err(e) = draft202012::options().offline().build(root)
    {
        problems.push(build_error(&e, objects));
    }
    let mut seen = BTreeSet::new();
    for problem in problems {
        if lowered.is_foreign(&problem.pointer)
            || lowered.is_invalid(&problem.pointer)
            || !seen.insert(problem.pointer.clone())
        {
            continue;
        }
        let (file, span) = if problem.at_key {
            lowered.key_of(&problem.pointer)
        } else {
            let origin = lowered.origin_of(&problem.pointer);
            (origin.file, origin.span)
        };
        diagnostics.push(
            Diagnostic::new(Code::TENX0401, problem.message, file, span)
                .label(problem.label)
                .maybe_help(problem.help),
        );
    }
}

/// Whether every schema object uses only common keywords with values of the right shape, so the
/// meta-schema has nothing to say about it. Most schemas (all that typed parameters produce,
/// and most written inline) pass this, and then the meta-schema validator is never built or
/// run, which is most of the cost of checking a small program. Anything else (`pattern`,
/// `$ref`, `$defs`, `allOf`, a keyword it does not know, an odd value) goes to the full
/// meta-schema validation. It never accepts what the meta-schema would refuse.
fn plainly_valid(root: &Value, objects: &[(String, &Map<String, Value>)]) -> bool {
    const TYPES: &[&str] = &["string", "integer", "number", "boolean", "object", "array", "null"];
    let is_type = |v: &Value| v.as_str().is_some_and(|t| TYPES.contains(&t));
    let is_schema = |v: &Value| v.is_object() || v.is_boolean();
    let is_count = |v: &Value| v.as_u64().is_some();
    if !root.is_object() {
        return false;
    }
    objects.iter().all(|(_, map)| {
        map.iter().all(|(key, value)| match key.as_str() {
            "type" => {
                is_type(value)
                    || value.as_array().is_some_and(|a| {
                        !a.is_empty()
                            && a.iter().all(is_type)
                            && a.iter().enumerate().all(|(i, t)| !a.iter().skip(i + 1).any(|u| u == t))
                    })
            }
            "properties" => value.as_object().is_some_and(|m| m.values().all(is_schema)),
            "required" => value.as_array().is_some_and(|a| {
                a.iter().all(Value::is_string)
                    && a.iter().enumerate().all(|(i, x)| !a.iter().skip(i + 1).any(|y| y == x))
            }),
            "items" | "additionalProperties" => is_schema(value),
            "enum" => value.is_array(),
            "examples" => value.is_array(),
            "const" | "default" => true,
            "description" | "title" => value.is_string(),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => is_count(value),
            "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" => value.is_boolean(),
            _ => false,
        })
    })
}

fn meta_errors(root: &Value) -> Vec<ValidationError<'static>> {
    match &*META {
        Some(validator) if validator.is_valid(root) => Vec::new(),
        Some(validator) => validator.iter_errors(root).map(ValidationError::to_owned).collect(),
        None => draft202012::meta::validator()
            .iter_errors(root)
            .map(ValidationError::to_owned)
            .collect(),
    }
}

/// How to name the value at `pointer` in a message.
fn subject(at: &str) -> String {
    let Some(last) = pointer::last(at) else {
        return "the schema".to_string();
    };
    let parent = pointer::parent(at).and_then(pointer::last);
    match parent {
        Some(p) if last.parse::<usize>().is_ok() => format!("this entry of `{p}`"),
        Some(p) if keywords::SCHEMA_MAPS.contains(&p.as_str()) => format!("the schema of `{last}` in `{p}`"),
        _ => format!("`{last}`"),
    }
}

/// "a string", "a list", … for a JSON value.
pub(crate) fn describe_value(value: &Value) -> &'static str {
    match value {
        Value::Null => "`null`",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

fn type_phrase(t: JsonType) -> &'static str {
    match t {
        JsonType::Array => "a list",
        JsonType::Boolean => "`true` or `false`",
        JsonType::Integer => "a whole number",
        JsonType::Null => "`null`",
        JsonType::Number => "a number",
        JsonType::Object => "a map",
        JsonType::String => "a string",
    }
}

/// "a string", "a map or `true` or `false`", … for what a `type` error expected.
pub(crate) fn expected(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => type_phrase(*t).to_string(),
        TypeKind::Multiple(set) => {
            let types: Vec<JsonType> = set.iter().collect();
            if types.len() == 2 && types.contains(&JsonType::Object) && types.contains(&JsonType::Boolean) {
                return "a schema (a map, `true` or `false`)".to_string();
            }
            types.into_iter().map(type_phrase).collect::<Vec<_>>().join(" or ")
        }
    }
}

/// Short JSON for a message: `"strng"`, `-1`, `[…]`.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        return text;
    }
    let cut: String = text.chars().take(37).collect();
    format!("{cut}…")
}

fn describe(e: &ValidationError<'_>) -> Vec<Problem> {
    let at = e.instance_path().as_str().to_string();
    let what = subject(&at);
    let instance: &Value = e.instance();
    let schema_path = e.schema_path().as_str();
    let one = |message: String, label: &str| vec![Problem::new(at.clone(), message, label)];
    match e.kind() {
        ValidationErrorKind::AnyOf { .. } if schema_path.ends_with("/properties/type/anyOf") => {
            type_keyword(&at, instance)
        }
        ValidationErrorKind::Type { .. } if at.is_empty() => one(
            format!("a JSON Schema must be a map, not {}", describe_value(instance)),
            "not a schema",
        ),
        ValidationErrorKind::Type { kind } => one(
            format!("{what} must be {}, not {}", expected(kind), describe_value(instance)),
            "wrong kind of value",
        ),
        ValidationErrorKind::Minimum { limit }
            if schema_path.contains("nonNegativeInteger") && limit.as_f64() == Some(0.0) =>
        {
            one(format!("{what} must not be negative"), "a negative number")
        }
        ValidationErrorKind::Minimum { limit } => one(format!("{what} must be at least {limit}"), "too small"),
        ValidationErrorKind::MinItems { limit } => {
            let noun = if *limit == 1 { "entry" } else { "entries" };
            one(format!("{what} must have at least {limit} {noun}"), "too few entries")
        }
        ValidationErrorKind::UniqueItems => duplicate_entry(&at, &what, instance),
        ValidationErrorKind::Format { format } => {
            let text = instance.as_str().unwrap_or_default();
            match format.as_str() {
                "regex" => vec![regex_problem(at.clone(), text)],
                "uri-reference" | "uri" => one(format!("`{text}` is not a valid URI"), "not a URI"),
                _ => one(format!("`{text}` is not a valid `{format}`"), "wrong format"),
            }
        }
        ValidationErrorKind::PropertyNames { error } => {
            let key = error.instance().as_str().unwrap_or_default().to_string();
            let mut problem = match error.kind() {
                ValidationErrorKind::Format { format } if format == "regex" => {
                    regex_problem(pointer::child(&at, &key), &key)
                }
                _ => Problem::new(
                    pointer::child(&at, &key),
                    format!("`{key}` is not allowed as a name in {what}"),
                    "invalid name",
                ),
            };
            problem.at_key = true;
            vec![problem]
        }
        _ => one(format!("{what} is invalid: {}", e.masked()), "invalid value"),
    }
}

/// A bad `type`: an unknown type name, a list with a bad or repeated entry, or another value.
fn type_keyword(at: &str, instance: &Value) -> Vec<Problem> {
    match instance {
        Value::String(name) => vec![unknown_type(at.to_string(), name)],
        Value::Array(items) => {
            let mut problems = Vec::new();
            let mut seen = BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let here = pointer::index(at, i);
                match item {
                    Value::String(name) if !TYPE_NAMES.contains(&name.as_str()) => {
                        problems.push(unknown_type(here, name))
                    }
                    Value::String(name) if !seen.insert(name.as_str()) => problems.push(
                        Problem::new(here, format!("`type` lists `{name}` twice"), "listed again")
                            .help("remove one of them"),
                    ),
                    Value::String(_) => {}
                    other => problems.push(Problem::new(
                        here,
                        format!(
                            "this entry of `type` must be a type name, not {}",
                            describe_value(other)
                        ),
                        "not a type name",
                    )),
                }
            }
            if problems.is_empty() {
                problems.push(Problem::new(
                    at.to_string(),
                    "`type` must not be an empty list".to_string(),
                    "no type",
                ));
            }
            problems
        }
        other => vec![
            Problem::new(
                at.to_string(),
                format!(
                    "`type` must be a type name or a list of type names, not {}",
                    describe_value(other)
                ),
                "not a type name",
            )
            .help(types_help()),
        ],
    }
}

fn types_help() -> String {
    "the types are `array`, `boolean`, `integer`, `null`, `number`, `object` and `string`".to_string()
}

fn unknown_type(at: String, name: &str) -> Problem {
    let alias = match name.to_ascii_lowercase().as_str() {
        "int" | "long" | "i32" | "i64" | "uint" => Some("integer"),
        "bool" => Some("boolean"),
        "float" | "double" | "decimal" => Some("number"),
        "str" | "text" => Some("string"),
        "list" | "tuple" | "vec" => Some("array"),
        "dict" | "map" | "record" | "hash" => Some("object"),
        "none" | "nil" => Some("null"),
        lower if TYPE_NAMES.contains(&lower) => TYPE_NAMES.iter().copied().find(|t| *t == lower),
        _ => None,
    };
    let help = alias
        .or_else(|| crate::did_you_mean(name, TYPE_NAMES.iter()))
        .map(|t| format!("did you mean `{t}`?"))
        .unwrap_or_else(types_help);
    Problem::new(at, format!("`{name}` is not a JSON Schema type"), "unknown type").help(help)
}

fn duplicate_entry(at: &str, what: &str, instance: &Value) -> Vec<Problem> {
    let Value::Array(items) = instance else {
        return vec![Problem::new(
            at.to_string(),
            format!("{what} has repeated entries"),
            "repeated entries",
        )];
    };
    for (j, item) in items.iter().enumerate() {
        if items.iter().take(j).any(|earlier| earlier == item) {
            return vec![
                Problem::new(
                    pointer::index(at, j),
                    format!("{what} lists {} twice", in_ticks(item)),
                    "listed again",
                )
                .help("remove one of them"),
            ];
        }
    }
    vec![Problem::new(
        at.to_string(),
        format!("{what} has repeated entries"),
        "repeated entries",
    )]
}

fn in_ticks(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{s}`"),
        other => format!("`{}`", short(other)),
    }
}

fn regex_problem(at: String, text: &str) -> Problem {
    let reason = match regex::Regex::new(text) {
        Err(e) => e
            .to_string()
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: ").map(str::to_string)),
        Ok(_) => None,
    };
    let problem = Problem::new(
        at,
        format!("`{text}` is not a valid regular expression"),
        "invalid regular expression",
    );
    match reason {
        Some(reason) => problem.help(reason),
        None => problem.help("JSON Schema patterns use ECMA-262 regular expression syntax"),
    }
}

/// A `$schema` that names another dialect.
fn dialects(objects: &[(String, &Map<String, Value>)]) -> Vec<Problem> {
    let mut out = Vec::new();
    for (at, map) in objects {
        let Some(Value::String(uri)) = map.get("$schema") else {
            continue;
        };
        if uri.trim_end_matches('#') != DRAFT_2020_12 {
            out.push(
                Problem::new(pointer::child(at, "$schema"), format!("`{uri}` is not JSON Schema draft 2020-12"), "another dialect")
                    .help(format!("tenx checks and validates every schema under draft 2020-12; write `\"$schema\": \"{DRAFT_2020_12}\"` or leave `$schema` out")),
            );
        }
    }
    out
}

/// Local `$ref`s that point nowhere, and references outside the schema, which tenx never fetches.
/// Skipped when the schema declares an `$id` (references are then relative to it; compiling the
/// schema finds the bad ones).
fn references(root: &Value, objects: &[(String, &Map<String, Value>)]) -> Vec<Problem> {
    if objects.iter().any(|(_, m)| m.contains_key("$id")) {
        return Vec::new();
    }
    let anchors: BTreeSet<&str> = objects
        .iter()
        .flat_map(|(_, m)| {
            ["$anchor", "$dynamicAnchor"]
                .into_iter()
                .filter_map(|k| m.get(k).and_then(Value::as_str))
        })
        .collect();
    let mut out = Vec::new();
    for (at, map) in objects {
        for keyword in ["$ref", "$dynamicRef"] {
            let Some(Value::String(target)) = map.get(keyword) else {
                continue;
            };
            let here = pointer::child(at, keyword);
            let Some(fragment) = target.strip_prefix('#') else {
                out.push(outside(here, keyword, target));
                continue;
            };
            let Some(decoded) = pointer::percent_decode(fragment) else {
                out.push(Problem::new(
                    here,
                    format!("`{target}` is not a valid reference"),
                    "bad percent-encoding",
                ));
                continue;
            };
            if decoded.is_empty() {
                continue;
            }
            if decoded.starts_with('/') {
                if root.pointer(&decoded).is_none() {
                    out.push(nowhere(here, keyword, target, root, &decoded));
                }
            } else if !anchors.contains(decoded.as_str()) {
                let help = crate::did_you_mean(&decoded, anchors.iter())
                    .map(|a| format!("did you mean `#{a}`?"))
                    .unwrap_or_else(|| {
                        format!("declare `\"$anchor\": \"{decoded}\"` in the schema it should point to")
                    });
                out.push(Problem::new(here, format!("no `$anchor` is named `{decoded}`"), "points nowhere").help(help));
            }
        }
    }
    out
}

fn outside(at: String, keyword: &str, target: &str) -> Problem {
    Problem::new(
        at,
        format!("`{keyword}` to `{target}` points outside this schema"),
        "cannot be resolved",
    )
    .help("tenx never fetches schemas: copy the schema into `$defs` and write `\"$ref\": \"#/$defs/NAME\"`")
}

fn nowhere(at: String, keyword: &str, target: &str, root: &Value, decoded: &str) -> Problem {
    let suggestion = pointer::parent(decoded).and_then(|parent| {
        let last = pointer::last(decoded)?;
        let Value::Object(siblings) = root.pointer(parent)? else {
            return None;
        };
        let name = crate::did_you_mean(&last, siblings.keys())?;
        Some(pointer::fragment(&pointer::child(parent, name)))
    });
    let problem = Problem::new(
        at,
        format!("`{keyword}` points to `{target}`, which does not exist"),
        "points nowhere",
    );
    match suggestion {
        Some(s) => problem.help(format!("did you mean `{s}`?")),
        None => problem.help("a local reference is a JSON pointer into this schema, such as `#/$defs/NAME`"),
    }
}

fn needs_build(objects: &[(String, &Map<String, Value>)]) -> bool {
    objects.iter().any(|(_, m)| {
        ["$ref", "$dynamicRef", "$id", "$anchor", "$dynamicAnchor"]
            .iter()
            .any(|k| m.contains_key(*k))
    })
}

/// Places the first compile error, which has no location for reference errors: it goes to the
/// first `$ref` naming the missing target, or to the whole schema.
fn build_error(e: &ValidationError<'_>, objects: &[(String, &Map<String, Value>)]) -> Problem {
    let at = e.instance_path().as_str().to_string();
    let ValidationErrorKind::Referencing(error) = e.kind() else {
        return Problem::new(at, format!("the schema cannot be compiled: {e}"), "invalid");
    };
    let needle = match error {
        ReferencingError::PointerToNowhere { pointer } => pointer.clone(),
        ReferencingError::Unretrievable { uri, .. } => uri.clone(),
        ReferencingError::NoSuchAnchor { anchor } | ReferencingError::InvalidAnchor { anchor } => anchor.clone(),
        _ => String::new(),
    };
    let place = objects.iter().find_map(|(ptr, map)| {
        ["$ref", "$dynamicRef"].into_iter().find_map(|k| {
            let target = map.get(k)?.as_str()?;
            (!needle.is_empty() && target.contains(needle.as_str())).then(|| pointer::child(ptr, k))
        })
    });
    Problem::new(
        place.unwrap_or(at),
        format!("a reference cannot be resolved: {error}"),
        "cannot be resolved",
    )
    .help("tenx never fetches schemas; every `$ref` must point inside the schema")
}

#[cfg(test)]
mod tests {
    use super::{META, plainly_valid};
    use crate::schema::keywords::schema_objects;
    use serde_json::json;

    /// The shortcut may only skip the meta-schema where the meta-schema would accept.
    #[test]
    fn the_shortcut_never_accepts_what_the_meta_schema_refuses() {
        let cases = [
            json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1}}, "required": ["a"]}),
            json!({"type": ["string", "null"], "maxLength": 3}),
            json!({"type": "strng"}),
            json!({"type": ["string", "string"]}),
            json!({"type": []}),
            json!({"required": ["a", "a"]}),
            json!({"required": "a"}),
            json!({"minLength": -1}),
            json!({"minLength": 1.5}),
            json!({"properties": {"a": 5}}),
            json!({"items": true, "enum": [1, "x"]}),
            json!({"pattern": "(["}),
            json!({"$ref": "#/nope"}),
            json!({"description": 3}),
        ];
        let meta = META.as_ref().unwrap();
        for case in &cases {
            let objects = schema_objects(case);
            if plainly_valid(case, &objects) {
                assert!(
                    meta.is_valid(case),
                    "shortcut accepted {case}, which the meta-schema refuses"
                );
            }
        }
        let typical = &cases[0];
        assert!(
            plainly_valid(typical, &schema_objects(typical)),
            "the common case should take the shortcut"
        );
    }
}
