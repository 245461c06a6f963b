//! The check stage: proves properties of a resolved program. Each check lives in its own file,
//! reads the shared [`Facts`], and reports every problem it finds; no check stops another.

mod facts;
mod graph;
mod models;
mod names;
mod policy;
mod schemas;
mod templates;
pub mod topology;
mod unused;
mod validators;

pub use facts::Facts;

use crate::resolve::Program;
use tenx_diagnostics::{Diagnostic, SourceSet};

/// Runs every check.
pub fn run(program: &Program, sources: &SourceSet, diagnostics: &mut Vec<Diagnostic>) {
    let facts = Facts::new(program, sources);
    names::check(&facts, diagnostics);
    graph::check(&facts, diagnostics);
    schemas::check(&facts, diagnostics);
    templates::check(&facts, diagnostics);
    policy::check(&facts, diagnostics);
    validators::check(&facts, diagnostics);
    models::check(&facts, diagnostics);
    unused::check(&facts, diagnostics);
}
