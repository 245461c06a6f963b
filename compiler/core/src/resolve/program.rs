//! The resolved program: every visible declaration, grouped by kind, and one namespace of
//! symbols over them.

use super::imports::LoadedModule;
use crate::ast::{self, Ident, Item};
use crate::ids::{DeclId, IdVec};
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, FileId, Span};

/// The kinds of declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeclKind {
    /// `tag`
    Tag,
    /// `schema`
    Schema,
    /// `model`
    Model,
    /// `tool`
    Tool,
    /// `agent`
    Agent,
    /// `validator`
    Validator,
    /// `interrupt`
    Interrupt,
    /// `graph`
    Graph,
}

impl DeclKind {
    /// `tool`, `agent`, …
    pub fn as_str(self) -> &'static str {
        match self {
            DeclKind::Tag => "tag",
            DeclKind::Schema => "schema",
            DeclKind::Model => "model",
            DeclKind::Tool => "tool",
            DeclKind::Agent => "agent",
            DeclKind::Validator => "validator",
            DeclKind::Interrupt => "interrupt",
            DeclKind::Graph => "graph",
        }
    }

    /// `a tool`, `an agent`, …
    pub fn with_article(self) -> String {
        let word = self.as_str();
        if word.starts_with(['a', 'i']) {
            format!("an {word}")
        } else {
            format!("a {word}")
        }
    }
}

/// The id of a `tag` declaration.
pub type TagId = DeclId<ast::TagDecl>;
/// The id of a `schema` declaration.
pub type SchemaId = DeclId<ast::SchemaDecl>;
/// The id of a `model` declaration.
pub type ModelId = DeclId<ast::ModelDecl>;
/// The id of a `tool` declaration.
pub type ToolId = DeclId<ast::ToolDecl>;
/// The id of an `agent` declaration.
pub type AgentId = DeclId<ast::AgentDecl>;
/// The id of a `validator` declaration.
pub type ValidatorId = DeclId<ast::ValidatorDecl>;
/// The id of an `interrupt` declaration.
pub type InterruptId = DeclId<ast::InterruptDecl>;
/// The id of a `graph` declaration.
pub type GraphId = DeclId<ast::GraphDecl>;

/// The declarations of one kind, indexed by their id.
pub type Decls<T> = IdVec<DeclId<T>, Located<T>>;

/// A declaration of any kind, by its typed id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeclRef {
    /// `tag`
    Tag(TagId),
    /// `schema`
    Schema(SchemaId),
    /// `model`
    Model(ModelId),
    /// `tool`
    Tool(ToolId),
    /// `agent`
    Agent(AgentId),
    /// `validator`
    Validator(ValidatorId),
    /// `interrupt`
    Interrupt(InterruptId),
    /// `graph`
    Graph(GraphId),
}

impl DeclRef {
    /// Its kind.
    pub fn kind(self) -> DeclKind {
        match self {
            DeclRef::Tag(_) => DeclKind::Tag,
            DeclRef::Schema(_) => DeclKind::Schema,
            DeclRef::Model(_) => DeclKind::Model,
            DeclRef::Tool(_) => DeclKind::Tool,
            DeclRef::Agent(_) => DeclKind::Agent,
            DeclRef::Validator(_) => DeclKind::Validator,
            DeclRef::Interrupt(_) => DeclKind::Interrupt,
            DeclRef::Graph(_) => DeclKind::Graph,
        }
    }

    /// The schema, when it is one.
    pub fn schema(self) -> Option<SchemaId> {
        match self {
            DeclRef::Schema(id) => Some(id),
            _ => None,
        }
    }

    /// The tool, when it is one.
    pub fn tool(self) -> Option<ToolId> {
        match self {
            DeclRef::Tool(id) => Some(id),
            _ => None,
        }
    }

    /// The agent, when it is one.
    pub fn agent(self) -> Option<AgentId> {
        match self {
            DeclRef::Agent(id) => Some(id),
            _ => None,
        }
    }

    /// The interrupt, when it is one.
    pub fn interrupt(self) -> Option<InterruptId> {
        match self {
            DeclRef::Interrupt(id) => Some(id),
            _ => None,
        }
    }
}

