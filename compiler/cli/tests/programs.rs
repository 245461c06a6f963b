//! What a command line checks, end to end: every file of a directory is covered (files that
//! import each other included), imports are confined to the project folder and to regular files
//! of a bounded size, and links neither loop a walk nor make one file two.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod common;

use common::{BAD, code, stderr, stdout, temp_dir, tenxc_in, write};
use std::os::unix::fs::symlink;

/// A refund program whose billing agent can call the high-risk tool around its approval
/// (`TENX0604`). `{import}` is replaced by the program's imports.
const BYPASS: &str = r#"{import}
import std.approval.yes_no

model support {
  provider = scripted
}

tool issue_refund(order_id: string, amount_cents: int(min: 1, max: 50000)) {
  description = "Refund part or all of an order"
  tags = [payments]
  risk = high
  run = http(POST, "${PAYMENTS_URL}/refund")
}

interrupt approve_refund {
  message = "Approve a refund of {amount_cents} cents for order {order_id}?"
  response = yes_no
  approves = [issue_refund]
  approvers = [role("support_lead")]
}

agent billing {
  model = support
  prompt = "Refund orders when asked."
  tools = tagged(payments)
}

graph refunds {
  entry = billing
  nodes = [billing, approve_refund, issue_refund]
  state {
    order_id: string
    amount_cents: int
  }
  billing -> approve_refund
  approve_refund -> issue_refund
  issue_refund -> END
}
"#;

/// A file that declares the tag the bypass program uses.
const TAGS: &str = "tag payments \"Moves money\"\n";

/// A clean one-agent program.
const CLEAN: &str = r#"model m {
  provider = scripted
  turns    = [{ text: "hi" }]
}

agent a {
  model  = m
  prompt = "Say hi."
}

graph g {
  entry = a
  nodes = [a]

  a -> END
}
"#;

fn bypass(imports: &str) -> String {
    BYPASS.replace("{import}", imports)
}

