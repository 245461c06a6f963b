//! Every place a program names one of its declarations: the declared names themselves and each
//! use of them (tags, models, tools, agents, handoffs, schemas, validators, interrupts, graph
//! nodes, edges, routes and forks, named types, and the last segment of `import std.m.name`). Read by
//! definition, references, hover and rename.

use crate::ast::{Ident, Param, SchemaRef, ToolSelector, TypeExpr};
use crate::resolve::{DeclKind, Program, Symbol};
use tenx_diagnostics::{FileId, SourceSet, Span};

/// One place a declaration is named.
#[derive(Debug, Clone, Copy)]
pub struct Occurrence {
    /// The file the name is written in.
    pub file: FileId,
    /// The name as written.
    pub span: Span,
    /// The declaration it names.
    pub target: Symbol,
    /// Whether this is the declaration's own name.
    pub is_declaration: bool,
}

const NODE_KINDS: &[DeclKind] = &[DeclKind::Agent, DeclKind::Tool, DeclKind::Interrupt, DeclKind::Graph];

struct Walk<'a> {
    program: &'a Program,
    out: Vec<Occurrence>,
}

impl Walk<'_> {
    fn name(&mut self, file: FileId, ident: &Ident, kinds: &[DeclKind]) {
        if let Some(target) = self.program.lookup_as(&ident.name, kinds) {
            self.out.push(Occurrence {
                file,
                span: ident.span,
                target: *target,
                is_declaration: false,
            });
        }
    }

    fn ty(&mut self, file: FileId, ty: &TypeExpr) {
        let mut next = Some(ty);
        while let Some(TypeExpr::Named { name, generic, .. }) = next {
            self.name(file, name, &[DeclKind::Schema]);
            next = generic.as_deref();
        }
    }

    fn params<'p>(&mut self, file: FileId, params: impl IntoIterator<Item = &'p Param>) {
        for param in params {
            self.ty(file, &param.ty);
        }
    }

    fn schema_ref(&mut self, file: FileId, schema: Option<&SchemaRef>) {
        if let Some(SchemaRef::Named(name)) = schema {
            self.name(file, name, &[DeclKind::Schema]);
        }
    }
}

/// Every occurrence of a declared name in the program, declarations first. `sources` supplies
/// the text of `import std.…` lines.
pub fn occurrences(program: &Program, sources: &SourceSet) -> Vec<Occurrence> {
    let mut walk = Walk {
        program,
        out: Vec::new(),
    };
    for symbol in program.symbols.values().chain(program.shadowed.values().flatten()) {
        walk.out.push(Occurrence {
            file: symbol.file,
            span: symbol.span,
            target: *symbol,
            is_declaration: true,
        });
    }
    for schema in &program.schemas {
        walk.ty(schema.file, &schema.decl.ty);
    }
    for tool in &program.tools {
        let (file, t) = (tool.file, &tool.decl);
        for tag in &t.tags {
            walk.name(file, tag, &[DeclKind::Tag]);
        }
        walk.params(file, t.params.iter().flatten());
        if let Some(result) = &t.result {
            walk.ty(file, result);
        }
        walk.schema_ref(file, t.approval.as_ref().and_then(|a| a.response.as_ref()));
    }
    for agent in &program.agents {
        let (file, a) = (agent.file, &agent.decl);
        if let Some(model) = &a.model {
            walk.name(file, model, &[DeclKind::Model]);
        }
        for selector in &a.tools {
            match selector {
                ToolSelector::Named(tool) => walk.name(file, tool, &[DeclKind::Tool]),
                ToolSelector::Tagged { tags, .. } => {
                    for tag in tags {
                        walk.name(file, tag, &[DeclKind::Tag]);
                    }
                }
            }
        }
        for target in &a.handoffs {
            walk.name(file, target, &[DeclKind::Agent]);
        }
        for payload in &a.payloads {
            walk.params(file, &payload.params);
        }
        for used in &a.agent_tools {
            walk.name(file, &used.agent, &[DeclKind::Agent]);
            walk.params(file, used.params.iter().flatten());
        }
        walk.schema_ref(file, a.output.as_ref());
        for use_ in &a.guard {
            walk.name(file, &use_.name, &[DeclKind::Validator]);
        }
    }
    for validator in &program.validators {
        walk.params(validator.file, validator.decl.params.iter().flatten());
    }
    for interrupt in &program.interrupts {
        let (file, i) = (interrupt.file, &interrupt.decl);
        walk.schema_ref(file, i.response.as_ref());
        for tool in &i.approves {
            walk.name(file, tool, &[DeclKind::Tool]);
        }
    }
    for graph in &program.graphs {
        let (file, g) = (graph.file, &graph.decl);
        let nodes = g
            .entry
            .iter()
            .chain(&g.nodes)
            .chain(&g.entries)
            .chain(&g.resume)
            .chain(g.edges.iter().flat_map(|e| [&e.from, &e.to]))
            .chain(
                g.routes
                    .iter()
                    .flat_map(|r| std::iter::once(&r.from).chain(r.arms.iter().map(|a| &a.target))),
            )
            .chain(g.results.iter().map(|r| &r.node))
            .chain(g.answers.iter().map(|a| &a.node))
            .chain(g.visits.iter().flat_map(|v| [&v.node, &v.exit]))
            .chain(g.on_error.iter().flat_map(|e| [&e.node, &e.target]))
            .chain(g.retry.iter().map(|r| &r.node))
            .chain(g.subgraphs.iter().map(|s| &s.node))
            .chain(
                g.forks
                    .iter()
                    .flat_map(|f| std::iter::once(&f.from).chain(&f.branches).chain(&f.join)),
            )
            .chain(g.reduce.iter().flat_map(|r| r.order.iter().flatten()));
        for node in nodes {
            walk.name(file, node, NODE_KINDS);
        }
        for use_ in &g.validate {
            walk.name(file, &use_.name, &[DeclKind::Validator]);
        }
        walk.params(file, &g.state);
    }
    for (file, source) in sources.iter() {
        for (span, name) in std_import_names(&source.text) {
            if let Some(target) = program.lookup(name)
                && program.is_stdlib(target.decl)
            {
                walk.out.push(Occurrence {
                    file,
                    span,
                    target: *target,
                    is_declaration: false,
                });
            }
        }
    }
    walk.out
}

/// The last segment of each `import std.module.name` line, with its span.
pub fn std_import_names(text: &str) -> Vec<(Span, &str)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(rest) = trimmed.strip_prefix("import") {
            let path = rest.trim_start();
            let path_at = offset + indent + "import".len() + (rest.len() - path.len());
            let end = path
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(path.len());
            let written = path.get(..end).unwrap_or("");
            if written.starts_with("std.")
                && let Some(dot) = written.rfind('.')
                && let Some(name) = written.get(dot + 1..)
                && !name.is_empty()
            {
                let start = path_at + dot + 1;
                out.push((Span::new(start, start + name.len()), name));
            }
        }
        offset += line.len();
    }
    out
}
