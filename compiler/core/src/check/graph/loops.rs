//! A graph's `visits` and `on_error`: each key names a node of the graph and each exit or
//! handler a node or `END` (`TENX0302`); a visit limit does not exit into the node it limits
//! (`TENX0350`), a node fails over to another node (`TENX0352`), and each node is listed once
//! in each map (`TENX0351`). The range of `max` is checked with the other limits (`TENX0702`).
//! The ways these add are part of the topology, so reachability, paths to `END`, cycles and the
//! approval proof count them (`super::super::topology`).

use super::super::topology::END;
use super::GraphCheck;
use crate::ast::Ident;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let visits = c.g().visits.clone();
    let mut seen: BTreeMap<String, Span> = BTreeMap::new();
    for limit in &visits {
        if twice(c, &mut seen, &limit.node, "visits") {
            continue;
        }
        let known = c.check_node_ref(&limit.node, "`visits`");
        if limit.exit.name != END {
            c.check_node_ref(&limit.exit, &format!("the exit of `{}` in `visits`", limit.node.name));
        }
        if known && limit.exit.name == limit.node.name {
            let d = Diagnostic::new(
                Code::TENX0350,
                format!(
                    "the visit limit of `{}` exits into `{}` itself",
                    limit.node.name, limit.node.name
                ),
                c.file,
                limit.exit.span,
            )
            .label("a run that used up its visits cannot enter it again")
            .help("name where the loop ends: `then: END`, or the node that runs after the last try");
            c.report(d);
        }
    }
    let on_error = c.g().on_error.clone();
    let mut seen: BTreeMap<String, Span> = BTreeMap::new();
    for exit in &on_error {
        if twice(c, &mut seen, &exit.node, "on_error") {
            continue;
        }
        let known = c.check_node_ref(&exit.node, "`on_error`");
        if exit.target.name != END {
            c.check_node_ref(&exit.target, &format!("the `on_error` handler of `{}`", exit.node.name));
        }
        if known && exit.target.name == exit.node.name {
            let d = Diagnostic::new(
                Code::TENX0352,
                format!("`{}` handles its own failure", exit.node.name),
                c.file,
                exit.target.span,
            )
            .label("the `on_error` handler is the failed node")
            .help("running the failed node again would fail the same way; name another node, or `END`");
            c.report(d);
        }
    }
}

/// Reports `node` listed a second time in the map `field` (`TENX0351`).
fn twice(c: &mut GraphCheck<'_, '_>, seen: &mut BTreeMap<String, Span>, node: &Ident, field: &str) -> bool {
    if let Some(first) = seen.get(&node.name) {
        let d = Diagnostic::new(
            Code::TENX0351,
            format!("`{}` is listed twice in `{field}`", node.name),
            c.file,
            node.span,
        )
        .label("listed again here")
        .secondary(c.file, *first, "first listed here")
        .help("keep one entry");
        c.report(d);
        return true;
    }
    seen.insert(node.name.clone(), node.span);
    false
}
