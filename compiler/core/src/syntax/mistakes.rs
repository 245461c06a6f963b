//! Mistakes people make in their first hour, recognised where the parser fails: a missing `,`
//! between parameters or arguments (`TENX0013`), chained edges `a -> b -> c` (`TENX0015`) and
//! near-misses of keywords, `end` for `END` included (`TENX0016`).
//!
//! Where the fix is certain and keeps every byte at its offset (a `,` for a space, `agent` for
//! `agnet`), the chunk is parsed again with it ([`Repair`]), so the item is still read and its
//! uses are not reported as unknown.

use super::{Lower, errors};
use crate::ast::{Ident, Item, Module};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};
use tenx_grammar::pest::Parser;
use tenx_grammar::pest::iterators::Pair;
use tenx_grammar::{Rule, TenxParser};

/// A fix to apply before parsing a chunk again: the bytes at file offset `at` become `with`
/// (same length); `diagnostic` reports the mistake.
#[derive(Debug, Clone)]
pub(crate) struct Repair {
    pub at: usize,
    pub with: &'static str,
    pub diagnostic: Diagnostic,
}

/// The offset of the whitespace where a `,` is missing, when `text` fails to parse as `rule` at
/// `offset` because two parameters or arguments follow each other without one. The gap just
/// before the error is tried first, then the first few gaps inside parentheses anywhere.
pub(crate) fn missing_comma(text: &str, rule: Rule, offset: usize) -> Option<usize> {
    let helps = |gap: usize| {
        let mut fixed = text.to_string();
        fixed.replace_range(gap..gap + 1, ",");
        match TenxParser::parse(rule, &fixed) {
            Ok(_) => true,
            Err(error) => errors::offset(&error) > offset.max(gap + 1),
        }
    };
    let before = text.get(..offset)?.trim_end();
    if before.len() < offset && comma_may_go(text, before.len(), None) && helps(before.len()) {
        return Some(before.len());
    }
    comma_candidates(text).into_iter().find(|&gap| helps(gap))
}

/// The first [`MAX_COMMA_TRIES`] places in `text` where [`comma_may_go`], found in one pass.
fn comma_candidates(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut previous = ' ';
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (c, in_string) {
            ('\\', true) => {
                chars.next();
            }
            ('"', _) => in_string = !in_string,
            (_, true) => {}
            ('(' | '[' | '{', false) => stack.push(c),
            (')' | ']' | '}', false) => {
                stack.pop();
            }
            (c, false)
                if c.is_ascii_whitespace()
                    && !previous.is_ascii_whitespace()
                    && stack.last() == Some(&'(')
                    && comma_may_go(text, i, Some('(')) =>
            {
                found.push(i);
                if found.len() == MAX_COMMA_TRIES {
                    break;
                }
            }
            _ => {}
        }
        previous = c;
    }
    found
}

/// How many places a `,` is tried at in one line or item.
const MAX_COMMA_TRIES: usize = 16;

/// Whether byte `gap` of `text` is the first whitespace after a value, parameter or argument,
/// followed by another, inside parentheses (`open`: the innermost open bracket, when known).
fn comma_may_go(text: &str, gap: usize, open: Option<char>) -> bool {
    let Some(before) = text.get(..gap) else {
        return false;
    };
    if !text.as_bytes().get(gap).is_some_and(u8::is_ascii_whitespace) {
        return false;
    }
    let Some(last) = before.chars().last() else {
        return false;
    };
    let rest = text.get(gap..).unwrap_or("").trim_start();
    let Some(next) = rest.chars().next() else {
        return false;
    };
    let ends = last.is_ascii_alphanumeric() || matches!(last, '_' | '"' | ')' | ']' | '}' | '>' | '?');
    let starts = next.is_ascii_alphanumeric() || matches!(next, '_' | '"' | '[' | '{' | '-');
    ends && starts && open.or_else(|| super::bad_lines::unclosed_bracket(before).map(|(_, c)| c)) == Some('(')
}

/// The `TENX0013` diagnostic for a `,` missing at byte `gap` of `text`, which starts at file
/// offset `base`.
pub(crate) fn comma_repair(file: FileId, text: &str, base: usize, gap: usize) -> Repair {
    let before = text.get(..gap).unwrap_or("");
    let parameters = super::bad_lines::unclosed_bracket(before).is_some_and(|(open, _)| {
        // `tool name(` or `validator name(`: a parameter list.
        let head = before.get(..open).unwrap_or("").trim_end();
        let head = head.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let keyword = head.trim_end();
        keyword.ends_with("tool") || keyword.ends_with("validator")
    });
    let (what, example) = if parameters {
        ("parameters", "`(order_id: string, amount: int)`")
    } else {
        ("arguments", "`http(POST, \"https://…\")`")
    };
    let previous: String = before
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| !c.is_whitespace() && !matches!(c, '(' | ','))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let at = base + gap;
    let mut diagnostic = Diagnostic::new(
        Code::TENX0013,
        format!("missing `,` between two {what}"),
        file,
        Span::new(at, at + 1),
    )
    .label("add `,` here")
    .help(format!("{what} are separated by commas: {example}"));
    if !previous.is_empty() {
        diagnostic = diagnostic.note(format!("without a `,`, the text after `{previous}` cannot be read"));
    }
    Repair {
        at,
        with: ",",
        diagnostic,
    }
}

