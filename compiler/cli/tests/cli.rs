//! End-to-end tests of the `tenxc` binary: exit codes, output formats, lint levels and the
//! project file, and the build → inspect → graph and keygen → sign → verify flows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod common;

use common::{BAD, WARNS, code, repo, stderr, stdout, temp_dir, tenxc, tenxc_in, write};

#[test]
fn check_examples_is_clean() {
    let output = tenxc(&["check", "examples/"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stderr(&output).contains("no problems"), "{}", stderr(&output));
}

#[test]
fn a_bad_file_exits_1_and_names_the_code() {
    let dir = temp_dir("bad");
    write(&dir, "bad.tenx", BAD);
    let output = tenxc_in(&dir, &["check", "bad.tenx"]);
    assert_eq!(code(&output), 1);
    assert!(stderr(&output).contains("TENX0302"), "{}", stderr(&output));
}

#[test]
fn a_missing_path_exits_2() {
    let output = tenxc(&["check", "no/such/file.tenx"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("cannot read `no/such/file.tenx`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn json_output_has_the_diagnostics() {
    let dir = temp_dir("json");
    write(&dir, "bad.tenx", BAD);
    let output = tenxc_in(&dir, &["check", "bad.tenx", "--format", "json"]);
    assert_eq!(code(&output), 1);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["errors"], 1);
    assert_eq!(json["warnings"], 0);
    let first = &json["diagnostics"][0];
    assert_eq!(first["code"], "TENX0302");
    assert_eq!(first["name"], "unknown-node");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["primary"]["file"], "bad.tenx");
    assert_eq!(first["primary"]["line"], 15);
    assert!(first["message"].as_str().unwrap().contains("`b`"));
}

#[test]
fn sarif_output_is_sarif_2_1_0_with_a_result_per_diagnostic() {
    let dir = temp_dir("sarif");
    write(&dir, "bad.tenx", BAD);
    write(&dir, "warns.tenx", WARNS);
    let output = tenxc_in(&dir, &["check", "bad.tenx", "warns.tenx", "--format", "sarif"]);
    assert_eq!(code(&output), 1);
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let ids: Vec<&str> = results.iter().map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["TENX0302", "TENX0902"]);
}

#[test]
fn github_output_is_workflow_commands() {
    let dir = temp_dir("github");
    write(&dir, "bad.tenx", BAD);
    let output = tenxc_in(&dir, &["check", "bad.tenx", "--format", "github"]);
    assert_eq!(code(&output), 1);
    let text = stdout(&output);
    assert!(text.starts_with("::error file=bad.tenx,line=15,"), "{text}");
    assert!(text.contains("TENX0302"), "{text}");
}

#[test]
fn explain_prints_the_page() {
    let output = tenxc(&["explain", "TENX0604"]);
    assert_eq!(code(&output), 0);
    assert!(
        stdout(&output).starts_with("# TENX0604: approval-bypass"),
        "{}",
        stdout(&output)
    );
    let output = tenxc(&["explain", "TENX9999"]);
    assert_eq!(code(&output), 2);
}

#[test]
fn deny_warnings_turns_a_warning_into_an_error() {
    let dir = temp_dir("deny");
    write(&dir, "warns.tenx", WARNS);
    assert_eq!(code(&tenxc_in(&dir, &["check", "warns.tenx"])), 0);
    let output = tenxc_in(&dir, &["check", "warns.tenx", "--deny", "warnings"]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("TENX0902"));
    assert_eq!(
        code(&tenxc_in(&dir, &["check", "warns.tenx", "--deny", "unused-model"])),
        1
    );
    let allowed = tenxc_in(&dir, &["check", "warns.tenx", "--allow", "TENX0902"]);
    assert_eq!(code(&allowed), 0);
    assert!(stderr(&allowed).contains("no problems"), "{}", stderr(&allowed));
}

#[test]
fn allowing_an_error_is_refused() {
    let dir = temp_dir("allow");
    write(&dir, "bad.tenx", BAD);
    let output = tenxc_in(&dir, &["check", "bad.tenx", "--allow", "TENX0302"]);
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("cannot be allowed"), "{}", stderr(&output));
}

