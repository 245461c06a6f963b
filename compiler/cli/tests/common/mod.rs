//! Helpers shared by the end-to-end tests of the `tenxc` binary: a fresh directory per test,
//! running the binary in it, and small programs.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test; not every test file uses every helper"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

pub const TENXC: &str = env!("CARGO_BIN_EXE_tenxc");

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A fresh, empty directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cli-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `tenxc args…` in `dir`.
pub fn tenxc_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(TENXC)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Runs `tenxc args…` in the repository root.
pub fn tenxc(args: &[&str]) -> Output {
    tenxc_in(&repo(), args)
}

pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A program with one error: the edge names a node the graph does not have (`TENX0302`).
pub const BAD: &str = r#"model m {
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

  a -> b
}
"#;

/// A program with one warning: a model no agent uses (`TENX0902`).
pub const WARNS: &str = r#"model m {
  provider = scripted
  turns    = [{ text: "hi" }]
}

model spare {
  provider = scripted
  turns    = [{ text: "unused" }]
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

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}
