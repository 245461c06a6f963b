//! The tenx compiler core: source text → typed AST → resolved program → checked program.
//!
//! Pure: no IO, no clock, no environment. The CLI reads files into a
//! [`tenx_diagnostics::SourceSet`] and calls [`compile`]; every stage collects diagnostics and
//! keeps going, so one run reports every problem.

pub mod ast;
pub mod syntax;
mod suggest;

pub use suggest::did_you_mean;
