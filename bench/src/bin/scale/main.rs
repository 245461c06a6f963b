//! The scale-out benchmark (issue 15, "Speed"): the refund example (`examples/refund_approval`,
//! its scripted model) sealed by the release `tenxc` and served by release `tenx serve`
//! processes, driven over loopback HTTP by the serve benchmark's load generator
//! (`tenx_bench::load`) at 16 and 64 concurrent clients, in one run:
//!
//! - a plain turn (`hello`, a new thread each time) and a pause + resume cycle (the invoke that
//!   pauses at the refund's approval, then the resume bound to its `interrupt_id`, whose refund
//!   the payments stand-in counts) on 1 replica on SQLite, 1 replica on PostgreSQL, and 2
//!   replicas sharing one PostgreSQL schema, the clients spread half and half over the two;
//! - the cross-replica cycle on the 2 replicas: every pause on A, its resume on B, so the resume
//!   takes the thread's lock another replica held last; its resume is timed alone.
//!
//! Run: `cargo build --release -p tenx -p tenxc -p tenx-bench && ./target/release/scale`.
//! PostgreSQL from `TENX_BENCH_DATABASE_URL` or else `TENX_TEST_DATABASE_URL`, on two fresh
//! schemas (`tenx_bench_<pid>_one`, `_two`) that the store creates and this binary drops at the
//! end; without a URL the benchmark says why it skips. `TENX_BENCH_ROUNDS` (3) rounds of
//! `TENX_BENCH_SECONDS` (2) timed seconds per cell after a half-second warm-up, rounds
//! interleaved; each figure is the median over rounds.

mod report;
mod schema;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tenx_bench::child::{Server, build_artifact, root, setting};
use tenx_bench::load::{self, Figures, Until, Workload};
use tenx_bench::standin::StandIn;

use crate::schema::Schemas;

/// The concurrencies every scenario runs at.
pub(crate) const CLIENTS: [usize; 2] = [16, 64];
const WARM_UP: Duration = Duration::from_millis(500);
const PLAIN: &str = "hello";
const REFUND: &str = "Refund order 1042, 59.00";

/// The scenarios, in the order they are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scenario {
    PlainSqlite,
    PlainPostgres,
    PlainPostgres2,
    CycleSqlite,
    CyclePostgres,
    CyclePostgres2,
    Handover,
}

impl Scenario {
    pub(crate) const ALL: [Self; 7] = [
        Self::PlainSqlite,
        Self::PlainPostgres,
        Self::PlainPostgres2,
        Self::CycleSqlite,
        Self::CyclePostgres,
        Self::CyclePostgres2,
        Self::Handover,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::PlainSqlite => "plain turn, 1× SQLite",
            Self::PlainPostgres => "plain turn, 1× PostgreSQL",
            Self::PlainPostgres2 => "plain turn, 2× PostgreSQL",
            Self::CycleSqlite => "pause + resume, 1× SQLite",
            Self::CyclePostgres => "pause + resume, 1× PostgreSQL",
            Self::CyclePostgres2 => "pause + resume, 2× PostgreSQL",
            Self::Handover => "pause on A, resume on B (2× PG)",
        }
    }

    /// Whether its samples are approved pause + resume cycles (each one refund).
    pub(crate) fn cycles(self) -> bool {
        !matches!(self, Self::PlainSqlite | Self::PlainPostgres | Self::PlainPostgres2)
    }

    /// What one sample of this scenario does in `round` at `clients` clients.
    fn workload(self, round: u64, clients: usize) -> Workload {
        let prefix = format!("{self:?}-{round}-{clients}-").to_lowercase();
        match self {
            Self::PlainSqlite | Self::PlainPostgres | Self::PlainPostgres2 => {
                let body = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": PLAIN}]}]});
                Workload::Post {
                    path: "/v1/graph/invoke".to_owned(),
                    body: Bytes::from(body.to_string()),
                }
            }
            Self::CycleSqlite | Self::CyclePostgres | Self::CyclePostgres2 => Workload::Pause {
                message: REFUND.to_owned(),
                prefix,
                resume: true,
            },
            Self::Handover => Workload::Handover {
                message: REFUND.to_owned(),
                prefix,
            },
        }
    }
}

