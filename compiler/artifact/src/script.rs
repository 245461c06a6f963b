//! Playing a `scripted` model's [`Script`]: which turns a run plays and how a turn's templates
//! are filled. Pure functions; the runtime calls them, and the compiler uses the same template
//! reader, so what `tenxc check` proves is what the runtime does.
//!
//! - [`select`] picks the turns for a run: with rules, the first rule whose regex finds a match
//!   in the last user message (its named captures kept), else the fallback turn, else an error;
//!   without rules or fallback, the fixed turns (which the runtime plays across the thread).
//! - [`Selection::render`] fills the turn the run is at: `{name}` is a capture (an optional group
//!   that took no part in the match is empty), `{result}` the text of the last tool result in the
//!   run, and a tool argument whose whole string is `{name:conversion}` becomes a number:
//!   `cents` (a decimal with at most two decimals, `59.5` → `5950`), `int` or `number`.
//!
//! Template syntax: a placeholder is `{name}` or `{name:conversion}`, with `name` and
//! `conversion` identifiers (`[A-Za-z_][A-Za-z0-9_]*`); any other `{` is literal text. `\{`,
//! `\}` and `\$` are the literal characters.

use std::collections::BTreeMap;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Number, Value};

use crate::model::{Script, Turn};

/// The largest compiled regex a rule may have, in bytes; the compiler refuses larger ones.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The reserved placeholder for the last tool result; no capture may be named so.
pub const RESULT: &str = "result";

/// Compiles a rule's `match` as the runtime does, bounded by [`REGEX_SIZE_LIMIT`].
pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).size_limit(REGEX_SIZE_LIMIT).build()
}

/// A conversion of a whole-string argument placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// `cents`: a decimal with at most two decimals, as an integer number of cents.
    Cents,
    /// `int`: an integer.
    Int,
    /// `number`: a number.
    Number,
}

impl Conversion {
    /// Every conversion's name.
    pub const NAMES: &[&str] = &["cents", "int", "number"];

    /// The conversion called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "cents" => Some(Conversion::Cents),
            "int" => Some(Conversion::Int),
            "number" => Some(Conversion::Number),
            _ => None,
        }
    }

    /// Whether the value fits a parameter of JSON Schema type `ty`.
    pub fn fits(self, ty: &str) -> bool {
        match self {
            Conversion::Cents | Conversion::Int => ty == "integer" || ty == "number",
            Conversion::Number => ty == "number",
        }
    }

    /// Converts `text` (surrounding whitespace ignored), or `None` when it does not convert.
    pub fn convert(self, text: &str) -> Option<Value> {
        let text = text.trim();
        match self {
            Conversion::Cents => cents(text).map(Value::from),
            Conversion::Int => text.parse::<i64>().ok().map(Value::from),
            Conversion::Number => match text.parse::<i64>() {
                Ok(n) => Some(Value::from(n)),
                Err(_) => text.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number),
            },
        }
    }
}

/// `59.00` → 5900, `59` → 5900, `59.5` → 5950; `None` for anything else or an overflow.
fn cents(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (text.contains('.') && !digits(fraction)) || fraction.len() > 2 {
        return None;
    }
    let fraction = match fraction.len() {
        0 => 0,
        1 => fraction.parse::<i64>().ok()?.checked_mul(10)?,
        _ => fraction.parse::<i64>().ok()?,
    };
    whole.parse::<i64>().ok()?.checked_mul(100)?.checked_add(fraction)
}

/// A piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'t> {
    /// Literal text, escapes decoded.
    Literal(String),
    /// `{name}` or `{name:conversion}`.
    Placeholder {
        /// The capture name, or [`RESULT`].
        name: &'t str,
        /// The conversion's name, as written.
        conversion: Option<&'t str>,
    },
}

