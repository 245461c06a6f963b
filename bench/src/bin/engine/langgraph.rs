//! LangGraph side by side: `bench/langgraph/refund.py` (the same refund-shaped graph, see its
//! docstring for what is and is not comparable) run in the pinned virtualenv of
//! `tenx_bench::venv` (`target/bench/venv`). The venv is made and the pins installed when the
//! registry is reachable; otherwise the bench says why LangGraph was skipped and goes on without it.

use std::path::Path;
use std::process::Command;

use tenx_bench::venv;

use crate::measure::Figures;
use crate::paused::Resident;

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
    let python = venv::prepare(root)?;
    let output = Command::new(&python)
        .arg(root.join("bench/langgraph/refund.py"))
        .arg(root.join("target/bench/langgraph.sqlite"))
        .env("TURNS", counts.turns.to_string())
        .env("RESUMES", counts.resumes.to_string())
        .env("PAUSED", counts.paused.to_string())
        .output()
        .map_err(|error| format!("running the LangGraph script: {error}"))?;
    let parsed = venv::figures_of(&output)?;
    let figures = |name: &str, count: usize| Figures::from_json(parsed.get(name), count);
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
