//! Mermaid `flowchart` text of an artifact's graphs: one subgraph per graph, shapes by kind
//! (agents as boxes, tool nodes as subroutines, attached tools as parallelograms, interrupts and
//! approval gates as hexagons, start and `END` as stadiums), and `classDef` styles that
//! highlight high-risk tools and gates.

use super::{Boxed, Drawing, LinkKind, Shape, Style, drawings};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tenx_artifact::Artifact;

/// The Mermaid text of every graph of `artifact`.
pub fn mermaid(artifact: &Artifact) -> String {
    let mut out = String::from("flowchart TD\n");
    let mut classes: BTreeMap<Style, Vec<String>> = BTreeMap::new();
    for drawing in drawings(artifact) {
        draw(&mut out, &drawing, &mut classes);
    }
    out.push_str("  classDef terminal fill:#ffffff,stroke:#5f6368\n");
    out.push_str("  classDef agent fill:#e8f0fe,stroke:#1a73e8\n");
    out.push_str("  classDef tool fill:#f1f3f4,stroke:#5f6368\n");
    out.push_str("  classDef medium fill:#fef7e0,stroke:#f9ab00\n");
    out.push_str("  classDef high fill:#fce8e6,stroke:#d93025,stroke-width:3px\n");
    out.push_str("  classDef gate fill:#fef7e0,stroke:#e37400,stroke-width:3px\n");
    for (style, ids) in classes {
        let _ = writeln!(out, "  class {} {}", ids.join(","), style.class());
    }
    out
}

fn draw(out: &mut String, drawing: &Drawing, classes: &mut BTreeMap<Style, Vec<String>>) {
    let _ = writeln!(out, "  subgraph {}[\"{}\"]", drawing.id, escape(&drawing.title));
    let _ = writeln!(out, "    direction TB");
    for boxed in &drawing.boxes {
        let _ = writeln!(out, "    {}", node(boxed));
        classes.entry(boxed.style).or_default().push(boxed.id.clone());
    }
    for link in &drawing.links {
        let line = match (link.kind, &link.label) {
            (LinkKind::Solid, None) => format!("{} --> {}", link.from, link.to),
            (LinkKind::Solid, Some(label)) => format!("{} -->|\"{}\"| {}", link.from, escape(label), link.to),
            (LinkKind::Dashed, None) => format!("{} -.-> {}", link.from, link.to),
            (LinkKind::Dashed, Some(label)) => format!("{} -.->|\"{}\"| {}", link.from, escape(label), link.to),
            (LinkKind::Dotted, _) => format!("{} -.- {}", link.from, link.to),
            (LinkKind::Thick, None) => format!("{} ==> {}", link.from, link.to),
            (LinkKind::Thick, Some(label)) => format!("{} ==>|\"{}\"| {}", link.from, escape(label), link.to),
        };
        let _ = writeln!(out, "    {line}");
    }
    out.push_str("  end\n");
}

/// A node statement: `id["label"]` in the shape of its kind.
fn node(boxed: &Boxed) -> String {
    let label = boxed.lines.iter().map(|l| escape(l)).collect::<Vec<_>>().join("<br/>");
    let (open, close) = match boxed.shape {
        Shape::Terminal => ("([", "])"),
        Shape::Agent => ("[", "]"),
        Shape::ToolNode => ("[[", "]]"),
        Shape::ToolBox => ("[/", "/]"),
        Shape::Gate => ("{{", "}}"),
    };
    format!("{}{open}\"{label}\"{close}", boxed.id)
}

/// Text safe inside a quoted Mermaid label: characters Mermaid or its HTML labels would read
/// are written as numeric entity codes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
