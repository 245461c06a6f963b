//! The check stage: proves properties of a resolved program. Each check lives in its own file,
//! reads the shared [`Facts`], and reports every problem it finds; no check stops another.

mod answer_routes;
mod approved_inputs;
pub(crate) mod approvers;
mod bindings;
pub(crate) mod bound_args;
mod decisions;
pub(crate) mod evidence;
mod facts;
mod feedback;
mod graph;
mod guards;
mod model_names;
mod models;
mod names;
mod paths;
mod policy;
mod retries;
mod risk_rules;
mod schemas;
mod templates;
mod test_blocks;
pub mod topology;
mod unused;
mod validators;
pub mod writers;
// Agents called as tools by other agents.
mod agent_tools;

pub use facts::Facts;

use crate::resolve::Program;
use tenx_diagnostics::{Diagnostic, SourceSet};

/// Runs every check. `diagnostics` already holds what parsing and name resolution found.
pub fn run(program: &Program, sources: &SourceSet, diagnostics: &mut Vec<Diagnostic>) {
    // A misspelt or unreadable use makes a declaration look unused; report unused declarations
    // only once every name resolves.
    let names_resolve = !diagnostics.iter().any(|d| d.is_error() && d.code.as_str() < "TENX0200");
    let facts = Facts::new(program, sources);
    // Schema checks are the costliest and independent of the others: run them alongside.
    let schema_diagnostics = std::thread::scope(|scope| {
        let schema_thread = scope.spawn(|| {
            let mut found = Vec::new();
            schemas::check(&facts, &mut found);
            found
        });
        names::check(&facts, diagnostics);
        model_names::check(&facts, diagnostics);
        graph::check(&facts, diagnostics);
        templates::check(&facts, diagnostics);
        policy::check(&facts, diagnostics);
        evidence::check(&facts, diagnostics);
        approvers::check(&facts, diagnostics);
        decisions::check(&facts, diagnostics);
        feedback::check(&facts, diagnostics);
        answer_routes::check(&facts, diagnostics);
        approved_inputs::check(&facts, diagnostics);
        validators::check(&facts, diagnostics);
        guards::check(&facts, diagnostics);
        models::check(&facts, diagnostics);
        bindings::check(&facts, diagnostics);
        writers::check(&facts, diagnostics);
        bound_args::check(&facts, diagnostics);
        risk_rules::check(&facts, diagnostics);
        retries::check(&facts, diagnostics);
        test_blocks::check(&facts, diagnostics);
        agent_tools::check(&facts, diagnostics);
        if names_resolve {
            unused::check(&facts, diagnostics);
        }
        // A panic in the schema checks panics the caller: never a pass with checks missing.
        crate::parallel::join(schema_thread)
    });
    diagnostics.extend(schema_diagnostics);
}
