//! The checks of one lowered schema: validity (`TENX0401`, in `meta`), `required` names that
//! `properties` does not define (`TENX0402`), defaults and examples that do not match their own
//! schema (`TENX0403`), response schemas that do not describe an object (`TENX0404`), and
//! unknown keywords (`TENX0405`). Text inside an inlined named schema is skipped: it is checked
//! at the schema's declaration.

use super::meta::{self, describe_value, expected, short};
use super::{Lowered, keywords, pointer};
use crate::ast::SchemaRef;
use crate::resolve::Program;
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator, ValidatorMap, draft202012};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use tenx_diagnostics::{Code, Diagnostic};

/// What a schema describes, for the wording of messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaSite {
    /// A parameter list or state block: `/properties/NAME` is a parameter or field.
    Parameters,
    /// Any other schema.
    Schema,
}

/// Reports every problem of one lowered schema (`TENX0401`, `TENX0402`, `TENX0403`,
/// `TENX0405`), except those inside inlined named schemas.
pub fn check_lowered(lowered: &Lowered, site: SchemaSite, diagnostics: &mut Vec<Diagnostic>) {
    let objects = keywords::schema_objects(&lowered.value);
    meta::check(lowered, &objects, diagnostics);
    required(lowered, &objects, diagnostics);
    unknown_keywords(lowered, &objects, diagnostics);
    defaults(lowered, &objects, site, diagnostics);
}

/// `TENX0404`: an approval or interrupt `response` (`what`: "approval response") must describe
/// an object, since the answer is a JSON object.
pub fn check_response_object(
    program: &Program,
    lowered: &Lowered,
    response: &SchemaRef,
    what: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let ty = lowered.value.get("type");
    if ty.and_then(Value::as_str) == Some("object") {
        return;
    }
    let found = match ty {
        Some(Value::String(t)) => format!("`type` is `{t}`"),
        Some(other) => format!("`type` is `{}`", short(other)),
        None => "no `\"type\": \"object\"`".to_string(),
    };
    let help = "the answer is a JSON object such as `{\"approved\": true}`: use `yes_no` or `approve_edit_reject` from `std.approval`, or write `\"type\": \"object\"` with its `properties`";
    let d = match response {
        SchemaRef::Named(name) => {
            let d = Diagnostic::new(
                Code::TENX0404,
                format!("the {what} schema `{}` does not describe an object", name.name),
                lowered.file,
                name.span,
            )
            .label(found)
            .help(help);
            match program.schema(&name.name) {
                Some(decl) => d.secondary(
                    decl.file,
                    decl.decl.name.span,
                    format!("`{}` is declared here", name.name),
                ),
                None => d,
            }
        }
        SchemaRef::Inline(_) => {
            let origin = if ty.is_some() {
                lowered.origin_of("/type")
            } else {
                lowered.origin_of("")
            };
            Diagnostic::new(
                Code::TENX0404,
                format!("the {what} schema does not describe an object"),
                origin.file,
                origin.span,
            )
            .label(found)
            .help(help)
        }
    };
    diagnostics.push(d);
}

/// `TENX0402`: a name in `required` that `properties` (or, with `additionalProperties: false`,
/// `patternProperties`) does not define.
fn required(lowered: &Lowered, objects: &[(String, &Map<String, Value>)], diagnostics: &mut Vec<Diagnostic>) {
    for (at, map) in objects {
        let Some(Value::Array(names)) = map.get("required") else {
            continue;
        };
        let properties = map.get("properties").and_then(Value::as_object);
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
        if properties.is_none() && !closed {
            continue;
        }
        let patterns: Vec<regex::Regex> = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .map(|p| p.keys().filter_map(|k| regex::Regex::new(k).ok()).collect())
            .unwrap_or_default();
        let required_at = pointer::child(at, "required");
        for (i, name) in names.iter().enumerate() {
            let Some(name) = name.as_str() else { continue };
            if properties.is_some_and(|p| p.contains_key(name)) || patterns.iter().any(|r| r.is_match(name)) {
                continue;
            }
            let here = pointer::index(&required_at, i);
            if lowered.is_foreign(&here) || lowered.is_invalid(&here) {
                continue;
            }
            let origin = lowered.origin_of(&here);
            let d = match properties {
                Some(props) => {
                    let help = crate::did_you_mean(name, props.keys())
                        .map(|s| format!("did you mean `{s}`?"))
                        .unwrap_or_else(|| format!("define `{name}` in `properties`, or remove it from `required`"));
                    let (file, span) = lowered.key_of(&pointer::child(at, "properties"));
                    Diagnostic::new(
                        Code::TENX0402,
                        format!("`{name}` is required but not defined in `properties`"),
                        origin.file,
                        origin.span,
                    )
                    .label("not in `properties`")
                    .secondary(file, span, "the properties are defined here")
                    .help(help)
                }
                None => {
                    let (file, span) = lowered.key_of(&pointer::child(at, "additionalProperties"));
                    Diagnostic::new(
                        Code::TENX0402,
                        format!("`{name}` is required but this schema allows no properties"),
                        origin.file,
                        origin.span,
                    )
                    .label("can never be present")
                    .secondary(file, span, "`additionalProperties` is `false`")
                    .help(format!("define `{name}` in `properties`, or remove it from `required`"))
                }
            };
            diagnostics.push(d);
        }
    }
}

