//! LangGraph beside it: `bench/langgraph/fanout.py` (the same flow with `Send`, and its one-branch
//! version, single runs and under load; its docstring says what differs) in the pinned venv of `tenx_bench::venv`, against
//! the same fetch stand-in. Without `python3` or the package registry the bench says why
//! LangGraph was skipped and goes on without it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tenx_bench::figures::Figures;
use tenx_bench::venv;

use crate::load::{BATCHES, CONCURRENCY, Loaded};

/// What the script measured of one version: wall time and the process's CPU time per run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timed {
    pub(crate) wall: Figures,
    pub(crate) cpu: Figures,
}

/// What the script measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LangGraph {
    pub(crate) one: Timed,
    pub(crate) parallel: Timed,
    /// The tool's function called bare (urllib's POST and answer, no LangGraph).
    pub(crate) bare: Timed,
    /// The same for the eight topics at once, on a thread pool of eight made once.
    pub(crate) bare_eight: Timed,
    /// The same under load (`crate::load`), if the script measured it.
    pub(crate) loaded: Option<LoadedLangGraph>,
}

/// What the script measured under load: CPU time per run (µs) over its batches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadedLangGraph {
    pub(crate) one: Loaded,
    pub(crate) parallel: Loaded,
    pub(crate) bare: Loaded,
    pub(crate) bare_eight: Loaded,
}

/// Runs each of the script's threads makes in one loaded batch (a LangGraph run costs about 50 times
/// a tenx run, so fewer than the Rust side's; the threads are as many as its tasks).
const LOAD_ROUNDS: usize = 2;

fn loaded(part: Option<&Value>) -> Option<Loaded> {
    let part = part?;
    Some(Loaded {
        cpu: Figures::from_json(part.get("cpu"), BATCHES)?,
        per_second: part.get("per_second")?.as_f64()?,
    })
}

fn loaded_langgraph(part: Option<&Value>) -> Option<LoadedLangGraph> {
    let part = part?;
    Some(LoadedLangGraph {
        one: loaded(part.get("one"))?,
        parallel: loaded(part.get("parallel"))?,
        bare: loaded(part.get("bare"))?,
        bare_eight: loaded(part.get("bare8"))?,
    })
}

fn timed(part: Option<&Value>, runs: usize) -> Option<Timed> {
    Some(Timed {
        wall: Figures::from_json(part, runs)?,
        cpu: Figures::from_json(part?.get("cpu"), runs)?,
    })
}

/// Runs the script, preparing its venv first: `runs` of each version, against the stand-in at
/// `url`. `Err` says why LangGraph was skipped.
pub(crate) fn run(root: &Path, url: &str, runs: usize) -> Result<LangGraph, String> {
    let python = venv::prepare(root)?;
    let output = Command::new(&python)
        .arg(root.join("bench/langgraph/fanout.py"))
        .arg(url)
        .env("RUNS", runs.to_string())
        .env("LOAD_CONCURRENCY", CONCURRENCY.to_string())
        .env("LOAD_ROUNDS", LOAD_ROUNDS.to_string())
        .env("LOAD_BATCHES", BATCHES.to_string())
        .output()
        .map_err(|error| format!("running the LangGraph script: {error}"))?;
    let parsed = venv::figures_of(&output)?;
    match (
        timed(parsed.get("one"), runs),
        timed(parsed.get("parallel"), runs),
        timed(parsed.get("bare"), runs),
        timed(parsed.get("bare8"), runs),
    ) {
        (Some(one), Some(parallel), Some(bare), Some(bare_eight)) => Ok(LangGraph {
            one,
            parallel,
            bare,
            bare_eight,
            loaded: loaded_langgraph(parsed.get("loaded")),
        }),
        _ => Err("the LangGraph script's figures are incomplete".to_owned()),
    }
}
