//! Templates: filling the `{name}` and `{customer.tier}` placeholders of a prompt, an approval or
//! interrupt message, a `target`, an interrupt `value` and an idempotency key from a JSON object
//! (the run state, or a call's arguments).
//!
//! The artifact keeps templates as the compiler decoded them (docs/artifact.md "Strings"): the
//! string escapes are already applied, except `\{`, `\}` and `\$`, which stay escaped. Reading a
//! template:
//!
//! - `\{`, `\}` and `\$` are the literal `{`, `}` and `$`; any other `\` is a literal backslash.
//! - `{path}` is a placeholder: a name (`[A-Za-z_][A-Za-z0-9_]*`) or a dotted path of names.
//! - `${NAME}` is an environment reference, which only `http` URLs and headers may hold (the
//!   compiler refuses it elsewhere): it is literal text here, never a placeholder, and the engine
//!   never reads the environment.
//! - A `}` without a `{` is literal text.
//! - A `{` with no `}` on its line, `{}`, and `{…}` whose content is not a path are errors
//!   ([`TemplateError`]): the compiler refuses them (`TENX0502`), so a sealed artifact that holds
//!   one was not made by it, and the engine fails closed instead of guessing.
//!
//! Filling a placeholder ([`render`]): a string as is; an integer in plain decimal, and a number
//! with an integral value of magnitude below 2^53 too (`5950.0` → `5950`, so a key does not
//! depend on how a client wrote an integer); any other number in the canonical JSON form
//! (`0.5`, `1e+300`); `true` and `false`; an object or array as canonical JSON (keys sorted, no
//! whitespace); an **unset** value (absent, `null`, or a path through a non-object) as `null`,
//! as the default confirmation shows an argument the call does not set. A template that is
//! exactly one placeholder in a JSON context ([`render_value`], [`render_tree`]: an interrupt's
//! `value`) keeps the value's JSON type, and an unset one is JSON `null`.

use serde_json::{Map, Number, Value};

use super::path::read_set;

/// Why a template cannot be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `{` with no `}` after it on its line.
    #[error("the `{{` at byte {offset} of the template is never closed; write `\\{{` for a literal brace")]
    Unclosed {
        /// The byte offset of the `{`.
        offset: usize,
    },
    /// `{}`.
    #[error("the template has an empty placeholder `{{}}` at byte {offset}")]
    Empty {
        /// The byte offset of the `{`.
        offset: usize,
    },
    /// `{…}` whose content is not a name or a dotted path.
    #[error(
        "`{{{content}}}` at byte {offset} of the template is not a placeholder: a placeholder is a name or a dotted path"
    )]
    NotAName {
        /// The byte offset of the `{`.
        offset: usize,
        /// The text between the braces.
        content: String,
    },
    /// A value with no JSON text (a non-finite number; possible only with `serde_json`'s
    /// `arbitrary_precision`).
    #[error("placeholder `{{{placeholder}}}` holds a number that has no JSON form")]
    NoJsonForm {
        /// The placeholder's path, dotted.
        placeholder: String,
    },
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece<'t> {
    /// Literal text, escapes decoded.
    Text(String),
    /// A placeholder: its dotted text and its path.
    Field(&'t str, Vec<String>),
}

/// Checks that `template` reads, without filling it: the loader can refuse a bad template
/// before anything runs.
///
/// # Errors
///
/// A malformed placeholder.
pub fn check(template: &str) -> Result<(), TemplateError> {
    pieces(template).map(drop)
}

/// `template` with every placeholder filled from `scope`.
///
/// # Errors
///
/// A malformed placeholder, or a value without a JSON form.
pub fn render(template: &str, scope: &Map<String, Value>) -> Result<String, TemplateError> {
    // Without a character that can start an escape or a placeholder it is all text (most
    // prompts), as [`pieces`] would read it.
    if !template.contains(SPECIAL) {
        return Ok(template.to_owned());
    }
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template)? {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Field(dotted, path) => push_value(&mut out, read_set(scope, &path), dotted)?,
        }
    }
    Ok(out)
}

/// A template in a JSON context: when it is exactly one placeholder, the value it names with its
/// JSON type (`null` when unset); otherwise the [`render`]ed string.
///
/// # Errors
///
/// As [`render`].
pub fn render_value(template: &str, scope: &Map<String, Value>) -> Result<Value, TemplateError> {
    let pieces = pieces(template)?;
    if let [Piece::Field(_, path)] = pieces.as_slice() {
        return Ok(read_set(scope, path).cloned().unwrap_or(Value::Null));
    }
    let mut out = String::with_capacity(template.len());
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Field(dotted, path) => push_value(&mut out, read_set(scope, &path), dotted)?,
        }
    }
    Ok(Value::String(out))
}

