//! The table: each program's time in tenx and, where it has one, in LangGraph; beside each, its
//! time over the bare fetches on the run's critical path (one for one branch and for the
//! parallel eight, eight for the sequential ones: the stand-in's 20 ms, the timer's rounding and
//! the loopback exchange), which is the framework's own cost; the ratios and the targets.

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
    /// One bare fetch from the stand-in (POST, answer read): the floor under a run's wait.
    pub(crate) bare: Figures,
    pub(crate) skipped: Vec<(Program, String)>,
    pub(crate) langgraph: Result<LangGraph, String>,
}

/// Issue 14's targets: the parallel eight within this of one branch…
const PARALLEL_RATIO: f64 = 1.5;
/// …and LangGraph beaten by the engine benchmark's margin (its turn target, `engine`'s
/// `TURN_RATIO`), on the frameworks' own cost: both wait for the same fetches.
const LANGGRAPH_RATIO: f64 = 50.0;

pub(crate) fn print(results: &Results) {
    let lg = results.langgraph.as_ref().ok();
    let runs = results.bare.samples;
    println!(
        "tenx fan-out benchmark: {}, in process, scripted models, each worker's `fetch` a real `http` call to a loopback stand-in that answers after {} ms",
        if cfg!(debug_assertions) {
            "DEBUG BUILD (not a measurement)"
        } else {
            "release"
        },
        results.delay.as_millis()
    );
    println!(
        "{runs} runs of each program and {runs} bare fetches (a new thread each run, all interleaved, after 3 unmeasured rounds)"
    );
    match &results.langgraph {
        Ok(_) => println!(
            "LangGraph beside it: bench/langgraph/fanout.py, the same flow with `Send` and its one-branch version (see its docstring for what differs)"
        ),
        Err(why) => println!("LangGraph skipped: {why}"),
    }
    println!("the engine, its tool client, the stand-in and LangGraph's Python share this machine's 2 cores\n");
    println!(
        "{:<34} {:>16} {:>10} {:>16} {:>10} {:>17}",
        "", "tenx ms", "own ms", "LangGraph ms", "own ms", "LangGraph / tenx"
    );
    for program in Program::ALL {
        let Some(measured) = results.tenx.get(&program) else {
            continue;
        };
        let tenx = &measured.figures;
        let theirs = lg.and_then(|lg| match program {
            Program::One => Some(lg.one),
            Program::Parallel => Some(lg.parallel),
            Program::Sequential => None,
        });
        println!(
            "{:<34} {:>16} {:>10} {:>16} {:>10} {:>17}",
            format!("{} ({})", program.label(), fetches(program)),
            timing(tenx),
            ms(own(&results.bare, program, tenx)),
            theirs.map_or_else(|| "-".to_owned(), |theirs| timing(&theirs)),
            theirs
                .zip(lg)
                .map_or_else(|| "-".to_owned(), |(theirs, lg)| ms(own(&lg.bare, program, &theirs))),
            theirs.map_or_else(|| "-".to_owned(), |lg| ratio(lg.median_us / tenx.median_us)),
        );
    }
    println!(
        "{:<34} {:>16} {:>10} {:>16}",
        "bare fetch (POST, answer read)",
        timing(&results.bare),
        "",
        lg.map_or_else(|| "-".to_owned(), |lg| timing(&lg.bare)),
    );
    for (program, why) in &results.skipped {
        println!(
            "{:<34} skipped: {why}",
            format!("{} ({})", program.label(), fetches(*program))
        );
    }
    println!();
    let median = |program| results.tenx.get(&program).map(|measured| measured.figures);
    if let (Some(one), Some(parallel)) = (median(Program::One), median(Program::Parallel)) {
        let parallel_ratio = parallel.median_us / one.median_us;
        println!(
            "parallel 8 / one branch: {}   target ≤ {PARALLEL_RATIO}×: {}",
            ratio(parallel_ratio),
            verdict(parallel_ratio <= PARALLEL_RATIO)
        );
    } else {
        println!("parallel 8 / one branch: not measured   target ≤ {PARALLEL_RATIO}×: not checked");
    }
    if let (Some(sequential), Some(parallel)) = (median(Program::Sequential), median(Program::Parallel)) {
        println!(
            "sequential 8 / parallel 8: {}",
            ratio(sequential.median_us / parallel.median_us)
        );
    }
    let at_once: Vec<String> = results
        .tenx
        .iter()
        .map(|(program, measured)| format!("{}: {}", program.label(), measured.most_at_once))
        .collect();
    println!("most fetches the stand-in held at once: {}", at_once.join(", "));
    for (program, name) in [(Program::One, "one branch"), (Program::Parallel, "parallel 8")] {
        let (Some(lg), Some(tenx)) = (lg, median(program)) else {
            println!("LangGraph / tenx, {name}: not measured");
            continue;
        };
        let theirs = if program == Program::One { lg.one } else { lg.parallel };
        let (mine, theirs) = (own(&results.bare, program, &tenx), own(&lg.bare, program, &theirs));
        let over = (mine > 0.0).then(|| theirs / mine);
        println!(
            "LangGraph / tenx, {name}, own cost: {}   target ≥ {LANGGRAPH_RATIO}× (the engine benchmark's margin): {}",
            over.map_or_else(|| "- (tenx's own cost is within the noise)".to_owned(), ratio),
            verdict(over.is_some_and(|over| over >= LANGGRAPH_RATIO))
        );
    }
    if let Some(lg) = lg {
        println!(
            "LangGraph parallel 8 / its one branch: {}",
            ratio(lg.parallel.median_us / lg.one.median_us)
        );
    }
    println!(
        "\nTimes are medians (p90 in brackets) in ms of one full run. \"own ms\" is the median less its side's bare fetch median (tenx's http client; urllib for LangGraph) for each fetch on the run's critical path (1 for one branch and parallel 8, 8 for sequential 8): the framework's own cost, a difference of two medians, so noisy."
    );
}

/// `figures`' median less the `bare` fetches `program` waits for one after another, in µs.
fn own(bare: &Figures, program: Program, figures: &Figures) -> f64 {
    figures.median_us - bare.median_us * f64::from(critical_fetches(program))
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
