//! The fan-out benchmark (issue 14, "Speed"): eight branches, each an agent → tool → agent turn
//! with scripted models whose tool waits on I/O (an `http` call to a loopback stand-in that
//! answers after 20 ms), run in process:
//!
//! - one branch: `bench/programs/fanout_one.tenx`, planner → one worker → writer;
//! - sequential 8: `fanout_sequential.tenx`, the eight workers one after another;
//! - parallel 8: `fanout_parallel.tenx`, the eight workers as the branches of a `parallel` fork.
//!
//! Each is sealed with the compiler library, its engine built with the host's builder (the real
//! `http` tool runner, the in-memory store), and timed as one full run on a new thread, the three
//! interleaved. A program that does not seal is skipped with the compiler's first error. Beside
//! them, in the same run and against the same stand-in, `bench/langgraph/fanout.py`: the same
//! flow in LangGraph with `Send`, and its one-branch version.
//!
//! Run: `cargo build --release -p tenx-bench && ./target/release/fanout`.
//! `TENX_BENCH_FANOUT_RUNS=N` changes how many runs each program has in a round (30 by
//! default); `TENX_BENCH_FANOUT_ROUNDS=N` how many rounds the whole comparison has (3 by
//! default: each round measures tenx, then LangGraph, the order alternating, and prints its
//! table; the targets are judged on the median of the rounds' ratios, because one full run's
//! ratio moves with this shared machine); `TENX_BENCH_LANGGRAPH=skip` leaves LangGraph out. `fanout profile PROGRAM N` (`one`,
//! `sequential`, `parallel`, `bare` or `bare8`) runs one of them N times after the warm-up,
//! untimed, for `valgrind --tool=callgrind`: instruction counts do not move with the machine's
//! load, so a change is measured as the instructions of N runs less those of 0.
//!
//! Then the same programs under load (`load`): sixteen runs in flight at once, as a server holds
//! them, for CPU time per run with warm caches; LangGraph's script measures its side the same way.
//!
//! The process's allocator is mimalloc, as in the binaries tenx ships (`tenx` and `tenxc`, whose
//! `dev` runs the engine in process): the engine is measured as they run it.

mod langgraph;
mod load;
mod measure;
mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use tenx_bench::fanout::Program;
use tenx_bench::fetch::FetchStandIn;

/// How long the stand-in waits before it answers a fetch.
const DELAY: Duration = Duration::from_millis(20);
/// Runs of each program in a round by default.
const RUNS: usize = 30;
/// Rounds by default: the whole comparison, tenx's side and LangGraph's, this many times.
const ROUNDS: usize = 3;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Two workers, as `tenx serve` has on this machine's two cores.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build();
    let Ok(runtime) = runtime else {
        eprintln!("cannot start a tokio runtime");
        return ExitCode::from(2);
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("profile") => runtime.block_on(profile(args.get(1..).unwrap_or_default())),
        _ => runtime.block_on(bench()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(2)
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `fanout profile PROGRAM N`: see the module docs.
async fn profile(args: &[String]) -> Result<(), String> {
    let usage = "usage: fanout profile one|sequential|parallel|bare|bare8 RUNS";
    let (Some(what), Some(runs)) = (args.first(), args.get(1).and_then(|runs| runs.parse().ok())) else {
        return Err(usage.to_owned());
    };
    let program = match what.as_str() {
        "one" => Some(Program::One),
        "sequential" => Some(Program::Sequential),
        "parallel" => Some(Program::Parallel),
        "bare" | "bare8" => None,
        _ => return Err(usage.to_owned()),
    };
    let standin = FetchStandIn::start(DELAY)?;
    let program = match program {
        Some(program) => {
            let artifact = tenx_bench::fanout::seal(&root(), program)?;
            Some((program, tenx_bench::fanout::engine(artifact, &standin.url())?))
        }
        None => None,
    };
    measure::profile(program, &standin, what == "bare8", runs).await
}

async fn bench() -> Result<(), String> {
    let root = root();
    let runs = std::env::var("TENX_BENCH_FANOUT_RUNS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|runs| *runs > 0)
        .unwrap_or(RUNS);
    let standin = FetchStandIn::start(DELAY)?;
    let url = standin.url();
    let mut sealed = Vec::new();
    let mut skipped = Vec::new();
    for program in Program::ALL {
        match tenx_bench::fanout::seal(&root, program) {
            Ok(artifact) => sealed.push((program, artifact)),
            Err(why) => {
                eprintln!("skipping {}: {why}", program.label());
                skipped.push((program, why));
            }
        }
    }
    let rounds = std::env::var("TENX_BENCH_FANOUT_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|rounds| *rounds > 0)
        .unwrap_or(ROUNDS);
    let skip_langgraph = std::env::var("TENX_BENCH_LANGGRAPH").is_ok_and(|value| value == "skip");
    let mut ratios = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        // Fresh engines (and stores) each round: every round starts alike, and its threads are
        // new.
        let programs = sealed
            .iter()
            .map(|(program, artifact)| Ok((*program, tenx_bench::fanout::engine(artifact.clone(), &url)?)))
            .collect::<Result<Vec<_>, String>>()?;
        // LangGraph first in every other round, so that a machine growing slower or faster
        // during the bench does not favour one side.
        let langgraph_first = round % 2 == 0;
        let langgraph = || {
            if skip_langgraph {
                return Err("TENX_BENCH_LANGGRAPH=skip".to_owned());
            }
            eprintln!("round {round}/{rounds}, LangGraph: {runs} runs of each …");
            langgraph::run(&root, &url, runs)
        };
        let early = if langgraph_first { Some(langgraph()) } else { None };
        eprintln!("round {round}/{rounds}, tenx: {runs} runs of each program, interleaved …");
        let measured = measure::runs(&programs, &standin, runs).await?;
        eprintln!(
            "round {round}/{rounds}, tenx under load: {} runs in flight, {} batches of each …",
            load::CONCURRENCY,
            load::BATCHES
        );
        let loaded = load::rounds(&programs, &standin).await?;
        let langgraph = match early {
            Some(langgraph) => langgraph,
            None => langgraph(),
        };
        println!(
            "== round {round} of {rounds} ({} first)\n",
            if langgraph_first { "LangGraph" } else { "tenx" }
        );
        ratios.push(report::print(&report::Results {
            delay: DELAY,
            tenx: measured.programs,
            bare: measured.bare,
            bare_eight: measured.bare_eight,
            standin_cpu: measured.standin_cpu,
            loaded,
            skipped: skipped.clone(),
            langgraph,
        }));
        println!();
    }
    report::print_rounds(&ratios);
    Ok(())
}