/// `TENX0405`: a key where a keyword is expected that draft 2020-12 does not define.
fn unknown_keywords(lowered: &Lowered, objects: &[(String, &Map<String, Value>)], diagnostics: &mut Vec<Diagnostic>) {
    for (at, map) in objects {
        for key in map.keys() {
            if keywords::is_known(key) {
                continue;
            }
            let here = pointer::child(at, key);
            if lowered.is_foreign(&here) || lowered.is_invalid(&here) {
                continue;
            }
            let help = keywords::legacy_hint(key)
                .map(str::to_string)
                .or_else(|| crate::did_you_mean(key, keywords::KEYWORDS.iter()).map(|k| format!("did you mean `{k}`?")))
                .unwrap_or_else(|| {
                    "validators ignore unknown keywords; remove it, or start an extension's name with `x-`".to_string()
                });
            let (file, span) = lowered.key_of(&here);
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0405,
                    format!("unknown JSON Schema keyword `{key}`"),
                    file,
                    span,
                )
                .label("not a draft 2020-12 keyword, so it is ignored")
                .help(help),
            );
        }
    }
}

/// Where the validators of subschemas come from: a subschema without `$ref` is compiled alone
/// (through [`compiled`]); one with a `$ref`, which may point anywhere in the document, comes
/// from compiling the whole document at once.
struct Subschemas<'v> {
    root: &'v Value,
    with_refs: bool,
    direct: Option<Rc<Validator>>,
    map: Option<Option<ValidatorMap>>,
}

impl Subschemas<'_> {
    fn get(&mut self, at: &str) -> Option<&Validator> {
        let sub = self.root.pointer(at)?;
        if !self.with_refs || !has_refs(sub) {
            self.direct = compiled(sub);
            return self.direct.as_deref();
        }
        let root = self.root;
        let map = self.map.get_or_insert_with(|| {
            draft202012::options()
                .should_validate_formats(true)
                .offline()
                .build_map(root)
                .ok()
        });
        map.as_ref()?.get(&format!("#{at}"))
    }
}

fn has_refs(schema: &Value) -> bool {
    keywords::schema_objects(schema)
        .iter()
        .any(|(_, m)| m.contains_key("$ref") || m.contains_key("$dynamicRef"))
}

/// Keywords that do not change what a schema accepts, left out of [`compiled`]'s cache key.
const ANNOTATIONS: &[&str] = &[
    "default",
    "examples",
    "description",
    "title",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Most cached validators kept; the cache starts again when it is full.
const CACHE_LIMIT: usize = 4096;

thread_local! {
    /// Compiled subschemas, by their JSON without annotations. Programs repeat the same
    /// parameter types (`bool = true`, `string(max_length: 200)`) across many tools; compiling
    /// each once keeps the default checks cheap.
    static COMPILED: RefCell<HashMap<String, Option<Rc<Validator>>>> = RefCell::new(HashMap::new());
}

/// The validator of a subschema without `$ref`, compiled once per distinct schema.
fn compiled(schema: &Value) -> Option<Rc<Validator>> {
    let stripped = match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    };
    let key = stripped.to_string();
    COMPILED.with(|cache| {
        if let Some(found) = cache.borrow().get(&key) {
            return found.clone();
        }
        let validator = draft202012::options()
            .should_validate_formats(true)
            .offline()
            .build(&stripped)
            .ok()
            .map(Rc::new);
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, validator.clone());
        validator
    })
}

