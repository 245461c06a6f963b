//! Every example compiles to a sealed artifact that loads back unchanged; the artifact and the
//! Mermaid picture of each example are snapshots (`tests/snapshots/artifact__<example>.snap`,
//! `mermaid__<example>.snap`); and a build depends only on the sources: not on the names the
//! files were given (relative, absolute), nor on the order they were read in. Every program that
//! checks without errors (fixtures, catalog and reference examples) seals and loads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use std::path::Path;
use tenx_artifact::{Artifact, TrustPolicy, load, seal};
use tenx_compiler::LintLevels;
use tenx_diagnostics::{ImportRefusal, SourceSet};
use tenx_tests::{files_under, repo_root};
use tenxc::picture::{PictureFormat, render};

/// The examples, by folder name.
fn examples() -> Vec<String> {
    let examples: Vec<String> = files_under(&repo_root().join("examples"), "tenx")
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "main.tenx"))
        .map(|p| p.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        examples.len() >= 4,
        "expected at least four examples, found {examples:?}"
    );
    examples
}

/// A file of a program: the name the compiler is given, and where it is in the repository.
type Named<'a> = (&'a str, &'a str);

/// Compiles a program whose files are given as (display name, repository path), the root first;
/// they are added to the source set in `order` (indexes into `files`), and every other import is
/// read from the repository relative to the root's repository path.
fn compile(files: &[Named], order: &[usize]) -> Artifact {
    let root_dir = Path::new(files[0].1).parent().unwrap().to_path_buf();
    let root_name_dir = Path::new(files[0].0).parent().unwrap().to_string_lossy().into_owned();
    let mut sources = SourceSet::new();
    for &i in order {
        let (name, path) = files[i];
        sources.add(name, std::fs::read_to_string(repo_root().join(path)).unwrap());
    }
    let root = sources.find(files[0].0).unwrap();
    let mut reader = RenamedFiles {
        root_dir,
        root_name_dir,
    };
    assert!(tenx_compiler::load_imports(&mut sources, root, &mut reader).is_empty());
    let compiled = tenx_compiler::compile(&mut sources, root, &LintLevels::default());
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
    compiled.artifact.expect("a clean program lowers to an artifact")
}

/// Reads the files of a program whose root is shown as `root_name_dir/…` but lives in
/// `root_dir` of the repository.
struct RenamedFiles {
    root_dir: std::path::PathBuf,
    root_name_dir: String,
}

impl tenx_compiler::ImportReader for RenamedFiles {
    fn locate(&mut self, importer: &str, written: &str) -> Result<String, ImportRefusal> {
        Ok(tenx_compiler::import_file_name(importer, written))
    }

    fn read(&mut self, name: &str) -> Result<Vec<u8>, ImportRefusal> {
        let relative = name
            .strip_prefix(&self.root_name_dir)
            .unwrap_or(name)
            .trim_start_matches('/');
        std::fs::read(repo_root().join(&self.root_dir).join(relative)).map_err(|_| ImportRefusal::NotFound)
    }
}

fn compile_example(example: &str) -> Artifact {
    let path = format!("examples/{example}/main.tenx");
    compile(&[(&path, &path)], &[0])
}

#[test]
fn every_example_seals_loads_and_round_trips() {
    for example in examples() {
        let sealed = seal(compile_example(&example)).unwrap_or_else(|e| panic!("{example}: {e}"));
        let bytes = sealed.to_bytes();
        let loaded = load(&bytes, &TrustPolicy::signature_optional()).unwrap_or_else(|e| panic!("{example}: {e}"));
        assert_eq!(&loaded.id, sealed.id(), "{example}");
        assert_eq!(&loaded.artifact, sealed.artifact(), "{example}");
        assert_eq!(loaded.signer, None);
        // Sealing what was loaded gives the same bytes again.
        assert_eq!(seal(loaded.artifact).unwrap().to_bytes(), bytes, "{example}");
        // The artifact names files relative to the root, never as given to the compiler.
        for (key, location) in &sealed.artifact().source_map {
            assert!(
                !location.file.starts_with("examples/") && !location.file.starts_with('/'),
                "{key}: {location:?}"
            );
        }
    }
}

