//! The syntax stage: source text → typed AST ([`crate::ast::Module`]) plus diagnostics.
//!
//! Parsing always produces something. The file is split into one chunk per top-level item
//! ([`chunks`]); each chunk is parsed by pest and lowered at once into the AST, so pest types
//! never leave this module. Bad lines inside blocks, stray text between items, missing `}` and
//! likely mistakes (`=>`, `key: value`) each become a diagnostic, and parsing carries on.

mod agent;
mod blocks;
pub mod chunks;
pub mod errors;
mod graph;
mod interrupt;
mod items;
mod model;
mod tool;
mod types;
mod validator;
mod values;

use crate::ast::{Ident, Item, Module};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};
use tenx_grammar::pest::Parser;
use tenx_grammar::pest::iterators::Pair;
use tenx_grammar::{Rule, TenxParser};

/// Parses one file. Never fails: problems are diagnostics, and every item that could be read is
/// in the module.
pub fn parse_file(file: FileId, text: &str) -> (Module, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
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
    for chunk in chunks.iter().filter(|c| c.has_tokens) {
        let Some(chunk_text) = text.get(chunk.start..chunk.end) else {
            continue;
        };
        if let Some(at) = chunk.too_deep_at {
            diagnostics.push(
                Diagnostic::new(
                    Code::TENX0005,
                    format!("brackets are nested more than {} levels deep", chunks::MAX_NESTING),
                    file,
                    Span::new(at, at + 1),
                )
                .label("too deep here")
                .help("flatten the value, or name parts of it with `schema` declarations"),
            );
            continue;
        }
        let mut lower = Lower {
            file,
            base: chunk.start,
            diagnostics: &mut diagnostics,
            truncated: chunk.truncated,
        };
        match TenxParser::parse(Rule::item_chunk, chunk_text) {
            Ok(pairs) => {
                for pair in pairs.flat_map(Pair::into_inner) {
                    match pair.as_rule() {
                        Rule::stray_text => lower.stray_text(&pair, chunk_text),
                        Rule::EOI => {}
                        _ => {
                            if let Some(item) = lower.item(pair) {
                                module.items.push(item);
                            }
                        }
                    }
                }
            }
            Err(error) => lower
                .diagnostics
                .push(errors::syntax_error(&error, chunk_text, chunk.start, file)),
        }
    }
    (module, diagnostics)
}

/// Lowering context for one chunk: pair spans are relative to `base`.
pub(crate) struct Lower<'d> {
    pub file: FileId,
    pub base: usize,
    pub diagnostics: &'d mut Vec<Diagnostic>,
    /// The chunk was cut at an unterminated `"""` or `/*` (already reported).
    pub truncated: bool,
}

impl Lower<'_> {
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

    /// Text that is not part of any item: explain why by parsing it as an item on its own.
    fn stray_text(&mut self, pair: &Pair<'_, Rule>, chunk_text: &str) {
        let span = self.span(pair);
        let text = pair.as_str();
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
            return;
        }
        let local = span.start as usize - self.base;
        match TenxParser::parse(Rule::item_strict, text) {
            Err(error) => {
                let mut d = errors::syntax_error(&error, text, span.start as usize, self.file);
                if local == 0 || error_at_start(&error) {
                    let word: String = text
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if let Some(keyword) = crate::suggest::did_you_mean(&word, chunks_keywords()) {
                        d = d.help(format!("did you mean `{keyword}`?"));
                    }
                }
                self.report(d);
            }
            Ok(_) => {
                // Cannot happen: the chunk would have parsed as an item. Report it plainly.
                let _ = chunk_text;
                let d = self
                    .diag(Code::TENX0001, "unexpected text", span)
                    .label("not part of any declaration");
                self.report(d);
            }
        }
    }
}

fn error_at_start(error: &tenx_grammar::pest::error::Error<Rule>) -> bool {
    matches!(error.location, tenx_grammar::pest::error::InputLocation::Pos(0))
}

fn chunks_keywords() -> &'static [&'static str] {
    &[
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
    ]
}

/// The inner pairs of a pair, as a vector (pest pairs are cheap to clone).
pub(crate) fn children<'i>(pair: &Pair<'i, Rule>) -> Vec<Pair<'i, Rule>> {
    pair.clone().into_inner().collect()
}

/// The first inner pair with this rule.
pub(crate) fn child<'i>(pair: &Pair<'i, Rule>, rule: Rule) -> Option<Pair<'i, Rule>> {
    pair.clone().into_inner().find(|p| p.as_rule() == rule)
}
