//! A graph's forks and reducers (see [`crate::model::Fork`]): each fork leaves a node that has
//! no other way on, names real nodes and state fields, and its branches are *regions*: the nodes
//! a branch can reach before its join are reached from nowhere else (no way into the middle of a
//! branch, no run starting inside one), never lead back to the fork's node, and belong to one
//! branch only. Forks nest: a fork inside a branch has branches that are regions inside it, and
//! joins inside it (or at its join, or `END`); a fork outside every branch joins outside them.
//! The engine relies on this to run each branch with its own state and conversation and to know,
//! at every node, which branch it is in.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::{Problems, check_sorted};
use crate::model::{END, Fork, ForkKind, Graph, MAX_WIDTH, Reduce};

/// Checks `forks` and `reducers` of the graph `name`.
pub(super) fn check(name: &str, graph: &Graph, problems: &mut Problems) {
    let report = |problems: &mut Problems, message: String| problems.push(format!("graph `{name}`: {message}"));
    check_sorted(&graph.forks, || format!("graph `{name}`: `forks`"), problems);
    check_sorted(&graph.reducers, || format!("graph `{name}`: `reducers`"), problems);
    let fields = state_fields(graph);
    let mut froms = BTreeSet::new();
    for fork in &graph.forks {
        let from = fork.from.as_str();
        if !froms.insert(from) {
            report(problems, format!("node `{from}` has two forks"));
        }
        if !graph.nodes.contains_key(from) {
            report(problems, format!("fork from unknown node `{from}`"));
        }
        let has_edge = graph
            .edges
            .iter()
            .any(|edge| edge.from == from && edge.kind == crate::model::EdgeKind::Plain);
        if has_edge || graph.routes.iter().any(|route| route.from == from) {
            report(problems, format!("node `{from}` has a fork and another way on"));
        }
        let distinct: BTreeSet<&str> = fork.branches.iter().map(String::as_str).collect();
        if distinct.len() != fork.branches.len() {
            report(problems, format!("the fork out of `{from}` names a branch twice"));
        }
        for branch in &fork.branches {
            if !graph.nodes.contains_key(branch) {
                report(
                    problems,
                    format!("the fork out of `{from}` starts a branch at unknown node `{branch}`"),
                );
            }
            if *branch == fork.join || *branch == fork.from {
                report(
                    problems,
                    format!("the fork out of `{from}` starts a branch at `{branch}`, its own fork or join"),
                );
            }
        }
        if fork.join != END && !graph.nodes.contains_key(&fork.join) {
            report(
                problems,
                format!("the fork out of `{from}` joins at unknown node `{}`", fork.join),
            );
        }
        if fork.join == fork.from {
            report(problems, format!("the fork out of `{from}` joins at its own node"));
        }
        match fork.kind {
            ForkKind::Parallel => {
                if fork.branches.len() < 2 {
                    report(
                        problems,
                        format!("the parallel fork out of `{from}` needs at least two branches"),
                    );
                }
                if fork.over.is_some() || fork.item.is_some() {
                    report(
                        problems,
                        format!("the parallel fork out of `{from}` has `over` or `item`, which only a map has"),
                    );
                }
            }
            ForkKind::Map => {
                if fork.branches.len() != 1 {
                    report(problems, format!("the map out of `{from}` must start exactly one node"));
                }
                match (&fork.over, &fork.item) {
                    (Some(over), Some(item)) => {
                        for field in [over, item] {
                            if !fields.contains(field.as_str()) {
                                report(
                                    problems,
                                    format!("the map out of `{from}` names `{field}`, which is not a state field"),
                                );
                            }
                        }
                        if over == item {
                            report(
                                problems,
                                format!("the map out of `{from}` reads its items from and writes them to `{over}`"),
                            );
                        }
                    }
                    _ => report(
                        problems,
                        format!("the map out of `{from}` needs both `over` and `item`"),
                    ),
                }
            }
        }
        if let Some(width) = fork.max_concurrency
            && !(1..=MAX_WIDTH).contains(&width)
        {
            report(
                problems,
                format!("the fork out of `{from}` runs at most {width} branches at once; it must be 1 to {MAX_WIDTH}"),
            );
        }
    }
    check_regions(graph, &mut |message| report(problems, message));
    let starts: BTreeSet<&str> = graph
        .forks
        .iter()
        .filter(|fork| fork.kind == ForkKind::Parallel)
        .flat_map(|fork| fork.branches.iter().map(String::as_str))
        .collect();
    let mut previous: Option<&str> = None;
    for reducer in &graph.reducers {
        if previous == Some(reducer.field.as_str()) {
            report(problems, format!("state field `{}` has two reducers", reducer.field));
        }
        previous = Some(&reducer.field);
        if !fields.contains(reducer.field.as_str()) {
            report(
                problems,
                format!("reducer of `{}`, which is not a state field", reducer.field),
            );
        }
        if reducer.reduce != Reduce::Last && !reducer.order.is_empty() {
            report(
                problems,
                format!(
                    "the reducer of `{}` has an `order`, which only `last` has",
                    reducer.field
                ),
            );
        }
        let distinct: BTreeSet<&str> = reducer.order.iter().map(String::as_str).collect();
        if distinct.len() != reducer.order.len() {
            report(
                problems,
                format!("the reducer of `{}` names a branch twice", reducer.field),
            );
        }
        for branch in &reducer.order {
            if !starts.contains(branch.as_str()) {
                report(
                    problems,
                    format!(
                        "the reducer of `{}` orders `{branch}`, which starts no parallel branch",
                        reducer.field
                    ),
                );
            }
        }
    }
}

