//! A custom response's `decision` rule, checked against its response schema: the map is well
//! formed (`TENX0411`), `field` is a required property (`TENX0412`) whose schema can be read as
//! a decision (`TENX0413`: a boolean, or an `enum` or `const` of strings or booleans), `approve`,
//! `edit` and `respond` are values it can hold (`TENX0414`), an answer that can `edit` carries
//! the edited arguments as an object (`TENX0616`), and one that can `respond` carries the call's
//! result (`TENX0417`, reported by the caller for a tool approval; an interrupt cannot respond).
//!
//! The response's *parts* are the schemas every answer must match: the response itself, the
//! targets of its local `$ref`s and the members of its `allOf`, at any depth
//! ([`tenx_artifact::answer_ways::parts`], shared with the loader's reading of routes). The field
//! is declared by the `properties` of any of them and required by the `required` of any of them.
//! A field declared or required only inside the branches of an `anyOf` or `oneOf` is refused
//! (`TENX0412`), saying so: an answer has to match only one branch, so nothing proves that every
//! answer carries it, or which values it holds.
//!
//! What a field can hold is read from every schema its value must match: the field's schema in
//! each part that declares it, with the targets of its local `$ref`s and the members of its
//! `allOf`, since under draft 2020-12 a `$ref` applies together with the keywords beside it. One
//! of them that is a boolean or a fixed set gives the candidate values; each candidate is then
//! validated against the field's schema in every part, as the runtime validates answers, so the
//! values a field can hold are exactly the candidates some answer can carry. A field whose parts
//! contradict each other (a `$ref` to a string schema beside `"type": "object"`) can hold none: no
//! answer is valid, and the question could never be answered (`TENX0414`).

use super::{Reading, Site};
use crate::ast::Expr;
use crate::decision::{DECISION_KEYS, Written, answer_value};
use crate::schema::Lowered;
use jsonschema::{ValidatorMap, draft202012};
use serde_json::Value;
use tenx_artifact::answer_ways::{listed, parts, places, required};
use tenx_diagnostics::{Code, Diagnostic, Span};

/// The keywords whose branches an answer need not all match.
const BRANCHES: [&str; 2] = ["anyOf", "oneOf"];

