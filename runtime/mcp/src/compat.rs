//! Whether an MCP tool's `inputSchema` accepts every argument object the tool's declaration
//! allows: the check an attach runs for each declared tool, and runs again after a
//! `notifications/tools/list_changed` and after a reconnect.
//!
//! The check is **sound and conservative**: it says "compatible" only when it can prove that
//! every value the declared `parameters` accept (after the engine's normalisation, which fills
//! `default`s) is accepted by the server's schema; anything it cannot prove is a problem, so
//! the tool fails closed. It walks both schemas side by side (local `$ref`s followed on both):
//!
//! - **types**: every type the declaration allows must be allowed by the server (`integer` fits
//!   `number`); a declaration without a `type` fits only a server schema without one;
//! - **listed values**: a declared `enum`/`const` is exact: each value is validated against the
//!   server's schema; a server `enum`/`const` needs a declared one;
//! - **objects**: every parameter the server `required`s must be provided by the declaration
//!   (`required`, or a `default` the engine fills in); each declared property must be accepted
//!   by the server's property of that name, or else by its `additionalProperties` (`false`
//!   refuses it); a declaration that allows extra properties needs a server that accepts them;
//! - **bounds**: a server bound (`minimum`, `maxLength`, `minItems`, `pattern`, `multipleOf`,
//!   `uniqueItems`, …) needs a declared bound at least as strict, for the types it applies to;
//! - **combinators**: a declared `anyOf`/`oneOf` needs each alternative compatible; a server
//!   `allOf` needs each part, `anyOf` one alternative, `oneOf` one alternative whose siblings
//!   cannot match (their types are disjoint from the declared ones);
//! - **not proved, so refused**: a server `not`, `if`, `patternProperties`, `dependentSchemas`,
//!   `dependentRequired`, `unevaluated*`, `contains`, `prefixItems`, `propertyNames`, tuple
//!   `items`, remote `$ref`s, and schemas nested deeper than [`MAX_DEPTH`].
//!
//! `format` is an annotation in draft 2020-12 (validators do not assert it by default), so a
//! server `format` is not a constraint here; unknown keywords are annotations too.

use serde_json::{Map, Value};

/// How deep the walk goes before it gives up (and refuses): schemas are small, and a bound
/// keeps the recursion safe on any input.
pub const MAX_DEPTH: usize = 32;

/// How many `$ref` hops are followed in a row before giving up (a cycle of references).
const MAX_REF_HOPS: usize = 16;

/// Why a declared tool's parameters do not fit the server's `inputSchema`: empty when they do.
pub fn problems(declared: &Value, server: &Value) -> Vec<String> {
    let walk = Walk {
        declared_root: declared,
        server_root: server,
    };
    let mut found = Vec::new();
    walk.compatible(declared, server, "", true, 0, &mut found);
    found.sort();
    found.dedup();
    found
}

/// The two roots (for `$ref`s).
struct Walk<'a> {
    declared_root: &'a Value,
    server_root: &'a Value,
}

/// The JSON types a schema allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

const ALL_KINDS: [Kind; 7] = [
    Kind::Null,
    Kind::Boolean,
    Kind::Integer,
    Kind::Number,
    Kind::String,
    Kind::Array,
    Kind::Object,
];

impl Kind {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "null" => Self::Null,
            "boolean" => Self::Boolean,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "string" => Self::String,
            "array" => Self::Array,
            "object" => Self::Object,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Boolean => "boolean",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::String => "string",
            Self::Array => "array",
            Self::Object => "object",
        }
    }
}

/// The kinds a schema's `type` names, or `None` when it has no (readable) `type`.
fn kinds(schema: &Map<String, Value>) -> Option<Vec<Kind>> {
    match schema.get("type")? {
        Value::String(name) => Kind::named(name).map(|kind| vec![kind]),
        Value::Array(names) => names.iter().map(|name| name.as_str().and_then(Kind::named)).collect(),
        _ => None,
    }
}

