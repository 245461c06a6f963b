//! What branches write and how it merges at the join: a state field written by two branches of
//! one `parallel` fork, or by a `map`'s branch, needs a reducer (`TENX0390`); a reducer fits its
//! field (`TENX0391`), orders only the branches there are (`TENX0392`), and merges something a
//! branch writes (`TENX0393`, a warning). The writers are those `check/writers.rs` collects.

use super::GraphCheck;
use super::forks::{Ways, lowered_forks, region, ways};
use super::routes::{FieldType, field_type};
use crate::ast::{ForkKind, ReducerDecl};
use crate::check::writers::{Writer, writers};
use crate::lower::reduction;
use std::collections::{BTreeMap, BTreeSet};
use tenx_artifact::Reduce;
use tenx_diagnostics::{Code, Diagnostic, Span};

/// The fields one branch writes (by the first node of the branch), each with a node that
/// writes it.
type BranchWrites<'a> = (&'a str, BTreeMap<&'a str, &'a str>);

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let decl = &c.graph.decl;
    if decl.forks.is_empty() && decl.reduce.is_empty() {
        return;
    }
    let file = c.file;
    let topology = c.topology;
    let program = c.facts.program;
    let facts = c.facts;
    // The nodes that write each field (through their output, payload, results or answers).
    let mut written_by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (field, all) in writers(facts, c.graph) {
        for writer in all {
            let nodes: Vec<String> = match writer {
                Writer::AgentOutput(n) | Writer::Payload(n) | Writer::Answer(n) | Writer::Subgraph(n) => vec![n],
                Writer::ToolResult(n) if topology.index.contains_key(&n) => vec![n],
                Writer::ToolResult(tool) => {
                    let Some(t) = program
                        .lookup_as(&tool, &[crate::resolve::DeclKind::Tool])
                        .and_then(|s| s.decl.tool())
                    else {
                        continue;
                    };
                    topology
                        .nodes
                        .iter()
                        .filter(|n| {
                            n.decl
                                .agent()
                                .is_some_and(|a| facts.visible_tools.get(a).is_some_and(|v| v.contains(&t)))
                        })
                        .map(|n| n.name.clone())
                        .collect()
                }
                Writer::Input | Writer::MapItem(_) => Vec::new(),
            };
            written_by.entry(field.clone()).or_default().extend(nodes);
        }
    }
    let node_span = |name: &str| {
        topology
            .index
            .get(name)
            .and_then(|&n| topology.nodes.get(n))
            .map(|n| n.span)
    };
    let mut reducers: BTreeMap<&str, &ReducerDecl> = BTreeMap::new();
    let mut found = Vec::new();
    // The first reducer of each field (a repeat is reported by the syntax stage).
    for reducer in &decl.reduce {
        reducers.entry(&reducer.field.name).or_insert(reducer);
    }
    let forks = lowered_forks(decl, |n| topology.index.contains_key(n));
    let ways = ways(decl);
    let mut writes = writes_by_branch(&forks, &ways, &written_by);
    // Per fork, the fields each branch writes, with a writing node (a map's item aside).
    let mut branch_writes: Vec<(&crate::ast::Fork, Vec<BranchWrites<'_>>)> = Vec::new();
    for (f, &fork) in forks.iter().enumerate() {
        let mut per_branch = Vec::new();
        for (b, branch) in fork.branches.iter().enumerate() {
            let mut fields = writes.remove(&(f, b)).unwrap_or_default();
            if let Some(item) = &fork.item {
                fields.remove(item.name.as_str());
            }
            per_branch.push((branch.name.as_str(), fields));
        }
        branch_writes.push((fork, per_branch));
    }
    let state_type = |name: &str| c.state_field(name).map(|p| field_type(c, p));
    let suggestion = |field: &str, branches: &[&str]| -> String {
        match state_type(field) {
            Some(FieldType::List) => format!("reduce = {{ {field}: append }}"),
            Some(FieldType::Object) => format!("reduce = {{ {field}: merge }}"),
            Some(FieldType::Number) => format!("reduce = {{ {field}: sum }}"),
            _ if branches.is_empty() => format!("reduce = {{ {field}: last }}"),
            _ => format!("reduce = {{ {field}: last({}) }}", branches.join(", ")),
        }
    };
    // TENX0390: writes that meet at a join without a reducer.
    for (fork, per_branch) in &branch_writes {
        let from = &fork.from.name;
        match fork.kind {
            ForkKind::Parallel => {
                let mut fields: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
                for (branch, writes) in per_branch {
                    for (field, node) in writes {
                        fields.entry(field).or_default().push((branch, node));
                    }
                }
                for (field, writers) in fields {
                    if writers.len() < 2 || reducers.contains_key(field) {
                        continue;
                    }
                    let (Some(&(b1, n1)), Some(&(b2, n2))) = (writers.first(), writers.get(1)) else {
                        continue;
                    };
                    let starts: Vec<&str> = writers.iter().map(|(b, _)| *b).collect();
                    let d = Diagnostic::new(
                        Code::TENX0390,
                        format!(
                            "`{field}` is written by two branches of the parallel out of `{from}`, and has no reducer"
                        ),
                        file,
                        node_span(n2).unwrap_or(fork.span),
                    )
                    .label(format!("`{n2}` writes `{field}` in the branch at `{b2}`"))
                    .secondary(
                        file,
                        node_span(n1).unwrap_or(fork.span),
                        format!("`{n1}` writes `{field}` in the branch at `{b1}`"),
                    )
                    .secondary(file, fork.span, "the branches meet at the join of this fork")
                    .help(format!(
                        "say how their values merge: add `{}` to the graph",
                        suggestion(field, &starts)
                    ))
                    .note("without a reducer, the join would keep one branch's value and drop the other's");
                    found.push(d);
                }
            }
            ForkKind::Map => {
                for (_, writes) in per_branch {
                    for (field, node) in writes {
                        if reducers.contains_key(field) {
                            continue;
                        }
                        let d = Diagnostic::new(
                            Code::TENX0390,
                            format!(
                                "`{field}` is written in every branch of the map out of `{from}`, and has no reducer"
                            ),
                            file,
                            node_span(node).unwrap_or(fork.span),
                        )
                        .label(format!("`{node}` writes `{field}` once per item"))
                        .secondary(file, fork.span, "one branch per item meets at the join of this map")
                        .help(format!(
                            "say how the items' values merge: add `{}` to the graph",
                            suggestion(field, &[])
                        ))
                        .note("without a reducer, the join would keep one item's value and drop the others'");
                        found.push(d);
                    }
                }
            }
        }
    }
    // Reducers against their fields and the branches.
    let parallel_starts: BTreeSet<&str> = forks
        .iter()
        .filter(|f| f.kind == ForkKind::Parallel)
        .flat_map(|f| f.branches.iter().map(|b| b.name.as_str()))
        .collect();
    for reducer in reducers.values() {
        let field = reducer.field.name.as_str();
        let Some(reduce) = reduction(&reducer.reduce.name) else {
            continue;
        };
        let Some(ty) = state_type(field) else {
            found.push(
                Diagnostic::new(
                    Code::TENX0391,
                    format!(
                        "`reduce` names `{field}`, which is not a state field of graph `{}`",
                        decl.name.name
                    ),
                    file,
                    reducer.field.span,
                )
                .label("not a state field")
                .help(format!(
                    "declare `{field}` in the graph's `state`, or remove its reducer"
                )),
            );
            continue;
        };
        let wanted = match reduce {
            Reduce::Append => Some((FieldType::List, "a list")),
            Reduce::Merge => Some((FieldType::Object, "an object")),
            Reduce::Sum => Some((FieldType::Number, "a number")),
            Reduce::Last => None,
        };
        if let Some((kind, what)) = wanted
            && ty != kind
            && ty != FieldType::Any
        {
            let fits = match ty {
                FieldType::List => "`append`",
                FieldType::Object => "`merge`",
                FieldType::Number => "`sum` or `last`",
                _ => "`last`",
            };
            let declared = c.state_field(field).map(|p| p.ty.span());
            let mut d = Diagnostic::new(
                Code::TENX0391,
                format!(
                    "`{}` needs {what} field, and `{field}` holds {}",
                    reducer.reduce.name,
                    ty.describe()
                ),
                file,
                reducer.reduce.span,
            )
            .label(format!("needs {what} field"))
            .help(format!("use {fits} for `{field}`"));
            if let Some(span) = declared {
                d = d.secondary(file, span, format!("`{field}` is declared here"));
            }
            found.push(d);
        }
        let writing: Vec<&str> = branch_writes
            .iter()
            .filter(|(f, _)| f.kind == ForkKind::Parallel)
            .flat_map(|(_, per)| per.iter().filter(|(_, w)| w.contains_key(field)).map(|(b, _)| *b))
            .collect();
        match (&reducer.order, reduce) {
            (Some(_), Reduce::Append | Reduce::Merge | Reduce::Sum) => found.push(
                Diagnostic::new(
                    Code::TENX0392,
                    format!("`{}` takes no arguments", reducer.reduce.name),
                    file,
                    reducer.span,
                )
                .label("only `last(…)` lists branches")
                .help(format!("write `{field}: {}`", reducer.reduce.name)),
            ),
            (Some(order), Reduce::Last) => {
                let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
                for name in order {
                    if let Some(first) = seen.get(name.name.as_str()) {
                        found.push(
                            Diagnostic::new(
                                Code::TENX0392,
                                format!("`last(…)` of `{field}` names `{}` twice", name.name),
                                file,
                                name.span,
                            )
                            .label("named again here")
                            .secondary(file, *first, "first named here")
                            .help("name each branch once, in the order they win"),
                        );
                        continue;
                    }
                    seen.insert(&name.name, name.span);
                    if !parallel_starts.contains(name.name.as_str()) {
                        let help = if parallel_starts.is_empty() {
                            "name the first nodes of the branches of a `parallel` fork".to_owned()
                        } else {
                            let names: Vec<String> = parallel_starts.iter().map(|s| format!("`{s}`")).collect();
                            format!("name the first nodes of parallel branches: {}", names.join(", "))
                        };
                        found.push(
                            Diagnostic::new(
                                Code::TENX0392,
                                format!(
                                    "`last(…)` of `{field}` names `{}`, which starts no parallel branch",
                                    name.name
                                ),
                                file,
                                name.span,
                            )
                            .label("not the first node of a branch")
                            .help(help),
                        );
                    }
                }
                let mut missing: Vec<&str> = writing.iter().copied().filter(|b| !seen.contains_key(b)).collect();
                missing.dedup();
                if !missing.is_empty() && !order.is_empty() {
                    let names: Vec<String> = missing.iter().map(|s| format!("`{s}`")).collect();
                    let mut all: Vec<&str> = order
                        .iter()
                        .map(|n| n.name.as_str())
                        .filter(|n| parallel_starts.contains(n))
                        .collect();
                    all.extend(missing.iter().copied());
                    all.dedup();
                    found.push(
                        Diagnostic::new(
                            Code::TENX0392,
                            format!(
                                "`last(…)` of `{field}` leaves out {}, which writes it",
                                names.join(", ")
                            ),
                            file,
                            reducer.span,
                        )
                        .label("not every writing branch is ordered")
                        .help(format!("write `{field}: last({})`", all.join(", "))),
                    );
                }
            }
            (None, _) => {}
        }
        let any_branch_writes = branch_writes
            .iter()
            .any(|(_, per)| per.iter().any(|(_, w)| w.contains_key(field)));
        if !any_branch_writes {
            found.push(
                Diagnostic::new(
                    Code::TENX0393,
                    format!("no branch writes `{field}`, so its reducer never merges anything"),
                    file,
                    reducer.field.span,
                )
                .label("unused reducer")
                .help(format!("remove `{field}` from `reduce`, or check its spelling")),
            );
        }
    }
    for d in found {
        c.report(d);
    }
}