/// The entries of a well-formed `decision` map; every malformed part is `TENX0411`.
pub(super) fn written<'e>(site: &Site<'_>, expr: &'e Expr, diagnostics: &mut Vec<Diagnostic>) -> Option<Written<'e>> {
    let example = "decision = { field: \"verdict\", approve: \"ship\" }";
    let malformed = |message: String, span: Span, label: &str| {
        Diagnostic::new(Code::TENX0411, message, site.file, span).label(label.to_string())
    };
    let Some(written) = Written::of(expr) else {
        diagnostics.push(
            malformed(
                format!("`decision` of {} must be a map, found {}", site.what, expr.describe()),
                expr.span,
                "not a map",
            )
            .help(format!("write `{example}`")),
        );
        return None;
    };
    let before = diagnostics.len();
    // Keys that are likely misspellings: the key they were meant as is not reported missing.
    let mut meant = Vec::new();
    for (key, span) in &written.unknown {
        let suggestion = crate::suggest::did_you_mean(key, &DECISION_KEYS);
        meant.extend(suggestion);
        let help = suggestion.map_or_else(
            || "a decision has `field`, `approve` and optionally `edit` and `respond`".to_string(),
            |s| format!("did you mean `{s}`?"),
        );
        diagnostics.push(malformed(format!("`decision` has no key `{key}`"), *span, "unknown key").help(help));
    }
    match written.field {
        None if meant.contains(&"field") => {}
        None => diagnostics.push(
            malformed(
                format!("`decision` of {} has no `field`", site.what),
                expr.span,
                "no `field`",
            )
            .help(format!("name the response's property that decides: `{example}`")),
        ),
        Some(field) if field.as_str().is_none_or(str::is_empty) => diagnostics.push(
            malformed(
                "`field` of a `decision` must be a property name in quotes".to_string(),
                field.span,
                "not a property name",
            )
            .help(format!("write `{example}`")),
        ),
        Some(_) => {}
    }
    match written.approve {
        None if meant.contains(&"approve") => {}
        None => diagnostics.push(
            malformed(
                format!("`decision` of {} has no `approve`", site.what),
                expr.span,
                "no `approve`",
            )
            .help("say which value of the field approves: `approve: true` or `approve: \"ship\"`"),
        ),
        Some(approve) if answer_value(approve).is_none() => diagnostics.push(
            malformed(
                "`approve` must be a string or a boolean".to_string(),
                approve.span,
                "not a string or boolean",
            )
            .help("the runtime compares the answer's field with this value"),
        ),
        Some(_) => {}
    }
    if let Some(edit) = written.edit {
        match (answer_value(edit), written.approve.and_then(answer_value)) {
            (None, _) => diagnostics.push(
                malformed(
                    "`edit` must be a string or a boolean".to_string(),
                    edit.span,
                    "not a string or boolean",
                )
                .help("the runtime compares the answer's field with this value"),
            ),
            (Some(edit_value), Some(approve_value)) if edit_value == approve_value => diagnostics.push(
                malformed(
                    "`edit` and `approve` are the same value".to_string(),
                    edit.span,
                    "same as `approve`",
                )
                .help("give `edit` its own value, or remove it if the answer cannot edit"),
            ),
            _ => {}
        }
    }
    if let Some(respond) = written.respond {
        let approve = written.approve.and_then(answer_value);
        let edit = written.edit.and_then(answer_value);
        match answer_value(respond) {
            None => diagnostics.push(
                malformed(
                    "`respond` must be a string or a boolean".to_string(),
                    respond.span,
                    "not a string or boolean",
                )
                .help("the runtime compares the answer's field with this value"),
            ),
            Some(value) if Some(&value) == approve.as_ref() || Some(&value) == edit.as_ref() => diagnostics.push(
                malformed(
                    "`respond` is the same value as `approve` or `edit`".to_string(),
                    respond.span,
                    "same as another decision value",
                )
                .help("give `respond` its own value: the answer then carries the call's result instead of running it"),
            ),
            Some(_) => {}
        }
    }
    (diagnostics.len() == before).then_some(written)
}

