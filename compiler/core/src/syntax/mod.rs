//! The syntax stage: source text → typed AST ([`crate::ast::Module`]) plus diagnostics.
//!
//! Parsing always produces something. The file is split into one chunk per top-level item
//! ([`chunks`]); each chunk is parsed by pest and lowered at once into the AST, so pest types
//! never leave this module. Bad lines inside blocks, stray text between items, missing `}` and
//! likely mistakes (`=>`, `key: value`) each become a diagnostic, and parsing carries on. The
//! names of items that could not be read at all are returned ([`Parsed::broken`]), so later
//! stages do not report every use of them as unknown.

mod agent;
mod agent_input;
mod answers;
mod approval_fields;
mod bad_lines;
mod blocks;
mod cache;
mod characters;
pub mod chunks;
pub mod errors;
mod forks;
mod graph;
mod handoffs;
mod interrupt;
mod items;
mod loops;
mod mistakes;
mod model;
mod results;
mod retries;
mod risk_rules;
mod test_block;
mod tool;
mod typed_output;
mod types;
mod validator;
mod values;
// Composition: subgraph mappings and agents as tools.
mod agent_tools;
mod subgraphs;

pub use cache::ParseCache;

use crate::ast::{Ident, Item, Module};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};
use tenx_grammar::pest::Parser;
use tenx_grammar::pest::iterators::Pair;
use tenx_grammar::{Rule, TenxParser};

/// One parsed file: the module, its diagnostics, and the names of the declarations that could
/// not be parsed.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Every item that could be read.
    pub module: Module,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
    /// The names of items whose text is broken beyond reading (`tool t(x: ) { … }`): their error
    /// is reported once, and later stages do not report every use of the name as unknown.
    pub broken: Vec<Ident>,
}

/// Parses one file. Never fails: problems are diagnostics, and every item that could be read is
/// in the module.
pub fn parse_file(file: FileId, text: &str) -> (Module, Vec<Diagnostic>) {
    let parsed = parse(file, text);
    (parsed.module, parsed.diagnostics)
}

/// Parses one file, also returning the names of the items that could not be parsed.
pub fn parse(file: FileId, text: &str) -> Parsed {
    parse_with(file, text, None)
}

/// [`parse`], taking the parse of each unchanged item from `cache` (see [`ParseCache`]); the
/// result is the same as without it.
pub fn parse_with(file: FileId, text: &str, cache: Option<&mut ParseCache>) -> Parsed {
    // Look-alike characters, single quotes and non-ASCII names are reported first, and the rest
    // is parsed as if they had been typed right.
    let scan = characters::scan(file, text);
    let text = scan.repaired.as_deref().unwrap_or(text);
    let mut diagnostics = scan.diagnostics;
    let mut broken = Vec::new();
    let mut module = Module {
        file,
        items: Vec::new(),
    };
    let (chunks, problems) = chunks::split(text);
    for problem in problems {
        diagnostics.push(match problem {
            chunks::ScanProblem::UnterminatedText(at) => {
                Diagnostic::new(Code::TENX0003, "unterminated text block", file, Span::new(at, at + 3))
                    .label("this `\"\"\"` is never closed")
                    .help("end the text block with `\"\"\"`")
            }
            chunks::ScanProblem::UnterminatedComment(at) => Diagnostic::new(
                Code::TENX0010,
                "unterminated block comment",
                file,
                Span::new(at, at + 2),
            )
            .label("this `/*` is never closed")
            .help("end the comment with `*/`"),
        });
    }
    let live: Vec<&chunks::Chunk> = chunks.iter().filter(|c| c.has_tokens).collect();
    // Chunks are independent, so a large file is parsed on several threads; results are joined
    // in chunk order, so the output does not depend on the number of threads.
    // A panic in a worker panics the caller: never a silently shorter module.
    let parse_chunks = |chunks: &[&chunks::Chunk]| -> Vec<Parsed> {
        if chunks.len() >= PARALLEL_MIN_CHUNKS {
            crate::parallel::map_in_threads(chunks, PARSE_THREADS, |c| parse_chunk(file, text, c))
        } else {
            chunks.iter().map(|c| parse_chunk(file, text, c)).collect()
        }
    };
    let parts: Vec<Parsed> = match cache {
        Some(cache) => cache.parse_all(file, text, &live, parse_chunks),
        None => parse_chunks(&live),
    };
    for part in parts {
        module.items.extend(part.module.items);
        diagnostics.extend(part.diagnostics);
        broken.extend(part.broken);
    }
    if !scan.lines.is_empty() {
        // The parser's errors on a line with a look-alike character are explained by it.
        diagnostics.retain(|d| {
            let at = d.primary.span.start as usize;
            !matches!(d.code, Code::TENX0001 | Code::TENX0003)
                || !scan.lines.iter().any(|(start, end)| (*start..=*end).contains(&at))
        });
    }
    mistakes::end_for_end(&mut module, &mut diagnostics);
    Parsed {
        module,
        diagnostics,
        broken,
    }
}

