//! Characters that do not belong in code, found before parsing: non-ASCII look-alikes and
//! invisible characters (`TENX0011`), single-quoted strings (`TENX0012`) and names with
//! non-ASCII letters (`TENX0014`).
//!
//! Such text makes pest fail at a confusing place, or read an item only in part (a no-break
//! space in `entry = a` loses the entry, so the graph also "has no entry"). So the scan reports
//! each mistake once, then hands the parser a repaired copy of the text with every byte at the
//! same offset: spans stay right, and the rest of the file is read as the user meant it. The
//! parser's own errors on the lines that held such a character are dropped, since the character
//! explains them. Strings, text blocks and comments are not scanned: any character is fine there.

use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// A character that looks like ASCII (or like nothing) and what to type instead.
struct LookAlike {
    name: &'static str,
    /// The ASCII text that was meant; empty for an invisible character.
    instead: &'static str,
    /// Whether it is a quote: the text up to the matching quote is a string.
    quote: bool,
}

const fn look(name: &'static str, instead: &'static str) -> LookAlike {
    LookAlike {
        name,
        instead,
        quote: false,
    }
}

const fn quote(name: &'static str) -> LookAlike {
    LookAlike {
        name,
        instead: "\"",
        quote: true,
    }
}

/// The common look-alikes (a hand-written table: no Unicode name database is needed).
fn look_alike(c: char) -> Option<LookAlike> {
    Some(match c {
        '\u{00A0}' => look("NO-BREAK SPACE", " "),
        '\u{00AD}' => look("SOFT HYPHEN", ""),
        '\u{2002}' => look("EN SPACE", " "),
        '\u{2003}' => look("EM SPACE", " "),
        '\u{2009}' => look("THIN SPACE", " "),
        '\u{200A}' => look("HAIR SPACE", " "),
        '\u{200B}' => look("ZERO WIDTH SPACE", ""),
        '\u{200C}' => look("ZERO WIDTH NON-JOINER", ""),
        '\u{200D}' => look("ZERO WIDTH JOINER", ""),
        '\u{2028}' => look("LINE SEPARATOR", " "),
        '\u{2029}' => look("PARAGRAPH SEPARATOR", " "),
        '\u{202F}' => look("NARROW NO-BREAK SPACE", " "),
        '\u{2060}' => look("WORD JOINER", ""),
        '\u{3000}' => look("IDEOGRAPHIC SPACE", " "),
        '\u{FEFF}' => look("ZERO WIDTH NO-BREAK SPACE (a byte order mark)", ""),
        '\u{2018}' => quote("LEFT SINGLE QUOTATION MARK"),
        '\u{2019}' => quote("RIGHT SINGLE QUOTATION MARK"),
        '\u{201C}' => quote("LEFT DOUBLE QUOTATION MARK"),
        '\u{201D}' => quote("RIGHT DOUBLE QUOTATION MARK"),
        '\u{201E}' => quote("DOUBLE LOW-9 QUOTATION MARK"),
        '\u{00AB}' => quote("LEFT-POINTING DOUBLE ANGLE QUOTATION MARK"),
        '\u{00BB}' => quote("RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK"),
        '\u{2010}' => look("HYPHEN", "-"),
        '\u{2011}' => look("NON-BREAKING HYPHEN", "-"),
        '\u{2012}' => look("FIGURE DASH", "-"),
        '\u{2013}' => look("EN DASH", "-"),
        '\u{2014}' => look("EM DASH", "-"),
        '\u{2212}' => look("MINUS SIGN", "-"),
        '\u{2192}' => look("RIGHTWARDS ARROW", "->"),
        '\u{2026}' => look("HORIZONTAL ELLIPSIS", "..."),
        '\u{FF08}' => look("FULLWIDTH LEFT PARENTHESIS", "("),
        '\u{FF09}' => look("FULLWIDTH RIGHT PARENTHESIS", ")"),
        '\u{FF0C}' => look("FULLWIDTH COMMA", ","),
        '\u{FF1A}' => look("FULLWIDTH COLON", ":"),
        '\u{FF1D}' => look("FULLWIDTH EQUALS SIGN", "="),
        '\u{FF3B}' => look("FULLWIDTH LEFT SQUARE BRACKET", "["),
        '\u{FF3D}' => look("FULLWIDTH RIGHT SQUARE BRACKET", "]"),
        '\u{FF3F}' => look("FULLWIDTH LOW LINE", "_"),
        '\u{FF5B}' => look("FULLWIDTH LEFT CURLY BRACKET", "{"),
        '\u{FF5D}' => look("FULLWIDTH RIGHT CURLY BRACKET", "}"),
        '\u{FF02}' => quote("FULLWIDTH QUOTATION MARK"),
        '\u{FF10}'..='\u{FF19}' => look(
            FULLWIDTH_DIGITS.get(offset_from(c, '\u{FF10}'))?,
            ASCII_DIGITS.get(offset_from(c, '\u{FF10}'))?,
        ),
        '\u{FF21}'..='\u{FF3A}' => look(
            FULLWIDTH_CAPITALS.get(offset_from(c, '\u{FF21}'))?,
            ASCII_UPPER.get(offset_from(c, '\u{FF21}'))?,
        ),
        '\u{FF41}'..='\u{FF5A}' => look(
            FULLWIDTH_SMALL.get(offset_from(c, '\u{FF41}'))?,
            ASCII_LOWER.get(offset_from(c, '\u{FF41}'))?,
        ),
        _ => return None,
    })
}

