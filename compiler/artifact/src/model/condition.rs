//! Route conditions: a small boolean expression tree over the run state.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A condition of a `when` route arm, evaluated on the run state.
///
/// A `field` is a path into the state object (`["order", "total"]` is `state.order.total`); a
/// path that does not exist reads as `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// True when any of `conditions` is true (false when empty).
    Or {
        /// The alternatives, evaluated in order.
        conditions: Vec<Condition>,
    },
    /// True when all of `conditions` are true (true when empty).
    And {
        /// The requirements, evaluated in order.
        conditions: Vec<Condition>,
    },
    /// True when `condition` is false.
    Not {
        /// The negated condition.
        condition: Box<Condition>,
    },
    /// Compares a state field with a constant.
    Compare {
        /// Path into the state.
        field: Vec<String>,
        /// The comparison.
        op: CompareOp,
        /// The constant on the right-hand side.
        value: Value,
    },
    /// True when a state field is truthy: not `null`, `false`, `0`, `""`, `[]` or `{}`.
    Truthy {
        /// Path into the state.
        field: Vec<String>,
    },
}

/// A comparison operator of [`Condition::Compare`].
///
/// `eq`/`ne` compare JSON values structurally (numbers by value). `lt`, `le`, `gt`, `ge` compare
/// two numbers or two strings and are false for anything else. `in` is true when the field equals
/// an element of `value` (an array); `contains` is true when the field (a string or an array)
/// contains `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Less than.
    Lt,
    /// Less than or equal.
    Le,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Ge,
    /// Member of the array `value`.
    In,
    /// String or array that contains `value`.
    Contains,
}

impl CompareOp {
    /// The operator as `.tenx` writes it (`==`, `in`, …), for pictures and messages.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
            CompareOp::In => "in",
            CompareOp::Contains => "contains",
        }
    }
}
