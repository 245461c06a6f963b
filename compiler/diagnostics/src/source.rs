//! The set of source files a compilation reads, which file each of their imports resolved to,
//! and line/column lookup for renderers.

use crate::{ImportRefusal, Span};
use std::collections::BTreeMap;

/// Index of a file in a [`SourceSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct FileId(pub u32);

/// One source file: a display name (`examples/refund.tenx`, `<stdlib>/approval.tenx`) and text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name shown in diagnostics; stable (relative paths, `<stdlib>/…`).
    pub name: String,
    /// The text.
    pub text: String,
    line_starts: Vec<usize>,
}

/// A 1-based line and column (column counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl SourceFile {
    /// A file from its display name and text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// Line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        LineCol { line, column }
    }

    /// The text of a span, or `""` when the span is out of range.
    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }

    pub(crate) fn line_starts(&self) -> &[usize] {
        &self.line_starts
    }

    /// The 0-based index of the line holding a byte offset (the last line past the end).
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }

    /// Number of lines (a final newline starts an empty last line).
    pub(crate) fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The bytes of a line without its `\n`, or `None` past the last line.
    pub(crate) fn line_content(&self, index: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.line_starts.get(index)?;
        let end = self
            .line_starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next.saturating_sub(1));
        Some(start..end.max(start))
    }
}

/// All files of one compilation, and what each file import among them resolved to. File ids are
/// indexes into it.
#[derive(Debug, Clone, Default)]
pub struct SourceSet {
    files: Vec<SourceFile>,
    /// `(importing file, path as written)` → the file it resolved to, or why it was refused.
    imports: BTreeMap<(FileId, String), Result<FileId, ImportRefusal>>,
}

impl SourceSet {
    /// An empty set.
    pub fn new() -> Self {
        SourceSet::default()
    }

    /// Adds a file and returns its id. A file with the same name already present is replaced.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let file = SourceFile::new(name, text);
        if let Some(i) = self.files.iter().position(|f| f.name == file.name) {
            if let Some(slot) = self.files.get_mut(i) {
                *slot = file;
            }
            return FileId(u32::try_from(i).unwrap_or(u32::MAX));
        }
        self.files.push(file);
        FileId(u32::try_from(self.files.len() - 1).unwrap_or(u32::MAX))
    }

    /// The file with this id.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// The id of the file with this display name.
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .and_then(|i| u32::try_from(i).ok())
            .map(FileId)
    }

    /// All files with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(u32::try_from(i).unwrap_or(u32::MAX)), f))
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the set holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Records what `import "written"` in the file `importer` resolved to.
    pub fn link_import(&mut self, importer: FileId, written: &str, target: Result<FileId, ImportRefusal>) {
        self.imports.insert((importer, written.to_owned()), target);
    }

    /// What `import "written"` in the file `importer` resolved to; `None` when no reader
    /// recorded it (the import was never loaded).
    pub fn imported(&self, importer: FileId, written: &str) -> Option<&Result<FileId, ImportRefusal>> {
        self.imports.get(&(importer, written.to_owned()))
    }

    /// Every file a recorded import resolved to.
    pub fn imported_files(&self) -> std::collections::BTreeSet<FileId> {
        self.imports
            .values()
            .filter_map(|target| target.as_ref().ok().copied())
            .collect()
    }

    /// Forgets every recorded import (the files stay). What a file may import depends on the
    /// program it is part of, so each program's imports are resolved afresh.
    pub fn clear_imports(&mut self) {
        self.imports.clear();
    }
}

impl<'a> codespan_reporting::files::Files<'a> for SourceSet {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, codespan_reporting::files::Error> {
        self.get(id)
            .map(|f| f.name.as_str())
            .ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, codespan_reporting::files::Error> {
        self.get(id)
            .map(|f| f.text.as_str())
            .ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        let file = self.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        Ok(file
            .line_starts()
            .partition_point(|&s| s <= byte_index)
            .saturating_sub(1))
    }

    fn line_range(
        &'a self,
        id: FileId,
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        let file = self.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        let starts = file.line_starts();
        let start = *starts
            .get(line_index)
            .ok_or(codespan_reporting::files::Error::LineTooLarge {
                given: line_index,
                max: starts.len().saturating_sub(1),
            })?;
        let end = starts.get(line_index + 1).copied().unwrap_or(file.text.len());
        Ok(start..end)
    }
}
