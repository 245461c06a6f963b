//! `${NAME}` environment templates: the `http` URLs and header values of an artifact, filled from
//! the environment once, when the artifact is loaded.
//!
//! The artifact keeps these strings as the compiler decoded them, with `\$`, `\{` and `\}` still
//! escaped (docs/artifact.md, "Strings"). Read here:
//!
//! | written | read as |
//! |---|---|
//! | `${NAME}`, `NAME` matching `[A-Za-z_][A-Za-z0-9_]*` | the variable's value |
//! | `\$` `\{` `\}` | the literal `$`, `{`, `}` |
//! | any other `\`, a `$` not followed by `{` | itself |
//! | any other `${` (unclosed, empty, not a name) | an error: the compiler refuses it (`TENX0821`), so the runtime fails closed |
//!
//! The host's environment resolution and the tool runner both read templates through this module,
//! so the names a host is asked for are exactly the ones the runner fills.

use std::collections::{BTreeMap, HashMap};

/// Where resolved variables come from: the host's resolved environment (the `tenx-runtime`
/// `Environment`), or a map in tests.
pub trait Variables {
    /// The value of the variable `name`, if resolved.
    fn variable(&self, name: &str) -> Option<&str>;
}

impl Variables for BTreeMap<String, String> {
    fn variable(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str)
    }
}

impl Variables for HashMap<String, String> {
    fn variable(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str)
    }
}

/// Why a template could not be filled. Never holds a variable's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `${` that is not a well-formed reference, at this byte offset.
    #[error("a `${{` at byte {offset} is not a `${{NAME}}` reference")]
    Malformed {
        /// The byte offset of the `$`.
        offset: usize,
    },
    /// A variable the environment does not hold.
    #[error("the environment variable `{name}` is not set")]
    Missing {
        /// The variable's name.
        name: String,
    },
}

/// One piece of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'t> {
    /// Literal text (escapes already applied).
    Text(char),
    /// A `${NAME}` reference.
    Variable(&'t str),
}

/// Whether `name` is a variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads `text` into pieces, or the offset of the first malformed `${`.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut found = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some(&(_, escaped @ ('$' | '{' | '}'))) => {
                    found.push(Piece::Text(escaped));
                    chars.next();
                }
                _ => found.push(Piece::Text('\\')),
            },
            '$' if chars.peek().is_some_and(|&(_, next)| next == '{') => {
                let rest = text.get(offset.saturating_add(2)..).unwrap_or("");
                let name = rest
                    .find('}')
                    .and_then(|close| rest.get(..close))
                    .filter(|name| is_variable_name(name))
                    .ok_or(TemplateError::Malformed { offset })?;
                found.push(Piece::Variable(name));
                // Skip `{`, the name and `}` (all ASCII).
                for _ in 0..name.len().saturating_add(2) {
                    chars.next();
                }
            }
            other => found.push(Piece::Text(other)),
        }
    }
    Ok(found)
}

/// The names of every `${NAME}` reference in `text`, in order, repeats included.
pub fn variable_names(text: &str) -> Result<Vec<&str>, TemplateError> {
    Ok(pieces(text)?
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Variable(name) => Some(name),
            Piece::Text(_) => None,
        })
        .collect())
}

/// `text` with every reference replaced by its value and every escape applied.
pub fn fill(text: &str, variables: &dyn Variables) -> Result<String, TemplateError> {
    let mut filled = String::with_capacity(text.len());
    for piece in pieces(text)? {
        match piece {
            Piece::Text(c) => filled.push(c),
            Piece::Variable(name) => filled.push_str(
                variables
                    .variable(name)
                    .ok_or_else(|| TemplateError::Missing { name: name.to_string() })?,
            ),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn references_are_filled_and_escapes_applied() {
        let vars = env(&[("URL", "http://127.0.0.1:9"), ("TOKEN", "s3cr${x}t")]);
        assert_eq!(fill("${URL}/a", &vars).unwrap(), "http://127.0.0.1:9/a");
        assert_eq!(fill("Bearer ${TOKEN}", &vars).unwrap(), "Bearer s3cr${x}t");
        assert_eq!(fill(r"\$1 \{a\} \n $ $x", &vars).unwrap(), r"$1 {a} \n $ $x");
        assert_eq!(fill(r"\${URL}", &vars).unwrap(), "${URL}");
        assert_eq!(fill("é${URL}ü", &vars).unwrap(), "éhttp://127.0.0.1:9ü");
        assert_eq!(fill("", &vars).unwrap(), "");
        assert_eq!(fill("trailing \\", &vars).unwrap(), "trailing \\");
    }

    #[test]
    fn names_are_listed_in_order() {
        assert_eq!(variable_names("${A}/${_b1}/${A}\\${C}").unwrap(), vec!["A", "_b1", "A"]);
        assert!(variable_names("plain").unwrap().is_empty());
    }

    #[test]
    fn malformed_references_fail_closed() {
        for (text, offset) in [
            ("x${", 1),
            ("${}", 0),
            ("${1A}", 0),
            ("a ${B C}", 2),
            ("${A-B}", 0),
            ("${A", 0),
        ] {
            assert_eq!(variable_names(text), Err(TemplateError::Malformed { offset }), "{text}");
        }
    }

    #[test]
    fn a_missing_variable_is_named_never_valued() {
        let error = fill("${A}${B}", &env(&[("A", "secret")])).unwrap_err();
        assert_eq!(error, TemplateError::Missing { name: "B".into() });
        assert!(!error.to_string().contains("secret"));
    }

    #[test]
    fn variable_names_rule() {
        for good in ["A", "_", "a_1", "PAY_TOKEN"] {
            assert!(is_variable_name(good));
        }
        for bad in ["", "1A", "A-B", "A B", "É"] {
            assert!(!is_variable_name(bad));
        }
    }
}
