//! The scripted model's position in one thread, as it travels in [`ModelRequest::cursor`] and
//! [`ModelReply::cursor`] and so lives in the thread's checkpoint (`ThreadRecord::model_cursors`).
//!
//! The JSON shape (documented in `docs/runtime.md`, "The scripted model"):
//!
//! - fixed turns: `{"turn": 3, "calls": 2}`: the next turn across the thread, and how many
//!   tool calls the model made in the thread (the next call id's number is `calls + 1`);
//! - rules: `{"turn": 1, "calls": 2, "run": {"id": "<run id>", "rule": 0, "captures":
//!   {"order": "1042"}}}`: the run being played, the rule it chose (`null` for the fallback),
//!   that rule's captures, and the next turn of the run.
//!
//! [`ModelRequest::cursor`]: crate::ports::ModelRequest::cursor
//! [`ModelReply::cursor`]: crate::ports::ModelReply::cursor

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Where a scripted model is in a thread.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Cursor {
    /// The next turn to play: across the thread for fixed turns, within [`Cursor::run`] for rules.
    pub turn: usize,
    /// The tool calls made so far in the thread, by this model.
    pub calls: u64,
    /// The run whose rule is being played (rules only).
    #[serde(default)]
    pub run: Option<RunPlay>,
}

/// The rule a run chose, with its captures, so later calls of the run need no new match.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunPlay {
    /// The run's id.
    pub id: String,
    /// The index of the chosen rule; `None` for the fallback turn.
    pub rule: Option<usize>,
    /// The named captures of the match.
    #[serde(default)]
    pub captures: BTreeMap<String, String>,
}

impl Cursor {
    /// Reads a stored cursor; no cursor is the start of the thread. A value of another shape
    /// (a tampered store, another model's cursor) is an error naming the problem.
    pub fn read(value: Option<&Value>) -> Result<Self, String> {
        match value {
            None | Some(Value::Null) => Ok(Self::default()),
            Some(value) => {
                Cursor::deserialize(value).map_err(|error| format!("has a stored position that is not valid: {error}"))
            }
        }
    }

    /// The cursor as JSON (the shape [`Cursor::read`] reads: `run` only when there is one),
    /// built directly: it is written after every model call, and going through a serializer
    /// cost several times more.
    pub fn into_value(self) -> Value {
        let mut cursor = Map::new();
        cursor.insert("turn".to_owned(), Value::from(self.turn));
        cursor.insert("calls".to_owned(), Value::from(self.calls));
        if let Some(run) = self.run {
            let captures = run
                .captures
                .into_iter()
                .map(|(name, text)| (name, Value::String(text)))
                .collect();
            let mut play = Map::new();
            play.insert("id".to_owned(), Value::String(run.id));
            play.insert("rule".to_owned(), run.rule.map_or(Value::Null, Value::from));
            play.insert("captures".to_owned(), Value::Object(captures));
            cursor.insert("run".to_owned(), Value::Object(play));
        }
        Value::Object(cursor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn no_cursor_is_the_start_of_the_thread() {
        assert_eq!(Cursor::read(None), Ok(Cursor::default()));
        assert_eq!(Cursor::read(Some(&Value::Null)), Ok(Cursor::default()));
    }

    #[test]
    fn fixed_cursor_round_trips_without_a_run() {
        let cursor = Cursor {
            turn: 3,
            calls: 2,
            run: None,
        };
        let value = cursor.clone().into_value();
        assert_eq!(value, json!({"turn": 3, "calls": 2}));
        assert_eq!(Cursor::read(Some(&value)), Ok(cursor));
    }

    #[test]
    fn rule_cursor_round_trips_with_its_captures() {
        let cursor = Cursor {
            turn: 1,
            calls: 1,
            run: Some(RunPlay {
                id: "run_1".into(),
                rule: Some(0),
                captures: BTreeMap::from([("order".into(), "1042".into())]),
            }),
        };
        let value = cursor.clone().into_value();
        assert_eq!(
            value,
            json!({"turn": 1, "calls": 1, "run": {"id": "run_1", "rule": 0, "captures": {"order": "1042"}}})
        );
        assert_eq!(Cursor::read(Some(&value)), Ok(cursor));
    }

    #[test]
    fn a_cursor_of_another_shape_is_refused() {
        for bad in [
            json!({"turn": -1, "calls": 0}),
            json!({"turn": 1}),
            json!("3"),
            json!({"turn": 0, "calls": 0, "x": 1}),
        ] {
            let error = Cursor::read(Some(&bad)).unwrap_err();
            assert!(error.starts_with("has a stored position that is not valid"), "{error}");
        }
    }
}