#[test]
fn the_project_file_is_honoured() {
    let dir = temp_dir("project");
    write(&dir, "warns.tenx", WARNS);
    write(&dir, "tenx.toml", "[lints]\ndeny = [\"unused-model\"]\n");
    let output = tenxc_in(&dir, &["check", "warns.tenx"]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("error[TENX0902]"), "{}", stderr(&output));
    // The same lint levels apply to `build`, which then writes nothing.
    let build = tenxc_in(&dir, &["build", "warns.tenx", "-o", "warns.tenxg"]);
    assert_eq!(code(&build), 1);
    assert!(!dir.join("warns.tenxg").exists());
    write(&dir, "tenx.toml", "[lints]\ncolour = true\n");
    assert_eq!(code(&tenxc_in(&dir, &["check", "warns.tenx"])), 2);
}

#[test]
fn build_inspect_graph() {
    let dir = temp_dir("flow");
    let out = dir.join("refunds.tenxg");
    let out_arg = out.to_str().unwrap();
    let build = tenxc(&["build", "examples/refund_approval/main.tenx", "-o", out_arg]);
    assert_eq!(code(&build), 0, "{}", stderr(&build));
    let line = stdout(&build);
    assert!(line.starts_with(&format!("built {out_arg}: sha256:")), "{line}");
    let id = line.trim().rsplit(' ').next().unwrap().to_string();

    let inspect = tenxc(&["inspect", out_arg]);
    assert_eq!(code(&inspect), 0, "{}", stderr(&inspect));
    let summary = stdout(&inspect);
    assert!(summary.contains(&format!("id        {id}")), "{summary}");
    assert!(summary.contains("signer    unsigned"), "{summary}");
    assert!(
        summary.contains("refunds: entry support, 1 node, recursion limit 25"),
        "{summary}"
    );
    assert!(summary.contains("tools: issue_refund, lookup_order"), "{summary}");
    assert!(
        summary.contains("  high\n    issue_refund: http POST ${PAYMENTS_URL}/refunds"),
        "{summary}"
    );
    assert!(
        summary.contains("issue_refund: \"Approve a refund of {amount_cents} cents for order {order_id}?\""),
        "{summary}"
    );
    assert!(summary.contains("expires after 24h"), "{summary}");

    for source in [out_arg, "examples/refund_approval/main.tenx"] {
        let mermaid = tenxc(&["graph", source, "--format", "mermaid"]);
        assert_eq!(code(&mermaid), 0, "{}", stderr(&mermaid));
        let text = stdout(&mermaid);
        assert!(text.starts_with("flowchart TD\n"), "{text}");
        assert!(text.contains("classDef high"), "{text}");
        let dot = tenxc(&["graph", source, "--format", "dot"]);
        assert_eq!(code(&dot), 0);
        assert!(stdout(&dot).starts_with("digraph tenx {"), "{}", stdout(&dot));
    }
}

#[test]
fn graph_draws_forks_and_agent_tools() {
    let mermaid = tenxc(&["graph", "tests/ports/langgraph_orchestrator_worker.tenx"]);
    assert_eq!(code(&mermaid), 0, "{}", stderr(&mermaid));
    let text = stdout(&mermaid);
    assert!(text.contains("==>|\"map over"), "a map's way into its branch: {text}");
    assert!(text.contains("==>|\"join\"|"), "a fork's way to its join: {text}");
    let dot = tenxc(&[
        "graph",
        "tests/ports/langgraph_orchestrator_worker.tenx",
        "--format",
        "dot",
    ]);
    assert!(stdout(&dot).contains("penwidth=2, label=\"join\""), "{}", stdout(&dot));
    let tools = tenxc(&["graph", "tests/ports/openai_agents_as_tools.tenx"]);
    assert_eq!(code(&tools), 0, "{}", stderr(&tools));
    assert!(stdout(&tools).contains("agent tool · "), "{}", stdout(&tools));
}

