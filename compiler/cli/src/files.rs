//! Reading programs for the commands: the programs a command line names
//! ([`tenxc::programs`]), and each program's files read through the confined
//! [`tenxc::disk::DiskReader`], with what the run covered for the summary line.

use crate::check_cmd::Coverage;
use miette::{Result, miette};
use std::path::{Path, PathBuf};
use tenx_diagnostics::{Diagnostic, FileId, ImportRefusal, SourceSet};
use tenxc::disk::DiskReader;
use tenxc::programs::{self, FoundFile};

/// The program roots among the files named by `paths` (see [`programs::roots`]).
pub fn find_roots(paths: &[PathBuf], config: Option<&Path>) -> Result<Vec<FoundFile>> {
    let files = programs::find_files(paths).map_err(|error| match error {
        programs::FindError::NoSources { .. } => {
            miette!(
                help = "pass `.tenx` files, or a directory that contains some",
                "{error}"
            )
        }
        programs::FindError::LinkOutside { .. } => miette!(
            help = "remove the link, or name its target on the command line if it should be checked",
            "{error}"
        ),
        programs::FindError::Unreadable { .. } => miette!("{error}"),
    })?;
    Ok(programs::roots(&files, config))
}

/// A reader of programs from the working directory.
pub fn disk_reader() -> Result<DiskReader> {
    let cwd = std::env::current_dir().map_err(|error| miette!("cannot read the working directory: {error}"))?;
    Ok(DiskReader::new(cwd))
}

/// Reads the root file named `name` and every file it imports into the set, confined to the
/// program's project folder. `Ok(None)` when the root is not valid UTF-8 (reported in
/// `diagnostics`); a root that cannot be read is an `Err`.
pub fn read_program(
    sources: &mut SourceSet,
    reader: &mut DiskReader,
    name: &str,
    config: Option<&Path>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<FileId>> {
    let bytes = reader
        .enter_project(name, config)
        .map_err(|refusal| root_refused(name, &refusal))?;
    let (root, invalid) = tenx_compiler::add_source_bytes(sources, name, bytes);
    if let Some(diagnostic) = invalid {
        diagnostics.push(diagnostic);
        return Ok(None);
    }
    diagnostics.extend(tenx_compiler::load_imports(sources, root, reader));
    Ok(Some(root))
}

/// The error for a root file that cannot be read.
fn root_refused(name: &str, refusal: &ImportRefusal) -> miette::Report {
    match refusal {
        ImportRefusal::NotFound => miette!("cannot read `{name}`: not found"),
        ImportRefusal::Unreadable { reason } => miette!("cannot read `{name}`: {reason}"),
        ImportRefusal::NotAFile { kind } => miette!(
            help = "pass a `.tenx` file, or a directory to check every `.tenx` file below it",
            "cannot read `{name}`: it is {kind}, not a regular file"
        ),
        ImportRefusal::TooLarge { bytes, limit } => miette!(
            "cannot read `{name}`: {bytes} bytes, more than the {} a source file may hold",
            tenx_compiler::resolve::byte_size(*limit)
        ),
        // Roots are never refused for their place: the project folder is found from them.
        ImportRefusal::OutsideProject { project } => miette!("cannot read `{name}`: outside `{project}`"),
    }
}

/// A program read and compiled by `build` or `graph`.
pub struct CompiledProgram {
    /// Its files.
    pub sources: SourceSet,
    /// Every diagnostic.
    pub diagnostics: Vec<Diagnostic>,
    /// The artifact, when there is no error.
    pub artifact: Option<tenx_artifact::Artifact>,
    /// What was read, for the summary line.
    pub coverage: Coverage,
}

/// Reads the program that `path` names (a root file, or a directory holding one program) and
/// compiles it. Shared by `build` and `graph`.
pub fn compile_program(
    path: &Path,
    command: &str,
    lints: &tenx_compiler::LintLevels,
    config: Option<&Path>,
) -> Result<CompiledProgram> {
    let root_path = single_root(path, command, config)?;
    let mut sources = SourceSet::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut reader = disk_reader()?;
    let name = programs::display_name(&root_path);
    let root = read_program(&mut sources, &mut reader, &name, config, &mut diagnostics)?;
    let mut coverage = Coverage::default();
    coverage.add(&sources, &name, root);
    let artifact = match root {
        Some(root) => {
            let compiled = tenx_compiler::compile(&mut sources, root, lints);
            diagnostics.extend(compiled.diagnostics);
            compiled.artifact
        }
        None => None,
    };
    Ok(CompiledProgram {
        sources,
        diagnostics,
        artifact,
        coverage,
    })
}

/// The one program root that `path` names, for commands that compile one program (`build`,
/// `graph`): the file itself, or the only program found in a directory.
pub fn single_root(path: &Path, command: &str, config: Option<&Path>) -> Result<PathBuf> {
    let roots = find_roots(&[path.to_path_buf()], config)?;
    match roots.as_slice() {
        [root] => Ok(root.path.clone()),
        _ => {
            let names: Vec<String> = roots.iter().map(|r| format!("`{}`", r.name)).collect();
            Err(miette!(
                help = format!(
                    "pass one of them: `tenxc {command} {}`",
                    roots.first().map_or("FILE", |r| r.name.as_str())
                ),
                "`{}` holds {} programs ({}); `tenxc {command}` takes one",
                path.display(),
                roots.len(),
                names.join(", ")
            ))
        }
    }
}
