//! The map-width benchmark (issue 14): how the cost of a `map` grows with its number of items.
//! `bench/programs/map_width.tenx` maps an agent → tool → agent turn over the run's `items`; it
//! runs in process with scripted models and instant fake tools, so the figures are the engine's
//! own, on the in-memory store and on SQLite (a file in a temporary folder, its defaults), at
//! 32, 64, 128 and 256 items (the most one map runs). Each cell is the median of
//! `TENX_BENCH_MAP_RUNS` runs (5 by default), each on a new thread, after one unmeasured run.
//!
//! It prints each median, the time per item, and the time per item against 32 items'. A map whose
//! cost grows linearly with its items shows about 1× at every width; before the fork's lanes
//! committed their steps in groups, every step of every branch wrote the whole thread (every
//! branch's messages included) and the per-item time grew with the width (see
//! `bench/README.md`).
//!
//! Run: `cargo build --release -p tenx-bench && ./target/release/mapwidth`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tenx_artifact::LoadedArtifact;
use tenx_engine::ports::{ModelClient, NullEvents, Ports, Store};
use tenx_engine::testing::{FakeTools, ManualClock, SequentialIds};
use tenx_engine::wire::{ExecutionStatus, Message, Role};
use tenx_engine::{Engine, EngineOptions, MemoryStore, RunRequest, ScriptedModel};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The widths measured.
const WIDTHS: [usize; 4] = [32, 64, 128, 256];
/// Runs of each cell by default.
const RUNS: usize = 5;
/// The program, relative to the workspace root.
const PROGRAM: &str = "bench/programs/map_width.tenx";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mapwidth: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .ok_or("no workspace root")?;
    let runs = std::env::var("TENX_BENCH_MAP_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(RUNS)
        .max(1);
    let artifact = seal(&root)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    println!("tenx map-width benchmark: {PROGRAM}, scripted models, instant fake tools, in process");
    println!("medians of {runs} runs a cell (one unmeasured run first); per item against 32 items' per item");
    println!();
    println!(
        "{:<8} {:>6} {:>12} {:>14} {:>10}",
        "store", "items", "median ms", "µs per item", "vs 32"
    );
    for store in ["memory", "sqlite"] {
        let mut base: Option<f64> = None;
        for width in WIDTHS {
            let mut times = Vec::with_capacity(runs);
            for round in 0..=runs {
                let elapsed = runtime.block_on(one_run(&artifact, store, width))?;
                if round > 0 {
                    times.push(elapsed);
                }
            }
            times.sort();
            let median = times.get(times.len() / 2).copied().unwrap_or_default();
            let per_item = median.as_secs_f64() * 1e6 / width as f64;
            let against = per_item / *base.get_or_insert(per_item);
            println!(
                "{store:<8} {width:>6} {:>12.2} {per_item:>14.1} {against:>9.2}×",
                median.as_secs_f64() * 1e3
            );
        }
    }
    Ok(())
}

/// Seals the program with the compiler library and loads it as the runtime does.
fn seal(root: &Path) -> Result<LoadedArtifact, String> {
    let text = std::fs::read_to_string(root.join(PROGRAM)).map_err(|error| format!("reading {PROGRAM}: {error}"))?;
    let mut sources = tenx_diagnostics::SourceSet::new();
    let file = sources.add(PROGRAM, text);
    let compiled = tenx_compiler::compile(&mut sources, file, &tenx_compiler::LintLevels::default());
    let artifact = compiled.artifact.ok_or_else(|| format!("{PROGRAM} does not compile"))?;
    let sealed = tenx_artifact::seal(artifact).map_err(|error| format!("{PROGRAM} does not seal: {error}"))?;
    tenx_artifact::load(&sealed.to_bytes(), &tenx_artifact::TrustPolicy::signature_optional())
        .map_err(|error| format!("{PROGRAM} does not load: {error}"))
}

/// One run of a map over `width` items on a new engine over a new `store`; its wall time.
async fn one_run(artifact: &LoadedArtifact, store: &str, width: usize) -> Result<Duration, String> {
    let folder = tempfile::tempdir().map_err(|error| error.to_string())?;
    let store: Arc<dyn Store> = match store {
        "sqlite" => Arc::new(
            tenx_store_sqlite::SqliteStore::open(folder.path().join("threads.sqlite"))
                .await
                .map_err(|error| error.to_string())?,
        ),
        _ => Arc::new(MemoryStore::new()),
    };
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let ports = Ports {
        store,
        models,
        tools: Arc::new(FakeTools::new().returns("fetch", json!("ok"))),
        clock: Arc::new(ManualClock::new(1_796_083_200_000)),
        ids: Arc::new(SequentialIds::new()),
    };
    let engine = Engine::new(artifact.clone(), ports, EngineOptions::default()).map_err(|error| error.to_string())?;
    let items: Vec<Value> = (0..width).map(|item| json!(format!("item {item}"))).collect();
    let request = RunRequest {
        thread_id: Some("map".to_owned()),
        messages: vec![Message::text(String::new(), Role::User, "Go.", 0.0)],
        initial_state: [("items".to_owned(), Value::Array(items))].into_iter().collect(),
        ..RunRequest::default()
    };
    let started = Instant::now();
    let done = engine
        .run(request, &mut NullEvents)
        .await
        .map_err(|error| error.to_string())?;
    let elapsed = started.elapsed();
    let merged = done
        .thread
        .state
        .get("done")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if done.thread.execution.status != ExecutionStatus::Completed || merged != width {
        return Err(format!(
            "a map of {width} ended {:?} with {merged} answers merged",
            done.thread.execution.status
        ));
    }
    Ok(elapsed)
}
