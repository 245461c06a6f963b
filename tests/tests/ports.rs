//! The ports of public agent-framework examples (`tests/ports/`, listed in its README) stay whole,
//! faithful programs: each checks with no diagnostic at all, not even a warning; it lowers, seals
//! and loads back unchanged; its artifact (without the source map, which only says where things
//! were written) is a snapshot (`tests/snapshots/port__<name>.snap`); its header names the
//! framework and the original; and every `// play: MODEL | MESSAGE | TURNS` line of its header
//! holds: given that user message, the scripted model plays exactly those turns (a tool's
//! model-facing name, optionally with its exact arguments as JSON, or `text`), and each call is
//! one that an agent using the model may make. The plays are what a runtime test will run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use serde_json::Value;
use std::collections::BTreeSet;
use tenx_artifact::script::select;
use tenx_artifact::{Artifact, TrustPolicy, Turn, load, seal};
use tenx_compiler::LintLevels;
use tenx_tests::{check_file, port_files, repo_root};

/// One port: its name (the file's stem, or its folder's name for `NAME/main.tenx`), its root
/// file relative to the repository root, and that file's text.
struct Port {
    name: String,
    path: String,
    text: String,
}

fn ports() -> Vec<Port> {
    let root = repo_root();
    let ports: Vec<Port> = port_files()
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            let name = if path.file_name().is_some_and(|n| n == "main.tenx") {
                path.parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            } else {
                path.file_stem().unwrap().to_string_lossy().into_owned()
            };
            let text = std::fs::read_to_string(&path).unwrap();
            Port {
                name,
                path: relative,
                text,
            }
        })
        .collect();
    assert!(ports.len() >= 6, "expected at least six ports, found {}", ports.len());
    ports
}

/// Lowers a port that checks clean into its artifact.
fn build(port: &Port) -> Artifact {
    let (mut sources, root, loading) = tenx_tests::load_text(&port.path, &port.text, tenxc::disk::MAX_SOURCE_BYTES);
    assert!(loading.is_empty(), "{}: {loading:?}", port.path);
    let compiled = tenx_compiler::compile(&mut sources, root, &LintLevels::default());
    assert!(
        compiled.diagnostics.is_empty(),
        "{}: {:?}",
        port.path,
        compiled.diagnostics
    );
    compiled
        .artifact
        .unwrap_or_else(|| panic!("{}: checked clean but lowered to nothing", port.path))
}

#[test]
fn every_port_checks_clean_seals_and_loads() {
    for port in ports() {
        // Exactly what `tenxc check` reports: nothing at all, warnings included.
        let outcome = check_file(&repo_root().join(&port.path));
        assert!(outcome.diagnostics.is_empty(), "{}:\n{}", port.path, outcome.rendered());
        let sealed = seal(build(&port)).unwrap_or_else(|e| panic!("{}: does not seal: {e}", port.path));
        let bytes = sealed.to_bytes();
        let loaded = load(&bytes, &TrustPolicy::signature_optional())
            .unwrap_or_else(|e| panic!("{}: sealed but does not load: {e}", port.path));
        assert_eq!(&loaded.id, sealed.id(), "{}", port.path);
        assert_eq!(&loaded.artifact, sealed.artifact(), "{}", port.path);
    }
}

#[test]
fn port_artifact_snapshots() {
    for port in ports() {
        let mut tree = serde_json::to_value(build(&port)).unwrap();
        tree.as_object_mut().unwrap().remove("source_map");
        let pretty = serde_json::to_string_pretty(&tree).unwrap();
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_input_file(repo_root().join(&port.path));
        settings.bind(|| insta::assert_snapshot!(format!("port__{}", port.name), pretty));
    }
}

