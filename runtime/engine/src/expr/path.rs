//! State paths: reading and writing a dotted path (`["ticket", "order"]`) in a JSON object, as
//! routes, templates, risk rules, bound arguments and the graph's `writes` do.
//!
//! A path's first segment is a top-level field of the map; every later segment is a property
//! of the object before it. A segment never indexes an array, and a path through anything that
//! is not an object (a string, a number, an array, `null`) reads nothing: no panic, no error.
//!
//! *Unset* means absent or `null`: [`read_set`] folds the two, which is what conditions and
//! templates need. [`write_path`] writes one property inside an object field: a field (or an
//! intermediate property) that is unset becomes an object holding only that property, and the
//! other properties of an object that is set are kept. It refuses to replace a value that is set
//! and is not an object, and then writes nothing.

use serde_json::{Map, Value};

/// Why [`write_path`] wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path has no segment.
    #[error("a state path needs at least one field")]
    Empty,
    /// A step of the path holds a value that is set and is not an object.
    #[error("cannot write `{path}`: `{at}` holds {kind}, not an object")]
    NotAnObject {
        /// The whole path, dotted.
        path: String,
        /// The prefix that holds the value, dotted.
        at: String,
        /// The JSON kind found there (`a string`, `a number`, …).
        kind: &'static str,
    },
}

/// The value at `path`, or `None` when a step is missing or is not an object. A `null` value
/// is returned as `Some(&Value::Null)`; use [`read_set`] to treat it as unset. The empty path
/// reads nothing.
pub fn read_path<'m>(map: &'m Map<String, Value>, path: &[String]) -> Option<&'m Value> {
    let (first, rest) = path.split_first()?;
    let mut value = map.get(first)?;
    for segment in rest {
        value = value.as_object()?.get(segment)?;
    }
    Some(value)
}

/// The value at `path` when it is set: `None` for a missing step, a step through a non-object,
/// and `null`.
pub fn read_set<'m>(map: &'m Map<String, Value>, path: &[String]) -> Option<&'m Value> {
    read_path(map, path).filter(|value| !value.is_null())
}

/// Writes `value` at `path`, creating an object for every unset step (absent or `null`) and
/// keeping the other properties of every object on the way.
///
/// # Errors
///
/// [`PathError::Empty`] for the empty path; [`PathError::NotAnObject`] when a step before the
/// last holds a value that is set and is not an object. On an error nothing is written.
pub fn write_path(map: &mut Map<String, Value>, path: &[String], value: Value) -> Result<(), PathError> {
    let Some((last, parents)) = path.split_last() else {
        return Err(PathError::Empty);
    };
    // Check first, so that a refusal writes nothing. Creating objects never fails, so once
    // the walk below starts creating, nothing after it can refuse either.
    check_parents(map, path, parents)?;
    let mut current = map;
    for (depth, segment) in parents.iter().enumerate() {
        let slot = current.entry(segment.clone()).or_insert(Value::Null);
        if slot.is_null() {
            *slot = Value::Object(Map::new());
        }
        current = match slot {
            Value::Object(object) => object,
            // INVARIANT: `check_parents` refused every set non-object on the way.
            _ => return Err(not_an_object(path, depth, slot)),
        };
    }
    current.insert(last.clone(), value);
    Ok(())
}

/// Refuses a path whose parents cross a value that is set and is not an object.
fn check_parents(map: &Map<String, Value>, path: &[String], parents: &[String]) -> Result<(), PathError> {
    let mut current = Some(map);
    for (depth, segment) in parents.iter().enumerate() {
        let Some(object) = current else { return Ok(()) };
        current = match object.get(segment) {
            None | Some(Value::Null) => None,
            Some(Value::Object(inner)) => Some(inner),
            Some(other) => return Err(not_an_object(path, depth, other)),
        };
    }
    Ok(())
}

/// The refusal for the set non-object found at `path[depth]`.
fn not_an_object(path: &[String], depth: usize, found: &Value) -> PathError {
    PathError::NotAnObject {
        path: path.join("."),
        at: path.get(..=depth).unwrap_or(path).join("."),
        kind: kind_of(found),
    }
}

