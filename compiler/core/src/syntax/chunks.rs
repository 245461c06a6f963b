//! Splits a file into one chunk per top-level item before pest sees it.
//!
//! pest stops at the first error and has no recovery, so each top-level item is parsed on its
//! own: a broken item costs one diagnostic, not the rest of the file. A chunk starts at a
//! top-level keyword at bracket depth 0, or at a keyword in column 0 inside brackets (so a
//! missing `}` ends at the next item instead of swallowing it). The scanner also finds what
//! would make pest misbehave: nesting deeper than [`MAX_NESTING`], and an unterminated `"""` or
//! `/*`, which would swallow the rest of the file.

/// The deepest bracket nesting the parser accepts; deeper input is refused before parsing, so
/// no input can exhaust the stack.
pub const MAX_NESTING: usize = 64;

/// Whether a word starts a top-level item (a `match`, not a list search: this runs per word).
fn is_top_level_keyword(word: &str) -> bool {
    matches!(
        word,
        "import" | "tag" | "schema" | "model" | "tool" | "agent" | "validator" | "interrupt" | "graph" | "test"
    )
}

/// One chunk of a file: bytes `start..end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Whether the chunk holds any token (not only whitespace and comments).
    pub has_tokens: bool,
    /// Where nesting first went deeper than [`MAX_NESTING`], if it did.
    pub too_deep_at: Option<usize>,
    /// Whether the chunk was cut short at an unterminated `"""` or `/*`.
    pub truncated: bool,
}

/// Something the scanner found that the parser must not see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanProblem {
    /// A `"""` with no closing `"""`, at this offset.
    UnterminatedText(usize),
    /// A `/*` with no closing `*/`, at this offset.
    UnterminatedComment(usize),
}

