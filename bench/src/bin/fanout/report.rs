//! The table: each program's time in tenx and, where it has one, in LangGraph; the time over
//! the tool's waits on the run's critical path (one 20 ms fetch for one branch and for the
//! parallel eight, eight for the sequential ones), which is the frameworks' own cost; the
//! ratios and the targets.

use std::collections::BTreeMap;
use std::time::Duration;

use tenx_bench::fanout::Program;
use tenx_bench::figures::Figures;

use crate::langgraph::LangGraph;
use crate::measure::Measured;

/// Everything one run measured.
pub(crate) struct Results {
    pub(crate) delay: Duration,
    pub(crate) tenx: BTreeMap<Program, Measured>,
    pub(crate) skipped: Vec<(Program, String)>,
    pub(crate) langgraph: Result<LangGraph, String>,
}

/// Issue 14's targets: the parallel eight within this of one branch…
const PARALLEL_RATIO: f64 = 1.5;
/// …and LangGraph beaten by the engine benchmark's margin (its turn target, `engine`'s
/// `TURN_RATIO`), on the frameworks' own cost, since both wait the same 20 ms.
const LANGGRAPH_RATIO: f64 = 50.0;

pub(crate) fn print(results: &Results) {
    let delay_us = results.delay.as_secs_f64() * 1e6;
    let lg = results.langgraph.as_ref().ok();
    let runs = results
        .tenx
        .values()
        .map(|measured| measured.figures.samples)
        .max()
        .unwrap_or(0);
    println!(
        "tenx fan-out benchmark: release, in process, scripted models, each worker's `fetch` a real `http` call to a loopback stand-in that answers after {} ms",
        results.delay.as_millis()
    );
    println!("{runs} runs of each program (a new thread each, the programs interleaved, after 3 unmeasured runs)");
    match &results.langgraph {
        Ok(_) => println!(
            "LangGraph beside it: bench/langgraph/fanout.py, the same flow with `Send` and its one-branch version (see its docstring for what differs)"
        ),
        Err(why) => println!("LangGraph skipped: {why}"),
    }
    println!("the engine, its tool client, the stand-in and LangGraph's Python share this machine's 2 cores\n");
    println!(
        "{:<34} {:>16} {:>11} {:>16} {:>11} {:>22}",
        "", "tenx ms", "over waits", "LangGraph ms", "over waits", "LangGraph / tenx"
    );
    for program in Program::ALL {
        let Some(measured) = results.tenx.get(&program) else {
            continue;
        };
        let waits = delay_us * f64::from(critical_fetches(program));
        let tenx = &measured.figures;
        let theirs = lg.and_then(|lg| match program {
            Program::One => Some(lg.one),
            Program::Parallel => Some(lg.parallel),
            Program::Sequential => None,
        });
        println!(
            "{:<34} {:>16} {:>11} {:>16} {:>11} {:>22}",
            format!("{} ({})", program.label(), fetches(program)),
            timing(tenx),
            ms(tenx.median_us - waits),
            theirs.map_or_else(|| "-".to_owned(), |lg| timing(&lg)),
            theirs.map_or_else(|| "-".to_owned(), |lg| ms(lg.median_us - waits)),
            theirs.map_or_else(
                || "-".to_owned(),
                |lg| format!(
                    "{} ({} over)",
                    ratio(lg.median_us / tenx.median_us),
                    ratio((lg.median_us - waits) / (tenx.median_us - waits))
                )
            ),
        );
    }
    for (program, why) in &results.skipped {
        println!(
            "{:<34} skipped: {why}",
            format!("{} ({})", program.label(), fetches(*program))
        );
    }
    println!();
    let median = |program| results.tenx.get(&program).map(|measured| measured.figures.median_us);
    if let (Some(one), Some(parallel)) = (median(Program::One), median(Program::Parallel)) {
        let parallel_ratio = parallel / one;
        println!(
            "parallel 8 / one branch: {}   target ≤ {PARALLEL_RATIO}×: {}",
            ratio(parallel_ratio),
            verdict(parallel_ratio <= PARALLEL_RATIO)
        );
    } else {
        println!("parallel 8 / one branch: not measured   target ≤ {PARALLEL_RATIO}×: not checked");
    }
    if let (Some(sequential), Some(parallel)) = (median(Program::Sequential), median(Program::Parallel)) {
        println!("sequential 8 / parallel 8: {}", ratio(sequential / parallel));
    }
    let at_once: Vec<String> = results
        .tenx
        .iter()
        .map(|(program, measured)| format!("{}: {}", program.label(), measured.most_at_once))
        .collect();
    println!("most fetches the stand-in held at once: {}", at_once.join(", "));
    match (lg, median(Program::Parallel)) {
        (Some(lg), Some(parallel)) => {
            let over = (lg.parallel.median_us - delay_us) / (parallel - delay_us);
            println!(
                "LangGraph / tenx, parallel 8, over the waits: {}   target ≥ {LANGGRAPH_RATIO}× (the engine benchmark's margin): {}",
                ratio(over),
                verdict(over >= LANGGRAPH_RATIO)
            );
            println!(
                "LangGraph parallel 8 / its one branch: {}",
                ratio(lg.parallel.median_us / lg.one.median_us)
            );
        }
        _ => println!("LangGraph / tenx, parallel 8: not measured"),
    }
    println!(
        "\nTimes are medians (p90 in brackets) in ms of one full run; \"over waits\" is the median less the fetches' {} ms on the run's critical path (1 for one branch and parallel 8, 8 for sequential 8).",
        results.delay.as_millis()
    );
}

/// The fetches a run waits for one after another.
fn critical_fetches(program: Program) -> u32 {
    match program {
        Program::One | Program::Parallel => 1,
        Program::Sequential => 8,
    }
}

fn fetches(program: Program) -> &'static str {
    match program {
        Program::One => "1 fetch",
        Program::Sequential => "8 fetches in turn",
        Program::Parallel => "8 fetches at once",
    }
}

fn timing(figures: &Figures) -> String {
    format!("{} ({})", ms(figures.median_us), ms(figures.p90_us))
}

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1000.0)
}

fn ratio(ratio: f64) -> String {
    format!("{ratio:.2}×")
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}
