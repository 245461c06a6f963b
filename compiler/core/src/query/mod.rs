//! Name and reference queries over a checked program, for editors (`tenxc lsp`): where a name is
//! declared, every place it is used, what to show on hover, what may be written at a place,
//! the edits of a rename (refused when the new name would collide), a file's outline, and the
//! edit a "did you mean" diagnostic proposes. Pure: the caller holds the files and the program
//! [`crate::check`] returned; every offset is a byte offset into one file's text.
//!
//! Files: [`occurrences`] (every place a declaration is named), [`hover`], [`fields`] (the
//! fields of each block and what they mean), [`complete`], [`rename`], [`symbols`], [`fixes`],
//! [`text`] (where an offset falls in the text).

pub mod complete;
pub mod fields;
pub mod fixes;
pub mod hover;
pub mod occurrences;
pub mod rename;
pub mod symbols;
#[cfg(test)]
mod tests;
pub mod text;

pub use occurrences::{Occurrence, occurrences};

use crate::resolve::{Program, Symbol};
use tenx_diagnostics::{FileId, SourceSet, Span};

/// A program with its files and the occurrences of its names, ready for queries.
#[derive(Debug)]
pub struct Index<'a> {
    /// The program.
    pub program: &'a Program,
    /// Its files (the root, its imports, the stdlib modules it imports).
    pub sources: &'a SourceSet,
    /// Every occurrence of a declared name.
    pub occurrences: Vec<Occurrence>,
}

impl<'a> Index<'a> {
    /// Indexes the program that [`crate::check`] returned for `sources`.
    pub fn new(program: &'a Program, sources: &'a SourceSet) -> Self {
        Index {
            program,
            sources,
            occurrences: occurrences(program, sources),
        }
    }

    /// The occurrence of a name at `offset` in `file` (touching its start or end counts).
    pub fn at(&self, file: FileId, offset: usize) -> Option<&Occurrence> {
        let offset = u32::try_from(offset).ok()?;
        self.occurrences
            .iter()
            .find(|o| o.file == file && o.span.start <= offset && offset <= o.span.end)
    }

    /// The declaration named at `offset` in `file`.
    pub fn definition(&self, file: FileId, offset: usize) -> Option<Symbol> {
        self.at(file, offset).map(|o| o.target)
    }

    /// Every occurrence of the declaration `target` (its own name included).
    pub fn references(&self, target: &Symbol) -> Vec<(FileId, Span)> {
        let mut found: Vec<(FileId, Span)> = self
            .occurrences
            .iter()
            .filter(|o| same_declaration(&o.target, target))
            .map(|o| (o.file, o.span))
            .collect();
        found.sort();
        found.dedup();
        found
    }
}

/// Whether two symbols are the same declaration.
pub fn same_declaration(a: &Symbol, b: &Symbol) -> bool {
    a.file == b.file && a.span == b.span
}
