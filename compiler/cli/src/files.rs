//! Finding and reading source files: directories are walked for `.tenx` files in sorted order,
//! display names are relative and use `/`, and each root's imports are loaded.

use miette::{IntoDiagnostic, Result, WrapErr, miette};
use std::path::{Path, PathBuf};
use tenx_diagnostics::{Diagnostic, FileId, SourceSet};

/// The `.tenx` files named by the command line, in a stable order.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .into_diagnostic()
            .wrap_err_with(|| format!("cannot read `{}`", path.display()))?;
        if meta.is_dir() {
            let before = files.len();
            walk(path, &mut files)?;
            if files.len() == before {
                return Err(miette!(
                    help = "pass `.tenx` files, or a directory that contains some",
                    "no `.tenx` files found under `{}`",
                    path.display()
                ));
            }
        } else {
            files.push(path.clone());
        }
    }
    files.dedup();
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read the directory `{}`", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if entry.is_dir() {
            walk(&entry, out)?;
        } else if entry.extension().is_some_and(|e| e == "tenx") {
            out.push(entry);
        }
    }
    Ok(())
}

/// The display name of a path: as given, with `/` separators and no leading `./`.
pub fn display_name(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut s = text.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}

/// Reads a file into the set. Invalid UTF-8 becomes a `TENX0006` diagnostic (the file is kept,
/// lossily decoded, so the diagnostic can point into it) and `Ok(None)`.
pub fn read_into(
    sources: &mut SourceSet,
    name: &str,
    path: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<FileId>> {
    let bytes = std::fs::read(path)
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot read `{}`", path.display()))?;
    let (id, invalid) = tenx_compiler::add_source_bytes(sources, name, bytes);
    match invalid {
        Some(diagnostic) => {
            diagnostics.push(diagnostic);
            Ok(None)
        }
        None => Ok(Some(id)),
    }
}

/// Reads the root file at `path` (named by [`display_name`]) and every file it imports into the
/// set, as `tenxc check` does. `Ok(None)` when the root is not valid UTF-8 (reported in
/// `diagnostics`); an IO error reading the root is an `Err`.
pub fn read_program(sources: &mut SourceSet, path: &Path, diagnostics: &mut Vec<Diagnostic>) -> Result<Option<FileId>> {
    let name = display_name(path);
    let Some(root) = read_into(sources, &name, path, diagnostics)? else {
        return Ok(None);
    };
    load_imports(sources, root, diagnostics);
    Ok(Some(root))
}

/// Reads the program rooted at `path` and compiles it: its files, every diagnostic, and the
/// artifact when there is no error. Shared by `build` and `graph`.
pub fn compile_program(
    path: &Path,
    lints: &tenx_compiler::LintLevels,
) -> Result<(SourceSet, Vec<Diagnostic>, Option<tenx_artifact::Artifact>)> {
    let mut sources = SourceSet::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let artifact = match read_program(&mut sources, path, &mut diagnostics)? {
        Some(root) => {
            let compiled = tenx_compiler::compile(&mut sources, root, lints);
            diagnostics.extend(compiled.diagnostics);
            compiled.artifact
        }
        None => None,
    };
    Ok((sources, diagnostics, artifact))
}

/// Loads every file a root imports (transitively) into the set. A missing or unreadable file
/// is left out (the compiler reports the import); invalid UTF-8 is reported here.
pub fn load_imports(sources: &mut SourceSet, root: FileId, diagnostics: &mut Vec<Diagnostic>) {
    let mut invalid: Vec<(String, usize)> = Vec::new();
    tenx_compiler::load_imports(sources, root, |name| {
        let bytes = std::fs::read(name).ok()?;
        match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(error) => {
                invalid.push((name.to_string(), error.utf8_error().valid_up_to()));
                Some(String::from_utf8_lossy(error.as_bytes()).into_owned())
            }
        }
    });
    for (name, at) in invalid {
        if let Some(id) = sources.find(&name) {
            diagnostics.push(tenx_compiler::source::invalid_utf8(&name, id, at));
        }
    }
}

/// The files that are not imported by another of `files`: those are the programs' roots. A
/// file that another checked file imports is checked as part of that program.
pub fn roots(files: &[PathBuf]) -> Vec<PathBuf> {
    if files.len() < 2 {
        return files.to_vec(); // a single file is its own root: no need to read it twice
    }
    let names: Vec<String> = files.iter().map(|p| display_name(p)).collect();
    let mut imported = std::collections::BTreeSet::new();
    for (path, name) in files.iter().zip(&names) {
        if let Ok(text) = std::fs::read_to_string(path) {
            imported.extend(
                tenx_compiler::file_imports(name, &text)
                    .into_iter()
                    .filter(|i| i != name),
            );
        }
    }
    files
        .iter()
        .zip(&names)
        .filter(|(_, n)| !imported.contains(*n))
        .map(|(p, _)| p.clone())
        .collect()
}
