//! Template placeholders: finds the `{name}` placeholders of a template string with their exact
//! byte offsets, and the malformed ones (`{` never closed, `{}`, `{ not a name }`).
//!
//! Templates are the approval messages and targets and idempotency keys of tools, agent
//! prompts, and interrupt messages, targets and values. The scanner reads the text as written:
//! `\x` is an escape and never starts a placeholder (`\{` and `\}` are literal braces), `\u{1F600}` is one
//! escape in a string, braces included (a malformed one is the syntax stage's error; text blocks
//! are raw, so there it is no escape), and `${NAME}` is an environment reference, not a
//! placeholder. A placeholder is a name, optionally dotted (`{order.id}`); it cannot span lines.
//! A `}` without a `{` is literal text.

/// One `{…}` found in a template, with byte offsets into the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placeholder<'t> {
    /// What was found.
    pub kind: PlaceholderKind<'t>,
    /// The offset of the `{`.
    pub start: usize,
    /// One past the closing `}` (or past the `{`, when it is never closed).
    pub end: usize,
}

/// The kinds of `{…}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderKind<'t> {
    /// `{name}` or `{name.field}`: the text between the braces.
    Name(&'t str),
    /// A `{` with no `}` after it on its line.
    Unclosed,
    /// `{}`.
    Empty,
    /// `{…}` whose content is not a name: the content.
    NotAName(&'t str),
}

impl<'t> Placeholder<'t> {
    /// The first segment of a well-formed placeholder: `order` for `{order.id}`.
    pub fn root(&self) -> Option<&'t str> {
        match self.kind {
            PlaceholderKind::Name(path) => path.split('.').next(),
            _ => None,
        }
    }
}

/// The body of a string literal as written in the source (`"…"` or `"""…"""`), and the offset of
/// the body inside the literal. `None` when `raw` is not a literal.
pub fn literal_body(raw: &str) -> Option<(usize, &str)> {
    if raw.len() >= 6
        && let Some(body) = raw.strip_prefix("\"\"\"").and_then(|r| r.strip_suffix("\"\"\""))
    {
        return Some((3, body));
    }
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .map(|body| (1, body))
}

/// Every placeholder of the body of a `"…"` string, in order. Offsets are relative to `text`.
pub fn placeholders(text: &str) -> Vec<Placeholder<'_>> {
    scan(text, true)
}

/// Every placeholder of the body of a `"""…"""` text block, in order. Text blocks are raw:
/// `\u{…}` is no escape there, so its braces are read like any others.
pub fn text_block_placeholders(text: &str) -> Vec<Placeholder<'_>> {
    scan(text, false)
}

/// The scanner; `unicode` says whether `\u{…}` is an escape.
fn scan(text: &str, unicode: bool) -> Vec<Placeholder<'_>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'\\' => i = after_escape(text, i, unicode),
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                // `${NAME}`: an environment reference, read by the runtime; skipped whole.
                i = match text.get(i + 2..).and_then(|rest| rest.find(['}', '\n'])) {
                    Some(close) if bytes.get(i + 2 + close) == Some(&b'}') => i + 2 + close + 1,
                    _ => i + 2,
                };
            }
            b'{' => {
                let (placeholder, next) = placeholder_at(text, i, unicode);
                found.push(placeholder);
                i = next;
            }
            _ => i += 1,
        }
    }
    found
}

/// The placeholder opened by the `{` at `start`, and where scanning continues.
fn placeholder_at(text: &str, start: usize, unicode: bool) -> (Placeholder<'_>, usize) {
    let bytes = text.as_bytes();
    let unclosed = Placeholder {
        kind: PlaceholderKind::Unclosed,
        start,
        end: start + 1,
    };
    let mut j = start + 1;
    loop {
        match bytes.get(j) {
            None | Some(b'\n') => return (unclosed, start + 1),
            Some(b'{') => return (unclosed, j),
            Some(b'\\') => j = after_escape(text, j, unicode),
            Some(b'}') => {
                let content = text.get(start + 1..j).unwrap_or("");
                let kind = if content.is_empty() {
                    PlaceholderKind::Empty
                } else if is_path(content) {
                    PlaceholderKind::Name(content)
                } else {
                    PlaceholderKind::NotAName(content)
                };
                return (
                    Placeholder {
                        kind,
                        start,
                        end: j + 1,
                    },
                    j + 1,
                );
            }
            Some(_) => j += 1,
        }
    }
}

