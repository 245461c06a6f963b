//! Graphviz DOT text of an artifact's graphs: one cluster per graph, shapes by kind, dashed
//! handoffs, dotted links to each agent's tools, and colours that highlight high-risk tools and
//! approval gates.

use super::{Boxed, Drawing, LinkKind, Shape, Style, drawings};
use std::fmt::Write as _;
use tenx_artifact::Artifact;

/// The DOT text of every graph of `artifact`.
pub fn dot(artifact: &Artifact) -> String {
    let mut out = String::from("digraph tenx {\n");
    out.push_str("  graph [rankdir=TB, fontname=\"Helvetica\"];\n");
    out.push_str("  node [fontname=\"Helvetica\", fontsize=11];\n");
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=10];\n");
    for drawing in drawings(artifact) {
        draw(&mut out, &drawing);
    }
    out.push_str("}\n");
    out
}

fn draw(out: &mut String, drawing: &Drawing) {
    let _ = writeln!(out, "  subgraph \"cluster_{}\" {{", drawing.id);
    let _ = writeln!(out, "    label={};", quote(&drawing.title));
    for boxed in &drawing.boxes {
        let _ = writeln!(out, "    {};", node(boxed));
    }
    for link in &drawing.links {
        let mut attributes = Vec::new();
        match link.kind {
            LinkKind::Solid => {}
            LinkKind::Dashed => attributes.push("style=dashed".to_string()),
            LinkKind::Thick => attributes.push("penwidth=2".to_string()),
            LinkKind::Dotted => {
                attributes.push("style=dotted".to_string());
                attributes.push("arrowhead=none".to_string());
            }
        }
        if let Some(label) = &link.label {
            attributes.push(format!("label={}", quote(label)));
        }
        let attributes = if attributes.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attributes.join(", "))
        };
        let _ = writeln!(out, "    {} -> {}{attributes};", quote(&link.from), quote(&link.to));
    }
    out.push_str("  }\n");
}

/// A node statement with its shape and colours.
fn node(boxed: &Boxed) -> String {
    let shape = match boxed.shape {
        Shape::Terminal => "oval",
        Shape::Agent => "box",
        Shape::ToolNode => "component",
        Shape::ToolBox => "note",
        Shape::Gate => "hexagon",
    };
    let (fill, stroke, width) = match boxed.style {
        Style::Terminal => ("#ffffff", "#5f6368", 1),
        Style::Agent => ("#e8f0fe", "#1a73e8", 1),
        Style::Tool => ("#f1f3f4", "#5f6368", 1),
        Style::Medium => ("#fef7e0", "#f9ab00", 1),
        Style::High => ("#fce8e6", "#d93025", 3),
        Style::Gate => ("#fef7e0", "#e37400", 3),
    };
    let rounded = if boxed.shape == Shape::Agent {
        "rounded,filled"
    } else {
        "filled"
    };
    format!(
        "{} [label={}, shape={shape}, style=\"{rounded}\", fillcolor=\"{fill}\", color=\"{stroke}\", penwidth={width}]",
        quote(&boxed.id),
        quote(&boxed.lines.join("\n"))
    )
}

/// A DOT double-quoted string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
