//! One program as the editor sees it: its root, every file it reads (open documents as typed,
//! the rest from disk, confined to the project folder as `tenxc check` confines them), the
//! checked program, the occurrences of its names and each file's lines. Built again after every
//! edit that touches one of its files; the compiler core does the work, parsing again only the
//! items whose text changed (its [`ParseCache`], one per program, kept by the workspace).

use super::position::{Encoding, Lines};
use crate::config;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tenx_compiler::fmt::FmtOptions;
use tenx_compiler::query::{Index, Occurrence, occurrences};
use tenx_compiler::syntax::ParseCache;
use tenx_compiler::{Checked, ImportReader, LintLevels};
use tenx_diagnostics::{Diagnostic, FileId, ImportRefusal, SourceSet};
use tenxc::disk::{self, DiskReader, MAX_SOURCE_BYTES, PROJECT_FILE};

/// The name prefix of the standard library's files in a [`SourceSet`].
pub const STDLIB_PREFIX: &str = "<stdlib>/";

/// The texts of the documents open in the editor, by path.
pub type OpenTexts = BTreeMap<PathBuf, String>;

/// A checked program and what queries need of it.
#[derive(Debug)]
pub struct Analysis {
    /// The root file.
    pub root: PathBuf,
    /// Its files.
    pub sources: SourceSet,
    /// The checked program with every diagnostic (reading ones included).
    pub checked: Checked,
    /// Every occurrence of a declared name.
    pub occurrences: Vec<Occurrence>,
    /// The path of each file that is on disk (not the stdlib's).
    pub paths: BTreeMap<FileId, PathBuf>,
    /// Each file's lines.
    pub lines: BTreeMap<FileId, Lines>,
    /// The formatter's options from the project's `tenx.toml`.
    pub fmt: FmtOptions,
    /// A problem with the project's `tenx.toml` (the defaults are used meanwhile).
    pub config_error: Option<String>,
}

/// Reads imports from the open documents first, then from disk through the confined reader.
struct OverlayReader<'a> {
    disk: DiskReader,
    base: &'a Path,
    open: &'a OpenTexts,
}

impl ImportReader for OverlayReader<'_> {
    fn locate(&mut self, importer: &str, written: &str) -> Result<String, ImportRefusal> {
        self.disk.locate(importer, written)
    }

    fn read(&mut self, name: &str) -> Result<Vec<u8>, ImportRefusal> {
        let path = canonical(&self.base.join(name));
        match self.open.get(&path) {
            Some(text) => Ok(text.clone().into_bytes()),
            None => self.disk.read(name),
        }
    }
}

/// `path` with links followed, or as it is when it does not exist (yet).
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The project file that governs `root`: the nearest `tenx.toml` at or above its folder.
pub fn project_file(root: &Path) -> Option<PathBuf> {
    let folder = root.parent()?;
    let file = disk::project_folder(folder).join(PROJECT_FILE);
    file.is_file().then_some(file)
}

/// The display name of `path`: relative to `base` when inside it, else the path itself.
fn display_name(base: &Path, path: &Path) -> String {
    let shown = path.strip_prefix(base).unwrap_or(path);
    shown.to_string_lossy().replace('\\', "/")
}

impl Analysis {
    /// Reads and checks the program rooted at `root`; `None` when the root can be read neither
    /// from the open documents nor from disk.
    pub fn build(
        base: &Path,
        root: &Path,
        open: &OpenTexts,
        encoding: Encoding,
        cache: &mut ParseCache,
    ) -> Option<Analysis> {
        let bytes = match open.get(root) {
            Some(text) => text.clone().into_bytes(),
            None => disk::read_regular_file(root, MAX_SOURCE_BYTES).ok()?,
        };
        let config_path = project_file(root);
        let mut config_error = None;
        let lints = config::lint_levels(config_path.as_deref(), &[], &[]).unwrap_or_else(|error| {
            config_error = Some(format!("{error}"));
            LintLevels::default()
        });
        let fmt = config::fmt_options(config_path.as_deref()).unwrap_or_else(|error| {
            config_error.get_or_insert_with(|| format!("{error}"));
            FmtOptions::default()
        });
        let name = display_name(base, root);
        let mut disk_reader = DiskReader::new(base);
        disk_reader.enter_project_of(&name, config_path.as_deref()).ok()?;
        let mut sources = SourceSet::new();
        let (root_id, invalid) = tenx_compiler::add_source_bytes(&mut sources, &name, bytes);
        let mut reading: Vec<Diagnostic> = invalid.into_iter().collect();
        let mut reader = OverlayReader {
            disk: disk_reader,
            base,
            open,
        };
        reading.extend(tenx_compiler::load_imports(&mut sources, root_id, &mut reader));
        let mut checked = tenx_compiler::check_cached(&mut sources, root_id, &lints, cache);
        checked.diagnostics.extend(reading);
        let occurrences = occurrences(&checked.program, &sources);
        let mut paths = BTreeMap::new();
        let mut lines = BTreeMap::new();
        for (id, file) in sources.iter() {
            if !file.name.starts_with(STDLIB_PREFIX) {
                let path = if id == root_id {
                    root.to_path_buf()
                } else {
                    canonical(&base.join(&file.name))
                };
                paths.insert(id, path);
            }
            lines.insert(id, Lines::new(&file.text, encoding));
        }
        Some(Analysis {
            root: root.to_path_buf(),
            sources,
            checked,
            occurrences,
            paths,
            lines,
            fmt,
            config_error,
        })
    }

    /// The id of the file at `path`, when this program reads it.
    pub fn file_of(&self, path: &Path) -> Option<FileId> {
        self.paths.iter().find(|(_, p)| p.as_path() == path).map(|(id, _)| *id)
    }

    /// Whether this program reads the file at `path`.
    pub fn reads(&self, path: &Path) -> bool {
        self.file_of(path).is_some()
    }

    /// The text of file `id`, as checked.
    pub fn text(&self, id: FileId) -> &str {
        self.sources.get(id).map_or("", |f| f.text.as_str())
    }

    /// Runs `query` on the name index of this program.
    pub fn with_index<R>(&mut self, query: impl FnOnce(&Index<'_>) -> R) -> R {
        let index = Index {
            program: &self.checked.program,
            sources: &self.sources,
            occurrences: std::mem::take(&mut self.occurrences),
        };
        let result = query(&index);
        self.occurrences = index.occurrences;
        result
    }
}
