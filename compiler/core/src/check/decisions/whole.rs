//! Whether a whole answer can be valid (`TENX0414`): the runtime checks every answer against the
//! whole response schema, so a response no answer satisfies, whatever its decision, refuses every
//! answer (`INTERRUPT_002`) and its question could never be answered.
//!
//! Only a certain refusal is reported. First a candidate answer is built for each value the
//! decision can hold: that value, and for every other required property a small value its
//! schema allows (when one is found). One that the whole response accepts proves the response
//! answerable. Otherwise a reason that holds for *every* answer is looked for, among the
//! response's parts ([`parts`]: the response, its local `$ref`s and its `allOf` members, which
//! every answer matches), about the required properties (those a part lists in `required`,
//! which every answer carries):
//!
//! - a part is `false`;
//! - a part's `maxProperties` is less than the number of required properties;
//! - a required property is refused by name: its schema in a part's `properties` is `false`; a
//!   part with `additionalProperties: false` neither declares it nor has a `patternProperties`
//!   pattern that matches it; or a part's `propertyNames` refuses its name;
//! - a required property other than the decision can hold no value: a part of its schema lists
//!   its values (`enum`, `const`) and none of them is valid.
//!
//! Anything else (`if`, `not`, `anyOf`, `dependentRequired`, …) is never reported, since it may
//! depend on values an answer chooses.

use jsonschema::{ValidatorMap, draft202012};
use serde_json::{Map, Value, json};
use tenx_artifact::answer_ways::{parts, places};

/// Why no answer to a response can be valid.
pub(super) struct Refusal {
    /// The pointer (into the response) of what refuses every answer, for its place in the source.
    pub at: String,
    /// What it refuses, as a label there.
    pub label: String,
    /// How to make the response answerable.
    pub help: String,
}

/// Why no answer to the response `root` can be valid, when that is certain; `field` is the
/// decision's property and `values` the values it can hold (not empty). `validators` is the
/// response's compiled map.
pub(super) fn refusal(root: &Value, validators: &ValidatorMap, field: &str, values: &[Value]) -> Option<Refusal> {
    let whole = validators.get("#")?;
    let required = required_names(root);
    if let Some(others) = other_values(root, validators, field, &required) {
        let answerable = values.iter().any(|value| {
            let mut answer = others.clone();
            answer.insert(field.to_owned(), value.clone());
            whole.is_valid(&Value::Object(answer))
        });
        if answerable {
            return None;
        }
    }
    let parts = parts(root, String::new());
    parts
        .iter()
        .find_map(|at| false_part(root, at))
        .or_else(|| parts.iter().find_map(|at| too_few(root, at, &required)))
        .or_else(|| {
            required
                .iter()
                .find_map(|name| parts.iter().find_map(|at| refused_name(root, validators, at, name)))
        })
        .or_else(|| {
            required
                .iter()
                .filter(|name| *name != field)
                .find_map(|name| holds_nothing(root, validators, name))
        })
}