/// `TENX0403`: a `default` or an entry of `examples` that its own (sub)schema rejects.
fn defaults(
    lowered: &Lowered,
    objects: &[(String, &Map<String, Value>)],
    site: SchemaSite,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let with_refs = objects
        .iter()
        .any(|(_, m)| m.contains_key("$ref") || m.contains_key("$dynamicRef"));
    let mut subschemas = Subschemas {
        root: &lowered.value,
        with_refs,
        direct: None,
        map: None,
    };
    for (at, map) in objects {
        let mut targets: Vec<(String, &Value, String)> = Vec::new();
        if let Some(default) = map.get("default") {
            let what = match (site, pointer::parent(at), pointer::last(at)) {
                (SchemaSite::Parameters, Some("/properties"), Some(name)) => {
                    format!("the default of `{name}` does not match its type")
                }
                _ => "the default does not match its schema".to_string(),
            };
            targets.push((pointer::child(at, "default"), default, what));
        }
        if let Some(Value::Array(examples)) = map.get("examples") {
            let examples_at = pointer::child(at, "examples");
            for (i, example) in examples.iter().enumerate() {
                targets.push((
                    pointer::index(&examples_at, i),
                    example,
                    "this example does not match its schema".to_string(),
                ));
            }
        }
        targets.retain(|(here, _, _)| !lowered.is_foreign(here) && !lowered.is_invalid(here));
        if targets.is_empty() {
            continue;
        }
        let Some(validator) = subschemas.get(at) else { continue };
        for (here, value, message) in targets {
            let mut seen = BTreeSet::new();
            for error in validator.iter_errors(value) {
                let inner = format!("{here}{}", error.instance_path().as_str());
                if !seen.insert(inner.clone()) {
                    continue;
                }
                let origin = lowered.origin_of(&inner);
                let mut d =
                    Diagnostic::new(Code::TENX0403, message.clone(), origin.file, origin.span).label(reason(&error));
                let rule_at = format!("{at}{}", error.schema_path().as_str());
                if lowered.spans.contains_key(&rule_at) {
                    let rule = lowered.origin_of(&rule_at);
                    let span = rule.key.map_or(rule.span, |key| key.to(rule.span));
                    if (rule.file, span) != (origin.file, origin.span) {
                        d = d.secondary(rule.file, span, "required by this constraint");
                    }
                }
                diagnostics.push(d);
            }
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Why a value does not match, in words.
fn reason(error: &ValidationError<'_>) -> String {
    let value: &Value = error.instance();
    let v = short(value);
    match error.kind() {
        ValidationErrorKind::Type { kind } => format!("expected {}, found {}", expected(kind), describe_value(value)),
        ValidationErrorKind::Minimum { limit } => format!("`{v}` is less than the minimum {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("`{v}` is more than the maximum {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("`{v}` must be more than {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("`{v}` must be less than {limit}"),
        ValidationErrorKind::MinLength { limit } => {
            format!("`{v}` is shorter than {}", plural(*limit, "character", "characters"))
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("`{v}` is longer than {}", plural(*limit, "character", "characters"))
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("the list has fewer than {}", plural(*limit, "item", "items"))
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("the list has more than {}", plural(*limit, "item", "items"))
        }
        ValidationErrorKind::Pattern { pattern } => format!("`{v}` does not match the pattern `{pattern}`"),
        ValidationErrorKind::Enum { options } => match options.as_ref() {
            Value::Array(options) => {
                let listed: Vec<String> = options.iter().map(|o| format!("`{}`", short(o))).collect();
                format!("`{v}` is not one of {}", listed.join(", "))
            }
            other => format!("`{v}` is not one of `{}`", short(other)),
        },
        ValidationErrorKind::Constant { expected_value } => format!("`{v}` is not `{}`", short(expected_value)),
        ValidationErrorKind::Required { property } => {
            format!(
                "the required property `{}` is missing",
                property.as_str().unwrap_or_default()
            )
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|n| format!("`{n}`")).collect();
            format!("{} not allowed by the schema", names.join(", "))
        }
        ValidationErrorKind::Format { format } => format!("`{v}` is not a valid `{format}`"),
        _ => error.masked().to_string(),
    }
}
