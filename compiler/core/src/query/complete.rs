//! What may be written at a place: the names a field takes (node names in graphs, tools and
//! tags in `tools =`, agents in `handoffs =`, schemas where a type goes), the fields of the block
//! the cursor is in, stdlib modules and their declarations after `import`, and item keywords
//! at the top level. Read from the text around the cursor (see [`super::text`]), so that it
//! works while the line is half written, and from the last checked program for the names.

use super::fields::Block;
use super::text::{self, Open};
use crate::resolve::{DeclKind, Program};

/// What a completion candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    /// A declaration of this kind.
    Declaration(DeclKind),
    /// A block field.
    Field,
    /// A keyword or fixed word (`END`, `tagged`, `high`).
    Keyword,
    /// A standard-library module.
    Module,
    /// A built-in type.
    Type,
}

/// One thing that may be written at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The text inserted.
    pub label: String,
    /// What it is.
    pub kind: CandidateKind,
    /// A short description shown beside it.
    pub detail: String,
}

const ITEM_KEYWORDS: &[&str] = &[
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
const NODE_KINDS: &[DeclKind] = &[DeclKind::Agent, DeclKind::Tool, DeclKind::Interrupt, DeclKind::Graph];

struct Out<'a> {
    program: &'a Program,
    list: Vec<Candidate>,
}

impl Out<'_> {
    fn decls(&mut self, kinds: &[DeclKind]) {
        for (name, symbol) in &self.program.symbols {
            if kinds.contains(&symbol.kind()) {
                self.list.push(Candidate {
                    label: name.clone(),
                    kind: CandidateKind::Declaration(symbol.kind()),
                    detail: symbol.kind().as_str().to_string(),
                });
            }
        }
    }

    fn words(&mut self, words: &[&str], kind: CandidateKind, detail: &str) {
        for word in words {
            self.list.push(Candidate {
                label: (*word).to_string(),
                kind,
                detail: detail.to_string(),
            });
        }
    }

    fn types(&mut self) {
        self.words(crate::resolve::BUILTIN_TYPES, CandidateKind::Type, "built-in type");
        self.decls(&[DeclKind::Schema]);
    }

    /// The nodes of the graph named `graph` and `END`; every agent, tool and interrupt when the
    /// graph is not known.
    fn graph_nodes(&mut self, graph: Option<&str>) {
        let found = graph.and_then(|name| self.program.graphs.iter().find(|g| g.decl.name.name == name));
        match found {
            Some(g) if !g.decl.nodes.is_empty() => {
                for node in &g.decl.nodes {
                    let kind = self.program.lookup(&node.name).map(|s| s.kind());
                    self.list.push(Candidate {
                        label: node.name.clone(),
                        kind: kind.map_or(CandidateKind::Keyword, CandidateKind::Declaration),
                        detail: format!("node of `{}`", g.decl.name.name),
                    });
                }
            }
            _ => self.decls(NODE_KINDS),
        }
        self.words(&["END"], CandidateKind::Keyword, "ends the run");
    }

    /// The value of `key = …`.
    fn value_of(&mut self, key: &str, graph: Option<&str>) {
        match key {
            "model" => self.decls(&[DeclKind::Model]),
            "tools" | "approves" => {
                self.decls(&[DeclKind::Tool]);
                if key == "tools" {
                    self.words(&["tagged"], CandidateKind::Keyword, "every tool with one of these tags");
                }
            }
            "tags" => self.decls(&[DeclKind::Tag]),
            "handoffs" | "agents" => self.decls(&[DeclKind::Agent]),
            "output" | "response" => self.decls(&[DeclKind::Schema]),
            "guard" | "validate" => self.decls(&[DeclKind::Validator]),
            "nodes" => self.decls(NODE_KINDS),
            "entry" | "entries" | "resume" => self.graph_nodes(graph),
            "risk" => self.words(
                &["low", "medium", "high", "prohibited"],
                CandidateKind::Keyword,
                "risk level",
            ),
            "provider" => self.words(
                &["openai", "anthropic", "scripted"],
                CandidateKind::Keyword,
                "model provider",
            ),
            _ => {}
        }
    }
}

