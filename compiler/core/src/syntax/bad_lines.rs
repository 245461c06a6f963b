//! Explains the text the grammar's catch-alls kept: a `bad_line` inside a block, state block or
//! route, and a block whose `}` is missing. Each bad line costs exactly one diagnostic, as
//! precise as the text allows: an unterminated string, an unclosed bracket, or the parse error
//! of the line read as what its context expects (an entry, a state field, a route arm).

use super::{Lower, errors, mistakes};
use tenx_diagnostics::{Code, Diagnostic, Span};
use tenx_grammar::pest::Parser;
use tenx_grammar::pest::iterators::Pair;
use tenx_grammar::{Rule, TenxParser};

/// Where a bad line stands: it decides what the line should have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// A block of `key = value` entries.
    Block,
    /// A `graph` block: entries, edges, routes and a `state` block.
    Graph,
    /// A `state { … }` block: one field per line.
    State,
    /// A `route … { … }`: arms.
    Route,
}

/// Rules that only make sense inside a `graph` block, left out of "expected …" elsewhere.
const GRAPH_ONLY: &[Rule] = &[
    Rule::edge,
    Rule::arrow,
    Rule::thin_arrow,
    Rule::route,
    Rule::kw_route,
    Rule::state_block,
    Rule::kw_state,
    Rule::fork_block,
    Rule::kw_parallel,
    Rule::kw_map,
];

const ARMS: &str = "a route arm (`\"label\" -> node`, `when … -> node` or `else -> node`)";

