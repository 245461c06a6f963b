//! Which turn a scripted model plays at a call, and what it says: the pure part of
//! [`super::ScriptedModel`]. The turn choice and the templates are the artifact's own
//! ([`tenx_artifact::script::select_with`], [`Selection::render`]), so what `tenxc check` proved is
//! what plays.

use std::collections::BTreeMap;
use std::sync::Arc;

use tenx_artifact::Script;
use tenx_artifact::Turn;
use tenx_artifact::script::{ScriptError, Selection, select_with};

use super::cursor::{Cursor, RunPlay};
use crate::ports::ModelErrorKind;
use crate::wire::{Message, Role};

/// Why a turn cannot be played: the class of failure and a message (without the model's name,
/// which the caller adds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlayError {
    /// `ScriptExhausted` when no turn is left or no rule matches; `Refused` otherwise.
    pub kind: ModelErrorKind,
    /// What happened.
    pub message: String,
}

impl PlayError {
    fn exhausted(message: String) -> Self {
        Self {
            kind: ModelErrorKind::ScriptExhausted,
            message,
        }
    }

    fn refused(message: String) -> Self {
        Self {
            kind: ModelErrorKind::Refused,
            message,
        }
    }
}

/// Plays the next turn: returns it rendered, with the cursor after it.
///
/// With fixed turns the cursor's turn counts across the thread. With rules, a run id the cursor
/// has not seen starts a new play: the rules are matched against `run_input` and the chosen
/// turns play from the first; the same run id continues where the cursor is, so a resumed run
/// goes on with its rule.
pub(crate) fn play(
    script: &Script,
    cursor: Cursor,
    run_id: &str,
    run_input: &str,
    result: Option<&str>,
) -> Result<(Turn, Cursor), PlayError> {
    if script.rules.is_empty() && script.fallback.is_none() {
        // A cursor left by a rule script (the artifact changed) restarts the fixed turns.
        let index = if cursor.run.is_some() { 0 } else { cursor.turn };
        let selection = Selection {
            rule: None,
            turns: &script.turns,
            captures: BTreeMap::new(),
        };
        let turn = selection.render(index, result).map_err(|error| match error {
            ScriptError::OutOfTurns { count, .. } => PlayError::exhausted(format!(
                "has no turn left: its {count} fixed turn(s) are all played in this thread, and model call {} asked for another",
                index.saturating_add(1)
            )),
            other => PlayError::refused(format!("cannot play fixed turn {index}: {other}")),
        })?;
        return Ok((
            turn,
            Cursor {
                turn: index.saturating_add(1),
                calls: cursor.calls,
                run: None,
            },
        ));
    }

    let (run, index) = match cursor.run {
        Some(run) if run.id == run_id => (run, cursor.turn),
        _ => {
            let selection = select_with(script, run_input, super::patterns::compiled).map_err(|error| match error {
                ScriptError::NoRuleMatches => PlayError::exhausted(
                    "has no answer: no rule matches the message that started the run, and it has no fallback"
                        .to_string(),
                ),
                other => PlayError::refused(format!("cannot choose a rule: {other}")),
            })?;
            (
                RunPlay {
                    id: run_id.to_string(),
                    rule: selection.rule,
                    captures: selection.captures,
                },
                0,
            )
        }
    };
    let turns = match run.rule {
        Some(rule) => script.rules.get(rule).map(|rule| rule.turns.as_slice()),
        None => script.fallback.as_ref().map(std::slice::from_ref),
    }
    .ok_or_else(|| {
        PlayError::refused(format!(
            "has a stored position naming rule {:?}, which the script does not have",
            run.rule
        ))
    })?;
    let selection = Selection {
        rule: run.rule,
        turns,
        captures: run.captures.clone(),
    };
    // Named only when a turn cannot be played (not on every call).
    let what = || match run.rule {
        Some(rule) => format!("rule {rule}"),
        None => "the fallback".to_string(),
    };
    let turn = selection.render(index, result).map_err(|error| match error {
        ScriptError::OutOfTurns { count, .. } => PlayError::exhausted(format!(
            "has no turn left: {} has {count} turn(s), all played in this run, and model call {} of the run asked for another",
            what(),
            index.saturating_add(1)
        )),
        other => PlayError::refused(format!("cannot play turn {index} of {}: {other}", what())),
    })?;
    Ok((
        turn,
        Cursor {
            turn: index.saturating_add(1),
            calls: cursor.calls,
            run: Some(run),
        },
    ))
}

/// The text of the last tool result of the run: the last `tool` message after the user message
/// that started the run (the last user message whose text is `run_input`; the whole
/// conversation when there is none).
pub(crate) fn last_result(messages: &[Arc<Message>], run_input: &str) -> Option<String> {
    let start = messages
        .iter()
        .rposition(|message| message.role == Role::User && message.text_cow() == run_input)
        .map_or(0, |index| index.saturating_add(1));
    messages
        .get(start..)?
        .iter()
        .rev()
        .find(|message| message.role == Role::Tool)
        .map(|message| message.text_content())
}

/// The id of a scripted tool call: `call_<model>_<n>`, `n` counting the model's calls in the
/// thread from 1. The model name keeps two scripted models of one thread apart (a model name is
/// an identifier and `n` is digits, so the id is unique).
pub(crate) fn call_id(model_name: &str, number: u64) -> String {
    format!("call_{model_name}_{number}")
}

/// Splits a text into at most `count` pieces on character boundaries, preferring to cut after
/// a space; the pieces concatenate to the text. An empty text has no pieces.
pub(crate) fn pieces(text: &str, count: usize) -> Vec<&str> {
    let chars = text.chars().count();
    let mut out = Vec::new();
    if chars == 0 || count == 0 {
        return out;
    }
    let size = chars.div_ceil(count);
    let mut rest = text;
    while !rest.is_empty() {
        let remaining = count.saturating_sub(out.len());
        let cut = if remaining <= 1 {
            rest.len()
        } else {
            cut_after(rest, size)
        };
        let (piece, after) = rest.split_at_checked(cut).unwrap_or((rest, ""));
        out.push(piece);
        rest = after;
    }
    out
}

/// The byte offset after about `size` characters of `text`, moved forward to just after the
/// next space when one follows within `size` more characters.
fn cut_after(text: &str, size: usize) -> usize {
    let mut indices = text.char_indices().skip(size);
    let Some((at, _)) = indices.next() else {
        return text.len();
    };
    let window = text.get(at..).unwrap_or("");
    window
        .char_indices()
        .take(size)
        .find(|(_, c)| *c == ' ')
        .map_or(at, |(offset, _)| at.saturating_add(offset).saturating_add(1))
}

#[cfg(test)]
mod tests;