/// The offset after the escape `\x` that starts at `at`. With `unicode`, `\u{…}` ends at its
/// `}` (on the same line): its braces are part of the escape, never a placeholder.
fn after_escape(text: &str, at: usize, unicode: bool) -> usize {
    if unicode
        && let Some(rest) = text.get(at + 1..).and_then(|r| r.strip_prefix("u{"))
        && let Some(close) = rest
            .find(['}', '\n'])
            .filter(|&c| rest.as_bytes().get(c) == Some(&b'}'))
    {
        return at + 3 + close + 1;
    }
    let next = text
        .get(at + 1..)
        .and_then(|r| r.chars().next())
        .map_or(0, char::len_utf8);
    at + 1 + next
}

/// Whether `text` is a name or a dotted path of names: `order`, `order.id`.
pub fn is_path(text: &str) -> bool {
    text.split('.').all(is_ident)
}

/// Whether `text` is a name: a letter or `_`, then letters, digits and `_`.
pub fn is_ident(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(PlaceholderKind<'_>, &str)> {
        placeholders(text)
            .into_iter()
            .map(|p| (p.kind, &text[p.start..p.end]))
            .collect()
    }

    #[test]
    fn finds_names_and_paths() {
        assert_eq!(
            kinds("Refund {amount} for {order.id}?"),
            vec![
                (PlaceholderKind::Name("amount"), "{amount}"),
                (PlaceholderKind::Name("order.id"), "{order.id}")
            ]
        );
        assert_eq!(placeholders("{order.id}")[0].root(), Some("order"));
    }

    #[test]
    fn skips_escapes_and_environment_references() {
        assert!(kinds(r"literal \{braces\} and ${ORDERS_URL}/x").is_empty());
        assert_eq!(
            kinds(r"\${amount}"),
            vec![(PlaceholderKind::Name("amount"), "{amount}")]
        );
        assert_eq!(kinds(r"\\{a}"), vec![(PlaceholderKind::Name("a"), "{a}")]);
        assert!(kinds("price in $ and } alone").is_empty());
    }

    #[test]
    fn unicode_escapes_are_not_placeholders() {
        assert!(kinds(r"Smile \u{1F600} please").is_empty());
        assert_eq!(
            kinds(r"\u{1F600}{topic}\u{e9}"),
            vec![(PlaceholderKind::Name("topic"), "{topic}")]
        );
        // A malformed code point is the syntax stage's error, reported once there.
        assert!(kinds(r"\u{zz}").is_empty());
        // `\\u{x}` is a backslash, then `u`, then a placeholder.
        assert_eq!(kinds(r"\\u{x}"), vec![(PlaceholderKind::Name("x"), "{x}")]);
        // Never closed on its line: the escape is `\u` alone, and the brace is reported.
        assert_eq!(kinds("\\u{1F\n}"), vec![(PlaceholderKind::Unclosed, "{")]);
        // Text blocks are raw: there `\u` is a backslash and a `u`, and `{1F600}` a placeholder.
        let raw = r"\u{1F600}";
        let found: Vec<_> = text_block_placeholders(raw).into_iter().map(|p| p.kind).collect();
        assert_eq!(found, vec![PlaceholderKind::NotAName("1F600")]);
    }

    #[test]
    fn reports_malformed_placeholders() {
        assert_eq!(kinds("a {} b"), vec![(PlaceholderKind::Empty, "{}")]);
        assert_eq!(kinds("a {b"), vec![(PlaceholderKind::Unclosed, "{")]);
        assert_eq!(
            kinds("{ name }"),
            vec![(PlaceholderKind::NotAName(" name "), "{ name }")]
        );
        assert_eq!(
            kinds("{a {b}"),
            vec![(PlaceholderKind::Unclosed, "{"), (PlaceholderKind::Name("b"), "{b}")]
        );
        assert_eq!(kinds("{a\nb}"), vec![(PlaceholderKind::Unclosed, "{")]);
        assert_eq!(kinds("{1x}"), vec![(PlaceholderKind::NotAName("1x"), "{1x}")]);
        assert_eq!(kinds("{a.}"), vec![(PlaceholderKind::NotAName("a."), "{a.}")]);
    }

    #[test]
    fn multibyte_text_is_safe() {
        assert_eq!(kinds("héllo {ä} \\é {x}").len(), 2);
        assert_eq!(kinds("ends with \\"), vec![]);
    }

    #[test]
    fn literal_bodies() {
        assert_eq!(literal_body("\"ab\""), Some((1, "ab")));
        assert_eq!(literal_body("\"\"\"\nab\n\"\"\""), Some((3, "\nab\n")));
        assert_eq!(literal_body("\"\""), Some((1, "")));
        assert_eq!(literal_body("x"), None);
    }
}
