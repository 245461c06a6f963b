//! Mutations of a program's text, line by line. Each one is a mistake (or an unusual but valid
//! choice) an author can make: renaming a declaration to an odd name, exposing a tool under an
//! odd name, deleting or duplicating a line or a block, rerouting edges, turning an edge into a
//! route arm, changing a risk, adding or repeating handoffs (with or without typed payloads),
//! calling an agent as a tool (nesting calls, closing a circle, calling an agent that hands off),
//! edges, nodes and tool selections, adding an extra entry, a `resume` or a tool node's result
//! field, binding a tool another way (`native(…)`, `http` with headers), adding risk rules
//! (`mutate_risk`), adding a retry policy to a tool or a node (`mutate_retry`), forking an edge
//! into a `parallel` or `map` block or adding a `reduce` (`mutate_fork`), giving a field an odd
//! value.
//! Most results are refused by `check`; the ones it accepts are what the property is about.

use fastrand::Rng;

/// Applies one to three mutations to `text`; returns the new text and what was done.
pub fn mutate(rng: &mut Rng, text: &str) -> (String, Vec<String>) {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut applied = Vec::new();
    let count = match rng.u8(0..10) {
        0 => 0,
        1..=5 => 1,
        6..=8 => 2,
        _ => 3,
    };
    for _ in 0..count {
        let done = match rng.u8(0..34) {
            0..=2 => rename_declaration(rng, &mut lines),
            3..=5 => expose_tool(rng, &mut lines),
            6 => delete_line(rng, &mut lines),
            7 => duplicate_line(rng, &mut lines),
            8 => delete_block(rng, &mut lines),
            9 => copy_block(rng, &mut lines),
            10 => reroute_edge(rng, &mut lines),
            11 | 12 => edge_to_route(rng, &mut lines),
            13 => change_risk(rng, &mut lines),
            14 | 15 => add_handoff(rng, &mut lines),
            16 => add_edge(rng, &mut lines),
            17 => add_node(rng, &mut lines),
            18 => select_tool(rng, &mut lines),
            19 => repeat_handoff(rng, &mut lines),
            20 => add_entry(rng, &mut lines),
            21 => add_result(rng, &mut lines),
            22 => rebind_tool(rng, &mut lines),
            23 => bind_argument(rng, &mut lines),
            24 | 25 => add_loop_way(rng, &mut lines),
            26 => add_resume(rng, &mut lines),
            27 => crate::mutate_risk::add_risk_rules(rng, &mut lines),
            28 => crate::mutate_retry::add_retry(rng, &mut lines),
            29 | 30 => crate::mutate_fork::add_fork(rng, &mut lines),
            31 | 32 => add_agent_tool(rng, &mut lines),
            _ => odd_value(rng, &mut lines),
        };
        applied.extend(done);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    (out, applied)
}

/// The keywords that start a declaration with a name.
const DECLARATIONS: &[&str] = &[
    "tag",
    "schema",
    "model",
    "tool",
    "agent",
    "validator",
    "interrupt",
    "graph",
];

/// Names that are odd as identifiers: reserved words, generated names, lengths around 52 (the
/// longest handoff target) and 64 (the longest tool name), and names of other kinds.
fn odd_identifier(rng: &mut Rng) -> String {
    let fixed = [
        "END",
        "end",
        "transfer_to_x",
        "transfer_to_",
        "builtin",
        "route",
        "when",
        "not",
        "else",
        "state",
        "entry",
        "nodes",
        "string",
        "object",
        "bool",
        "env",
        "std",
        "tagged",
        "_",
        "x1",
        "a",
    ];
    match rng.u8(0..4) {
        0 => "a".repeat(*[51, 52, 53, 63, 64, 65, 200].get(rng.usize(0..7)).unwrap_or(&64)),
        1 => format!("{}_{}", ["x", "name", "transfer"][rng.usize(0..3)], rng.u16(0..1000)),
        _ => fixed[rng.usize(0..fixed.len())].to_owned(),
    }
}

/// Strings that are odd as a tool's model-facing name.
fn odd_exposed_name(rng: &mut Rng) -> String {
    let fixed = [
        "",
        " ",
        "look up",
        "lookup_\u{043E}rder",
        "\u{0430}",
        "a\u{00A0}b",
        "a\u{200B}b",
        "a.b",
        "a/b",
        "a-b",
        "ok_name",
        "lookup",
        "transfer_to_x",
        "transfer_to_billing",
        "END",
        "\\u{0430}bc",
        "tab\\there",
        "q\\\"uote",
        "\u{1F600}",
    ];
    match rng.u8(0..4) {
        0 => "x".repeat(*[63, 64, 65, 200].get(rng.usize(0..4)).unwrap_or(&64)),
        _ => fixed[rng.usize(0..fixed.len())].to_owned(),
    }
}

/// The declarations of `kind` written as a block (`kind name {`): their line and name.
pub fn blocks_of(lines: &[String], kind: &str) -> Vec<(usize, String)> {
    declarations(lines)
        .into_iter()
        .filter(|(i, k, _)| k == kind && lines.get(*i).is_some_and(|l| l.trim_end().ends_with('{')))
        .map(|(i, _, n)| (i, n))
        .collect()
}

/// The declarations: (line, keyword, name).
fn declarations(lines: &[String]) -> Vec<(usize, String, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let mut words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            let keyword = words.next()?;
            if !DECLARATIONS.contains(&keyword) {
                return None;
            }
            let name = words.next().filter(|n| !n.is_empty())?;
            Some((i, keyword.to_owned(), name.to_owned()))
        })
        .collect()
}

