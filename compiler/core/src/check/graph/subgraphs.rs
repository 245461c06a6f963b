//! Subgraph nodes: a graph listed in another graph's `nodes` runs as one step, with its state
//! mapped in and out by `subgraphs = { graph: { input: {…}, output: {…} } }`. No graph runs
//! itself, directly or through others (`TENX0384`); subgraphs nest (an inner graph may have
//! subgraph nodes and forks of its own, and a subgraph node may sit inside a fork's branch, a
//! `map`'s included); and every mapping names a
//! subgraph node of the graph (`TENX0302` for a name that is no node, `TENX0386` otherwise),
//! state fields on both sides whose types fit, and fills every required field of the inner
//! graph (`TENX0386`). The approval proof needs nothing here: every graph is proved from its own
//! entry, so a gated tool inside the inner graph is gated there.

use super::GraphCheck;
use crate::ast::{FieldMap, GraphDecl, Param};
use crate::resolve::{DeclKind, DeclRef, GraphId, Located};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tenx_diagnostics::{Code, Diagnostic, Span};

pub(super) fn check(c: &mut GraphCheck<'_, '_>) {
    let outer_name = c.g().name.name.clone();
    // The subgraph nodes of this graph, with the graph each runs.
    let mut inner_of: BTreeMap<String, (GraphId, Span)> = BTreeMap::new();
    for node in c.topology.nodes.iter() {
        if let DeclRef::Graph(id) = node.decl {
            inner_of.insert(node.name.clone(), (id, node.span));
        }
    }
    let mut cycles = BTreeSet::new();
    for (node, &(id, span)) in &inner_of {
        if let Some(path) = cycle_through(c, id) {
            cycles.insert(node.clone());
            let shown = path.join("` → `");
            let d = Diagnostic::new(
                Code::TENX0384,
                format!("graph `{outer_name}` runs itself through the subgraph node `{node}`"),
                c.file,
                span,
            )
            .label("this node leads back to the graph it is in")
            .note(format!("`{outer_name}` → `{shown}`"))
            .help(format!(
                "remove `{node}` from the `nodes` of graph `{outer_name}`, or move the work it repeats into the graph itself"
            ));
            c.report(d);
        }
    }
    // A node that leads back to its own graph is reported once, as a cycle.
    inner_of.retain(|node, _| !cycles.contains(node));
    mappings(c, &inner_of);
}

/// The graphs from `start` back to the graph being checked, when a chain of subgraph nodes leads
/// there (iterative, each graph visited once).
fn cycle_through(c: &GraphCheck<'_, '_>, start: GraphId) -> Option<Vec<String>> {
    let program = c.facts.program;
    let target = c.g().name.name.as_str();
    let name = |id: GraphId| program.graphs.get(id).map(|g| g.decl.name.name.clone());
    let mut parent: BTreeMap<GraphId, Option<GraphId>> = BTreeMap::from([(start, None)]);
    let mut stack = vec![start];
    while let Some(at) = stack.pop() {
        if name(at).as_deref() == Some(target) {
            let mut path = Vec::new();
            let mut step = Some(at);
            while let Some(id) = step {
                path.extend(name(id));
                step = parent.get(&id).copied().flatten();
            }
            path.reverse();
            return Some(path);
        }
        for node in c.facts.topologies.get(at).into_iter().flat_map(|t| t.nodes.iter()) {
            if let DeclRef::Graph(next) = node.decl
                && !parent.contains_key(&next)
            {
                parent.insert(next, Some(at));
                stack.push(next);
            }
        }
    }
    None
}

/// The state fields of a graph: each declared field with its lowered schema.
fn fields<'g>(c: &GraphCheck<'_, '_>, graph: &'g Located<GraphDecl>) -> BTreeMap<&'g str, (&'g Param, Value)> {
    let mut out = BTreeMap::new();
    for field in &graph.decl.state {
        let schema = crate::schema::lower_type(c.facts.program, graph.file, &field.ty, &mut Vec::new())
            .map_or(Value::Object(serde_json::Map::new()), |l| l.value);
        out.entry(field.name.name.as_str()).or_insert((field, schema));
    }
    out
}

