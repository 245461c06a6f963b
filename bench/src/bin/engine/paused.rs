//! (c): the resident memory of a process that holds many threads paused at the refund's
//! approval. Each figure comes from a fresh child process (`engine paused STORE COUNT ARTIFACT
//! [DATABASE]`), so nothing the other measurements allocated is counted: the child loads the
//! artifact, pauses `COUNT` threads and prints its RSS before and after.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use tenx_engine::MemoryStore;
use tenx_engine::ports::Store;
use tenx_store_sqlite::SqliteStore;

use crate::measure::pause;
use crate::setup::{engine, load_artifact};

/// The argument that runs a child.
pub(crate) const CHILD: &str = "paused";

/// What a child measured, in bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resident {
    pub(crate) threads: usize,
    pub(crate) before: u64,
    pub(crate) after: u64,
}

impl Resident {
    pub(crate) fn total_mb(&self) -> f64 {
        megabytes(self.after)
    }

    pub(crate) fn grown_mb(&self) -> f64 {
        megabytes(self.after.saturating_sub(self.before))
    }
}

#[expect(clippy::cast_precision_loss, reason = "a figure to print")]
fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

/// Runs a child that pauses `count` threads on `store` (`memory` or `sqlite`, the latter in a
/// new file at `database`) and reads what it measured.
pub(crate) fn measure(store: &str, count: usize, artifact: &Path, database: &Path) -> Result<Resident, String> {
    let exe = std::env::current_exe().map_err(|error| format!("finding the bench binary: {error}"))?;
    let output = Command::new(exe)
        .arg(CHILD)
        .arg(store)
        .arg(count.to_string())
        .arg(artifact)
        .arg(database)
        .output()
        .map_err(|error| format!("starting the {store} child: {error}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let figures: Vec<u64> = text.split_whitespace().filter_map(|word| word.parse().ok()).collect();
    match (output.status.success(), figures.as_slice()) {
        (true, [before, after]) => Ok(Resident {
            threads: count,
            before: *before,
            after: *after,
        }),
        _ => Err(format!(
            "the {store} child failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}

/// The child: prints `RSS-before RSS-after` in bytes.
pub(crate) async fn child(store: &str, count: &str, artifact: &Path, database: &Path) -> Result<(), String> {
    let count: usize = count.parse().map_err(|_| format!("not a count: {count}"))?;
    let artifact = load_artifact(artifact)?;
    let store: Arc<dyn Store> = match store {
        "memory" => Arc::new(MemoryStore::new()),
        "sqlite" => {
            for suffix in ["", "-wal", "-shm"] {
                let mut path = database.as_os_str().to_owned();
                path.push(suffix);
                let _absent = std::fs::remove_file(&path);
            }
            Arc::new(
                SqliteStore::open(database)
                    .await
                    .map_err(|error| format!("opening {}: {error}", database.display()))?,
            )
        }
        other => return Err(format!("no store named {other}")),
    };
    let engine = engine(artifact, store)?;
    // A few pauses first, so one-time allocations (caches, statements) count as the baseline.
    for index in 0..20 {
        pause(&engine, &format!("warm{index}")).await?;
    }
    let before = rss_bytes();
    for index in 0..count {
        pause(&engine, &format!("p{index}")).await?;
    }
    let after = rss_bytes();
    println!("{before} {after}");
    Ok(())
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
