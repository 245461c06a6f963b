//! What an agent's model is shown of the conversation: all of it, none of it, its last messages,
//! or one user message rendered from the state. The agent's own turn (what the current visit of
//! its node has added) is shown after the input in every case.

use serde::{Deserialize, Serialize};

/// The messages of the conversation an agent sees before its own turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "Written")]
pub enum AgentInput {
    /// The whole conversation (the default).
    #[default]
    Conversation,
    /// No earlier message: only the agent's own turn.
    None,
    /// The last `count` messages before the agent's own turn (1 to [`MAX_INPUT_LAST`]), extended
    /// back so that no tool result is shown without the assistant message holding its call.
    Last {
        /// How many messages.
        count: u64,
    },
    /// One user message, this template rendered over the state (its `{placeholders}` name state
    /// fields), instead of the conversation.
    Template {
        /// The template.
        template: String,
    },
}

/// An input as written, before its fields are matched to its kind (serde's tagged enums let
/// unknown fields through on their unit variants).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    kind: Kind,
    count: Option<u64>,
    template: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Conversation,
    None,
    Last,
    Template,
}

impl TryFrom<Written> for AgentInput {
    type Error = String;

    fn try_from(written: Written) -> Result<Self, String> {
        match (written.kind, written.count, written.template) {
            (Kind::Conversation, None, None) => Ok(Self::Conversation),
            (Kind::None, None, None) => Ok(Self::None),
            (Kind::Last, Some(count), None) => Ok(Self::Last { count }),
            (Kind::Template, None, Some(template)) => Ok(Self::Template { template }),
            (Kind::Last, _, _) => Err("an input of kind `last` has exactly the field `count`".to_owned()),
            (Kind::Template, _, _) => Err("an input of kind `template` has exactly the field `template`".to_owned()),
            (Kind::Conversation | Kind::None, _, _) => {
                Err("an input of kind `conversation` or `none` has no other field".to_owned())
            }
        }
    }
}

/// The largest `count` of [`AgentInput::Last`].
pub const MAX_INPUT_LAST: u64 = 1000;

impl AgentInput {
    /// What is wrong with this input, if anything: a `count` out of range.
    pub fn problem(&self) -> Option<String> {
        match self {
            Self::Last { count } if !(1..=MAX_INPUT_LAST).contains(count) => {
                Some(format!("`input`: `count` must be 1 to {MAX_INPUT_LAST}, not {count}"))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_has_its_json_shape() {
        let cases = [
            (AgentInput::Conversation, json!({"kind": "conversation"})),
            (AgentInput::None, json!({"kind": "none"})),
            (AgentInput::Last { count: 2 }, json!({"kind": "last", "count": 2})),
            (
                AgentInput::Template {
                    template: "Section {s}".into(),
                },
                json!({"kind": "template", "template": "Section {s}"}),
            ),
        ];
        for (input, shape) in cases {
            assert_eq!(serde_json::to_value(&input).unwrap(), shape);
            assert_eq!(serde_json::from_value::<AgentInput>(shape).unwrap(), input);
        }
    }

    #[test]
    fn unknown_fields_and_kinds_are_refused() {
        assert!(serde_json::from_value::<AgentInput>(json!({"kind": "none", "count": 1})).is_err());
        assert!(serde_json::from_value::<AgentInput>(json!({"kind": "everything"})).is_err());
        assert!(serde_json::from_value::<AgentInput>(json!({"kind": "last"})).is_err());
        assert!(serde_json::from_value::<AgentInput>(json!({"kind": "last", "count": 1, "template": "x"})).is_err());
        assert!(serde_json::from_value::<AgentInput>(json!({"kind": "template", "count": 1})).is_err());
        assert!(serde_json::from_value::<AgentInput>(json!({"count": 1})).is_err());
    }

    #[test]
    fn count_is_one_to_a_thousand() {
        assert!(AgentInput::Last { count: 0 }.problem().is_some());
        assert!(AgentInput::Last { count: 1 }.problem().is_none());
        assert!(AgentInput::Last { count: 1000 }.problem().is_none());
        assert!(AgentInput::Last { count: 1001 }.problem().is_some());
    }
}