/// The values a schema lists (`const`, or `enum`), if it lists them.
fn listed(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value]);
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| values.iter().collect())
}

/// Server keywords this check cannot prove anything about.
const UNPROVABLE: [&str; 14] = [
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "prefixItems",
    "propertyNames",
    "$dynamicRef",
];

/// Keywords that constrain a value (the rest are annotations).
const ASSERTIONS: [&str; 30] = [
    "type",
    "enum",
    "const",
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
    "properties",
    "additionalProperties",
    "items",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "not",
    "if",
    "patternProperties",
    "prefixItems",
];

fn is_unconstrained(schema: &Map<String, Value>) -> bool {
    !schema
        .keys()
        .any(|key| ASSERTIONS.contains(&key.as_str()) || UNPROVABLE.contains(&key.as_str()))
}

fn at(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_string()
    } else {
        format!("`{path}`")
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Follows local `$ref`s from `schema` within `root`: the schema they lead to, or why not.
fn resolve<'v>(root: &'v Value, mut schema: &'v Value) -> Result<&'v Value, String> {
    for _ in 0..MAX_REF_HOPS {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return Ok(schema);
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(format!("refers to `{reference}`, outside the schema"));
        };
        let pointer = percent_decode(pointer);
        schema = root
            .pointer(&pointer)
            .ok_or_else(|| format!("refers to `{reference}`, which the schema does not define"))?;
    }
    Err("follows more than 16 `$ref`s in a row".to_string())
}

