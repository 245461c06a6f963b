//! The runtime engine benchmark: the refund-shaped graph of `bench/programs/refund_desk.tenx`,
//! sealed by the release `tenxc`, run in process with its scripted model and a zero-latency fake
//! tool runner, so the figures are the engine's own cost, side by side with the same graph in
//! LangGraph (`bench/langgraph/refund.py`):
//!
//! - (a) one user → agent → tool → agent turn on a new thread, in-memory store;
//! - (a′) the same turn with the model an `openai` client against a local fake OpenAI server
//!   (loopback HTTP, streamed), and the adapter's overhead per model call, (a′ − a) / 2;
//! - (b) a run that pauses at the refund's approval and its resume with the answer, SQLite
//!   store (its defaults: WAL, `synchronous = NORMAL`);
//! - (c) the resident memory of 10,000 threads paused at the approval, in-memory store, and of
//!   10,000 and 30,000 on SQLite (bounded by its page cache, not by the number of threads).
//!
//! Run: `cargo build --release -p tenxc -p tenx-bench && ./target/release/engine`.
//! `TENX_BENCH_LANGGRAPH=skip` leaves LangGraph out; `TENX_BENCH_LANGGRAPH_PAUSED=N` changes how
//! many threads LangGraph pauses for (c) (10,000 by default; 0 skips its RSS).
//! `TENX_BENCH_ONLY=provider` runs (a) and (a′) alone (for profiling the adapter, e.g. under
//! `valgrind --tool=callgrind`); `TENX_BENCH_PROVIDER_TURNS=N` changes how many (a′) turns run.

mod langgraph;
mod measure;
mod paused;
mod provider;
mod report;
mod setup;

use std::path::Path;
use std::process::ExitCode;

const TURNS: usize = 2000;
const PROVIDER_TURNS: usize = 1000;
const RESUMES: usize = 500;
const PAUSED: usize = 10_000;
const PAUSED_MORE: usize = 30_000;
const LANGGRAPH_TURNS: usize = 300;
const LANGGRAPH_RESUMES: usize = 200;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        eprintln!("cannot start a tokio runtime");
        return ExitCode::from(2);
    };
    let outcome = match args.as_slice() {
        [_, flag, store, count, artifact, database] if flag == paused::CHILD => {
            runtime.block_on(paused::child(store, count, Path::new(artifact), Path::new(database)))
        }
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

async fn bench() -> Result<(), String> {
    let root = setup::root();
    let artifact_path = setup::build_artifact(&root)?;
    let artifact = setup::load_artifact(&artifact_path)?;
    let bench_dir = root.join("target/bench");
    let provider_turns = std::env::var("TENX_BENCH_PROVIDER_TURNS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(PROVIDER_TURNS);
    let turns = TURNS.min(provider_turns.max(1) * 2);
    eprintln!("(a) {turns} turns …");
    let turn = measure::turns(artifact.clone(), turns).await?;
    eprintln!("(a′) {provider_turns} turns against the local fake OpenAI server …");
    let provider_turn = provider::turns(&root, artifact.clone(), provider_turns).await?;
    if std::env::var("TENX_BENCH_ONLY").is_ok_and(|value| value == "provider") {
        report::print_provider(&turn, &provider_turn);
        return Ok(());
    }
    eprintln!("(b) {RESUMES} pauses and resumes on SQLite …");
    let pause_resume = measure::pause_and_resume(artifact, &bench_dir.join("engine-resume.sqlite"), RESUMES).await?;
    eprintln!("(c) paused threads, each figure in a fresh process …");
    let paused_db = bench_dir.join("engine-paused.sqlite");
    let memory = paused::measure("memory", PAUSED, &artifact_path, &paused_db)?;
    let sqlite = paused::measure("sqlite", PAUSED, &artifact_path, &paused_db)?;
    let sqlite_more = paused::measure("sqlite", PAUSED_MORE, &artifact_path, &paused_db)?;
    let langgraph = if std::env::var("TENX_BENCH_LANGGRAPH").is_ok_and(|value| value == "skip") {
        Err("TENX_BENCH_LANGGRAPH=skip".to_owned())
    } else {
        eprintln!("LangGraph …");
        let paused = std::env::var("TENX_BENCH_LANGGRAPH_PAUSED")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(PAUSED);
        let counts = langgraph::Counts {
            turns: LANGGRAPH_TURNS,
            resumes: LANGGRAPH_RESUMES,
            paused,
        };
        langgraph::run(&root, &counts)
    };
    report::print(&report::Results {
        turn,
        provider_turn,
        pause_resume,
        memory,
        sqlite,
        sqlite_more,
        langgraph,
    });
    Ok(())
}
