//! Lowering of graphs: nodes, edges (plain or handoff), routes
//! and their conditions, the recursion limit, input validators with their arguments, the state
//! schema and the extra entries.

use super::Lowerer;
use crate::ast::{self, ArmKind, GraphDecl};
use crate::check::topology::Topology;
use crate::resolve::DeclKind;
use serde_json::Value;
use std::collections::BTreeMap;
use tenx_artifact::{
    Arm, Artifact, CompareOp, Condition, Edge, EdgeKind, Graph, Node, NodeKind, Route, Schema, ValidatorUse,
};

/// The recursion limit of a graph that does not set one.
pub const DEFAULT_RECURSION_LIMIT: u64 = 25;

impl Lowerer<'_, '_> {
    pub(super) fn graphs(&self, artifact: &mut Artifact) {
        for (g, located) in self.program.graphs.iter_enumerated() {
            let (file, decl) = (located.file, &located.decl);
            let Some(topology) = self.facts.topologies.get(g) else {
                continue;
            };
            let Some(entry) = &decl.entry else { continue };
            let name = &decl.name.name;
            self.locate(artifact, format!("graph.{name}"), file, decl.name.span);
            let mut nodes = BTreeMap::new();
            for node in &topology.nodes {
                let kind = match node.kind() {
                    DeclKind::Agent => NodeKind::Agent,
                    DeclKind::Tool => NodeKind::Tool,
                    DeclKind::Interrupt => NodeKind::Interrupt,
                    DeclKind::Graph => NodeKind::Graph,
                    _ => continue,
                };
                nodes.insert(
                    node.name.clone(),
                    Node {
                        kind,
                        reference: node.name.clone(),
                    },
                );
                self.locate(artifact, format!("graph.{name}.node.{}", node.name), file, node.span);
            }
            let mut edges = Vec::with_capacity(decl.edges.len());
            for edge in &decl.edges {
                let (from, to) = (&edge.from.name, &edge.to.name);
                let kind = if self.is_handoff(topology, from, to) {
                    EdgeKind::Handoff
                } else {
                    EdgeKind::Plain
                };
                edges.push(Edge {
                    from: from.clone(),
                    to: to.clone(),
                    kind,
                });
                self.locate(artifact, format!("graph.{name}.edge.{from}.{to}"), file, edge.span);
            }
            let routes = decl
                .routes
                .iter()
                .map(|route| {
                    let from = &route.from.name;
                    self.locate(artifact, format!("graph.{name}.route.{from}"), file, route.span);
                    lower_route(route)
                })
                .collect();
            for fork in &decl.forks {
                let from = &fork.from.name;
                self.locate(artifact, format!("graph.{name}.fork.{from}"), file, fork.span);
            }
            let state = self.params_schema(file, &decl.state);
            let writes = super::writes::writes(self.facts, decl, topology, &state);
            let graph = Graph {
                entry: entry.name.clone(),
                nodes,
                edges,
                routes,
                recursion_limit: decl.recursion_limit.map_or(DEFAULT_RECURSION_LIMIT, |(limit, _)| limit),
                input_validators: self.input_validators(decl),
                state_schema: Schema::from(state),
                entries: extra_entries(decl, topology),
                writes,
                visit_limits: super::loops::visit_limits(decl, topology),
                on_error: super::loops::error_exits(decl, topology),
                resume: resume_mode(decl),
                retries: super::retries::node_retries(decl, topology),
                forks: super::forks::forks(decl, topology),
                reducers: super::forks::reducers(decl),
                subgraphs: super::subgraphs::subgraph_calls(decl, topology),
            };
            artifact.graphs.insert(name.clone(), graph);
        }
    }

    /// Whether `from -> to` is the edge of a handoff: `from` is an agent node whose agent hands
    /// off to the agent that the node `to` runs.
    fn is_handoff(&self, topology: &Topology, from: &str, to: &str) -> bool {
        let node = |name: &str| {
            topology
                .index
                .get(name)
                .and_then(|&i| topology.nodes.get(i))
                .filter(|n| n.kind() == DeclKind::Agent)
        };
        let (Some(from), Some(to)) = (node(from), node(to)) else {
            return false;
        };
        from.decl
            .agent()
            .and_then(|a| self.program.agents.get(a))
            .is_some_and(|agent| agent.decl.handoffs.iter().any(|h| h.name == to.name))
    }

