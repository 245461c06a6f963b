//! A graph's forks (`parallel` and `map` blocks): names that are nodes (`TENX0302`), a sound
//! shape (`TENX0380`), a `map` over a list field into a field that holds its items (`TENX0382`,
//! `TENX0383`; the width, `TENX0702`, is checked with the other limits in `check/validators.rs`),
//! and branches that are *regions* (`TENX0381`): the nodes a branch reaches before its join are
//! reached from nowhere else, never lead back to the fork's node, belong to one branch and are no
//! start. Forks nest: a branch may hold a fork of its own, whose branches are regions inside it and
//! whose join is in it (or is its join, or `END`). These are the rules the artifact's fork check
//! (`tenx_artifact` `check/forks.rs`) enforces, on the same ways (edges, route arms, `on_error`
//! handlers, visit-limit exits, and from each fork's node to its join; not into its branches), so
//! what check accepts seals.

use super::GraphCheck;
use super::routes::{FieldType, field_type};
use crate::ast::{Fork, ForkKind, GraphDecl};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use tenx_diagnostics::{Code, Diagnostic, Span};

/// Every way out of each node other than forks, with the span of the first one to each target.
pub(crate) type Ways<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Span>>;

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let forks = c.g().forks.clone();
    for fork in &forks {
        names(c, fork);
        shape(c, fork);
        if fork.kind == ForkKind::Map {
            map_fields(c, fork);
        }
    }
    regions(c);
}

/// The fork's node, branches and join are nodes of the graph (the join may be `END`).
fn names(c: &mut GraphCheck<'_, '_>, fork: &Fork) {
    let what = format!("the {} out of `{}`", fork.kind.keyword(), fork.from.name);
    c.check_node_ref(&fork.from, &what);
    for branch in &fork.branches {
        c.check_node_ref(branch, &what);
    }
    if let Some(join) = fork.join.as_ref().filter(|j| j.name != super::END) {
        c.check_node_ref(join, &what);
    }
}

fn shape(c: &mut GraphCheck<'_, '_>, fork: &Fork) {
    let from = &fork.from.name;
    let keyword = fork.kind.keyword();
    let file = c.file;
    let mut found = Vec::new();
    if fork.kind == ForkKind::Parallel && fork.branches.len() < 2 {
        let span = fork.branches_span.unwrap_or(fork.span);
        let help = match fork.branches.first() {
            Some(one) => format!(
                "add another branch, or replace the block with the edge `{from} -> {}`",
                one.name
            ),
            None => "list at least two nodes in `branches`".to_owned(),
        };
        found.push(
            Diagnostic::new(
                Code::TENX0380,
                format!(
                    "the parallel out of `{from}` has {} branch{}",
                    fork.branches.len(),
                    if fork.branches.len() == 1 { "" } else { "es" }
                ),
                file,
                span,
            )
            .label("a `parallel` needs at least two branches")
            .help(help),
        );
    }
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for branch in &fork.branches {
        if let Some(first) = seen.get(branch.name.as_str()) {
            found.push(
                Diagnostic::new(
                    Code::TENX0380,
                    format!("the {keyword} out of `{from}` lists the branch `{}` twice", branch.name),
                    file,
                    branch.span,
                )
                .label("listed again here")
                .secondary(file, *first, "first listed here")
                .help("list each branch once; each branch runs once per fork"),
            );
            continue;
        }
        seen.insert(&branch.name, branch.span);
        if branch.name == *from {
            found.push(
                Diagnostic::new(
                    Code::TENX0380,
                    format!("the {keyword} out of `{from}` starts a branch at `{from}` itself"),
                    file,
                    branch.span,
                )
                .label("the fork's own node")
                .secondary(file, fork.from.span, "the fork leaves this node")
                .help("start each branch at a node that runs after the fork"),
            );
        } else if fork.join.as_ref().is_some_and(|j| j.name == branch.name) {
            found.push(
                Diagnostic::new(
                    Code::TENX0380,
                    format!(
                        "the {keyword} out of `{from}` starts a branch at its join `{}`",
                        branch.name
                    ),
                    file,
                    branch.span,
                )
                .label("this is the join")
                .help("the join runs once after every branch has ended; start the branches at other nodes"),
            );
        }
    }
    if let Some(join) = fork.join.as_ref().filter(|j| j.name == *from) {
        found.push(
            Diagnostic::new(Code::TENX0380, format!("the {keyword} out of `{from}` joins at `{from}` itself"), file, join.span)
                .label("the fork's own node")
                .help("join at the node that runs after the branches, or at `END`; a fork back into its own node is not supported"),
        );
    }
    for d in found {
        c.report(d);
    }
}