#[test]
fn inspect_refuses_an_artifact_edited_around_its_approval() {
    let dir = temp_dir("policy");
    let built = dir.join("research.tenxg");
    let build = tenxc(&[
        "build",
        "examples/research_flow/main.tenx",
        "-o",
        built.to_str().unwrap(),
    ]);
    assert_eq!(code(&build), 0, "{}", stderr(&build));
    // The reviewer's `publish` arm goes straight to the tool, and the id is recomputed so the
    // seal matches.
    let mut envelope: serde_json::Value = serde_json::from_slice(&std::fs::read(&built).unwrap()).unwrap();
    let arm = &mut envelope["artifact"]["graphs"]["research"]["routes"][0]["arms"][0];
    assert_eq!(arm["target"], "approve_publication");
    arm["target"] = serde_json::json!("publish_report");
    let id = tenx_artifact::ArtifactId::of_body(&envelope["artifact"]).unwrap();
    envelope["id"] = serde_json::json!(id.to_string());
    std::fs::write(dir.join("edited.tenxg"), serde_json::to_vec(&envelope).unwrap()).unwrap();
    for command in ["inspect", "graph"] {
        let refused = tenxc_in(&dir, &[command, "edited.tenxg"]);
        assert_eq!(code(&refused), 2, "{command}");
        assert!(stdout(&refused).is_empty(), "{command}: {}", stdout(&refused));
        let text = stderr(&refused);
        assert!(text.contains("tenx::artifact::policy"), "{command}: {text}");
        // Without the wrapping (and its `│` gutter) of the report.
        let message: String = text
            .split_whitespace()
            .filter(|word| *word != "│")
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            message.contains(
                "refusing `edited.tenxg`: artifact breaks the risk policy: graph `research`: tool \
                 `publish_report` (risk high) can run without its approval: entry `researcher` → \
                 `writer` → `reviewer` → `publish_report`"
            ),
            "{command}: {text}"
        );
    }
}

#[test]
fn build_with_errors_writes_nothing() {
    let dir = temp_dir("errors");
    write(&dir, "bad.tenx", BAD);
    let output = tenxc_in(&dir, &["build", "bad.tenx", "-o", "bad.tenxg"]);
    assert_eq!(code(&output), 1);
    assert!(stderr(&output).contains("TENX0302"));
    assert!(!dir.join("bad.tenxg").exists());
    let graph = tenxc_in(&dir, &["graph", "bad.tenx"]);
    assert_eq!(code(&graph), 1);
    assert!(stdout(&graph).is_empty());
    assert_eq!(code(&tenxc_in(&dir, &["build", "missing.tenx", "-o", "x.tenxg"])), 2);
    // A directory holding one program builds that program (here: it has errors).
    assert_eq!(code(&tenxc_in(&dir, &["build", ".", "-o", "x.tenxg"])), 1);
}