/// Files with at least this many items are parsed on [`PARSE_THREADS`] threads.
const PARALLEL_MIN_CHUNKS: usize = 256;

/// Threads used for large files. Fixed (not read from the machine) so the core stays free of
/// environment access; on fewer cores the extra threads cost little.
const PARSE_THREADS: usize = 4;

/// Parses and lowers one chunk.
fn parse_chunk(file: FileId, text: &str, chunk: &chunks::Chunk) -> Parsed {
    let mut out = Parsed {
        module: Module {
            file,
            items: Vec::new(),
        },
        ..Parsed::default()
    };
    let Some(chunk_text) = text.get(chunk.start..chunk.end) else {
        return out;
    };
    if let Some(at) = chunk.too_deep_at {
        let diagnostic = match chunks::left_open(chunk_text, at - chunk.start) {
            // The depth comes from brackets left open line after line: report the first.
            Some(local) => {
                let open = chunk_text.get(local..local + 1).unwrap_or("(");
                let at = chunk.start + local;
                Diagnostic::new(
                    Code::TENX0001,
                    format!("unclosed `{open}`"),
                    file,
                    Span::new(at, at + 1),
                )
                .label(format!("this `{open}` is never closed"))
                .help("close it on its line; the lines after it are read as inside it")
                .note(format!(
                    "with brackets left open, this item nests more than {} levels deep, so it is not read any further",
                    chunks::MAX_NESTING
                ))
            }
            None => Diagnostic::new(
                Code::TENX0005,
                format!("brackets are nested more than {} levels deep", chunks::MAX_NESTING),
                file,
                Span::new(at, at + 1),
            )
            .label("too deep here")
            .help("flatten the value, or name parts of it with `schema` declarations"),
        };
        out.diagnostics.push(diagnostic);
        out.broken.extend(broken_name(chunk_text, chunk.start));
        return out;
    }
    // Mistakes with a certain fix of the same length are repaired and the chunk is read again,
    // so the item is not lost; each repair reports its mistake once.
    let mut repaired: Option<String> = None;
    let mut reported: Vec<Diagnostic> = Vec::new();
    for round in 0..=MAX_REPAIR_ROUNDS {
        let current = repaired.as_deref().unwrap_or(chunk_text);
        let (mut part, repairs) = lower_chunk(file, current, chunk);
        if repairs.is_empty() || round == MAX_REPAIR_ROUNDS {
            reported.extend(repairs.into_iter().map(|r| r.diagnostic));
            reported.append(&mut part.diagnostics);
            part.diagnostics = reported;
            return part;
        }
        let mut bytes = current.as_bytes().to_vec();
        for repair in repairs {
            let local = repair.at.saturating_sub(chunk.start);
            if let Some(slot) = bytes.get_mut(local..local + repair.with.len()) {
                slot.copy_from_slice(repair.with.as_bytes());
            }
            reported.push(repair.diagnostic);
        }
        match String::from_utf8(bytes) {
            Ok(next) => repaired = Some(next),
            Err(_) => {
                reported.append(&mut part.diagnostics);
                part.diagnostics = reported;
                return part;
            }
        }
    }
    out
}