/// The declared names of one kind.
fn names_of(lines: &[String], kind: &str) -> Vec<String> {
    declarations(lines)
        .into_iter()
        .filter(|(_, k, _)| k == kind)
        .map(|(_, _, n)| n)
        .collect()
}

pub fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> Option<&'a T> {
    if items.is_empty() {
        None
    } else {
        items.get(rng.usize(0..items.len()))
    }
}

/// Replaces every whole-word `from` by `to`.
fn replace_word(line: &str, from: &str, to: &str) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(from) {
        let before = rest.get(..at).unwrap_or_default();
        let after = rest.get(at + from.len()..).unwrap_or_default();
        let bounded = !before.chars().next_back().is_some_and(is_word) && !after.chars().next().is_some_and(is_word);
        out.push_str(before);
        out.push_str(if bounded { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A declaration, and every use of its name, renamed to an odd name.
fn rename_declaration(rng: &mut Rng, lines: &mut [String]) -> Option<String> {
    let (_, kind, name) = pick(rng, &declarations(lines))?.clone();
    let to = if rng.bool() {
        odd_identifier(rng)
    } else {
        // Another declaration's name: a collision.
        pick(rng, &declarations(lines))?.2.clone()
    };
    for line in lines.iter_mut() {
        *line = replace_word(line, &name, &to);
    }
    Some(format!("rename {kind} `{name}` to `{to}`"))
}

/// A tool exposed under an odd `name = "…"` (replacing any it has).
fn expose_tool(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let tools = blocks_of(lines, "tool");
    let (at, tool) = pick(rng, &tools)?.clone();
    let exposed = odd_exposed_name(rng);
    let end = (at + 1..lines.len())
        .find(|&i| lines.get(i).is_some_and(|l| l.starts_with('}')))
        .unwrap_or(lines.len());
    for i in at + 1..end {
        if lines.get(i).is_some_and(|l| l.trim_start().starts_with("name ")) {
            lines.remove(i);
            break;
        }
    }
    lines.insert(at + 1, format!("  name = \"{exposed}\""));
    Some(format!("expose tool `{tool}` as {exposed:?}"))
}

fn delete_line(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let at = rng.usize(0..lines.len());
    let gone = lines.remove(at);
    Some(format!("delete line {}: {gone:?}", at + 1))
}

fn duplicate_line(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let at = rng.usize(0..lines.len().max(1));
    let line = lines.get(at)?.clone();
    lines.insert(at, line.clone());
    Some(format!("duplicate line {}: {line:?}", at + 1))
}

/// The lines of a top-level block: from its declaration line to its closing `}` in column 0.
fn block(lines: &[String], start: usize) -> Option<std::ops::Range<usize>> {
    if !lines.get(start)?.trim_end().ends_with('{') {
        return None;
    }
    let end = (start + 1..lines.len()).find(|&i| lines.get(i).is_some_and(|l| l.starts_with('}')))?;
    Some(start..end + 1)
}

/// The lines of a nested block (a route): from its line to the first `}` after it.
fn block_at(lines: &[String], start: usize) -> Option<std::ops::Range<usize>> {
    let end = (start + 1..lines.len()).find(|&i| lines.get(i).is_some_and(|l| l.trim() == "}"))?;
    Some(start..end + 1)
}

fn delete_block(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let (at, kind, name) = pick(rng, &declarations(lines))?.clone();
    let range = block(lines, at).unwrap_or(at..at + 1);
    lines.drain(range);
    Some(format!("delete {kind} `{name}`"))
}

/// A copy of a block under a new name (a new declaration nothing uses yet, or, one time in
/// four, under the same name).
fn copy_block(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let (at, kind, name) = pick(rng, &declarations(lines))?.clone();
    let range = block(lines, at).unwrap_or(at..at + 1);
    let to = if rng.u8(0..4) == 0 {
        name.clone()
    } else {
        format!("{name}_copy")
    };
    let mut copy: Vec<String> = lines.get(range.clone())?.to_vec();
    if let Some(first) = copy.first_mut() {
        *first = replace_word(first, &name, &to);
    }
    copy.insert(0, String::new());
    let end = range.end;
    lines.splice(end..end, copy);
    Some(format!("copy {kind} `{name}` as `{to}`"))
}

/// Edges `a -> b` written on their own line (not route arms): (line, from, to).
pub fn edges(lines: &[String]) -> Vec<(usize, String, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let (from, to) = line.split_once("->")?;
            let (from, to) = (from.trim(), to.trim());
            let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            (word(from) && word(to) && from != "else").then(|| (i, from.to_owned(), to.to_owned()))
        })
        .collect()
}

/// The node names listed in `nodes = […]` lines, and `END`.
pub fn nodes(lines: &[String]) -> Vec<String> {
    let mut found = vec!["END".to_owned()];
    for line in lines {
        if let Some(list) = line.trim().strip_prefix("nodes")
            && let Some(list) = list.trim().strip_prefix('=')
        {
            let list = list.trim().trim_start_matches('[').trim_end_matches(']');
            found.extend(list.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()));
        }
    }
    found
}