/// A map reads its items from a list field and gives each branch one in its `item` field.
fn map_fields(c: &mut GraphCheck<'_, '_>, fork: &Fork) {
    let (Some(over), Some(item)) = (&fork.over, &fork.item) else {
        return;
    };
    let from = &fork.from.name;
    let file = c.file;
    let graph = c.g().name.name.clone();
    let over_param = c.state_field(&over.name).cloned();
    let Some(over_param) = over_param else {
        let d = Diagnostic::new(
            Code::TENX0382,
            format!(
                "the map out of `{from}` reads its items from `{}`, which is not a state field of graph `{graph}`",
                over.name
            ),
            file,
            over.span,
        )
        .label("not a state field")
        .help(format!("declare `{}: list<…>` in the graph's `state`", over.name));
        c.report(d);
        return;
    };
    let over_type = field_type(c, &over_param);
    if over_type != FieldType::List {
        let d = Diagnostic::new(
            Code::TENX0382,
            format!(
                "the map out of `{from}` reads its items from `{}`, which holds {}, not a list",
                over.name,
                over_type.describe()
            ),
            file,
            over.span,
        )
        .label("not a list")
        .secondary(file, over_param.ty.span(), "declared here")
        .help(format!(
            "map over a `list<…>` field, one branch per item; `{}` is not one",
            over.name
        ));
        c.report(d);
        return;
    }
    if item.name == over.name {
        let d = Diagnostic::new(
            Code::TENX0383,
            format!(
                "the map out of `{from}` writes each item into `{}`, the list it reads",
                item.name
            ),
            file,
            item.span,
        )
        .label("the same field as `over`")
        .help("give each branch its item in a field of its own, such as `item = section` for `over = sections`");
        c.report(d);
        return;
    }
    let Some(item_param) = c.state_field(&item.name).cloned() else {
        let d = Diagnostic::new(Code::TENX0383, format!("the map out of `{from}` gives each branch its item in `{}`, which is not a state field of graph `{graph}`", item.name), file, item.span)
            .label("not a state field")
            .help(format!("declare `{}?: …` in the graph's `state`, of the type of the items of `{}`", item.name, over.name));
        c.report(d);
        return;
    };
    let program = c.facts.program;
    let lower = |ty| crate::schema::lower_type(program, file, ty, &mut Vec::new()).map(|l| l.value);
    let (Some(list), Some(held)) = (lower(&over_param.ty), lower(&item_param.ty)) else {
        return;
    };
    let Some(items) = list.get("items") else { return };
    if let Some(problem) = crate::check::writers::types::misfit(items, &held) {
        let d = Diagnostic::new(Code::TENX0383, format!("the map out of `{from}` writes the items of `{}` into `{}`, but an item {problem}, which `{}` cannot hold", over.name, item.name, item.name), file, item.span)
            .label("cannot hold an item of the list")
            .secondary(file, item_param.ty.span(), "declared here")
            .secondary(file, over_param.ty.span(), "the list's type")
            .help(format!("give `{}` the type of the items of `{}`", item.name, over.name));
        c.report(d);
    }
}

/// The ways of the graph as the artifact's fork check counts them: plain and handoff edges, route
/// arms, `on_error` handlers, the way from each fork's node to its join (a fork inside a branch
/// goes on there, inside the same branch; its ways into its own branches are not counted), and
/// visit-limit exits from every node with one of those ways into the limited node (limits in
/// node order, each node's first).
pub(crate) fn ways(decl: &GraphDecl) -> Ways<'_> {
    fn add<'a>(ways: &mut Ways<'a>, from: &'a str, to: &'a str, span: Span) {
        ways.entry(from).or_default().entry(to).or_insert(span);
    }
    let mut ways: Ways<'_> = BTreeMap::new();
    for edge in &decl.edges {
        add(&mut ways, edge.from.name.as_str(), edge.to.name.as_str(), edge.span);
    }
    for route in &decl.routes {
        for arm in &route.arms {
            add(&mut ways, route.from.name.as_str(), arm.target.name.as_str(), arm.span);
        }
    }
    for exit in decl.on_error.iter().filter(|e| e.node.name != e.target.name) {
        add(
            &mut ways,
            exit.node.name.as_str(),
            exit.target.name.as_str(),
            exit.target.span,
        );
    }
    for fork in &decl.forks {
        if let Some(join) = &fork.join {
            add(&mut ways, fork.from.name.as_str(), join.name.as_str(), join.span);
        }
    }
    let mut limits: BTreeMap<&str, (&str, Span)> = BTreeMap::new();
    for limit in decl.visits.iter().filter(|l| l.node.name != l.exit.name) {
        limits
            .entry(limit.node.name.as_str())
            .or_insert((limit.exit.name.as_str(), limit.exit.span));
    }
    for (node, (exit, span)) in limits {
        let into: Vec<&str> = ways
            .iter()
            .filter(|(_, tos)| tos.contains_key(node))
            .map(|(from, _)| *from)
            .collect();
        for from in into {
            add(&mut ways, from, exit, span);
        }
    }
    ways
}