fn offset_from(c: char, first: char) -> usize {
    (c as usize).saturating_sub(first as usize)
}

const ASCII_DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const FULLWIDTH_DIGITS: [&str; 10] = [
    "FULLWIDTH DIGIT ZERO",
    "FULLWIDTH DIGIT ONE",
    "FULLWIDTH DIGIT TWO",
    "FULLWIDTH DIGIT THREE",
    "FULLWIDTH DIGIT FOUR",
    "FULLWIDTH DIGIT FIVE",
    "FULLWIDTH DIGIT SIX",
    "FULLWIDTH DIGIT SEVEN",
    "FULLWIDTH DIGIT EIGHT",
    "FULLWIDTH DIGIT NINE",
];

macro_rules! letters {
    ($upper:ident, $lower:ident, $caps:ident, $small:ident; $($l:literal $u:literal),*) => {
        const $upper: [&str; 26] = [$($u),*];
        const $lower: [&str; 26] = [$($l),*];
        const $caps: [&str; 26] = [$(concat!("FULLWIDTH LATIN CAPITAL LETTER ", $u)),*];
        const $small: [&str; 26] = [$(concat!("FULLWIDTH LATIN SMALL LETTER ", $u)),*];
    };
}

letters!(ASCII_UPPER, ASCII_LOWER, FULLWIDTH_CAPITALS, FULLWIDTH_SMALL;
    "a" "A", "b" "B", "c" "C", "d" "D", "e" "E", "f" "F", "g" "G", "h" "H", "i" "I", "j" "J",
    "k" "K", "l" "L", "m" "M", "n" "N", "o" "O", "p" "P", "q" "Q", "r" "R", "s" "S", "t" "T",
    "u" "U", "v" "V", "w" "W", "x" "X", "y" "Y", "z" "Z");

/// What the scan found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// One diagnostic per mistake (a look-alike character is reported once, where it first
    /// appears).
    pub diagnostics: Vec<Diagnostic>,
    /// The text with every mistake repaired, byte for byte at the same offsets; `None` when
    /// nothing was found.
    pub repaired: Option<String>,
    /// Byte ranges of the lines that held a mistake: the parser's errors there are dropped.
    pub lines: Vec<(usize, usize)>,
}

