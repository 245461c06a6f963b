//! The answers to the editor's requests: hover, definition, references, completion, rename
//! (prepared and done), the outline, formatting and quick fixes. Each reads the last checked
//! program of the document (checked again after every edit, so it is the text as typed) and
//! asks the compiler core's queries; positions are converted at the edges.

use super::analysis::Analysis;
use super::convert;
use super::workspace::{Workspace, location};
use lsp_server::ErrorCode;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CompletionItem, CompletionParams,
    DocumentFormattingParams, DocumentSymbol, DocumentSymbolParams, GotoDefinitionParams, Hover, HoverContents,
    HoverParams, Location, MarkupContent, MarkupKind, Position, PrepareRenameResponse, Range, ReferenceParams,
    RenameParams, TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tenx_compiler::query::symbols::Outline;
use tenx_compiler::query::{complete, fixes, hover, rename, symbols};
use tenx_compiler::resolve::Symbol;
use tenx_diagnostics::{FileId, Span};

/// A request that cannot be answered, with the reason the editor shows.
#[derive(Debug)]
pub struct Failure {
    /// The JSON-RPC error code.
    pub code: i32,
    /// What went wrong.
    pub message: String,
}

impl Failure {
    fn request_failed(message: impl Into<String>) -> Self {
        Failure {
            code: ErrorCode::RequestFailed as i32,
            message: message.into(),
        }
    }
}

/// An answer, or why there is none.
pub type Answer<T> = Result<T, Failure>;

/// The program of a document and the document's file id in it.
fn document<'w>(workspace: &'w mut Workspace, uri: &Uri) -> Option<(&'w mut Analysis, FileId)> {
    let path = Workspace::path_of(uri)?;
    let analysis = workspace.analysis_mut(&path)?;
    let file = analysis.file_of(&path)?;
    Some((analysis, file))
}

/// The document's program and the file's id and offset at `position`.
fn place<'w>(workspace: &'w mut Workspace, uri: &Uri, position: Position) -> Option<(&'w mut Analysis, FileId, usize)> {
    let (analysis, file) = document(workspace, uri)?;
    let offset = analysis.lines.get(&file)?.offset(position)?;
    Some((analysis, file, offset))
}

fn markdown(value: String, range: Option<Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range,
    }
}

/// `textDocument/hover`: a declaration named there, a diagnostic code written there, or a
/// block field's meaning.
pub fn hover(workspace: &mut Workspace, params: &HoverParams) -> Answer<Option<Hover>> {
    let at = &params.text_document_position_params;
    let Some((analysis, file, offset)) = place(workspace, &at.text_document.uri, at.position) else {
        return Ok(None);
    };
    let named = analysis.with_index(|index| index.at(file, offset).map(|o| (o.span, o.target)));
    if let Some((span, target)) = named {
        let text = hover::declaration(&analysis.checked.program, &analysis.sources, &target);
        let range = analysis.lines.get(&file).map(|l| l.range(span));
        return Ok(Some(markdown(text, range)));
    }
    let text = analysis.text(file);
    if let Some(code) = hover::code_at(text, offset) {
        return Ok(Some(markdown(hover::code(code), None)));
    }
    Ok(hover::field(text, offset).map(|meaning| markdown(meaning, None)))
}

/// The declaration named at a position.
fn target_at(workspace: &mut Workspace, at: &TextDocumentPositionParams) -> Option<(PathBuf, Symbol, Location)> {
    let (analysis, file, offset) = place(workspace, &at.text_document.uri, at.position)?;
    let target = analysis.with_index(|index| index.definition(file, offset))?;
    let declared = location(analysis, target.file, target.span)?;
    let declaring = analysis.paths.get(&target.file).cloned().unwrap_or_default();
    Some((declaring, target, declared))
}

/// `textDocument/definition`: where the name is declared (the stdlib's files included).
pub fn definition(workspace: &mut Workspace, params: &GotoDefinitionParams) -> Answer<Option<Location>> {
    Ok(target_at(workspace, &params.text_document_position_params).map(|(_, _, declared)| declared))
}

