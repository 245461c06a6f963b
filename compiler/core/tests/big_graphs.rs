//! Scale and robustness of the graph and policy checks: generated programs with 10,000-node
//! graphs (a chain, a dense cycle, a chain that nothing reaches, a long path around an
//! approval, a chain of forks, forks nested 3,333 deep, a 10,000-node branch with and without a
//! way into its middle and an approval in one) are checked on an ordinary test thread, whose stack is 2 MB. The expected codes
//! are counted, and finishing at all proves the graph algorithms are iterative: a recursion
//! over 10,000 nodes would overflow that stack.

use std::collections::BTreeMap;
use std::fmt::Write as _; // `writeln!` into a `String` cannot fail
use tenx_compiler::LintLevels;
use tenx_diagnostics::SourceSet;

/// How many nodes each generated graph has.
const N: usize = 10_000;

/// Checks `text` and counts the diagnostics by code.
fn codes(text: &str) -> BTreeMap<String, usize> {
    let mut sources = SourceSet::new();
    let root = sources.add("big.tenx", text);
    let checked = tenx_compiler::check(&mut sources, root, &LintLevels::default());
    let mut counts = BTreeMap::new();
    for d in &checked.diagnostics {
        *counts.entry(d.code.as_str().to_string()).or_insert(0) += 1;
    }
    counts
}

fn expect(text: &str, expected: &[(&str, usize)]) {
    let got = codes(text);
    let want: BTreeMap<String, usize> = expected.iter().map(|(c, n)| ((*c).to_string(), *n)).collect();
    assert_eq!(got, want);
}

/// A model and `count` agents named `{prefix}0`, `{prefix}1`, …
fn agents(out: &mut String, prefix: &str, count: usize) {
    for i in 0..count {
        let _ = writeln!(
            out,
            "agent {prefix}{i} {{\n  model  = m\n  prompt = \"Step {i}.\"\n}}\n"
        );
    }
}

/// `nodes = [p0, p1, …]` (one line per node).
fn node_list(out: &mut String, names: impl Iterator<Item = String>) {
    out.push_str("  nodes = [\n");
    for name in names {
        let _ = writeln!(out, "    {name}");
    }
    out.push_str("  ]\n");
}

/// `a0 -> a1 -> … -> END`: clean.
#[test]
fn chain_of_ten_thousand_agents() {
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "a", N);
    src.push_str("graph chain {\n  entry = a0\n");
    node_list(&mut src, (0..N).map(|i| format!("a{i}")));
    for i in 0..N - 1 {
        let _ = writeln!(src, "  a{i} -> a{}", i + 1);
    }
    let _ = writeln!(src, "  a{} -> END\n}}", N - 1);
    expect(&src, &[]);
}

/// Every node routes to two others (`i + 1` and `2i + 1`, modulo N), so the whole graph is one
/// strongly connected component. With `exit`, the last node also has an arm to `END`.
fn dense_cycle(exit: bool, recursion_limit: bool) -> String {
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "n", N);
    src.push_str("graph dense {\n  entry = n0\n");
    if recursion_limit {
        src.push_str("  recursion_limit = 100\n");
    }
    node_list(&mut src, (0..N).map(|i| format!("n{i}")));
    src.push_str(
        "  state {\n    go: bool = false \"Which way to go\"\n    done: bool = false \"Whether to stop\"\n  }\n",
    );
    for i in 0..N {
        let _ = writeln!(src, "  route n{i} {{");
        if exit && i == N - 1 {
            src.push_str("    when done -> END\n");
        }
        let _ = writeln!(
            src,
            "    when go -> n{}\n    else -> n{}\n  }}",
            (i + 1) % N,
            (2 * i + 1) % N
        );
    }
    src.push_str("}\n");
    src
}

#[test]
fn dense_cycle_with_one_exit() {
    expect(&dense_cycle(true, false), &[]);
}

/// Without the exit the 10,000-node component is one trap, reported once.
#[test]
fn dense_cycle_without_exit() {
    expect(&dense_cycle(false, false), &[("TENX0305", 1)]);
    expect(&dense_cycle(false, true), &[("TENX0306", 1)]);
}

