//! The resolve stage: gathers the declarations of a program (the root file, the files it
//! imports, and the stdlib declarations it imports) into one namespace, reports duplicates, and
//! checks that every name used refers to a declaration of the right kind.

mod imports;
mod program;
mod references;
mod reserved;

pub use imports::{byte_size, import_file_name};
pub use program::{
    AgentId, DeclKind, DeclRef, Decls, GraphId, InterruptId, Located, ModelId, Program, SchemaId, Symbol, TagId,
    ToolId, ValidatorId,
};
pub(crate) use program::{kind_of, unknown_name_help};
pub use references::BUILTIN_TYPES;

use tenx_diagnostics::{Diagnostic, FileId, SourceSet};

/// Builds the program rooted at `root`: parses it and everything it imports, then resolves
/// names. Files imported with `import "…"` must already be in `sources` (the CLI loads them);
/// stdlib modules are added to `sources` here.
pub fn resolve(sources: &mut SourceSet, root: FileId, diagnostics: &mut Vec<Diagnostic>) -> Program {
    resolve_with(sources, root, diagnostics, None)
}

/// [`resolve`], parsing through `cache` (see [`crate::syntax::ParseCache`]).
pub fn resolve_with(
    sources: &mut SourceSet,
    root: FileId,
    diagnostics: &mut Vec<Diagnostic>,
    cache: Option<&mut crate::syntax::ParseCache>,
) -> Program {
    let mut modules = imports::load_modules(sources, root, diagnostics, cache);
    reserved::check(&mut modules, diagnostics);
    let program = program::Program::build(root, modules, diagnostics);
    references::check(&program, diagnostics);
    program
}