/// An edge's target swapped with another edge's, or replaced by some node.
fn reroute_edge(rng: &mut Rng, lines: &mut [String]) -> Option<String> {
    let all = edges(lines);
    let (i, from, to) = pick(rng, &all)?.clone();
    let new = if rng.bool() {
        pick(rng, &all)?.2.clone()
    } else {
        pick(rng, &nodes(lines))?.clone()
    };
    let line = lines.get_mut(i)?;
    *line = format!("  {from} -> {new}");
    Some(format!("reroute `{from} -> {to}` to `{new}`"))
}

/// An edge turned into a route with one `else` arm, or into an arm of the route its node
/// already has.
fn edge_to_route(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let (i, from, to) = pick(rng, &edges(lines))?.clone();
    let existing = lines.iter().position(|l| {
        let mut words = l.split_whitespace();
        words.next() == Some("route") && words.next() == Some(from.as_str())
    });
    lines.remove(i);
    match existing {
        Some(at) => {
            let at = if at > i { at - 1 } else { at };
            let route = block_at(lines, at)?;
            let fallback = route
                .clone()
                .find(|&k| lines.get(k).is_some_and(|l| l.trim_start().starts_with("else")))?;
            let line = lines.get_mut(fallback)?;
            *line = format!("    else -> {to}");
            Some(format!(
                "move `{from} -> {to}` into the `else` of the route of `{from}`"
            ))
        }
        None => {
            lines.splice(
                i..i,
                [
                    format!("  route {from} {{"),
                    format!("    else -> {to}"),
                    "  }".to_owned(),
                ],
            );
            Some(format!("turn `{from} -> {to}` into a route arm"))
        }
    }
}

