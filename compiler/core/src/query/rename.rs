//! The edits of a rename: every occurrence of the declaration gets the new name. Refused, with
//! the reason, when the new name is not a name, is a keyword or built-in type, is already
//! declared (the namespace is shared by every kind of declaration), or when the declaration is
//! the standard library's.

use super::{Index, same_declaration};
use crate::resolve::Symbol;
use std::fmt;
use tenx_diagnostics::{FileId, Span};

/// Words that cannot name a declaration.
const RESERVED: &[&str] = &[
    "import",
    "tag",
    "schema",
    "model",
    "tool",
    "agent",
    "validator",
    "interrupt",
    "graph",
    "test",
    "route",
    "by",
    "when",
    "else",
    "state",
    "and",
    "or",
    "not",
    "in",
    "handoffs",
    "true",
    "false",
    "null",
    "END",
    "std",
];

/// Why a rename was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The new name is not an identifier.
    NotAName(String),
    /// The new name is a keyword, `END` or a built-in type.
    Reserved(String),
    /// The new name is already declared.
    Collides {
        /// The new name.
        name: String,
        /// What declares it (`a tool`).
        what: String,
        /// Where.
        file: FileId,
        /// Its declared name.
        span: Span,
    },
    /// The declaration is in the standard library.
    Stdlib(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotAName(name) => write!(
                f,
                "`{name}` is not a name: a name is a letter or `_` followed by letters, digits and `_`"
            ),
            Refusal::Reserved(name) => write!(
                f,
                "`{name}` is a keyword or built-in type and cannot name a declaration"
            ),
            Refusal::Collides { name, what, .. } => write!(
                f,
                "`{name}` is already declared as {what}: every declaration shares one namespace, so pick another name"
            ),
            Refusal::Stdlib(name) => write!(f, "`{name}` is declared by the standard library and cannot be renamed"),
        }
    }
}

/// Checks that `new_name` may replace the name of `target` in `index`'s program.
pub fn check_name(index: &Index<'_>, target: &Symbol, new_name: &str) -> Result<(), Refusal> {
    let mut chars = new_name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !starts_well || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Refusal::NotAName(new_name.to_string()));
    }
    if RESERVED.contains(&new_name) || crate::resolve::BUILTIN_TYPES.contains(&new_name) {
        return Err(Refusal::Reserved(new_name.to_string()));
    }
    if let Some(existing) = index.program.lookup(new_name)
        && !same_declaration(existing, target)
    {
        return Err(Refusal::Collides {
            name: new_name.to_string(),
            what: existing.kind().with_article(),
            file: existing.file,
            span: existing.span,
        });
    }
    Ok(())
}

/// The places to rewrite to rename `target` to `new_name`: its declared name and every use.
pub fn rename(index: &Index<'_>, target: &Symbol, new_name: &str) -> Result<Vec<(FileId, Span)>, Refusal> {
    let old = index
        .sources
        .get(target.file)
        .map_or("", |s| s.slice(target.span))
        .to_string();
    if index.program.is_stdlib(target.decl) {
        return Err(Refusal::Stdlib(old));
    }
    check_name(index, target, new_name)?;
    Ok(index.references(target))
}