/// What each branch writes, by (fork, branch) index: each field with the first node (by name)
/// that writes it inside the branch, the nodes of the forks inside it included (they merge into
/// it). Each node is counted in the one branch whose region holds it, then each branch's writes
/// are added to the branch its fork is in, innermost forks first: linear in the graph, however
/// deep the forks nest.
fn writes_by_branch<'a>(
    forks: &[&'a crate::ast::Fork],
    ways: &Ways<'a>,
    written_by: &'a BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<(usize, usize), BTreeMap<&'a str, &'a str>> {
    // The branch whose region holds each node (the first, when regions overlap: `TENX0381`).
    let mut owner: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (f, fork) in forks.iter().enumerate() {
        // A fork without a `join` (reported) runs its branches to `END`.
        let join = fork.join.as_ref().map_or(super::END, |j| j.name.as_str());
        for (b, branch) in fork.branches.iter().enumerate() {
            for (node, _) in region(ways, &branch.name, join) {
                owner.entry(node).or_insert((f, b));
            }
        }
    }
    let mut writes: BTreeMap<(usize, usize), BTreeMap<&'a str, &'a str>> = BTreeMap::new();
    for (field, nodes) in written_by {
        for node in nodes {
            if let Some(&at) = owner.get(node.as_str()) {
                writes
                    .entry(at)
                    .or_default()
                    .entry(field.as_str())
                    .or_insert(node.as_str());
            }
        }
    }
    // The branch each fork is in; forks in breadth-first order from those outside every branch,
    // so that the reverse order merges the innermost first (a fork reached from none of them is
    // in overlapping regions, reported, and merges nowhere).
    let home: Vec<Option<(usize, usize)>> = forks
        .iter()
        .map(|fork| owner.get(fork.from.name.as_str()).copied())
        .collect();
    let mut inside: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (f, at) in home.iter().enumerate() {
        if let Some((outer, _)) = at {
            inside.entry(*outer).or_default().push(f);
        }
    }
    let mut order: Vec<usize> = (0..forks.len())
        .filter(|&f| home.get(f).copied().flatten().is_none())
        .collect();
    let mut next = 0;
    while let Some(&f) = order.get(next) {
        next += 1;
        order.extend(inside.get(&f).into_iter().flatten().copied());
    }
    for &f in order.iter().rev() {
        let Some(into) = home.get(f).copied().flatten() else {
            continue;
        };
        let branches = forks.get(f).map_or(0, |fork| fork.branches.len());
        for b in 0..branches {
            let Some(inner) = writes.get(&(f, b)).cloned() else {
                continue;
            };
            let outer = writes.entry(into).or_default();
            for (field, node) in inner {
                let first = outer.entry(field).or_insert(node);
                if node < *first {
                    *first = node;
                }
            }
        }
    }
    writes
}
