//! The virtualenv the LangGraph scripts of `bench/langgraph/` run in: `target/bench/venv` with
//! pinned packages, made once and reinstalled when the pins change. The engine and fan-out
//! benchmarks share it; without `python3` or the package registry, [`prepare`] says why, and
//! each bench prints that LangGraph was skipped and goes on without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The packages the scripts need, pinned (the versions measured in bench/README.md).
pub const PINS: [&str; 3] = [
    "langgraph==1.2.24",
    "langgraph-checkpoint-sqlite==3.1.2",
    "langchain-core==1.8.3",
];

/// The venv's python with the pins installed, under `root/target/bench/venv`. `Err` says why it
/// cannot be had.
///
/// # Errors
///
/// `python3` is missing, the venv cannot be made, or `pip` cannot install the pins.
pub fn prepare(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join("target/bench/venv");
    let python = venv.join("bin/python");
    let stamp = venv.join("tenx-pins.txt");
    let wanted = PINS.join("\n");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|pins| pins == wanted) {
        return Ok(python);
    }
    if !python.is_file() {
        let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).output();
        check(made, "python3 -m venv")?;
    }
    eprintln!("installing {} into {} …", PINS.join(" "), venv.display());
    let installed = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(PINS)
        .output();
    check(installed, "pip install (is the package registry reachable?)")?;
    std::fs::write(&stamp, wanted).map_err(|error| format!("writing {}: {error}", stamp.display()))?;
    Ok(python)
}

fn check(result: std::io::Result<Output>, what: &str) -> Result<(), String> {
    match result {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!("{what} failed: {}", last_line(&output.stderr))),
        Err(error) => Err(format!("{what} could not start: {error}")),
    }
}

/// The last line of `bytes` that is not blank, trimmed (what a failed script said last).
#[must_use]
pub fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// The JSON object a script printed on its last line.
///
/// # Errors
///
/// The script failed (its last line of stderr), or printed no JSON object last.
pub fn figures_of(output: &Output) -> Result<serde_json::Value, String> {
    if !output.status.success() {
        return Err(format!("the LangGraph script failed: {}", last_line(&output.stderr)));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or_else(|| "the LangGraph script printed no figures".to_owned())
}
