//! The timed runs: (a) a user → agent → tool → agent turn on the in-memory store, and (b) a run
//! that pauses at the refund's approval plus its resume with the answer, on SQLite. Each sample
//! is one new thread; the figures are the median and the 90th percentile.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tenx_artifact::LoadedArtifact;
use tenx_engine::ports::NullEvents;
use tenx_engine::wire::ExecutionStatus;
use tenx_engine::{Engine, MemoryStore, RunOutput};
use tenx_store_sqlite::SqliteStore;

use crate::setup::{approve, ask, engine};

pub(crate) use tenx_bench::figures::Figures;

/// (a): `count` lookup turns, each on a new thread, after a warm-up (regex and schema caches).
pub(crate) async fn turns(artifact: LoadedArtifact, count: usize) -> Result<Figures, String> {
    let engine = engine(artifact, Arc::new(MemoryStore::new()))?;
    time_turns(&engine, count).await
}

/// `count` lookup turns on `engine`, each on a new thread, after a warm-up.
pub(crate) async fn time_turns(engine: &Engine, count: usize) -> Result<Figures, String> {
    for index in 0..50 {
        turn(engine, &format!("warm{index}")).await?;
    }
    let mut samples = Vec::with_capacity(count);
    for index in 0..count {
        let started = Instant::now();
        turn(engine, &format!("t{index}")).await?;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(Figures::of(samples))
}

async fn turn(engine: &Engine, thread: &str) -> Result<(), String> {
    let output = engine
        .run(ask(thread, "look up 1042"), &mut NullEvents)
        .await
        .map_err(|error| format!("turn on {thread} failed: {error:?}"))?;
    expect(&output, ExecutionStatus::Completed, thread)
}

/// (b): `count` refunds on SQLite (a new file at `database`), each on a new thread: the run
/// that pauses at the approval and the resume that approves it, timed together.
pub(crate) async fn pause_and_resume(
    artifact: LoadedArtifact,
    database: &Path,
    count: usize,
) -> Result<Figures, String> {
    for suffix in ["", "-wal", "-shm"] {
        let mut path = database.as_os_str().to_owned();
        path.push(suffix);
        let _absent = std::fs::remove_file(&path);
    }
    let store = SqliteStore::open(database)
        .await
        .map_err(|error| format!("opening {}: {error}", database.display()))?;
    let engine = engine(artifact, Arc::new(store))?;
    for index in 0..20 {
        refund(&engine, &format!("warm{index}")).await?;
    }
    let mut samples = Vec::with_capacity(count);
    for index in 0..count {
        let started = Instant::now();
        refund(&engine, &format!("r{index}")).await?;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(Figures::of(samples))
}

async fn refund(engine: &Engine, thread: &str) -> Result<(), String> {
    pause(engine, thread).await?;
    let resumed = engine
        .run(approve(thread), &mut NullEvents)
        .await
        .map_err(|error| format!("resume of {thread} failed: {error:?}"))?;
    expect(&resumed, ExecutionStatus::Completed, thread)
}

/// Runs `refund 1042` on a new thread, which pauses at the refund's approval.
pub(crate) async fn pause(engine: &Engine, thread: &str) -> Result<(), String> {
    let paused = engine
        .run(ask(thread, "refund 1042"), &mut NullEvents)
        .await
        .map_err(|error| format!("refund on {thread} failed: {error:?}"))?;
    expect(&paused, ExecutionStatus::InterruptedBefore, thread)
}

fn expect(output: &RunOutput, status: ExecutionStatus, thread: &str) -> Result<(), String> {
    if output.thread.execution.status == status {
        Ok(())
    } else {
        Err(format!(
            "thread {thread} ended {:?}, not {status:?}",
            output.thread.execution.status
        ))
    }
}
