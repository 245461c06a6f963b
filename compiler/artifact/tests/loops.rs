//! A graph's visit limits and `on_error` handlers: `seal` refuses one that names no node, leads
//! nowhere or into its own node, repeats a node, or has a `max` out of range; and the risk policy
//! counts their ways (a handler or an exit around an approval is refused).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::sample;
use tenx_artifact::{Artifact, ErrorExit, Graph, MAX_VISITS, SealError, VisitLimit, seal};

fn graph(artifact: &mut Artifact) -> &mut Graph {
    artifact.graphs.get_mut("support_desk").unwrap()
}

fn limit(node: &str, max: u64, exit: &str) -> VisitLimit {
    VisitLimit {
        node: node.into(),
        max,
        exit: exit.into(),
    }
}

fn handler(node: &str, target: &str) -> ErrorExit {
    ErrorExit {
        node: node.into(),
        target: target.into(),
    }
}

fn refused(edit: impl FnOnce(&mut Graph), expected: &str) {
    let mut artifact = sample();
    edit(graph(&mut artifact));
    match seal(artifact) {
        Err(SealError::Inconsistent(message)) => {
            assert!(message.contains(expected), "expected `{expected}` in `{message}`");
        }
        other => panic!("expected Inconsistent, got {other:?}"),
    }
}

#[test]
fn limits_and_handlers_that_lead_somewhere_else_seal() {
    let mut artifact = sample();
    let g = graph(&mut artifact);
    let node = g.nodes.keys().next().cloned().unwrap();
    g.visit_limits = vec![limit(&node, MAX_VISITS, "END")];
    g.on_error = vec![handler(&node, "END")];
    seal(artifact).unwrap();
}

#[test]
fn structural_rules() {
    refused(
        |g| g.visit_limits = vec![limit("ghost", 2, "END")],
        "visit limit of unknown node `ghost`",
    );
    refused(
        |g| {
            let node = g.entry.clone();
            g.visit_limits = vec![limit(&node, 2, &node)];
        },
        "which is not another node or `END`",
    );
    refused(
        |g| {
            let node = g.entry.clone();
            g.visit_limits = vec![limit(&node, 0, "END")];
        },
        "must be 1 to 1000, not 0",
    );
    refused(
        |g| {
            let node = g.entry.clone();
            g.visit_limits = vec![limit(&node, 1, "END"), limit(&node, 2, "END")];
        },
        "has two visit limits",
    );
    refused(
        |g| {
            let node = g.entry.clone();
            g.on_error = vec![handler(&node, "nowhere")];
        },
        "which is not another node or `END`",
    );
    refused(
        |g| g.on_error = vec![handler("ghost", "END")],
        "`on_error` of unknown node `ghost`",
    );
    refused(
        |g| {
            let node = g.entry.clone();
            let other = g.nodes.keys().find(|n| **n != node).cloned().unwrap();
            g.on_error = vec![handler(&node, "END"), handler(&node, &other)];
        },
        "has two `on_error` handlers",
    );
}