#[test]
fn artifact_snapshots() {
    for example in examples() {
        let sealed = seal(compile_example(&example)).unwrap();
        // Through a JSON tree, so the schemas (kept as compact text) are indented too.
        let tree = serde_json::to_value(sealed.artifact()).unwrap();
        let pretty = serde_json::to_string_pretty(&tree).unwrap();
        let picture = render(sealed.artifact(), PictureFormat::Mermaid);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_input_file(repo_root().join(format!("examples/{example}/main.tenx")));
        settings.bind(|| {
            insta::assert_snapshot!(format!("artifact__{example}"), format!("{}\n{pretty}", sealed.id()));
            insta::assert_snapshot!(format!("mermaid__{example}"), picture);
        });
    }
}

#[test]
fn builds_do_not_depend_on_file_names_or_order() {
    let reference = seal(compile(
        &[
            ("examples/client_tool/main.tenx", "examples/client_tool/main.tenx"),
            ("examples/client_tool/tools.tenx", "examples/client_tool/tools.tenx"),
        ],
        &[0, 1],
    ))
    .unwrap()
    .to_bytes();
    let variants: [(&[Named], &[usize]); 3] = [
        // From inside the example's folder, imports read first.
        (
            &[
                ("main.tenx", "examples/client_tool/main.tenx"),
                ("tools.tenx", "examples/client_tool/tools.tenx"),
            ],
            &[1, 0],
        ),
        // An absolute path on another machine.
        (
            &[
                (
                    "/home/someone/work/client_tool/main.tenx",
                    "examples/client_tool/main.tenx",
                ),
                (
                    "/home/someone/work/client_tool/tools.tenx",
                    "examples/client_tool/tools.tenx",
                ),
            ],
            &[1, 0],
        ),
        // `./` prefixes, imports loaded by the compiler.
        (
            &[("./examples/client_tool/main.tenx", "examples/client_tool/main.tenx")],
            &[0],
        ),
    ];
    for (files, order) in variants {
        let bytes = seal(compile(files, order)).unwrap().to_bytes();
        assert!(bytes == reference, "{files:?} in order {order:?} built different bytes");
    }
    // And every example builds to the same bytes twice in a row.
    for example in examples() {
        let first = seal(compile_example(&example)).unwrap().to_bytes();
        assert_eq!(first, seal(compile_example(&example)).unwrap().to_bytes(), "{example}");
    }
}

#[test]
fn artifacts_hold_what_the_graphs_run_and_no_secrets() {
    let desk = seal(compile_example("support_desk")).unwrap().into_artifact();
    let triage = &desk.agents["triage"];
    assert_eq!(triage.allowed_tools, ["lookup_order", "track_shipment"]);
    assert_eq!(triage.handoffs.len(), 1);
    assert_eq!(triage.handoffs[0].tool_name, "transfer_to_billing");
    let graph = &desk.graphs["desk"];
    let handoff = graph
        .edges
        .iter()
        .find(|e| e.from == "triage" && e.to == "billing")
        .unwrap();
    assert_eq!(handoff.kind, tenx_artifact::EdgeKind::Handoff);
    assert_eq!(graph.recursion_limit, 25);
    // The stdlib validator's defaults, with this graph's arguments over them.
    assert_eq!(graph.input_validators[0].validator, "message_content");
    assert_eq!(
        graph.input_validators[0].args,
        serde_json::json!({"allowed_roles": ["user"], "max_blocks": 10})
    );

    let research = seal(compile_example("research_flow")).unwrap().into_artifact();
    assert_eq!(research.tools["publish_report"].approved_by, ["approve_publication"]);
    assert_eq!(research.interrupts["approve_publication"].approves, ["publish_report"]);
    // Only the stdlib tool the program uses is in the artifact.
    assert!(research.tools.contains_key("current_time") && !research.tools.contains_key("calculator"));
    for example in examples() {
        let artifact = compile_example(&example);
        for (name, model) in &artifact.models {
            if let Some(variable) = &model.api_key_env {
                assert!(variable.ends_with("_API_KEY"), "{example}: model {name} has {variable}");
            }
        }
    }
}