/// One place to repair: the bytes at `at` become `with`, padded with spaces in front to the same
/// length.
struct Repair {
    at: usize,
    len: usize,
    with: String,
}

/// Scans `text` for look-alike characters, single-quoted strings and non-ASCII names.
pub(crate) fn scan(file: FileId, text: &str) -> Scan {
    // Fast path: nothing to do for ASCII text without `'`.
    if text.is_ascii() && !text.contains('\'') {
        return Scan::default();
    }
    let mut scanner = Scanner {
        file,
        text,
        repairs: Vec::new(),
        look_alikes: BTreeMap::new(),
        names: BTreeMap::new(),
        quotes: Vec::new(),
    };
    scanner.run();
    scanner.finish()
}

/// The first place a look-alike appears, the closing quote it pairs with, and how many more.
struct Seen {
    at: usize,
    closing: Option<(usize, char)>,
    more: usize,
}

struct Scanner<'t> {
    file: FileId,
    text: &'t str,
    repairs: Vec<Repair>,
    /// Look-alikes by character.
    look_alikes: BTreeMap<char, Seen>,
    /// Non-ASCII names: name → (first place, further uses).
    names: BTreeMap<&'t str, (usize, usize)>,
    /// Single-quoted strings: (opening quote, closing quote if on the same line).
    quotes: Vec<(usize, Option<usize>)>,
}

impl<'t> Scanner<'t> {
    fn run(&mut self) {
        let text = self.text;
        let mut i = 0;
        // Jump from one byte that can matter to the next: most of a file is plain ASCII code.
        while let Some(skip) = text.as_bytes().get(i..).and_then(|b| {
            b.iter()
                .position(|&b| matches!(b, b'/' | b'"' | b'\'') || !b.is_ascii())
        }) {
            i += skip;
            let Some(c) = text.get(i..).and_then(|s| s.chars().next()) else {
                break;
            };
            let rest = text.get(i..).unwrap_or("");
            if let Some(len) = super::bad_lines::comment_or_text_block(rest) {
                i += len;
            } else if c == '"' {
                i += 1 + string_end(rest.get(1..).unwrap_or(""), &['"']);
            } else if c == '\'' {
                let end = string_end(rest.get(1..).unwrap_or(""), &['\'']);
                let closed = end > 0 && rest.get(end..end + 1) == Some("'");
                let close = closed.then_some(i + end);
                self.quotes.push((i, close));
                self.repair(i, 1, "\"");
                if let Some(close) = close {
                    self.repair(close, 1, "\"");
                }
                i += 1 + end;
            } else if c.is_ascii() {
                i += 1;
            } else if let Some(look) = look_alike(c) {
                let start = i;
                let len = c.len_utf8();
                i += len;
                // A byte order mark at the very start of the file is allowed.
                if c == '\u{FEFF}' && start == 0 {
                    continue;
                }
                self.repair(start, len, look.instead);
                let mut closing = None;
                if look.quote {
                    // A string in curly quotes: its text is not code, and its closing quote is
                    // part of the same mistake.
                    let body = text.get(i..).unwrap_or("");
                    let end = body
                        .find(|q: char| q == '\n' || q == '"' || look_alike(q).is_some_and(|l| l.quote))
                        .unwrap_or(body.len());
                    i += end;
                    if let Some(q) = body.get(end..).and_then(|s| s.chars().next()).filter(|q| *q != '\n') {
                        self.repair(i, q.len_utf8(), "\"");
                        if q != '"' {
                            closing = Some((i, q));
                        }
                        i += q.len_utf8();
                    }
                }
                self.look_alikes
                    .entry(c)
                    .and_modify(|seen| seen.more += 1)
                    .or_insert(Seen {
                        at: start,
                        closing,
                        more: 0,
                    });
            } else if c.is_alphanumeric() {
                i = self.word(i);
            } else {
                i += c.len_utf8();
            }
        }
    }