/// Reads a template into literal text and placeholders, in order.
pub fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = template;
    loop {
        // Literal text up to the next backslash or `{`, copied at once.
        let plain = rest.find(['\\', '{']).unwrap_or(rest.len());
        let (text, special) = rest.split_at_checked(plain).unwrap_or((rest, ""));
        literal.push_str(text);
        rest = special;
        let Some(c) = rest.chars().next() else {
            break;
        };
        if c == '\\'
            && let Some(next @ ('{' | '}' | '$')) = rest.chars().nth(1)
        {
            literal.push(next);
            rest = rest.get(2..).unwrap_or("");
            continue;
        }
        if c == '{'
            && let Some((name, conversion, after)) = placeholder(rest)
        {
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            }
            pieces.push(Piece::Placeholder { name, conversion });
            rest = after;
            continue;
        }
        literal.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or("");
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    pieces
}

/// `{name}` or `{name:conversion}` at the start of `text`: (name, conversion, the rest).
fn placeholder(text: &str) -> Option<(&str, Option<&str>, &str)> {
    let inner = text.strip_prefix('{')?;
    let close = inner.find('}')?;
    let body = inner.get(..close)?;
    let after = inner.get(close + 1..)?;
    let (name, conversion) = match body.split_once(':') {
        Some((name, conversion)) => (name, Some(conversion)),
        None => (body, None),
    };
    (is_identifier(name) && conversion.is_none_or(is_identifier)).then_some((name, conversion, after))
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The placeholder that is the whole of `template`, if it is exactly one.
pub fn whole_placeholder(template: &str) -> Option<(&str, Option<&str>)> {
    match pieces(template).as_slice() {
        [Piece::Placeholder { name, conversion }] => Some((name, *conversion)),
        _ => None,
    }
}

/// Why a script cannot play.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// A rule's regex does not compile.
    #[error("rule {rule} of the script has an invalid regex: {message}")]
    BadRegex {
        /// The rule's index.
        rule: usize,
        /// The regex error.
        message: String,
    },
    /// No rule matched the message and there is no fallback.
    #[error("no rule of the scripted model matches the message, and it has no fallback")]
    NoRuleMatches,
    /// The run asked for more turns than were selected.
    #[error("the scripted model has no turn left: it has {count}, and turn {index} was asked for")]
    OutOfTurns {
        /// How many turns there are.
        count: usize,
        /// The 0-based index asked for.
        index: usize,
    },
    /// `{name}` names no capture of the rule.
    #[error("placeholder `{{{0}}}` names no capture of the rule")]
    UnknownCapture(String),
    /// `{result}` before any tool result in the run.
    #[error("placeholder `{{result}}` is used before any tool result in this run")]
    NoResult,
    /// A conversion outside a whole-string argument, or of an unknown name.
    #[error("placeholder `{{{name}:{conversion}}}` has a conversion where none is allowed, or an unknown one")]
    BadConversion {
        /// The placeholder's name.
        name: String,
        /// The conversion, as written.
        conversion: String,
    },
    /// The text does not convert.
    #[error("`{text}` is not a value for the `{conversion}` conversion of `{{{name}}}`")]
    DoesNotConvert {
        /// The placeholder's name.
        name: String,
        /// The conversion.
        conversion: String,
        /// The text that did not convert.
        text: String,
    },
}

/// The turns a run plays, and the captures that fill them.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection<'s> {
    /// The index of the rule that matched; `None` for the fallback or fixed turns.
    pub rule: Option<usize>,
    /// The turns, played one per model call.
    pub turns: &'s [Turn],
    /// The named captures of the match (an optional group that took no part is empty).
    pub captures: BTreeMap<String, String>,
}

/// Picks the turns for a run that starts at `user_message` (the last user message).
pub fn select<'s>(script: &'s Script, user_message: &str) -> Result<Selection<'s>, ScriptError> {
    select_with(script, user_message, |pattern| {
        compile(pattern).map(std::sync::Arc::new)
    })
}

