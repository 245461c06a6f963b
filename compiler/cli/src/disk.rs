//! Reading a program's files from disk, confined to its project folder.
//!
//! The project folder is the folder of the nearest `tenx.toml` above the root file (or of the
//! one given with `--config`), and without one the root file's own folder. An import is read
//! only if, after every link is followed, it is a regular file inside that folder and no larger
//! than [`MAX_SOURCE_BYTES`]; otherwise it is refused with its reason and nothing of it is read,
//! so no diagnostic can show it. A file reached by two paths (a link, `a/../a`) is one file,
//! known by the first name it was reached by.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use tenx_compiler::ImportReader;
use tenx_diagnostics::ImportRefusal;

/// The most a source file may hold: 16 MiB (the 100,000-line benchmark program is 3 MB).
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The project file whose folder is the project folder.
pub const PROJECT_FILE: &str = "tenx.toml";

/// Reads files from disk for [`tenx_compiler::load_imports`], refusing anything outside the
/// project folder, anything but a regular file and anything too large.
#[derive(Debug, Clone)]
pub struct DiskReader {
    /// Display names are relative to this folder (the working directory, for the CLI).
    base: PathBuf,
    /// The project folder of the program being loaded, resolved.
    project: PathBuf,
    /// The project folder as shown in diagnostics.
    project_shown: String,
    /// The most a file may hold.
    limit: u64,
    /// Each file read so far, by resolved path, with the display name it was first reached by.
    names: BTreeMap<PathBuf, String>,
    /// The resolved path of each display name handed out.
    paths: BTreeMap<String, PathBuf>,
}

impl DiskReader {
    /// A reader for display names relative to `base`, with no project yet (see
    /// [`DiskReader::enter_project`]).
    pub fn new(base: impl Into<PathBuf>) -> Self {
        let base = base.into();
        DiskReader {
            project: base.clone(),
            project_shown: ".".to_owned(),
            base,
            limit: MAX_SOURCE_BYTES,
            names: BTreeMap::new(),
            paths: BTreeMap::new(),
        }
    }

    /// The same reader with another size limit (tests use a small one).
    pub fn with_limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    /// Starts loading the program whose root file is `name` (relative to the base): sets the
    /// project folder (see [`DiskReader::enter_project_of`]) and reads the root, which must be a
    /// regular file no larger than the limit. Returns the root's bytes.
    pub fn enter_project(&mut self, name: &str, config: Option<&Path>) -> Result<Vec<u8>, ImportRefusal> {
        let resolved = resolve(&self.base.join(name))?;
        self.enter_project_of(name, config)?;
        let bytes = read_regular_file(&resolved, self.limit)?;
        self.names.entry(resolved.clone()).or_insert_with(|| name.to_owned());
        self.paths.insert(name.to_owned(), resolved);
        Ok(bytes)
    }

    /// Starts loading the program whose root file is `name`, without reading the root (it may
    /// exist only in memory): the project folder is the folder of `config` when given, else the
    /// folder of the nearest `tenx.toml` at or above the root's folder, else the root's folder.
    pub fn enter_project_of(&mut self, name: &str, config: Option<&Path>) -> Result<(), ImportRefusal> {
        let start = match config {
            Some(config) => self.base.join(config),
            None => self.base.join(name),
        };
        let folder = start
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
            .map_or_else(|| self.base.clone(), Path::to_path_buf);
        let folder = resolve(&folder)?;
        self.project = if config.is_some() {
            folder
        } else {
            project_folder(&folder)
        };
        self.project_shown = shown(&self.project, &self.base);
        Ok(())
    }
}

impl ImportReader for DiskReader {
    fn locate(&mut self, importer: &str, written: &str) -> Result<String, ImportRefusal> {
        let name = tenx_compiler::import_file_name(importer, written);
        let resolved = resolve(&self.base.join(&name))?;
        if !resolved.starts_with(&self.project) {
            return Err(ImportRefusal::OutsideProject {
                project: self.project_shown.clone(),
            });
        }
        check_regular(&std::fs::metadata(&resolved).map_err(unreadable)?, self.limit)?;
        let name = self.names.entry(resolved.clone()).or_insert(name).clone();
        self.paths.insert(name.clone(), resolved);
        Ok(name)
    }

    fn read(&mut self, name: &str) -> Result<Vec<u8>, ImportRefusal> {
        let resolved = self.paths.get(name).ok_or(ImportRefusal::NotFound)?;
        read_regular_file(resolved, self.limit)
    }
}

/// The folder of the nearest `tenx.toml` at or above `folder`, else `folder` itself.
pub fn project_folder(folder: &Path) -> PathBuf {
    folder
        .ancestors()
        .find(|dir| dir.join(PROJECT_FILE).is_file())
        .unwrap_or(folder)
        .to_path_buf()
}

/// `path` with every link followed and `.`/`..` resolved.
fn resolve(path: &Path) -> Result<PathBuf, ImportRefusal> {
    std::fs::canonicalize(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ImportRefusal::NotFound,
        _ => unreadable(error),
    })
}

/// Reads a resolved path that must be a regular file of at most `limit` bytes. The type and size
/// are taken from the opened file, and no more than `limit` bytes are ever read, so a file that
/// changes in between (or a device behind it) cannot make the reader read without end.
pub fn read_regular_file(path: &Path, limit: u64) -> Result<Vec<u8>, ImportRefusal> {
    // Checked before opening, since opening a pipe waits for a writer; and again on the opened
    // file, in case the path changed in between.
    check_regular(&std::fs::metadata(path).map_err(unreadable)?, limit)?;
    let file = std::fs::File::open(path).map_err(unreadable)?;
    check_regular(&file.metadata().map_err(unreadable)?, limit)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > limit {
        return Err(ImportRefusal::TooLarge { bytes: read, limit });
    }
    Ok(bytes)
}

/// Refuses anything but a regular file of at most `limit` bytes.
fn check_regular(metadata: &std::fs::Metadata, limit: u64) -> Result<(), ImportRefusal> {
    if !metadata.is_file() {
        return Err(ImportRefusal::NotAFile {
            kind: kind_of(metadata),
        });
    }
    if metadata.len() > limit {
        return Err(ImportRefusal::TooLarge {
            bytes: metadata.len(),
            limit,
        });
    }
    Ok(())
}

/// What a path that is not a regular file is, for the refusal's label.
fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
        if kind.is_fifo() {
            return "a pipe";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

fn unreadable(error: std::io::Error) -> ImportRefusal {
    ImportRefusal::Unreadable {
        reason: error.kind().to_string(),
    }
}

/// `path` as shown to the user: relative to `base` when inside it, else as it is.
fn shown(path: &Path, base: &Path) -> String {
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    match path.strip_prefix(&base) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.to_string_lossy().replace('\\', "/"),
        Err(_) => path.to_string_lossy().replace('\\', "/"),
    }
}
