//! The concrete syntax tree the formatter prints: every pest pair of a file, with file offsets,
//! and nothing of pest left in it.
//!
//! The file is cut into chunks the way the compiler cuts it ([`crate::syntax::chunks`]) and each
//! chunk is parsed as one item, so the formatter reads exactly the items the compiler reads.
//! Punctuation written as literals in the grammar (`{`, `,`, `:`) has no node: the printer
//! writes it itself. Whitespace and comments have none either; [`super::trivia`] finds them.

use crate::syntax::chunks;
use tenx_grammar::pest::Parser;
use tenx_grammar::pest::iterators::Pair;
use tenx_grammar::{Rule, TenxParser};

/// One node: a grammar rule over bytes `start..end` of the file.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The rule that matched.
    pub rule: Rule,
    /// First byte, in the file.
    pub start: usize,
    /// One past the last byte, in the file.
    pub end: usize,
    /// The nodes inside, in source order.
    pub children: Vec<Node>,
}

impl Node {
    /// The first child matching `rule`.
    pub fn child(&self, rule: Rule) -> Option<&Node> {
        self.children.iter().find(|c| c.rule == rule)
    }

    /// Every child matching `rule`.
    pub fn all(&self, rule: Rule) -> impl Iterator<Item = &Node> {
        self.children.iter().filter(move |c| c.rule == rule)
    }

    /// Whether the node or a node inside it is one of `rules`.
    pub fn holds_any(&self, rules: &[Rule]) -> bool {
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            if rules.contains(&node.rule) {
                return true;
            }
            stack.extend(node.children.iter());
        }
        false
    }
}

/// Rules that only error recovery produces: a tree holding one is not formatted.
pub(crate) const RECOVERY_RULES: [Rule; 5] = [
    Rule::bad_line,
    Rule::missing_close,
    Rule::stray_text,
    Rule::fat_arrow,
    Rule::colon_assign,
];

/// Parses every item of `text`, or says why it cannot (a chunk pest refuses, or one that holds
/// error recovery): the offset where the trouble starts.
pub(crate) fn parse(text: &str) -> Result<Vec<Node>, usize> {
    let (pieces, problems) = chunks::split(text);
    if !problems.is_empty() {
        return Err(0);
    }
    let mut items = Vec::new();
    for chunk in pieces.iter().filter(|c| c.has_tokens) {
        if chunk.too_deep_at.is_some() || chunk.truncated {
            return Err(chunk.start);
        }
        let chunk_text = text.get(chunk.start..chunk.end).ok_or(chunk.start)?;
        let pairs = TenxParser::parse(Rule::item_chunk, chunk_text).map_err(|_| chunk.start)?;
        for pair in pairs.flat_map(Pair::into_inner) {
            if pair.as_rule() == Rule::EOI {
                continue;
            }
            let node = convert(pair, chunk.start, text);
            if node.holds_any(&RECOVERY_RULES) {
                return Err(node.start);
            }
            items.push(node);
        }
    }
    Ok(items)
}

/// A pest pair as a [`Node`], with offsets moved by `base`. Recursion is bounded: the chunker
/// refuses nesting deeper than [`chunks::MAX_NESTING`] before pest sees it.
fn convert(pair: Pair<'_, Rule>, base: usize, text: &str) -> Node {
    let span = pair.as_span();
    let rule = pair.as_rule();
    let start = base + span.start();
    let children: Vec<Node> = pair.into_inner().map(|p| convert(p, base, text)).collect();
    // A node without children is one token or one literal, never followed by a skip.
    let end = match children.last() {
        Some(last) => content_end(text, last.end, base + span.end()),
        None => base + span.end(),
    };
    Node {
        rule,
        start,
        end,
        children,
    }
}

/// Where the text of a node ends: a rule that tried an optional part at its end (`tag a` then
/// no description) has skipped the whitespace and comments after it, which belong to what
/// follows. The last character in `from..end` that is not whitespace or a comment ends it.
fn content_end(text: &str, from: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    let mut last = from;
    let mut i = from;
    while i < end {
        let next = bytes.get(i + 1).copied();
        match bytes.get(i).copied() {
            Some(b'/') if next == Some(b'/') => {
                i = text.get(i..end).and_then(|s| s.find('\n')).map_or(end, |n| i + n);
            }
            Some(b'/') if next == Some(b'*') => {
                i = text
                    .get(i + 2..end)
                    .and_then(|s| s.find("*/"))
                    .map_or(end, |n| i + 2 + n + 2);
            }
            Some(b' ' | b'\t' | b'\n' | b'\r') => i += 1,
            // A byte order mark is whitespace to the grammar.
            Some(0xEF) if text.get(i..).is_some_and(|s| s.starts_with('\u{FEFF}')) => i += 3,
            _ => {
                i += 1;
                last = i;
            }
        }
    }
    last
}