/// `%XX` escapes of a JSON pointer taken from a URI fragment.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let hex = bytes
            .get(index.saturating_add(1)..index.saturating_add(3))
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (byte, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                index = index.saturating_add(3);
            }
            _ => {
                out.push(byte);
                index = index.saturating_add(1);
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A lower or upper numeric bound: `(value, exclusive)`.
type Bound = (f64, bool);

fn bound(schema: &Map<String, Value>, inclusive: &str, exclusive: &str, lower: bool) -> Option<Bound> {
    let inclusive = schema
        .get(inclusive)
        .and_then(Value::as_f64)
        .map(|value| (value, false));
    let exclusive = schema.get(exclusive).and_then(Value::as_f64).map(|value| (value, true));
    match (inclusive, exclusive) {
        (Some(a), Some(b)) => Some(if stricter(a, b, lower) { a } else { b }),
        (one, other) => one.or(other),
    }
}

/// Whether bound `a` is at least as strict as `b` (a lower bound if `lower`).
fn stricter(a: Bound, b: Bound, lower: bool) -> bool {
    let (av, ax) = a;
    let (bv, bx) = b;
    let beyond = if lower { av > bv } else { av < bv };
    beyond || (av == bv && (ax || !bx))
}

impl Walk<'_> {
    /// Pushes to `found` every reason `declared` may allow a value `server` refuses. `normalised`
    /// is true while `declared` is reached from the root through `properties` and `items` only
    /// (there the engine fills `default`s in).
    #[expect(
        clippy::too_many_lines,
        reason = "one walk over the keywords, in the order the module header explains them"
    )]
    fn compatible(
        &self,
        declared: &Value,
        server: &Value,
        path: &str,
        normalised: bool,
        depth: usize,
        found: &mut Vec<String>,
    ) {
        if depth > MAX_DEPTH {
            found.push(format!("{}: nested deeper than {MAX_DEPTH} levels", at(path)));
            return;
        }
        let followed = declared.get("$ref").is_some();
        let declared = match resolve(self.declared_root, declared) {
            Ok(schema) => schema,
            Err(reason) => {
                found.push(format!("{}: the declaration {reason}", at(path)));
                return;
            }
        };
        let normalised = normalised && !followed;
        let server_has_siblings = server.as_object().is_some_and(|map| {
            map.contains_key("$ref")
                && map
                    .keys()
                    .any(|key| key != "$ref" && ASSERTIONS.contains(&key.as_str()))
        });
        if server_has_siblings {
            found.push(format!(
                "{}: the server's schema uses `$ref` beside other keywords",
                at(path)
            ));
            return;
        }
        let server = match resolve(self.server_root, server) {
            Ok(schema) => schema,
            Err(reason) => {
                found.push(format!("{}: the server's schema {reason}", at(path)));
                return;
            }
        };
        let server = match server {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                found.push(format!("{}: the server accepts no value", at(path)));
                return;
            }
            Value::Object(map) => map,
            _ => {
                found.push(format!("{}: the server's schema is not a schema", at(path)));
                return;
            }
        };
        if is_unconstrained(server) {
            return;
        }
        let declared = match declared {
            Value::Bool(false) => return,
            Value::Bool(true) => &Map::new(),
            Value::Object(map) => map,
            _ => {
                found.push(format!("{}: the declaration is not a schema", at(path)));
                return;
            }
        };
        let next = depth.saturating_add(1);

        // Listed values: exact.
        if let Some(values) = listed(declared) {
            let refused: Vec<String> = values
                .into_iter()
                .filter(|value| !self.server_accepts(server, value))
                .map(ToString::to_string)
                .collect();
            if !refused.is_empty() {
                found.push(format!(
                    "{}: the server refuses the declared value(s) {}",
                    at(path),
                    refused.join(", ")
                ));
            }
            return;
        }

        // A declared union: every alternative must fit.
        for key in ["anyOf", "oneOf"] {
            if let Some(alternatives) = declared.get(key).and_then(Value::as_array) {
                let mut rest = declared.clone();
                rest.remove(key);
                for alternative in alternatives {
                    let merged = merge(&rest, alternative);
                    self.compatible(&merged, &Value::Object(server.clone()), path, false, next, found);
                }
                return;
            }
        }

        if let Some(keyword) = UNPROVABLE.iter().find(|keyword| server.contains_key(**keyword)) {
            found.push(format!(
                "{}: the server's schema uses `{keyword}`, which this check cannot prove",
                at(path)
            ));
            return;
        }

        let declared_kinds = kinds(declared).unwrap_or_else(|| ALL_KINDS.to_vec());
        let has = |kind: Kind| declared_kinds.contains(&kind);

        // Server combinators.
        if let Some(parts) = server.get("allOf").and_then(Value::as_array) {
            for part in parts {
                self.compatible(&Value::Object(declared.clone()), part, path, normalised, next, found);
            }
        }
        if let Some(alternatives) = server.get("anyOf").and_then(Value::as_array) {
            let fits = alternatives.iter().any(|alternative| {
                let mut trial = Vec::new();
                self.compatible(
                    &Value::Object(declared.clone()),
                    alternative,
                    path,
                    normalised,
                    next,
                    &mut trial,
                );
                trial.is_empty()
            });
            if !fits {
                found.push(format!("{}: fits none of the server's `anyOf` alternatives", at(path)));
            }
        }
        if let Some(alternatives) = server.get("oneOf").and_then(Value::as_array) {
            let fitting = alternatives.iter().position(|alternative| {
                let mut trial = Vec::new();
                self.compatible(
                    &Value::Object(declared.clone()),
                    alternative,
                    path,
                    normalised,
                    next,
                    &mut trial,
                );
                trial.is_empty()
            });
            let exclusive = fitting.is_some_and(|fit| {
                alternatives
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| *index != fit)
                    .all(|(_, other)| {
                        resolve(self.server_root, other)
                            .ok()
                            .and_then(Value::as_object)
                            .and_then(kinds)
                            .is_some_and(|other_kinds| {
                                !declared_kinds.iter().any(|kind| {
                                    other_kinds.contains(kind)
                                        || (*kind == Kind::Integer && other_kinds.contains(&Kind::Number))
                                })
                            })
                    })
            });
            if !exclusive {
                found.push(format!(
                    "{}: cannot be shown to fit exactly one of the server's `oneOf` alternatives",
                    at(path)
                ));
            }
        }

        // Types.
        if let Some(server_kinds) = kinds(server) {
            if kinds(declared).is_none() {
                let names: Vec<&str> = server_kinds.iter().map(|kind| kind.name()).collect();
                found.push(format!(
                    "{}: the declaration allows any type, the server only {}",
                    at(path),
                    names.join(", ")
                ));
                return;
            }
            let refused: Vec<&str> = declared_kinds
                .iter()
                .filter(|kind| {
                    !(server_kinds.contains(kind) || (**kind == Kind::Integer && server_kinds.contains(&Kind::Number)))
                })
                .map(|kind| kind.name())
                .collect();
            if !refused.is_empty() {
                let names: Vec<&str> = server_kinds.iter().map(|kind| kind.name()).collect();
                found.push(format!(
                    "{}: declared as {}, the server accepts {}",
                    at(path),
                    refused.join(", "),
                    names.join(", ")
                ));
                return;
            }
        } else if server.contains_key("type") {
            found.push(format!("{}: the server's `type` is not readable", at(path)));
            return;
        }

        if listed(server).is_some() {
            found.push(format!(
                "{}: the server accepts only listed values, the declaration lists none",
                at(path)
            ));
        }

        // Bounds, for the types they apply to.
        let numeric = has(Kind::Integer) || has(Kind::Number);
        if numeric {
            for (inclusive, exclusive, lower) in [
                ("minimum", "exclusiveMinimum", true),
                ("maximum", "exclusiveMaximum", false),
            ] {
                if let Some(wanted) = bound(server, inclusive, exclusive, lower) {
                    let kept = bound(declared, inclusive, exclusive, lower)
                        .is_some_and(|given| stricter(given, wanted, lower));
                    if !kept {
                        found.push(format!(
                            "{}: the server's `{inclusive}`/`{exclusive}` is not kept by the declaration",
                            at(path)
                        ));
                    }
                }
            }
            if let Some(step) = server.get("multipleOf").and_then(Value::as_f64) {
                let kept = declared
                    .get("multipleOf")
                    .and_then(Value::as_f64)
                    .is_some_and(|given| step > 0.0 && (given / step).fract() == 0.0);
                if !kept {
                    found.push(format!(
                        "{}: the server's `multipleOf` is not kept by the declaration",
                        at(path)
                    ));
                }
            }
        }
        let counts: [(&str, bool, bool); 6] = [
            ("minLength", true, has(Kind::String)),
            ("maxLength", false, has(Kind::String)),
            ("minItems", true, has(Kind::Array)),
            ("maxItems", false, has(Kind::Array)),
            ("minProperties", true, has(Kind::Object)),
            ("maxProperties", false, has(Kind::Object)),
        ];
        for (keyword, lower, applies) in counts {
            let Some(wanted) = server.get(keyword).and_then(Value::as_u64) else {
                continue;
            };
            let kept = declared
                .get(keyword)
                .and_then(Value::as_u64)
                .is_some_and(|given| if lower { given >= wanted } else { given <= wanted });
            if applies && !kept {
                found.push(format!(
                    "{}: the server's `{keyword}` is not kept by the declaration",
                    at(path)
                ));
            }
        }
        if has(Kind::String)
            && let Some(pattern) = server.get("pattern")
            && declared.get("pattern") != Some(pattern)
        {
            found.push(format!("{}: the server's `pattern` is not the declared one", at(path)));
        }
        if has(Kind::Array)
            && server.get("uniqueItems") == Some(&Value::Bool(true))
            && declared.get("uniqueItems") != Some(&Value::Bool(true))
        {
            found.push(format!(
                "{}: the server wants unique items, the declaration does not",
                at(path)
            ));
        }
        if has(Kind::Array) && (server.contains_key("maxContains") || server.contains_key("minContains")) {
            found.push(format!(
                "{}: the server's schema uses `minContains`/`maxContains`, which this check cannot prove",
                at(path)
            ));
        }

        if has(Kind::Object) {
            self.objects(declared, server, path, normalised, next, found);
        }
        if has(Kind::Array) {
            let empty = Value::Object(Map::new());
            let declared_items = declared.get("items").unwrap_or(&empty);
            match server.get("items") {
                None => {}
                Some(Value::Array(_)) => {
                    found.push(format!(
                        "{}: the server's schema uses tuple `items`, which this check cannot prove",
                        at(path)
                    ));
                }
                Some(items) => self.compatible(declared_items, items, &format!("{path}[]"), normalised, next, found),
            }
        }
    }

    /// The object keywords: required, properties, additional properties.
    fn objects(
        &self,
        declared: &Map<String, Value>,
        server: &Map<String, Value>,
        path: &str,
        normalised: bool,
        next: usize,
        found: &mut Vec<String>,
    ) {
        let empty = Map::new();
        let declared_properties = declared.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let server_properties = server.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let declared_required: Vec<&str> = declared
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let provided = |name: &str| {
            declared_required.contains(&name)
                || (normalised
                    && declared_properties
                        .get(name)
                        .is_some_and(|property| property.get("default").is_some()))
        };
        for name in server.get("required").and_then(Value::as_array).into_iter().flatten() {
            let Some(name) = name.as_str() else { continue };
            if !provided(name) {
                if declared_properties.contains_key(name) {
                    found.push(format!(
                        "{}: the server requires `{name}`, which the declaration leaves optional",
                        at(&join(path, name))
                    ));
                } else {
                    found.push(format!(
                        "{}: the server requires `{name}`, which the declaration does not have",
                        at(&join(path, name))
                    ));
                }
            }
        }
        let server_additional = server.get("additionalProperties").cloned().unwrap_or(Value::Bool(true));
        for (name, property) in declared_properties {
            let target = server_properties.get(name).unwrap_or(&server_additional);
            if target == &Value::Bool(false) {
                found.push(format!(
                    "{}: the server does not accept this parameter",
                    at(&join(path, name))
                ));
                continue;
            }
            self.compatible(property, target, &join(path, name), normalised, next, found);
        }
        // Extra properties the declaration allows must be accepted too.
        let declared_additional = declared
            .get("additionalProperties")
            .cloned()
            .unwrap_or(Value::Bool(true));
        if declared_additional != Value::Bool(false) {
            for (name, property) in server_properties {
                if !declared_properties.contains_key(name) {
                    self.compatible(&declared_additional, property, &join(path, name), false, next, found);
                }
            }
            if server_additional == Value::Bool(false) {
                found.push(format!(
                    "{}: the declaration allows properties it does not list, the server refuses them",
                    at(path)
                ));
            } else {
                self.compatible(
                    &declared_additional,
                    &server_additional,
                    &join(path, "*"),
                    false,
                    next,
                    found,
                );
            }
        }
    }

    /// Whether the server's (sub)schema accepts `value`, validated with the server's definitions
    /// in reach.
    fn server_accepts(&self, schema: &Map<String, Value>, value: &Value) -> bool {
        let mut document = schema.clone();
        for key in ["$defs", "definitions"] {
            if let Some(definitions) = self.server_root.get(key)
                && !document.contains_key(key)
            {
                document.insert(key.to_string(), definitions.clone());
            }
        }
        jsonschema::options()
            .build(&Value::Object(document))
            .is_ok_and(|validator| validator.is_valid(value))
    }
}

/// `base`'s keywords with `alternative`'s on top (a declared union branch with its siblings).
fn merge(base: &Map<String, Value>, alternative: &Value) -> Value {
    match alternative {
        Value::Object(branch) => {
            let mut merged = base.clone();
            for (key, value) in branch {
                merged.insert(key.clone(), value.clone());
            }
            Value::Object(merged)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
#[path = "compat_tests.rs"]
mod tests;