impl Lower<'_> {
    /// Reports a block whose `}` is missing (unless the chunk was cut for another reported
    /// reason).
    pub fn missing_close(&mut self, open: Span) {
        if self.truncated {
            return;
        }
        let start = open.start as usize;
        let rest = self.text_between(start, self.base + self.text.len());
        let line = self.text_between(self.base, start);
        let line = line.get(line.rfind('\n').map_or(0, |n| n + 1)..).unwrap_or("");
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let d = match stolen_close(rest, indent) {
            // By indentation, a `{` inside the block took the block's `}`: point at that one.
            Some((inner, close)) => self
                .diag(
                    Code::TENX0002,
                    "a `{` is never closed",
                    Span::new(start + inner, start + inner + 1),
                )
                .label("this `{` is never closed")
                .secondary(
                    self.file,
                    Span::new(start + close, start + close + 1),
                    "by its indentation, this `}` closes the block",
                )
                .secondary(self.file, open, "the block opened here")
                .help("add the missing `}`"),
            None => self
                .diag(Code::TENX0002, "this block is never closed", open)
                .label("opened here")
                .help("add `}` where the block ends"),
        };
        self.report(d);
    }

    /// Reports the first string of `text` (at file offset `start`) that is not closed on its
    /// line, if there is one.
    pub fn unterminated_string(&mut self, start: usize, text: &str) -> bool {
        let Some(quote) = unterminated_quote(text) else {
            return false;
        };
        let at = start + quote;
        let d = self
            .diag(Code::TENX0003, "unterminated string", Span::new(at, at + 1))
            .label("this string has no closing `\"`")
            .help("close the string on the same line, or use a `\"\"\"` text block for several lines");
        self.report(d);
        true
    }

    /// Reports a line that is not valid in its context (a `bad_line` pair).
    pub fn bad_line(&mut self, pair: &Pair<'_, Rule>, context: Context) -> Option<String> {
        let start = self.span(pair).start as usize;
        self.bad_text(start, pair.as_str(), context)
    }

    /// Reports `text`, a line at file offset `start` that is not valid in `context`, saying why
    /// as precisely as possible. Returns the line's key (its first word), if it has one.
    pub fn bad_text(&mut self, start: usize, text: &str, context: Context) -> Option<String> {
        let key: String = text
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let key = (!key.is_empty()).then_some(key);
        if self.unterminated_string(start, text) {
            return key;
        }
        if let Some((at, open)) = unclosed_bracket(text) {
            let close = match open {
                '[' => ']',
                '(' => ')',
                _ => '}',
            };
            let at = start + at;
            let d = self
                .diag(Code::TENX0001, format!("unclosed `{open}`"), Span::new(at, at + 1))
                .label(format!("this `{open}` is never closed"))
                .help(format!("add the missing `{close}`"));
            self.report(d);
            return key;
        }
        if matches!(context, Context::Block | Context::Graph)
            && let Err(error) = TenxParser::parse(Rule::entry_only, text)
            && let Some(gap) = mistakes::missing_comma(text, Rule::entry_only, errors::offset(&error))
        {
            let repair = mistakes::comma_repair(self.file, text, start, gap);
            self.repairs.push(repair);
            return key;
        }
        let d = match context {
            Context::Block | Context::Graph => self.bad_entry(start, text, key.as_deref(), context),
            Context::State => self.bad_state_field(start, text, key.as_deref()),
            Context::Route => self.bad_arm(start, text),
        };
        let d = if text.contains("=>") {
            d.help("edges and route arms use `->`")
        } else {
            d
        };
        self.report(d);
        key
    }

    /// A line of a block or graph, read as an entry (or edge, route, state block).
    fn bad_entry(&self, start: usize, text: &str, key: Option<&str>, context: Context) -> Diagnostic {
        let in_graph = context == Context::Graph;
        match TenxParser::parse(Rule::entry_only, text) {
            Err(error) if key.is_some_and(|k| errors::offset(&error) == after_word(text, k.len())) => {
                // `description "…"`: the key is fine, what follows it is not.
                let key = key.unwrap_or_default();
                let at = after_word(text, key.len());
                let found = errors::found_at(text, at);
                let width = found.strip_prefix('`').map_or(1, |f| f.len().saturating_sub(1).max(1));
                let (what, help) = if in_graph {
                    (
                        "`=` or `->`",
                        format!("write `{key} = …` for an entry, or `{key} -> …` for an edge"),
                    )
                } else {
                    ("`=`", format!("write `{key} = …`"))
                };
                self.diag(
                    Code::TENX0001,
                    format!("expected {what} after `{key}`, found {found}"),
                    Span::new(start + at, start + at + width),
                )
                .label(format!("expected {what} here"))
                .help(help)
            }
            Err(error) => {
                let skip: &[Rule] = if in_graph { &[] } else { GRAPH_ONLY };
                let mut d = errors::syntax_error_skipping(&error, text, start, self.file, skip);
                if d.message.starts_with("unexpected") || errors::at_start(&error) {
                    let what = if in_graph {
                        "an entry (`key = value`), an edge (`a -> b`) or a route"
                    } else {
                        "an entry (`key = value`)"
                    };
                    d.message = format!("expected {what}, found {}", errors::found_at(text, 0));
                }
                d
            }
            Ok(mut pairs) => {
                let what = pairs
                    .next()
                    .and_then(|p| p.into_inner().next())
                    .map_or("this", |p| match p.as_rule() {
                        Rule::edge => "an edge",
                        Rule::route => "a route",
                        Rule::state_block => "a `state` block",
                        Rule::fork_block => "a `parallel` or `map` block",
                        _ => "this",
                    });
                self.diag(
                    Code::TENX0001,
                    format!("{what} is not allowed here"),
                    Span::new(start, start + text.len()),
                )
                .label("only allowed inside a `graph` block")
            }
        }
    }

    /// A line of a `state` block, read as a field (`name: type`).
    fn bad_state_field(&self, start: usize, text: &str, key: Option<&str>) -> Diagnostic {
        if let Some(what) = graph_item(text) {
            return self
                .diag(
                    Code::TENX0001,
                    format!("{what} is not allowed in a `state` block"),
                    Span::new(start, start + text.lines().next().unwrap_or("").trim_end().len()),
                )
                .label("only state fields (`name: type`) belong here")
                .help("end the `state` block with `}` before it");
        }
        if let Some(key) = key {
            let after = text.get(key.len()..).unwrap_or("");
            let gap = after.len() - after.trim_start().len();
            if !after.trim_start().starts_with([':', '?']) {
                let at = start + key.len() + gap;
                let next = after.trim_start();
                let found = next
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(next.len())
                    .max(next.chars().next().map_or(1, char::len_utf8));
                return self
                    .diag(
                        Code::TENX0001,
                        format!("expected `:` after the state field `{key}`"),
                        Span::new(at, at + found),
                    )
                    .label("expected `:` here")
                    .help(format!("write `{key}: TYPE`, such as `{key}: string`"));
            }
        }
        self.explain(Rule::param, start, text, "a state field (`name: type`)")
    }

    /// A line of a route, read as the arm its first word announces.
    fn bad_arm(&self, start: usize, text: &str) -> Diagnostic {
        let rule = if text.starts_with('"') {
            Rule::label_arm
        } else if TenxParser::parse(Rule::kw_when, text).is_ok() {
            Rule::when_arm
        } else if TenxParser::parse(Rule::kw_else, text).is_ok() {
            Rule::else_arm
        } else {
            let word = text.split(|c: char| c.is_whitespace()).next().unwrap_or("");
            let width = word.len().max(1).min(text.len());
            return self
                .diag(
                    Code::TENX0001,
                    format!("expected {ARMS}, found `{word}`"),
                    Span::new(start, start + width),
                )
                .label("not a route arm");
        };
        self.explain(rule, start, text, ARMS)
    }

    /// The error of `text` parsed as `rule`; when a prefix parses, the text after it is the
    /// problem.
    fn explain(&self, rule: Rule, start: usize, text: &str, what: &str) -> Diagnostic {
        match TenxParser::parse(rule, text) {
            Err(error) => errors::syntax_error(&error, text, start, self.file),
            Ok(pairs) => {
                let end = pairs.last().map_or(0, |p| p.as_span().end());
                let rest = text.get(end..).unwrap_or("");
                let at = end + (rest.len() - rest.trim_start().len());
                let token: String = text
                    .get(at..)
                    .unwrap_or("")
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                self.diag(
                    Code::TENX0001,
                    format!("unexpected `{token}` after {what}"),
                    Span::new(start + at, start + at + token.len().max(1)),
                )
                .label("unexpected here")
                .help("write one per line")
            }
        }
    }
}