/// The candidates at `offset` in `text`, given the last checked program of the file.
pub fn complete(program: &Program, text: &str, offset: usize) -> Vec<Candidate> {
    let context = text::context(text, offset);
    let mut out = Out {
        program,
        list: Vec::new(),
    };
    if context.in_literal {
        return out.list;
    }
    let line = text::line_before(text, offset);
    let trimmed = line.trim_start();
    let graph = context
        .item()
        .filter(|o| o.head.first().is_some_and(|w| w == "graph"))
        .and_then(|o| o.head.get(1))
        .map(String::as_str);
    if context.open.is_empty() {
        if let Some(rest) = trimmed.strip_prefix("import") {
            imports(&mut out, rest.trim_start());
        } else if !trimmed.contains(char::is_whitespace) {
            out.words(ITEM_KEYWORDS, CandidateKind::Keyword, "declaration");
        }
        return out.list;
    }
    let Some(inner) = context.open.last() else {
        return out.list;
    };
    match inner.bracket {
        '(' if inner.head.last().is_some_and(|w| w == "tagged") => out.decls(&[DeclKind::Tag]),
        '(' => {
            // A parameter list: a type goes after `name:`.
            let since = text.get(inner.at + 1..offset).unwrap_or("");
            let current = since.rsplit(',').next().unwrap_or("");
            if current.contains(':') {
                out.types();
            }
        }
        '[' => {
            if let Some(key) = key_of(inner) {
                out.value_of(key, graph);
            }
        }
        _ => in_block(&mut out, inner, trimmed, graph),
    }
    out.list
}

/// `key` of a bracket opened in `key = [`.
fn key_of(open: &Open) -> Option<&str> {
    let eq = open.head.iter().position(|w| w == "=")?;
    open.head.get(eq.checked_sub(1)?).map(String::as_str)
}

/// Inside `{ … }`: a field's value after `=`, a node after `->`, a type after `:`, else the
/// block's fields (and, in a graph, its nodes, which start edges and routes).
fn in_block(out: &mut Out<'_>, block: &Open, line: &str, graph: Option<&str>) {
    let head = block.head.first().map(String::as_str);
    if line.contains("->") || line.contains("=>") {
        out.graph_nodes(graph);
        return;
    }
    if let Some((key, _)) = line.split_once('=') {
        out.value_of(key.trim(), graph);
        return;
    }
    if line.contains(':') {
        out.types();
        return;
    }
    if line.contains(char::is_whitespace) {
        return;
    }
    match head {
        Some("route") => out.words(&["when", "else"], CandidateKind::Keyword, "route arm"),
        Some("state") => {}
        Some("graph") => {
            field_words(out, Block::Graph);
            out.words(&["route"], CandidateKind::Keyword, "conditional edges");
            out.graph_nodes(graph);
        }
        Some(word) => {
            if let Some(kind) = Block::from_keyword(word) {
                field_words(out, kind);
            }
            if word == "agent" {
                out.words(
                    &["handoffs"],
                    CandidateKind::Field,
                    "the agents this agent may hand off to",
                );
            }
        }
        None => {}
    }
}

fn field_words(out: &mut Out<'_>, block: Block) {
    for field in block.fields() {
        if field.name == "handoffs" {
            continue;
        }
        out.list.push(Candidate {
            label: field.name.to_string(),
            kind: CandidateKind::Field,
            detail: field.meaning.to_string(),
        });
    }
}

/// After `import`: `std.MODULE`, or a module's declarations after `std.MODULE.`.
fn imports(out: &mut Out<'_>, written: &str) {
    let path = written.strip_prefix("std.");
    match path.and_then(|p| p.split_once('.')) {
        Some((module, _)) => {
            let Some(module) = tenx_stdlib::module(module) else {
                return;
            };
            let (parsed, _) = crate::syntax::parse_file(tenx_diagnostics::FileId(0), module.source);
            for item in &parsed.items {
                let (Some(name), Some(kind)) = (crate::ast::item_name(item), crate::resolve::kind_of(item)) else {
                    continue;
                };
                out.list.push(Candidate {
                    label: name.name.clone(),
                    kind: CandidateKind::Declaration(kind),
                    detail: format!("{} in std.{}", kind.as_str(), module.name),
                });
            }
            out.words(&["*"], CandidateKind::Keyword, "every declaration of the module");
        }
        None => {
            for module in tenx_stdlib::MODULES {
                let label = if path.is_some() {
                    module.name.to_string()
                } else {
                    format!("std.{}", module.name)
                };
                out.list.push(Candidate {
                    label,
                    kind: CandidateKind::Module,
                    detail: "standard library module".to_string(),
                });
            }
        }
    }
}
