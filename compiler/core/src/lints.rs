//! Lint levels: `allow` drops a code, `deny` makes it an error, `deny warnings` makes every
//! warning an error. The CLI fills these from flags and `tenx.toml`.

use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Severity};

/// The level a code is reported at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported as a warning.
    Warn,
    /// Reported as an error.
    Deny,
}

/// Per-code levels plus `deny warnings`.
#[derive(Debug, Clone, Default)]
pub struct LintLevels {
    levels: BTreeMap<Code, Level>,
    /// Every remaining warning becomes an error.
    pub deny_warnings: bool,
}

impl LintLevels {
    /// Sets the level of one code. Later calls win.
    pub fn set(&mut self, code: Code, level: Level) {
        self.levels.insert(code, level);
    }

    /// The level set for a code, if any.
    pub fn get(&self, code: Code) -> Option<Level> {
        self.levels.get(&code).copied()
    }

    /// Applies the levels. Errors that are errors by default cannot be allowed: a program that
    /// is unsafe or broken stays rejected.
    pub fn apply(&self, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        diagnostics
            .into_iter()
            .filter_map(|mut d| {
                let default = d.code.default_severity();
                match self.levels.get(&d.code) {
                    Some(Level::Allow) if default == Severity::Warning => return None,
                    Some(Level::Deny) => d.severity = Severity::Error,
                    Some(Level::Warn) if default == Severity::Warning => d.severity = Severity::Warning,
                    _ => {}
                }
                if self.deny_warnings && d.severity == Severity::Warning {
                    d.severity = Severity::Error;
                }
                Some(d)
            })
            .collect()
    }

    /// Whether a code can be allowed (only warnings can).
    pub fn can_allow(code: Code) -> bool {
        code.default_severity() == Severity::Warning
    }
}