/// What a line is when it is an edge, a route or a state block ("an edge"), for lines where
/// those do not belong.
fn graph_item(text: &str) -> Option<&'static str> {
    let mut pairs = TenxParser::parse(Rule::entry_only, text).ok()?;
    match pairs.next()?.into_inner().next()?.as_rule() {
        Rule::edge => Some("an edge"),
        Rule::route => Some("a route"),
        Rule::state_block => Some("a `state` block"),
        Rule::fork_block => Some("a `parallel` or `map` block"),
        _ => None,
    }
}

/// The offset of the first non-blank character after the first `len` bytes of `text`.
fn after_word(text: &str, len: usize) -> usize {
    let rest = text.get(len..).unwrap_or("");
    len + (rest.len() - rest.trim_start().len())
}

/// The length of the comment or `"""` text block `rest` starts with, up to the end of `rest`
/// when it is never closed; `None` when `rest` starts with neither.
pub(super) fn comment_or_text_block(rest: &str) -> Option<usize> {
    if rest.starts_with("//") {
        Some(rest.find('\n').unwrap_or(rest.len()))
    } else if rest.starts_with("/*") {
        Some(rest.find("*/").map_or(rest.len(), |n| n + 2))
    } else if rest.starts_with("\"\"\"") {
        Some(
            3 + rest
                .get(3..)
                .and_then(|r| r.find("\"\"\""))
                .map_or(rest.len(), |n| n + 3),
        )
    } else {
        None
    }
}

/// The offset and character of the innermost bracket that `text` opens and never closes
/// (strings skipped). A closing bracket of the wrong kind ends the scan.
pub(super) fn unclosed_bracket(text: &str) -> Option<(usize, char)> {
    let mut stack: Vec<(usize, char)> = Vec::new();
    let mut chars = text.char_indices();
    let mut in_string = false;
    while let Some((i, c)) = chars.next() {
        match (c, in_string) {
            ('\\', true) => {
                chars.next();
            }
            ('"', _) => in_string = !in_string,
            (_, true) => {}
            ('[' | '(' | '{', false) => stack.push((i, c)),
            (']' | ')' | '}', false) => match stack.pop() {
                Some((_, open)) if matches!((open, c), ('[', ']') | ('(', ')') | ('{', '}')) => {}
                _ => return None,
            },
            _ => {}
        }
    }
    stack.pop()
}