/// The top-level properties of the graph's state schema.
fn state_fields(graph: &Graph) -> BTreeSet<String> {
    match graph.state_schema.to_value().get("properties") {
        Some(serde_json::Value::Object(properties)) => properties.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

/// Checks that every branch is a region of its own (see the module docs).
fn check_regions(graph: &Graph, report: &mut dyn FnMut(String)) {
    if graph.forks.is_empty() {
        return;
    }
    let ways = ways(graph);
    let starts: BTreeSet<&str> = std::iter::once(graph.entry.as_str())
        .chain(graph.entries.iter().map(String::as_str))
        .collect();
    // Each node in a branch, with the branch (fork, first node) it belongs to.
    let mut owner: BTreeMap<&str, (&Fork, &str)> = BTreeMap::new();
    for fork in &graph.forks {
        for branch in &fork.branches {
            for node in region(&ways, branch, &fork.join) {
                if node == fork.from {
                    report(format!(
                        "the branch at `{branch}` leads back to `{}`, the node it forked from",
                        fork.from
                    ));
                }
                if starts.contains(node) {
                    report(format!(
                        "`{node}` is inside the branch at `{branch}`, and a run may start there"
                    ));
                }
                match owner.get(node) {
                    Some(&(_, other)) if other != branch.as_str() => {
                        report(format!("`{node}` is in two branches, at `{other}` and at `{branch}`"));
                    }
                    _ => {
                        owner.insert(node, (fork, branch.as_str()));
                    }
                }
            }
        }
    }
    // Branches are told apart by their first node (a node is in one branch only).
    let branch_of = |node: &str| owner.get(node).map(|&(_, branch)| branch);
    // A fork's way to its join is checked below, with the fork.
    let joins: BTreeSet<(&str, &str)> = graph
        .forks
        .iter()
        .map(|fork| (fork.from.as_str(), fork.join.as_str()))
        .collect();
    for (from, tos) in &ways {
        for to in tos {
            let Some(&(fork, branch)) = owner.get(to) else { continue };
            if joins.contains(&(*from, *to)) {
                continue;
            }
            let inside = branch_of(from) == Some(branch);
            let forks_here = *from == fork.from && *to == branch;
            // A branch of a fork inside this branch ends by a way into that fork's join.
            let joins_here = owner
                .get(from)
                .is_some_and(|&(inner, _)| inner.join == *to && branch_of(&inner.from) == Some(branch));
            if !inside && !forks_here && !joins_here {
                report(format!(
                    "`{from}` leads into `{to}`, inside the branch at `{branch}`; only the fork out of `{}` enters a branch",
                    fork.from
                ));
            }
        }
    }
    for fork in graph.forks.iter().filter(|fork| fork.join != END) {
        let home = owner.get(fork.from.as_str());
        let at_home_join = home.is_some_and(|&(outer, _)| outer.join == fork.join);
        if branch_of(&fork.join) != home.map(|&(_, branch)| branch) && !at_home_join {
            report(format!(
                "the fork out of `{}` joins at `{}`, in another region than the one it forks in",
                fork.from, fork.join
            ));
        }
    }
}

/// Every way out of each node: plain and handoff edges, route arms, `on_error` handlers, each
/// fork's way to its join, and visit-limit exits (from the nodes that lead into the limited node).
fn ways(graph: &Graph) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut ways: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for edge in &graph.edges {
        ways.entry(&edge.from).or_default().insert(&edge.to);
    }
    for route in &graph.routes {
        ways.entry(&route.from)
            .or_default()
            .extend(route.arms.iter().map(|arm| arm.target()));
    }
    for exit in &graph.on_error {
        ways.entry(&exit.node).or_default().insert(&exit.target);
    }
    // A fork inside a branch goes on at its join, inside the same branch (its ways into its own
    // branches are not counted: they start regions of their own).
    for fork in &graph.forks {
        ways.entry(&fork.from).or_default().insert(&fork.join);
    }
    for limit in &graph.visit_limits {
        let into: Vec<&str> = ways
            .iter()
            .filter(|(_, tos)| tos.contains(limit.node.as_str()))
            .map(|(from, _)| *from)
            .collect();
        for from in into {
            ways.entry(from).or_default().insert(&limit.exit);
        }
    }
    ways
}

/// The nodes a branch starting at `start` can reach before `join` (and `END`), `start` first.
fn region<'a>(ways: &BTreeMap<&'a str, BTreeSet<&'a str>>, start: &'a str, join: &str) -> Vec<&'a str> {
    let mut seen = BTreeSet::from([start]);
    let mut order = vec![start];
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in ways.get(node).into_iter().flatten() {
            if next != join && next != END && seen.insert(next) {
                order.push(next);
                queue.push_back(next);
            }
        }
    }
    order
}
