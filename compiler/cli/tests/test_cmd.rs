//! End-to-end tests of `tenxc test` and `tenxc init`, driving the real binary: every example's
//! tests pass on the engine, a failing expectation prints its diff and exits 1, JSON and JUnit
//! reports, `--filter`, a program that does not check exits 2, the tests of `docs/language.md`
//! pass, and a scaffolded project passes check, test and build.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod common;

use common::{code, stderr, stdout, temp_dir, tenxc, tenxc_in, write};

/// A program with one approval and tests that pass and fail in known ways.
const REFUNDS: &str = r#"import std.approval.yes_no

model refund_model {
  provider = scripted
  turns    = [
    { tool: "issue_refund", arguments: { order_id: "7", amount_cents: 300 } }
    { text: "Done: {result}" }
  ]
}

tool issue_refund(order_id: string "The order", amount_cents: int(min: 1, max: 1000) "Cents") -> string {
  description = "Refund an order."
  risk        = high
  approval {
    message   = "Refund {amount_cents} cents for order {order_id}?"
    response  = yes_no
    approvers = [role("support_lead")]
  }
  run = http(POST, "${PAYMENTS_URL}/refunds", timeout: 5s)
}

agent support {
  model  = refund_model
  prompt = "Refund orders."
  tools  = [issue_refund]
}

graph refunds {
  entry = support
  nodes = [support]

  support -> END
}

test "approved" {
  input   = "Refund order 7"
  mocks   = { issue_refund: "refunded" }
  answers = [approve]
  expect {
    calls     = [issue_refund(order_id: "7", amount_cents: 300)]
    approvals = [{ message: "Refund 300 cents for order 7?" }]
    message   = "Done: refunded"
  }
}

test "wrong message" {
  input   = "Refund order 7"
  mocks   = { issue_refund: "refunded" }
  answers = [approve]
  expect {
    message = "Done: not refunded"
  }
}

test "unanswered" {
  input = "Refund order 7"
  expect {
    calls  = []
    status = interrupted
  }
}
"#;

#[test]
fn every_example_passes_its_tests() {
    let output = tenxc(&["test", "examples/"]);
    let out = stdout(&output);
    assert_eq!(code(&output), 0, "{out}\n{}", stderr(&output));
    let passed = out
        .lines()
        .filter(|l| l.starts_with("test ") && l.ends_with(" ... ok"))
        .count();
    for example in ["client_tool", "refund_approval", "research_flow", "support_desk"] {
        assert!(
            out.contains(&format!("test examples/{example}/main.tenx :: ")),
            "{example} has no test:\n{out}"
        );
    }
    // The refund example's three ways an approval can go.
    for name in [
        "an approved refund runs once",
        "a rejected refund never runs",
        "an expired approval is never consent",
    ] {
        assert!(out.contains(&format!(":: {name} ... ok")), "{name}:\n{out}");
    }
    assert!(
        out.contains(&format!("test result: ok. {passed} passed; 0 failed")),
        "{out}"
    );
    assert!(passed >= 11, "{out}");
}

#[test]
fn a_failing_expectation_prints_its_diff_and_exits_1() {
    let dir = temp_dir("test-fail");
    write(&dir, "refunds.tenx", REFUNDS);
    let output = tenxc_in(&dir, &["test", "refunds.tenx"]);
    let out = stdout(&output);
    assert_eq!(code(&output), 1, "{out}\n{}", stderr(&output));
    assert!(out.contains("test refunds.tenx :: approved ... ok"), "{out}");
    assert!(out.contains("test refunds.tenx :: wrong message ... FAILED"), "{out}");
    assert!(out.contains("test refunds.tenx :: unanswered ... ok"), "{out}");
    assert!(out.contains("`message` differs (- expected, + actual):"), "{out}");
    assert!(out.contains("- \"Done: not refunded\""), "{out}");
    assert!(out.contains("+ \"Done: refunded\""), "{out}");
    assert!(
        out.contains("test result: FAILED. 2 passed; 1 failed; 0 filtered out"),
        "{out}"
    );
}

#[test]
fn filter_runs_only_matching_tests() {
    let dir = temp_dir("test-filter");
    write(&dir, "refunds.tenx", REFUNDS);
    let output = tenxc_in(&dir, &["test", "refunds.tenx", "--filter", "approved"]);
    let out = stdout(&output);
    assert_eq!(code(&output), 0, "{out}");
    assert!(
        out.contains("test result: ok. 1 passed; 0 failed; 2 filtered out"),
        "{out}"
    );
}

