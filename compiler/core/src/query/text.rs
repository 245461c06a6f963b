//! Where an offset falls in a file's text, read from the text alone so that it works on a file
//! being typed (half-written, not parseable): the word under the cursor, the line before it,
//! and the brackets open around it with the words that opened them.

use tenx_diagnostics::Span;

/// A bracket open at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// `{`, `[` or `(`.
    pub bracket: char,
    /// Its byte offset.
    pub at: usize,
    /// The words of the line before the bracket (`["tool", "refund"]` for `tool refund(`,
    /// `["tools", "="]` for `tools = [`); for a bracket of an item, the words from the item's
    /// first line on.
    pub head: Vec<String>,
}

/// What surrounds an offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// Brackets open at the offset, outermost first.
    pub open: Vec<Open>,
    /// Whether the offset is inside a string, text block or comment.
    pub in_literal: bool,
}

impl Context {
    /// The innermost `{` block and the words that opened it.
    pub fn block(&self) -> Option<&Open> {
        self.open.iter().rev().find(|o| o.bracket == '{')
    }

    /// The outermost block: the item the offset is in.
    pub fn item(&self) -> Option<&Open> {
        self.open.first().filter(|o| o.bracket == '{')
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier at `offset` (touching its start or end counts), with its span.
pub fn word_at(text: &str, offset: usize) -> Option<(Span, &str)> {
    let offset = offset.min(text.len());
    let before = text.get(..offset)?;
    let after = text.get(offset..)?;
    let start = before.rfind(|c: char| !is_ident(c)).map_or(0, |i| i + 1);
    let end = offset + after.find(|c: char| !is_ident(c)).unwrap_or(after.len());
    let word = text.get(start..end)?;
    (!word.is_empty()).then_some((Span::new(start, end), word))
}

/// The text of the line before `offset`.
pub fn line_before(text: &str, offset: usize) -> &str {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    before.rfind('\n').map_or(before, |i| before.get(i + 1..).unwrap_or(""))
}

/// The words of a piece of text: identifiers and the punctuation `=`, `->`, `:`, `,`.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in line.chars() {
        if is_ident(c) || c == '.' {
            current.push(c);
            continue;
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if matches!(c, '=' | ':' | ',' | '>') {
            out.push(c.to_string());
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The brackets open at `offset`, skipping strings, text blocks and comments.
pub fn context(text: &str, offset: usize) -> Context {
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut open: Vec<Open> = Vec::new();
    let mut i = 0;
    let mut line_start = 0;
    // Where the current top-level item's text starts: an item's brackets are headed by its
    // keyword and name even when its parameter list spans lines.
    let mut item_start = 0;
    while i < end {
        let Some(&b) = bytes.get(i) else { break };
        let rest = bytes.get(i..).unwrap_or_default();
        let skip_to = if rest.starts_with(b"\"\"\"") {
            find(bytes, i + 3, b"\"\"\"").map(|j| j + 3)
        } else if b == b'"' {
            string_end(bytes, i + 1)
        } else if rest.starts_with(b"//") {
            Some(find(bytes, i, b"\n").unwrap_or(bytes.len()))
        } else if rest.starts_with(b"/*") {
            find(bytes, i + 2, b"*/").map(|j| j + 2)
        } else {
            match b {
                b'\n' => {
                    line_start = i + 1;
                    if open.is_empty() {
                        item_start = i + 1;
                    }
                }
                b'{' | b'[' | b'(' => {
                    let from = if open.is_empty() { item_start } else { line_start };
                    let line = text.get(from..i).unwrap_or("");
                    open.push(Open {
                        bracket: char::from(b),
                        at: i,
                        head: words(line),
                    });
                }
                b'}' | b']' | b')' => {
                    open.pop();
                }
                _ => {}
            }
            i += 1;
            continue;
        };
        match skip_to {
            Some(next) if next <= end => i = next,
            // The literal is still open at the offset.
            _ => {
                return Context { open, in_literal: true };
            }
        }
        if text.get(i.saturating_sub(1)..i) == Some("\n") {
            line_start = i;
            if open.is_empty() {
                item_start = i;
            }
        }
    }
    Context {
        open,
        in_literal: false,
    }
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let hay = bytes.get(from..)?;
    hay.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// The offset after the closing quote of a one-line string starting at `from`.
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'\n' => return Some(i),
            _ => i += 1,
        }
    }
    None
}