fn change_risk(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let risk = ["low", "medium", "high", "prohibited"][rng.usize(0..4)];
    let written: Vec<usize> = (0..lines.len())
        .filter(|&i| lines.get(i).is_some_and(|l| l.trim_start().starts_with("risk ")))
        .collect();
    if let Some(&i) = pick(rng, &written).filter(|_| rng.bool()) {
        let line = lines.get_mut(i)?;
        *line = format!("  risk = {risk}");
        return Some(format!("set risk on line {} to {risk}", i + 1));
    }
    let tools = blocks_of(lines, "tool");
    let (at, tool) = pick(rng, &tools)?.clone();
    lines.insert(at + 1, format!("  risk = {risk}"));
    Some(format!("give tool `{tool}` risk {risk}"))
}

/// A handoff added to an agent (to an existing or odd agent name), with or without the edge.
fn add_handoff(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let agents = blocks_of(lines, "agent");
    let (at, agent) = pick(rng, &agents)?.clone();
    let target = pick(rng, &agents)?.1.clone();
    let range = block(lines, at)?;
    let existing =
        (range.start..range.end).find(|&i| lines.get(i).is_some_and(|l| l.trim_start().starts_with("handoffs")));
    let payload = handoff_payload(rng, lines);
    match existing {
        Some(i) => {
            let line = lines.get_mut(i)?;
            if let Some(open) = line.find('[') {
                line.insert_str(open + 1, &format!("{target}{payload}, "));
            }
        }
        None => lines.insert(at + 1, format!("  handoffs = [{target}{payload}]")),
    }
    let with_edge = rng.bool();
    if with_edge {
        let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
        lines.insert(at + 1, format!("  {agent} -> {target}"));
    }
    Some(format!(
        "agent `{agent}` hands off to `{target}`{}",
        if with_edge { " along an edge" } else { "" }
    ))
}

/// An agent called as a tool by an agent (another, itself, one that already calls agents or
/// hands off), with or without parameters: nesting, circles and handoffs inside calls.
fn add_agent_tool(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let agents = blocks_of(lines, "agent");
    let (at, agent) = pick(rng, &agents)?.clone();
    let called = pick(rng, &agents)?.1.clone();
    let range = block(lines, at)?;
    let existing =
        (range.start..range.end).find(|&i| lines.get(i).is_some_and(|l| l.trim_start().starts_with("agents")));
    let params = if rng.bool() {
        ""
    } else {
        "(question: string \"What to ask\")"
    };
    match existing {
        Some(i) => {
            let line = lines.get_mut(i)?;
            if let Some(open) = line.find('[') {
                line.insert_str(open + 1, &format!("{called}{params}, "));
            }
        }
        None => lines.insert(at + 1, format!("  agents = [{called}{params}]")),
    }
    Some(format!("agent `{agent}` calls `{called}` as a tool"))
}

/// A payload for an added handoff: none, empty, or parameters of several types, one often named
/// like a state field of the program (so it writes that field, fitting it or not).
fn handoff_payload(rng: &mut Rng, lines: &[String]) -> String {
    let mut fields: Vec<String> = Vec::new();
    let mut in_state = false;
    for line in lines {
        let l = line.trim_start();
        if l.starts_with("state {") || l.starts_with("state{") {
            in_state = true;
        } else if in_state && l.starts_with('}') {
            in_state = false;
        } else if in_state && let Some(name) = l.split([':', '?', ' ']).next().filter(|n| !n.is_empty()) {
            fields.push(name.to_owned());
        }
    }
    let field = pick(rng, &fields).cloned().unwrap_or_else(|| "reason".to_owned());
    let types = [
        "string \"Why\"",
        "enum(\"low\", \"high\") = \"low\"",
        "enum(\"publish\", \"revise\")",
        "int(min: 1)",
        "bool",
        "list<string>",
    ];
    let ty = pick(rng, &types).copied().unwrap_or("string");
    match rng.u8(0..6) {
        0 | 1 => String::new(),
        2 => "()".to_owned(),
        3 => format!("({field}: {ty})"),
        4 => format!("({field}?: {ty}, note?: string)"),
        _ => format!("(reason: {ty}, reason: string)"),
    }
}