#[test]
fn json_and_junit_reports() {
    let dir = temp_dir("test-formats");
    write(&dir, "refunds.tenx", REFUNDS);
    let output = tenxc_in(&dir, &["test", "refunds.tenx", "--format", "json"]);
    assert_eq!(code(&output), 1);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["passed"], 2);
    assert_eq!(report["failed"], 1);
    let failed = &report["tests"][1];
    assert_eq!(failed["name"], "wrong message");
    assert_eq!(failed["outcome"], "failed");
    assert_eq!(failed["mismatches"][0]["field"], "message");
    assert_eq!(failed["mismatches"][0]["actual"], "Done: refunded");

    let output = tenxc_in(&dir, &["test", "refunds.tenx", "--format", "junit"]);
    assert_eq!(code(&output), 1);
    let xml = stdout(&output);
    assert!(
        xml.contains(r#"<testsuites name="tenxc test" tests="3" failures="1""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testsuite name="refunds.tenx" tests="3" failures="1">"#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testcase classname="refunds.tenx" name="approved""#),
        "{xml}"
    );
    assert!(xml.contains(r#"<failure message="expectations not met">"#), "{xml}");
    assert!(xml.contains("- &quot;Done: not refunded&quot;"), "{xml}");
}

#[test]
fn a_program_that_does_not_check_exits_2() {
    let dir = temp_dir("test-bad");
    write(
        &dir,
        "bad.tenx",
        &REFUNDS.replace("graph refunds {", "graph refunds {\n  bogus = 1"),
    );
    let output = tenxc_in(&dir, &["test", "bad.tenx"]);
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    assert!(stderr(&output).contains("TENX0105"), "{}", stderr(&output));
    assert!(stderr(&output).contains("no test ran"), "{}", stderr(&output));
}

#[test]
fn init_scaffolds_a_project_that_checks_tests_and_builds() {
    let dir = temp_dir("init");
    let output = tenxc_in(&dir, &["init", "my_agent"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let project = dir.join("my_agent");
    for file in ["tenx.toml", "main.tenx", ".gitignore", ".github/workflows/tenx.yml"] {
        assert!(project.join(file).is_file(), "{file} missing");
    }
    let workflow = std::fs::read_to_string(project.join(".github/workflows/tenx.yml")).unwrap();
    for step in ["tenxc fmt --check", "tenxc check --format github", "tenxc test"] {
        assert!(workflow.contains(step), "{workflow}");
    }
    let fmt = tenxc_in(&project, &["fmt", "--check", "."]);
    assert_eq!(code(&fmt), 0, "{}{}", stdout(&fmt), stderr(&fmt));
    let check = tenxc_in(&project, &["check", "--format", "github", "."]);
    assert_eq!(code(&check), 0, "{}{}", stdout(&check), stderr(&check));
    let test = tenxc_in(&project, &["test"]);
    assert_eq!(code(&test), 0, "{}{}", stdout(&test), stderr(&test));
    assert!(
        stdout(&test).contains("test result: ok. 2 passed; 0 failed"),
        "{}",
        stdout(&test)
    );
    let build = tenxc_in(&project, &["build", "main.tenx", "-o", "main.tenxg"]);
    assert_eq!(code(&build), 0, "{}", stderr(&build));
    assert!(project.join("main.tenxg").is_file());

    // An existing, non-empty folder is refused and left as it was.
    let again = tenxc_in(&dir, &["init", "my_agent"]);
    assert_eq!(code(&again), 2);
    assert!(
        stderr(&again).contains("already exists and is not empty"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn the_language_reference_tests_pass() {
    let reference = std::fs::read_to_string(common::repo().join("docs/language.md")).unwrap();
    let dir = temp_dir("test-docs");
    let mut programs = 0;
    for (index, block) in reference.split("```tenx\n").skip(1).enumerate() {
        let source = block.split("```").next().unwrap();
        if !source.lines().any(|line| line.starts_with("test \"")) {
            continue;
        }
        programs += 1;
        let name = format!("block{index}.tenx");
        write(&dir, &name, source);
        let output = tenxc_in(&dir, &["test", &name]);
        assert_eq!(code(&output), 0, "{}\n{}\n{source}", stdout(&output), stderr(&output));
        assert!(stdout(&output).contains(" 0 failed"), "{}", stdout(&output));
    }
    assert!(programs >= 1, "docs/language.md has no example with tests");
}
