//! The table (throughput, p50 and p99 per scenario and concurrency, medians over rounds) and
//! the ratios against issue 13's targets, each PASS or MISS.

use std::collections::BTreeMap;

use tenx_bench::load::Figures;

use crate::paused::Paused;
use crate::{CLIENTS, Scenario};

/// Targets of issue 13's "Speed" section.
const PLAIN_SHARE_OF_BARE: f64 = 0.30;
const PLAIN_OVER_REFERENCE: f64 = 50.0;
const CYCLE_P50_MS: f64 = 5.0;
const PAUSED_MB: f64 = 200.0;
/// The concurrency the throughput ratios are judged at (the figures are at 16).
const JUDGED_AT: usize = 16;

/// Everything one run measured.
pub(crate) struct Results {
    pub(crate) runs: BTreeMap<(Scenario, usize), Vec<Figures>>,
    pub(crate) rounds: u64,
    pub(crate) seconds: u64,
    pub(crate) reference_skipped: Option<String>,
    pub(crate) cycles_done: u64,
    pub(crate) refunds_after_cycles: u64,
    pub(crate) paused: Paused,
}

/// The median over rounds of each figure of one cell.
#[derive(Debug, Clone, Copy)]
struct Cell {
    throughput: f64,
    p50_ms: f64,
    p99_ms: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

impl Results {
    fn cell(&self, scenario: Scenario, clients: usize) -> Option<Cell> {
        let runs = self.runs.get(&(scenario, clients))?;
        Some(Cell {
            throughput: median(runs.iter().map(|run| run.throughput).collect()),
            p50_ms: median(runs.iter().map(|run| run.p50_us / 1000.0).collect()),
            p99_ms: median(runs.iter().map(|run| run.p99_us / 1000.0).collect()),
        })
    }
}

pub(crate) fn print(results: &Results) {
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "tenx serve benchmark: release `tenx serve` of examples/refund_approval (scripted model) over loopback HTTP"
    );
    println!(
        "the generator (this process, 2 tokio workers, one keep-alive connection per client) and every server share this \
         machine's {cores} cores, and the machine is shared and noisy: each figure is the median of {} rounds of {} s \
         (after a 0.5 s warm-up), rounds interleaved",
        results.rounds, results.seconds
    );
    println!("the bare handler is a process of its own (axum, multi-threaded runtime), as is each `tenx serve`");
    match &results.reference_skipped {
        None => println!("the reference server: 10xgraph-api 0.9.0 (uvicorn, one process), its no-LLM test graph"),
        Some(why) => println!("the reference server was skipped: {why}"),
    }
    println!();
    println!(
        "{:<30} {:>7} {:>12} {:>10} {:>10}",
        "scenario", "clients", "per second", "p50 ms", "p99 ms"
    );
    let scenarios = [
        Scenario::Bare,
        Scenario::PlainMemory,
        Scenario::PlainSqlite,
        Scenario::CycleSqlite,
        Scenario::ReferencePlain,
        Scenario::ReferenceTool,
    ];
    for scenario in scenarios {
        for clients in CLIENTS {
            let Some(cell) = results.cell(scenario, clients) else {
                continue;
            };
            println!(
                "{:<30} {clients:>7} {:>12.0} {:>10.2} {:>10.2}",
                scenario.label(),
                cell.throughput,
                cell.p50_ms,
                cell.p99_ms
            );
        }
    }
    println!(
        "(a pause + resume cycle is two requests: the invoke that pauses and the resume; its figures are per cycle)"
    );
    println!();
    println!("ratios and targets");
    let throughput = |scenario, clients| results.cell(scenario, clients).map(|cell| cell.throughput);
    for clients in CLIENTS {
        let bare = throughput(Scenario::Bare, clients);
        let share = |scenario| Some(throughput(scenario, clients)? / bare?);
        let (memory, sqlite) = (share(Scenario::PlainMemory), share(Scenario::PlainSqlite));
        let verdict = if clients == JUDGED_AT {
            format!(
                "   target ≥ {:.0}% (memory): {}",
                PLAIN_SHARE_OF_BARE * 100.0,
                verdict(memory.is_some_and(|share| share >= PLAIN_SHARE_OF_BARE))
            )
        } else {
            String::new()
        };
        println!(
            "  plain turn / bare handler, {clients:>2} clients: memory {}, SQLite {}{verdict}",
            percent(memory),
            percent(sqlite)
        );
    }
    if results.reference_skipped.is_none() {
        for clients in CLIENTS {
            let reference = throughput(Scenario::ReferencePlain, clients);
            let over = |scenario| Some(throughput(scenario, clients)? / reference?);
            let verdict = if clients == JUDGED_AT {
                format!(
                    "   target ≥ {PLAIN_OVER_REFERENCE:.0}× (memory): {}",
                    verdict(over(Scenario::PlainMemory).is_some_and(|ratio| ratio >= PLAIN_OVER_REFERENCE))
                )
            } else {
                String::new()
            };
            println!(
                "  plain turn / reference plain turn, {clients:>2} clients: memory {}, SQLite {}{verdict}",
                times(over(Scenario::PlainMemory)),
                times(over(Scenario::PlainSqlite))
            );
        }
        for clients in CLIENTS {
            let ratio = throughput(Scenario::CycleSqlite, clients)
                .zip(throughput(Scenario::ReferenceTool, clients))
                .map(|(cycle, tool)| cycle / tool);
            println!(
                "  pause + resume cycles (SQLite) / reference tool turns, {clients:>2} clients: {} (reported)",
                times(ratio)
            );
        }
    } else {
        println!(
            "  plain turn / reference: not measured (the reference was skipped), target ≥ {PLAIN_OVER_REFERENCE:.0}×: -"
        );
    }
    for clients in CLIENTS {
        let p50 = results.cell(Scenario::CycleSqlite, clients).map(|cell| cell.p50_ms);
        let verdict = if clients == 1 {
            format!(
                "   target < {CYCLE_P50_MS} ms: {}",
                verdict(p50.is_some_and(|p50| p50 < CYCLE_P50_MS))
            )
        } else {
            String::new()
        };
        println!(
            "  pause + resume p50, SQLite, {clients:>2} clients: {} ms{verdict}",
            p50.map_or_else(|| "-".to_owned(), |p50| format!("{p50:.2}"))
        );
    }
    let paused = &results.paused;
    println!(
        "  {} threads paused, SQLite: VmRSS {:.1} MB (before pausing {:.1}), VmHWM {:.1} MB   target < {PAUSED_MB} MB: {}",
        paused.threads,
        megabytes(paused.after.rss),
        megabytes(paused.before.rss),
        megabytes(paused.after.peak),
        verdict(megabytes(paused.after.peak) < PAUSED_MB)
    );
    #[expect(clippy::cast_precision_loss, reason = "a figure to print")]
    let rate = paused.threads as f64 / paused.seconds;
    println!(
        "    (paused in {:.1} s by 16 clients, {rate:.0} pauses/s)",
        paused.seconds
    );
    match &paused.resumed {
        Ok((thread, text)) => println!("    a random one resumed: {thread} answered {text:?}, one refund: ok"),
        Err(why) => println!("    the resume of a random one FAILED: {why}"),
    }
    println!(
        "  refunds counted by the payments stand-in: {} for {} approved cycles (exactly once): {}",
        results.refunds_after_cycles,
        results.cycles_done,
        if results.refunds_after_cycles == results.cycles_done {
            "ok"
        } else {
            "MISMATCH"
        }
    );
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_owned(), |share| format!("{:.1}%", share * 100.0))
}

fn times(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_owned(), |ratio| format!("{ratio:.1}×"))
}

fn verdict(met: bool) -> &'static str {
    if met { "PASS" } else { "MISS" }
}

#[expect(clippy::cast_precision_loss, reason = "a figure to print")]
fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}
