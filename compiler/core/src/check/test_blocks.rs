//! The names a `test` block uses: its graph (`TENX1001`), the tools it mocks or expects to be
//! called (`TENX1002`), the nodes of its expected route (`TENX1003`), the state fields it sets
//! or expects (`TENX1004`), the models it scripts (`TENX1005`), and its name, unique in its
//! file (`TENX1006`).

use std::collections::BTreeMap;

use super::Facts;
use crate::ast::{GraphDecl, Ident, TestDecl, TestEntry};
use crate::resolve::{DeclKind, DeclRef, Located, Program};
use tenx_diagnostics::{Code, Diagnostic, FileId};

pub(super) fn check(facts: &Facts<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let program = facts.program;
    let mut names: BTreeMap<&str, &Located<TestDecl>> = BTreeMap::new();
    for test in &program.tests {
        if let Some(first) = names.get(test.decl.name.as_str()) {
            let d = Diagnostic::new(
                Code::TENX1006,
                format!("two tests are named `{}`", test.decl.name),
                test.file,
                test.decl.name_span,
            )
            .label("named again here")
            .secondary(first.file, first.decl.name_span, "first named here")
            .help("give each test its own name: `tenxc test --filter` and the reports tell them apart by it");
            diagnostics.push(d);
        } else {
            names.insert(&test.decl.name, test);
        }
        check_test(program, test.file, &test.decl, diagnostics);
    }
}

fn check_test(program: &Program, file: FileId, test: &TestDecl, diagnostics: &mut Vec<Diagnostic>) {
    let graph = test_graph(program, file, test, diagnostics);
    for model in &test.models {
        if program.lookup_as(&model.model.name, &[DeclKind::Model]).is_none() {
            let models: Vec<&str> = program.models.iter().map(|m| m.decl.name.name.as_str()).collect();
            diagnostics.push(unknown(
                Code::TENX1005,
                file,
                &model.model,
                "model",
                &models,
                "`models` gives the turns of the program's models",
            ));
        }
    }
    let tools: Vec<&str> = program.tools.iter().map(|t| t.decl.name.name.as_str()).collect();
    let mocked = test.mocks.iter().map(|m| &m.tool);
    let called = test.expect.calls.iter().flatten().map(|c| &c.tool);
    for tool in mocked.chain(called) {
        if program.lookup_as(&tool.name, &[DeclKind::Tool]).is_none() {
            diagnostics.push(unknown(
                Code::TENX1002,
                file,
                tool,
                "tool",
                &tools,
                "`mocks` and `calls` name the program's tools",
            ));
        }
    }
    let Some(graph) = graph else {
        return;
    };
    let nodes: Vec<&str> = graph.nodes.iter().map(|n| n.name.as_str()).chain(["END"]).collect();
    for node in test.expect.route.iter().flatten() {
        if !nodes.contains(&node.name.as_str()) {
            let owner = format!("graph `{}` has the nodes", graph.name.name);
            diagnostics.push(unknown(Code::TENX1003, file, node, "node", &nodes, &owner));
        }
    }
    let fields: Vec<&str> = graph.state.iter().map(|p| p.name.name.as_str()).collect();
    let written = test.state.iter().chain(test.expect.state.iter().flatten());
    for TestEntry { key, .. } in written {
        if !fields.contains(&key.name.as_str()) {
            let owner = format!("graph `{}` has the state fields", graph.name.name);
            diagnostics.push(unknown(Code::TENX1004, file, key, "state field", &fields, &owner));
        }
    }
}

/// The graph the test runs: the one it names, or the program's only graph.
fn test_graph<'p>(
    program: &'p Program,
    file: FileId,
    test: &TestDecl,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<&'p GraphDecl> {
    let graphs: Vec<&str> = program.graphs.iter().map(|g| g.decl.name.name.as_str()).collect();
    let Some(name) = &test.graph else {
        if program.graphs.iter().count() == 1 {
            return program.graphs.iter().next().map(|g| &g.decl);
        }
        let d = Diagnostic::new(
            Code::TENX1001,
            format!("test `{}` does not say which graph it runs", test.name),
            file,
            test.name_span,
        )
        .label("no `graph`")
        .help(format!(
            "add `graph = name`; the program has {}",
            if graphs.is_empty() {
                "no graph".to_string()
            } else {
                format!("the graphs {}", quoted(&graphs))
            }
        ));
        diagnostics.push(d);
        return None;
    };
    match program.lookup_as(&name.name, &[DeclKind::Graph]).map(|s| s.decl) {
        Some(DeclRef::Graph(id)) => program.graphs.get(id).map(|g| &g.decl),
        _ => {
            diagnostics.push(unknown(
                Code::TENX1001,
                file,
                name,
                "graph",
                &graphs,
                "a test runs one of the program's graphs",
            ));
            None
        }
    }
}

fn unknown(code: Code, file: FileId, name: &Ident, what: &str, known: &[&str], context: &str) -> Diagnostic {
    let help = match crate::suggest::did_you_mean(&name.name, known) {
        Some(close) => format!("did you mean `{close}`?"),
        None if known.is_empty() => format!("{context}; there are none"),
        None => format!("{context}: {}", quoted(known)),
    };
    Diagnostic::new(code, format!("no {what} is named `{}`", name.name), file, name.span)
        .label(format!("unknown {what}"))
        .help(help)
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
