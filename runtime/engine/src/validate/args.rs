//! The arguments of a builtin validator's use: the validator's declared defaults (the
//! artifact's `Validator::Builtin::args`) with the use's arguments over them, then the
//! standard library's defaults for anything still missing. A value of the wrong type, out of
//! the declared range, or an argument the builtin does not have makes the validator fail closed
//! (`validator_misconfigured`): `tenxc check` refuses all of these, so only a tampered or
//! hand-written artifact gets here.

use serde_json::{Map, Value};

use super::violation::Finding;

/// A builtin's merged arguments.
pub(super) struct Args {
    map: Map<String, Value>,
}

impl Args {
    /// `defaults` with `used` over them; both must be objects.
    pub(super) fn merge(defaults: &Value, used: &Value, known: &[&str]) -> Result<Self, Finding> {
        let (Value::Object(defaults), Value::Object(used)) = (defaults, used) else {
            return Err(Finding::misconfigured("args", "the arguments are not an object"));
        };
        let mut map = defaults.clone();
        map.extend(used.iter().map(|(name, value)| (name.clone(), value.clone())));
        if let Some(unknown) = map.keys().find(|name| !known.contains(&name.as_str())) {
            return Err(Finding::misconfigured(format!("args.{unknown}"), "no such parameter"));
        }
        Ok(Self { map })
    }

    /// An integer argument in `min..=max`.
    pub(super) fn int(&self, name: &str, default: u64, min: u64, max: u64) -> Result<u64, Finding> {
        match self.map.get(name) {
            None => Ok(default),
            Some(value) => value.as_u64().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
                Finding::misconfigured(
                    format!("args.{name}"),
                    &format!("expected an integer from {min} to {max}"),
                )
            }),
        }
    }

    /// A boolean argument.
    pub(super) fn bool(&self, name: &str, default: bool) -> Result<bool, Finding> {
        match self.map.get(name) {
            None => Ok(default),
            Some(value) => value
                .as_bool()
                .ok_or_else(|| Finding::misconfigured(format!("args.{name}"), "expected a boolean")),
        }
    }

    /// A list of strings (`None` when the argument is absent).
    pub(super) fn strings(&self, name: &str) -> Result<Option<Vec<String>>, Finding> {
        let Some(value) = self.map.get(name) else {
            return Ok(None);
        };
        let wrong = || Finding::misconfigured(format!("args.{name}"), "expected a list of strings");
        let Value::Array(items) = value else {
            return Err(wrong());
        };
        items
            .iter()
            .map(|item| item.as_str().map(str::to_owned).ok_or_else(wrong))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::ViolationType;

    #[test]
    fn the_use_overrides_the_declared_defaults() {
        let args = Args::merge(
            &json!({"max_length": 10, "strict": true}),
            &json!({"strict": false}),
            &["max_length", "strict"],
        )
        .unwrap();
        assert_eq!(args.int("max_length", 5, 1, 100).unwrap(), 10);
        assert!(!args.bool("strict", true).unwrap());
        assert_eq!(args.int("other", 7, 1, 100).unwrap(), 7);
    }

    #[test]
    fn wrong_types_ranges_and_names_fail_closed() {
        let args = Args::merge(
            &json!({}),
            &json!({"max_length": 0, "strict": "no", "list": [1]}),
            &["max_length", "strict", "list"],
        )
        .unwrap();
        let error = args.int("max_length", 5, 1, 100).unwrap_err();
        assert_eq!(error.violation_type, ViolationType::ValidatorMisconfigured);
        assert_eq!(error.rule, "args.max_length");
        assert!(args.bool("strict", true).is_err());
        assert!(args.strings("list").is_err());
        let unknown = Args::merge(&json!({}), &json!({"strictt": false}), &["strict"])
            .err()
            .unwrap();
        assert_eq!(unknown.rule, "args.strictt");
        assert!(Args::merge(&json!([]), &json!({}), &[]).is_err());
    }
}
