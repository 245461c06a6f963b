//! Building a program before and after `tenxc fmt`, for the formatter's tests: the formatted
//! program must give the same artifact.
//!
//! The artifact's source map holds the line and column of every declaration, and its id covers
//! the source map, so a reformatted file whose declarations move to other lines gets another
//! id. What formatting must never change is everything else: [`Built::meaning`] is the id of
//! the artifact with its source map left out, and [`Built::declared`] the keys of the source map
//! (every part still declared, only its position moved). Where the formatter changes no line,
//! the whole id ([`Built::id`]) is the same too.

use std::collections::BTreeSet;
use tenx_compiler::fmt::{FmtOptions, Refused, format_source};
use tenx_compiler::{ImportReader, LintLevels};
use tenx_diagnostics::{Diagnostic, FileId, ImportRefusal};

/// What a program built to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The sealed artifact's id.
    pub id: String,
    /// The id of the artifact body without its source map.
    pub meaning: String,
    /// The keys of the source map.
    pub declared: BTreeSet<String>,
}

/// Formats `text`: `Ok(None)` when it has a syntax error, `Err(offset)` when the formatter
/// refused to change the program (a formatter bug, found at that offset).
pub fn format(text: &str) -> Result<Option<String>, usize> {
    match format_source(FileId(0), text, &FmtOptions::default()) {
        Ok(formatted) => Ok(Some(formatted)),
        Err(Refused::SyntaxErrors(_)) => Ok(None),
        Err(Refused::NotTheSameProgram(at)) => Err(at),
    }
}

/// [`format`], or the text as it is when it is not formatted.
fn format_or_keep(text: String) -> String {
    match format(&text) {
        Ok(Some(formatted)) => formatted,
        _ => text,
    }
}

/// Builds `text` as the root file `name` (relative to the repository root), its imports read
/// from disk. With `formatted`, the root and every imported file are formatted first (a file
/// the formatter refuses is kept as it is). `None` when the program has an error.
pub fn build(name: &str, text: &str, formatted: bool) -> Option<Built> {
    let root_text = if formatted {
        format_or_keep(text.to_owned())
    } else {
        text.to_owned()
    };
    let mut sources = tenx_diagnostics::SourceSet::new();
    let root = sources.add(name, root_text);
    let mut disk = tenxc::disk::DiskReader::new(crate::repo_root());
    disk.enter_project_of(name, None).ok()?;
    let mut reader = Formatting { disk, formatted };
    let loaded = tenx_compiler::load_imports(&mut sources, root, &mut reader);
    let compiled = tenx_compiler::compile(&mut sources, root, &LintLevels::default());
    if loaded.iter().chain(&compiled.diagnostics).any(Diagnostic::is_error) {
        return None;
    }
    let sealed = tenx_artifact::seal(compiled.artifact?).ok()?;
    let mut body = serde_json::to_value(sealed.artifact()).ok()?;
    let declared = body
        .get("source_map")
        .and_then(serde_json::Value::as_object)
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(fields) = body.as_object_mut() {
        fields.remove("source_map");
    }
    Some(Built {
        id: sealed.id().to_string(),
        meaning: tenx_artifact::ArtifactId::of_body(&body).ok()?.to_string(),
        declared,
    })
}

/// Reads imports from disk, formatted when asked.
struct Formatting {
    disk: tenxc::disk::DiskReader,
    formatted: bool,
}

impl ImportReader for Formatting {
    fn locate(&mut self, importer: &str, written: &str) -> Result<String, ImportRefusal> {
        self.disk.locate(importer, written)
    }

    fn read(&mut self, name: &str) -> Result<Vec<u8>, ImportRefusal> {
        let bytes = self.disk.read(name)?;
        if !self.formatted {
            return Ok(bytes);
        }
        Ok(match String::from_utf8(bytes) {
            Ok(text) => format_or_keep(text).into_bytes(),
            Err(error) => error.into_bytes(),
        })
    }
}