/// Checks a well-formed rule against the response schema (inlined): where the answer can
/// `edit` and every check passed, the span of `edit`; where it can `respond` with a value the
/// field holds, the span of `respond`, and whether the schema defines `tool_result`.
pub(super) fn check(
    site: &Site<'_>,
    response_span: Span,
    lowered: &Lowered,
    written: &Written<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Reading> {
    let schema = &lowered.value;
    let field_expr = written.field?;
    let field = field_expr.as_str()?;
    let properties = schema.get("properties").and_then(Value::as_object);
    let declared = places(schema, field);
    let Some(field_at) = declared.first() else {
        diagnostics.push(undeclared(site, response_span, lowered, field, field_expr.span));
        return None;
    };
    if !required(schema, field) {
        diagnostics.push(not_required(site, response_span, lowered, field, field_expr.span));
        return None;
    }
    let validators = compile(schema);
    let Some(values) = held(schema, field, validators.as_ref()) else {
        let help = branch_values(schema, &declared).map_or_else(
            || format!("give `{field}` `\"type\": \"boolean\"`, or an `enum` (or `const`) of strings or booleans"),
            |(keyword, values)| {
                format!("a decision is not read from the branches of an `{keyword}`: list their values in one `enum`, `\"enum\": [{values}]`")
            },
        );
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0413,
                format!("property `{field}` of the response cannot be read as a decision"),
                site.file,
                field_expr.span,
            )
            .label("its schema is not a boolean or a fixed set of strings")
            .secondary(site.file, response_span, "the response schema")
            .help(help),
        );
        return None;
    };
    if values.is_empty() {
        // No answer is valid at all: one error, at the value that should approve.
        let approve = written.approve?;
        let value = answer_value(approve)?;
        let origin = lowered.origin_of(field_at);
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0414,
                format!("`approve` is `{value}`, but property `{field}` of the response can hold no value at all"),
                site.file,
                approve.span,
            )
            .label("no answer can have this value")
            .secondary(origin.file, origin.span, format!("no value matches every part of `{field}`'s schema"))
            .help(format!(
                "make the parts of `{field}`'s schema agree: a `$ref` applies together with the keywords beside it, and so does every schema of an `allOf`"
            ))
            .note("the runtime checks every answer against the whole response schema, so it would refuse every answer and the question could never be answered"),
        );
        return None;
    }
    if let Some(refusal) = validators
        .as_ref()
        .and_then(|validators| super::whole::refusal(schema, validators, field, &values))
    {
        // No answer is valid at all, whatever it decides: one error, at the value that should
        // approve.
        let approve = written.approve?;
        let value = answer_value(approve)?;
        let origin = lowered.origin_of(&refusal.at);
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0414,
                format!("`approve` is `{value}`, but no answer to the response of {} can be valid", site.what),
                site.file,
                approve.span,
            )
            .label("no answer can have this value")
            .secondary(origin.file, origin.span, refusal.label)
            .help(refusal.help)
            .note("the runtime checks every answer against the whole response schema, so it would refuse every answer and the question could never be answered"),
        );
        return None;
    }
    let mut fits = true;
    let mut holds_respond = true;
    for (key, expr) in [
        ("approve", written.approve),
        ("edit", written.edit),
        ("respond", written.respond),
    ] {
        let Some(expr) = expr else { continue };
        let Some(value) = answer_value(expr) else { continue };
        if !values.contains(&value) {
            if key == "respond" {
                holds_respond = false;
            } else {
                fits = false;
            }
            let can_hold: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0414,
                    format!("`{key}` is `{value}`, a value property `{field}` cannot hold"),
                    site.file,
                    expr.span,
                )
                .label("no answer can have this value")
                .secondary(site.file, response_span, "the response schema")
                .help(format!("`{field}` can hold {}", can_hold.join(", "))),
            );
        }
    }
    let mut reading = Reading {
        edit: None,
        respond: written.respond.filter(|_| holds_respond).map(|r| r.span),
        tool_result: properties.is_some_and(|p| p.contains_key(tenx_artifact::TOOL_RESULT_PROPERTY)),
    };
    let Some(edit) = written.edit else {
        return Some(reading);
    };
    let edited = tenx_artifact::answer_ways::property(schema, "edited_arguments")
        .is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"));
    if !edited {
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0616,
                format!(
                    "the response of {} can answer `edit` but defines no `edited_arguments` object",
                    site.what
                ),
                site.file,
                edit.span,
            )
            .label("an edit needs the edited arguments")
            .secondary(site.file, response_span, "the response schema")
            .help(
                "add `\"edited_arguments\": { \"type\": \"object\" }` to the schema's `properties`, or remove `edit`",
            ),
        );
        return Some(reading);
    }
    reading.edit = fits.then_some(edit.span);
    Some(reading)
}

/// The values the top-level property `field` of the response `root` can hold in a valid answer:
/// the candidates of the first schema that lists values ([`listed`]) among the [`parts`] of the
/// field's schema in each part of the response that declares it ([`places`]), less those the
/// field's schema in one of those places refuses (validated as the runtime validates answers).
/// `None` when no part lists values; empty when no candidate is valid.
/// `validators` is the response's compiled map; without one (a response that does not compile,
/// which the schema checks report) nothing is left out.
fn held(root: &Value, field: &str, validators: Option<&ValidatorMap>) -> Option<Vec<Value>> {
    let places = places(root, field);
    let candidates = places
        .iter()
        .flat_map(|place| parts(root, place.clone()))
        .find_map(|at| root.pointer(&at).and_then(listed))?;
    let Some(validators) = validators else {
        return Some(candidates);
    };
    Some(
        candidates
            .into_iter()
            .filter(|value| places.iter().all(|at| allows(validators, at, value)))
            .collect(),
    )
}