/// [`select`] with the rules' regexes compiled by `compiled` (the runtime passes a cache, so a
/// rule's regex is compiled once per process, not once per run). `compiled` must compile as
/// [`compile`] does.
pub fn select_with<'s>(
    script: &'s Script,
    user_message: &str,
    compiled: impl Fn(&str) -> Result<std::sync::Arc<Regex>, regex::Error>,
) -> Result<Selection<'s>, ScriptError> {
    if script.rules.is_empty() && script.fallback.is_none() {
        return Ok(Selection {
            rule: None,
            turns: &script.turns,
            captures: BTreeMap::new(),
        });
    }
    for (index, rule) in script.rules.iter().enumerate() {
        let regex = compiled(&rule.pattern).map_err(|e| ScriptError::BadRegex {
            rule: index,
            message: e.to_string(),
        })?;
        let Some(found) = regex.captures(user_message) else {
            continue;
        };
        let captures = regex
            .capture_names()
            .flatten()
            .map(|name| {
                let value = found.name(name).map(|m| m.as_str()).unwrap_or("");
                (name.to_string(), value.to_string())
            })
            .collect();
        return Ok(Selection {
            rule: Some(index),
            turns: &rule.turns,
            captures,
        });
    }
    match &script.fallback {
        Some(turn) => Ok(Selection {
            rule: None,
            turns: std::slice::from_ref(turn),
            captures: BTreeMap::new(),
        }),
        None => Err(ScriptError::NoRuleMatches),
    }
}

impl Selection<'_> {
    /// The turn at `index` (0-based) with its templates filled; `result` is the text of the last
    /// tool result in the run, if there was one.
    pub fn render(&self, index: usize, result: Option<&str>) -> Result<Turn, ScriptError> {
        let turn = self.turns.get(index).ok_or(ScriptError::OutOfTurns {
            count: self.turns.len(),
            index,
        })?;
        Ok(match turn {
            Turn::Text { text } => Turn::Text {
                text: self.fill(text, result)?,
            },
            Turn::Tool { tool, arguments } => {
                let mut filled = Map::new();
                for (key, value) in arguments {
                    let value = match value {
                        Value::String(s) => self.argument(s, result)?,
                        other => self.fill_value(other, result)?,
                    };
                    filled.insert(key.clone(), value);
                }
                Turn::Tool {
                    tool: tool.clone(),
                    arguments: filled,
                }
            }
        })
    }

    /// A top-level argument string: a whole-string conversion, or a text template.
    fn argument(&self, template: &str, result: Option<&str>) -> Result<Value, ScriptError> {
        let Some((name, Some(conversion))) = whole_placeholder(template) else {
            return self.fill(template, result).map(Value::String);
        };
        let text = self.value(name, result)?;
        let bad = || ScriptError::BadConversion {
            name: name.to_string(),
            conversion: conversion.to_string(),
        };
        Conversion::from_name(conversion)
            .ok_or_else(bad)?
            .convert(text)
            .ok_or_else(|| ScriptError::DoesNotConvert {
                name: name.to_string(),
                conversion: conversion.to_string(),
                text: text.to_string(),
            })
    }

    /// Fills every string inside a nested value as a text template.
    fn fill_value(&self, value: &Value, result: Option<&str>) -> Result<Value, ScriptError> {
        Ok(match value {
            Value::String(s) => Value::String(self.fill(s, result)?),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.fill_value(v, result))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.fill_value(v, result)?)))
                    .collect::<Result<_, ScriptError>>()?,
            ),
            other => other.clone(),
        })
    }

    /// Fills a text template.
    fn fill(&self, template: &str, result: Option<&str>) -> Result<String, ScriptError> {
        let mut out = String::new();
        for piece in pieces(template) {
            match piece {
                Piece::Literal(text) => out.push_str(&text),
                Piece::Placeholder {
                    name,
                    conversion: Some(conversion),
                } => {
                    return Err(ScriptError::BadConversion {
                        name: name.to_string(),
                        conversion: conversion.to_string(),
                    });
                }
                Piece::Placeholder { name, conversion: None } => out.push_str(self.value(name, result)?),
            }
        }
        Ok(out)
    }

    /// The text of placeholder `name`.
    fn value<'a>(&'a self, name: &str, result: Option<&'a str>) -> Result<&'a str, ScriptError> {
        if name == RESULT {
            return result.ok_or(ScriptError::NoResult);
        }
        self.captures
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| ScriptError::UnknownCapture(name.to_string()))
    }
}

#[cfg(test)]
mod tests;