/// A JSON value whose strings are templates (an interrupt's `value`): every string, at any
/// depth, through [`render_value`]; keys and other values unchanged.
///
/// # Errors
///
/// The first error of any string, in document order.
pub fn render_tree(value: &Value, scope: &Map<String, Value>) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(template) => render_value(template, scope)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| render_tree(item, scope))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| Ok((key.clone(), render_tree(item, scope)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        other => other.clone(),
    })
}

/// Appends the text of a placeholder's value.
fn push_value(out: &mut String, value: Option<&Value>, dotted: &str) -> Result<(), TemplateError> {
    let no_form = || TemplateError::NoJsonForm {
        placeholder: dotted.to_string(),
    };
    match value {
        None | Some(Value::Null) => out.push_str("null"),
        Some(Value::String(text)) => out.push_str(text),
        Some(Value::Bool(flag)) => out.push_str(if *flag { "true" } else { "false" }),
        Some(Value::Number(number)) => match integral(number) {
            Some(integer) => out.push_str(&integer),
            None => out.push_str(&canonical(&Value::Number(number.clone())).ok_or_else(no_form)?),
        },
        Some(composite @ (Value::Array(_) | Value::Object(_))) => {
            out.push_str(&canonical(composite).ok_or_else(no_form)?);
        }
    }
    Ok(())
}

/// The decimal text of a number with an integral value: any `i64` or `u64`, and a float that
/// is a whole number of magnitude below 2^53 (where every integer is exact).
fn integral(number: &Number) -> Option<String> {
    if let Some(i) = number.as_i64() {
        return Some(i.to_string());
    }
    if let Some(u) = number.as_u64() {
        return Some(u.to_string());
    }
    const EXACT: f64 = 9_007_199_254_740_992.0;
    let float = number.as_f64()?;
    // The cast is exact: `float` is a whole number below 2^53 in magnitude. `+ 0.0` turns -0 into 0.
    (float.is_finite() && float.fract() == 0.0 && float.abs() < EXACT).then(|| ((float + 0.0) as i64).to_string())
}

/// The canonical JSON text of a value.
fn canonical(value: &Value) -> Option<String> {
    tenx_artifact::canonical_json(value)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

/// The characters that can start something other than text in a template: an escape, `${`, a
/// placeholder.
const SPECIAL: [char; 3] = ['\\', '$', '{'];

/// Reads a template into text and placeholders.
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    loop {
        // Literal text up to the next character that can start something else, copied at once.
        let plain = rest.find(SPECIAL).unwrap_or(rest.len());
        let (literal, special) = rest.split_at_checked(plain).unwrap_or((rest, ""));
        text.push_str(literal);
        rest = special;
        let Some(c) = rest.chars().next() else {
            break;
        };
        let offset = template.len() - rest.len();
        match c {
            '\\' => match rest.chars().nth(1) {
                Some(escaped @ ('{' | '}' | '$')) => {
                    text.push(escaped);
                    rest = rest.get(2..).unwrap_or("");
                }
                _ => {
                    text.push('\\');
                    rest = rest.get(1..).unwrap_or("");
                }
            },
            '$' if rest.starts_with("${") => {
                // An environment reference, up to its `}` on the line: literal text.
                let end = rest
                    .get(2..)
                    .and_then(|after| {
                        after
                            .find(['}', '\n'])
                            .filter(|&i| after.as_bytes().get(i) == Some(&b'}'))
                    })
                    .map_or(2, |close| close + 3);
                text.push_str(rest.get(..end).unwrap_or(rest));
                rest = rest.get(end..).unwrap_or("");
            }
            '{' => {
                let (dotted, after) = placeholder(rest, offset)?;
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Field(dotted, dotted.split('.').map(str::to_string).collect()));
                rest = after;
            }
            _ => {
                text.push(c);
                rest = rest.get(c.len_utf8()..).unwrap_or("");
            }
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// The placeholder that starts `text` (at `offset` in the template): its dotted path and the
/// text after its `}`.
fn placeholder(text: &str, offset: usize) -> Result<(&str, &str), TemplateError> {
    let inner = text.get(1..).unwrap_or("");
    let Some(close) = inner
        .find(['}', '{', '\n'])
        .filter(|&i| inner.as_bytes().get(i) == Some(&b'}'))
    else {
        return Err(TemplateError::Unclosed { offset });
    };
    let content = inner.get(..close).unwrap_or("");
    let after = inner.get(close + 1..).unwrap_or("");
    if content.is_empty() {
        return Err(TemplateError::Empty { offset });
    }
    if !content.split('.').all(is_name) {
        return Err(TemplateError::NotAName {
            offset,
            content: content.to_string(),
        });
    }
    Ok((content, after))
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
