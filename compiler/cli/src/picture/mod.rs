//! Pictures of compiled graphs, for `tenxc graph`: [`mermaid`] and [`dot`] text from an
//! [`Artifact`], deterministic (everything is drawn in name order).
//!
//! Both formats draw the same things. Each graph is a box of its own. Inside it: a start marker
//! leading to the entry node, `END`, the agent nodes, tool nodes and interrupt nodes; plain edges
//! as solid arrows, handoff edges dashed and labelled with their `transfer_to_…` tool, and one
//! labelled arrow per route arm, numbered in the order the arms are tried (`(1) verdict ==
//! "publish"`, `(2) when score < 0.3`, `(3) else`). Each agent node has the tools it may call
//! attached as small boxes (dotted links); a tool with an `approval` is reached through an
//! approval gate; an agent it may call as a tool is attached the same way, naming the agent.
//! Interrupts that approve tools are drawn as gates too. A fork is drawn as thick arrows from its
//! node into each branch (`parallel`, or `map over field as item`) and one to its join (`join`).
//! High-risk tools and gates are highlighted: a Mermaid `classDef`, DOT colours.

mod dot;
mod mermaid;

pub use dot::dot;
pub use mermaid::mermaid;

use serde_json::Value;
use tenx_artifact::{Arm, Artifact, Condition, EdgeKind, Graph, NodeKind, Risk, Tool};

/// The output formats of `tenxc graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureFormat {
    /// Mermaid `flowchart` text.
    Mermaid,
    /// Graphviz DOT text.
    Dot,
}

/// Draws `artifact` in `format`.
pub fn render(artifact: &Artifact, format: PictureFormat) -> String {
    match format {
        PictureFormat::Mermaid => mermaid(artifact),
        PictureFormat::Dot => dot(artifact),
    }
}

/// How a box is drawn: its style class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Style {
    Terminal,
    Agent,
    Tool,
    Medium,
    High,
    Gate,
}

impl Style {
    fn of_tool(tool: Option<&Tool>) -> Style {
        match tool.map(|t| t.risk) {
            Some(Risk::High | Risk::Prohibited) => Style::High,
            Some(Risk::Medium) => Style::Medium,
            _ => Style::Tool,
        }
    }

    fn class(self) -> &'static str {
        match self {
            Style::Terminal => "terminal",
            Style::Agent => "agent",
            Style::Tool => "tool",
            Style::Medium => "medium",
            Style::High => "high",
            Style::Gate => "gate",
        }
    }
}

/// The shape of a box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Terminal,
    Agent,
    ToolNode,
    ToolBox,
    Gate,
}

/// One box of a drawing.
#[derive(Debug, Clone)]
struct Boxed {
    id: String,
    lines: Vec<String>,
    shape: Shape,
    style: Style,
}

/// How a link is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkKind {
    /// A plain edge or a route arm.
    Solid,
    /// A handoff.
    Dashed,
    /// An agent's tool (no arrow head in DOT) or its way through a gate.
    Dotted,
    /// A fork's way into a branch, or to its join.
    Thick,
}

/// One link of a drawing.
#[derive(Debug, Clone)]
struct Link {
    from: String,
    to: String,
    label: Option<String>,
    kind: LinkKind,
}

/// One graph, ready to draw in either format.
#[derive(Debug, Clone)]
struct Drawing {
    id: String,
    title: String,
    boxes: Vec<Boxed>,
    links: Vec<Link>,
}

/// Lays out every graph of the artifact, in name order.
fn drawings(artifact: &Artifact) -> Vec<Drawing> {
    artifact
        .graphs
        .iter()
        .enumerate()
        .map(|(g, (name, graph))| drawing(artifact, &format!("g{g}"), name, graph))
        .collect()
}