/// The top-level keywords, for "did you mean".
pub(crate) const ITEM_KEYWORDS: &[&str] = &[
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
];

/// The `TENX0016` diagnostic for `word` (at file offset `at`) written where the keyword
/// `keyword` was meant.
pub(crate) fn keyword_diagnostic(file: FileId, word: &str, keyword: &str, at: usize) -> Diagnostic {
    let span = Span::new(at, at + word.len());
    if word.eq_ignore_ascii_case(keyword) {
        Diagnostic::new(
            Code::TENX0016,
            format!("`{word}` is not a keyword: keywords are lowercase"),
            file,
            span,
        )
        .label(format!("did you mean `{keyword}`?"))
        .help(format!("write `{keyword}`"))
    } else {
        Diagnostic::new(Code::TENX0016, format!("`{word}` is not a keyword"), file, span)
            .label(format!("did you mean `{keyword}`?"))
            .help(format!("write `{keyword}`"))
    }
}

/// The keyword `word` most likely misspells, if any.
pub(crate) fn near_keyword(word: &str) -> Option<&'static str> {
    if word.is_empty() || ITEM_KEYWORDS.contains(&word) {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    if let Some(exact) = ITEM_KEYWORDS.iter().find(|k| **k == lower) {
        return Some(exact);
    }
    crate::suggest::did_you_mean(word, ITEM_KEYWORDS)
        .and_then(|found| ITEM_KEYWORDS.iter().find(|k| **k == found).copied())
}

/// Edge targets and route arm targets written `end` (or `End`) where `END` was meant, in a file
/// that declares nothing of that name and a graph that does not list it among its nodes (an
/// imported agent may be called `end`): reported once each and read as `END`, so the graph is
/// not also reported as having an unknown node.
pub(crate) fn end_for_end(module: &mut Module, diagnostics: &mut Vec<Diagnostic>) {
    let declared: Vec<String> = module
        .items
        .iter()
        .filter_map(crate::ast::item_name)
        .map(|i| i.name.clone())
        .collect();
    let file = module.file;
    let mut fix = |target: &mut Ident, nodes: &[Ident]| {
        if target.name != "END"
            && target.name.eq_ignore_ascii_case("end")
            && !declared.contains(&target.name)
            && !nodes.iter().any(|node| node.name == target.name)
        {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0016,
                    format!("`{}` is not `END`", target.name),
                    file,
                    target.span,
                )
                .label("did you mean `END`?")
                .help("the end of a graph is written `END`, in capitals"),
            );
            target.name = "END".to_string();
        }
    };
    for item in &mut module.items {
        if let Item::Graph(graph) = item {
            let nodes = &graph.nodes;
            for edge in &mut graph.edges {
                fix(&mut edge.to, nodes);
            }
            for route in &mut graph.routes {
                for arm in &mut route.arms {
                    fix(&mut arm.target, nodes);
                }
            }
        }
    }
}

impl Lower<'_> {
    /// The rest of a chained edge, `-> c -> d` after `a -> b` (a bad line at file offset
    /// `start`): the nodes it names, when it is nothing else.
    pub(super) fn chained_nodes(&self, start: usize, text: &str) -> Option<Vec<Ident>> {
        let code = text.find("//").map_or(text, |n| text.get(..n).unwrap_or(""));
        let mut nodes = Vec::new();
        let mut offset = 0;
        let mut pieces = code.split("->");
        if !pieces.next()?.trim().is_empty() {
            return None;
        }
        offset += code.get(..code.find("->")?)?.len() + 2;
        for piece in pieces {
            let name = piece.trim();
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return None;
            }
            let lead = piece.len() - piece.trim_start().len();
            let at = start + offset + lead;
            nodes.push(Ident {
                name: name.to_string(),
                span: Span::new(at, at + name.len()),
            });
            offset += piece.len() + 2;
        }
        (!nodes.is_empty()).then_some(nodes)
    }

    /// Reports a chain `a -> b -> c` (its first edge already read) and returns the edges after
    /// the first.
    pub(super) fn chained_edge(&mut self, first: &crate::ast::Edge, rest: Vec<Ident>) -> Vec<crate::ast::Edge> {
        let mut edges = Vec::new();
        let mut from = first.to.clone();
        let mut written = vec![format!("`{} -> {}`", first.from.name, first.to.name)];
        for to in rest {
            written.push(format!("`{} -> {}`", from.name, to.name));
            edges.push(crate::ast::Edge {
                span: Span::new(from.span.start as usize, to.span.end as usize),
                from,
                to: to.clone(),
            });
            from = to;
        }
        let end = from.span.end as usize;
        let d = self
            .diag(
                Code::TENX0015,
                "an edge joins two nodes: edges cannot be chained",
                Span::new(first.span.start as usize, end),
            )
            .label("a chain of edges")
            .help(format!("write one edge per line: {}", errors::join_and(&written)));
        self.report(d);
        edges
    }
}