/// The response's validators by pointer, as the runtime compiles it; `None` when it does not
/// compile.
fn compile(root: &Value) -> Option<ValidatorMap> {
    draft202012::options().offline().build_map(root).ok()
}

/// Whether the schema at the pointer `at` accepts `value`; `true` when it has no compiled
/// validator. The map's keys are the pointers behind a `#`, not percent-encoded.
pub(super) fn allows(validators: &ValidatorMap, at: &str, value: &Value) -> bool {
    validators
        .get(&format!("#{at}"))
        .is_none_or(|validator| validator.is_valid(value))
}

/// `TENX0412`: the decision's field is declared by no part of the response, perhaps only inside
/// the branches of an `anyOf` or `oneOf`.
fn undeclared(site: &Site<'_>, response_span: Span, lowered: &Lowered, field: &str, span: Span) -> Diagnostic {
    let schema = &lowered.value;
    if let Some(branches) = in_branches(schema, field, "properties") {
        let keyword = branches.keyword;
        let origin = lowered.origin_of(&branches.first);
        let help = if branches.every {
            format!(
                "every branch declares `{field}`: declare it once in the response's own `properties` and `required`, and keep the branches for the rest"
            )
        } else {
            format!(
                "declare `{field}` in the response's own `properties` (or an `allOf` part) and list it in `required`"
            )
        };
        return Diagnostic::new(
            Code::TENX0412,
            format!(
                "`{field}` is declared only inside the `{keyword}` of the response of {}",
                site.what
            ),
            site.file,
            span,
        )
        .label("not declared where every answer must match it")
        .secondary(
            origin.file,
            origin.span,
            format!("declared in a branch of `{keyword}` here"),
        )
        .help(help)
        .note(BRANCH_NOTE);
    }
    let mut names: Vec<String> = Vec::new();
    for at in parts(schema, String::new()) {
        let keys = schema
            .pointer(&at)
            .and_then(|p| p.get("properties"))
            .and_then(Value::as_object);
        for key in keys.into_iter().flat_map(|p| p.keys()) {
            let key = format!("`{key}`");
            if !names.contains(&key) {
                names.push(key);
            }
        }
    }
    let help = if names.is_empty() {
        "the response schema defines no `properties`: add the property that decides".to_string()
    } else {
        format!("its properties: {}", names.join(", "))
    };
    Diagnostic::new(
        Code::TENX0412,
        format!("`{field}` is not a property of the response of {}", site.what),
        site.file,
        span,
    )
    .label("no such property")
    .secondary(site.file, response_span, "the response schema")
    .help(help)
}

/// `TENX0412`: the decision's field is required by no part of the response, perhaps only inside
/// the branches of an `anyOf` or `oneOf`.
fn not_required(site: &Site<'_>, response_span: Span, lowered: &Lowered, field: &str, span: Span) -> Diagnostic {
    let Some(branches) = in_branches(&lowered.value, field, "required") else {
        return Diagnostic::new(
            Code::TENX0412,
            format!("`{field}` is not required by the response of {}", site.what),
            site.file,
            span,
        )
        .label("an answer could leave this out")
        .secondary(site.file, response_span, "the response schema")
        .help(format!("add `\"{field}\"` to the schema's `required` list"));
    };
    let keyword = branches.keyword;
    let origin = lowered.origin_of(&branches.first);
    let label = if branches.every {
        "required only by the branches"
    } else {
        "an answer matching another branch could leave this out"
    };
    Diagnostic::new(
        Code::TENX0412,
        format!(
            "`{field}` is required only inside the `{keyword}` of the response of {}",
            site.what
        ),
        site.file,
        span,
    )
    .label(label)
    .secondary(
        origin.file,
        origin.span,
        format!("required in a branch of `{keyword}` here"),
    )
    .help(format!("add `\"{field}\"` to the response's own `required` list"))
    .note(BRANCH_NOTE)
}

