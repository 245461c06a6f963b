//! Lowering of a graph's forks (`parallel` and `map` blocks) and reducers (`reduce`). Check
//! proves every rule the artifact's fork check enforces (`TENX0380`–`TENX0383`, `TENX0390`–
//! `TENX0392`, `TENX0302`, `TENX0312`, `TENX0702`), so the filters here only keep lowering
//! total: the first fork per node whose names are nodes, the first reducer per field with a
//! known reduction. Sealing sorts both lists.

use crate::ast::{self, GraphDecl};
use crate::check::topology::{END, Topology};
use tenx_artifact::{Fork, ForkKind, Reduce, Reducer};

/// The graph's forks, in source order.
pub(super) fn forks(decl: &GraphDecl, topology: &Topology) -> Vec<Fork> {
    let mut out: Vec<Fork> = Vec::with_capacity(decl.forks.len());
    for fork in &decl.forks {
        let Some(join) = &fork.join else { continue };
        let is_node = |name: &str| topology.index.contains_key(name);
        if !is_node(&fork.from.name)
            || !(join.name == END || is_node(&join.name))
            || !fork.branches.iter().all(|b| is_node(&b.name))
            || out.iter().any(|f| f.from == fork.from.name)
        {
            continue;
        }
        let (kind, over, item) = match fork.kind {
            ast::ForkKind::Parallel => (ForkKind::Parallel, None, None),
            ast::ForkKind::Map => (
                ForkKind::Map,
                fork.over.as_ref().map(|o| o.name.clone()),
                fork.item.as_ref().map(|i| i.name.clone()),
            ),
        };
        out.push(Fork {
            from: fork.from.name.clone(),
            kind,
            branches: fork.branches.iter().map(|b| b.name.clone()).collect(),
            over,
            item,
            max_concurrency: fork.max_concurrency.map(|(n, _)| n),
            join: join.name.clone(),
        });
    }
    out
}

/// The graph's reducers, in source order.
pub(super) fn reducers(decl: &GraphDecl) -> Vec<Reducer> {
    let mut out: Vec<Reducer> = Vec::with_capacity(decl.reduce.len());
    for reducer in &decl.reduce {
        let Some(reduce) = reduction(&reducer.reduce.name) else {
            continue;
        };
        if out.iter().any(|r| r.field == reducer.field.name) {
            continue;
        }
        let order = match reduce {
            Reduce::Last => reducer.order.iter().flatten().map(|n| n.name.clone()).collect(),
            Reduce::Append | Reduce::Merge | Reduce::Sum => Vec::new(),
        };
        out.push(Reducer {
            field: reducer.field.name.clone(),
            reduce,
            order,
        });
    }
    out
}

/// The reduction a name in `reduce` stands for.
pub(crate) fn reduction(name: &str) -> Option<Reduce> {
    match name {
        "append" => Some(Reduce::Append),
        "merge" => Some(Reduce::Merge),
        "sum" => Some(Reduce::Sum),
        "last" => Some(Reduce::Last),
        _ => None,
    }
}