/// The keyword a word at the start of a route arm most likely misspells: `else` for `els`,
/// `Else`, `otherwise` or `default`; `when` for `wehn`, `When` or `if`.
pub(super) fn near_arm_keyword(word: &str) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    if word == "else" || word == "when" {
        return None;
    }
    if matches!(lower.as_str(), "else" | "otherwise" | "default") {
        return Some("else");
    }
    if matches!(lower.as_str(), "when" | "if") {
        return Some("when");
    }
    crate::suggest::did_you_mean(word, &["else", "when"]).and_then(|k| ["else", "when"].into_iter().find(|w| *w == k))
}

/// The keyword a word at the start of a graph line most likely misspells (`rout`, `Route`).
pub(super) fn near_graph_keyword(word: &str) -> Option<&'static str> {
    if word == "route" {
        return None;
    }
    (word.eq_ignore_ascii_case("route") || crate::suggest::did_you_mean(word, &["route"]).is_some()).then_some("route")
}

/// The leading name of `text` (ASCII letters, digits and `_`).
pub(super) fn first_word(text: &str) -> &str {
    text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .and_then(|n| text.get(..n))
        .unwrap_or(text)
}

impl Lower<'_> {
    /// Reads `text` (at file offset `start`), which begins with `word`, as if it began with
    /// `keyword` instead: parses it as `rule` and lowers the pair with `read`. Offsets after the
    /// word stay those of the file. `None` when the text is not such a construct even then, or
    /// has more after it than whitespace and a comment.
    pub(super) fn read_respelt<T>(
        &mut self,
        start: usize,
        text: &str,
        word: &str,
        keyword: &str,
        rule: Rule,
        read: impl FnOnce(&mut Lower<'_>, Pair<'_, Rule>) -> Option<T>,
    ) -> Option<T> {
        // A shorter keyword is padded, so every offset stays right; a longer one shifts the
        // text, so only the offsets after the word are right.
        let rest = text.get(word.len()..)?;
        let pad = word.len().saturating_sub(keyword.len());
        let fixed = format!("{keyword}{}{rest}", " ".repeat(pad));
        let base = (start + word.len()).checked_sub(keyword.len() + pad)?;
        let pair = TenxParser::parse(rule, &fixed).ok()?.next()?;
        let after = fixed.get(pair.as_span().end()..)?.trim_start();
        if !(after.is_empty() || after.starts_with("//")) {
            return None;
        }
        let mut sub = Lower {
            file: self.file,
            base,
            text: &fixed,
            diagnostics: &mut *self.diagnostics,
            broken: &mut *self.broken,
            truncated: self.truncated,
            repairs: &mut *self.repairs,
        };
        read(&mut sub, pair)
    }
}

#[cfg(test)]
mod tests {
    use super::{missing_comma, near_arm_keyword, near_keyword};
    use crate::syntax::parse;
    use tenx_diagnostics::{Code, FileId};
    use tenx_grammar::Rule;

    #[test]
    fn finds_the_missing_comma() {
        let text = "tool t(x: string y: int) { risk = low }";
        assert_eq!(missing_comma(text, Rule::item_strict, 17), Some(16));
        let call = "run = http(POST \"https://x\")";
        assert_eq!(missing_comma(call, Rule::entry_only, 11), Some(15));
        // Not inside parentheses: lists need no commas, so nothing is missing.
        assert_eq!(missing_comma("x = [a b", Rule::entry_only, 8), None);
    }

    #[test]
    fn near_keywords() {
        assert_eq!(near_keyword("agnet"), Some("agent"));
        assert_eq!(near_keyword("Agent"), Some("agent"));
        assert_eq!(near_keyword("tol"), Some("tool"));
        assert_eq!(near_keyword("agent"), None);
        assert_eq!(near_keyword("billing"), None);
        assert_eq!(near_arm_keyword("otherwise"), Some("else"));
        assert_eq!(near_arm_keyword("if"), Some("when"));
        assert_eq!(near_arm_keyword("else"), None);
    }

    #[test]
    fn lines_after_a_mistake_report_their_own_errors() {
        let text = "tool t(x: string y: int) -> object {\n  risk: low\n}\nagnet a {\n  $ = 1\n}\n";
        let parsed = parse(FileId(0), text);
        // Missing fields are reported too (TENX0106); the syntax errors are the point here.
        let codes: Vec<Code> = parsed
            .diagnostics
            .iter()
            .map(|d| d.code)
            .filter(|c| c.as_str().starts_with("TENX00"))
            .collect();
        assert_eq!(codes, [Code::TENX0013, Code::TENX0007, Code::TENX0016, Code::TENX0001]);
        assert_eq!(parsed.module.items.len(), 2);
        assert!(parsed.broken.is_empty());
    }
}