/// The JSON kind of a value, with its article, for messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(dotted: &str) -> Vec<String> {
        if dotted.is_empty() {
            return Vec::new();
        }
        dotted.split('.').map(str::to_string).collect()
    }

    fn state(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("test states are objects"),
        }
    }

    #[test]
    fn reads_top_level_and_deep_paths() {
        let s = state(json!({
            "a": 1,
            "customer": { "tier": "gold", "address": { "city": "Zürich", "zip": null } },
            "list": [{ "x": 1 }],
            "text": "hello",
            "nothing": null
        }));
        let cases: &[(&str, Option<Value>)] = &[
            ("a", Some(json!(1))),
            ("customer.tier", Some(json!("gold"))),
            ("customer.address.city", Some(json!("Zürich"))),
            ("customer.address.zip", Some(Value::Null)),
            ("customer.address.country", None),
            ("customer.tier.length", None),
            ("list.0", None),
            ("list.x", None),
            ("text.len", None),
            ("nothing", Some(Value::Null)),
            ("nothing.deeper", None),
            ("missing", None),
            ("missing.deeper.still", None),
            ("", None),
        ];
        for (dotted, expected) in cases {
            assert_eq!(read_path(&s, &path(dotted)).cloned(), *expected, "read_path {dotted}");
        }
        assert_eq!(read_set(&s, &path("nothing")), None);
        assert_eq!(read_set(&s, &path("customer.address.zip")), None);
        assert_eq!(read_set(&s, &path("a")), Some(&json!(1)));
    }

    #[test]
    fn reads_a_path_hundreds_of_steps_deep() {
        let mut value = json!("bottom");
        for _ in 0..300 {
            value = json!({ "k": value });
        }
        let s = state(json!({ "root": value }));
        let mut long = vec!["root".to_string()];
        long.extend(std::iter::repeat_n("k".to_string(), 300));
        assert_eq!(read_path(&s, &long), Some(&json!("bottom")));
        long.push("k".to_string());
        assert_eq!(read_path(&s, &long), None);
    }

    #[test]
    fn writes_a_top_level_field() {
        let mut s = state(json!({ "a": 1 }));
        write_path(&mut s, &path("a"), json!([1, 2])).unwrap();
        write_path(&mut s, &path("b"), json!(null)).unwrap();
        assert_eq!(Value::Object(s), json!({ "a": [1, 2], "b": null }));
    }

    #[test]
    fn an_unset_field_becomes_an_object_holding_only_that_property() {
        let mut s = state(json!({ "other": true, "nulled": null }));
        write_path(&mut s, &path("ticket.order"), json!({ "id": "1042" })).unwrap();
        write_path(&mut s, &path("nulled.x.y"), json!(1)).unwrap();
        assert_eq!(
            Value::Object(s),
            json!({
                "other": true,
                "ticket": { "order": { "id": "1042" } },
                "nulled": { "x": { "y": 1 } }
            })
        );
    }

    #[test]
    fn the_other_properties_of_a_set_object_are_kept() {
        let mut s = state(json!({ "ticket": { "note": "late", "order": { "id": "1" } } }));
        write_path(&mut s, &path("ticket.order"), json!({ "id": "2" })).unwrap();
        write_path(&mut s, &path("ticket.extra.deep"), json!("x")).unwrap();
        assert_eq!(
            Value::Object(s),
            json!({ "ticket": { "note": "late", "order": { "id": "2" }, "extra": { "deep": "x" } } })
        );
    }

    #[test]
    fn a_set_non_object_on_the_way_is_refused_and_nothing_is_written() {
        let original = json!({ "ticket": { "note": "late" }, "n": 5, "arr": [1] });
        for (dotted, at, kind) in [
            ("ticket.note.x", "ticket.note", "a string"),
            ("n.x", "n", "a number"),
            ("arr.0", "arr", "an array"),
            ("ticket.note.x.y", "ticket.note", "a string"),
        ] {
            let mut s = state(original.clone());
            let error = write_path(&mut s, &path(dotted), json!(1)).unwrap_err();
            assert_eq!(
                error,
                PathError::NotAnObject {
                    path: dotted.to_string(),
                    at: at.to_string(),
                    kind
                },
                "{dotted}"
            );
            assert_eq!(Value::Object(s), original, "{dotted} wrote something");
        }
        let mut s = state(original.clone());
        assert_eq!(write_path(&mut s, &[], json!(1)), Err(PathError::Empty));
        assert_eq!(Value::Object(s), original);
    }

    #[test]
    fn repeated_segment_names_are_located_by_position() {
        let mut s = state(json!({ "a": { "a": 3 } }));
        let error = write_path(&mut s, &path("a.a.a"), json!(1)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot write `a.a.a`: `a.a` holds a number, not an object"
        );
    }

    #[test]
    fn unicode_segments_are_ordinary_keys() {
        let mut s = Map::new();
        write_path(&mut s, &path("größe.😀"), json!("ok")).unwrap();
        assert_eq!(read_path(&s, &path("größe.😀")), Some(&json!("ok")));
    }
}
