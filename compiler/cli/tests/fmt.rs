//! End-to-end tests of `tenxc fmt`: files rewritten in place, `--check` diffs and exit codes,
//! files with syntax errors left untouched, directories walked, standard input, and the line
//! width from `tenx.toml`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

mod common;

use common::{code, stderr, stdout, temp_dir, tenxc_in, write};
use std::io::Write as _;
use std::process::{Command, Stdio};

const MESSY: &str = "model m {provider=scripted\nturns=[{text:\"hi\"}]}\n";
const TIDY: &str = "model m {\n  provider = scripted\n  turns    = [{ text: \"hi\" }]\n}\n";
const BROKEN: &str = "model m {\n  provider => scripted\n}\n";

#[test]
fn fmt_rewrites_a_file_and_then_has_nothing_to_do() {
    let dir = temp_dir("fmt-rewrite");
    let path = write(&dir, "main.tenx", MESSY);
    let output = tenxc_in(&dir, &["fmt", "main.tenx"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TIDY);
    assert!(
        stderr(&output).contains("formatted 1 file, 0 already formatted"),
        "{}",
        stderr(&output)
    );
    let again = tenxc_in(&dir, &["fmt", "--check", "main.tenx"]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(stdout(&again), "");
}

#[test]
fn check_prints_a_diff_exits_1_and_writes_nothing() {
    let dir = temp_dir("fmt-check");
    let path = write(&dir, "main.tenx", MESSY);
    let output = tenxc_in(&dir, &["fmt", "--check", "main.tenx"]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let diff = stdout(&output);
    assert!(
        diff.starts_with("--- main.tenx\n+++ main.tenx (formatted)\n@@"),
        "{diff}"
    );
    assert!(diff.contains("-model m {provider=scripted\n"), "{diff}");
    assert!(diff.contains("+  turns    = [{ text: \"hi\" }]\n"), "{diff}");
    assert!(
        stderr(&output).contains("1 file would be reformatted"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), MESSY);
}

#[test]
fn a_file_with_syntax_errors_is_left_untouched_and_exits_1() {
    let dir = temp_dir("fmt-broken");
    let broken = write(&dir, "broken.tenx", BROKEN);
    let messy = write(&dir, "messy.tenx", MESSY);
    for args in [&["fmt", "."][..], &["fmt", "--check", "."][..]] {
        let output = tenxc_in(&dir, args);
        assert_eq!(code(&output), 1, "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("TENX0001"), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("broken.tenx: left as it was"),
            "{}",
            stderr(&output)
        );
        assert_eq!(std::fs::read_to_string(&broken).unwrap(), BROKEN);
    }
    // The other file of the folder was still formatted.
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), TIDY);
}

#[test]
fn directories_are_walked_for_tenx_files() {
    let dir = temp_dir("fmt-walk");
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    let deep = write(&dir, "a/b/deep.tenx", MESSY);
    let other = write(&dir, "a/notes.txt", MESSY);
    let output = tenxc_in(&dir, &["fmt", "a"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&deep).unwrap(), TIDY);
    assert_eq!(std::fs::read_to_string(&other).unwrap(), MESSY);
}

#[test]
fn standard_input_is_formatted_to_standard_output() {
    let dir = temp_dir("fmt-stdin");
    let run = |args: &[&str], input: &str| {
        let mut child = Command::new(common::TENXC)
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let output = run(&["fmt", "-"], MESSY);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), TIDY);
    let check = run(&["fmt", "--check", "-"], TIDY);
    assert_eq!(code(&check), 0, "{}", stderr(&check));
    // A broken input is echoed as it was, so a pipe never loses it.
    let broken = run(&["fmt", "-"], BROKEN);
    assert_eq!(code(&broken), 1);
    assert_eq!(stdout(&broken), BROKEN);
}

#[test]
fn the_line_width_comes_from_the_project_file() {
    let dir = temp_dir("fmt-width");
    let text = "model m {\n  provider = scripted\n  turns = [{ text: \"aaaaaaaaaaaaaaaaaaaa\" }, { text: \"bbbbbbbbbbbbbbbbbbbb\" }]\n}\n";
    let path = write(&dir, "main.tenx", text);
    write(&dir, "tenx.toml", "[fmt]\nline_width = 40\n");
    let output = tenxc_in(&dir, &["fmt", "main.tenx"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "model m {\n  provider = scripted\n  turns = [\n    { text: \"aaaaaaaaaaaaaaaaaaaa\" },\n    { text: \"bbbbbbbbbbbbbbbbbbbb\" }\n  ]\n}\n"
    );
    write(&dir, "tenx.toml", "[fmt]\nline_width = 5\n");
    let refused = tenxc_in(&dir, &["fmt", "main.tenx"]);
    assert_eq!(code(&refused), 2);
    assert!(stderr(&refused).contains("line_width"), "{}", stderr(&refused));
}