/// The same declaration in each program that reads its file: `(analysis root, symbol)`.
fn everywhere(workspace: &mut Workspace, declaring: &Path, target: &Symbol) -> Vec<(PathBuf, Symbol)> {
    if declaring.as_os_str().is_empty() {
        // A stdlib declaration: only the program asked knows its file.
        return Vec::new();
    }
    let mut found = Vec::new();
    for analysis in workspace.analyses.values_mut() {
        let Some(file) = analysis.file_of(declaring) else {
            continue;
        };
        let start = target.span.start as usize;
        if let Some(symbol) = analysis.with_index(|index| index.definition(file, start))
            && symbol.file == file
            && symbol.span == target.span
        {
            found.push((analysis.root.clone(), symbol));
        }
    }
    found
}

/// `textDocument/references`: every use in every program that reads the declaring file.
pub fn references(workspace: &mut Workspace, params: &ReferenceParams) -> Answer<Option<Vec<Location>>> {
    let at = &params.text_document_position;
    let Some((declaring, target, declared)) = target_at(workspace, at) else {
        return Ok(None);
    };
    let mut programs = everywhere(workspace, &declaring, &target);
    if programs.is_empty()
        && let Some(path) = Workspace::path_of(&at.text_document.uri)
        && let Some(analysis) = workspace.analysis_mut(&path)
    {
        programs.push((analysis.root.clone(), target));
    }
    let mut out: Vec<Location> = Vec::new();
    for (root, symbol) in programs {
        let Some(analysis) = workspace.analyses.get_mut(&root) else {
            continue;
        };
        let uses = analysis.with_index(|index| index.references(&symbol));
        for (file, span) in uses {
            if let Some(found) = location(analysis, file, span)
                && !out.contains(&found)
                && (params.context.include_declaration || found != declared)
            {
                out.push(found);
            }
        }
    }
    Ok(Some(out))
}

/// `textDocument/completion`: what may be written at the cursor.
pub fn completion(workspace: &mut Workspace, params: &CompletionParams) -> Answer<Option<Vec<CompletionItem>>> {
    let at = &params.text_document_position;
    let Some((analysis, file, offset)) = place(workspace, &at.text_document.uri, at.position) else {
        return Ok(None);
    };
    let items = complete::complete(&analysis.checked.program, analysis.text(file), offset)
        .into_iter()
        .map(|candidate| CompletionItem {
            label: candidate.label,
            kind: Some(convert::completion_kind(candidate.kind)),
            detail: (!candidate.detail.is_empty()).then_some(candidate.detail),
            ..CompletionItem::default()
        })
        .collect();
    Ok(Some(items))
}

/// `textDocument/prepareRename`: the name under the cursor, or why it cannot be renamed.
pub fn prepare_rename(
    workspace: &mut Workspace,
    params: &TextDocumentPositionParams,
) -> Answer<Option<PrepareRenameResponse>> {
    let Some((analysis, file, offset)) = place(workspace, &params.text_document.uri, params.position) else {
        return Ok(None);
    };
    let Some((span, target)) = analysis.with_index(|index| index.at(file, offset).map(|o| (o.span, o.target))) else {
        return Err(Failure::request_failed("no declared name here to rename"));
    };
    if !analysis.paths.contains_key(&target.file) {
        let name = analysis.sources.get(file).map_or("", |f| f.slice(span)).to_string();
        return Err(Failure::request_failed(rename::Refusal::Stdlib(name).to_string()));
    }
    let Some(lines) = analysis.lines.get(&file) else {
        return Ok(None);
    };
    let placeholder = analysis.text(file).get(span.range()).unwrap_or_default().to_string();
    Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: lines.range(span),
        placeholder,
    }))
}

/// `textDocument/rename`: the edits in every program that reads the declaring file, refused as
/// a whole when the new name collides in any of them.
#[expect(
    clippy::mutable_key_type,
    reason = "`Uri` caches its parsed parts in cells; its hash and equality are its text, which never changes"
)]
pub fn rename(workspace: &mut Workspace, params: &RenameParams) -> Answer<Option<WorkspaceEdit>> {
    let at = &params.text_document_position;
    let Some((declaring, target, _)) = target_at(workspace, at) else {
        return Err(Failure::request_failed("no declared name here to rename"));
    };
    let programs = everywhere(workspace, &declaring, &target);
    if programs.is_empty() {
        let name = Workspace::path_of(&at.text_document.uri)
            .and_then(|path| {
                let analysis = workspace.analysis_mut(&path)?;
                Some(analysis.sources.get(target.file)?.slice(target.span).to_string())
            })
            .unwrap_or_default();
        return Err(Failure::request_failed(rename::Refusal::Stdlib(name).to_string()));
    }
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for (root, symbol) in programs {
        let Some(analysis) = workspace.analyses.get_mut(&root) else {
            continue;
        };
        let edits = analysis
            .with_index(|index| rename::rename(index, &symbol, &params.new_name))
            .map_err(|refusal| Failure::request_failed(refusal.to_string()))?;
        for (file, span) in edits {
            let Some(found) = location(analysis, file, span) else {
                continue;
            };
            let edit = TextEdit::new(found.range, params.new_name.clone());
            let list = changes.entry(found.uri).or_default();
            if !list.contains(&edit) {
                list.push(edit);
            }
        }
    }
    Ok(Some(WorkspaceEdit::new(changes)))
}