fn mappings(c: &mut GraphCheck<'_, '_>, inner_of: &BTreeMap<String, (GraphId, Span)>) {
    let program = c.facts.program;
    let maps = c.g().subgraphs.clone();
    let outer = c.graph;
    let outer_fields = fields(c, outer);
    let outer_name = outer.decl.name.name.clone();
    let mut seen: BTreeMap<String, Span> = BTreeMap::new();
    for map in &maps {
        let node = &map.node;
        if let Some(first) = seen.get(&node.name) {
            let d = Diagnostic::new(
                Code::TENX0386,
                format!("subgraph node `{}` is mapped twice in `subgraphs`", node.name),
                c.file,
                node.span,
            )
            .label("mapped again here")
            .secondary(c.file, *first, "first mapped here")
            .help("write one `input` and one `output` map per subgraph node");
            c.report(d);
            continue;
        }
        seen.insert(node.name.clone(), node.span);
        if !c.check_node_ref(node, "`subgraphs`") {
            continue;
        }
        let Some(&(id, _)) = inner_of.get(&node.name) else {
            let kind = c
                .topology
                .index
                .get(&node.name)
                .and_then(|&n| c.topology.nodes.get(n))
                .map(|n| n.kind());
            if kind == Some(DeclKind::Graph) {
                continue; // a subgraph node in a cycle, reported as one (`TENX0384`)
            }
            let kind = kind.map_or_else(|| "a".to_owned(), DeclKind::with_article);
            let d = Diagnostic::new(
                Code::TENX0386,
                format!(
                    "`subgraphs` maps `{}`, which is {kind} node, not a subgraph node",
                    node.name
                ),
                c.file,
                node.span,
            )
            .label("not a subgraph node")
            .help(format!(
                "remove `{}` from `subgraphs`: only a node that runs a graph has state to map",
                node.name
            ));
            c.report(d);
            continue;
        };
        let Some(inner) = program.graphs.get(id) else { continue };
        let inner_fields = fields(c, inner);
        let inner_name = inner.decl.name.name.clone();
        let mut filled = BTreeSet::new();
        for pair in &map.input {
            let FieldMap { to, from } = pair;
            let checked = (
                field_of(c, &inner_fields, to, &inner_name, "fills", "the inner graph"),
                field_of(c, &outer_fields, from, &outer_name, "reads", "this graph"),
            );
            filled.insert(to.name.clone());
            if let (Some(held), Some(given)) = checked {
                misfit(c, &node.name, from, &given, to, &held, &inner_name);
            }
        }
        for pair in &map.output {
            let FieldMap { to, from } = pair;
            let checked = (
                field_of(c, &outer_fields, to, &outer_name, "writes", "this graph"),
                field_of(c, &inner_fields, from, &inner_name, "takes", "the inner graph"),
            );
            if let (Some(held), Some(given)) = checked {
                misfit(c, &node.name, from, &given, to, &held, &outer_name);
            }
        }
        let missing: Vec<&str> = inner
            .decl
            .state
            .iter()
            .filter(|f| !f.optional && f.default.is_none() && !filled.contains(&f.name.name))
            .map(|f| f.name.name.as_str())
            .collect();
        if let Some(first) = missing.first() {
            let list = missing.join("`, `");
            let d = Diagnostic::new(
                Code::TENX0386,
                format!("subgraph node `{}` does not fill the required state field `{list}` of graph `{inner_name}`", node.name),
                c.file,
                node.span,
            )
            .label("`input` leaves a required field unset")
            .help(format!(
                "add `{first}: <field of {outer_name}>` to the `input` of `{}`, or give `{first}` a default in graph `{inner_name}`",
                node.name
            ))
            .note("the inner graph starts with only what `input` copies into it, then its own defaults");
            c.report(d);
        }
    }
    // Subgraph nodes without a written mapping run with empty maps; their inner graph must then
    // need no input.
    for (node, &(id, span)) in inner_of {
        if seen.contains_key(node) {
            continue;
        }
        let Some(inner) = program.graphs.get(id) else { continue };
        let missing: Vec<&str> = inner
            .decl
            .state
            .iter()
            .filter(|f| !f.optional && f.default.is_none())
            .map(|f| f.name.name.as_str())
            .collect();
        if let Some(first) = missing.first() {
            let list = missing.join("`, `");
            let d = Diagnostic::new(
                Code::TENX0386,
                format!("subgraph node `{node}` does not fill the required state field `{list}` of graph `{}`", inner.decl.name.name),
                c.file,
                span,
            )
            .label("no `input` fills it")
            .help(format!(
                "add `subgraphs = {{ {node}: {{ input: {{ {first}: <field of {outer_name}> }} }} }}` to graph `{outer_name}`"
            ))
            .note("the inner graph starts with only what `input` copies into it, then its own defaults");
            c.report(d);
        }
    }
}

/// The schema of the state field `ident` of the graph `graph`, or a report that it is none.
fn field_of(
    c: &mut GraphCheck<'_, '_>,
    fields: &BTreeMap<&str, (&Param, Value)>,
    ident: &crate::ast::Ident,
    graph: &str,
    verb: &str,
    whose: &str,
) -> Option<Value> {
    if let Some((_, schema)) = fields.get(ident.name.as_str()) {
        return Some(schema.clone());
    }
    let names = fields.keys().copied().collect::<Vec<_>>();
    let d = Diagnostic::new(
        Code::TENX0386,
        format!(
            "the subgraph mapping {verb} `{}`, which is not a state field of graph `{graph}`",
            ident.name
        ),
        c.file,
        ident.span,
    )
    .label(format!("not a state field of {whose}"))
    .maybe_help(crate::did_you_mean(&ident.name, names.iter()).map(|s| format!("did you mean `{s}`?")))
    .note("`input` maps inner fields to this graph's fields; `output` maps this graph's fields to inner fields");
    c.report(d);
    None
}

/// Reports a mapped value that the field it goes into cannot hold.
fn misfit(
    c: &mut GraphCheck<'_, '_>,
    node: &str,
    from: &crate::ast::Ident,
    given: &Value,
    to: &crate::ast::Ident,
    held: &Value,
    held_by: &str,
) {
    let Some(problem) = crate::check::writers::types::misfit(given, held) else {
        return;
    };
    let d = Diagnostic::new(
        Code::TENX0386,
        format!(
            "subgraph node `{node}` copies `{}` into `{}`, and it {problem}, which the state field `{}` of graph `{held_by}` cannot hold",
            from.name, to.name, to.name
        ),
        c.file,
        to.span,
    )
    .label("the value does not always fit this field")
    .secondary(c.file, from.span, "copied from this field")
    .help(format!("give `{}` and `{}` the same type, or map another field", to.name, from.name));
    c.report(d);
}
