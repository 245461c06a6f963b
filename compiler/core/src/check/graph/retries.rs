//! A graph's `retry`: each key names a node of the graph (`TENX0302`), once (`TENX0363`), that
//! is an agent or a tool node: an interrupt node waits for a person, and a person's answer is
//! not a call that can fail and be sent again (`TENX0360`). The policies themselves, and
//! whether a tool node's tool may be retried, are checked in `check/retries`.

use super::GraphCheck;
use crate::resolve::DeclKind;
use std::collections::BTreeMap;
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let retries = c.g().retry.clone();
    let mut seen: BTreeMap<String, Span> = BTreeMap::new();
    for retry in &retries {
        let node = &retry.node;
        if let Some(first) = seen.get(&node.name) {
            let d = Diagnostic::new(
                Code::TENX0363,
                format!("`{}` is listed twice in `retry`", node.name),
                c.file,
                node.span,
            )
            .label("listed again here")
            .secondary(c.file, *first, "first listed here")
            .help("keep one retry policy per node");
            c.report(d);
            continue;
        }
        seen.insert(node.name.clone(), node.span);
        if !c.check_node_ref(node, "`retry`") {
            continue;
        }
        let is_interrupt = c
            .topology
            .index
            .get(&node.name)
            .and_then(|&id| c.topology.nodes.get(id))
            .is_some_and(|n| n.kind() == DeclKind::Interrupt);
        if is_interrupt {
            let d = Diagnostic::new(
                Code::TENX0360,
                format!("interrupt node `{}` cannot have a retry policy", node.name),
                c.file,
                node.span,
            )
            .label("an interrupt node waits for a person")
            .help("remove this entry: retries repeat calls to tools and models, and an answer is neither; `expires` bounds how long the question waits");
            c.report(d);
        }
        let is_subgraph = c
            .topology
            .index
            .get(&node.name)
            .and_then(|&id| c.topology.nodes.get(id))
            .is_some_and(|n| n.kind() == DeclKind::Graph);
        if is_subgraph {
            let d = Diagnostic::new(
                Code::TENX0360,
                format!("subgraph node `{}` cannot have a retry policy", node.name),
                c.file,
                node.span,
            )
            .label("a subgraph node runs a whole graph")
            .help(format!(
                "remove this entry, and give the nodes of graph `{}` their own `retry` policies",
                node.name
            ));
            c.report(d);
        }
    }
}