/// Splits `text` into chunks. Chunks are contiguous and cover the text up to the first
/// unterminated `"""` or `/*` (from the start of its line).
pub fn split(text: &str) -> (Vec<Chunk>, Vec<ScanProblem>) {
    let bytes = text.as_bytes();
    let mut chunks = Vec::new();
    let mut problems = Vec::new();
    let mut current = Chunk {
        start: 0,
        end: 0,
        has_tokens: false,
        too_deep_at: None,
        truncated: false,
    };
    let mut depth = 0usize;
    // `list<…>` nests like a bracket: `<` counts as an opening only right after the word `list`
    // (so `score < 1` does not), and `>` closes only an open generic.
    let mut after_list = false;
    let mut generics_open = 0usize;
    let mut i = 0usize;
    let mut at_column_zero = true;
    // Right after the keyword that started an item comes its name, which may be a keyword too
    // (`agent agent {`, `tag tool`): it starts no item unless it opens a line of its own.
    let mut name_next = false;
    let byte = |k: usize| bytes.get(k).copied().unwrap_or(0);
    let line_start = |k: usize| text.get(..k).and_then(|s| s.rfind('\n')).map_or(0, |n| n + 1);

    while i < bytes.len() {
        let b = byte(i);
        let column_zero = at_column_zero;
        at_column_zero = false;
        let is_name = name_next;
        if !matches!(b, b'\n' | b' ' | b'\t' | b'\r' | b'/') {
            name_next = false;
        }
        match b {
            b'\n' => {
                at_column_zero = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            // U+FEFF, a byte order mark: whitespace, as in the grammar.
            0xEF if byte(i + 1) == 0xBB && byte(i + 2) == 0xBF => i += 3,
            b'/' if byte(i + 1) == b'/' => {
                i = text.get(i..).and_then(|s| s.find('\n')).map_or(bytes.len(), |n| i + n);
            }
            b'/' if byte(i + 1) == b'*' => match text.get(i + 2..).and_then(|s| s.find("*/")) {
                Some(n) => i = i + 2 + n + 2,
                None => {
                    problems.push(ScanProblem::UnterminatedComment(i));
                    current.truncated = true;
                    i = line_start(i);
                    break;
                }
            },
            b'"' if byte(i + 1) == b'"' && byte(i + 2) == b'"' => {
                current.has_tokens = true;
                match text.get(i + 3..).and_then(|s| s.find("\"\"\"")) {
                    Some(n) => i = i + 3 + n + 3,
                    None => {
                        problems.push(ScanProblem::UnterminatedText(i));
                        current.truncated = true;
                        i = line_start(i);
                        break;
                    }
                }
            }
            b'"' => {
                current.has_tokens = true;
                i += 1;
                while i < bytes.len() {
                    match byte(i) {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\n' => break,
                        _ => i += 1,
                    }
                }
            }
            b'{' | b'[' | b'(' => {
                current.has_tokens = true;
                depth += 1;
                if depth > MAX_NESTING && current.too_deep_at.is_none() {
                    current.too_deep_at = Some(i);
                }
                i += 1;
            }
            b'}' | b']' | b')' => {
                current.has_tokens = true;
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (byte(i).is_ascii_alphanumeric() || byte(i) == b'_') {
                    i += 1;
                }
                let word = text.get(start..i).unwrap_or("");
                after_list = word == "list";
                // A misspelt keyword (`agnet`) at the start of a line also starts an item, so the
                // items after it are still read on their own. Only words in column 0 that are not
                // keywords pay for the comparison, which valid files rarely have.
                let starts_item =
                    (is_top_level_keyword(word) && (depth == 0 || column_zero) && (!is_name || column_zero))
                        || (column_zero && depth == 0 && super::mistakes::near_keyword(word).is_some());
                name_next = starts_item;
                if starts_item && current.has_tokens {
                    current.end = start;
                    chunks.push(current);
                    current = Chunk {
                        start,
                        end: start,
                        has_tokens: false,
                        too_deep_at: None,
                        truncated: false,
                    };
                }
                if starts_item {
                    depth = 0;
                    generics_open = 0;
                }
                current.has_tokens = true;
            }
            b'<' if after_list => {
                after_list = false;
                current.has_tokens = true;
                depth += 1;
                generics_open += 1;
                if depth > MAX_NESTING && current.too_deep_at.is_none() {
                    current.too_deep_at = Some(i);
                }
                i += 1;
            }
            b'>' if generics_open > 0 => {
                generics_open -= 1;
                depth = depth.saturating_sub(1);
                current.has_tokens = true;
                i += 1;
            }
            _ => {
                after_list = false;
                current.has_tokens = true;
                // Skip a whole UTF-8 character.
                i += text.get(i..).and_then(|s| s.chars().next()).map_or(1, char::len_utf8);
            }
        }
    }
    current.end = i.min(bytes.len());
    if current.has_tokens || current.truncated || chunks.is_empty() {
        chunks.push(current);
    }
    (chunks, problems)
}

/// When nesting got too deep because brackets were left open on earlier lines rather than
/// nested on purpose: the offset of the first bracket, among those still open at `upto`, that
/// a later open bracket's line does not indent past. Strings and comments are skipped.
pub fn left_open(text: &str, upto: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let byte = |k: usize| bytes.get(k).copied().unwrap_or(0);
    let indent = |at: usize| {
        let start = text.get(..at).and_then(|s| s.rfind('\n')).map_or(0, |n| n + 1);
        let line = text.get(start..).unwrap_or("");
        (start, line.len() - line.trim_start_matches([' ', '\t']).len())
    };
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < upto.min(bytes.len()) {
        let rest = text.get(i..).unwrap_or("");
        match byte(i) {
            b'/' if byte(i + 1) == b'/' => i += rest.find('\n').unwrap_or(rest.len()),
            b'/' if byte(i + 1) == b'*' => i += rest.find("*/").map_or(rest.len(), |n| n + 2),
            b'"' if rest.starts_with("\"\"\"") => {
                i += 3 + rest
                    .get(3..)
                    .and_then(|r| r.find("\"\"\""))
                    .map_or(rest.len(), |n| n + 3);
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && !matches!(byte(i), b'"' | b'\n') {
                    i += if byte(i) == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' | b'[' | b'(' => {
                open.push(i);
                i += 1;
            }
            b'}' | b']' | b')' => {
                open.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
    open.iter().enumerate().find_map(|(k, &first)| {
        let (line, width) = indent(first);
        open.get(k + 1..)?
            .iter()
            .any(|&later| {
                let (later_line, later_width) = indent(later);
                later_line != line && later_width <= width
            })
            .then_some(first)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(text: &str) -> Vec<usize> {
        split(text).0.iter().filter(|c| c.has_tokens).map(|c| c.start).collect()
    }

    #[test]
    fn splits_at_top_level_keywords() {
        let text = "model a {}\ntool b { risk = high }\n";
        assert_eq!(starts(text), vec![0, 11]);
    }

    #[test]
    fn a_keyword_as_an_item_name_does_not_split() {
        let text = "agent agent {\n  model = model\n}\ntag tool \"t\"\nmodel /* c */ graph {}\n";
        assert_eq!(starts(text), vec![0, 32, 45]);
        // A keyword alone on the line after one is a new item, not a name.
        assert_eq!(starts("model\nagent a {}\n"), vec![0, 6]);
    }

    #[test]
    fn keywords_inside_blocks_do_not_split() {
        let text = "agent a {\n  model = m\n  tool = x\n}\n";
        assert_eq!(starts(text), vec![0]);
    }

    #[test]
    fn a_missing_brace_ends_at_the_next_item_in_column_zero() {
        let text = "tool a {\n  risk = high\ntool b {}\n";
        assert_eq!(starts(text), vec![0, 23]);
    }

    #[test]
    fn strings_and_comments_hide_keywords() {
        let text = "agent a { prompt = \"\"\"\ntool x\n\"\"\" }\n// tool y\n/* tool z */";
        assert_eq!(starts(text), vec![0]);
    }

    #[test]
    fn deep_nesting_is_flagged() {
        let text = format!("schema s = {}", "[".repeat(10_000));
        let (chunks, _) = split(&text);
        assert_eq!(chunks[0].too_deep_at, Some(11 + MAX_NESTING));
    }

    #[test]
    fn brackets_left_open_on_sibling_lines_are_found() {
        let text = "model m {\n  a = [1\n  b = [2\n  c = [3\n";
        assert_eq!(left_open(text, text.len()), Some(16));
        let nested = "schema s = {\n  \"a\": {\n    \"b\": [\n";
        assert_eq!(left_open(nested, nested.len()), None);
    }

    #[test]
    fn unterminated_text_block_truncates_at_its_line() {
        let text = "agent a {\n  prompt = \"\"\"\n never closed\n";
        let (chunks, problems) = split(text);
        assert_eq!(problems, vec![ScanProblem::UnterminatedText(21)]);
        assert_eq!(chunks[0].end, 10);
        assert!(chunks[0].truncated);
    }
}