/// The entry goes straight to `END`; a 10,000-node chain hangs off nothing.
#[test]
fn deep_chain_that_nothing_reaches() {
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "start", 1);
    agents(&mut src, "u", N);
    src.push_str("graph orphans {\n  entry = start0\n");
    node_list(
        &mut src,
        std::iter::once("start0".to_string()).chain((0..N).map(|i| format!("u{i}"))),
    );
    src.push_str("  start0 -> END\n");
    for i in 0..N - 1 {
        let _ = writeln!(src, "  u{i} -> u{}", i + 1);
    }
    let _ = writeln!(src, "  u{} -> END\n}}", N - 1);
    expect(&src, &[("TENX0303", N)]);
}

/// A 10,000-agent chain that ends in a node with no edge: only the dead end is reported.
#[test]
fn deep_chain_into_a_dead_end() {
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "a", N);
    src.push_str("graph dead {\n  entry = a0\n");
    node_list(&mut src, (0..N).map(|i| format!("a{i}")));
    for i in 0..N - 1 {
        let _ = writeln!(src, "  a{i} -> a{}", i + 1);
    }
    src.push_str("}\n");
    expect(&src, &[("TENX0304", 1)]);
}

/// A 10,000-agent path reaches an approval-gated tool node around its interrupt: one bypass,
/// found by the dominance check, with the path shortened in its note.
#[test]
fn long_path_around_an_approval() {
    let mut src = String::from(
        "import std.approval.yes_no\n\nmodel m {\n  provider = scripted\n}\n\n\
         tool pay() -> string {\n  description = \"Pay.\"\n  risk = high\n  run = http(POST, \"https://pay.example\")\n}\n\n\
         interrupt approve_pay {\n  message = \"Pay?\"\n  response = yes_no\n  approves = [pay]\n  approvers = [role(\"payments_lead\")]\n}\n\n",
    );
    agents(&mut src, "a", N);
    src.push_str("graph long {\n  entry = a0\n");
    node_list(
        &mut src,
        (0..N)
            .map(|i| format!("a{i}"))
            .chain(["approve_pay".to_string(), "pay".to_string()]),
    );
    for i in 0..N - 1 {
        let _ = writeln!(src, "  a{i} -> a{}", i + 1);
    }
    let _ = writeln!(src, "  a{} -> pay\n  approve_pay -> pay\n  pay -> END\n}}", N - 1);
    let mut sources = SourceSet::new();
    let root = sources.add("big.tenx", src.as_str());
    let checked = tenx_compiler::check(&mut sources, root, &LintLevels::default());
    let bypasses: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "TENX0604")
        .collect();
    assert_eq!(
        bypasses.len(),
        1,
        "{:#?}",
        checked.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let note = bypasses
        .first()
        .and_then(|d| d.notes.first())
        .cloned()
        .unwrap_or_default();
    assert!(note.starts_with("path: entry `a0` → `a1`"), "{note}");
    assert!(note.ends_with("`pay` runs"), "{note}");
    assert!(note.len() < 300, "the path should be shortened: {} bytes", note.len());
    // `approve_pay` is unreachable: the only other problem.
    let others: Vec<_> = checked
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .filter(|c| *c != "TENX0604")
        .collect();
    assert_eq!(others, ["TENX0303"]);
}

/// A chain of forks: stage `k` forks out of `f{k}` into `l{k}` and `r{k}`, which join at
/// `f{k + 1}`; the last stage joins at `END`. About 10,000 nodes, all reached only through
/// forks, all reaching `END` through their joins: clean.
#[test]
fn chain_of_forks() {
    let stages = N / 3;
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "f", stages);
    agents(&mut src, "l", stages);
    agents(&mut src, "r", stages);
    src.push_str("graph forks {\n  entry = f0\n");
    node_list(
        &mut src,
        (0..stages).flat_map(|k| [format!("f{k}"), format!("l{k}"), format!("r{k}")]),
    );
    for k in 0..stages {
        let join = if k + 1 == stages {
            "END".to_string()
        } else {
            format!("f{}", k + 1)
        };
        let _ = writeln!(
            src,
            "  parallel f{k} {{\n    branches = [l{k}, r{k}]\n    join = {join}\n  }}\n  l{k} -> {join}\n  r{k} -> {join}"
        );
    }
    src.push_str("}\n");
    expect(&src, &[]);
}

