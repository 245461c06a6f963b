//! What hover shows: a declaration's signature and description, a block field's meaning, and a
//! diagnostic code's explanation. Markdown text.

use super::fields::Block;
use super::text;
use crate::ast::{Expr, ToolSelector};
use crate::resolve::{DeclRef, Program, Symbol};
use tenx_diagnostics::{Code, SourceSet, Span};

/// The hover text of a declaration: its signature as written, what it says it does, and where
/// it is declared.
pub fn declaration(program: &Program, sources: &SourceSet, symbol: &Symbol) -> String {
    let (span, about) = describe(program, symbol.decl);
    let source = sources.get(symbol.file);
    let written = source.map_or("", |s| s.slice(span));
    let mut out = format!("```tenx\n{}\n```\n", signature(written));
    if let Some(about) = about.filter(|a| !a.is_empty()) {
        out.push('\n');
        out.push_str(&about);
        out.push('\n');
    }
    if let Some(source) = source {
        let at = source.line_col(symbol.span.start as usize);
        out.push_str(&format!(
            "\n{} declared in `{}`, line {}\n",
            capitalised(symbol.kind().with_article()),
            source.name,
            at.line
        ));
    }
    out
}

fn capitalised(text: String) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

fn string(expr: Option<&Expr>) -> Option<String> {
    expr.and_then(Expr::as_str).map(str::to_string)
}

fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The declaration's whole span and what it says about itself.
fn describe(program: &Program, decl: DeclRef) -> (Span, Option<String>) {
    match decl {
        DeclRef::Tag(id) => program
            .tags
            .get(id)
            .described(|t| (t.decl.span, t.decl.description.clone())),
        DeclRef::Schema(id) => program.schemas.get(id).described(|s| (s.decl.span, None)),
        DeclRef::Model(id) => program.models.get(id).described(|m| {
            let provider = m.decl.provider.as_ref().map(|p| format!("Provider `{}`", p.name));
            let name = string(m.decl.model_name.as_ref()).map(|n| format!("model `{n}`"));
            (
                m.decl.span,
                Some([provider, name].into_iter().flatten().collect::<Vec<_>>().join(", ")),
            )
        }),
        DeclRef::Tool(id) => program.tools.get(id).described(|t| {
            let t = &t.decl;
            let mut about = string(t.description.as_ref()).unwrap_or_default();
            let run = t.run.as_ref().map_or("", |(r, _)| r.source());
            about.push_str(&format!("\n\nRisk `{}`, runs `{run}`", t.risk_level().as_str()));
            if !t.tags.is_empty() {
                about.push_str(&format!(", tags {}", names(t.tags.iter().map(|i| i.name.as_str()))));
            }
            if t.approval.is_some() {
                about.push_str(", needs an approval");
            }
            (t.span, Some(about))
        }),
        DeclRef::Agent(id) => program.agents.get(id).described(|a| {
            let a = &a.decl;
            let mut parts = Vec::new();
            if let Some(model) = &a.model {
                parts.push(format!("Model `{}`", model.name));
            }
            let tools: Vec<String> = a
                .tools
                .iter()
                .map(|s| match s {
                    ToolSelector::Named(t) => format!("`{}`", t.name),
                    ToolSelector::Tagged { tags, .. } => {
                        format!(
                            "tagged({})",
                            tags.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                        )
                    }
                })
                .collect();
            if !tools.is_empty() {
                parts.push(format!("tools {}", tools.join(", ")));
            }
            if !a.handoffs.is_empty() {
                parts.push(format!(
                    "hands off to {}",
                    names(a.handoffs.iter().map(|h| h.name.as_str()))
                ));
            }
            (a.span, Some(parts.join("; ")))
        }),
        DeclRef::Validator(id) => program
            .validators
            .get(id)
            .described(|v| (v.decl.span, string(v.decl.description.as_ref()))),
        DeclRef::Interrupt(id) => program.interrupts.get(id).described(|i| {
            (
                i.decl.span,
                string(i.decl.message.as_ref()).map(|m| format!("Asks: {m}")),
            )
        }),
        DeclRef::Graph(id) => program.graphs.get(id).described(|g| {
            let g = &g.decl;
            let entry = g
                .entry
                .as_ref()
                .map_or(String::new(), |e| format!("Starts at `{}`; ", e.name));
            (
                g.span,
                Some(format!(
                    "{entry}nodes {}",
                    names(g.nodes.iter().map(|n| n.name.as_str()))
                )),
            )
        }),
    }
}

trait OrDefault<T> {
    fn described(self, f: impl FnOnce(T) -> (Span, Option<String>)) -> (Span, Option<String>);
}

impl<T> OrDefault<T> for Option<T> {
    fn described(self, f: impl FnOnce(T) -> (Span, Option<String>)) -> (Span, Option<String>) {
        self.map_or((Span::default(), None), f)
    }
}

/// The head of a declaration as written: everything before the `{` that opens its body (the
/// whole text for a tag or schema), at most a dozen lines.
pub fn signature(written: &str) -> String {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut previous = ' ';
    let mut cut = written.len();
    for (i, c) in written.char_indices() {
        match c {
            '"' if previous != '\\' => in_string = !in_string,
            _ if in_string => {}
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            '{' if depth == 0 => {
                let before = written.get(..i).unwrap_or("").trim_end();
                if before.ends_with("->") || before.ends_with('=') {
                    depth += 1;
                } else {
                    cut = i;
                    break;
                }
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        previous = c;
    }
    let head = written.get(..cut).unwrap_or(written).trim_end();
    let lines: Vec<&str> = head.lines().collect();
    match lines.get(..12) {
        Some(first) if lines.len() > 12 => format!("{}\n…", first.join("\n")),
        _ => head.to_string(),
    }
}

/// The hover text of a block field written at `offset` (`risk = high` in a tool, `entry = …`
/// in a graph), when the word there is one.
pub fn field(text: &str, offset: usize) -> Option<String> {
    let (span, word) = text::word_at(text, offset)?;
    let after = text.get(span.end as usize..)?.trim_start();
    if !(after.starts_with('=') && !after.starts_with("==") || after.starts_with('{')) {
        return None;
    }
    let context = text::context(text, span.start as usize);
    let block = context.block()?;
    let keyword = block.head.first()?;
    let found = Block::from_keyword(keyword)?.field(word)?;
    Some(format!("**{}** (`{keyword}` field)\n\n{}", found.name, found.meaning))
}

/// The hover text of a diagnostic code: its name, summary and catalog page.
pub fn code(code: Code) -> String {
    format!(
        "**{code}** `{}`: {}\n\n---\n\n{}",
        code.name(),
        code.summary(),
        code.page()
    )
}

/// The code written at `offset` (`TENX0604` in a comment), when there is one.
pub fn code_at(text: &str, offset: usize) -> Option<Code> {
    let (_, word) = text::word_at(text, offset)?;
    word.starts_with("TENX").then(|| Code::parse(word)).flatten()
}