/// A handoff (or a tool selection) repeated in its list.
fn repeat_handoff(rng: &mut Rng, lines: &mut [String]) -> Option<String> {
    let lists: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            lines.get(i).is_some_and(|l| {
                let l = l.trim_start();
                (l.starts_with("handoffs") || l.starts_with("tools")) && l.contains('[')
            })
        })
        .collect();
    let i = *pick(rng, &lists)?;
    let line = lines.get_mut(i)?;
    let open = line.find('[')?;
    let close = line.rfind(']')?;
    let first = line.get(open + 1..close)?.split(',').next()?.trim().to_owned();
    if first.is_empty() {
        return None;
    }
    line.insert_str(close, &format!(", {first}"));
    Some(format!("repeat `{first}` on line {}", i + 1))
}

/// An edge between two nodes of the program.
fn add_edge(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let all = nodes(lines);
    let from = pick(rng, &all)?.clone();
    let to = pick(rng, &all)?.clone();
    let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    lines.insert(at + 1, format!("  {from} -> {to}"));
    Some(format!("add edge `{from} -> {to}`"))
}

/// A declared agent, tool or interrupt added to a graph's nodes.
fn add_node(rng: &mut Rng, lines: &mut [String]) -> Option<String> {
    let candidates: Vec<String> = declarations(lines)
        .into_iter()
        .filter(|(_, k, _)| matches!(k.as_str(), "agent" | "tool" | "interrupt"))
        .map(|(_, _, n)| n)
        .collect();
    let node = pick(rng, &candidates)?.clone();
    let i = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    let line = lines.get_mut(i)?;
    let close = line.rfind(']')?;
    line.insert_str(close, &format!(", {node}"));
    Some(format!("add node `{node}`"))
}

/// Some node (or `END`) added to a graph as an extra entry: a run may then start there, so
/// reachability and the approval proof must count from it.
fn add_entry(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let all = nodes(lines);
    let node = pick(rng, &all)?.clone();
    let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    lines.insert(at + 1, format!("  entries = [{node}]"));
    Some(format!("add extra entry `{node}`"))
}

/// A graph made to resume at the agent that ended the last run (or at an odd value): every
/// agent node with a way to `END` becomes a start of the approval proof.
fn add_resume(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let value = *pick(rng, &["last_agent", "last_agent", "entry", "last"])?;
    let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    lines.insert(at + 1, format!("  resume = {value}"));
    Some(format!("add `resume = {value}`"))
}

/// Some node's result written into some state field (or `END`'s into an odd name).
fn add_result(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let all = nodes(lines);
    let node = pick(rng, &all)?.clone();
    let mut fields = vec!["result".to_owned()];
    let mut in_state = false;
    for line in lines.iter() {
        let line = line.trim();
        if line.starts_with("state") && line.ends_with('{') {
            in_state = true;
        } else if in_state && line.starts_with('}') {
            in_state = false;
        } else if in_state && let Some((name, _)) = line.split_once(':') {
            fields.push(name.trim().trim_end_matches('?').to_owned());
        }
    }
    let field = pick(rng, &fields)?.clone();
    let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    lines.insert(at + 1, format!("  results = {{ {node}: {field} }}"));
    Some(format!("write the result of `{node}` into `{field}`"))
}

/// A failure handler or a visit limit from some node to some node (or `END`, or itself): ways
/// the approval proof must follow like edges.
fn add_loop_way(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let all = nodes(lines);
    let node = pick(rng, &all)?.clone();
    let target = pick(rng, &all)?.clone();
    let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    if rng.bool() {
        lines.insert(at + 1, format!("  on_error = {{ {node}: {target} }}"));
        Some(format!("`{node}` fails over to `{target}`"))
    } else {
        let max = *pick(rng, &[0u64, 1, 2, 3, 1000, 1001])?;
        lines.insert(
            at + 1,
            format!("  visits = {{ {node}: {{ max: {max}, then: {target} }} }}"),
        );
        Some(format!("`{node}` entered at most {max} times, then `{target}`"))
    }
}

/// A declared tool added to an agent's `tools`.
fn select_tool(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let tool = pick(rng, &names_of(lines, "tool"))?.clone();
    let agents: Vec<usize> = blocks_of(lines, "agent").into_iter().map(|(i, _)| i).collect();
    let at = *pick(rng, &agents)?;
    let range = block(lines, at)?;
    let existing =
        (range.start..range.end).find(|&i| lines.get(i).is_some_and(|l| l.trim_start().starts_with("tools")));
    match existing {
        Some(i) => {
            let line = lines.get_mut(i)?;
            line.push_str(&format!(" + [{tool}]"));
        }
        None => lines.insert(at + 1, format!("  tools = [{tool}]")),
    }
    Some(format!("select tool `{tool}` on line {}", at + 1))
}