/// How many times a chunk is read again after repairs (each round can repair several lines).
const MAX_REPAIR_ROUNDS: usize = 4;

/// Parses and lowers the text of one chunk, returning the repairs it asks for.
fn lower_chunk(file: FileId, chunk_text: &str, chunk: &chunks::Chunk) -> (Parsed, Vec<mistakes::Repair>) {
    let mut out = Parsed {
        module: Module {
            file,
            items: Vec::new(),
        },
        ..Parsed::default()
    };
    let mut repairs = Vec::new();
    let mut lower = Lower {
        file,
        base: chunk.start,
        text: chunk_text,
        diagnostics: &mut out.diagnostics,
        broken: &mut out.broken,
        truncated: chunk.truncated,
        repairs: &mut repairs,
    };
    match TenxParser::parse(Rule::item_chunk, chunk_text) {
        Ok(pairs) => {
            for pair in pairs.flat_map(Pair::into_inner) {
                match pair.as_rule() {
                    Rule::stray_text => out.module.items.extend(lower.stray_text(&pair)),
                    Rule::EOI => {}
                    _ => {
                        if let Some(item) = lower.item(pair) {
                            out.module.items.push(item);
                        }
                    }
                }
            }
        }
        Err(error) => lower
            .diagnostics
            .push(errors::syntax_error(&error, chunk_text, chunk.start, file)),
    }
    (out, repairs)
}

/// Lowering context for one chunk: pair spans are relative to `base`.
pub(crate) struct Lower<'d> {
    pub file: FileId,
    pub base: usize,
    /// The chunk's text.
    pub text: &'d str,
    pub diagnostics: &'d mut Vec<Diagnostic>,
    /// Names of items that could not be parsed.
    pub broken: &'d mut Vec<Ident>,
    /// The chunk was cut at an unterminated `"""` or `/*` (already reported).
    pub truncated: bool,
    /// Fixes to apply before reading the chunk again.
    pub repairs: &'d mut Vec<mistakes::Repair>,
}