fn outline_entry(entry: Outline, lines: &super::position::Lines) -> DocumentSymbol {
    #[expect(
        deprecated,
        reason = "`deprecated` is a required field of the protocol type; tags replace it"
    )]
    DocumentSymbol {
        name: entry.name,
        detail: None,
        kind: convert::symbol_kind(entry.kind),
        tags: None,
        deprecated: None,
        range: lines.range(entry.span),
        selection_range: lines.range(entry.name_span),
        children: (!entry.children.is_empty())
            .then(|| entry.children.into_iter().map(|c| outline_entry(c, lines)).collect()),
    }
}

/// `textDocument/documentSymbol`: the outline of the document.
pub fn document_symbols(
    workspace: &mut Workspace,
    params: &DocumentSymbolParams,
) -> Answer<Option<Vec<DocumentSymbol>>> {
    let Some((analysis, file)) = document(workspace, &params.text_document.uri) else {
        return Ok(None);
    };
    let Some(lines) = analysis.lines.get(&file) else {
        return Ok(None);
    };
    let outline = symbols::outline(file, analysis.text(file));
    Ok(Some(outline.into_iter().map(|e| outline_entry(e, lines)).collect()))
}

/// `textDocument/formatting`: the document in the canonical layout, as one edit (none when it
/// is formatted already or has a syntax error, which the diagnostics show).
pub fn formatting(workspace: &mut Workspace, params: &DocumentFormattingParams) -> Answer<Option<Vec<TextEdit>>> {
    let Some((analysis, file)) = document(workspace, &params.text_document.uri) else {
        return Ok(None);
    };
    let text = analysis.text(file);
    let formatted = match tenx_compiler::fmt::format_source(file, text, &analysis.fmt) {
        Ok(formatted) => formatted,
        Err(tenx_compiler::fmt::Refused::SyntaxErrors(_)) => return Ok(None),
        Err(tenx_compiler::fmt::Refused::NotTheSameProgram(at)) => {
            return Err(Failure::request_failed(format!(
                "the formatter would have changed the program at byte {at}; the file is left as it is (a formatter bug: please report it)"
            )));
        }
    };
    if formatted == text {
        return Ok(Some(Vec::new()));
    }
    let Some(lines) = analysis.lines.get(&file) else {
        return Ok(None);
    };
    let whole = lines.range(Span::new(0, text.len()));
    Ok(Some(vec![TextEdit::new(whole, formatted)]))
}

/// `textDocument/codeAction`: the "did you mean" and "add `import …`" fixes of the diagnostics
/// in the range.
pub fn code_actions(workspace: &mut Workspace, params: &CodeActionParams) -> Answer<Option<Vec<CodeActionOrCommand>>> {
    let uri = &params.text_document.uri;
    let Some((analysis, file)) = document(workspace, uri) else {
        return Ok(None);
    };
    let Some(lines) = analysis.lines.get(&file) else {
        return Ok(None);
    };
    let Some(asked) = lines.span(params.range) else {
        return Ok(None);
    };
    let mut actions = Vec::new();
    for diagnostic in &analysis.checked.diagnostics {
        let span = diagnostic.primary.span;
        let overlaps = span.start <= asked.end && asked.start <= span.end;
        if diagnostic.primary.file != file || !overlaps {
            continue;
        }
        let Some(fix) = fixes::fix(diagnostic) else { continue };
        let place = |f: FileId, s: Span| location(analysis, f, s);
        let shown = convert::diagnostic(diagnostic, &place);
        let edit = TextEdit::new(lines.range(fix.span), fix.text);
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: fix.title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: shown.map(|d| vec![d]),
            edit: Some(WorkspaceEdit::new(HashMap::from([(uri.clone(), vec![edit])]))),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    Ok(Some(actions))
}
