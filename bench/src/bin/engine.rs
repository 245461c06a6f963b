//! The runtime engine benchmark: the refund-shaped graph of `bench/programs/refund_desk.tenx`,
//! sealed by the release `tenxc`, run in process with its scripted model and a zero-latency fake
//! tool runner, so the figures are the engine's own cost:
//!
//! - (a) one user → agent → tool → agent turn on a new thread, in-memory store (median of runs);
//! - (c) the resident memory of 10,000 threads paused at the refund's approval, in-memory store.
//!
//! Run: `cargo build --release -p tenxc && cargo run --release -p tenx-bench --bin engine`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tenx_artifact::{LoadedArtifact, TrustPolicy, load};
use tenx_engine::ports::{ModelClient, NullEvents, Ports};
use tenx_engine::testing::{FakeTools, ManualClock, SequentialIds};
use tenx_engine::wire::{Message, Role};
use tenx_engine::{Engine, EngineOptions, MemoryStore, RunRequest, ScriptedModel};

const TURNS: usize = 2000;
const PAUSED: usize = 10_000;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let tenxc = root.join("target/release/tenxc");
    if !tenxc.is_file() {
        eprintln!("build the release compiler first: cargo build --release -p tenxc");
        return ExitCode::from(2);
    }
    let source = root.join("bench/programs/refund_desk.tenx");
    let out = root.join("target/bench/refund_desk.tenxg");
    let _ = std::fs::create_dir_all(root.join("target/bench"));
    let built = Command::new(&tenxc)
        .arg("build")
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status();
    if !built.is_ok_and(|status| status.success()) {
        eprintln!("`tenxc build {}` failed", source.display());
        return ExitCode::from(2);
    }
    let Ok(bytes) = std::fs::read(&out) else {
        eprintln!("cannot read {}", out.display());
        return ExitCode::from(2);
    };
    let Ok(artifact) = load(&bytes, &TrustPolicy::signature_optional()) else {
        eprintln!("the benchmark artifact does not load");
        return ExitCode::from(2);
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_time().build() else {
        eprintln!("cannot start a tokio runtime");
        return ExitCode::from(2);
    };
    runtime.block_on(run(artifact))
}

fn engine(artifact: LoadedArtifact) -> Option<Engine> {
    let mut models: BTreeMap<String, Arc<dyn ModelClient>> = BTreeMap::new();
    for name in artifact.artifact.models.keys() {
        models.insert(name.clone(), Arc::new(ScriptedModel::new()));
    }
    let tools = FakeTools::new()
        .returns("lookup_order", json!({"order_id": "1042", "status": "shipped"}))
        .returns("issue_refund", json!("refunded"));
    let ports = Ports {
        store: Arc::new(MemoryStore::new()),
        models,
        tools: Arc::new(tools),
        clock: Arc::new(ManualClock::new(1_796_083_200_000)),
        ids: Arc::new(SequentialIds::new()),
    };
    Engine::new(artifact, ports, EngineOptions::default()).ok()
}

fn request(thread: &str, text: &str) -> RunRequest {
    RunRequest {
        thread_id: Some(thread.to_owned()),
        messages: vec![Message::text(String::new(), Role::User, text, 0.0)],
        ..RunRequest::default()
    }
}

async fn run(artifact: LoadedArtifact) -> ExitCode {
    let Some(turns) = engine(artifact.clone()) else {
        eprintln!("the engine refused the artifact");
        return ExitCode::from(2);
    };
    // Warm up (regex and schema caches), then time each turn on its own thread.
    for index in 0..50 {
        let _ = turns
            .run(request(&format!("warm{index}"), "look up 1042"), &mut NullEvents)
            .await;
    }
    let mut samples = Vec::with_capacity(TURNS);
    for index in 0..TURNS {
        let started = Instant::now();
        let outcome = turns
            .run(request(&format!("t{index}"), "look up 1042"), &mut NullEvents)
            .await;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        if outcome.is_err() {
            eprintln!("turn {index} failed: {outcome:?}");
            return ExitCode::from(1);
        }
    }
    samples.sort_by(f64::total_cmp);
    let median = samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN);
    let p90 = samples.get(samples.len() * 9 / 10).copied().unwrap_or(f64::NAN);
    println!("tenx engine benchmark (release, in process, scripted model, fake tools)\n");
    println!(
        "(a) user → agent → tool → agent turn, in-memory store: median {median:>8.1} µs   p90 {p90:>8.1} µs   ({TURNS} turns)"
    );
    println!("    target < 50 µs: {}", if median < 50.0 { "met" } else { "MISSED" });

    let Some(paused) = engine(artifact) else {
        return ExitCode::from(2);
    };
    let before = rss_bytes();
    for index in 0..PAUSED {
        if let Err(error) = paused
            .run(request(&format!("p{index}"), "refund 1042"), &mut NullEvents)
            .await
        {
            eprintln!("pause {index} failed: {error:?}");
            return ExitCode::from(1);
        }
    }
    let after = rss_bytes();
    #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
    let grown = after.saturating_sub(before) as f64 / 1_048_576.0;
    #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
    let total = after as f64 / 1_048_576.0;
    println!(
        "(c) {PAUSED} threads paused at an approval, in-memory store: RSS grew {grown:>6.1} MB (process {total:.1} MB)"
    );
    println!("    target < 100 MB: {}", if total < 100.0 { "met" } else { "MISSED" });
    println!("(b) pause + resume on SQLite: not measured here yet (the SQLite store lands separately)");
    println!("LangGraph side by side: not run (see the closing note)");
    ExitCode::SUCCESS
}

/// The process's resident set, from `/proc/self/statm` (0 where it cannot be read).
fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|text| {
            text.split_whitespace()
                .nth(1)
                .and_then(|field| field.parse::<u64>().ok())
        })
        .unwrap_or(0);
    pages.saturating_mul(4096)
}
