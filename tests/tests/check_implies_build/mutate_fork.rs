//! Mutations that fork: an edge `a -> b` replaced by a `parallel` or `map` block out of `a`,
//! whose branches, join, list and item fields are nodes and state fields of the program (or odd
//! ones), sometimes with a `max_concurrency`, and a `reduce` line for a state field. Most are
//! refused (regions, shapes, write conflicts, approvals across the fork); the ones check
//! accepts must seal and load with the artifact's own fork rules.

use crate::mutate::pick;
use fastrand::Rng;

/// The state fields declared in `state { … }` blocks (the word before `:` or `?:`).
fn state_fields(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in lines {
        let trimmed = line.trim();
        if trimmed.starts_with("state") && trimmed.ends_with('{') {
            inside = true;
            continue;
        }
        if inside && trimmed.starts_with('}') {
            inside = false;
            continue;
        }
        if inside && let Some((name, _)) = trimmed.split_once(':') {
            let name = name.trim_end_matches('?').trim();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// An edge turned into a fork out of its node, or a `reduce` added to a graph.
pub fn add_fork(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let nodes = crate::mutate::nodes(lines);
    if rng.u8(0..4) == 0 {
        let fields = state_fields(lines);
        let field = pick(rng, &fields)?.clone();
        let reduce = match rng.u8(0..5) {
            0 => "append".to_owned(),
            1 => "merge".to_owned(),
            2 => "sum".to_owned(),
            3 => "last".to_owned(),
            _ => format!("last({}, {})", pick(rng, &nodes)?, pick(rng, &nodes)?),
        };
        let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
        lines.insert(at + 1, format!("  reduce = {{ {field}: {reduce} }}"));
        return Some(format!("add `reduce = {{ {field}: {reduce} }}`"));
    }
    let (i, from, to) = pick(rng, &crate::mutate::edges(lines))?.clone();
    let other = pick(rng, &nodes)?.clone();
    let join = pick(rng, &nodes)?.clone();
    let width = match rng.u8(0..6) {
        0 => "\n    max_concurrency = 2".to_owned(),
        1 => format!("\n    max_concurrency = {}", [0, 1, 256, 257][rng.usize(0..4)]),
        _ => String::new(),
    };
    let block = if rng.bool() {
        format!("  parallel {from} {{\n    branches = [{to}, {other}]\n    join = {join}{width}\n  }}")
    } else {
        let fields = state_fields(lines);
        let over = pick(rng, &fields).cloned().unwrap_or_else(|| "items".to_owned());
        let item = pick(rng, &fields).cloned().unwrap_or_else(|| "item".to_owned());
        format!(
            "  map {from} {{\n    over = {over}\n    item = {item}\n    node = {to}\n    join = {join}{width}\n  }}"
        )
    };
    let line = lines.get_mut(i)?;
    *line = block;
    Some(format!("fork `{from} -> {to}` into `{}`", line.replace('\n', " ")))
}
