//! Routes out of interrupt nodes: the answer steers the run.
//!
//! When an interrupt node's way out is a route, every valid answer (approving or not) is
//! written into state through the graph's `answers`, and then the route decides where the run
//! goes. A rejecting answer is therefore not an approval: out of a node of an interrupt that
//! `approves` tools, only an *approving* way may lead into one of those tools' nodes
//! (`TENX0627`). A way is approving when a run can take it only after an approving answer: a
//! plain edge (a rejection ends the run there), or a route arm that tests the decision the
//! answer wrote for the approve value (`"publish" -> x` in a route `by` the field written from
//! the decision property, `when verdict == "publish" -> x`, `when approved -> x` for a
//! boolean decision, `when verdict != "revise" -> x` when every other value the decision's
//! schema lists approves, `when verdict in ["publish", "publish_now"] -> x` when every listed
//! value an answer can give approves, and conditions built from these with `and`, `or` and
//! `not`). Other arms, `else`, the node's `on_error` handler and the visit-limit
//! exits of its ways are *rejecting*. Arms are classified by the artifact's own rule
//! ([`tenx_artifact::answer_ways::AnswerTest`]) on the lowered arm, so `tenxc check` and the
//! loader's re-proof agree on every arm.
//!
//! Its question shows one call, so its ways lead to one tool node it approves (`TENX0630`).
//!
//! A route out of an interrupt node that reads no field the node's answer writes decides
//! without the answer, which is probably a mistake (`TENX0353`, a warning).

use super::Facts;
use super::topology::{NodeId, Target, Topology, Via};
use crate::ast::{ArmKind, Condition, GraphDecl, InterruptDecl, Route, RouteArm};
use crate::resolve::{DeclKind, Located};

use serde_json::Value;
use tenx_artifact::answer_ways::AnswerTest;
use tenx_artifact::{Arm, Schema, Write, WriteSource};
use tenx_diagnostics::{Code, Diagnostic, FileId};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    for (g, topology) in facts.topologies.iter_enumerated() {
        let Some(graph) = program.graphs.get(g) else { continue };
        let reachable = topology.reach(&topology.proof_starts(), |_| false);
        for (from, node) in topology.nodes.iter_enumerated() {
            let Some(interrupt) = node.decl.interrupt().and_then(|i| program.interrupts.get(i)) else {
                continue;
            };
            let route = graph.decl.routes.iter().find(|r| r.from.name == node.name);
            if let Some(route) = route {
                ignored_answer(graph.file, &graph.decl, route, diagnostics);
            }
            if interrupt.decl.approves.is_empty() || reachable.get(from).is_none_or(Option::is_none) {
                continue;
            }
            let test = answer_test(facts, &graph.decl, &node.name, interrupt);
            rejecting_ways(graph.file, topology, from, interrupt, route, &test, diagnostics);
            second_approved_tool_node(graph.file, topology, from, interrupt, diagnostics);
        }
    }
}

/// How the answers of the interrupt node `node` are read in the graph `decl`.
fn answer_test(facts: &Facts<'_>, decl: &GraphDecl, node: &str, interrupt: &Located<InterruptDecl>) -> AnswerTest {
    let program = facts.program;
    let decision = crate::decision::decision_of(
        program,
        interrupt.decl.response.as_ref(),
        interrupt.decl.decision.as_ref(),
    );
    let response = match &interrupt.decl.response {
        Some(response) => crate::schema::lower_schema_ref(program, interrupt.file, response, &mut Vec::new())
            .map(|lowered| lowered.value)
            .unwrap_or_default(),
        None => serde_json::from_str(crate::lower::DEFAULT_RESPONSE_SCHEMA).unwrap_or_default(),
    };
    // As lowering keeps them: one write per field, the first (a second is `TENX0339`).
    let mut fields = std::collections::BTreeSet::new();
    let writes: Vec<Write> = decl
        .answers
        .iter()
        .filter(|write| write.node.name == node && fields.insert(write.field.name.as_str()))
        .map(|write| Write {
            from: WriteSource::Interrupt {
                node: node.to_string(),
                field: write.property.as_ref().map(|p| p.name.clone()),
            },
            to: vec![write.field.name.clone()],
        })
        .collect();
    AnswerTest::with_writes(&writes, node, &decision, &Schema::from(response))
}