/// Every name a part of the response lists in `required`, once each, in order.
fn required_names(root: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for at in parts(root, String::new()) {
        let listed = root
            .pointer(&at)
            .and_then(|schema| schema.get("required"))
            .and_then(Value::as_array);
        for name in listed.into_iter().flatten().filter_map(Value::as_str) {
            if !names.iter().any(|known| known == name) {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// A small valid value for each required property besides `field`, or `None` when one has none
/// that the property's schema in every part that declares it accepts.
fn other_values(
    root: &Value,
    validators: &ValidatorMap,
    field: &str,
    required: &[String],
) -> Option<Map<String, Value>> {
    let mut answer = Map::new();
    for name in required.iter().filter(|name| *name != field) {
        let places = places(root, name);
        let accepted = samples(root, &places)
            .into_iter()
            .find(|value| places.iter().all(|at| super::fit::allows(validators, at, value)))?;
        answer.insert(name.clone(), accepted);
    }
    Some(answer)
}

/// Values to try for a property declared at `places`: those a part of its schema lists, or else
/// a few of each kind, sized by the first `minLength` and `minimum` its parts give.
fn samples(root: &Value, places: &[String]) -> Vec<Value> {
    let schemas: Vec<&Value> = places
        .iter()
        .flat_map(|place| parts(root, place.clone()))
        .filter_map(|at| root.pointer(&at))
        .collect();
    if let Some(listed) = schemas.iter().find_map(|schema| any_listed(schema)) {
        return listed;
    }
    let number = |key: &str| schemas.iter().find_map(|schema| schema.get(key)?.as_f64());
    let length = number("minLength").map_or(0, |n| n.clamp(0.0, 64.0) as usize);
    let mut out = vec![
        Value::String("a".repeat(length.max(1))),
        Value::String(String::new()),
        json!(0),
        json!(false),
        Value::Null,
        json!({}),
        json!([]),
    ];
    if let Some(minimum) = number("minimum") {
        out.extend([json!(minimum), json!(minimum.ceil())]);
    }
    if let Some(above) = number("exclusiveMinimum") {
        out.extend([json!(above.floor() + 1.0), json!(above + 0.5)]);
    }
    out
}

/// Every value a schema allows when it lists them: its `enum` (of any values) or its `const`, or
/// `true` and `false` for `"type": "boolean"`, `null` for `"type": "null"`.
fn any_listed(schema: &Value) -> Option<Vec<Value>> {
    if let Some(values) = schema.get("enum") {
        return values.as_array().cloned();
    }
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => Some(vec![json!(true), json!(false)]),
        Some("null") => Some(vec![Value::Null]),
        _ => None,
    }
}

/// A part that is the schema `false`.
fn false_part(root: &Value, at: &str) -> Option<Refusal> {
    (root.pointer(at)? == &Value::Bool(false)).then(|| Refusal {
        at: at.to_owned(),
        label: "this part is `false`, which refuses every answer".to_owned(),
        help: "remove the `false` part".to_owned(),
    })
}

/// A part whose `maxProperties` is below the number of required properties.
fn too_few(root: &Value, at: &str, required: &[String]) -> Option<Refusal> {
    let most = root.pointer(at)?.get("maxProperties")?.as_f64()?;
    let needed = required.len();
    if most >= needed as f64 {
        return None;
    }
    let names: Vec<String> = required.iter().map(|name| format!("`{name}`")).collect();
    let plural = if needed == 1 { "property" } else { "properties" };
    Some(Refusal {
        at: format!("{at}/maxProperties"),
        label: format!(
            "allows at most {most} properties, but every answer has the {needed} required {plural}: {}",
            names.join(", ")
        ),
        help: format!("raise `maxProperties` to at least {needed}, or require fewer properties"),
    })
}

/// The part at `at` refusing the required property `name` by its name.
fn refused_name(root: &Value, validators: &ValidatorMap, at: &str, name: &str) -> Option<Refusal> {
    let part = root.pointer(at)?;
    let properties = part.get("properties").and_then(Value::as_object);
    let escaped = name.replace('~', "~0").replace('/', "~1");
    match properties.and_then(|properties| properties.get(name)) {
        Some(Value::Bool(false)) => {
            return Some(Refusal {
                at: format!("{at}/properties/{escaped}"),
                label: format!("`{name}` is required, but its schema here is `false`"),
                help: format!("give `{name}` a schema that accepts a value, or stop requiring it"),
            });
        }
        Some(_) => {}
        None if part.get("additionalProperties") == Some(&Value::Bool(false)) && !matches_pattern(part, name)? => {
            return Some(Refusal {
                at: format!("{at}/additionalProperties"),
                label: format!(
                    "allows only the properties declared beside it, and `{name}`, which every answer has, is not one of them"
                ),
                help: format!(
                    "declare `{name}` in the `properties` beside this `additionalProperties: false` (it sees only the `properties` of its own schema, not those of other parts), or stop requiring `{name}`"
                ),
            });
        }
        None => {}
    }
    let names = validators.get(&format!("#{at}/propertyNames"))?;
    (!names.is_valid(&Value::String(name.to_owned()))).then(|| Refusal {
        at: format!("{at}/propertyNames"),
        label: format!("refuses the name `{name}`, which every answer has"),
        help: format!("let `propertyNames` accept `{name}`, or stop requiring it"),
    })
}

/// Whether a pattern of the part's `patternProperties` matches `name`, as the runtime's validator
/// matches it; `None` when that cannot be told (a pattern it does not compile).
fn matches_pattern(part: &Value, name: &str) -> Option<bool> {
    let Some(patterns) = part.get("patternProperties") else {
        return Some(false);
    };
    let patterns = patterns.as_object()?;
    // Every value accepted, so only the names decide.
    let open: Map<String, Value> = patterns.keys().map(|p| (p.clone(), Value::Bool(true))).collect();
    let probe = json!({ "patternProperties": open, "additionalProperties": false });
    let validator = draft202012::options().offline().build(&probe).ok()?;
    Some(validator.is_valid(&json!({ name: null })))
}

/// A required property whose schema lists values (in a part of it) none of which is valid.
fn holds_nothing(root: &Value, validators: &ValidatorMap, name: &str) -> Option<Refusal> {
    let places = places(root, name);
    let first = places.first()?;
    let listed = places
        .iter()
        .flat_map(|place| parts(root, place.clone()))
        .find_map(|at| root.pointer(&at).and_then(any_listed))?;
    let valid = listed
        .iter()
        .any(|value| places.iter().all(|at| super::fit::allows(validators, at, value)));
    (!valid).then(|| Refusal {
        at: first.clone(),
        label: format!("`{name}` is required, but no value matches every part of its schema"),
        help: format!(
            "make the parts of `{name}`'s schema agree (a `$ref` applies together with the keywords beside it, and so does every schema of an `allOf`), or stop requiring it"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(response: &Value) -> Option<String> {
        let validators = draft202012::options().offline().build_map(response).unwrap();
        refusal(response, &validators, "verdict", &[json!("ship"), json!("hold")]).map(|r| r.at)
    }

    fn response(extra: Value) -> Value {
        let mut response = json!({
            "type": "object",
            "properties": { "verdict": { "enum": ["ship", "hold"] } },
            "required": ["verdict"]
        });
        for (key, value) in extra.as_object().unwrap() {
            response[key] = value.clone();
        }
        response
    }

    #[test]
    fn a_response_some_answer_satisfies_is_never_refused() {
        assert_eq!(refused(&response(json!({}))), None);
        assert_eq!(refused(&response(json!({ "maxProperties": 1 }))), None);
        assert_eq!(refused(&response(json!({ "additionalProperties": false }))), None);
        // Conditions on values are never judged, whatever they say.
        let conditional = response(json!({
            "if": { "properties": { "verdict": { "const": "ship" } } },
            "then": false
        }));
        assert_eq!(refused(&conditional), None);
        // A required property with constraints gets a value that meets them.
        let reason = json!({
            "type": "object",
            "properties": {
                "verdict": { "enum": ["ship", "hold"] },
                "reason": { "type": "string", "minLength": 4 },
                "amount": { "type": "integer", "exclusiveMinimum": 10 }
            },
            "required": ["verdict", "reason", "amount"],
            "additionalProperties": false
        });
        assert_eq!(refused(&reason), None);
    }

    #[test]
    fn a_reason_that_holds_for_every_answer_is_found() {
        assert_eq!(
            refused(&response(json!({ "maxProperties": 0 }))).as_deref(),
            Some("/maxProperties")
        );
        assert_eq!(
            refused(&response(json!({ "allOf": [false] }))).as_deref(),
            Some("/allOf/0")
        );
        let hidden = response(json!({
            "allOf": [{ "$ref": "#/$defs/closed" }],
            "$defs": { "closed": { "properties": { "note": {} }, "additionalProperties": false } }
        }));
        assert_eq!(refused(&hidden).as_deref(), Some("/$defs/closed/additionalProperties"));
        let names = response(json!({ "propertyNames": { "pattern": "^[a-z]{1,3}$" } }));
        assert_eq!(refused(&names).as_deref(), Some("/propertyNames"));
        let patterned = response(json!({
            "additionalProperties": false,
            "patternProperties": { "^x-": {} },
            "allOf": [{ "required": ["reason"] }]
        }));
        assert_eq!(refused(&patterned).as_deref(), Some("/additionalProperties"));
        let unlisted = response(json!({
            "properties": { "verdict": { "enum": ["ship", "hold"] }, "reason": false },
            "required": ["verdict", "reason"]
        }));
        assert_eq!(refused(&unlisted).as_deref(), Some("/properties/reason"));
        let empty = response(json!({
            "properties": { "verdict": { "enum": ["ship", "hold"] }, "n": { "enum": [1, 2], "minimum": 3 } },
            "required": ["verdict", "n"]
        }));
        assert_eq!(refused(&empty).as_deref(), Some("/properties/n"));
    }

    #[test]
    fn a_pattern_that_matches_the_name_lets_it_in() {
        let patterned = response(json!({
            "additionalProperties": false,
            "patternProperties": { "^x-": { "type": "integer" } },
            "properties": { "verdict": { "enum": ["ship", "hold"] } },
            "required": ["verdict", "x-count"]
        }));
        assert_eq!(refused(&patterned), None);
    }
}
