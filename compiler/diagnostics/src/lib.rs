//! Diagnostics for tenx: the one [`Diagnostic`] type every stage produces, the code table
//! ([`Code`], the only registry of codes), the catalog pages behind `tenxc explain`, the
//! [`SourceSet`] that spans point into (with what each file import resolved to), and the renderers (human, JSON, SARIF, GitHub).

mod codes;
mod diagnostic;
mod imports;
pub mod render;
mod source;
mod span;

pub use codes::{Code, Severity};
pub use diagnostic::{Diagnostic, Label, sort_and_dedup};
pub use imports::ImportRefusal;
pub use source::{FileId, LineCol, SourceFile, SourceSet};
pub use span::Span;