impl<'d> Lower<'d> {
    /// The span of a pair, in file offsets.
    pub fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        Span::new(self.base + s.start(), self.base + s.end())
    }

    /// An identifier from an `ident`-like pair.
    pub fn ident(&self, pair: &Pair<'_, Rule>) -> Ident {
        Ident {
            name: pair.as_str().to_string(),
            span: self.span(pair),
        }
    }

    /// Records a diagnostic.
    pub fn report(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// A new diagnostic in this file.
    pub fn diag(&self, code: Code, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(code, message, self.file, span)
    }

    fn item(&mut self, pair: Pair<'_, Rule>) -> Option<Item> {
        Some(match pair.as_rule() {
            Rule::import_decl => Item::Import(self.import(pair)?),
            Rule::tag_decl => Item::Tag(self.tag(pair)),
            Rule::schema_decl => Item::Schema(self.schema(pair)?),
            Rule::model_decl => Item::Model(self.model(pair)),
            Rule::tool_decl => Item::Tool(self.tool(pair)),
            Rule::agent_decl => Item::Agent(self.agent(pair)),
            Rule::validator_decl => Item::Validator(self.validator(pair)),
            Rule::interrupt_decl => Item::Interrupt(self.interrupt(pair)),
            Rule::graph_decl => Item::Graph(self.graph(pair)),
            Rule::test_decl => Item::Test(self.test(pair)),
            _ => return None,
        })
    }

    /// The chunk text between two file offsets.
    pub fn text_between(&self, start: usize, end: usize) -> &'d str {
        self.text
            .get(start.saturating_sub(self.base)..end.saturating_sub(self.base))
            .unwrap_or("")
    }

    /// Text that is not part of any item: explain why by parsing it as an item on its own.
    /// Returns the item the text holds when it is one (a second item in the chunk, as after a
    /// misspelt keyword was repaired).
    fn stray_text(&mut self, pair: &Pair<'_, Rule>) -> Option<Item> {
        let span = self.span(pair);
        let text = pair.as_str();
        if let Ok(pairs) = TenxParser::parse(Rule::item_strict, text) {
            let mut sub = Lower {
                file: self.file,
                base: span.start as usize,
                text,
                diagnostics: &mut *self.diagnostics,
                broken: &mut *self.broken,
                truncated: self.truncated,
                repairs: &mut *self.repairs,
            };
            return pairs
                .flat_map(Pair::into_inner)
                .filter(|p| p.as_rule() != Rule::EOI)
                .find_map(|p| sub.item(p));
        }
        let broken = broken_name(text, span.start as usize);
        self.broken.extend(broken.clone());
        if text.starts_with('}') {
            let d = self
                .diag(
                    Code::TENX0001,
                    "unmatched `}`",
                    Span::new(span.start as usize, span.start as usize + 1),
                )
                .label("this `}` closes nothing")
                .help("remove it, or check the `{` above");
            self.report(d);
            return None;
        }
        if self.unterminated_string(span.start as usize, text) {
            return None;
        }
        let local = span.start as usize - self.base;
        match TenxParser::parse(Rule::item_strict, text) {
            Err(error) => {
                if let Some(gap) = mistakes::missing_comma(text, Rule::item_strict, errors::offset(&error)) {
                    let repair = mistakes::comma_repair(self.file, text, span.start as usize, gap);
                    self.repairs.push(repair);
                    return None;
                }
                if local == 0 || errors::at_start(&error) {
                    let word: String = text
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if let Some(keyword) = mistakes::near_keyword(&word) {
                        let at = span.start as usize;
                        let d = mistakes::keyword_diagnostic(self.file, &word, keyword, at);
                        self.report(d);
                        // `agnet a {`: read the item as the keyword it misspells.
                        let item = self.read_respelt(at, text, &word, keyword, Rule::item_strict, |l, p| {
                            p.into_inner().find_map(|p| l.item(p))
                        });
                        if item.is_some() {
                            self.broken.retain(|b| broken.as_ref().is_none_or(|n| n.span != b.span));
                        }
                        return item;
                    }
                }
                let mut d = errors::syntax_error(&error, text, span.start as usize, self.file);
                if errors::at_start(&error) {
                    d.message = format!(
                        "expected a declaration (`model`, `tool`, `agent`, `graph`, …), found {}",
                        errors::found_at(text, 0)
                    );
                }
                self.report(d);
            }
            Ok(_) => {
                // Cannot happen: parsed above. Report it plainly.
                let d = self
                    .diag(Code::TENX0001, "unexpected text", span)
                    .label("not part of any declaration");
                self.report(d);
            }
        }
        None
    }
}

/// The name declared by the broken item text at file offset `at`: `t` in `tool t(x: ) { … }`,
/// also when the keyword is misspelt (`modle m {`).
fn broken_name(text: &str, at: usize) -> Option<Ident> {
    let (word, rest) = next_word(text, 0)?;
    let keyword = text.get(word.clone())?;
    if !mistakes::ITEM_KEYWORDS.contains(&keyword)
        && crate::suggest::did_you_mean(keyword, mistakes::ITEM_KEYWORDS).is_none()
    {
        return None;
    }
    if matches!(keyword, "import" | "test") {
        return None;
    }
    let (name, _) = next_word(text, rest)?;
    let first = text.get(name.start..)?.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    Some(Ident {
        name: text.get(name.clone())?.to_string(),
        span: Span::new(at + name.start, at + name.end),
    })
}