/// In `text`, which starts with a block's `{` that is never closed, on a line indented by
/// `block_indent`: the first `{` that is closed
/// by a `}` standing first on its line, indented like the line of the block's `{` (and unlike
/// its own line). Returns (that `{`, that `}`). Strings, text blocks and comments are skipped.
fn stolen_close(text: &str, block_indent: usize) -> Option<(usize, usize)> {
    let indent = |at: usize| match text.get(..at).and_then(|s| s.rfind('\n')) {
        // On the block's first line: that line's indentation.
        None => (block_indent, false),
        Some(n) => {
            let line = text.get(n + 1..).unwrap_or("");
            let width = line.len() - line.trim_start_matches([' ', '\t']).len();
            (width, n + 1 + width == at)
        }
    };
    let bytes = text.as_bytes();
    let mut stack: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let rest = text.get(i..).unwrap_or("");
        if let Some(len) = comment_or_text_block(rest) {
            i += len;
        } else if b == b'"' {
            i += 1 + unterminated_quote(rest).map_or_else(|| closing_quote(rest), |_| rest.len());
        } else {
            match b {
                b'{' => stack.push(i),
                b'}' => {
                    let opener = stack.pop()?;
                    let (close_indent, first_on_line) = indent(i);
                    if !stack.is_empty()
                        && first_on_line
                        && close_indent == block_indent
                        && indent(opener).0 != close_indent
                    {
                        return Some((opener, i));
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    None
}

/// The offset of the `"` that closes the string starting at the start of `text`.
fn closing_quote(text: &str) -> usize {
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '"' => return i,
            _ => {}
        }
    }
    text.len()
}

/// Byte offset of a `"` that opens a string never closed on its line (text blocks and comments
/// skipped).
fn unterminated_quote(text: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    let mut open: Option<usize> = None;
    while let Some((i, c)) = chars.next() {
        let rest = text.get(i..).unwrap_or("");
        let skip = match open {
            None if rest.starts_with("\"\"\"") => {
                3 + rest
                    .get(3..)
                    .and_then(|r| r.find("\"\"\""))
                    .map_or(rest.len(), |n| n + 3)
            }
            None if rest.starts_with("//") => rest.find('\n').unwrap_or(rest.len()),
            None if rest.starts_with("/*") => rest.find("*/").map_or(rest.len(), |n| n + 2),
            _ => 0,
        };
        if skip > 0 {
            let end = i + skip;
            while chars.clone().next().is_some_and(|(j, _)| j < end) {
                chars.next();
            }
            continue;
        }
        match (c, open) {
            ('\\', Some(_)) => {
                chars.next();
            }
            ('"', None) => open = Some(i),
            ('"', Some(_)) => open = None,
            ('\n', Some(at)) => return Some(at),
            _ => {}
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::{unclosed_bracket, unterminated_quote};

    #[test]
    fn finds_unclosed_brackets() {
        assert_eq!(unclosed_bracket("x = [1, (2)"), Some((4, '[')));
        assert_eq!(unclosed_bracket("x = { a: [1] }"), None);
        assert_eq!(unclosed_bracket("x = \"[\""), None);
        assert_eq!(unclosed_bracket("x = [1, {"), Some((8, '{')));
    }

    #[test]
    fn finds_the_brace_that_stole_the_blocks_close() {
        let text = "{\n  output = { \"a\": { \"b\": 1 }\n}\n";
        assert_eq!(super::stolen_close(text, 0), Some((13, 31)));
        assert_eq!(super::stolen_close("{\n  a = 1\n", 0), None);
        let nested = "{\n    message = { \"a\": 1\n  }\n";
        assert_eq!(super::stolen_close(nested, 2), Some((16, 27)));
    }

    #[test]
    fn finds_unterminated_quotes() {
        assert_eq!(unterminated_quote("x = \"a\\\"b"), Some(4));
        assert_eq!(unterminated_quote("x = \"a\""), None);
        assert_eq!(unterminated_quote("x = \"\"\"\n a \"\n\"\"\" // \"\n"), None);
    }
}