/// A declaration and where it comes from.
#[derive(Debug, Clone)]
pub struct Located<T> {
    /// The file that declares it.
    pub file: FileId,
    /// Whether it comes from the stdlib.
    pub stdlib: bool,
    /// The declaration.
    pub decl: T,
}

/// An entry in the namespace.
#[derive(Debug, Clone, Copy)]
pub struct Symbol {
    /// The declaration, by its id in the program's collection of that kind.
    pub decl: DeclRef,
    /// The declaring file.
    pub file: FileId,
    /// The declared name's span.
    pub span: Span,
}

impl Symbol {
    /// What kind of declaration it is.
    pub fn kind(&self) -> DeclKind {
        self.decl.kind()
    }
}

/// Everything a program declares or imports.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// The file compiled.
    pub root: FileId,
    /// `tag` declarations.
    pub tags: Decls<ast::TagDecl>,
    /// `schema` declarations.
    pub schemas: Decls<ast::SchemaDecl>,
    /// `model` declarations.
    pub models: Decls<ast::ModelDecl>,
    /// `tool` declarations.
    pub tools: Decls<ast::ToolDecl>,
    /// `agent` declarations.
    pub agents: Decls<ast::AgentDecl>,
    /// `validator` declarations.
    pub validators: Decls<ast::ValidatorDecl>,
    /// `interrupt` declarations.
    pub interrupts: Decls<ast::InterruptDecl>,
    /// `graph` declarations.
    pub graphs: Decls<ast::GraphDecl>,
    /// The root file's `test` blocks, in source order.
    pub tests: Vec<Located<ast::TestDecl>>,
    /// The namespace: name → declaration.
    pub symbols: BTreeMap<String, Symbol>,
    /// Names declared by items that could not be parsed (their syntax error is reported). A
    /// use of such a name is not reported as unknown: see [`Program::is_broken`].
    pub broken: BTreeSet<String>,
    /// Whether a file import could not be found: then any unknown name may be one of its
    /// declarations, and none is reported (the import is).
    pub missing_file: bool,
    /// Declarations that lost their name to an earlier one (reported as duplicates), by name.
    /// [`Program::lookup_as`] still finds them by kind, so a use of the second declaration is
    /// not reported as a name of the wrong kind as well.
    pub shadowed: BTreeMap<String, Vec<Symbol>>,
}

impl Program {
    pub(crate) fn build(root: FileId, mut modules: Vec<LoadedModule>, diagnostics: &mut Vec<Diagnostic>) -> Program {
        modules.sort_by_key(|m| (!m.stdlib, m.module.file != root, m.module.file));
        let mut program = Program {
            root,
            ..Program::default()
        };
        for loaded in modules {
            let file = loaded.module.file;
            let stdlib = loaded.stdlib;
            program.broken.extend(loaded.broken);
            program.missing_file |= loaded.missing_file;
            for item in loaded.module.items {
                // Tests run from the file they are written in: an imported file's tests are not
                // the importer's.
                let item = match item {
                    Item::Test(test) => {
                        if file == root && !stdlib {
                            program.tests.push(Located {
                                file,
                                stdlib,
                                decl: test,
                            });
                        }
                        continue;
                    }
                    other => other,
                };
                let Some(name) = ast::item_name(&item).cloned() else {
                    continue;
                };
                if let Some(selected) = &loaded.selected
                    && !selected.contains(&name.name)
                {
                    continue;
                }
                if name.name.is_empty() {
                    continue;
                }
                let Some(decl) = program.push(file, stdlib, item) else {
                    continue;
                };
                program.declare(
                    &name,
                    Symbol {
                        decl,
                        file,
                        span: name.span,
                    },
                    diagnostics,
                );
            }
        }
        program
    }

    /// Adds a declaration; `None` for imports and tests, which declare no name.
    fn push(&mut self, file: FileId, stdlib: bool, item: Item) -> Option<DeclRef> {
        fn at<T>(file: FileId, stdlib: bool, decl: T) -> Located<T> {
            Located { file, stdlib, decl }
        }
        Some(match item {
            Item::Tag(d) => DeclRef::Tag(self.tags.push(at(file, stdlib, d))),
            Item::Schema(d) => DeclRef::Schema(self.schemas.push(at(file, stdlib, d))),
            Item::Model(d) => DeclRef::Model(self.models.push(at(file, stdlib, d))),
            Item::Tool(d) => DeclRef::Tool(self.tools.push(at(file, stdlib, d))),
            Item::Agent(d) => DeclRef::Agent(self.agents.push(at(file, stdlib, d))),
            Item::Validator(d) => DeclRef::Validator(self.validators.push(at(file, stdlib, d))),
            Item::Interrupt(d) => DeclRef::Interrupt(self.interrupts.push(at(file, stdlib, d))),
            Item::Graph(d) => DeclRef::Graph(self.graphs.push(at(file, stdlib, d))),
            Item::Import(_) | Item::Test(_) => return None,
        })
    }

