//! The VS Code extension's tests, run from `cargo test --workspace`: `npm test` of
//! `editors/vscode` (the TextMate grammar over every valid example, stdlib file, clean fixture,
//! `docs/language.md` block and catalog page block, and the client's server command), through
//! node.
//!
//! They need the extension's npm dependencies (`npm --prefix editors/vscode ci`). Without them
//! the test says `skipped` and passes, except under `CI=true`, where `.ci/run` installs them and
//! their absence fails the test, as the MCP tests treat their npm server.

#![expect(clippy::panic, clippy::unwrap_used, reason = "a test reports a failure by panicking")]

use std::path::PathBuf;
use std::process::Command;
use tenx_tests::repo_root;

/// `node` from the `PATH`, or `None`.
fn node() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
}

/// The extension's folder and node, or `None` (after saying why) when they are not installed.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let extension = repo_root().join("editors/vscode");
    let node = node();
    if let Some(node) = node.clone()
        && extension.join("node_modules/vscode-textmate").is_dir()
    {
        return Some((extension, node));
    }
    let message = if node.is_none() {
        "node is not on PATH".to_string()
    } else {
        "the extension's npm dependencies are not installed: run `npm --prefix editors/vscode ci`".to_string()
    };
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{message} (CI installs them in .ci/run)");
    }
    eprintln!("skipped: {message}");
    None
}

/// Runs one of the extension's test scripts and returns what it printed; fails with its output.
fn run(script: &str) -> Option<String> {
    let (extension, node) = installed()?;
    let output = Command::new(node).arg(script).current_dir(&extension).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "node {script} failed ({}):\n{stdout}{stderr}",
        output.status
    );
    print!("{stdout}");
    Some(stdout)
}

#[test]
fn the_grammar_scopes_every_token_of_valid_code() {
    let Some(stdout) = run("test/grammar.mjs") else { return };
    // The counts line, e.g. `grammar: 257 units (53 files, 26 docs/language.md blocks, 178
    // catalog blocks), 39894 tokens, 53 exact-scope checks`: the corpus must not silently shrink.
    let counts = stdout
        .lines()
        .find(|line| line.starts_with("grammar: ") && line.contains(" tokens"))
        .unwrap_or_else(|| panic!("no counts line in:\n{stdout}"));
    let number_before = |word: &str| -> usize {
        let words: Vec<&str> = counts.split([' ', '(', ',']).filter(|w| !w.is_empty()).collect();
        let at = words.iter().position(|w| *w == word).unwrap();
        words.get(at.wrapping_sub(1)).and_then(|n| n.parse().ok()).unwrap()
    };
    assert!(number_before("files") >= 50, "too few files: {counts}");
    assert!(number_before("docs/language.md") >= 20, "too few docs blocks: {counts}");
    assert!(number_before("catalog") >= 100, "too few catalog blocks: {counts}");
    assert!(number_before("tokens") >= 10_000, "too few tokens: {counts}");
    assert!(stdout.lines().any(|line| line == "grammar: ok"), "{stdout}");
}

#[test]
fn the_client_starts_the_configured_tenxc_lsp() {
    let Some(stdout) = run("test/client.cjs") else { return };
    assert!(stdout.contains("server command cases ok"), "{stdout}");
}
