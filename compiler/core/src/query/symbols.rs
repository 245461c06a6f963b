//! A file's outline: its items in source order, each with the fields that structure it (a
//! tool's parameters, a graph's state fields and routes). Read from the file alone.

use crate::ast::{Item, Param};
use tenx_diagnostics::{FileId, Span};

/// What an outline entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutlineKind {
    /// An `import`.
    Import,
    /// A declaration of this kind (`tool`, `graph`, …).
    Declaration(crate::resolve::DeclKind),
    /// A `test` block.
    Test,
    /// A parameter or state field.
    Field,
    /// A route of a graph.
    Route,
}

/// One entry of the outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: OutlineKind,
    /// The whole entry.
    pub span: Span,
    /// Its name as written (the whole entry for imports and tests).
    pub name_span: Span,
    /// Its parts.
    pub children: Vec<Outline>,
}

fn fields<'a>(params: impl IntoIterator<Item = &'a Param>) -> Vec<Outline> {
    params
        .into_iter()
        .map(|p| Outline {
            name: p.name.name.clone(),
            kind: OutlineKind::Field,
            span: p.span.to(p.name.span),
            name_span: p.name.span,
            children: Vec::new(),
        })
        .collect()
}

/// The outline of `text`.
pub fn outline(file: FileId, text: &str) -> Vec<Outline> {
    let (module, _) = crate::syntax::parse_file(file, text);
    let mut out = Vec::new();
    for item in &module.items {
        let entry = match item {
            Item::Import(import) => Outline {
                name: text.get(import.span.range()).unwrap_or("import").trim().to_string(),
                kind: OutlineKind::Import,
                span: import.span,
                name_span: import.span,
                children: Vec::new(),
            },
            Item::Test(test) => Outline {
                name: test.name.clone(),
                kind: OutlineKind::Test,
                span: test.span,
                name_span: test.span,
                children: Vec::new(),
            },
            _ => {
                let (Some(name), Some(kind)) = (crate::ast::item_name(item), crate::resolve::kind_of(item)) else {
                    continue;
                };
                let (span, children) = match item {
                    Item::Tag(d) => (d.span, Vec::new()),
                    Item::Schema(d) => (d.span, Vec::new()),
                    Item::Model(d) => (d.span, Vec::new()),
                    Item::Tool(d) => (d.span, fields(d.params.iter().flatten())),
                    Item::Agent(d) => (d.span, Vec::new()),
                    Item::Validator(d) => (d.span, fields(d.params.iter().flatten())),
                    Item::Interrupt(d) => (d.span, Vec::new()),
                    Item::Graph(d) => {
                        let mut children = fields(&d.state);
                        children.extend(d.routes.iter().map(|r| Outline {
                            name: format!("route {}", r.from.name),
                            kind: OutlineKind::Route,
                            span: r.span.to(r.arms.last().map_or(r.span, |a| a.span)),
                            name_span: r.from.span,
                            children: Vec::new(),
                        }));
                        (d.span, children)
                    }
                    Item::Import(_) | Item::Test(_) => continue,
                };
                Outline {
                    name: name.name.clone(),
                    kind: OutlineKind::Declaration(kind),
                    span: span.to(name.span),
                    name_span: name.span,
                    children,
                }
            }
        };
        out.push(entry);
    }
    out
}