/// The nodes a branch starting at `start` reaches before `join` (and `END`), `start` first, each
/// with the way that first entered it (`None` for `start`). Iterative breadth-first search.
pub(crate) fn region<'a>(ways: &Ways<'a>, start: &'a str, join: &str) -> Vec<(&'a str, Option<Span>)> {
    let mut seen = BTreeSet::from([start]);
    let mut order = vec![(start, None)];
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for (&next, &span) in ways.get(node).into_iter().flatten() {
            if next != join && next != super::END && seen.insert(next) {
                order.push((next, Some(span)));
                queue.push_back(next);
            }
        }
    }
    order
}

/// The forks whose node is a node of the graph, the first per node, in node-name order (the
/// order of the artifact's sorted `forks`).
pub(crate) fn lowered_forks(decl: &GraphDecl, is_node: impl Fn(&str) -> bool) -> Vec<&Fork> {
    let mut by_node: BTreeMap<&str, &Fork> = BTreeMap::new();
    for fork in decl.forks.iter().filter(|f| is_node(&f.from.name)) {
        by_node.entry(fork.from.name.as_str()).or_insert(fork);
    }
    by_node.into_values().collect()
}

/// Every branch is a region of its own (`TENX0381`); a fork inside a branch joins inside it.
fn regions(c: &mut GraphCheck<'_, '_>) {
    let decl = &c.graph.decl;
    if decl.forks.is_empty() {
        return;
    }
    let topology = c.topology;
    let forks = lowered_forks(decl, |n| topology.index.contains_key(n));
    let ways = ways(decl);
    let starts: BTreeMap<&str, Span> = decl
        .entry
        .iter()
        .chain(&decl.entries)
        .map(|e| (e.name.as_str(), e.span))
        .collect();
    let file = c.file;
    let mut found = Vec::new();
    // Each node in a branch, with its fork, the branch's first node and the way that entered it.
    let mut owner: BTreeMap<&str, (&Fork, &str, Option<Span>)> = BTreeMap::new();
    for &fork in &forks {
        let Some(join) = &fork.join else { continue };
        let from = fork.from.name.as_str();
        let keyword = fork.kind.keyword();
        let fork_label = |d: Diagnostic| d.secondary(file, fork.span, format!("the {keyword} out of `{from}`"));
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        // A branch at the fork's node or its join, or listed twice, is `TENX0380`'s.
        let branches = fork.branches.iter().filter(|b| {
            topology.index.contains_key(&b.name)
                && b.name != fork.from.name
                && b.name != join.name
                && seen.insert(&b.name)
        });
        for branch in branches {
            let b = branch.name.as_str();
            for (node, via) in region(&ways, b, &join.name) {
                let at = via.unwrap_or(branch.span);
                if node == from {
                    found.push(fork_label(
                        Diagnostic::new(
                            Code::TENX0381,
                            format!("the branch at `{b}` leads back to `{from}`, the node it forked from"),
                            file,
                            at,
                        )
                        .label("this way leads back to the fork")
                        .help(format!(
                            "end the branch at {}; a branch that runs its fork again is not supported",
                            if join.name == super::END {
                                "`END`".to_owned()
                            } else {
                                format!("its join `{}`", join.name)
                            }
                        )),
                    ));
                }
                if let Some(&start) = starts.get(node).filter(|_| node != from) {
                    let message = if node == b {
                        format!("a run may start at `{b}`, the first node of a branch of the {keyword} out of `{from}`")
                    } else {
                        format!("`{node}` is inside the branch at `{b}`, and a run may start there")
                    };
                    found.push(fork_label(
                        Diagnostic::new(Code::TENX0381, message, file, start)
                            .label("a run may start here")
                            .help(format!("start runs outside the branches, such as at `{from}`")),
                    ));
                }
                match owner.get(node) {
                    Some(&(other_fork, other, entered)) if other != b => {
                        // The way that brought the node into a branch it does not start.
                        let (span, label) = match (via, entered) {
                            (Some(span), _) => (span, format!("this way takes `{node}` into the branch at `{b}` too")),
                            (None, Some(span)) => (
                                span,
                                format!("this way takes `{node}` into the branch at `{other}` too"),
                            ),
                            (None, None) => (branch.span, "listed as a branch again".to_owned()),
                        };
                        let mut d = Diagnostic::new(
                            Code::TENX0381,
                            format!("`{node}` is in two branches, at `{other}` and at `{b}`"),
                            file,
                            span,
                        )
                        .label(label)
                        .help(format!(
                            "give each branch nodes of its own: end the branch at `{other}` at its join instead of leading it into `{node}`"
                        ));
                        if !std::ptr::eq(other_fork, fork) {
                            d = d.secondary(
                                file,
                                other_fork.span,
                                format!("the branch at `{other}` starts at this fork"),
                            );
                        }
                        found.push(fork_label(d));
                    }
                    Some(_) => {}
                    None => {
                        owner.insert(node, (fork, b, via));
                    }
                }
            }
        }
    }
    let branch_of = |node: &str| owner.get(node).map(|&(fork, branch, _)| (fork, branch));
    // Branches are told apart by their first node (a node is in one branch only).
    let same = |a: Option<(&Fork, &str)>, b: Option<(&Fork, &str)>| a.map(|(_, x)| x) == b.map(|(_, y)| y);
    // A fork's way to its join is checked below, with the fork.
    let joins: BTreeSet<(&str, &str)> = forks
        .iter()
        .filter_map(|f| Some((f.from.name.as_str(), f.join.as_ref()?.name.as_str())))
        .collect();
    for (&from, tos) in &ways {
        for (&to, &span) in tos {
            let Some((fork, branch)) = branch_of(to) else {
                continue;
            };
            if joins.contains(&(from, to)) {
                continue;
            }
            let inside = branch_of(from).is_some_and(|(_, other)| other == branch);
            let forks_here = from == fork.from.name && to == branch;
            // A branch of a fork inside this branch ends by a way into that fork's join.
            let joins_here = branch_of(from)
                .and_then(|(inner, _)| inner.join.as_ref())
                .is_some_and(|join| join.name == to && same(branch_of(inner_from(&owner, from)), Some((fork, branch))));
            if !inside && !forks_here && !joins_here {
                let d = Diagnostic::new(
                    Code::TENX0381,
                    format!("`{from}` leads into `{to}`, inside the branch at `{branch}`"),
                    file,
                    span,
                )
                .label("a way into the middle of a branch")
                .secondary(
                    file,
                    fork.span,
                    format!(
                        "only the {} out of `{}` enters this branch",
                        fork.kind.keyword(),
                        fork.from.name
                    ),
                )
                .help(format!(
                    "lead `{from}` to the fork's node `{}` or past its join, not into a branch",
                    fork.from.name
                ));
                found.push(d);
            }
        }
    }
    // A fork joins where it forks: outside every branch, or inside the branch its node is in (or
    // at that branch's own join, or `END`).
    for &fork in &forks {
        let Some(join) = fork.join.as_ref().filter(|j| j.name != super::END) else {
            continue;
        };
        let from = fork.from.name.as_str();
        let home = branch_of(from);
        let joined = branch_of(&join.name);
        let at_home_join = home.is_some_and(|(outer, _)| outer.join.as_ref().is_some_and(|j| j.name == join.name));
        if same(joined, home) || at_home_join || !topology.index.contains_key(&join.name) {
            continue;
        }
        let keyword = fork.kind.keyword();
        let message = match (joined, home) {
            (Some((_, inside)), Some((_, outer))) => format!(
                "the {keyword} out of `{from}` joins at `{}`, inside the branch at `{inside}`, but forks inside the branch at `{outer}`",
                join.name
            ),
            (Some((_, inside)), None) => format!(
                "the {keyword} out of `{from}` joins at `{}`, inside the branch at `{inside}`",
                join.name
            ),
            (None, _) => format!(
                "the {keyword} out of `{from}` forks inside a branch but joins at `{}`, outside it",
                join.name
            ),
        };
        found.push(
            Diagnostic::new(Code::TENX0381, message, file, join.span)
                .label("the join is in another region than the fork")
                .secondary(file, fork.span, format!("the {keyword} out of `{from}`"))
                .help("a fork inside a branch joins inside that branch, at that branch's join or at `END`; a fork outside every branch joins outside them"),
        );
    }
    for d in found {
        c.report(d);
    }
}

/// The node of the fork whose branch holds `node` (the node itself when it is in no branch).
fn inner_from<'a>(owner: &BTreeMap<&'a str, (&'a Fork, &'a str, Option<Span>)>, node: &'a str) -> &'a str {
    owner.get(node).map_or(node, |&(fork, _, _)| fork.from.name.as_str())
}
