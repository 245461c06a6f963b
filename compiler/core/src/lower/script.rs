//! Lowering of a scripted model's `turns`, `rules` and `fallback` into the artifact's
//! [`Script`]. Anything malformed was refused by the check stage (`TENX0805`–`TENX0814`); what
//! is left out here cannot occur in a program that checks.

use crate::ast::{Expr, ExprKind, ModelDecl};
use tenx_artifact::{Rule, Script, Turn};

/// The script of a scripted model.
pub(super) fn script(decl: &ModelDecl) -> Script {
    Script {
        turns: decl.turns.as_ref().map(turns).unwrap_or_default(),
        rules: decl.rules.as_ref().map(rules).unwrap_or_default(),
        fallback: decl.fallback.as_ref().and_then(turn),
    }
}

/// A list of turns.
fn turns(expr: &Expr) -> Vec<Turn> {
    match &expr.kind {
        ExprKind::List(items) => items.iter().filter_map(turn).collect(),
        _ => Vec::new(),
    }
}

/// `[{ match: "regex", turns: [...] }]`.
fn rules(expr: &Expr) -> Vec<Rule> {
    let ExprKind::List(items) = &expr.kind else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let pattern = field(item, "match")?.as_str()?.to_string();
            let turns = field(item, "turns").map(turns).unwrap_or_default();
            Some(Rule { pattern, turns })
        })
        .collect()
}

/// `{ text: "…" }` or `{ tool: "name", arguments: { … } }`.
pub(crate) fn turn(expr: &Expr) -> Option<Turn> {
    if let Some(text) = field(expr, "text") {
        return Some(Turn::Text {
            text: text.as_str()?.to_string(),
        });
    }
    let tool = field(expr, "tool")?.as_str()?.to_string();
    let arguments = match field(expr, "arguments")?.to_json()? {
        serde_json::Value::Object(map) => map,
        _ => return None,
    };
    Some(Turn::Tool { tool, arguments })
}

/// The value of `key` in a map.
pub(crate) fn field<'e>(expr: &'e Expr, key: &str) -> Option<&'e Expr> {
    match &expr.kind {
        ExprKind::Map(entries) => entries.iter().find(|e| e.key == key).map(|e| &e.value),
        _ => None,
    }
}