fn drawing(artifact: &Artifact, prefix: &str, name: &str, graph: &Graph) -> Drawing {
    let node_id = |node: &str| -> String {
        if node == tenx_artifact::END {
            return format!("{prefix}_end");
        }
        let index = graph.nodes.keys().position(|n| n == node).unwrap_or(usize::MAX);
        format!("{prefix}_n{index}")
    };
    let mut boxes = vec![
        Boxed {
            id: format!("{prefix}_start"),
            lines: vec!["start".to_string()],
            shape: Shape::Terminal,
            style: Style::Terminal,
        },
        Boxed {
            id: format!("{prefix}_end"),
            lines: vec![tenx_artifact::END.to_string()],
            shape: Shape::Terminal,
            style: Style::Terminal,
        },
    ];
    let mut links = vec![Link {
        from: format!("{prefix}_start"),
        to: node_id(&graph.entry),
        label: None,
        kind: LinkKind::Solid,
    }];
    // Extra entries: a run may start there too.
    links.extend(graph.entries.iter().map(|entry| Link {
        from: format!("{prefix}_start"),
        to: node_id(entry),
        label: Some("may start".to_string()),
        kind: LinkKind::Dotted,
    }));
    for (n, (node, spec)) in graph.nodes.iter().enumerate() {
        let id = format!("{prefix}_n{n}");
        match spec.kind {
            NodeKind::Agent => {
                let agent = artifact.agents.get(&spec.reference);
                let model = agent.map_or("?", |a| a.model.as_str());
                boxes.push(Boxed {
                    id: id.clone(),
                    lines: vec![node.clone(), format!("agent · {model}")],
                    shape: Shape::Agent,
                    style: Style::Agent,
                });
                // The agents it may call as tools, attached like its tools.
                for (t, used) in agent.into_iter().flat_map(|a| &a.agent_tools).enumerate() {
                    let box_id = format!("{id}_c{t}");
                    boxes.push(Boxed {
                        id: box_id.clone(),
                        lines: vec![used.tool_name.clone(), format!("agent tool · {}", used.agent)],
                        shape: Shape::ToolBox,
                        style: Style::Agent,
                    });
                    links.push(Link {
                        from: id.clone(),
                        to: box_id,
                        label: None,
                        kind: LinkKind::Dotted,
                    });
                }
                for (t, tool_name) in agent.into_iter().flat_map(|a| &a.allowed_tools).enumerate() {
                    let tool = artifact.tools.get(tool_name);
                    let box_id = format!("{id}_t{t}");
                    let mut from = id.clone();
                    if let Some(approval) = tool.and_then(|t| t.approval.as_ref()) {
                        let gate_id = format!("{id}_a{t}");
                        boxes.push(Boxed {
                            id: gate_id.clone(),
                            lines: vec!["approval".to_string(), shorten(&approval.message, 48)],
                            shape: Shape::Gate,
                            style: Style::Gate,
                        });
                        links.push(Link {
                            from,
                            to: gate_id.clone(),
                            label: None,
                            kind: LinkKind::Dotted,
                        });
                        from = gate_id;
                    }
                    boxes.push(Boxed {
                        id: box_id.clone(),
                        lines: vec![tool_name.clone(), tool_summary(tool)],
                        shape: Shape::ToolBox,
                        style: Style::of_tool(tool),
                    });
                    links.push(Link {
                        from,
                        to: box_id,
                        label: None,
                        kind: LinkKind::Dotted,
                    });
                }
            }
            NodeKind::Tool => {
                let tool = artifact.tools.get(&spec.reference);
                boxes.push(Boxed {
                    id,
                    lines: vec![node.clone(), format!("tool · {}", tool_summary(tool))],
                    shape: Shape::ToolNode,
                    style: Style::of_tool(tool),
                });
            }
            NodeKind::Interrupt => {
                let interrupt = artifact.interrupts.get(&spec.reference);
                let mut lines = vec![node.clone(), "interrupt".to_string()];
                if let Some(approves) = interrupt.filter(|i| !i.approves.is_empty()) {
                    lines.push(format!("approves {}", approves.approves.join(", ")));
                }
                boxes.push(Boxed {
                    id,
                    lines,
                    shape: Shape::Gate,
                    style: Style::Gate,
                });
            }
            // A subgraph is drawn as an agent-shaped box naming the graph it runs.
            NodeKind::Graph => boxes.push(Boxed {
                id,
                lines: vec![node.clone(), format!("graph · {}", spec.reference)],
                shape: Shape::Agent,
                style: Style::Agent,
            }),
        }
    }
    for edge in &graph.edges {
        let handoff = edge.kind == EdgeKind::Handoff;
        let label = handoff
            .then(|| {
                let target = graph.nodes.get(&edge.to).map(|n| n.reference.as_str());
                graph
                    .nodes
                    .get(&edge.from)
                    .and_then(|n| artifact.agents.get(&n.reference))
                    .and_then(|a| a.handoffs.iter().find(|h| Some(h.target.as_str()) == target))
                    .map(|h| h.tool_name.clone())
            })
            .flatten();
        links.push(Link {
            from: node_id(&edge.from),
            to: node_id(&edge.to),
            label,
            kind: if handoff { LinkKind::Dashed } else { LinkKind::Solid },
        });
    }
    for route in &graph.routes {
        let by = route.by.as_deref().unwrap_or("label");
        for (number, arm) in route.arms.iter().enumerate() {
            let label = match arm {
                Arm::Label { label, .. } => format!("{by} == {}", json_text(&Value::String(label.clone()))),
                Arm::When { condition, .. } => format!("when {}", condition_text(condition)),
                Arm::Else { .. } => "else".to_string(),
            };
            links.push(Link {
                from: node_id(&route.from),
                to: node_id(arm.target()),
                label: Some(format!("({}) {label}", number + 1)),
                kind: LinkKind::Solid,
            });
        }
    }
    for fork in &graph.forks {
        let into = match (&fork.kind, &fork.over, &fork.item) {
            (tenx_artifact::ForkKind::Map, Some(over), Some(item)) => format!("map over {over} as {item}"),
            (tenx_artifact::ForkKind::Map, _, _) => "map".to_string(),
            (tenx_artifact::ForkKind::Parallel, _, _) => "parallel".to_string(),
        };
        for branch in &fork.branches {
            links.push(Link {
                from: node_id(&fork.from),
                to: node_id(branch),
                label: Some(into.clone()),
                kind: LinkKind::Thick,
            });
        }
        links.push(Link {
            from: node_id(&fork.from),
            to: node_id(&fork.join),
            label: Some("join".to_string()),
            kind: LinkKind::Thick,
        });
    }
    Drawing {
        id: prefix.to_string(),
        title: format!("graph {name}"),
        boxes,
        links,
    }
}