/// `TENX0627`: every rejecting way out of the approving interrupt node `from` into the node of
/// a tool the interrupt approves.
fn rejecting_ways(
    file: FileId,
    topology: &Topology,
    from: NodeId,
    interrupt: &Located<InterruptDecl>,
    route: Option<&Route>,
    test: &AnswerTest,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let interrupt_name = &interrupt.decl.name.name;
    for (target, via) in topology.successors.get(from).into_iter().flatten() {
        let Target::Node(to) = *target else { continue };
        let Some(tool_node) = topology.nodes.get(to).filter(|n| n.kind() == DeclKind::Tool) else {
            continue;
        };
        let Some(approves) = interrupt.decl.approves.iter().find(|a| a.name == tool_node.name) else {
            continue;
        };
        let (label, help) = match via {
            // Into a branch or a join that runs a tool the interrupt approves: `TENX0629`.
            Via::Edge(_) | Via::Fork(_) => continue,
            Via::Route(span) => {
                let Some(arm) = route.and_then(|r| r.arms.iter().find(|a| a.span == *span)) else {
                    continue;
                };
                let lowered = lower_arm(arm);
                if test.approves(route.and_then(|r| r.by.as_ref()).map(|b| b.name.as_str()), &lowered) {
                    continue;
                }
                let help = match other_values(test, &lowered) {
                    Some(others) => format!("{others}; {}", arm_help(route, test, &tool_node.name)),
                    None => arm_help(route, test, &tool_node.name),
                };
                ("a rejecting answer can take this arm", help)
            }
            Via::OnError(_) => (
                "the run comes here when the step fails, with no approving answer",
                format!(
                    "send the failure of `{}` elsewhere, such as `END`",
                    topology.nodes.get(from).map_or("", |n| n.name.as_str())
                ),
            ),
            Via::VisitExit(_) => (
                "the run comes here when the visits are used up, whatever the answer said",
                format!("let the visit limit exit somewhere other than `{}`", tool_node.name),
            ),
        };
        let node_name = topology.nodes.get(from).map_or("", |n| n.name.as_str());
        let note = match via {
            Via::Route(_) => {
                "every answer is written into state before the route decides, so the route must test that the answer approved"
            }
            _ => "only a way an approving answer takes may lead from the interrupt into the tool it approves",
        };
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0627,
                format!(
                    "a rejecting answer to `{node_name}` can run `{}`, which it approves",
                    tool_node.name
                ),
                file,
                via.span(),
            )
            .label(label)
            .secondary(
                interrupt.file,
                approves.span,
                format!("`{interrupt_name}` approves `{}` here", tool_node.name),
            )
            .help(help)
            .note(note),
        );
    }
}

/// `TENX0630`: the ways out of the approving interrupt node `from` (its edge, its route's arms)
/// lead into more than one tool node of tools it approves. Its question shows one call, that of
/// the first such node (the runtime's `approved_tool_node`: the plain edge, then the arms in
/// order), and its approval is bound to it, so every other such way fails when taken.
fn second_approved_tool_node(
    file: FileId,
    topology: &Topology,
    from: NodeId,
    interrupt: &Located<InterruptDecl>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let ways = topology.successors.get(from).into_iter().flatten();
    let edges = ways.clone().filter(|(_, via)| matches!(via, Via::Edge(_)));
    let arms = ways.filter(|(_, via)| matches!(via, Via::Route(_)));
    let mut shown: Option<(NodeId, &str, tenx_diagnostics::Span)> = None;
    for (target, via) in edges.chain(arms) {
        let Target::Node(to) = *target else { continue };
        let Some(tool_node) = topology.nodes.get(to).filter(|n| n.kind() == DeclKind::Tool) else {
            continue;
        };
        if !interrupt.decl.approves.iter().any(|a| a.name == tool_node.name) {
            continue;
        }
        let Some((first, first_name, first_span)) = shown else {
            shown = Some((to, tool_node.name.as_str(), via.span()));
            continue;
        };
        if first == to {
            continue;
        }
        let node_name = topology.nodes.get(from).map_or("", |n| n.name.as_str());
        diagnostics.push(
            Diagnostic::new(
                Code::TENX0630,
                format!(
                    "`{node_name}` leads to two tool nodes it approves, `{first_name}` and `{}`",
                    tool_node.name
                ),
                file,
                via.span(),
            )
            .label(format!("the question shows the call of `{first_name}`, so this way can never run `{}`", tool_node.name))
            .secondary(file, first_span, format!("the approval is asked for `{first_name}`, the first tool node it leads to"))
            .help(format!(
                "give `{}` an interrupt node of its own right before it, or let `{node_name}` lead to one tool node",
                tool_node.name
            ))
            .note("an approval binds the one call a person saw: an interrupt's question shows the call of the first tool node its ways lead to"),
        );
    }
}

/// How to make the arm into the tool an approving one.
fn arm_help(route: Option<&Route>, test: &AnswerTest, tool: &str) -> String {
    let approve = match &test.approve {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    };
    let field = test.paths.first().map(|p| p.join("."));
    match (field, route.and_then(|r| r.by.as_ref())) {
        (Some(field), _) if !field.contains('.') && approve.starts_with('"') => format!(
            "route `by {field}` and lead only the arm `{approve} -> {tool}` to the tool; send the other answers elsewhere"
        ),
        (Some(field), _) if test.boolean && test.approve == Value::Bool(true) => {
            format!("lead only `when {field} -> {tool}` to the tool; send the other answers elsewhere")
        }
        (Some(field), _) => {
            format!("lead only `when {field} == {approve} -> {tool}` to the tool; send the other answers elsewhere")
        }
        (None, _) => format!(
            "write the answer's decision into state with the graph's `answers`, and route on it: only the arm for {approve} may lead to `{tool}`"
        ),
    }
}