/// Every program the checker accepts (no errors; warnings allowed) must lower to an artifact that
/// seals and loads: a build never fails with an internal error after a clean check. Runs over
/// every fixture, every example of the code catalog and every example of the language reference.
#[test]
fn every_program_that_checks_without_errors_seals_and_loads() {
    let root = repo_root();
    let mut programs: Vec<(String, String)> = files_under(&root.join("tests/fixtures"), "tenx")
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let name = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            Some((name, text))
        })
        .collect();
    let pages = files_under(&root.join("compiler/diagnostics/codes"), "md")
        .into_iter()
        .chain([root.join("docs/language.md")]);
    for page in pages {
        let markdown = std::fs::read_to_string(&page).unwrap();
        let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
        for (index, (_, code)) in tenx_tests::tenx_blocks(&markdown).into_iter().enumerate() {
            programs.push((format!("{stem}-{index}.tenx"), code));
        }
    }
    let mut sealed = 0;
    for (name, text) in &programs {
        let (mut sources, file, _) = tenx_tests::load_text(name, text, tenxc::disk::MAX_SOURCE_BYTES);
        let compiled = tenx_compiler::compile(&mut sources, file, &LintLevels::default());
        if compiled.diagnostics.iter().any(|d| d.is_error()) {
            continue;
        }
        let artifact = compiled
            .artifact
            .unwrap_or_else(|| panic!("{name}: checked without errors but lowered to nothing"));
        let sealed_artifact = seal(artifact).unwrap_or_else(|e| panic!("{name}: checked clean but does not seal: {e}"));
        load(&sealed_artifact.to_bytes(), &TrustPolicy::signature_optional())
            .unwrap_or_else(|e| panic!("{name}: sealed but does not load: {e}"));
        sealed += 1;
    }
    assert!(
        sealed >= 50,
        "only {sealed} of {} programs checked without errors",
        programs.len()
    );
}

/// The refund example runs on its scripted demo model: its rule turns `Refund order 1042, 59.00`
/// into exactly the refund call, the tool's result becomes the answer, and anything else gets
/// the fallback text.
#[test]
fn the_refund_example_plays_its_scripted_rules() {
    use tenx_artifact::Turn;
    use tenx_artifact::script::select;

    let artifact = seal(compile_example("refund_approval")).unwrap().artifact().clone();
    let agent = &artifact.agents["support"];
    let script = artifact.models[&agent.model].script.as_ref().expect("a scripted model");

    let refund = select(script, "Refund order 1042, 59.00").unwrap();
    let call = refund.render(0, None).unwrap();
    assert_eq!(
        serde_json::to_value(&call).unwrap(),
        serde_json::json!({
            "kind": "tool",
            "tool": "issue_refund",
            "arguments": {"order_id": "1042", "amount_cents": 5900}
        })
    );
    // The call names a tool the agent may call, by its model-facing name.
    let Turn::Tool { tool, .. } = &call else { unreachable!() };
    assert!(agent.allowed_tools.iter().any(|t| &artifact.tools[t].name == tool));
    assert_eq!(
        refund.render(1, Some("Refund declined.")).unwrap(),
        Turn::Text {
            text: "Refund declined.".into()
        }
    );

    let hello = select(script, "hello").unwrap();
    let Turn::Text { text } = hello.render(0, None).unwrap() else {
        panic!("the fallback is a text turn")
    };
    assert!(text.starts_with("I can refund an order."), "{text}");
}
