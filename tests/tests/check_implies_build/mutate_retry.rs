//! The retry mutation: a `retry` policy added to a tool (whatever its risk, run or key, so the
//! rule that only a call that cannot act twice is retried is exercised), or a graph's `retry`
//! for some node (an agent, a tool, an interrupt, `END` or an odd name), with values in and out
//! of range, odd keys and odd error classes.

use fastrand::Rng;

/// A policy, usually valid, sometimes not.
fn policy(rng: &mut Rng) -> String {
    let choices = [
        "{}",
        "{ attempts: 3 }",
        "{ attempts: 2, backoff: 1s, max_backoff: 30s, on: [timeout, server_error] }",
        "{ attempts: 10, backoff: 500ms, on: [rate_limited, connection, timeout] }",
        "{ attempts: 1 }",
        "{ attempts: 11 }",
        "{ backoff: 0s }",
        "{ backoff: 1m }",
        "{ backoff: 1m, max_backoff: 2m }",
        "{ on: [] }",
        "{ on: [timeout, timeout] }",
        "{ on: [time_out] }",
        "{ attempt: 3 }",
        "3",
    ];
    choices[rng.usize(0..choices.len())].to_owned()
}

/// Adds a `retry` to a random tool, or to a random node of a graph.
pub fn add_retry(rng: &mut Rng, lines: &mut Vec<String>) -> Option<String> {
    let policy = policy(rng);
    if rng.bool() {
        let tools = super::mutate::blocks_of(lines, "tool");
        let (at, tool) = super::mutate::pick(rng, &tools)?.clone();
        lines.insert(at + 1, format!("  retry = {policy}"));
        return Some(format!("retry tool `{tool}` with {policy}"));
    }
    let mut nodes: Vec<String> = Vec::new();
    for line in lines.iter() {
        let line = line.trim_start();
        if let Some(list) = line.strip_prefix("nodes") {
            let list = list.trim_start().trim_start_matches('=').trim();
            let list = list.trim_start_matches('[').trim_end_matches(']');
            nodes.extend(list.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()));
        }
    }
    nodes.push("END".to_owned());
    nodes.push("ghost".to_owned());
    let node = super::mutate::pick(rng, &nodes)?.clone();
    let at = lines.iter().position(|l| l.trim_start().starts_with("nodes"))?;
    lines.insert(at + 1, format!("  retry = {{ {node}: {policy} }}"));
    Some(format!("retry node `{node}` with {policy}"))
}
