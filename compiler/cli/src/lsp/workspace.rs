//! What the server knows: the open documents as typed, the programs of the workspace folders
//! (each root with the files it reads, from disk), and the checked [`Analysis`] of every program
//! that reads an open document. An edit re-checks each program that reads the edited file (a
//! file no program reads is checked as a program of its own), and diagnostics are published for
//! every file of those programs, merged over the programs that read it.

use super::analysis::{Analysis, OpenTexts, STDLIB_PREFIX, canonical};
use super::convert;
use super::position::Encoding;
use super::{stdlib_files, uri};
use lsp_types::{Location, PublishDiagnosticsParams, Uri};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tenx_compiler::syntax::ParseCache;
use tenx_diagnostics::{FileId, Span};
use tenxc::programs;

/// The server's state.
#[derive(Debug)]
pub struct Workspace {
    /// Display names are relative to this folder (the first workspace folder).
    base: PathBuf,
    /// The workspace folders.
    folders: Vec<PathBuf>,
    /// How columns are counted.
    pub encoding: Encoding,
    /// The open documents' texts, by path.
    open: OpenTexts,
    /// The open documents' versions.
    versions: BTreeMap<PathBuf, i32>,
    /// The workspace's program roots, each with the files it reads (as saved on disk).
    members: Vec<(PathBuf, BTreeSet<PathBuf>)>,
    /// The checked programs, by root.
    pub analyses: BTreeMap<PathBuf, Analysis>,
    /// Each program's parses, kept for its next check.
    caches: BTreeMap<PathBuf, ParseCache>,
    /// The files whose last published diagnostics were not empty.
    published: BTreeSet<PathBuf>,
    /// Problems with project files already shown to the user.
    shown: BTreeSet<String>,
}

impl Workspace {
    /// A workspace over `folders` (none: only the open documents).
    pub fn new(folders: Vec<PathBuf>, encoding: Encoding) -> Self {
        let folders: Vec<PathBuf> = folders.iter().map(|f| canonical(f)).collect();
        let base = folders
            .first()
            .cloned()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let mut workspace = Workspace {
            base,
            folders,
            encoding,
            open: OpenTexts::new(),
            versions: BTreeMap::new(),
            members: Vec::new(),
            analyses: BTreeMap::new(),
            caches: BTreeMap::new(),
            published: BTreeSet::new(),
            shown: BTreeSet::new(),
        };
        workspace.scan();
        workspace
    }

    /// Finds the programs of the workspace folders again (at start and after a save).
    pub fn scan(&mut self) {
        self.members.clear();
        for folder in &self.folders {
            let Ok(files) = programs::find_files(std::slice::from_ref(folder)) else {
                continue;
            };
            for (root, read) in programs::programs(&files, None) {
                self.members.push((root.resolved, read));
            }
        }
    }

    /// The path of a document, as the server keys it.
    pub fn path_of(uri: &Uri) -> Option<PathBuf> {
        uri::to_path(uri).map(|p| canonical(&p))
    }

    /// A document was opened or changed to `text`.
    pub fn set_text(&mut self, path: PathBuf, text: String, version: i32) {
        self.versions.insert(path.clone(), version);
        self.open.insert(path, text);
    }

    /// A document changed: `text` replaces `range` (the whole document without one). `false`
    /// when the range does not fit the document as the server has it (the edit is not applied).
    pub fn edit(&mut self, path: &Path, range: Option<lsp_types::Range>, text: String, version: i32) -> bool {
        let Some(range) = range else {
            self.set_text(path.to_path_buf(), text, version);
            return true;
        };
        let Some(current) = self.open.get_mut(path) else {
            return false;
        };
        let lines = super::position::Lines::new(current, self.encoding);
        let Some(span) = lines.span(range) else { return false };
        if !current.is_char_boundary(span.start as usize) || !current.is_char_boundary(span.end as usize) {
            return false;
        }
        current.replace_range(span.range(), &text);
        self.versions.insert(path.to_path_buf(), version);
        true
    }

    /// A document was closed: its text is read from disk again, and programs that no longer
    /// read an open document are dropped. Returns the publishes that clear their diagnostics.
    pub fn close(&mut self, path: &Path) -> Vec<PublishDiagnosticsParams> {
        self.open.remove(path);
        self.versions.remove(path);
        let open = &self.open;
        self.analyses
            .retain(|_, analysis| open.keys().any(|p| analysis.reads(p)));
        let analyses = &self.analyses;
        self.caches.retain(|root, _| analyses.contains_key(root));
        if self.analyses.values().any(|a| a.reads(path)) {
            // Still read by a program of another open document: check it as saved.
            return self.refresh(&BTreeSet::from([path.to_path_buf()]));
        }
        self.publish()
    }