fn main() -> ExitCode {
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start a tokio runtime: {error}"))
        .and_then(|runtime| runtime.block_on(bench()));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(2)
        }
    }
}

async fn bench() -> Result<(), String> {
    let url = ["TENX_BENCH_DATABASE_URL", "TENX_TEST_DATABASE_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|url| !url.is_empty()));
    let Some(url) = url else {
        println!(
            "scale-out benchmark skipped: it needs PostgreSQL, and neither TENX_BENCH_DATABASE_URL nor \
             TENX_TEST_DATABASE_URL is set (e.g. postgres://postgres@127.0.0.1:5432/test)"
        );
        return Ok(());
    };
    let root = root();
    let tenx = root.join("target/release/tenx");
    if !tenx.is_file() {
        return Err(
            "build the release binaries first: cargo build --release -p tenx -p tenxc -p tenx-bench".to_owned(),
        );
    }
    let artifact = build_artifact(&root)?;
    let schemas = Schemas::create(&url).await?;
    let measured = measure(&tenx, &artifact, &schemas).await;
    let dropped = schemas.drop_all().await;
    let results = measured?;
    report::print(&results);
    match dropped {
        Ok(()) => println!("  schemas {} dropped", schemas.names()),
        Err(why) => println!("  dropping the schemas {} FAILED: {why}", schemas.names()),
    }
    Ok(())
}

/// Starts the four servers, runs every scenario, and stops them again.
async fn measure(tenx: &Path, artifact: &Path, schemas: &Schemas) -> Result<report::Results, String> {
    let rounds = setting("TENX_BENCH_ROUNDS", 3).max(1);
    let seconds = setting("TENX_BENCH_SECONDS", 2).max(1);
    let standin = StandIn::start()?;
    let dir = tempfile::tempdir().map_err(|error| format!("making a temporary directory: {error}"))?;
    let sub = |name: &str| -> Result<PathBuf, String> {
        let path = dir.path().join(name);
        std::fs::create_dir_all(&path).map_err(|error| format!("making {}: {error}", path.display()))?;
        Ok(path)
    };
    let start = |store: &str, name: &str| Server::tenx(tenx, artifact, store, &sub(name)?, standin.addr);
    let sqlite = start("sqlite", "sqlite")?;
    let one = start(&schemas.one, "postgres-one")?;
    // One after the other, so the second replica finds the schema migrated.
    let a = start(&schemas.two, "postgres-a")?;
    let b = start(&schemas.two, "postgres-b")?;
    eprintln!(
        "tenx serve on SQLite at {}, on PostgreSQL at {}, two replicas on one PostgreSQL schema at {} and {}",
        sqlite.addr, one.addr, a.addr, b.addr
    );
    let plan: Vec<(Scenario, Vec<SocketAddr>)> = Scenario::ALL
        .into_iter()
        .map(|scenario| {
            let addrs = match scenario {
                Scenario::PlainSqlite | Scenario::CycleSqlite => vec![sqlite.addr],
                Scenario::PlainPostgres | Scenario::CyclePostgres => vec![one.addr],
                Scenario::PlainPostgres2 | Scenario::CyclePostgres2 | Scenario::Handover => vec![a.addr, b.addr],
            };
            (scenario, addrs)
        })
        .collect();
    let until = Until::Elapsed {
        warm_up: WARM_UP,
        measure: Duration::from_secs(seconds),
    };
    let mut runs: BTreeMap<(Scenario, usize), Vec<Figures>> = BTreeMap::new();
    let mut cycles_done = 0;
    for round in 0..rounds {
        for (scenario, addrs) in &plan {
            for clients in CLIENTS {
                eprintln!(
                    "round {}/{rounds}: {} at {clients} clients …",
                    round + 1,
                    scenario.label()
                );
                let workload = scenario.workload(round, clients);
                let figures = load::run_on(addrs, &workload, clients, until).await?;
                if scenario.cycles() {
                    cycles_done += figures.done;
                }
                runs.entry((*scenario, clients)).or_default().push(figures);
            }
        }
    }
    let refunds = standin.refunds();
    drop((sqlite, one, a, b));
    Ok(report::Results {
        runs,
        rounds,
        seconds,
        cycles_done,
        refunds,
        server: schemas.server.clone(),
    })
}
