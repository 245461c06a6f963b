//! The table (throughput, p50 and p99 per scenario and concurrency, and the resume's own p50
//! and p99 for the cycles; medians over rounds), the scale-out ratios (2× PostgreSQL against
//! 1× SQLite and 1× PostgreSQL, 1× PostgreSQL against 1× SQLite), the cross-replica resume's
//! p99, and the exactly-once check of the refunds.

use std::collections::BTreeMap;

use tenx_bench::load::Figures;

use crate::{CLIENTS, Scenario};

/// Everything one run measured.
pub(crate) struct Results {
    pub(crate) runs: BTreeMap<(Scenario, usize), Vec<Figures>>,
    pub(crate) rounds: u64,
    pub(crate) seconds: u64,
    /// Approved cycles done, warm-ups included.
    pub(crate) cycles_done: u64,
    /// Refunds the payments stand-in counted.
    pub(crate) refunds: u64,
    /// PostgreSQL's version.
    pub(crate) server: String,
}

/// The median over rounds of each figure of one cell.
#[derive(Debug, Clone, Copy)]
struct Cell {
    throughput: f64,
    p50_ms: f64,
    p99_ms: f64,
    resume_p50_ms: f64,
    resume_p99_ms: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

impl Results {
    fn cell(&self, scenario: Scenario, clients: usize) -> Option<Cell> {
        let runs = self.runs.get(&(scenario, clients))?;
        let of = |figure: fn(&Figures) -> f64| median(runs.iter().map(figure).collect());
        Some(Cell {
            throughput: of(|run| run.throughput),
            p50_ms: of(|run| run.p50_us / 1000.0),
            p99_ms: of(|run| run.p99_us / 1000.0),
            resume_p50_ms: of(|run| run.resume_p50_us / 1000.0),
            resume_p99_ms: of(|run| run.resume_p99_us / 1000.0),
        })
    }

    fn throughput(&self, scenario: Scenario, clients: usize) -> Option<f64> {
        self.cell(scenario, clients).map(|cell| cell.throughput)
    }
}

pub(crate) fn print(results: &Results) {
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "tenx scale-out benchmark: release `tenx serve` of examples/refund_approval (scripted model) over loopback HTTP, \
         PostgreSQL {} on this machine",
        results.server
    );
    println!(
        "the generator (this process, 2 tokio workers, one keep-alive connection per client; two per client for the \
         handover), the four servers and PostgreSQL share this machine's {cores} cores, and the machine is shared and \
         noisy: each figure is the median of {} rounds of {} s (after a 0.5 s warm-up), rounds interleaved",
        results.rounds, results.seconds
    );
    println!(
        "2× PostgreSQL: two replicas on one schema, the clients half on each; the handover pauses on A and resumes \
         on B"
    );
    println!();
    println!(
        "{:<34} {:>7} {:>11} {:>9} {:>9} {:>13} {:>13}",
        "scenario", "clients", "per second", "p50 ms", "p99 ms", "resume p50", "resume p99"
    );
    for scenario in Scenario::ALL {
        for clients in CLIENTS {
            let Some(cell) = results.cell(scenario, clients) else {
                continue;
            };
            let (resume_p50, resume_p99) = if scenario.cycles() {
                (
                    format!("{:.2}", cell.resume_p50_ms),
                    format!("{:.2}", cell.resume_p99_ms),
                )
            } else {
                ("-".to_owned(), "-".to_owned())
            };
            println!(
                "{:<34} {clients:>7} {:>11.0} {:>9.2} {:>9.2} {resume_p50:>13} {resume_p99:>13}",
                scenario.label(),
                cell.throughput,
                cell.p50_ms,
                cell.p99_ms,
            );
        }
    }
    println!(
        "(a pause + resume cycle is two requests: the invoke that pauses and the resume; its figures are per cycle, \
         the resume columns the resume alone, in ms)"
    );
    println!();
    println!("ratios (throughput)");
    let kinds = [
        (
            "plain turn",
            Scenario::PlainPostgres2,
            Scenario::PlainPostgres,
            Scenario::PlainSqlite,
        ),
        (
            "pause + resume",
            Scenario::CyclePostgres2,
            Scenario::CyclePostgres,
            Scenario::CycleSqlite,
        ),
    ];
    for (kind, two, one, sqlite) in kinds {
        for clients in CLIENTS {
            let ratio = |over, under| Some(results.throughput(over, clients)? / results.throughput(under, clients)?);
            println!(
                "  {kind:<14} {clients:>2} clients: 2×PG / 1×SQLite {}, 2×PG / 1×PG {}, 1×PG / 1×SQLite {}",
                times(ratio(two, sqlite)),
                times(ratio(two, one)),
                times(ratio(one, sqlite))
            );
        }
    }
    println!();
    println!("a resume that takes the thread's lock from another replica (pause on A, resume on B)");
    for clients in CLIENTS {
        let handover = results.cell(Scenario::Handover, clients);
        let same = results.cell(Scenario::CyclePostgres2, clients);
        println!(
            "  {clients:>2} clients: resume p99 {} ms (p50 {} ms); on the replica that paused: p99 {} ms (p50 {} ms)",
            millis(handover.map(|cell| cell.resume_p99_ms)),
            millis(handover.map(|cell| cell.resume_p50_ms)),
            millis(same.map(|cell| cell.resume_p99_ms)),
            millis(same.map(|cell| cell.resume_p50_ms)),
        );
    }
    println!(
        "  refunds counted by the payments stand-in: {} for {} approved cycles (exactly once): {}",
        results.refunds,
        results.cycles_done,
        if results.refunds == results.cycles_done {
            "ok"
        } else {
            "MISMATCH"
        }
    );
}

fn times(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_owned(), |ratio| format!("{ratio:.2}×"))
}

fn millis(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| format!("{value:.2}"))
}
