//! The served benchmark (issue 13, "Speed"): the refund example (`examples/refund_approval`,
//! its scripted model) sealed by the release `tenxc` and served by the release `tenx serve` as
//! a child process, driven over loopback HTTP by this binary's load generator
//! (`tenx_bench::load`) at 1, 16 and 64 concurrent clients:
//!
//! - a plain turn (`hello`: the model's fallback answer, a new thread each time), in-memory
//!   store and SQLite;
//! - a pause + resume cycle on SQLite: the invoke that pauses at the refund's approval (full
//!   granularity, for the interrupt id) plus the resume bound to that `interrupt_id`, whose
//!   refund goes to a local stand-in of the payments service that counts refunds;
//! - baselines in the same run: a bare axum JSON handler in a process of its own (the ceiling
//!   on this machine), and the reference server's plain turn (`hello`) and tool turn (`tool`)
//!   when it can be started;
//! - 10,000 threads paused at the approval on SQLite: the serve process's RSS, and a resume of a
//!   random one.
//!
//! Run: `cargo build --release -p tenx -p tenxc -p tenx-bench && ./target/release/serve`.
//! `TENX_BENCH_ROUNDS` (3) rounds of `TENX_BENCH_SECONDS` (2) timed seconds per cell after a
//! half-second warm-up, rounds interleaved so a noisy moment hits every cell alike; each figure
//! is the median over rounds. `TENX_BENCH_PAUSED` (10000) threads for the memory figure;
//! `TENX_BENCH_REFERENCE=skip` leaves the reference server out.

mod paused;
mod reference;
mod report;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tenx_bench::load::{self, Figures, Until, Workload};

use tenx_bench::child::{self, Server, build_artifact, root, setting};
use tenx_bench::standin;

/// The concurrencies every scenario runs at.
pub(crate) const CLIENTS: [usize; 3] = [1, 16, 64];
const WARM_UP: Duration = Duration::from_millis(500);
const PLAIN: &str = "hello";
const REFUND: &str = "Refund order 1042, 59.00";
const TOOL: &str = "tool";

/// The scenarios, in the order they are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scenario {
    Bare,
    PlainMemory,
    PlainSqlite,
    CycleSqlite,
    ReferencePlain,
    ReferenceTool,
}

impl Scenario {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Bare => "bare axum JSON handler",
            Self::PlainMemory => "tenx plain turn, memory",
            Self::PlainSqlite => "tenx plain turn, SQLite",
            Self::CycleSqlite => "tenx pause + resume, SQLite",
            Self::ReferencePlain => "reference plain turn",
            Self::ReferenceTool => "reference tool turn",
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let outcome = match args.as_slice() {
        [_, flag] if flag == child::BARE => child::bare_child(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|error| format!("cannot start a tokio runtime: {error}"))
            .and_then(|runtime| runtime.block_on(bench())),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(2)
        }
    }
}

async fn bench() -> Result<(), String> {
    let root = root();
    let tenx = root.join("target/release/tenx");
    if !tenx.is_file() {
        return Err(
            "build the release binaries first: cargo build --release -p tenx -p tenxc -p tenx-bench".to_owned(),
        );
    }
    let artifact = build_artifact(&root)?;
    let rounds = setting("TENX_BENCH_ROUNDS", 3).max(1);
    let seconds = setting("TENX_BENCH_SECONDS", 2).max(1);
    let paused_count = setting("TENX_BENCH_PAUSED", 10_000).max(1);
    let standin = standin::StandIn::start()?;
    let dir = tempfile::tempdir().map_err(|error| format!("making a temporary directory: {error}"))?;
    let sub = |name: &str| -> Result<PathBuf, String> {
        let path = dir.path().join(name);
        std::fs::create_dir_all(&path).map_err(|error| format!("making {}: {error}", path.display()))?;
        Ok(path)
    };
    let bare = Server::bare()?;
    let memory = Server::tenx(&tenx, &artifact, "memory", &sub("memory")?, standin.addr)?;
    let sqlite = Server::tenx(&tenx, &artifact, "sqlite", &sub("sqlite")?, standin.addr)?;
    eprintln!(
        "bare handler on {}, tenx serve (memory) on {}, tenx serve (SQLite) on {}",
        bare.addr, memory.addr, sqlite.addr
    );
    let reference = reference::Reference::start();
    match &reference {
        Ok(reference) => eprintln!("reference server on {}", reference.addr),
        Err(why) => eprintln!("reference server skipped: {why}"),
    }
    let mut plan = vec![
        (Scenario::Bare, bare.addr, plain(PLAIN)),
        (Scenario::PlainMemory, memory.addr, plain(PLAIN)),
        (Scenario::PlainSqlite, sqlite.addr, plain(PLAIN)),
    ];
    if let Ok(reference) = &reference {
        plan.push((Scenario::ReferencePlain, reference.addr, plain(PLAIN)));
        plan.push((Scenario::ReferenceTool, reference.addr, plain(TOOL)));
    }
    let until = Until::Elapsed {
        warm_up: WARM_UP,
        measure: Duration::from_secs(seconds),
    };
    let mut runs: BTreeMap<(Scenario, usize), Vec<Figures>> = BTreeMap::new();
    let mut cycles_done = 0;
    for round in 0..rounds {
        for (scenario, addr, workload) in &plan {
            for clients in CLIENTS {
                eprintln!(
                    "round {}/{rounds}: {} at {clients} clients …",
                    round + 1,
                    scenario.label()
                );
                let figures = load::run(*addr, workload, clients, until).await?;
                runs.entry((*scenario, clients)).or_default().push(figures);
            }
        }
        for clients in CLIENTS {
            eprintln!("round {}/{rounds}: pause + resume at {clients} clients …", round + 1);
            let cycle = Workload::Pause {
                message: REFUND.to_owned(),
                prefix: format!("cycle-{round}-{clients}-"),
                resume: true,
            };
            let figures = load::run(sqlite.addr, &cycle, clients, until).await?;
            cycles_done += figures.done;
            runs.entry((Scenario::CycleSqlite, clients)).or_default().push(figures);
        }
    }
    let refunds_after_cycles = standin.refunds();
    drop((bare, memory, sqlite));
    let reference_skipped = reference.as_ref().err().cloned();
    drop(reference);
    eprintln!("{paused_count} threads paused on SQLite …");
    let paused = paused::measure(&tenx, &artifact, &sub("paused")?, &standin, REFUND, paused_count).await?;
    report::print(&report::Results {
        runs,
        rounds,
        seconds,
        reference_skipped,
        cycles_done,
        refunds_after_cycles,
        paused,
    });
    Ok(())
}

/// An invoke of one user message on a new thread.
fn plain(text: &str) -> Workload {
    let body = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]});
    Workload::Post {
        path: "/v1/graph/invoke".to_owned(),
        body: Bytes::from(body.to_string()),
    }
}