/// Forks nested 3,333 deep: stage `k` forks out of `f{k}` into `l{k}` and `f{k + 1}` (whose
/// fork is inside that branch), joining at `j{k}`; `j{k + 1}` leads to `j{k}`, and `j0` to `END`.
/// The deepest fork's branches are `l{last}` and `m`. About 10,000 nodes, every inner fork
/// joining inside its branch: clean. With `escape`, `m` leads straight to the outermost join
/// `j0` instead of its own: out of its region, into the outermost branch's.
fn nested_forks(escape: bool) -> String {
    let stages = N / 3;
    let last = stages - 1;
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "f", stages);
    agents(&mut src, "l", stages);
    agents(&mut src, "j", stages);
    agents(&mut src, "m", 1);
    src.push_str("graph nest {\n  entry = f0\n");
    node_list(
        &mut src,
        (0..stages)
            .flat_map(|k| [format!("f{k}"), format!("l{k}"), format!("j{k}")])
            .chain(["m0".to_owned()]),
    );
    for k in 0..stages {
        let inner = if k == last {
            "m0".to_owned()
        } else {
            format!("f{}", k + 1)
        };
        let after = if k == 0 {
            "END".to_owned()
        } else {
            format!("j{}", k - 1)
        };
        let _ = writeln!(
            src,
            "  parallel f{k} {{\n    branches = [l{k}, {inner}]\n    join = j{k}\n  }}\n  l{k} -> j{k}\n  j{k} -> {after}"
        );
    }
    let _ = writeln!(
        src,
        "  m0 -> {}",
        if escape { "j0".to_owned() } else { format!("j{last}") }
    );
    src.push_str("}\n");
    src
}

#[test]
fn forks_nested_three_thousand_deep() {
    expect(&nested_forks(false), &[]);
}

#[test]
fn a_way_out_of_the_deepest_branch_into_the_outermost_region() {
    let codes = codes(&nested_forks(true));
    assert!(codes.contains_key("TENX0381"), "{codes:?}");
}

/// One branch of a fork is a 10,000-node chain, the other a single node. With `back_in`, the
/// join leads back into the middle of the long branch: one way into a branch from outside.
fn long_branch(back_in: bool) -> String {
    let mut src = String::from("model m {\n  provider = scripted\n}\n\n");
    agents(&mut src, "a", N);
    agents(&mut src, "x", 3);
    src.push_str("graph long {\n  entry = x0\n");
    node_list(
        &mut src,
        ["x0", "x1", "x2"]
            .into_iter()
            .map(str::to_string)
            .chain((0..N).map(|i| format!("a{i}"))),
    );
    src.push_str("  state {\n    again: bool = false \"Whether to go round once more\"\n  }\n");
    src.push_str("  parallel x0 {\n    branches = [a0, x1]\n    join = x2\n  }\n  x1 -> x2\n");
    for i in 0..N - 1 {
        let _ = writeln!(src, "  a{i} -> a{}", i + 1);
    }
    let _ = writeln!(src, "  a{} -> x2", N - 1);
    if back_in {
        let _ = writeln!(
            src,
            "  route x2 {{\n    when again -> a{}\n    else -> END\n  }}",
            N / 2
        );
    } else {
        src.push_str("  x2 -> END\n");
    }
    src.push_str("}\n");
    src
}

#[test]
fn ten_thousand_node_branch() {
    expect(&long_branch(false), &[]);
}

/// The way back into the long branch is the one problem, reported once.
#[test]
fn way_into_a_ten_thousand_node_branch() {
    expect(&long_branch(true), &[("TENX0381", 1)]);
}