    /// The graph's `validate` list. A validator with parameters (the standard library's) gets
    /// its declared defaults with this use's arguments over them; a declared one gets `{}`.
    fn input_validators(&self, decl: &GraphDecl) -> Vec<ValidatorUse> {
        self.validator_uses(&decl.validate)
    }

    /// Validator uses with their arguments: a graph's `validate` or an agent's `guard`.
    pub(super) fn validator_uses(&self, uses: &[crate::ast::ValidatorUse]) -> Vec<ValidatorUse> {
        uses.iter()
            .map(|used| {
                let mut args = self
                    .program
                    .validator(&used.name.name)
                    .map(|v| super::validator::defaults(&v.decl))
                    .unwrap_or_default();
                for arg in &used.args {
                    if let (Some(name), Some(value)) = (&arg.name, arg.value.to_json()) {
                        args.insert(name.name.clone(), value);
                    }
                }
                ValidatorUse {
                    validator: used.name.name.clone(),
                    args: Value::Object(args),
                }
            })
            .collect()
    }
}

/// The graph's `resume` option: `last_agent` when it says so, else `entry` (check refuses any
/// other value, `TENX0370`).
fn resume_mode(decl: &GraphDecl) -> tenx_artifact::Resume {
    match &decl.resume {
        Some(r) if r.name == crate::check::topology::RESUME_LAST_AGENT => tenx_artifact::Resume::LastAgent,
        _ => tenx_artifact::Resume::Entry,
    }
}

/// The graph's extra entries that are nodes other than `entry` (check proves they all are:
/// `TENX0302`, `TENX0326`); sealing sorts them and drops repeats (`TENX0327`).
fn extra_entries(decl: &GraphDecl, topology: &Topology) -> Vec<String> {
    let entry = decl.entry.as_ref().map(|e| e.name.as_str());
    decl.entries
        .iter()
        .filter(|e| Some(e.name.as_str()) != entry && topology.index.contains_key(&e.name))
        .map(|e| e.name.clone())
        .collect()
}

/// A route: its `by` field and its arms, in order.
fn lower_route(route: &ast::Route) -> Route {
    let arms = route
        .arms
        .iter()
        .map(|arm| {
            let target = arm.target.name.clone();
            match &arm.kind {
                ArmKind::Label(label, _) => Arm::Label {
                    label: label.clone(),
                    target,
                },
                ArmKind::When(condition) => Arm::When {
                    condition: lower_condition(condition),
                    target,
                },
                ArmKind::Else => Arm::Else { target },
            }
        })
        .collect();
    Route {
        from: route.from.name.clone(),
        by: route.by.as_ref().map(|by| by.name.clone()),
        arms,
    }
}

/// A route condition. A bare field (`when escalated`) is `truthy`. The recursion follows the
/// nesting of the source, which the syntax stage bounds.
pub fn lower_condition(condition: &ast::Condition) -> Condition {
    match condition {
        ast::Condition::Or(all) => Condition::Or {
            conditions: all.iter().map(lower_condition).collect(),
        },
        ast::Condition::And(all) => Condition::And {
            conditions: all.iter().map(lower_condition).collect(),
        },
        ast::Condition::Not(inner) => Condition::Not {
            condition: Box::new(lower_condition(inner)),
        },
        ast::Condition::Compare { field, op, .. } => {
            let field = field.iter().map(|i| i.name.clone()).collect();
            match op {
                None => Condition::Truthy { field },
                Some((op, _, value)) => Condition::Compare {
                    field,
                    op: match op {
                        ast::CompareOp::Eq => CompareOp::Eq,
                        ast::CompareOp::Ne => CompareOp::Ne,
                        ast::CompareOp::Lt => CompareOp::Lt,
                        ast::CompareOp::Le => CompareOp::Le,
                        ast::CompareOp::Gt => CompareOp::Gt,
                        ast::CompareOp::Ge => CompareOp::Ge,
                        ast::CompareOp::In => CompareOp::In,
                    },
                    value: value.to_json().unwrap_or(Value::Null),
                },
            }
        }
    }
}
