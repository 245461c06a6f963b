//! Values: literals, paths, calls, lists, maps, and `+` joins.

use super::Ident;
use tenx_diagnostics::Span;

/// A value with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the value is.
    pub kind: ExprKind,
    /// Where it is written.
    pub span: Span,
}

/// The kinds of value.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A one-line string, escapes decoded.
    Str(String),
    /// A `"""` text block, escapes decoded and common indentation removed.
    Text(String),
    /// A number.
    Number(serde_json::Number),
    /// A duration, in milliseconds.
    Duration(u64),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// `a` or `a.b.c`.
    Path(Vec<Ident>),
    /// `f(x, name: y)`.
    Call {
        /// The called name.
        callee: Vec<Ident>,
        /// The arguments.
        args: Vec<Arg>,
    },
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{ key: value }`.
    Map(Vec<MapEntry>),
    /// `a + b + c` (two or more terms).
    Join(Vec<Expr>),
}

/// A call argument, positional or named.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// `name:` when named.
    pub name: Option<Ident>,
    /// The value.
    pub value: Expr,
}

/// A map entry.
#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    /// The key, unquoted.
    pub key: String,
    /// Where the key is written.
    pub key_span: Span,
    /// The value.
    pub value: Expr,
}

impl Expr {
    /// The string value of a string or text block.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Str(s) | ExprKind::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The single identifier of a one-segment path.
    pub fn as_ident(&self) -> Option<&Ident> {
        match &self.kind {
            ExprKind::Path(p) if p.len() == 1 => p.first(),
            _ => None,
        }
    }

    /// The integer value of a whole number.
    pub fn as_i64(&self) -> Option<i64> {
        match &self.kind {
            ExprKind::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// A short name for the kind of value, for messages: "a string", "a list".
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            ExprKind::Str(_) | ExprKind::Text(_) => "a string",
            ExprKind::Number(_) => "a number",
            ExprKind::Duration(_) => "a duration",
            ExprKind::Bool(_) => "a boolean",
            ExprKind::Null => "`null`",
            ExprKind::Path(_) => "a name",
            ExprKind::Call { .. } => "a call",
            ExprKind::List(_) => "a list",
            ExprKind::Map(_) => "a map",
            ExprKind::Join(_) => "a `+` join",
        }
    }

    /// The value as JSON, when it is plain data (strings, numbers, booleans, null, lists, maps).
    /// Durations become milliseconds. Names and calls are not data.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        use serde_json::Value;
        Some(match &self.kind {
            ExprKind::Str(s) | ExprKind::Text(s) => Value::String(s.clone()),
            ExprKind::Number(n) => Value::Number(n.clone()),
            ExprKind::Duration(ms) => Value::from(*ms),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Null => Value::Null,
            ExprKind::List(items) => Value::Array(items.iter().map(Expr::to_json).collect::<Option<_>>()?),
            ExprKind::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|e| Some((e.key.clone(), e.value.to_json()?)))
                    .collect::<Option<_>>()?,
            ),
            ExprKind::Path(_) | ExprKind::Call { .. } | ExprKind::Join(_) => return None,
        })
    }
}
