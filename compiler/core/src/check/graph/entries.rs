//! Extra entries (`entries = [review, approve_post]`): the other nodes a run may start at,
//! besides `entry`. Each names a node of the graph (`TENX0302`, as `entry` does), is not the
//! graph's `entry` (`TENX0326`) and is listed once (`TENX0327`). Reachability counts from every
//! entry (`reachability` in the parent module), and the approval dominance proof runs from each
//! (`check/policy.rs`): an extra entry past an approving interrupt is refused there.

use super::END;
use super::GraphCheck;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let entries = c.g().entries.clone();
    let entry = c.g().entry.clone();
    let graph = c.g().name.name.clone();
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for ident in &entries {
        if let Some(first) = seen.get(ident.name.as_str()) {
            let d = Diagnostic::new(
                Code::TENX0327,
                format!("`{}` is listed twice in `entries`", ident.name),
                c.file,
                ident.span,
            )
            .label("listed again here")
            .secondary(c.file, *first, "first listed here")
            .help("list each extra entry once");
            c.report(d);
            continue;
        }
        seen.insert(&ident.name, ident.span);
        if ident.name == END {
            let d = Diagnostic::new(Code::TENX0302, "an extra entry cannot be `END`", c.file, ident.span)
                .label("a run must start at a node")
                .help("remove `END` from `entries`");
            c.report(d);
            continue;
        }
        if let Some(entry) = entry.as_ref().filter(|e| e.name == ident.name) {
            let d = Diagnostic::new(
                Code::TENX0326,
                format!(
                    "`{}` is the entry of graph `{graph}` and is listed in `entries` too",
                    ident.name
                ),
                c.file,
                ident.span,
            )
            .label("already the entry")
            .secondary(c.file, entry.span, "the entry is set here")
            .help(format!("remove `{}` from `entries`", ident.name))
            .note("`entries` lists the other nodes a run may start at, besides `entry`");
            c.report(d);
            continue;
        }
        c.check_node_ref(ident, "`entries`");
    }
}
