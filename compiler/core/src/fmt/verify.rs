//! The same-program check: the formatted text, parsed again, must have the same tree (rules and
//! token texts, in order) and the same comments as the original. Anything else is a formatter
//! bug, and the file is left as it was.

use super::cst::{self, Node};
use super::trivia;
use tenx_grammar::Rule;

/// `Ok` when `formatted` is the same program as `original` (parsed as `items`), with the same
/// comments; else the offset in `original` of the first difference.
pub(crate) fn same_program(original: &str, items: &[Node], formatted: &str) -> Result<(), usize> {
    let again = cst::parse(formatted).map_err(|_| 0usize)?;
    let before = flatten(original, items);
    let after = flatten(formatted, &again);
    if let Some(k) = before.iter().zip(&after).position(|(a, b)| (a.0, a.1) != (b.0, b.1)) {
        return Err(before.get(k).map_or(0, |t| t.2));
    }
    if before.len() != after.len() {
        return Err(original.len());
    }
    let comments = |text: &str, nodes: &[Node]| -> Vec<String> {
        trivia::comments(text, &trivia::tokens(nodes))
            .iter()
            .map(|c| text.get(c.start..c.end).unwrap_or("").trim_end().to_owned())
            .collect()
    };
    if comments(original, items) != comments(formatted, &again) {
        return Err(0);
    }
    Ok(())
}

/// Every node in pre-order: its rule, its text when it is a token (else empty), its offset.
fn flatten<'t>(text: &'t str, items: &[Node]) -> Vec<(Rule, &'t str, usize)> {
    let mut out = Vec::new();
    let mut stack: Vec<&Node> = items.iter().rev().collect();
    while let Some(node) = stack.pop() {
        let leaf = node.children.is_empty();
        let token = if leaf {
            text.get(node.start..node.end).unwrap_or("")
        } else {
            ""
        };
        out.push((node.rule, token, node.start));
        stack.extend(node.children.iter().rev());
    }
    out
}
