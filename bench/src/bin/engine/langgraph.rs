//! LangGraph side by side: `bench/langgraph/refund.py` (the same refund-shaped graph, see its
//! docstring for what is and is not comparable) run in a virtualenv under `target/bench/venv`
//! with pinned packages. The venv is made and the pins installed when the registry is reachable;
//! otherwise the bench says why LangGraph was skipped and goes on without it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::measure::Figures;
use crate::paused::Resident;

/// The packages the script needs, pinned (the versions measured in the closing note).
const PINS: [&str; 3] = [
    "langgraph==1.2.24",
    "langgraph-checkpoint-sqlite==3.1.2",
    "langchain-core==1.8.3",
];

/// What the script measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LangGraph {
    pub(crate) turn: Figures,
    pub(crate) pause_resume: Figures,
    pub(crate) paused: Option<Resident>,
}

/// How much the script runs.
pub(crate) struct Counts {
    pub(crate) turns: usize,
    pub(crate) resumes: usize,
    pub(crate) paused: usize,
}

/// Runs the script, preparing its venv first. `Err` says why LangGraph was skipped.
pub(crate) fn run(root: &Path, counts: &Counts) -> Result<LangGraph, String> {
    let python = prepare(root)?;
    let output = Command::new(&python)
        .arg(root.join("bench/langgraph/refund.py"))
        .arg(root.join("target/bench/langgraph.sqlite"))
        .env("TURNS", counts.turns.to_string())
        .env("RESUMES", counts.resumes.to_string())
        .env("PAUSED", counts.paused.to_string())
        .output()
        .map_err(|error| format!("running the LangGraph script: {error}"))?;
    if !output.status.success() {
        return Err(format!("the LangGraph script failed: {}", last_line(&output.stderr)));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let parsed: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .ok_or_else(|| "the LangGraph script printed no figures".to_owned())?;
    let figures = |name: &str, count: usize| -> Option<Figures> {
        let part = parsed.get(name)?;
        Some(Figures {
            median_us: part.get("median_us")?.as_f64()?,
            p90_us: part.get("p90_us")?.as_f64()?,
            samples: count,
        })
    };
    let paused = parsed.get("paused").and_then(|part| {
        let after = part.get("rss_bytes")?.as_u64()?;
        let grown = part.get("grown_bytes")?.as_u64()?;
        Some(Resident {
            threads: usize::try_from(part.get("threads")?.as_u64()?).ok()?,
            before: after.saturating_sub(grown),
            after,
        })
    });
    match (figures("turn", counts.turns), figures("pause_resume", counts.resumes)) {
        (Some(turn), Some(pause_resume)) => Ok(LangGraph {
            turn,
            pause_resume,
            paused,
        }),
        _ => Err("the LangGraph script's figures are incomplete".to_owned()),
    }
}

/// The venv's python with the pins installed: made once, reinstalled when the pins change.
fn prepare(root: &Path) -> Result<std::path::PathBuf, String> {
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

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}