/// A 10,000-node branch ends in an approval-gated tool. With the interrupt straight before the
/// tool inside the branch the program is clean; with the interrupt before the fork, the
/// approval does not cross the fork, and the tool is refused once.
fn approval_in_a_long_branch(inside: bool) -> String {
    let mut src = String::from(
        "import std.approval.yes_no\n\nmodel m {\n  provider = scripted\n}\n\n\
         tool pay() -> string {\n  description = \"Pay.\"\n  risk = high\n  run = http(POST, \"https://pay.example\")\n}\n\n\
         interrupt approve_pay {\n  message = \"Pay?\"\n  response = yes_no\n  approves = [pay]\n  approvers = [role(\"payments_lead\")]\n}\n\n",
    );
    agents(&mut src, "a", N);
    agents(&mut src, "x", 3);
    src.push_str("graph paid {\n  entry = x0\n");
    node_list(
        &mut src,
        ["x0", "x1", "x2", "approve_pay", "pay"]
            .into_iter()
            .map(str::to_string)
            .chain((0..N).map(|i| format!("a{i}"))),
    );
    if inside {
        src.push_str("  parallel x0 {\n    branches = [a0, x1]\n    join = x2\n  }\n");
    } else {
        src.push_str("  x0 -> approve_pay\n  parallel approve_pay {\n    branches = [a0, x1]\n    join = x2\n  }\n");
    }
    src.push_str("  x1 -> x2\n");
    for i in 0..N - 1 {
        let _ = writeln!(src, "  a{i} -> a{}", i + 1);
    }
    if inside {
        let _ = writeln!(src, "  a{} -> approve_pay\n  approve_pay -> pay", N - 1);
    } else {
        let _ = writeln!(src, "  a{} -> pay", N - 1);
    }
    src.push_str("  pay -> x2\n  x2 -> END\n}\n");
    src
}

#[test]
fn approval_inside_a_ten_thousand_node_branch() {
    expect(&approval_in_a_long_branch(true), &[]);
}

#[test]
fn approval_before_a_fork_into_a_ten_thousand_node_branch() {
    expect(&approval_in_a_long_branch(false), &[("TENX0604", 1)]);
}

/// `c0` asks `c1`, which asks `c2`, … down to `c9999`, whose tool binds a state field the graph
/// does not declare: one `TENX0619`, found through 10,000 agents called as tools. With a last
/// call back to `c0`, one circle (`TENX0213`) as well.
fn agents_calling_agents(circle: bool, all_nodes: bool) -> String {
    let mut src = String::from(
        "model m {\n  provider = scripted\n}\n\n\
         tool lookup(order_id: string \"The order\") -> string {\n  description = \"Look an order up.\"\n  \
         bind = { order_id: state.order_id }\n  run  = http(POST, \"${ORDERS_URL}/lookup\")\n}\n\n",
    );
    for i in 0..N {
        let calls = match i + 1 {
            next if next < N => format!("  agents = [c{next}]\n"),
            _ if circle => "  agents = [c0]\n  tools  = [lookup]\n".to_owned(),
            _ => "  tools  = [lookup]\n".to_owned(),
        };
        let _ = writeln!(
            src,
            "agent c{i} {{\n  model  = m\n  prompt = \"Step {i}.\"\n{calls}}}\n"
        );
    }
    src.push_str("graph g {\n  entry = c0\n");
    if all_nodes {
        node_list(&mut src, (0..N).map(|i| format!("c{i}")));
        for i in 0..N - 1 {
            let _ = writeln!(src, "  c{i} -> c{}", i + 1);
        }
        let _ = writeln!(src, "  c{} -> END\n}}", N - 1);
    } else {
        src.push_str("  nodes = [c0]\n  c0 -> END\n}\n");
    }
    src
}

#[test]
fn ten_thousand_agents_calling_each_other_as_tools() {
    expect(&agents_calling_agents(false, false), &[("TENX0619", 1)]);
    expect(&agents_calling_agents(true, false), &[("TENX0213", 1), ("TENX0619", 1)]);
    // Every agent a node too: what each reaches is never closed over one by one.
    expect(&agents_calling_agents(false, true), &[("TENX0619", 1)]);
}