/// The byte range of the next word of `text` after `from`, skipping whitespace and comments
/// (and nothing else), and the offset after it.
fn next_word(text: &str, from: usize) -> Option<(std::ops::Range<usize>, usize)> {
    let mut i = from;
    loop {
        let rest = text.get(i..)?;
        let trimmed = rest.trim_start();
        i += rest.len() - trimmed.len();
        if trimmed.starts_with("//") {
            i += trimmed.find('\n').unwrap_or(trimmed.len());
        } else if let Some(body) = trimmed.strip_prefix("/*") {
            i += 2 + body.find("*/")? + 2;
        } else {
            break;
        }
    }
    let rest = text.get(i..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (len > 0).then_some((i..i + len, i + len))
}

/// The inner pairs of a pair, as a vector (pest pairs are cheap to clone).
pub(crate) fn children<'i>(pair: &Pair<'i, Rule>) -> Vec<Pair<'i, Rule>> {
    pair.clone().into_inner().collect()
}

/// The first inner pair with this rule.
pub(crate) fn child<'i>(pair: &Pair<'i, Rule>, rule: Rule) -> Option<Pair<'i, Rule>> {
    pair.clone().into_inner().find(|p| p.as_rule() == rule)
}

/// Whether `text` may hold a file import: `import` followed, after whitespace, by a string or
/// by a comment. Without one, reading the file's imports needs no parse (most files import only
/// `std` modules, if anything).
fn may_import_a_file(text: &str) -> bool {
    text.match_indices("import").any(|(at, word)| {
        let after = text.get(at + word.len()..).unwrap_or_default();
        // Every character `WHITESPACE` skips is one of these.
        let after = after.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}');
        after.starts_with(['"', '/'])
    })
}

/// The paths of a file's `import "…"` items, as written. Cheap: only chunks that start with
/// `import` are parsed, so the CLI can find a program's files without parsing them twice.
pub fn file_import_paths(text: &str) -> Vec<String> {
    if !may_import_a_file(text) {
        return Vec::new();
    }
    let (chunks, _) = chunks::split(text);
    let mut paths = Vec::new();
    for chunk in chunks.iter().filter(|c| c.has_tokens) {
        let Some(chunk_text) = text.get(chunk.start..chunk.end) else {
            continue;
        };
        // A chunk starts at its keyword, except the first, which keeps the file's leading
        // comments: look for the word rather than a prefix.
        if !chunk_text.contains("import") {
            continue;
        }
        let mut scratch = Vec::new();
        let mut broken = Vec::new();
        let mut repairs = Vec::new();
        let mut lower = Lower {
            file: FileId(0),
            base: chunk.start,
            text: chunk_text,
            diagnostics: &mut scratch,
            broken: &mut broken,
            truncated: chunk.truncated,
            repairs: &mut repairs,
        };
        let Ok(pairs) = TenxParser::parse(Rule::item_chunk, chunk_text) else {
            continue;
        };
        for pair in pairs
            .flat_map(Pair::into_inner)
            .filter(|p| p.as_rule() == Rule::import_decl)
        {
            if let Some(crate::ast::Import {
                target: crate::ast::ImportTarget::File { path, .. },
                ..
            }) = lower.import(pair)
            {
                paths.push(path);
            }
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::file_import_paths;

    #[test]
    fn file_imports_are_found_however_they_are_spaced() {
        let text = "import std.approval.yes_no\n\
                    tool t {\n  description = \"import data\"\n}\n\
                    import \"a.tenx\"\n\
                    import /* the billing part */ \"b.tenx\"\n\
                    import\u{FEFF}\"c.tenx\"\n\
                    import\n  // next line\n  \"d.tenx\"\n";
        assert_eq!(file_import_paths(text), ["a.tenx", "b.tenx", "c.tenx", "d.tenx"]);
        assert!(file_import_paths("import std.validators.*\ntool t { description = \"import\" }\n").is_empty());
        assert!(file_import_paths("").is_empty());
    }
}