/// Why a decision is not read from the branches of an `anyOf` or `oneOf`.
const BRANCH_NOTE: &str = "an answer has to match only one branch of an `anyOf` (exactly one of a `oneOf`), so a decision is read only from what every answer matches: the response's own `properties` and `required`, its `$ref`s and its `allOf` parts";

/// Where the branches of an `anyOf` or `oneOf` of the response mention a property.
struct Branches {
    /// `anyOf` or `oneOf`.
    keyword: &'static str,
    /// The pointer of the first branch that mentions it.
    first: String,
    /// Whether every branch of that keyword mentions it.
    every: bool,
}

/// The first `anyOf` or `oneOf` among the response's [`parts`] with a branch whose own parts
/// mention `field` under `key`: `properties` (declares it) or `required` (requires it).
fn in_branches(root: &Value, field: &str, key: &str) -> Option<Branches> {
    let mentions = |at: &String| {
        root.pointer(at)
            .and_then(|schema| schema.get(key))
            .is_some_and(|held| match held {
                Value::Object(properties) => properties.contains_key(field),
                Value::Array(names) => names.iter().any(|name| name.as_str() == Some(field)),
                _ => false,
            })
    };
    for at in parts(root, String::new()) {
        for keyword in BRANCHES {
            let Some(Value::Array(branches)) = root.pointer(&at).and_then(|schema| schema.get(keyword)) else {
                continue;
            };
            let marked: Vec<Option<String>> = (0..branches.len())
                .map(|i| {
                    let branch = format!("{at}/{keyword}/{i}");
                    parts(root, branch).into_iter().find(|part| mentions(part))
                })
                .collect();
            if let Some(first) = marked.iter().flatten().next() {
                return Some(Branches {
                    keyword,
                    first: first.clone(),
                    every: marked.iter().all(Option::is_some),
                });
            }
        }
    }
    None
}

/// The values of an `anyOf` or `oneOf` among the field's parts whose branches each list values
/// (`const` or `enum` of strings or booleans), written as JSON: a decision read from one `enum`.
fn branch_values(root: &Value, places: &[String]) -> Option<(&'static str, String)> {
    places
        .iter()
        .flat_map(|place| parts(root, place.clone()))
        .find_map(|at| {
            let schema = root.pointer(&at)?;
            BRANCHES.into_iter().find_map(|keyword| {
                let branches = schema.get(keyword)?.as_array()?;
                let mut values: Vec<Value> = Vec::new();
                for branch in branches {
                    for value in listed(branch)? {
                        if !values.contains(&value) {
                            values.push(value);
                        }
                    }
                }
                let shown: Vec<String> = values.iter().map(Value::to_string).collect();
                (!shown.is_empty()).then(|| (keyword, shown.join(", ")))
            })
        })
}

