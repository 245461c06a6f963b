//! The script of a `scripted` model: fixed turns played in order across a thread, or rules whose
//! regex is matched against the last user message, with an optional fallback turn.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a `scripted` model answers. Exactly one of `turns` and `rules`/`fallback` is in use: a
/// model with rules or a fallback has no fixed turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Fixed turns, played one per model call, in order, across the thread.
    pub turns: Vec<Turn>,
    /// Rules, tried in order against the last user message when a run starts.
    pub rules: Vec<Rule>,
    /// The turn played when no rule matches; `null` when there is none (the run then fails).
    #[serde(deserialize_with = "super::required")]
    pub fallback: Option<Turn>,
}

/// A rule: the first whose regex finds a match in the last user message plays its turns, one
/// per model call, during that run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A Rust `regex` pattern; its named captures fill the turns' `{name}` placeholders.
    #[serde(rename = "match")]
    pub pattern: String,
    /// The turns the rule plays.
    pub turns: Vec<Turn>,
}

/// One model answer, tagged by `kind`. Its strings are templates (see [`crate::script`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Turn {
    /// A final answer.
    Text {
        /// The answer, a template.
        text: String,
    },
    /// A tool call (a handoff is the call of its `transfer_to_…` tool).
    Tool {
        /// The model-facing tool name: [`crate::Tool::name`] or a handoff's
        /// [`crate::Handoff::tool_name`], the name the runtime dispatches by.
        tool: String,
        /// The arguments; string values are templates, and a whole-string `{name:conversion}`
        /// becomes a number.
        arguments: Map<String, Value>,
    },
}