/// `high risk · approval`, `low risk`, …
fn tool_summary(tool: Option<&Tool>) -> String {
    let Some(tool) = tool else {
        return "unknown".to_string();
    };
    let risk = match tool.risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
        Risk::Prohibited => "prohibited",
    };
    let mut text = format!("{risk} risk");
    if tool.approval.is_some() {
        text.push_str(" · approval");
    }
    if !tool.approved_by.is_empty() {
        text.push_str(&format!(" · approved by {}", tool.approved_by.join(", ")));
    }
    text
}

/// A condition written back in `.tenx` syntax: `score < 0.3 and not escalated`.
pub(crate) fn condition_text(condition: &Condition) -> String {
    // Renders children of `and`/`or`/`not` in parentheses when they are compound.
    fn inner(condition: &Condition) -> String {
        match condition {
            Condition::Or { conditions } | Condition::And { conditions } if conditions.len() > 1 => {
                format!("({})", condition_text(condition))
            }
            _ => condition_text(condition),
        }
    }
    match condition {
        Condition::Or { conditions } if conditions.is_empty() => "false".to_string(),
        Condition::And { conditions } if conditions.is_empty() => "true".to_string(),
        Condition::Or { conditions } => conditions.iter().map(inner).collect::<Vec<_>>().join(" or "),
        Condition::And { conditions } => conditions.iter().map(inner).collect::<Vec<_>>().join(" and "),
        Condition::Not { condition } => format!("not {}", inner(condition)),
        Condition::Truthy { field } => field.join("."),
        Condition::Compare { field, op, value } => {
            let op = op.symbol();
            format!("{} {op} {}", field.join("."), json_text(value))
        }
    }
}

/// Compact JSON text of a value.
fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `text` cut to at most `limit` characters, with `…` when it was cut.
fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut short: String = text.chars().take(limit.saturating_sub(1)).collect();
    short.push('…');
    short
}