/// For an arm `when PATH != VALUE` (or `not (PATH == VALUE)`) or `when PATH in [..]` on a path
/// holding the decision: the values the decision can hold that take the arm and do not approve.
fn other_values(test: &AnswerTest, arm: &Arm) -> Option<String> {
    use tenx_artifact::{CompareOp, Condition};
    let Arm::When { condition, .. } = arm else { return None };
    // `not (PATH == VALUE)` is `PATH != VALUE` here, but is shown as written.
    let (field, op, value, negated) = match condition {
        Condition::Compare { field, op, value } => (field, *op, value, false),
        Condition::Not { condition } => match condition.as_ref() {
            Condition::Compare {
                field,
                op: CompareOp::Eq,
                value,
            } => (field, CompareOp::Ne, value, true),
            _ => return None,
        },
        _ => return None,
    };
    if !test.paths.contains(field) {
        return None;
    }
    let shown = |v: &Value| format!("`{v}`");
    let values = test.values.as_ref()?;
    let path = field.join(".");
    let written = if negated {
        format!("not ({path} == {value})")
    } else {
        format!("{path} != {value}")
    };
    let verb = |others: &[String]| if others.len() == 1 { "does" } else { "do" };
    match op {
        CompareOp::Ne => {
            let others: Vec<String> = values
                .iter()
                .filter(|v| *v != value && **v != test.approve)
                .map(shown)
                .collect();
            Some(if *value == test.approve {
                format!("`{written}` holds exactly when the answer does not approve")
            } else if values.contains(value) {
                format!(
                    "`{path}` can also be {}, which {} not approve",
                    others.join(" or "),
                    verb(&others)
                )
            } else {
                format!(
                    "no answer gives {}, so `{written}` holds after every answer",
                    shown(value)
                )
            })
        }
        CompareOp::In => {
            let listed = value.as_array()?;
            let held: Vec<&Value> = values.iter().filter(|v| listed.contains(v)).collect();
            let others: Vec<String> = held.iter().filter(|v| ***v != test.approve).map(|v| shown(v)).collect();
            Some(if held.is_empty() {
                format!("no answer gives a value of the list, so `{path} in {value}` never holds")
            } else {
                format!(
                    "the list holds {}, which {} not approve",
                    others.join(" and "),
                    verb(&others)
                )
            })
        }
        _ => None,
    }
}

/// The arm as the artifact writes it (its target does not matter here).
fn lower_arm(arm: &RouteArm) -> Arm {
    let target = arm.target.name.clone();
    match &arm.kind {
        ArmKind::Label(label, _) => Arm::Label {
            label: label.clone(),
            target,
        },
        ArmKind::When(condition) => Arm::When {
            condition: crate::lower::lower_condition(condition),
            target,
        },
        ArmKind::Else => Arm::Else { target },
    }
}

/// `TENX0353`: a route out of an interrupt node that reads no field its answer writes.
fn ignored_answer(file: FileId, decl: &GraphDecl, route: &Route, diagnostics: &mut Vec<Diagnostic>) {
    let node = &route.from.name;
    let written: Vec<&str> = decl
        .answers
        .iter()
        .filter(|write| write.node.name == *node)
        .map(|write| write.field.name.as_str())
        .collect();
    let mut read: Vec<&str> = route.by.iter().map(|b| b.name.as_str()).collect();
    for arm in &route.arms {
        if let ArmKind::When(condition) = &arm.kind {
            fields_read(condition, &mut read);
        }
    }
    if read.iter().any(|field| written.contains(field)) {
        return;
    }
    let help = match written.first() {
        Some(field) => format!("read what the answer writes: `{field}`, as the route's `by` field or in a `when` arm"),
        None => format!(
            "write the answer into state with the graph's `answers = {{ {node}: {{ PROPERTY: FIELD }} }}` and route on that field"
        ),
    };
    diagnostics.push(
        Diagnostic::new(
            Code::TENX0353,
            format!("route out of interrupt node `{node}` reads nothing its answer writes"),
            file,
            route.from.span,
        )
        .label("this route decides without the person's answer")
        .help(help)
        .note("every valid answer, approving or not, takes this route; only a plain edge ends the run on a rejection"),
    );
}

/// The state fields `condition` reads (their first segments).
fn fields_read<'c>(condition: &'c Condition, out: &mut Vec<&'c str>) {
    let mut stack = vec![condition];
    while let Some(condition) = stack.pop() {
        match condition {
            Condition::Or(all) | Condition::And(all) => stack.extend(all),
            Condition::Not(inner) => stack.push(inner),
            Condition::Compare { field, .. } => out.extend(field.first().map(|f| f.name.as_str())),
        }
    }
}