/// A `decision` that would read `schema`: its first required property whose values can be read,
/// approving with the first of them.
pub(super) fn suggestion(schema: &Value) -> Option<String> {
    let validators = compile(schema);
    let parts = parts(schema, String::new());
    let names = parts
        .iter()
        .filter_map(|at| schema.pointer(at)?.get("required")?.as_array())
        .flatten();
    names.into_iter().find_map(|name| {
        let name = name.as_str()?;
        let values = held(schema, name, validators.as_ref())?;
        let approve = values.first()?;
        let field = Value::String(name.to_string());
        Some(format!("decision = {{ field: {field}, approve: {approve} }}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn held_of(field: &str, response: &Value) -> Option<Vec<Value>> {
        held(response, field, compile(response).as_ref())
    }

    #[test]
    fn a_ref_applies_with_the_keywords_beside_it() {
        let response = json!({
            "type": "object",
            "$defs": { "verdict": { "type": "string", "enum": ["ship", "hold", "drop"] } },
            "properties": {
                "fine": { "$ref": "#/$defs/verdict", "description": "ship or hold" },
                "narrowed": { "$ref": "#/$defs/verdict", "enum": ["ship", "hold"] },
                "broken": { "$ref": "#/$defs/verdict", "type": "object" },
                "negated": { "$ref": "#/$defs/verdict", "not": { "const": "ship" } }
            },
            "required": ["fine", "narrowed", "broken", "negated"]
        });
        assert_eq!(
            held_of("fine", &response),
            Some(vec![json!("ship"), json!("hold"), json!("drop")])
        );
        assert_eq!(held_of("narrowed", &response), Some(vec![json!("ship"), json!("hold")]));
        assert_eq!(held_of("broken", &response), Some(Vec::new()));
        assert_eq!(held_of("negated", &response), Some(vec![json!("hold"), json!("drop")]));
    }

    #[test]
    fn every_schema_of_an_all_of_applies() {
        let response = json!({
            "type": "object",
            "properties": {
                "ok": { "allOf": [{ "type": "boolean" }, { "const": true }] },
                "never": { "allOf": [{ "type": "boolean" }, { "const": "yes" }] },
                "free": { "allOf": [{ "type": "string" }, { "minLength": 1 }] }
            },
            "required": ["ok", "never", "free"]
        });
        assert_eq!(held_of("ok", &response), Some(vec![json!(true)]));
        assert_eq!(held_of("never", &response), Some(Vec::new()));
        assert_eq!(held_of("free", &response), None);
    }

    #[test]
    fn the_response_own_parts_constrain_the_field() {
        let response = json!({
            "type": "object",
            "$defs": { "base": { "properties": { "the verdict": { "enum": ["hold"] } } } },
            "$ref": "#/$defs/base",
            "properties": { "the verdict": { "enum": ["ship", "hold"] } },
            "allOf": [{ "properties": { "the verdict": { "type": "string" } } }],
            "required": ["the verdict"]
        });
        assert_eq!(held_of("the verdict", &response), Some(vec![json!("hold")]));
    }

    #[test]
    fn a_reference_cycle_ends() {
        let response = json!({
            "type": "object",
            "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a", "enum": ["x"] } },
            "properties": { "v": { "$ref": "#/$defs/a" } },
            "required": ["v"]
        });
        // The validator cannot compile an endless reference: nothing is left out.
        assert!(held_of("v", &response).is_some());
    }

    #[test]
    fn a_field_declared_only_in_the_response_all_of_is_read_from_every_part() {
        let response = json!({
            "type": "object",
            "allOf": [
                { "properties": { "verdict": { "type": "string" } }, "required": ["verdict"] },
                { "$ref": "#/$defs/values" }
            ],
            "$defs": { "values": { "properties": { "verdict": { "enum": ["ship", "hold", 3] } } } },
            "properties": { "note": { "type": "string" } }
        });
        // The `enum` lists a number, so it is not read; nothing else lists values.
        assert_eq!(held_of("verdict", &response), None);
        let mut response = response;
        response["$defs"]["values"]["properties"]["verdict"]["enum"] = json!(["ship", "hold"]);
        assert_eq!(held_of("verdict", &response), Some(vec![json!("ship"), json!("hold")]));
        assert!(suggestion(&response).is_some_and(|s| s.contains("\"verdict\"")));
    }

    #[test]
    fn branches_that_declare_or_require_a_field_are_found() {
        let response = json!({
            "type": "object",
            "allOf": [{ "oneOf": [
                { "properties": { "verdict": { "const": "ship" } }, "required": ["verdict"] },
                { "$ref": "#/$defs/hold" }
            ] }],
            "$defs": { "hold": { "properties": { "verdict": { "const": "hold" } } } }
        });
        let declared = in_branches(&response, "verdict", "properties").unwrap();
        assert_eq!(declared.keyword, "oneOf");
        assert_eq!(declared.first, "/allOf/0/oneOf/0");
        assert!(declared.every);
        let required = in_branches(&response, "verdict", "required").unwrap();
        assert!(!required.every);
        assert!(in_branches(&response, "note", "properties").is_none());
    }
}
