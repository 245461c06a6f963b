//! The compiler's answers in the protocol's words: diagnostics (code, severity, the code's
//! catalog page as `codeDescription`, secondary labels as related information, help and notes
//! in the message), completion and outline kinds.

use lsp_types::{
    CodeDescription, CompletionItemKind, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    SymbolKind, Uri,
};
use std::str::FromStr;
use tenx_compiler::query::complete::CandidateKind;
use tenx_compiler::query::symbols::OutlineKind;
use tenx_compiler::resolve::DeclKind;
use tenx_diagnostics::{Code, Diagnostic, FileId, Severity, Span};

/// Where a code's catalog page is published (the same pages `tenxc explain` prints).
const CATALOG: &str = "https://github.com/tenx-lang/tenx/blob/main/compiler/diagnostics/codes";

/// The `codeDescription` of `code`: its catalog page.
pub fn code_description(code: Code) -> Option<CodeDescription> {
    Uri::from_str(&format!("{CATALOG}/{}.md", code.as_str()))
        .ok()
        .map(|href| CodeDescription { href })
}

/// The editor's diagnostic for `diagnostic`, given how to place a span of any file.
pub fn diagnostic(
    diagnostic: &Diagnostic,
    place: &dyn Fn(FileId, Span) -> Option<Location>,
) -> Option<lsp_types::Diagnostic> {
    let primary = place(diagnostic.primary.file, diagnostic.primary.span)?;
    let mut message = diagnostic.message.clone();
    if !diagnostic.primary.message.is_empty() && diagnostic.primary.message != diagnostic.message {
        message.push_str(&format!("\n{}", diagnostic.primary.message));
    }
    if let Some(help) = &diagnostic.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    for note in &diagnostic.notes {
        message.push_str(&format!("\nnote: {note}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .secondary
        .iter()
        .filter_map(|label| {
            Some(DiagnosticRelatedInformation {
                location: place(label.file, label.span)?,
                message: label.message.clone(),
            })
        })
        .collect();
    Some(lsp_types::Diagnostic {
        range: primary.range,
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_string())),
        code_description: code_description(diagnostic.code),
        source: Some("tenxc".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    })
}

/// The completion kind of a candidate.
pub fn completion_kind(kind: CandidateKind) -> CompletionItemKind {
    match kind {
        CandidateKind::Declaration(decl) => match decl {
            DeclKind::Tag => CompletionItemKind::CONSTANT,
            DeclKind::Schema => CompletionItemKind::STRUCT,
            DeclKind::Model => CompletionItemKind::CLASS,
            DeclKind::Tool => CompletionItemKind::FUNCTION,
            DeclKind::Agent => CompletionItemKind::CLASS,
            DeclKind::Validator => CompletionItemKind::FUNCTION,
            DeclKind::Interrupt => CompletionItemKind::EVENT,
            DeclKind::Graph => CompletionItemKind::MODULE,
        },
        CandidateKind::Field => CompletionItemKind::FIELD,
        CandidateKind::Keyword => CompletionItemKind::KEYWORD,
        CandidateKind::Module => CompletionItemKind::MODULE,
        CandidateKind::Type => CompletionItemKind::TYPE_PARAMETER,
    }
}

/// The outline kind of an entry.
pub fn symbol_kind(kind: OutlineKind) -> SymbolKind {
    match kind {
        OutlineKind::Import => SymbolKind::PACKAGE,
        OutlineKind::Declaration(decl) => match decl {
            DeclKind::Tag => SymbolKind::CONSTANT,
            DeclKind::Schema => SymbolKind::STRUCT,
            DeclKind::Model => SymbolKind::OBJECT,
            DeclKind::Tool => SymbolKind::FUNCTION,
            DeclKind::Agent => SymbolKind::CLASS,
            DeclKind::Validator => SymbolKind::FUNCTION,
            DeclKind::Interrupt => SymbolKind::EVENT,
            DeclKind::Graph => SymbolKind::MODULE,
        },
        OutlineKind::Test => SymbolKind::METHOD,
        OutlineKind::Field => SymbolKind::FIELD,
        OutlineKind::Route => SymbolKind::OPERATOR,
    }
}
