//! The one diagnostic type: a code, a message, one primary label, secondary labels, help, notes.

use crate::{Code, FileId, Severity, Span};

/// A place in a source file with a message (which may be empty).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label {
    /// The file.
    pub file: FileId,
    /// The bytes the label underlines.
    pub span: Span,
    /// What the label says about them.
    pub message: String,
}

impl Label {
    /// A label on `span` in `file`.
    pub fn new(file: FileId, span: Span, message: impl Into<String>) -> Self {
        Label {
            file,
            span,
            message: message.into(),
        }
    }
}

/// One problem found in a program.
///
/// Messages are lowercase, end without a period, and put user names in backticks. A second
/// sentence goes to `help` or `notes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// The severity (the code's default unless a lint level changed it).
    pub severity: Severity,
    /// What is wrong, in one line.
    pub message: String,
    /// Where the user must look.
    pub primary: Label,
    /// Related places ("first declared here").
    pub secondary: Vec<Label>,
    /// How to fix it.
    pub help: Option<String>,
    /// Extra facts.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's default severity and an unlabelled primary span.
    pub fn new(code: Code, message: impl Into<String>, file: FileId, span: Span) -> Self {
        Diagnostic {
            code,
            severity: code.default_severity(),
            message: message.into(),
            primary: Label::new(file, span, ""),
            secondary: Vec::new(),
            help: None,
            notes: Vec::new(),
        }
    }

    /// Sets the primary label's message.
    pub fn label(mut self, message: impl Into<String>) -> Self {
        self.primary.message = message.into();
        self
    }

    /// Adds a secondary label.
    pub fn secondary(mut self, file: FileId, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label::new(file, span, message));
        self
    }

    /// Sets the help line.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the help line when there is one.
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Whether this diagnostic rejects the program.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    fn sort_key(&self) -> (FileId, u32, u32, Code, &str) {
        (
            self.primary.file,
            self.primary.span.start,
            self.primary.span.end,
            self.code,
            &self.message,
        )
    }
}

/// Puts diagnostics in their rendering order (file, position, code) and drops exact repeats,
/// so no problem is reported twice.
pub fn sort_and_dedup(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diagnostics.dedup_by(|a, b| a.sort_key() == b.sort_key());
}