#[test]
fn files_that_import_each_other_are_checked_as_one_program() {
    let dir = temp_dir("mutual");
    write(&dir, "main.tenx", &bypass("import \"tags.tenx\""));
    write(&dir, "tags.tenx", &format!("import \"main.tenx\"\n{TAGS}"));
    for args in [
        &["check", "."][..],
        &["check", "main.tenx", "tags.tenx"],
        &["check", "tags.tenx"],
    ] {
        let output = tenxc_in(&dir, args);
        assert_eq!(code(&output), 1, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("error[TENX0604]"),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("checked 2 files in 1 program: 1 error"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // `build` and `graph` take the directory too: it holds one program.
    assert_eq!(code(&tenxc_in(&dir, &["build", ".", "-o", "app.tenxg"])), 1);
    assert!(!dir.join("app.tenxg").exists());
    assert_eq!(code(&tenxc_in(&dir, &["graph", "."])), 1);
}

#[test]
fn a_directory_check_names_each_program_it_covered() {
    let dir = temp_dir("programs");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    write(
        &dir,
        "a/main.tenx",
        &bypass("import \"tags.tenx\"")
            .replace(
                "billing -> approve_refund",
                "billing -> issue_refund\n  approve_refund -> END",
            )
            .replace("approve_refund -> issue_refund\n", ""),
    );
    write(&dir, "a/tags.tenx", TAGS);
    write(&dir, "b.tenx", CLEAN);
    let output = tenxc_in(&dir, &["check", "."]);
    let text = stderr(&output);
    assert!(text.contains("program a/main.tenx (2 files)"), "{text}");
    assert!(text.contains("program b.tenx (1 file)"), "{text}");
    assert!(text.contains("checked 3 files in 2 programs"), "{text}");
    // Two programs: `build` needs to be told which.
    let build = tenxc_in(&dir, &["build", ".", "-o", "x.tenxg"]);
    assert_eq!(code(&build), 2);
    assert!(stderr(&build).contains("holds 2 programs"), "{}", stderr(&build));
}

#[test]
fn an_import_outside_the_project_is_refused_unread() {
    let dir = temp_dir("outside");
    std::fs::create_dir_all(dir.join("app")).unwrap();
    write(&dir, "secret.tenx", "tag leaked \"TOKEN-IN-A-FILE-OUTSIDE\"\n");
    for import in ["../secret.tenx", "/proc/self/environ"] {
        write(&dir, "app/main.tenx", &format!("import \"{import}\"\n{CLEAN}"));
        let output = std::process::Command::new(common::TENXC)
            .args(["check", "app/main.tenx"])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("TENX_TEST_SECRET", "TOKEN-IN-THE-ENVIRONMENT")
            .output()
            .unwrap();
        let text = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(code(&output), 1, "{import}: {text}");
        assert!(text.contains("error[TENX0112]"), "{import}: {text}");
        assert!(
            !text.contains("TOKEN-IN"),
            "{import}: the refused file was shown:\n{text}"
        );
    }
    // A link inside the project to a file outside it is outside too.
    symlink(dir.join("secret.tenx"), dir.join("app/inside.tenx")).unwrap();
    write(&dir, "app/main.tenx", &format!("import \"inside.tenx\"\n{CLEAN}"));
    let output = tenxc_in(&dir, &["check", "app/main.tenx"]);
    assert!(stderr(&output).contains("error[TENX0112]"), "{}", stderr(&output));
    assert!(!stderr(&output).contains("TOKEN-IN"), "{}", stderr(&output));
    // With a `tenx.toml` above, the project is its folder, and the same import is allowed.
    write(&dir, "tenx.toml", "");
    let output = tenxc_in(&dir, &["check", "app/main.tenx"]);
    assert!(!stderr(&output).contains("TENX0112"), "{}", stderr(&output));
}

#[test]
fn devices_pipes_and_folders_are_never_read() {
    let dir = temp_dir("devices");
    symlink("/dev/zero", dir.join("zero.tenx")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.tenx"))
        .status()
        .unwrap();
    assert!(fifo.success());
    std::fs::create_dir_all(dir.join("folder.tenx")).unwrap();
    for (import, code_expected) in [
        ("zero.tenx", "TENX0112"),
        ("pipe.tenx", "TENX0113"),
        ("folder.tenx", "TENX0113"),
    ] {
        write(&dir, "main.tenx", &format!("import \"{import}\"\n{CLEAN}"));
        // Opening the pipe would block and reading the device would never end: a hang fails.
        let output = tenxc_in(&dir, &["check", "main.tenx"]);
        assert_eq!(code(&output), 1, "{import}: {}", stderr(&output));
        assert!(stderr(&output).contains(code_expected), "{import}: {}", stderr(&output));
    }
    // Named on the command line, they are refused too.
    for root in ["/dev/zero", "pipe.tenx"] {
        let output = tenxc_in(&dir, &["check", root]);
        assert_eq!(code(&output), 2, "{root}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("not a regular file"),
            "{root}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_file_over_the_limit_is_refused_unread() {
    let dir = temp_dir("large");
    let big = std::fs::File::create(dir.join("big.tenx")).unwrap();
    big.set_len(tenxc::disk::MAX_SOURCE_BYTES + 1).unwrap();
    write(&dir, "main.tenx", &format!("import \"big.tenx\"\n{CLEAN}"));
    let output = tenxc_in(&dir, &["check", "main.tenx"]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("error[TENX0114]"), "{}", stderr(&output));
    assert!(stderr(&output).contains("16 MiB"), "{}", stderr(&output));
    let output = tenxc_in(&dir, &["check", "big.tenx"]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
}

#[test]
fn one_file_reached_by_two_paths_is_one_file() {
    let dir = temp_dir("alias");
    write(&dir, "tags.tenx", TAGS);
    symlink(dir.join("tags.tenx"), dir.join("alias.tenx")).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let imports = "import \"tags.tenx\"\nimport \"alias.tenx\"\nimport \"sub/../tags.tenx\"";
    write(&dir, "main.tenx", &bypass(imports));
    let output = tenxc_in(&dir, &["check", "main.tenx"]);
    let text = stderr(&output);
    assert!(!text.contains("TENX0103"), "declared more than once:\n{text}");
    assert!(text.contains("checked 2 files in 1 program"), "{text}");
}

#[test]
fn links_cannot_loop_a_directory_walk() {
    let dir = temp_dir("loop");
    write(&dir, "main.tenx", CLEAN);
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    write(&dir, "a/b/other.tenx", CLEAN);
    symlink(&dir, dir.join("a/b/up")).unwrap();
    symlink(dir.join("a"), dir.join("a/b/again")).unwrap();
    let output = tenxc_in(&dir, &["check", "."]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("checked 2 files in 2 programs"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_link_out_of_a_walked_directory_is_refused() {
    let outside = temp_dir("elsewhere");
    write(&outside, "stolen.tenx", BAD);
    let dir = temp_dir("link-out");
    write(&dir, "main.tenx", CLEAN);
    symlink(outside.join("stolen.tenx"), dir.join("stolen.tenx")).unwrap();
    let output = tenxc_in(&dir, &["check", "."]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(stderr(&output).contains("leads outside"), "{}", stderr(&output));
}