/// A field `key = value` inside a block given an odd value: another shape, a huge or tiny
/// number, an empty list or map, a boolean where a schema goes.
fn odd_value(rng: &mut Rng, lines: &mut [String]) -> Option<String> {
    let values = [
        "true",
        "false",
        "0",
        "-1",
        "1",
        "1e308",
        "1e999",
        "99999999999999999999",
        "0.5",
        "\"\"",
        "\"x\"",
        "[]",
        "{}",
        "[{}]",
        "{ \"type\": \"string\" }",
        "{ \"type\": \"object\" }",
        "{ \"type\": \"object\", \"properties\": {} }",
        "low",
        "null",
        "env(\"X\")",
        "\"${X}\"",
        "\"{x}\"",
        "5s",
        "0s",
    ];
    let fields: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            lines.get(i).is_some_and(|l| {
                l.starts_with("  ") && l.contains(" = ") && !l.trim_end().ends_with('{') && !l.trim_end().ends_with('[')
            })
        })
        .collect();
    let i = *pick(rng, &fields)?;
    let value = values[rng.usize(0..values.len())];
    let line = lines.get_mut(i)?;
    let (key, _) = line.split_once(" = ")?;
    let key = key.to_owned();
    *line = format!("{key} = {value}");
    Some(format!("set `{}` on line {} to `{value}`", key.trim(), i + 1))
}

/// A tool's `run` binding replaced: a `native` handler (shared names, so two tools may run one
/// handler), or an `http` binding with good or bad headers.
fn rebind_tool(rng: &mut Rng, lines: &mut [String]) -> Option<String> {
    let bindings = [
        "native(\"x.y\")",
        "native(\"crm.lookup\")",
        "native(\"X.y\")",
        "http(POST, \"${U}/x\", headers: { \"Authorization\": \"Bearer ${T}\" })",
        "http(GET, \"${U}/x?token=${T}\", timeout: 1s, headers: { X_Id: \"\\$1\" })",
        "http(GET, \"${U}/x\", headers: { \"Host\": \"h\" })",
        "http(GET, \"${U}/x\", headers: { \"A\": \"1\", \"a\": \"2\" })",
    ];
    let runs: Vec<usize> = (0..lines.len())
        .filter(|&i| lines.get(i).is_some_and(|l| l.trim_start().starts_with("run ")))
        .collect();
    let i = *pick(rng, &runs)?;
    let binding = bindings[rng.usize(0..bindings.len())];
    let line = lines.get_mut(i)?;
    *line = format!("  run = {binding}");
    Some(format!("bind the tool on line {} with `{binding}`", i + 1))
}

/// A `bind = { … }` added to a tool: one of its parameters (or an odd name) bound to a state
/// field, an attribute or claim of the caller, or something no runtime can fill.
fn bind_argument(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let tools = blocks_of(lines, "tool");
    let (at, _) = pick(rng, &tools)?.clone();
    let header = lines.get(at)?.clone();
    let mut params: Vec<String> = header
        .split_once('(')
        .map(|(_, rest)| {
            rest.split(',')
                .filter_map(|p| p.split_once(':'))
                .map(|(n, _)| n.trim().trim_end_matches('?').to_owned())
                .collect()
        })
        .unwrap_or_default();
    params.extend(["order_id", "user_id", "x"].map(str::to_owned));
    let param = pick(rng, &params)?.clone();
    let sources = [
        "caller.user_id".to_owned(),
        "caller.roles".to_owned(),
        "caller.claim(\"tenant\")".to_owned(),
        "caller.claim(\"\")".to_owned(),
        "caller.email".to_owned(),
        format!("state.{param}"),
        "state.topic".to_owned(),
        "\"1\"".to_owned(),
    ];
    let source = pick(rng, &sources)?.clone();
    lines.insert(at + 1, format!("  bind = {{ {param}: {source} }}"));
    Some(format!("bind `{param}` of the tool on line {} to `{source}`", at + 1))
}