    /// A name that holds a non-ASCII letter, starting at `start` (or just before, in ASCII).
    fn word(&mut self, start: usize) -> usize {
        let text = self.text;
        let before = text.get(..start).unwrap_or("");
        let first = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_')
            .last()
            .map_or(start, |(k, _)| k);
        let rest = text.get(first..).unwrap_or("");
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_') || look_alike(c).is_some())
            .unwrap_or(rest.len());
        let end = first + len;
        let word = text.get(first..end).unwrap_or("");
        for (k, c) in word.char_indices().filter(|(_, c)| !c.is_ascii()) {
            self.repair(first + k, c.len_utf8(), &"_".repeat(c.len_utf8()));
        }
        self.names
            .entry(word)
            .and_modify(|(_, more)| *more += 1)
            .or_insert((first, 0));
        end.max(start + 1)
    }

    fn repair(&mut self, at: usize, len: usize, with: &str) {
        self.repairs.push(Repair {
            at,
            len,
            with: with.to_string(),
        });
    }

    fn finish(self) -> Scan {
        let text = self.text;
        let file = self.file;
        if self.repairs.is_empty() {
            return Scan::default();
        }
        let mut found: Vec<Diagnostic> = Vec::new();
        for (c, seen) in &self.look_alikes {
            let Some(look) = look_alike(*c) else { continue };
            found.push(look_alike_diagnostic(file, text, *c, &look, seen));
        }
        for (open, close) in &self.quotes {
            let span = Span::new(*open, close.map_or(*open, |c| c) + 1);
            let d = Diagnostic::new(Code::TENX0012, "strings use double quotes, not `'`", file, span)
                .label("single-quoted string")
                .help("write the string in double quotes: `\"like this\"`");
            found.push(d);
        }
        for (name, (at, more)) in &self.names {
            let mut d = Diagnostic::new(
                Code::TENX0014,
                format!("the name `{name}` has a letter that is not ASCII"),
                file,
                Span::new(*at, at + name.len()),
            )
            .label("not an ASCII name")
            .help("names are made of ASCII letters, digits and `_`, such as `cafe` or `order_2`");
            if *more > 0 {
                d = d.note(format!("it is used {more} more time{} in this file", plural(*more)));
            }
            found.push(d);
        }
        found.sort_by_key(|d| (d.primary.span.start, d.primary.span.end));
        let mut bytes = text.as_bytes().to_vec();
        let mut lines = Vec::new();
        for repair in &self.repairs {
            let Some(slot) = bytes.get_mut(repair.at..repair.at + repair.len) else {
                continue;
            };
            let pad = repair.len.saturating_sub(repair.with.len());
            for (k, b) in slot.iter_mut().enumerate() {
                *b = match k.checked_sub(pad) {
                    None => b' ',
                    Some(j) => repair.with.as_bytes().get(j).copied().unwrap_or(b' '),
                };
            }
            // Repairs come in text order: one line range per line, so a long line full of
            // look-alikes costs one pass, not one per character.
            if lines.last().is_some_and(|&(_, end)| repair.at <= end) {
                continue;
            }
            let start = text.get(..repair.at).and_then(|s| s.rfind('\n')).map_or(0, |n| n + 1);
            let end = text
                .get(repair.at..)
                .and_then(|s| s.find('\n'))
                .map_or(text.len(), |n| repair.at + n);
            lines.push((start, end));
        }
        // Every byte replaced was part of a whole non-ASCII character or an ASCII `'`, and every
        // replacement is ASCII, so the result is valid UTF-8.
        let repaired = String::from_utf8(bytes).ok();
        Scan {
            diagnostics: found,
            repaired,
            lines,
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn look_alike_diagnostic(file: FileId, text: &str, c: char, look: &LookAlike, seen: &Seen) -> Diagnostic {
    let code_point = format!("U+{:04X} {}", c as u32, look.name);
    let span = Span::new(seen.at, seen.at + c.len_utf8());
    let mut d = if look.instead.is_empty() {
        let after = text
            .get(..seen.at)
            .and_then(|s| s.trim_end_matches([' ', '\t']).chars().last())
            .filter(|c| !c.is_whitespace())
            .map_or(String::new(), |c| format!(", right after `{c}`"));
        Diagnostic::new(
            Code::TENX0011,
            format!("invisible character `{code_point}` in code"),
            file,
            span,
        )
        .label(format!("`{code_point}` is here{after}"))
        .help("delete it: it cannot be seen, so delete the text around it and type it again")
    } else if look.instead == " " {
        Diagnostic::new(
            Code::TENX0011,
            format!("`{code_point}` looks like a space but is not one"),
            file,
            span,
        )
        .label(format!("`{code_point}`"))
        .help("type a plain space instead")
    } else {
        let shown = if look.quote { "\"" } else { look.instead };
        let mut d = Diagnostic::new(
            Code::TENX0011,
            format!("`{c}` (`{code_point}`) is not `{shown}`"),
            file,
            span,
        )
        .label(format!("`{code_point}`"));
        if look.quote {
            d = d.help("type a straight double quote `\"` instead: strings are written `\"like this\"`");
        } else {
            d = d.help(format!("type `{}` instead", look.instead));
        }
        d
    };
    if let Some((at, q)) = seen.closing {
        d = d.secondary(
            file,
            Span::new(at, at + q.len_utf8()),
            format!("and `U+{:04X} {}` here", q as u32, look_alike(q).map_or("", |l| l.name)),
        );
    }
    if seen.more > 0 {
        d = d.note(format!(
            "it appears {} more time{} in this file; such characters are fine only inside strings and comments",
            seen.more,
            plural(seen.more)
        ));
    }
    d
}

/// The length of a one-line string's body (from after its opening quote up to and including its
/// closing quote, or up to the end of the line).
fn string_end(body: &str, closers: &[char]) -> usize {
    let mut chars = body.char_indices();
    while let Some((k, c)) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if closers.contains(&c) {
            return k + 1;
        } else if c == '\n' {
            return k;
        }
    }
    body.len()
}

#[cfg(test)]
mod tests {
    use super::scan;
    use tenx_diagnostics::{Code, FileId};

    fn codes(text: &str) -> Vec<(Code, u32)> {
        scan(FileId(0), text)
            .diagnostics
            .iter()
            .map(|d| (d.code, d.primary.span.start))
            .collect()
    }

    #[test]
    fn look_alikes_outside_strings_are_found_and_repaired() {
        let text = "graph g {\n  entry\u{a0}= a\n  x = \"caf\u{e9} \u{a0}\" // \u{201c}ok\u{201d}\n}\n";
        let found = scan(FileId(0), text);
        assert_eq!(found.diagnostics.len(), 1);
        assert_eq!(
            found.repaired.as_deref(),
            Some("graph g {\n  entry  = a\n  x = \"caf\u{e9} \u{a0}\" // \u{201c}ok\u{201d}\n}\n")
        );
    }

    #[test]
    fn curly_quotes_are_one_mistake() {
        let text = "x = \u{201c}caf\u{e9}\u{201d}\n";
        let found = scan(FileId(0), text);
        assert_eq!(codes(text), vec![(Code::TENX0011, 4)]);
        assert_eq!(found.repaired.as_deref(), Some("x =   \"caf\u{e9}  \"\n"));
    }

    #[test]
    fn single_quotes_and_names() {
        assert_eq!(codes("x = 'a\u{e9}'\n"), vec![(Code::TENX0012, 4)]);
        assert_eq!(codes("agent caf\u{e9} {}\nx -> caf\u{e9}\n"), vec![(Code::TENX0014, 6)]);
        assert_eq!(codes("\u{feff}model m {}\n"), vec![]);
        assert!(scan(FileId(0), "// don't\nx = \"it's\"\n").repaired.is_none());
    }
}
