//! (being written)

use super::Facts;
use tenx_diagnostics::Diagnostic;

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let _ = (facts, diagnostics);
}
