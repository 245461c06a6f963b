//! The tenx compiler core: source text → typed AST → resolved program → checked program.
//!
//! Pure: no IO, no clock, no environment. The CLI reads files into a
//! [`tenx_diagnostics::SourceSet`] and calls [`check`]; every stage collects diagnostics and
//! keeps going, so one run reports every problem.
//!
//! Stages, one folder each: [`syntax`] (pest → AST), [`resolve`] (imports, namespace,
//! references), [`check`] (graph structure, schemas, templates, policy, validators, models,
//! unused declarations), [`lower`] (checked program → `tenx_artifact::Artifact`, see
//! [`compile`]). [`lints`] applies lint levels at the end. [`fmt`] prints a file in the canonical layout
//! (`tenxc fmt`). [`query`] answers an editor's questions about names (`tenxc lsp`).

pub mod ast;
pub mod check;
pub mod decision;
pub mod fmt;
pub mod ids;
pub mod lints;
pub mod load;
pub mod lower;
mod parallel;
pub mod query;
pub mod resolve;
pub mod retry;
pub mod schema;
pub mod source;
mod suggest;
pub mod syntax;
pub mod template;

pub use lints::LintLevels;
pub use load::{ImportReader, MemoryReader, file_imports, load_imports};
pub use resolve::{Program, import_file_name};
pub use source::add_source_bytes;
pub use suggest::did_you_mean;

use tenx_diagnostics::{Diagnostic, FileId, SourceSet, sort_and_dedup};

/// What [`check`] found: the resolved program and every diagnostic, sorted and deduplicated,
/// with lint levels applied.
#[derive(Debug)]
pub struct Checked {
    /// The resolved program (partial when there are errors).
    pub program: Program,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks the program rooted at `root`. Imported files must already be in `sources`, loaded by
/// [`load_imports`] (an import it did not record is reported as not found); stdlib modules are
/// added to `sources` as `<stdlib>/name.tenx`.
pub fn check(sources: &mut SourceSet, root: FileId, lints: &LintLevels) -> Checked {
    check_with(sources, root, lints, None)
}

/// [`check`] for an editor that checks the same program again after each edit: items whose
/// text did not change are taken from `cache` instead of being parsed again. The result is the
/// same as [`check`]'s.
pub fn check_cached(
    sources: &mut SourceSet,
    root: FileId,
    lints: &LintLevels,
    cache: &mut syntax::ParseCache,
) -> Checked {
    let checked = check_with(sources, root, lints, Some(&mut *cache));
    cache.finish();
    checked
}

fn check_with(
    sources: &mut SourceSet,
    root: FileId,
    lints: &LintLevels,
    cache: Option<&mut syntax::ParseCache>,
) -> Checked {
    let mut diagnostics = Vec::new();
    let program = resolve::resolve_with(sources, root, &mut diagnostics, cache);
    check::run(&program, sources, &mut diagnostics);
    let mut diagnostics = lints.apply(diagnostics);
    sort_and_dedup(&mut diagnostics);
    Checked { program, diagnostics }
}

/// What [`compile`] produced: the artifact (when the program has no errors) and every
/// diagnostic, as [`check`] reports them.
#[derive(Debug)]
pub struct Compiled {
    /// The lowered, not yet sealed artifact; `None` when any diagnostic is an error.
    pub artifact: Option<tenx_artifact::Artifact>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
    /// The root file's `test` blocks (what `tenxc test` runs against the artifact).
    pub tests: Vec<ast::TestDecl>,
}

/// Checks the program rooted at `root` like [`check`] and, when it has no errors, lowers it to
/// an artifact ([`lower::lower`]). Seal it with `tenx_artifact::seal` (or `sign`).
pub fn compile(sources: &mut SourceSet, root: FileId, lints: &LintLevels) -> Compiled {
    let checked = check(sources, root, lints);
    let artifact = (!checked.has_errors()).then(|| {
        let facts = check::Facts::new(&checked.program, sources);
        lower::lower(&facts)
    });
    Compiled {
        artifact,
        diagnostics: checked.diagnostics,
        tests: checked.program.tests.into_iter().map(|t| t.decl).collect(),
    }
}
