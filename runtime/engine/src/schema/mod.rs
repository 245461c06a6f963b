//! JSON Schema checking for everything the engine validates: answers to questions (D3), tool
//! arguments and results, agents' `output`, and state. Validators are compiled once per schema
//! ([`SchemaCache`]), never fetch anything (no remote or file `$ref`), and report violations in
//! the one shape seed 003 writes: a JSON path and what is wrong, `$.approved: expected boolean,
//! got str` ([`SchemaViolation`]). [`normalise`] gives the canonical form of a valid value
//! (defaults filled in), as the approval package's `normalized_arguments` requires.

mod cache;
mod compiled;
mod message;
mod normalise;
mod path;

pub use cache::SchemaCache;
pub use compiled::{CompiledSchema, SchemaCompileError, SchemaViolation};
pub use message::short_type_name;
pub use normalise::normalise;
pub use path::{JsonPath, PathSegment};