    /// The roots of the programs that read `path`.
    fn roots_for(&self, path: &Path) -> BTreeSet<PathBuf> {
        let mut roots: BTreeSet<PathBuf> = self
            .members
            .iter()
            .filter(|(_, read)| read.contains(path))
            .map(|(root, _)| root.clone())
            .collect();
        roots.extend(self.analyses.values().filter(|a| a.reads(path)).map(|a| a.root.clone()));
        if roots.is_empty() {
            roots.insert(path.to_path_buf());
        }
        roots
    }

    /// Re-checks every program that reads one of `changed`, then publishes diagnostics.
    pub fn refresh(&mut self, changed: &BTreeSet<PathBuf>) -> Vec<PublishDiagnosticsParams> {
        let roots: BTreeSet<PathBuf> = changed.iter().flat_map(|p| self.roots_for(p)).collect();
        for root in roots {
            let cache = self.caches.entry(root.clone()).or_default();
            let old = match Analysis::build(&self.base, &root, &self.open, self.encoding, cache) {
                Some(analysis) => self.analyses.insert(root, analysis),
                None => self.analyses.remove(&root),
            };
            drop_aside(old);
        }
        // A file checked on its own that another program now reads is checked as part of it.
        let member_roots: BTreeSet<PathBuf> = self.members.iter().map(|(r, _)| r.clone()).collect();
        let standalone: Vec<PathBuf> = self
            .analyses
            .keys()
            .filter(|root| !member_roots.contains(*root))
            .filter(|root| self.analyses.values().any(|a| &a.root != *root && a.reads(root)))
            .cloned()
            .collect();
        for root in standalone {
            self.analyses.remove(&root);
        }
        let analyses = &self.analyses;
        self.caches.retain(|root, _| analyses.contains_key(root));
        self.publish()
    }

    /// The problems with project files not yet shown (each is shown once).
    pub fn new_config_errors(&mut self) -> Vec<String> {
        let errors: Vec<String> = self
            .analyses
            .values()
            .filter_map(|a| a.config_error.clone())
            .filter(|e| !self.shown.contains(e))
            .collect();
        self.shown.extend(errors.iter().cloned());
        errors
    }

    /// The diagnostics of every file of every program, and empty lists for files that had some
    /// and are no longer read.
    fn publish(&mut self) -> Vec<PublishDiagnosticsParams> {
        let mut by_file: BTreeMap<PathBuf, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
        for analysis in self.analyses.values() {
            for path in analysis.paths.values() {
                by_file.entry(path.clone()).or_default();
            }
            for diagnostic in &analysis.checked.diagnostics {
                let Some(path) = analysis.paths.get(&diagnostic.primary.file) else {
                    continue;
                };
                let place = |file: FileId, span: Span| location(analysis, file, span);
                let Some(converted) = convert::diagnostic(diagnostic, &place) else {
                    continue;
                };
                let list = by_file.entry(path.clone()).or_default();
                if !list.contains(&converted) {
                    list.push(converted);
                }
            }
        }
        for path in &self.published {
            by_file.entry(path.clone()).or_default();
        }
        let mut out = Vec::new();
        self.published.clear();
        for (path, diagnostics) in by_file {
            let Some(uri) = uri::from_path(&path) else { continue };
            if !diagnostics.is_empty() {
                self.published.insert(path.clone());
            }
            out.push(PublishDiagnosticsParams {
                uri,
                diagnostics,
                version: self.versions.get(&path).copied(),
            });
        }
        out
    }

    /// The program to answer a question about `path` with: the one rooted there, else the
    /// first that reads it.
    pub fn analysis_mut(&mut self, path: &Path) -> Option<&mut Analysis> {
        if self.analyses.contains_key(path) {
            return self.analyses.get_mut(path);
        }
        self.analyses.values_mut().find(|a| a.reads(path))
    }
}

/// Frees a program no longer used on another thread: a large program's tree takes longer to
/// free than the editor should wait for its diagnostics.
fn drop_aside(old: Option<Analysis>) {
    if let Some(old) = old {
        let _ = std::thread::Builder::new()
            .name("tenxc-lsp-free".to_string())
            .spawn(move || drop(old));
    }
}

/// Where `span` of file `file` of `analysis` is, for the editor.
pub fn location(analysis: &Analysis, file: FileId, span: Span) -> Option<Location> {
    let lines = analysis.lines.get(&file)?;
    let uri = match analysis.paths.get(&file) {
        Some(path) => uri::from_path(path)?,
        None => {
            let source = analysis.sources.get(file)?;
            let module = source.name.strip_prefix(STDLIB_PREFIX)?;
            stdlib_files::uri_of(module, &source.text)?
        }
    };
    Some(Location::new(uri, lines.range(span)))
}