#[test]
fn every_port_names_its_original_and_is_listed() {
    let readme = std::fs::read_to_string(repo_root().join("tests/ports/README.md")).unwrap();
    for port in ports() {
        let header: String = port
            .text
            .lines()
            .take_while(|l| l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for part in ["// Port of", "framework:", "original:", "(read at commit "] {
            assert!(header.contains(part), "{}: the header has no `{part}`", port.path);
        }
        let file = port.path.trim_start_matches("tests/ports/");
        assert!(
            readme.contains(&format!("]({file})")),
            "tests/ports/README.md does not link {file}"
        );
    }
    // And every port the README links exists.
    for link in readme.split("](").skip(1) {
        let target = link.split(')').next().unwrap();
        if target.ends_with(".tenx") {
            assert!(
                repo_root().join("tests/ports").join(target).is_file(),
                "tests/ports/README.md links {target}, which does not exist"
            );
        }
    }
}

/// A `// play:` line: the model, the user message, and the turns expected.
#[derive(Debug)]
struct Play {
    model: String,
    message: String,
    turns: Vec<(String, Option<Value>)>,
}

fn plays(port: &Port) -> Vec<Play> {
    port.text
        .lines()
        .filter_map(|line| line.strip_prefix("// play:"))
        .map(|spec| {
            let parts: Vec<&str> = spec.splitn(3, '|').map(str::trim).collect();
            assert_eq!(parts.len(), 3, "{}: malformed play line `{spec}`", port.path);
            Play {
                model: parts[0].to_string(),
                message: parts[1].to_string(),
                turns: expected_turns(parts[2]),
            }
        })
        .collect()
}

/// `name {"json": "arguments"}, text, …`: names, each optionally followed by a JSON object.
fn expected_turns(spec: &str) -> Vec<(String, Option<Value>)> {
    let mut rest = spec.trim();
    let mut turns = Vec::new();
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = rest[..end].to_string();
        assert!(!name.is_empty(), "a turn has no name at `{rest}`");
        rest = rest[end..].trim_start();
        let mut arguments = None;
        if rest.starts_with('{') {
            let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            arguments = Some(values.next().unwrap().unwrap());
            rest = rest[values.byte_offset()..].trim_start();
        }
        turns.push((name, arguments));
        if !rest.is_empty() {
            rest = rest
                .strip_prefix(',')
                .unwrap_or_else(|| panic!("expected `,` between turns at `{rest}`"))
                .trim_start();
        }
    }
    turns
}

#[test]
fn every_port_plays_its_scripted_turns() {
    for port in ports() {
        let artifact = build(&port);
        let plays = plays(&port);
        // Every scripted model of the port is played at least once.
        let played: BTreeSet<&str> = plays.iter().map(|p| p.model.as_str()).collect();
        for (name, model) in &artifact.models {
            if model.script.is_some() {
                assert!(
                    played.contains(name.as_str()),
                    "{}: no play line for model `{name}`",
                    port.path
                );
            }
        }
        for play in &plays {
            let context = format!("{}: play `{}` | `{}`", port.path, play.model, play.message);
            let script = artifact.models[&play.model]
                .script
                .as_ref()
                .unwrap_or_else(|| panic!("{context}: not a scripted model"));
            // What the agents using this model may call, by the names the model sees.
            let mut offered = BTreeSet::new();
            for agent in artifact.agents.values().filter(|a| a.model == play.model) {
                offered.extend(agent.allowed_tools.iter().map(|t| artifact.tools[t].name.clone()));
                offered.extend(agent.handoffs.iter().map(|h| h.tool_name.clone()));
                offered.extend(agent.agent_tools.iter().map(|used| used.tool_name.clone()));
            }
            assert!(
                !offered.is_empty() || play.turns.iter().all(|(n, _)| n == "text"),
                "{context}"
            );
            let selection = select(script, &play.message).unwrap_or_else(|e| panic!("{context}: {e}"));
            let names: Vec<&str> = play.turns.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(selection.turns.len(), play.turns.len(), "{context}: expected {names:?}");
            let mut result = None;
            for (index, (name, arguments)) in play.turns.iter().enumerate() {
                match selection
                    .render(index, result)
                    .unwrap_or_else(|e| panic!("{context}: {e}"))
                {
                    Turn::Text { .. } => assert_eq!(name, "text", "{context}: turn {index} is a text"),
                    Turn::Tool { tool, arguments: given } => {
                        assert_eq!(&tool, name, "{context}: turn {index}");
                        assert!(
                            offered.contains(&tool),
                            "{context}: no agent of the model may call `{tool}`"
                        );
                        if let Some(expected) = arguments {
                            assert_eq!(&Value::Object(given), expected, "{context}: arguments of `{tool}`");
                        }
                        result = Some("the tool's result");
                    }
                }
            }
        }
    }
}