#[test]
fn builds_are_identical_from_any_directory() {
    let dir = temp_dir("same");
    let repo = repo();
    let example = repo.join("examples/client_tool");
    let a = dir.join("a.tenxg");
    let b = dir.join("b.tenxg");
    let c = dir.join("c.tenxg");
    assert_eq!(
        code(&tenxc(&[
            "build",
            "examples/client_tool/main.tenx",
            "-o",
            a.to_str().unwrap()
        ])),
        0
    );
    assert_eq!(
        code(&tenxc_in(&example, &["build", "main.tenx", "-o", b.to_str().unwrap()])),
        0
    );
    let absolute = example.join("main.tenx");
    assert_eq!(
        code(&tenxc_in(&dir, &["build", absolute.to_str().unwrap(), "-o", "c.tenxg"])),
        0
    );
    let a = std::fs::read(a).unwrap();
    assert_eq!(a, std::fs::read(b).unwrap());
    assert_eq!(a, std::fs::read(c).unwrap());
    let text = String::from_utf8(a).unwrap();
    assert!(text.contains(r#""file":"tools.tenx""#), "{text}");
    assert!(!text.contains(dir.to_str().unwrap()) && !text.contains(repo.to_str().unwrap()));
}

#[test]
fn keygen_sign_and_verify() {
    let dir = temp_dir("keys");
    let keygen = tenxc_in(&dir, &["keygen", "-o", "release"]);
    assert_eq!(code(&keygen), 0, "{}", stderr(&keygen));
    assert!(stdout(&keygen).contains("fingerprint: ed25519:"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join("release.secret"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let again = tenxc_in(&dir, &["keygen", "-o", "release"]);
    assert_eq!(code(&again), 2);
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));
    assert_eq!(code(&tenxc_in(&dir, &["keygen", "-o", "other"])), 0);

    let example = repo().join("examples/support_desk/main.tenx");
    let build = tenxc_in(
        &dir,
        &[
            "build",
            example.to_str().unwrap(),
            "-o",
            "desk.tenxg",
            "--sign",
            "release.secret",
        ],
    );
    assert_eq!(code(&build), 0, "{}", stderr(&build));
    assert!(stdout(&build).contains("(signed by ed25519:"), "{}", stdout(&build));
    let trusted = [
        "inspect",
        "desk.tenxg",
        "--require-signature",
        "--trust",
        "release.public",
    ];
    let inspect = tenxc_in(&dir, &trusted);
    assert_eq!(code(&inspect), 0, "{}", stderr(&inspect));
    assert!(stdout(&inspect).contains("(trusted)"), "{}", stdout(&inspect));

    let untrusted = tenxc_in(
        &dir,
        &[
            "inspect",
            "desk.tenxg",
            "--require-signature",
            "--trust",
            "other.public",
        ],
    );
    assert_eq!(code(&untrusted), 2);
    assert!(stderr(&untrusted).contains("untrusted key"), "{}", stderr(&untrusted));
    // A public key cannot sign, and a secret key is not a trust anchor.
    assert_eq!(
        code(&tenxc_in(
            &dir,
            &[
                "build",
                example.to_str().unwrap(),
                "-o",
                "x.tenxg",
                "--sign",
                "release.public"
            ]
        )),
        2
    );
    assert_eq!(
        code(&tenxc_in(&dir, &["inspect", "desk.tenxg", "--trust", "release.secret"])),
        2
    );

    let unsigned = tenxc_in(&dir, &["build", example.to_str().unwrap(), "-o", "plain.tenxg"]);
    assert_eq!(code(&unsigned), 0);
    let refused = tenxc_in(
        &dir,
        &[
            "inspect",
            "plain.tenxg",
            "--require-signature",
            "--trust",
            "release.public",
        ],
    );
    assert_eq!(code(&refused), 2);
    assert!(stderr(&refused).contains("not signed"), "{}", stderr(&refused));

    // One flipped byte inside the body: the seal no longer matches.
    let mut bytes = std::fs::read(dir.join("desk.tenxg")).unwrap();
    let at = bytes.windows(6).position(|w| w == b"triage").unwrap();
    bytes[at] = b'T';
    std::fs::write(dir.join("tampered.tenxg"), &bytes).unwrap();
    let tampered = tenxc_in(
        &dir,
        &[
            "inspect",
            "tampered.tenxg",
            "--require-signature",
            "--trust",
            "release.public",
        ],
    );
    assert_eq!(code(&tampered), 2);
    assert!(
        stderr(&tampered).contains("does not match its seal"),
        "{}",
        stderr(&tampered)
    );
    assert!(stdout(&tampered).is_empty());
}

#[test]
fn inspect_names_native_handlers_and_header_names() {
    let dir = temp_dir("bindings");
    let out = dir.join("bindings.tenxg");
    let out_arg = out.to_str().unwrap();
    let build = tenxc(&["build", "tests/fixtures/bindings/headers_ok.tenx", "-o", out_arg]);
    assert_eq!(code(&build), 0, "{}", stderr(&build));
    let inspect = tenxc(&["inspect", out_arg]);
    assert_eq!(code(&inspect), 0, "{}", stderr(&inspect));
    let summary = stdout(&inspect);
    assert!(
        summary.contains("native handlers the host must register: crm.customers.lookup_v2, crm.notes"),
        "{summary}"
    );
    assert!(summary.contains("crm_notes: native crm.notes"), "{summary}");
    assert!(
        summary.contains("headers Accept, Authorization, X-Tenant)"),
        "{summary}"
    );
    // Header values are templates of the program, not shown.
    assert!(!summary.contains("ORDERS_TOKEN"), "{summary}");
}