    /// Whether a declaration comes from the standard library.
    pub fn is_stdlib(&self, decl: DeclRef) -> bool {
        match decl {
            DeclRef::Tag(id) => self.tags.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Schema(id) => self.schemas.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Model(id) => self.models.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Tool(id) => self.tools.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Agent(id) => self.agents.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Validator(id) => self.validators.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Interrupt(id) => self.interrupts.get(id).is_some_and(|l| l.stdlib),
            DeclRef::Graph(id) => self.graphs.get(id).is_some_and(|l| l.stdlib),
        }
    }

    fn declare(&mut self, name: &Ident, symbol: Symbol, diagnostics: &mut Vec<Diagnostic>) {
        let first_from_stdlib = self
            .symbols
            .get(&name.name)
            .is_some_and(|first| self.is_stdlib(first.decl));
        match self.symbols.get(&name.name) {
            Some(first) => {
                self.shadowed.entry(name.name.clone()).or_default().push(symbol);
                diagnostics.push(
                Diagnostic::new(
                    Code::TENX0103,
                    format!("the name `{}` is declared more than once", name.name),
                    symbol.file,
                    name.span,
                )
                .label(format!("{} `{}` declared again here", symbol.kind().as_str(), name.name))
                .secondary(first.file, first.span, format!("first declared here as {}", first.kind().with_article()))
                .help(if first_from_stdlib {
                    format!("the standard library's `{}` is imported: rename yours, or import only the declarations you use", name.name)
                } else {
                    "all declarations of a program share one namespace: rename one of them".to_string()
                }),
                );
            }
            None => {
                self.symbols.insert(name.name.clone(), symbol);
            }
        }
    }

    /// Whether `name` is undeclared but may be meant by something whose error is already
    /// reported (an item that could not be parsed, a failed import): a later stage should not
    /// report it as unknown.
    pub fn is_broken(&self, name: &str) -> bool {
        !self.symbols.contains_key(name) && (self.missing_file || self.broken.contains(name))
    }

    /// The declaration named `name` whose kind is one of `kinds`: the symbol, or else a
    /// declaration of that kind that the name was declared for again (a duplicate, already
    /// reported). Use it where only some kinds make sense, so one duplicate costs one error.
    pub fn lookup_as(&self, name: &str, kinds: &[DeclKind]) -> Option<&Symbol> {
        self.symbols
            .get(name)
            .filter(|s| kinds.contains(&s.kind()))
            .or_else(|| self.shadowed.get(name)?.iter().find(|s| kinds.contains(&s.kind())))
    }

    /// The symbol named `name`.
    pub fn lookup(&self, name: &str) -> Option<&Symbol> {
        self.symbols.get(name)
    }

