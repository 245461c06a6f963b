//! Which programs a command line names: the `.tenx` files of its paths (directories walked in
//! sorted order) and, among them, the roots to check so that every file is checked.
//!
//! A file imported by another of the files is checked as part of that file's program. Files
//! that import each other form one program: when nothing else imports any of them, the first by
//! name is its root. So every file found is covered by exactly the programs that reach it, and a
//! directory of files that import each other is never "0 files".

use crate::disk::DiskReader;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file found on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// The path as given or walked to.
    pub path: PathBuf,
    /// The display name: the path with `/` separators and no leading `./`.
    pub name: String,
    /// The path with every link followed: the file's identity.
    pub resolved: PathBuf,
}

/// Why the files of a command line could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindError {
    /// A path cannot be read.
    Unreadable {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A directory holds no `.tenx` file.
    NoSources {
        /// The directory.
        dir: PathBuf,
    },
    /// A link met while walking a directory leads outside it.
    LinkOutside {
        /// The link.
        link: PathBuf,
        /// The directory walked.
        dir: PathBuf,
    },
}

impl std::fmt::Display for FindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindError::Unreadable { path, reason } => write!(f, "cannot read `{}`: {reason}", path.display()),
            FindError::NoSources { dir } => write!(f, "no `.tenx` files found under `{}`", dir.display()),
            FindError::LinkOutside { link, dir } => write!(
                f,
                "`{}` is a link that leads outside `{}`; its target is not checked as part of the folder",
                link.display(),
                dir.display()
            ),
        }
    }
}

impl std::error::Error for FindError {}

/// The display name of a path: as given, with `/` separators and no leading `./`.
pub fn display_name(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut s = text.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}

/// The `.tenx` files named by `paths`, in a stable order, each once however it is reached. A
/// directory means every `.tenx` file below it, except in hidden folders and `target`; a link
/// inside it is followed only when it leads to a place inside it, and no folder is walked twice,
/// so links cannot make the walk loop.
pub fn find_files(paths: &[PathBuf]) -> Result<Vec<FoundFile>, FindError> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for path in paths {
        let resolved = std::fs::canonicalize(path).map_err(|error| FindError::Unreadable {
            path: path.clone(),
            reason: error.kind().to_string(),
        })?;
        if resolved.is_dir() {
            let before = found.len();
            walk(path, &resolved, &mut found, &mut seen)?;
            if found.len() == before && !contains_sources(&found, &resolved) {
                return Err(FindError::NoSources { dir: path.clone() });
            }
        } else if seen.insert(resolved.clone()) {
            found.push(FoundFile {
                name: display_name(path),
                path: path.clone(),
                resolved,
            });
        }
    }
    Ok(found)
}

/// Whether a file already found lies in `dir` (a directory given twice is not empty).
fn contains_sources(found: &[FoundFile], dir: &Path) -> bool {
    found.iter().any(|f| f.resolved.starts_with(dir))
}

/// Walks `top` (resolved: `top_resolved`) without recursion.
fn walk(
    top: &Path,
    top_resolved: &Path,
    found: &mut Vec<FoundFile>,
    seen: &mut BTreeSet<PathBuf>,
) -> Result<(), FindError> {
    let mut visited_dirs = BTreeSet::from([top_resolved.to_path_buf()]);
    let mut stack = vec![top.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let unreadable = |error: std::io::Error| FindError::Unreadable {
            path: dir.clone(),
            reason: error.kind().to_string(),
        };
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(unreadable)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        let mut subdirs = Vec::new();
        for entry in entries {
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "target" {
                continue;
            }
            let is_link = entry.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
            let Ok(resolved) = std::fs::canonicalize(&entry) else {
                continue; // a broken link: nothing to check
            };
            let is_source = entry.extension().is_some_and(|e| e == "tenx");
            if is_link && (resolved.is_dir() || is_source) && !resolved.starts_with(top_resolved) {
                return Err(FindError::LinkOutside {
                    link: entry,
                    dir: top.to_path_buf(),
                });
            }
            if resolved.is_dir() {
                if visited_dirs.insert(resolved) {
                    subdirs.push(entry);
                }
            } else if is_source && seen.insert(resolved.clone()) {
                found.push(FoundFile {
                    name: display_name(&entry),
                    path: entry,
                    resolved,
                });
            }
        }
        // Depth first, in sorted order: push in reverse so the first folder is walked first.
        stack.extend(subdirs.into_iter().rev());
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(())
}

/// The files to check as program roots, in the order of `files`: every file not imported by
/// another of `files`, and for files that import each other and are imported by nothing else,
/// the first of them. `config` is the `--config` file, which sets the project folder. A file
/// that cannot be read is a root (reading it again reports the problem).
pub fn roots(files: &[FoundFile], config: Option<&Path>) -> Vec<FoundFile> {
    programs(files, config).into_iter().map(|(root, _)| root).collect()
}

/// The program roots of [`roots`], each with the resolved paths of the files among `files` that
/// its program reads (itself included): what an editor needs to know which programs a file is
/// part of.
pub fn programs(files: &[FoundFile], config: Option<&Path>) -> Vec<(FoundFile, BTreeSet<PathBuf>)> {
    let index: BTreeMap<&Path, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.resolved.as_path(), i))
        .collect();
    // imports[i]: the files among `files` that file i imports, as its own program would.
    let imports: Vec<Vec<usize>> = files
        .iter()
        .map(|file| {
            let mut reader = DiskReader::new(PathBuf::new());
            let Ok(bytes) = reader.enter_project(&file.resolved.to_string_lossy(), config) else {
                return Vec::new();
            };
            let text = String::from_utf8_lossy(&bytes);
            tenx_compiler::syntax::file_import_paths(&text)
                .iter()
                .filter_map(|written| {
                    let name =
                        tenx_compiler::ImportReader::locate(&mut reader, &file.resolved.to_string_lossy(), written)
                            .ok()?;
                    let resolved = std::fs::canonicalize(name).ok()?;
                    index.get(resolved.as_path()).copied()
                })
                .collect()
        })
        .collect();
    let reach: Vec<BTreeSet<usize>> = (0..files.len()).map(|i| reachable(i, &imports)).collect();
    files
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            // Imported from outside its cycle: checked from there.
            let imported_from_outside = (0..files.len()).any(|j| {
                j != *i && reach.get(j).is_some_and(|r| r.contains(i)) && !reach.get(*i).is_some_and(|r| r.contains(&j))
            });
            // In a cycle: only the first of it is a root.
            let earlier_in_cycle = (0..*i)
                .any(|j| reach.get(j).is_some_and(|r| r.contains(i)) && reach.get(*i).is_some_and(|r| r.contains(&j)));
            !imported_from_outside && !earlier_in_cycle
        })
        .map(|(i, f)| {
            let mut read: BTreeSet<PathBuf> = reach
                .get(i)
                .into_iter()
                .flatten()
                .filter_map(|j| files.get(*j).map(|f| f.resolved.clone()))
                .collect();
            read.insert(f.resolved.clone());
            (f.clone(), read)
        })
        .collect()
}

/// The files reachable from `start` by following imports (not counting `start` itself unless a
/// cycle leads back to it).
fn reachable(start: usize, imports: &[Vec<usize>]) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut queue: Vec<usize> = imports.get(start).cloned().unwrap_or_default();
    while let Some(next) = queue.pop() {
        if seen.insert(next) {
            queue.extend(imports.get(next).into_iter().flatten().copied());
        }
    }
    seen
}
