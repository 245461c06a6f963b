//! Renderers: human text (codespan-reporting), JSON, SARIF 2.1.0 and GitHub workflow commands.

mod github;
mod human;
mod json;
mod sarif;

pub use github::render_github;
pub use human::{HumanOptions, render_human};
pub use json::{JsonDiagnostic, render_json, to_json};
pub use sarif::render_sarif;