    /// The names of every declaration of `kind`.
    pub fn names_of(&self, kind: DeclKind) -> impl Iterator<Item = &str> {
        self.symbols
            .iter()
            .filter(move |(_, s)| s.kind() == kind)
            .map(|(n, _)| n.as_str())
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Located<ast::ToolDecl>> {
        self.symbols
            .get(name)
            .and_then(|s| s.decl.tool())
            .and_then(|id| self.tools.get(id))
    }

    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&Located<ast::AgentDecl>> {
        self.symbols
            .get(name)
            .and_then(|s| s.decl.agent())
            .and_then(|id| self.agents.get(id))
    }

    /// The schema named `name`.
    pub fn schema(&self, name: &str) -> Option<&Located<ast::SchemaDecl>> {
        self.symbols
            .get(name)
            .and_then(|s| s.decl.schema())
            .and_then(|id| self.schemas.get(id))
    }

    /// The interrupt named `name`.
    pub fn interrupt(&self, name: &str) -> Option<&Located<ast::InterruptDecl>> {
        self.symbols
            .get(name)
            .and_then(|s| s.decl.interrupt())
            .and_then(|id| self.interrupts.get(id))
    }

    /// The validator named `name`.
    pub fn validator(&self, name: &str) -> Option<&Located<ast::ValidatorDecl>> {
        self.symbols.get(name).and_then(|s| match s.decl {
            DeclRef::Validator(id) => self.validators.get(id),
            _ => None,
        })
    }

    /// The model named `name`.
    pub fn model(&self, name: &str) -> Option<&Located<ast::ModelDecl>> {
        self.symbols.get(name).and_then(|s| match s.decl {
            DeclRef::Model(id) => self.models.get(id),
            _ => None,
        })
    }

    /// Whether a tag is declared.
    pub fn has_tag(&self, name: &str) -> bool {
        self.symbols.get(name).is_some_and(|s| s.kind() == DeclKind::Tag)
    }

    /// Resolves a use of a name that must be one of `expected`; reports an unknown name
    /// (`TENX0101`, or `TENX0109` for tags) or a name of the wrong kind (`TENX0102`).
    pub fn expect(
        &self,
        ident: &Ident,
        file: FileId,
        expected: &[DeclKind],
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Symbol> {
        let wanted = expected.iter().map(|k| k.as_str()).collect::<Vec<_>>();
        let wanted_text = crate::syntax::errors::join_or(&wanted);
        if let Some(symbol) = self.lookup_as(&ident.name, expected) {
            return Some(*symbol);
        }
        match self.symbols.get(&ident.name) {
            Some(symbol) => {
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0102,
                        format!(
                            "`{}` is {}, not {}",
                            ident.name,
                            symbol.kind().with_article(),
                            article(&wanted_text)
                        ),
                        file,
                        ident.span,
                    )
                    .label(format!("expected {}", article(&wanted_text)))
                    .secondary(
                        symbol.file,
                        symbol.span,
                        format!("`{}` is declared here", ident.name),
                    ),
                );
                None
            }
            None if self.is_broken(&ident.name) => None,
            None => {
                let candidates = expected.iter().flat_map(|k| self.names_of(*k));
                let help = unknown_name_help(&ident.name, expected, candidates);
                let is_tag = expected == [DeclKind::Tag];
                let (code, help) = if is_tag {
                    (
                        Code::TENX0109,
                        help.or_else(|| Some(format!("declare it: `tag {} \"what it means\"`", ident.name))),
                    )
                } else {
                    (Code::TENX0101, help)
                };
                diagnostics.push(
                    Diagnostic::new(
                        code,
                        format!("unknown {wanted_text} `{}`", ident.name),
                        file,
                        ident.span,
                    )
                    .label(format!("no {wanted_text} has this name"))
                    .maybe_help(help),
                );
                None
            }
        }
    }
}

/// The kind of declaration an item is (`None` for imports and tests).
pub(crate) fn kind_of(item: &Item) -> Option<DeclKind> {
    Some(match item {
        Item::Tag(_) => DeclKind::Tag,
        Item::Schema(_) => DeclKind::Schema,
        Item::Model(_) => DeclKind::Model,
        Item::Tool(_) => DeclKind::Tool,
        Item::Agent(_) => DeclKind::Agent,
        Item::Validator(_) => DeclKind::Validator,
        Item::Interrupt(_) => DeclKind::Interrupt,
        Item::Graph(_) => DeclKind::Graph,
        Item::Import(_) | Item::Test(_) => return None,
    })
}

/// "did you mean `x`?" for a name close to one of `candidates`, else "add `import std.m.name`"
/// when the standard library declares it.
pub(crate) fn unknown_name_help<'a>(
    name: &str,
    kinds: &[DeclKind],
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    if let Some(module) = super::imports::stdlib_home(name, kinds) {
        return Some(format!(
            "it is in the standard library: add `import std.{module}.{name}`"
        ));
    }
    let candidates: Vec<&str> = candidates.into_iter().collect();
    crate::suggest::did_you_mean(name, candidates.iter()).map(|s| format!("did you mean `{s}`?"))
}

fn article(word: &str) -> String {
    if word.starts_with(['a', 'i']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
}
